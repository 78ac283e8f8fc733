#include "ptdsim/sim/summary.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <utility>

namespace ptdsim::sim {

namespace {

using Interval = std::pair<double, double>;
constexpr int kAllStages = 1 << 30;  // a label: compute of every stage together
constexpr int kOverlappedBase = -1000;  // labels of path transfers that compute ran beside

// Length of [a, b] not covered by the sorted, disjoint intervals.
double uncovered(const std::vector<Interval>& busy, double a, double b) {
  if (b <= a) return 0;
  double covered = 0;
  auto it = std::upper_bound(busy.begin(), busy.end(), Interval{a, a},
                             [](const Interval& x, const Interval& y) { return x.first < y.first; });
  if (it != busy.begin()) --it;
  for (; it != busy.end() && it->first < b; ++it)
    covered += std::max(0.0, std::min(b, it->second) - std::max(a, it->first));
  return (b - a) - covered;
}

// `v` holds sorted runs that begin at `runs` (a stream's tasks run one after another, so each
// stream's intervals come in order): merging them sorts v as std::sort would, in linear time per run.
std::vector<Interval> merged(std::vector<Interval> v, const std::vector<std::size_t>& runs) {
  for (std::size_t r = 1; r < runs.size(); ++r)
    std::inplace_merge(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                       r + 1 < runs.size() ? v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]) : v.end());
  std::vector<Interval> out;
  for (const auto& x : v) {
    if (!out.empty() && x.first <= out.back().second)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

// The report's part for time spent in a task of kind k (a transfer, the optimizer step or CPU offload).
void set_kind(core::BoundPart& b, TaskKind k) {
  if (!is_compute(k)) b.kind = core::BoundKind::comm, b.comm = comm_kind(k);
  else if (k == TaskKind::optimizer) b.kind = core::BoundKind::optimizer;
  else if (k == TaskKind::offload) b.kind = core::BoundKind::offload;
  else b.kind = core::BoundKind::compute;
}

// The reference rank's pipeline passes (its optimizer step and CPU offload are not: the others'
// cool-down runs beside them) as busy intervals, its own serial TP included (while it runs, the
// reference is not idle: another stage's compute on the path then is that stage's compute, not a
// wait); its first backward's start and its last forward's end bound the warm-up and cool-down.
struct ReferencePasses {
  std::vector<Interval> busy;
  double first_backward = std::numeric_limits<double>::infinity(), last_forward = 0;
};
ReferencePasses reference_passes(const Engine& e, int ref) {
  ReferencePasses out;
  for (TaskId t : e.stream_tasks(ref, StreamKind::compute)) {
    const TaskKind k = e.kind(t);
    if (k == TaskKind::optimizer || k == TaskKind::offload) continue;
    out.busy.emplace_back(e.start(t), e.finish(t));
    if (k == TaskKind::forward) out.last_forward = std::max(out.last_forward, e.finish(t));
    else out.first_backward = std::min(out.first_backward, e.start(t));
  }
  return out;
}

// The critical path's parts: each rank's compute and waits per stage (several ranks may hold one
// stage, build_step takes any rank list: a stage's parts are summed), the other causes whole.
std::vector<core::PathPart> path_parts(const StepGraph& g, const std::vector<double>& compute,
                                       const std::vector<double>& waits,
                                       const std::array<double, core::kPathCauseCount>& other) {
  std::vector<core::PathPart> out;
  auto by_stage = [&](core::PathCause c, const std::vector<double>& v) {
    std::vector<double> stage;
    for (std::size_t r = 0; r < v.size(); ++r) {
      const auto st = static_cast<std::size_t>(g.ranks[r].stage);
      if (stage.size() <= st) stage.resize(st + 1, 0.0);
      stage[st] += v[r];
    }
    for (std::size_t st = 0; st < stage.size(); ++st)
      if (stage[st] > 0) out.push_back(core::PathPart{c, static_cast<int>(st), stage[st]});
  };
  by_stage(core::PathCause::compute, compute);
  for (int c = 1; c < core::kPathCauseCount; ++c) {
    const auto cause = static_cast<core::PathCause>(c);
    if (cause == core::PathCause::wait_stage) by_stage(cause, waits);
    else if (other[static_cast<std::size_t>(c)] > 0) out.push_back(core::PathPart{cause, -1, other[static_cast<std::size_t>(c)]});
  }
  return out;
}

// Where the step goes (docs/simulator.md "Where the step goes"): every instant of the critical path
// given to one cause. The busiest rank is the reference: the path's compute on it is its compute;
// the path's compute on another rank is that rank's compute while the reference computes too, and
// a wait of the reference while it idles: pipeline fill and drain in its warm-up (before its first
// backward pass starts) and cool-down (after its last forward pass ends), a wait for that stage in
// between. Transfers are named by their kind, the optimizer step is the optimizer.
std::vector<core::PathPart> attribute_path(const StepGraph& g, const std::vector<TaskId>& path, int ref) {
  const Engine& e = g.engine;
  const ReferencePasses passes = reference_passes(e, ref);
  const std::vector<Interval>& busy = passes.busy;
  const double first_backward = passes.first_backward, last_forward = passes.last_forward;
  std::array<double, core::kPathCauseCount> other{};
  std::vector<double> compute(g.ranks.size(), 0.0), waits(g.ranks.size(), 0.0);
  auto add = [&](core::PathCause c, double s) { other[static_cast<std::size_t>(c)] += s; };
  // [a, b] of another rank's compute: covered by the reference's passes, or a wait of one kind
  auto split = [&](int rank, double a, double b) {
    auto idle = [&](double x, double y) {
      const double steady = std::max(0.0, std::min(y, last_forward) - std::max(x, first_backward));
      waits[rank] += steady;
      add(core::PathCause::fill_drain, (y - x) - steady);
    };
    auto it = std::upper_bound(busy.begin(), busy.end(), Interval{a, a},
                               [](const Interval& x, const Interval& y) { return x.first < y.first; });
    if (it != busy.begin()) --it;
    double at = a;
    for (; it != busy.end() && it->first < b && at < b; ++it) {
      if (it->second <= at) continue;
      if (it->first > at) idle(at, it->first), at = it->first;
      const double end = std::min(b, it->second);
      compute[rank] += end - at;
      at = end;
    }
    if (at < b) idle(at, b);
  };
  double cursor = 0;  // the path covers the step without gaps; a gap would go to the task after it
  for (TaskId t : path) {
    const double b = e.finish(t), a = std::min(cursor, b);
    cursor = b;
    const TaskKind k = e.kind(t);
    const int rank = e.rank(t);
    if (!is_compute(k)) {
      add(core::path_cause(comm_kind(k)), b - a);
    } else if (k == TaskKind::optimizer) {
      add(core::PathCause::optimizer, b - a);
    } else if (k == TaskKind::offload) {
      add(core::PathCause::offload, b - a);
    } else {
      const double tp = std::min(b - a, e.folded_tp_s(t));  // folded serial TP ends the task
      add(core::PathCause::tp, tp);
      if (rank == ref) compute[rank] += (b - tp) - a;
      else split(rank, a, b - tp);
    }
  }
  return path_parts(g, compute, waits, other);
}

// Each rank's compute busy intervals (a stream runs in program order, so they come sorted), without
// the folded TP at their ends; each rank's compute time and the step's longest optimizer.
std::vector<std::vector<Interval>> compute_intervals(const Engine& e, std::vector<double>& work, double& optimizer_s,
                                                     double& offload_s) {
  const int R = e.ranks();
  std::vector<std::vector<Interval>> compute(R);
  work.assign(R, 0.0);
  for (int r = 0; r < R; ++r) {
    const auto tasks = e.stream_tasks(r, StreamKind::compute);
    compute[r].reserve(tasks.size());
    for (TaskId t : tasks) {
      const Interval iv{e.start(t), e.finish(t) - e.folded_tp_s(t)};
      compute[r].push_back(iv);
      if (e.kind(t) == TaskKind::optimizer)
        optimizer_s = std::max(optimizer_s, iv.second - iv.first);
      else if (e.kind(t) == TaskKind::offload)
        offload_s = std::max(offload_s, iv.second - iv.first);
      else
        work[r] += iv.second - iv.first;
    }
  }
  return compute;
}

// What the collectives' SMs cost the rank's compute.
double contention_s(const Engine& e, int rank) {
  // A task no collective slowed ends at start + duration exactly (the engine's own sum); counting
  // only the others keeps the rounding of finish - start - duration (1e-13 s a task) out of the sum,
  // where it printed as a contention of "0.0 us" on GPUs that have none.
  double sum = 0;
  for (TaskId t : e.stream_tasks(rank, StreamKind::compute))
    if (e.kind(t) != TaskKind::optimizer && e.kind(t) != TaskKind::offload && e.finish(t) > e.start(t) + e.duration_s(t))
      sum += e.finish(t) - e.start(t) - e.duration_s(t);
  return sum;
}

// The rank's idle time in the pipeline phase: what its serial work does not cover.
double pipeline_bubble(const StepGraph& g, int rank) {
  const Engine& e = g.engine;
  // the pipeline phase ends when the last rank's last pass ends: a stage that finished early
  // idles through the others' cool-down too ((p-1)(t_f+t_b) on every stage of an even 1F1B)
  double span = 0;
  for (TaskId last : g.last_pipeline_task)
    if (last >= 0) span = std::max(span, e.finish(last));
  // ZeRO-3's gathers and reduce-scatters the compute waits for are exposed communication, not
  // pipeline idle time: they cover the compute stream's gaps as the serial TP/CP/EP do
  std::vector<Interval> serial;
  std::vector<std::size_t> runs;
  for (StreamKind k : {StreamKind::compute, StreamKind::tp, StreamKind::cp, StreamKind::ep,
                       StreamKind::dp, StreamKind::dp_gather}) {
    runs.push_back(serial.size());
    for (TaskId t : e.stream_tasks(rank, k)) {
      const TaskKind kind = e.kind(t);
      const bool zero3 = !is_compute(kind) && core::is_zero3(comm_kind(kind));
      if ((k == StreamKind::dp || k == StreamKind::dp_gather) && !zero3) continue;
      if (kind != TaskKind::optimizer && kind != TaskKind::offload) serial.emplace_back(e.start(t), e.finish(t));
    }
  }
  return uncovered(merged(std::move(serial), runs), 0.0, span);
}

// Time on the critical path per label, in order of first appearance: a stage's compute (key =
// stage), a kind of task exposed (key = -1 - kind) or beside compute (kOverlappedBase - kind);
// and the exposed communication per kind into `out`.
std::vector<std::pair<int, double>> path_labels(const StepGraph& g, const std::vector<TaskId>& path,
                                                const std::vector<std::vector<Interval>>& compute, StepSummary& out) {
  const Engine& e = g.engine;
  std::vector<std::pair<int, double>> labels;
  auto credit = [&](int key, double s) {
    if (s <= 0) return;
    for (auto& [k, v] : labels)
      if (k == key) {
        v += s;
        return;
      }
    labels.emplace_back(key, s);
  };
  auto kind_key = [](TaskKind k) { return -1 - static_cast<int>(k); };
  auto overlapped_key = [](TaskKind k) { return kOverlappedBase - static_cast<int>(k); };
  for (std::size_t k = 0; k < path.size(); ++k) {
    const TaskId t = path[k];
    const TaskSpec sp = e.spec(t);
    const double dur = e.finish(t) - e.start(t);
    if (is_compute(sp.kind)) {
      credit(sp.kind == TaskKind::optimizer || sp.kind == TaskKind::offload ? kind_key(sp.kind) : g.ranks[sp.rank].stage,
             dur - sp.folded_tp_s);
      // folded serial TP stalls the compute stream: all of it is exposed
      out.exposed_s[static_cast<int>(core::CommBucket::tp)] += sp.folded_tp_s;
      credit(kind_key(task_kind(core::CommKind::tp)), sp.folded_tp_s);
      continue;
    }
    // the rank that waits for this transfer: the next task's on the path
    const int waiting = k + 1 < path.size() ? e.rank(path[k + 1]) : sp.rank;
    const double exposed = uncovered(compute[waiting], e.start(t), e.finish(t));
    out.exposed_s[static_cast<int>(core::bucket(comm_kind(sp.kind)))] += exposed;
    credit(kind_key(sp.kind), exposed);
    // the rest of a path transfer ran beside compute, yet it still set the pace: the step waits
    // on this chain of transfers, not on the compute that hid it
    credit(overlapped_key(sp.kind), (e.finish(t) - e.start(t)) - exposed);
  }
  return labels;
}

// The labels as the report's parts of the step, compute spread over many stages (balanced
// stages) as one part, which reads better.
std::vector<core::BoundPart> bound_parts(std::vector<std::pair<int, double>> labels, double step_s) {
  double stage_total = 0, stage_max = 0;
  for (const auto& [k, v] : labels)
    if (k >= 0) stage_total += v, stage_max = std::max(stage_max, v);
  if (stage_total > 0 && stage_max < 0.5 * stage_total) {
    std::vector<std::pair<int, double>> merged_labels;
    bool placed = false;
    for (const auto& [k, v] : labels) {
      if (k < 0) merged_labels.emplace_back(k, v);
      else if (!placed) merged_labels.emplace_back(kAllStages, stage_total), placed = true;
    }
    labels = std::move(merged_labels);
  }
  std::vector<core::BoundPart> parts;
  parts.reserve(labels.size());
  for (const auto& [key, v] : labels) {
    core::BoundPart b;
    b.share = step_s > 0 ? v / step_s : 0.0;
    if (key == kAllStages) {
      b.kind = core::BoundKind::compute;
    } else if (key >= 0) {
      b.kind = core::BoundKind::compute;
      b.stage = key;
    } else {
      b.beside_compute = key <= kOverlappedBase;
      set_kind(b, static_cast<TaskKind>(b.beside_compute ? kOverlappedBase - key : -1 - key));
    }
    parts.push_back(b);
  }
  return parts;
}

// Peak micro-batches in flight per rank: a chunk's activations live from its forward's start to
// the end of the pass that frees them; one chunk is 1/vpp of a micro-batch's activations.
std::vector<double> in_flight(const StepGraph& g) {
  const Engine& e = g.engine;
  std::vector<double> out(e.ranks(), 0.0);
  std::vector<double> acquire, release;
  for (int r = 0; r < e.ranks(); ++r) {
    acquire.clear();
    release.clear();
    for (const auto& [first, last] : g.activations[r]) {
      acquire.push_back(e.start(first));
      release.push_back(e.finish(last));
    }
    // program order is nearly time order: sort only when it is not
    if (!std::is_sorted(acquire.begin(), acquire.end())) std::sort(acquire.begin(), acquire.end());
    if (!std::is_sorted(release.begin(), release.end())) std::sort(release.begin(), release.end());
    int now = 0, peak = 0;
    std::size_t i = 0, j = 0;
    while (i < acquire.size()) {
      if (j < release.size() && release[j] <= acquire[i]) {  // a release at the same time first
        --now;
        ++j;
      } else {
        peak = std::max(peak, ++now);
        ++i;
      }
    }
    out[r] = static_cast<double>(peak) / g.vpp;
  }
  return out;
}

}  // namespace

StepSummary summarize(const StepGraph& g) {
  const Engine& e = g.engine;
  StepSummary out;
  out.step_s = e.makespan();
  std::vector<double> work;
  const auto compute = compute_intervals(e, work, out.optimizer_s, out.offload_s);
  out.busiest_rank = static_cast<int>(std::max_element(work.begin(), work.end()) - work.begin());
  out.compute_s = work[out.busiest_rank];
  out.contention_s = contention_s(e, out.busiest_rank);
  out.bubble_s = pipeline_bubble(g, out.busiest_rank);
  // exposed communication and the critical path in words
  const auto path = e.critical_path();
  out.bounded_by = core::largest_parts(bound_parts(path_labels(g, path, compute, out), out.step_s));
  out.critical_path = attribute_path(g, path, out.busiest_rank);
  out.in_flight = in_flight(g);
  return out;
}

}  // namespace ptdsim::sim
