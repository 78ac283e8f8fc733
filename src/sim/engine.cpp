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
}

void Engine::reserve(std::size_t tasks, std::size_t edges) {
  spec_.reserve(tasks);
  edge_from_.reserve(edges);
  edge_to_.reserve(edges);
}

std::int32_t Engine::add_link(double capacity) {
  if (!(capacity > 0)) throw std::invalid_argument("sim::Engine link capacity must be positive");
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

void Engine::push(double t, TaskId id, std::uint8_t type, std::uint32_t version) {
  heap_.push_back(Event{t, seq_++, id, version, type});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void Engine::try_start(int s, double t) {
  Stream& st = streams_[s];
  if (st.busy || st.cursor == st.end) return;
  const TaskId id = stream_tasks_[st.cursor];
  if (state_[id] != TaskState::ready) return;
  st.busy = true;
  state_[id] = TaskState::running;
  start_[id] = t;
  if (st.cursor > st.begin) {
    const TaskId prev = stream_tasks_[st.cursor - 1];
    if (binding_[id] < 0 || finish_[prev] >= finish_[binding_[id]]) binding_[id] = prev;
  }
  const TaskSpec& sp = spec_[id];
  if (sp.duration_s > 0 || sp.work <= 0)
    push(t + sp.duration_s, id, 0);
  else
    start_transfer(id, t);
}

// Progress-based fair sharing (as SimGrid's): when a transfer joins or leaves a link, bring every
// active transfer's remaining work up to now at its old share (capacity / k), then reschedule each
// end at the new share. Superseded end events are skipped by their version number.
void Engine::start_transfer(TaskId id, double t) {
  Link& link = links_[spec_[id].link];
  // progress the others at their old share before the newcomer joins
  const double k = static_cast<double>(link.active.size());
  if (k > 0) {
    const double done = (t - link.last_t) * link.capacity / k;
    for (TaskId a : link.active) remaining_[a] = std::max(0.0, remaining_[a] - done);
  }
  link.last_t = t;
  remaining_[id] = spec_[id].work;
  link.active.push_back(id);
  const double rate = link.capacity / static_cast<double>(link.active.size());
  for (TaskId a : link.active) push(t + remaining_[a] / rate, a, 1, ++version_[a]);
}

void Engine::end_transfer(TaskId id, double t) {
  Link& link = links_[spec_[id].link];
  const double k = static_cast<double>(link.active.size());
  const double done = (t - link.last_t) * link.capacity / k;
  link.last_t = t;
  auto it = std::find(link.active.begin(), link.active.end(), id);
  link.active.erase(it);
  remaining_[id] = 0;
  if (!link.active.empty()) {
    const double rate = link.capacity / static_cast<double>(link.active.size());
    for (TaskId a : link.active) {
      remaining_[a] = std::max(0.0, remaining_[a] - done);
      push(t + remaining_[a] / rate, a, 1, ++version_[a]);
    }
  }
  complete(id, t);
}

void Engine::complete(TaskId id, double t) {
  state_[id] = TaskState::done;
  finish_[id] = t;
  makespan_ = std::max(makespan_, t);
  const int s = stream_of(id);
  Stream& st = streams_[s];
  st.busy = false;
  ++st.cursor;
  for (std::int32_t e = succ_begin_[id]; e < succ_begin_[id + 1]; ++e) {
    const TaskId n = succ_[e];
    if (binding_[n] < 0 || finish_[binding_[n]] <= t) binding_[n] = id;
    if (--pending_[n] == 0) {
      state_[n] = TaskState::ready;
      try_start(stream_of(n), t);
    }
  }
  try_start(s, t);
}

void Engine::run() {
  const std::size_t n = spec_.size();
  state_.assign(n, TaskState::waiting);
  start_.assign(n, 0.0);
  finish_.assign(n, 0.0);
  remaining_.assign(n, 0.0);
  version_.assign(n, 0);
  pending_.assign(n, 0);
  binding_.assign(n, -1);
  makespan_ = 0;
  seq_ = 0;
  events_ = 0;
  for (auto& l : links_) {
    l.active.clear();
    l.last_t = 0;
  }

  // successors in CSR form (counting sort by source)
  succ_begin_.assign(n + 1, 0);
  for (TaskId f : edge_from_) ++succ_begin_[f + 1];
  for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(edge_from_.size());
  {
    std::vector<std::int32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (std::size_t e = 0; e < edge_from_.size(); ++e) {
      succ_[fill[edge_from_[e]]++] = edge_to_[e];
      ++pending_[edge_to_[e]];
    }
  }
  // stream program order (counting sort by stream, stable in insertion order)
  const int nstreams = ranks_ * kStreamKinds;
  streams_.assign(nstreams, Stream{});
  std::vector<std::int32_t> count(nstreams + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++count[stream_of(static_cast<TaskId>(i)) + 1];
  for (int s = 0; s < nstreams; ++s) count[s + 1] += count[s];
  stream_tasks_.resize(n);
  for (int s = 0; s < nstreams; ++s) {
    streams_[s].begin = streams_[s].cursor = count[s];
    streams_[s].end = count[s + 1];
  }
  for (std::size_t i = 0; i < n; ++i)
    stream_tasks_[count[stream_of(static_cast<TaskId>(i))]++] = static_cast<TaskId>(i);

  heap_.clear();
  heap_.reserve(1024);
  for (std::size_t i = 0; i < n; ++i)
    if (pending_[i] == 0) state_[i] = TaskState::ready;
  for (int s = 0; s < nstreams; ++s) try_start(s, 0.0);

  std::size_t done = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event ev = heap_.back();
    heap_.pop_back();
    if (ev.type == 1 && ev.version != version_[ev.task]) continue;  // superseded share
    ++events_;
    const TaskSpec& sp = spec_[ev.task];
    if (ev.type == 0 && sp.work > 0 && sp.duration_s > 0) {
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
  if (spec_.empty()) return path;
  TaskId last = 0;
  for (std::size_t i = 1; i < spec_.size(); ++i)
    if (finish_[i] >= finish_[last]) last = static_cast<TaskId>(i);
  for (TaskId t = last; t >= 0; t = binding_[t]) path.push_back(t);
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
