#include "ptdsim/sim/summary.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace ptdsim::sim {

core::CommKind comm_kind_of(TaskKind k) {
  switch (k) {
    case TaskKind::tp: return core::CommKind::tp;
    case TaskKind::cp: return core::CommKind::cp;
    case TaskKind::ep: return core::CommKind::ep;
    case TaskKind::p2p: return core::CommKind::pp;
    default: return core::CommKind::dp;
  }
}

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

core::BoundKind bound_kind(TaskKind k) {
  switch (k) {
    case TaskKind::tp: return core::BoundKind::tp;
    case TaskKind::cp: return core::BoundKind::cp;
    case TaskKind::ep: return core::BoundKind::ep;
    case TaskKind::p2p: return core::BoundKind::pp;
    case TaskKind::dp_reduce: return core::BoundKind::dp_reduce;
    case TaskKind::dp_gather: return core::BoundKind::dp_gather;
    case TaskKind::zero3_gather: return core::BoundKind::zero3_gather;
    case TaskKind::zero3_reduce: return core::BoundKind::zero3_reduce;
    case TaskKind::optimizer: return core::BoundKind::optimizer;
    case TaskKind::forward:
    case TaskKind::backward:
    case TaskKind::backward_input:
    case TaskKind::backward_weight: return core::BoundKind::compute;
  }
  return core::BoundKind::compute;
}

}  // namespace

StepSummary summarize(const StepGraph& g) {
  const Engine& e = g.engine;
  const int R = e.ranks();
  StepSummary out;
  out.step_s = e.makespan();

  // compute busy intervals per rank: a stream runs in program order, so they come sorted
  std::vector<std::vector<Interval>> compute(R);
  std::vector<double> work(R, 0.0);
  for (int r = 0; r < R; ++r) {
    const auto tasks = e.stream_tasks(r, StreamKind::compute);
    compute[r].reserve(tasks.size());
    for (TaskId t : tasks) {
      const Interval iv{e.start(t), e.finish(t) - e.folded_tp_s(t)};
      compute[r].push_back(iv);
      if (e.kind(t) == TaskKind::optimizer)
        out.optimizer_s = std::max(out.optimizer_s, iv.second - iv.first);
      else
        work[r] += iv.second - iv.first;
    }
  }

  out.busiest_rank = static_cast<int>(std::max_element(work.begin(), work.end()) - work.begin());
  out.compute_s = work[out.busiest_rank];
  // A task no collective slowed ends at start + duration exactly (the engine's own sum); counting
  // only the others keeps the rounding of finish - start - duration (1e-13 s a task) out of the sum,
  // where it printed as a contention of "0.0 us" on GPUs that have none.
  for (TaskId t : e.stream_tasks(out.busiest_rank, StreamKind::compute))
    if (e.kind(t) != TaskKind::optimizer && e.finish(t) > e.start(t) + e.duration_s(t))
      out.contention_s += e.finish(t) - e.start(t) - e.duration_s(t);
  {
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
      for (TaskId t : e.stream_tasks(out.busiest_rank, k)) {
        const TaskKind kind = e.kind(t);
        const bool zero3 = kind == TaskKind::zero3_gather || kind == TaskKind::zero3_reduce;
        if ((k == StreamKind::dp || k == StreamKind::dp_gather) && !zero3) continue;
        if (kind != TaskKind::optimizer) serial.emplace_back(e.start(t), e.finish(t));
      }
    }
    out.bubble_s = uncovered(merged(std::move(serial), runs), 0.0, span);
  }

  // exposed communication and the critical path in words
  const auto path = e.critical_path();
  // time on the path per label: a stage's compute (key = stage), or a kind of task (key = -1 - kind)
  std::vector<std::pair<int, double>> labels;  // in order of first appearance
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
      credit(sp.kind == TaskKind::optimizer ? kind_key(sp.kind) : g.ranks[sp.rank].stage,
             dur - sp.folded_tp_s);
      // folded serial TP stalls the compute stream: all of it is exposed
      out.exposed_s[static_cast<int>(core::CommKind::tp)] += sp.folded_tp_s;
      credit(kind_key(TaskKind::tp), sp.folded_tp_s);
      continue;
    }
    // the rank that waits for this transfer: the next task's on the path
    const int waiting = k + 1 < path.size() ? e.rank(path[k + 1]) : sp.rank;
    const double exposed = uncovered(compute[waiting], e.start(t), e.finish(t));
    out.exposed_s[static_cast<int>(comm_kind_of(sp.kind))] += exposed;
    credit(kind_key(sp.kind), exposed);
    // the rest of a path transfer ran beside compute, yet it still set the pace: the step waits
    // on this chain of transfers, not on the compute that hid it
    credit(overlapped_key(sp.kind), (e.finish(t) - e.start(t)) - exposed);
  }
  {
    // compute spread over many stages (balanced stages) reads better as one part
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
  }
  {
    std::vector<core::BoundPart> parts;
    parts.reserve(labels.size());
    for (const auto& [key, v] : labels) {
      core::BoundPart b;
      b.share = out.step_s > 0 ? v / out.step_s : 0.0;
      if (key == kAllStages) {
        b.kind = core::BoundKind::compute;
      } else if (key >= 0) {
        b.kind = core::BoundKind::compute;
        b.stage = key;
      } else {
        b.beside_compute = key <= kOverlappedBase;
        b.kind = bound_kind(static_cast<TaskKind>(b.beside_compute ? kOverlappedBase - key : -1 - key));
      }
      parts.push_back(b);
    }
    out.bounded_by = core::largest_parts(std::move(parts));
  }

  // peak micro-batches in flight: a chunk's activations live from its forward's start to the end
  // of the pass that frees them; one chunk is 1/vpp of a micro-batch's activations
  out.in_flight.assign(R, 0.0);
  std::vector<double> acquire, release;
  for (int r = 0; r < R; ++r) {
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
    out.in_flight[r] = static_cast<double>(peak) / g.vpp;
  }
  return out;
}

}  // namespace ptdsim::sim
