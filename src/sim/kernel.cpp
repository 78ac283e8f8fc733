#include "ptdsim/sim/kernel.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ptdsim::sim {

using namespace run_state;

Kernel::Kernel(int devices, int streams, int compute_stream)
    : devices_(devices), streams_(streams), compute_stream_(compute_stream) {
  if (devices < 1) throw std::invalid_argument("sim::Kernel needs at least one device");
  if (streams < 1 || compute_stream < 0 || compute_stream >= streams)
    throw std::invalid_argument("sim::Kernel: bad stream count or compute stream");
  if (devices > 65535 / streams) throw std::invalid_argument("sim::Kernel: too many devices");
}

void Kernel::reset(int devices) {
  Kernel fresh(devices, streams_, compute_stream_);
  // every array, emptied, into the fresh kernel (one left out here is only allocated again)
  auto keep = [](auto& mine, auto& theirs) {
    mine.clear();
    theirs.swap(mine);
  };
  keep(jobs_, fresh.jobs_);
  keep(job_of_, fresh.job_of_);
  keep(edges_, fresh.edges_);
  keep(capacity_, fresh.capacity_);
  keep(rate_, fresh.rate_);
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
  // the default model's link lists and the fast-forward's arrays are kept whole (prepare() resets them)
  fresh.fair_ = std::move(fair_);
  fresh.fair_.set_comm_share(0);
  fresh.ff_ = std::move(ff_);
  *this = std::move(fresh);
}

void Kernel::reserve(std::size_t tasks, std::size_t edges) {
  job_of_.reserve(tasks);
  edges_.reserve(edges);
}

std::int32_t Kernel::add_resource(double capacity) {
  if (!(capacity > 0)) throw std::invalid_argument("sim::Kernel resource capacity must be positive");
  if (capacity_.size() >= 32767) throw std::invalid_argument("sim::Kernel: at most 32767 resources");
  capacity_.push_back(capacity);
  return static_cast<std::int32_t>(capacity_.size() - 1);
}

std::int32_t Kernel::add_job(const Job& job) {
  if (job.device < 0 || job.device >= devices_) throw std::invalid_argument("sim::Kernel task device out of range");
  if (job.stream < 0 || job.stream >= streams_) throw std::invalid_argument("sim::Kernel task stream out of range");
  if (job.duration < 0 || job.work < 0) throw std::invalid_argument("sim::Kernel task times must not be negative");
  if (job.work > 0 && (job.resource < 0 || job.resource >= static_cast<int>(capacity_.size())))
    throw std::invalid_argument("sim::Kernel transfer without a valid resource");
  jobs_.push_back(job);
  return static_cast<std::int32_t>(jobs_.size() - 1);
}

void Kernel::no_such_job() { throw std::invalid_argument("sim::Kernel: no such task description"); }

void Kernel::bad_edge() { throw std::invalid_argument("sim::Kernel bad dependency edge"); }

// A lane's pending event is due at `t`. Its sequence number is the order in which events were
// scheduled: events at the same time run in that order (a replaced event keeps none of its own).
// The new key waits in pend_ until the event being processed is done (commit()).
void Kernel::schedule(int lane, double t) {
  if (!dirty_mark_[lane]) {
    dirty_mark_[lane] = 1;
    dirty_.push_back(lane);
  }
  pend_[lane] = key_of(t, seq_++);
}

// Replays the path from `lane` to the root: each node keeps the smaller key of its two children.
void Kernel::update(int lane) {
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
void Kernel::commit() {
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

// A contending task started or ended on `device`: its running compute task progressed at the old
// rate until now and goes on at the new one (its end event is rescheduled, the old one replaced).
void Kernel::change_load(int device, int delta, double t) {
  Load& l = load_[device];
  if (l.compute >= 0) {
    Slot& c = slot_[l.compute];
    c.amount = std::max(0.0, c.amount - (t - l.since) * rate_[l.contending]);
    l.since = t;
  }
  l.contending += delta;
  if (l.compute >= 0) {
    Slot& c = slot_[l.compute];
    schedule(c.lane, t + c.amount / rate_[l.contending]);
  }
}

void Kernel::try_start(int lane, double t) {
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
  if (x.flags & kContends) ++contending_;
  if (x.flags & kHoldsCompute) change_load(st.device, +1, t);
  if (x.resource < 0 && st.compute && slows_) {
    Load& l = load_[st.device];
    l.compute = id;
    l.since = t;
    schedule(lane, t + x.amount / rate_[l.contending]);
  } else if (x.resource < 0) {
    schedule(lane, t + x.amount);
  } else if (x.flags & kLatency) {
    schedule(lane, t + jobs_[job_of_[stream_tasks_[id]]].duration);
  } else {
    start_flow(id, x.resource, t);
  }
}

void Kernel::complete(TaskId id, double t) {
  Slot& x = slot_[id];
  Lane& st = lanes_[x.lane];
  x.state = TaskState::done;
  x.finish = t;
  if (x.flags & kContends) --contending_;
  if (x.flags & kHoldsCompute)
    change_load(st.device, -1, t);
  else if (slows_ && st.compute)
    load_[st.device].compute = -1;
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

// The run's data: the sharing model's, the lanes, slots and successors, the counters.
void Kernel::prepare() {
  model_ = custom_ ? custom_.get() : &fair_;
  model_->prepare(capacity_);
  slows_ = model_->slows_compute();
  // (a table: the loop asks for a rate at every contending task's start and end)
  rate_.resize(static_cast<std::size_t>(streams_) + 1);  // a stream runs one task at a time
  for (int k = 0; k <= streams_; ++k) rate_[k] = model_->compute_rate(k);
  lay_out();
  link_successors();
  makespan_ = 0;
  seq_ = 0;
  events_ = 0;
  contending_ = 0;
  now_ = 0;
  load_.assign(slows_ ? devices_ : 0, Load{});
  leaves_ = 2;
  while (leaves_ < static_cast<int>(lanes_.size())) leaves_ <<= 1;
  ff_.prepare(*this);
}

// Lanes (the streams with tasks, in stream order: device, then stream), the run order (lane by
// lane, each in program order) and each task's slot.
void Kernel::lay_out() {
  const std::size_t n = job_of_.size();
  const int nstreams = devices_ * streams_;
  std::vector<std::int32_t> count(static_cast<std::size_t>(nstreams) + 1, 0);
  std::vector<std::uint16_t> stream_of_spec(jobs_.size());
  for (std::size_t i = 0; i < jobs_.size(); ++i)
    stream_of_spec[i] = static_cast<std::uint16_t>(jobs_[i].device * streams_ + jobs_[i].stream);
  for (std::size_t i = 0; i < n; ++i) ++count[stream_of_spec[job_of_[i]] + 1];
  lane_of_stream_.assign(nstreams, -1);
  lanes_.clear();
  for (int s = 0; s < nstreams; ++s) {
    if (count[s + 1] == 0) continue;
    lane_of_stream_[s] = static_cast<std::int32_t>(lanes_.size());
    Lane l;
    l.device = s / streams_;
    l.compute = s % streams_ == compute_stream_;
    lanes_.push_back(l);
  }
  if (lanes_.size() > 65535) throw std::logic_error("sim::Kernel: too many streams");
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
  std::vector<Slot> proto(jobs_.size());
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const Job& sp = jobs_[i];
    Slot& x = proto[i];
    const bool transfer = sp.work > 0;
    x.amount = transfer ? sp.work : sp.duration;
    x.resource = transfer ? static_cast<std::int16_t>(sp.resource) : std::int16_t{-1};
    x.lane = static_cast<std::uint16_t>(lane_of_stream_[stream_of_spec[i]]);
    x.state = TaskState::ready;  // until a dependency is counted below
    x.flags = static_cast<std::uint8_t>((transfer && sp.duration > 0 ? kLatency : 0) |
                                        (slows_ && sp.contends ? kHoldsCompute : 0) |
                                        (sp.contends ? kContends : 0));
  }
  // The run numbers the tasks in stream_tasks_'s order (run_of_ maps a task to its number): the
  // tasks an event touches sit at the cursors of their lanes, so the run walks each lane's slots
  // in address order instead of jumping about the builder's numbering.
  run_of_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t k = count[stream_of_spec[job_of_[i]]]++;
    stream_tasks_[k] = static_cast<TaskId>(i);
    run_of_[i] = k;
  }
  slot_.clear();
  slot_.reserve(n);
  for (std::size_t k = 0; k < n; ++k) slot_.push_back(proto[job_of_[stream_tasks_[k]]]);
  start_.assign(n, 0.0);
}

// Successors in CSR form (a counting sort by source, stable in the order the edges were added),
// and each task's dependencies counted.
void Kernel::link_successors() {
  const std::size_t n = job_of_.size();
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
}

// The queue with every lane's pending event (kIdle: none), each node's winner a lane below it.
void Kernel::build_queue() {
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

void Kernel::run() {
  prepare();
  const std::size_t n = job_of_.size();
  key_.assign(leaves_, kIdle);
  build_queue();
  for (int l = 0; l < static_cast<int>(lanes_.size()); ++l) try_start(l, 0.0);
  commit();
  std::size_t done = 0;
  for (;;) {
    if (ff_.worth_trying(contending_, model_->quiet(), n - done)) done += ff_.walk(*this, now_);
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
    if (x.resource < 0) {
      complete(id, t);
      ++done;
    } else if (x.flags & kLatency) {
      x.flags &= static_cast<std::uint8_t>(~kLatency);
      start_flow(id, x.resource, t);  // latency over, the bytes start to move
    } else {
      end_flow(id, x.resource, t);
      complete(id, t);
      ++done;
    }
    commit();
  }
  if (done != n)
    throw std::logic_error("sim::Kernel: " + std::to_string(n - done) + " of " + std::to_string(n) +
                           " tasks never ran (a dependency cycle or a stream order against the "
                           "dependencies)");
}

std::vector<TaskId> Kernel::critical_path() const {
  std::vector<TaskId> path;
  if (slot_.empty()) return path;
  // the last task to finish; of those finishing together, the last added. A stream runs its tasks
  // one after another, in the order they were added, so along it the ends do not decrease and the
  // ids increase: the task sought is one of the streams' last tasks (a scan of the lanes, not of
  // every task's slot)
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

void Kernel::all_edges(std::vector<std::pair<TaskId, TaskId>>& out) const {
  out.clear();
  out.reserve(edges_.size() + job_of_.size());
  for (const Edge& e : edges_) out.emplace_back(e.from, e.to);
  std::vector<TaskId> last(static_cast<std::size_t>(devices_) * streams_, -1);
  for (std::size_t i = 0; i < job_of_.size(); ++i) {
    const Job& sp = jobs_[job_of_[i]];
    TaskId& l = last[static_cast<std::size_t>(sp.device) * streams_ + sp.stream];
    if (l >= 0) out.emplace_back(l, static_cast<TaskId>(i));
    l = static_cast<TaskId>(i);
  }
}

}  // namespace ptdsim::sim
