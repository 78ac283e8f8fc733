#include "ptdsim/sim/engine.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ptdsim::sim {

std::string_view name(StreamKind k) {
  switch (k) {
    case StreamKind::compute: return "compute";
    case StreamKind::tp: return "tp";
    case StreamKind::cp: return "cp";
    case StreamKind::ep: return "ep";
    case StreamKind::dp: return "dp";
    case StreamKind::dp_gather: return "dp-gather";
    case StreamKind::pp_send: return "pp-send";
  }
  return "?";
}

std::string_view name(TaskKind k) {
  switch (k) {
    case TaskKind::forward: return "F";
    case TaskKind::backward: return "B";
    case TaskKind::backward_input: return "B(input)";
    case TaskKind::backward_weight: return "W";
    case TaskKind::optimizer: return "optimizer";
    case TaskKind::tp: return "TP";
    case TaskKind::cp: return "CP";
    case TaskKind::ep: return "EP";
    case TaskKind::p2p: return "PP p2p";
    case TaskKind::dp_reduce: return "DP reduce";
    case TaskKind::dp_gather: return "DP all-gather";
    case TaskKind::zero3_gather: return "ZeRO-3 all-gather";
    case TaskKind::zero3_reduce: return "ZeRO-3 reduce-scatter";
    case TaskKind::offload: return "CPU offload";
  }
  return "?";
}

bool is_compute(TaskKind k) {
  return k == TaskKind::forward || k == TaskKind::backward || k == TaskKind::backward_input ||
         k == TaskKind::backward_weight || k == TaskKind::optimizer || k == TaskKind::offload;
}

Engine::Engine(int ranks) : ranks_(ranks) {
  if (ranks < 1) throw std::invalid_argument("sim::Engine needs at least one rank");
  if (ranks > 65535 / kStreamKinds) throw std::invalid_argument("sim::Engine: too many ranks");
}

void Engine::reset(int ranks) {
  Engine fresh(ranks);
  // every array, emptied, into the fresh engine (one left out here is only allocated again)
  auto keep = [](auto& mine, auto& theirs) {
    mine.clear();
    theirs.swap(mine);
  };
  keep(specs_, fresh.specs_);
  keep(spec_of_, fresh.spec_of_);
  keep(microbatch_, fresh.microbatch_);
  keep(edges_, fresh.edges_);
  keep(links_, fresh.links_);
  keep(slot_, fresh.slot_);
  keep(start_, fresh.start_);
  keep(succ_begin_, fresh.succ_begin_);
  keep(succ_, fresh.succ_);
  keep(lane_of_stream_, fresh.lane_of_stream_);
  keep(lanes_, fresh.lanes_);
  keep(stream_tasks_, fresh.stream_tasks_);
  keep(run_of_, fresh.run_of_);
  keep(load_, fresh.load_);
  keep(key_, fresh.key_);
  keep(tree_, fresh.tree_);
  keep(pend_, fresh.pend_);
  keep(dirty_mark_, fresh.dirty_mark_);
  keep(dirty_, fresh.dirty_);
  keep(walk_begin_, fresh.walk_begin_);
  keep(walk_end_, fresh.walk_end_);
  keep(walk_stack_, fresh.walk_stack_);
  keep(walk_free_, fresh.walk_free_);
  keep(walk_pairs_, fresh.walk_pairs_);
  keep(new_keys_, fresh.new_keys_);
  keep(cut_end_, fresh.cut_end_);
  keep(started_end_, fresh.started_end_);
  *this = std::move(fresh);
}

void Engine::reserve(std::size_t tasks, std::size_t edges) {
  spec_of_.reserve(tasks);
  microbatch_.reserve(tasks);
  edges_.reserve(edges);
}

std::int32_t Engine::add_link(double capacity) {
  if (!(capacity > 0)) throw std::invalid_argument("sim::Engine link capacity must be positive");
  if (links_.size() >= 32767) throw std::invalid_argument("sim::Engine: at most 32767 links");
  Link l;
  l.capacity = capacity;
  links_.push_back(std::move(l));
  return static_cast<std::int32_t>(links_.size() - 1);
}

std::int32_t Engine::add_spec(const TaskSpec& spec) {
  if (spec.rank < 0 || spec.rank >= ranks_)
    throw std::invalid_argument("sim::Engine task rank out of range");
  if (spec.duration_s < 0 || spec.work < 0)
    throw std::invalid_argument("sim::Engine task times must not be negative");
  if (spec.work > 0 && (spec.link < 0 || spec.link >= static_cast<int>(links_.size())))
    throw std::invalid_argument("sim::Engine transfer without a valid link");
  specs_.push_back(spec);
  return static_cast<std::int32_t>(specs_.size() - 1);
}

void Engine::no_such_spec() { throw std::invalid_argument("sim::Engine: no such task description"); }

void Engine::bad_edge() { throw std::invalid_argument("sim::Engine bad dependency edge"); }

void Engine::set_comm_share(double share) {
  if (!(share >= 0 && share < 1)) throw std::invalid_argument("sim::Engine comm share must be in [0, 1)");
  comm_share_ = share;
}

double Engine::compute_rate(int comm) const {
  return std::max(kMinComputeRate, 1.0 - comm * comm_share_);
}

// A lane's pending event is due at `t`. Its sequence number is the order in which events were
// scheduled: events at the same time run in that order (a replaced event keeps none of its own).
// The new key waits in pend_ until the event being processed is done (commit()).
void Engine::schedule(int lane, double t) {
  if (!dirty_mark_[lane]) {
    dirty_mark_[lane] = 1;
    dirty_.push_back(lane);
  }
  pend_[lane] = key_of(t, seq_++);
}

// Replays the path from `lane` to the root: each node keeps the smaller key of its two children.
void Engine::update(int lane) {
  int w = lane;
  const int sibling = lane ^ 1;
  if (key_[sibling] < key_[w]) w = sibling;
  unsigned node = static_cast<unsigned>(lane + leaves_) >> 1;
  tree_[node] = w;
  while (node > 1) {
    const int other = tree_[node ^ 1];
    node >>= 1;
    w = key_[other] < key_[w] ? other : w;
    tree_[node] = w;
  }
}

// After an event: the lanes that got a new key (or lost theirs) enter the tree, except the
// earliest new event when it comes before everything in the tree: that one is next, and is taken
// without touching the tree (front_). A pipeline send, short beside the compute of every stage,
// is usually next: its start and its end then cost no path replay.
void Engine::commit() {
  int best = -1;
  for (int lane : dirty_)
    if (pend_[lane] != kIdle && (best < 0 || pend_[lane] < pend_[best])) best = lane;
  for (int lane : dirty_) {
    dirty_mark_[lane] = 0;
    if (lane == best) continue;
    key_[lane] = pend_[lane];
    update(lane);
  }
  dirty_.clear();
  front_ = -1;
  if (best < 0) return;
  if (best == popped_) {  // its path holds the event just taken: replayed with the new one
    key_[best] = pend_[best];
    update(best);
    return;
  }
  if (key_[best] != kIdle) {  // its previous event is still in the tree (a rescheduled end)
    key_[best] = kIdle;
    update(best);
  }
  if (pend_[best] < key_[tree_[1]]) {
    front_ = best;
    front_key_ = pend_[best];
  } else {
    key_[best] = pend_[best];
    update(best);
  }
}

// A collective started or ended on `rank`: its running compute task progressed at the old rate
// until now and goes on at the new one (its end event is rescheduled, the old one replaced).
void Engine::change_load(int rank, int delta, double t) {
  RankLoad& l = load_[rank];
  if (l.compute >= 0) {
    Slot& c = slot_[l.compute];
    c.amount = std::max(0.0, c.amount - (t - l.since) * compute_rate(l.comm));
    l.since = t;
  }
  l.comm += delta;
  if (l.compute >= 0) {
    Slot& c = slot_[l.compute];
    schedule(c.lane, t + c.amount / compute_rate(l.comm));
  }
}

void Engine::try_start(int lane, double t) {
  Lane& st = lanes_[lane];
  if (st.running >= 0 || st.cursor == st.end) return;
  const TaskId id = st.cursor;  // run order: a lane's tasks are consecutive
  Slot& x = slot_[id];
  if (x.state != TaskState::ready) return;
  st.running = id;
  x.state = TaskState::running;
  start_[id] = t;
  // Its successors' slots are read when it ends, many events from now: ask for them now (they
  // sit ahead of their lanes' cursors, where nothing else brings them into the cache).
  for (std::int32_t e = succ_begin_[id]; e < succ_begin_[id + 1]; ++e) __builtin_prefetch(&slot_[succ_[e]], 1);
  // and what its stream's next task will read then: its slot and its successor list
  __builtin_prefetch(slot_.data() + id + 1, 1);
  __builtin_prefetch(succ_.data() + succ_begin_[id + 1]);
  // the stream predecessor binds when it finished no earlier than the last dependency
  if (st.cursor > st.begin && (x.binding < 0 || st.last_finish >= x.finish))
    x.binding = st.cursor - 1;
  if (x.flags & kCollective) ++collectives_;
  if (x.flags & kHoldsSms) change_load(st.rank, +1, t);
  if (x.link < 0 && st.compute && comm_share_ > 0) {
    RankLoad& l = load_[st.rank];
    l.compute = id;
    l.since = t;
    schedule(lane, t + x.amount / compute_rate(l.comm));
  } else if (x.link < 0) {
    schedule(lane, t + x.amount);
  } else if (x.flags & kLatency) {
    schedule(lane, t + specs_[spec_of_[stream_tasks_[id]]].duration_s);
  } else {
    start_transfer(id, t);
  }
}

// Progress-based fair sharing (as SimGrid's): when a transfer joins or leaves a link, bring every
// active transfer's remaining work up to now at its old share (capacity / k), then reschedule each
// end at the new share.
void Engine::start_transfer(TaskId id, double t) {
  Link& link = links_[slot_[id].link];
  const double k = static_cast<double>(link.active.size());
  if (k > 0) {
    const double done = (t - link.last_t) * link.capacity / k;
    for (TaskId a : link.active) slot_[a].amount = std::max(0.0, slot_[a].amount - done);
  }
  link.last_t = t;
  link.active.push_back(id);
  if (link.active.size() == 2) ++shared_links_;
  const double rate = link.capacity / static_cast<double>(link.active.size());
  for (TaskId a : link.active) schedule(slot_[a].lane, t + slot_[a].amount / rate);
}

void Engine::end_transfer(TaskId id, double t) {
  Link& link = links_[slot_[id].link];
  const double k = static_cast<double>(link.active.size());
  const double done = (t - link.last_t) * link.capacity / k;
  link.last_t = t;
  if (link.active.size() == 2) --shared_links_;
  link.active.erase(std::find(link.active.begin(), link.active.end(), id));
  slot_[id].amount = 0;
  if (!link.active.empty()) {
    const double rate = link.capacity / static_cast<double>(link.active.size());
    for (TaskId a : link.active) {
      Slot& y = slot_[a];
      y.amount = std::max(0.0, y.amount - done);
      schedule(y.lane, t + y.amount / rate);
    }
  }
  complete(id, t);
}

void Engine::complete(TaskId id, double t) {
  Slot& x = slot_[id];
  Lane& st = lanes_[x.lane];
  x.state = TaskState::done;
  x.finish = t;
  if (x.flags & kCollective) --collectives_;
  if (x.flags & kHoldsSms)
    change_load(st.rank, -1, t);
  else if (comm_share_ > 0 && st.compute)
    load_[st.rank].compute = -1;
  makespan_ = std::max(makespan_, t);
  st.running = -1;
  st.last_finish = t;
  ++st.cursor;
  for (std::int32_t e = succ_begin_[id]; e < succ_begin_[id + 1]; ++e) {
    Slot& n = slot_[succ_[e]];
    // events come in time order: the dependency finishing last is the one processed last
    n.binding = id;
    if (--n.pending == 0) {
      n.state = TaskState::ready;
      n.finish = t;  // the ready time, until it finishes
      try_start(n.lane, t);
    }
  }
  try_start(x.lane, t);
}

// The run's data: lanes (the streams with tasks, in stream order: rank, then kind), each task's
// slot, the stream program order and the successors in CSR form.
void Engine::prepare() {
  const std::size_t n = spec_of_.size();
  const int nstreams = ranks_ * kStreamKinds;
  std::vector<std::int32_t> count(static_cast<std::size_t>(nstreams) + 1, 0);
  std::vector<std::uint16_t> stream_of_spec(specs_.size());
  for (std::size_t i = 0; i < specs_.size(); ++i)
    stream_of_spec[i] = static_cast<std::uint16_t>(specs_[i].rank * kStreamKinds + static_cast<int>(specs_[i].stream));
  for (std::size_t i = 0; i < n; ++i) ++count[stream_of_spec[spec_of_[i]] + 1];
  lane_of_stream_.assign(nstreams, -1);
  lanes_.clear();
  for (int s = 0; s < nstreams; ++s) {
    if (count[s + 1] == 0) continue;
    lane_of_stream_[s] = static_cast<std::int32_t>(lanes_.size());
    Lane l;
    l.rank = s / kStreamKinds;
    l.compute = static_cast<StreamKind>(s % kStreamKinds) == StreamKind::compute;
    lanes_.push_back(l);
  }
  if (lanes_.size() > 65535) throw std::logic_error("sim::Engine: too many streams");
  // stream program order: a counting sort by lane, stable in insertion order
  for (int s = 0; s < nstreams; ++s) count[s + 1] += count[s];
  for (int s = 0; s < nstreams; ++s)
    if (lane_of_stream_[s] >= 0) {
      Lane& l = lanes_[lane_of_stream_[s]];
      l.begin = l.cursor = count[s];
      l.end = count[s + 1];
    }
  stream_tasks_.resize(n);

  // per description, what every task of it starts with
  std::vector<Slot> proto(specs_.size());
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const TaskSpec& sp = specs_[i];
    Slot& x = proto[i];
    const bool transfer = sp.work > 0;
    x.amount = transfer ? sp.work : sp.duration_s;
    x.link = transfer ? static_cast<std::int16_t>(sp.link) : std::int16_t{-1};
    x.lane = static_cast<std::uint16_t>(lane_of_stream_[stream_of_spec[i]]);
    x.state = TaskState::ready;  // until a dependency is counted below
    const bool collective = is_collective(sp);
    x.flags = static_cast<std::uint8_t>((transfer && sp.duration_s > 0 ? kLatency : 0) |
                                        (comm_share_ > 0 && collective ? kHoldsSms : 0) |
                                        (collective ? kCollective : 0));
  }
  // The run numbers the tasks in stream_tasks_'s order (run_of_ maps a task to its number): the
  // tasks an event touches sit at the cursors of their lanes, so the run walks each lane's slots
  // in address order instead of jumping about the builder's numbering.
  run_of_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t k = count[stream_of_spec[spec_of_[i]]]++;
    stream_tasks_[k] = static_cast<TaskId>(i);
    run_of_[i] = k;
  }
  slot_.clear();
  slot_.reserve(n);
  for (std::size_t k = 0; k < n; ++k) slot_.push_back(proto[spec_of_[stream_tasks_[k]]]);
  start_.assign(n, 0.0);

  // successors in CSR form (a counting sort by source, stable in the order the edges were added)
  succ_begin_.assign(n + 1, 0);
  for (const Edge& e : edges_) {
    ++succ_begin_[run_of_[e.from] + 1];
    Slot& to = slot_[run_of_[e.to]];
    ++to.pending;
    to.state = TaskState::waiting;  // (a task without dependencies stays ready: no pass of its own over the slots)
  }
  for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(edges_.size());
  {
    std::vector<std::int32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (const Edge& e : edges_) succ_[fill[run_of_[e.from]]++] = run_of_[e.to];
  }

  makespan_ = 0;
  seq_ = 0;
  events_ = 0;
  for (auto& l : links_) {
    l.active.clear();
    l.last_t = 0;
  }
  load_.assign(comm_share_ > 0 ? ranks_ : 0, RankLoad{});
  leaves_ = 2;
  while (leaves_ < static_cast<int>(lanes_.size())) leaves_ <<= 1;
  prepare_walks();
}

// The queue with every lane's pending event (kIdle: none), each node's winner a lane below it.
void Engine::build_queue() {
  tree_.assign(leaves_, 0);
  for (int node = leaves_ - 1; node >= 1; --node) {
    const int left = 2 * node, right = left + 1;
    const int a = left >= leaves_ ? left - leaves_ : tree_[left];
    const int b = right >= leaves_ ? right - leaves_ : tree_[right];
    tree_[node] = key_[b] < key_[a] ? b : a;
  }
  dirty_.clear();
  dirty_mark_.assign(leaves_, 0);
  pend_.assign(leaves_, kIdle);
  front_ = -1;
  popped_ = -1;
}

void Engine::run() {
  prepare();
  const std::size_t n = spec_of_.size();
  key_.assign(leaves_, kIdle);
  build_queue();
  for (int l = 0; l < static_cast<int>(lanes_.size()); ++l) try_start(l, 0.0);
  commit();
  std::size_t done = 0;
  for (;;) {
    if (walk_worth_trying(done)) done += walk(now_);
    int lane;
    Key key;
    if (front_ >= 0) {
      lane = front_;
      key = front_key_;
      popped_ = -1;
    } else {
      lane = tree_[1];
      key = key_[lane];
      if (key == kIdle) break;
      // leaves the tree: replayed in commit() with its next key, if any
      dirty_mark_[lane] = 1;
      dirty_.push_back(lane);
      pend_[lane] = kIdle;
      key_[lane] = kIdle;
      popped_ = lane;
    }
    const std::uint64_t bits = static_cast<std::uint64_t>(key >> 64);
    double t;
    std::memcpy(&t, &bits, sizeof t);
    now_ = t;
    const TaskId id = lanes_[lane].running;
    ++events_;
    Slot& x = slot_[id];
    if (x.link < 0) {
      complete(id, t);
      ++done;
    } else if (x.flags & kLatency) {
      x.flags &= static_cast<std::uint8_t>(~kLatency);
      start_transfer(id, t);  // latency over, the bytes start to move
    } else {
      end_transfer(id, t);
      ++done;
    }
    commit();
  }
  if (done != n)
    throw std::logic_error("sim::Engine: " + std::to_string(n - done) + " of " + std::to_string(n) +
                           " tasks never ran (a dependency cycle or a stream order against the "
                           "dependencies)");
}

std::vector<TaskId> Engine::critical_path() const {
  std::vector<TaskId> path;
  if (slot_.empty()) return path;
  // the last task to finish; of those finishing together, the last added. A stream runs its tasks
  // one after another, in the order they were added, so along it the ends do not decrease and the
  // ids increase: the task sought is one of the streams' last tasks (a scan of the lanes, not of
  // every task's slot: the 1T step's 130k slots took 0.12 ms to read)
  TaskId last = 0;
  double end = finish(0);
  for (const Lane& l : lanes_) {
    const std::int32_t k = l.end - 1;
    const TaskId id = stream_tasks_[k];
    if (slot_[k].finish > end || (slot_[k].finish == end && id > last)) {
      last = id;
      end = slot_[k].finish;
    }
  }
  for (TaskId t = last; t >= 0; t = binding(t)) path.push_back(t);
  std::reverse(path.begin(), path.end());
  return path;
}

void Engine::all_edges(std::vector<std::pair<TaskId, TaskId>>& out) const {
  out.clear();
  out.reserve(edges_.size() + spec_of_.size());
  for (const Edge& e : edges_) out.emplace_back(e.from, e.to);
  std::vector<TaskId> last(static_cast<std::size_t>(ranks_) * kStreamKinds, -1);
  for (std::size_t i = 0; i < spec_of_.size(); ++i) {
    const TaskSpec& sp = specs_[spec_of_[i]];
    TaskId& l = last[static_cast<std::size_t>(sp.rank) * kStreamKinds + static_cast<int>(sp.stream)];
    if (l >= 0) out.emplace_back(l, static_cast<TaskId>(i));
    l = static_cast<TaskId>(i);
  }
}

}  // namespace ptdsim::sim
