#include "ptdsim/sim/engine.hpp"

#include <algorithm>
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
  }
  return "?";
}

bool is_compute(TaskKind k) {
  return k == TaskKind::forward || k == TaskKind::backward || k == TaskKind::backward_input ||
         k == TaskKind::backward_weight || k == TaskKind::optimizer;
}

Engine::Engine(int ranks) : ranks_(ranks) {
  if (ranks < 1) throw std::invalid_argument("sim::Engine needs at least one rank");
  if (ranks > 65535 / kStreamKinds) throw std::invalid_argument("sim::Engine: too many ranks");
}

void Engine::reserve(std::size_t tasks, std::size_t edges) {
  spec_.reserve(tasks);
  edge_from_.reserve(edges);
  edge_to_.reserve(edges);
}

std::int32_t Engine::add_link(double capacity) {
  if (!(capacity > 0)) throw std::invalid_argument("sim::Engine link capacity must be positive");
  if (links_.size() >= 32767) throw std::invalid_argument("sim::Engine: at most 32767 links");
  Link l;
  l.capacity = capacity;
  links_.push_back(std::move(l));
  return static_cast<std::int32_t>(links_.size() - 1);
}

TaskId Engine::add(const TaskSpec& spec) {
  if (spec.rank < 0 || spec.rank >= ranks_)
    throw std::invalid_argument("sim::Engine task rank out of range");
  if (spec.duration_s < 0 || spec.work < 0)
    throw std::invalid_argument("sim::Engine task times must not be negative");
  if (spec.work > 0 && (spec.link < 0 || spec.link >= static_cast<int>(links_.size())))
    throw std::invalid_argument("sim::Engine transfer without a valid link");
  spec_.push_back(spec);
  return static_cast<TaskId>(spec_.size() - 1);
}

void Engine::depend(TaskId from, TaskId to) {
  const auto n = static_cast<TaskId>(spec_.size());
  if (from < 0 || to < 0 || from >= n || to >= n || from == to)
    throw std::invalid_argument("sim::Engine bad dependency edge");
  edge_from_.push_back(from);
  edge_to_.push_back(to);
}

void Engine::set_comm_share(double share) {
  if (!(share >= 0 && share < 1)) throw std::invalid_argument("sim::Engine comm share must be in [0, 1)");
  comm_share_ = share;
}

// Collectives hold one thread block per NCCL channel; a pipeline send holds one or two (NCCL's
// p2p channels per peer), an order of magnitude fewer, and is left out.
bool Engine::holds_sms(TaskId id) const {
  return comm_share_ > 0 && spec_[id].stream != StreamKind::compute && spec_[id].kind != TaskKind::p2p;
}

double Engine::compute_rate(int comm) const {
  return std::max(kMinComputeRate, 1.0 - comm * comm_share_);
}

// A collective started or ended on `rank`: its running compute task progressed at the old rate
// until now and goes on at the new one (its end event is rescheduled, the old one goes stale).
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
    push(t + c.amount / compute_rate(l.comm), l.compute, 2, ++c.version);
  }
}

void Engine::push(double t, TaskId id, std::uint8_t type, std::uint32_t version) {
  heap_.push_back(Event{t, seq_++, id, version, type});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void Engine::try_start(int s, double t) {
  Stream& st = streams_[s];
  if (st.busy || st.cursor == st.end) return;
  const TaskId id = stream_tasks_[st.cursor];
  Slot& x = slot_[id];
  if (x.state != TaskState::ready) return;
  st.busy = true;
  x.state = TaskState::running;
  start_[id] = t;
  // the stream predecessor binds when it finished no earlier than the last dependency
  if (st.cursor > st.begin && (x.binding < 0 || st.last_finish >= x.finish))
    x.binding = stream_tasks_[st.cursor - 1];
  const bool on_compute = spec_[id].stream == StreamKind::compute;
  if (holds_sms(id)) change_load(spec_[id].rank, +1, t);
  if (x.link < 0 && on_compute && comm_share_ > 0) {
    RankLoad& l = load_[spec_[id].rank];
    l.compute = id;
    l.since = t;
    push(t + x.amount / compute_rate(l.comm), id, 2, ++x.version);
  } else if (x.link < 0)
    push(t + x.amount, id, 0);
  else if (x.latency)
    push(t + spec_[id].duration_s, id, 0);
  else
    start_transfer(id, t);
}

// Progress-based fair sharing (as SimGrid's): when a transfer joins or leaves a link, bring every
// active transfer's remaining work up to now at its old share (capacity / k), then reschedule each
// end at the new share. Superseded end events are skipped by their version number.
void Engine::start_transfer(TaskId id, double t) {
  Link& link = links_[slot_[id].link];
  const double k = static_cast<double>(link.active.size());
  if (k > 0) {
    const double done = (t - link.last_t) * link.capacity / k;
    for (TaskId a : link.active) slot_[a].amount = std::max(0.0, slot_[a].amount - done);
  }
  link.last_t = t;
  link.active.push_back(id);
  const double rate = link.capacity / static_cast<double>(link.active.size());
  for (TaskId a : link.active) push(t + slot_[a].amount / rate, a, 1, ++slot_[a].version);
}

void Engine::end_transfer(TaskId id, double t) {
  Link& link = links_[slot_[id].link];
  const double k = static_cast<double>(link.active.size());
  const double done = (t - link.last_t) * link.capacity / k;
  link.last_t = t;
  link.active.erase(std::find(link.active.begin(), link.active.end(), id));
  slot_[id].amount = 0;
  if (!link.active.empty()) {
    const double rate = link.capacity / static_cast<double>(link.active.size());
    for (TaskId a : link.active) {
      Slot& y = slot_[a];
      y.amount = std::max(0.0, y.amount - done);
      push(t + y.amount / rate, a, 1, ++y.version);
    }
  }
  complete(id, t);
}

void Engine::complete(TaskId id, double t) {
  Slot& x = slot_[id];
  x.state = TaskState::done;
  x.finish = t;
  if (holds_sms(id))
    change_load(spec_[id].rank, -1, t);
  else if (comm_share_ > 0 && spec_[id].stream == StreamKind::compute)
    load_[spec_[id].rank].compute = -1;
  makespan_ = std::max(makespan_, t);
  Stream& st = streams_[x.stream];
  st.busy = false;
  st.last_finish = t;
  ++st.cursor;
  for (std::int32_t e = succ_begin_[id]; e < succ_begin_[id + 1]; ++e) {
    Slot& n = slot_[succ_[e]];
    // events come in time order: the dependency finishing last is the one processed last
    n.binding = id;
    if (--n.pending == 0) {
      n.state = TaskState::ready;
      n.finish = t;  // the ready time, until it finishes
      try_start(n.stream, t);
    }
  }
  try_start(x.stream, t);
}

void Engine::run() {
  const std::size_t n = spec_.size();
  slot_.assign(n, Slot{});
  start_.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const TaskSpec& sp = spec_[i];
    Slot& x = slot_[i];
    const bool transfer = sp.work > 0;
    x.amount = transfer ? sp.work : sp.duration_s;
    x.link = transfer ? static_cast<std::int16_t>(sp.link) : std::int16_t{-1};
    x.latency = transfer && sp.duration_s > 0;
    x.stream = static_cast<std::uint16_t>(stream_of(static_cast<TaskId>(i)));
  }
  makespan_ = 0;
  seq_ = 0;
  events_ = 0;
  for (auto& l : links_) {
    l.active.clear();
    l.last_t = 0;
  }
  load_.assign(comm_share_ > 0 ? ranks_ : 0, RankLoad{});

  // successors in CSR form (counting sort by source)
  succ_begin_.assign(n + 1, 0);
  for (TaskId f : edge_from_) ++succ_begin_[f + 1];
  for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(edge_from_.size());
  {
    std::vector<std::int32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    std::vector<std::int32_t> indegree(n, 0);
    for (std::size_t e = 0; e < edge_from_.size(); ++e) {
      succ_[fill[edge_from_[e]]++] = edge_to_[e];
      ++indegree[edge_to_[e]];
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (indegree[i] > 32767)
        throw std::logic_error("sim::Engine: a task with more than 32767 dependencies");
      slot_[i].pending = static_cast<std::int16_t>(indegree[i]);
    }
  }
  // stream program order (counting sort by stream, stable in insertion order)
  const int nstreams = ranks_ * kStreamKinds;
  streams_.assign(nstreams, Stream{});
  std::vector<std::int32_t> count(nstreams + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++count[slot_[i].stream + 1];
  for (int s = 0; s < nstreams; ++s) count[s + 1] += count[s];
  stream_tasks_.resize(n);
  for (int s = 0; s < nstreams; ++s) {
    streams_[s].begin = streams_[s].cursor = count[s];
    streams_[s].end = count[s + 1];
  }
  for (std::size_t i = 0; i < n; ++i) stream_tasks_[count[slot_[i].stream]++] = static_cast<TaskId>(i);

  heap_.clear();
  heap_.reserve(1024);
  for (std::size_t i = 0; i < n; ++i)
    if (slot_[i].pending == 0) slot_[i].state = TaskState::ready;
  for (int s = 0; s < nstreams; ++s) try_start(s, 0.0);

  std::size_t done = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event ev = heap_.back();
    heap_.pop_back();
    Slot& x = slot_[ev.task];
    if (ev.type != 0 && ev.version != x.version) continue;  // superseded share or rate
    ++events_;
    if (ev.type == 0 && x.latency) {
      x.latency = 0;
      start_transfer(ev.task, ev.t);  // latency over, the bytes start to move
      continue;
    }
    if (ev.type == 1)
      end_transfer(ev.task, ev.t);
    else
      complete(ev.task, ev.t);
    ++done;
  }
  if (done != n)
    throw std::logic_error("sim::Engine: " + std::to_string(n - done) + " of " + std::to_string(n) +
                           " tasks never ran (a dependency cycle or a stream order against the "
                           "dependencies)");
}

std::vector<TaskId> Engine::critical_path() const {
  std::vector<TaskId> path;
  if (slot_.empty()) return path;
  TaskId last = 0;
  for (std::size_t i = 1; i < slot_.size(); ++i)
    if (slot_[i].finish >= slot_[last].finish) last = static_cast<TaskId>(i);
  for (TaskId t = last; t >= 0; t = slot_[t].binding) path.push_back(t);
  std::reverse(path.begin(), path.end());
  return path;
}

void Engine::all_edges(std::vector<std::pair<TaskId, TaskId>>& out) const {
  out.clear();
  out.reserve(edge_from_.size() + spec_.size());
  for (std::size_t e = 0; e < edge_from_.size(); ++e) out.emplace_back(edge_from_[e], edge_to_[e]);
  std::vector<TaskId> last(static_cast<std::size_t>(ranks_) * kStreamKinds, -1);
  for (std::size_t i = 0; i < spec_.size(); ++i) {
    TaskId& l = last[stream_of(static_cast<TaskId>(i))];
    if (l >= 0) out.emplace_back(l, static_cast<TaskId>(i));
    l = static_cast<TaskId>(i);
  }
}

}  // namespace ptdsim::sim
