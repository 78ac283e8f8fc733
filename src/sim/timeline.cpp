#include "ptdsim/sim/timeline.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

namespace ptdsim::sim {
namespace {

// The drawing order of the streams: compute first, then the collectives a pass waits for, then
// the pipeline sends, then the gradient traffic.
constexpr std::array<StreamKind, kStreamKinds> kOrder{StreamKind::compute, StreamKind::tp, StreamKind::cp,
                                                      StreamKind::ep,      StreamKind::pp_send,
                                                      StreamKind::dp,      StreamKind::dp_gather};

// One bar before it is kept or summarised: a task, or the folded TP part of a compute task.
struct Item {
  int order;  // position of its stream in kOrder
  double start, end;
  TaskId task;
  bool folded_tp;
};

std::string label_of(const StepGraph& g, const TaskSpec& sp, bool folded_tp) {
  std::string label(name(folded_tp ? task_kind(core::CommKind::tp) : sp.kind));
  if (sp.microbatch >= 0) {
    label += " mb" + std::to_string(sp.microbatch);
    if (g.vpp > 1) label += " c" + std::to_string(sp.chunk);
  }
  if (sp.layer_count > 0) {
    label += " L" + std::to_string(sp.layer_first);
    if (sp.layer_count > 1) label += "-" + std::to_string(sp.layer_first + sp.layer_count - 1);
  }
  return label;
}

// Consecutive summarised items of one stream, drawn as one bar.
struct Run {
  int n = 0;
  double start = 0, end = 0, busy = 0;
  int mb_lo = 0, mb_hi = 0;
};

void flush(Run& run, int stage, StreamKind stream, std::vector<core::TimelineSpan>& out) {
  if (run.n == 0) return;
  core::TimelineSpan s;
  s.stage = stage;
  s.stream = std::string(name(stream));
  s.kind = "summary";
  s.label = std::to_string(run.n) + (run.n == 1 ? " task of micro-batch " : " tasks of micro-batches ") +
            std::to_string(run.mb_lo) + (run.mb_hi > run.mb_lo ? "-" + std::to_string(run.mb_hi) : "");
  s.start_s = run.start;
  s.dur_s = run.end - run.start;
  s.tasks = run.n;
  s.busy_s = run.busy;
  out.push_back(std::move(s));
  run = Run{};
}

using Busy = std::vector<std::pair<double, double>>;

// The rank's tasks as items, stream by stream in kOrder, a compute task's folded TP on the TP stream
// in time order; and the intervals of its serial work (compute, TP, CP, EP), the optimizer aside.
void rank_items(const Engine& e, int rank, std::vector<Item>& items, Busy& busy) {
  items.clear();
  busy.clear();
  for (int q = 0; q < kStreamKinds; ++q)
    for (TaskId t : e.stream_tasks(rank, kOrder[q])) {
      const TaskSpec sp = e.spec(t);
      const double end = e.finish(t) - sp.folded_tp_s;
      items.push_back(Item{q, e.start(t), end, t, false});
      if (sp.folded_tp_s > 0) items.push_back(Item{1, end, e.finish(t), t, true});
      const bool serial = kOrder[q] == StreamKind::compute || kOrder[q] == StreamKind::tp ||
                          kOrder[q] == StreamKind::cp || kOrder[q] == StreamKind::ep;
      if (serial && sp.kind != TaskKind::optimizer && sp.kind != TaskKind::offload) busy.emplace_back(e.start(t), e.finish(t));
    }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.order != b.order ? a.order < b.order : a.start < b.start;
  });
}

// Which tasks are drawn one by one when the step is sampled: those of the first and the last k
// micro-batches, those on the critical path and those outside the micro-batch loop.
struct Detail {
  const Engine& e;
  const std::vector<char>& critical;
  bool sample;
  int k, m;
  bool operator()(TaskId t) const {
    const int mb = e.microbatch(t);
    return !sample || mb < 0 || mb < k || mb >= m - k || critical[static_cast<std::size_t>(t)];
  }
};

// The rank's items as spans: a task drawn one by one as its own, each run of the others on a
// stream as one grey bar. Returns the tasks drawn in runs.
std::size_t rank_spans(const StepGraph& g, int stage, const std::vector<Item>& items, const Detail& detailed,
                       std::array<bool, kStreamKinds>& used, std::vector<core::TimelineSpan>& spans) {
  const Engine& e = g.engine;
  std::size_t summarised = 0;
  Run run;
  int run_order = -1;
  for (const Item& it : items) {
    const StreamKind stream = kOrder[it.order];
    if (it.order != run_order) {
      if (run_order >= 0) flush(run, stage, kOrder[run_order], spans);
      run_order = it.order;
    }
    used[it.order] = true;
    const TaskSpec sp = e.spec(it.task);
    if (!detailed(it.task)) {
      if (!it.folded_tp) ++summarised;
      if (run.n == 0) {
        run.start = it.start;
        run.mb_lo = run.mb_hi = sp.microbatch;
      }
      ++run.n;
      run.end = std::max(run.end, it.end);
      run.busy += it.end - it.start;
      run.mb_lo = std::min(run.mb_lo, sp.microbatch);
      run.mb_hi = std::max(run.mb_hi, sp.microbatch);
      continue;
    }
    flush(run, stage, stream, spans);
    core::TimelineSpan s;
    s.stage = stage;
    s.stream = std::string(name(stream));
    s.kind = std::string(name(it.folded_tp ? task_kind(core::CommKind::tp) : sp.kind));
    s.label = label_of(g, sp, it.folded_tp);
    s.start_s = it.start;
    s.dur_s = it.end - it.start;
    s.busy_s = s.dur_s;
    s.critical = detailed.critical[static_cast<std::size_t>(it.task)] != 0;
    spans.push_back(std::move(s));
  }
  if (run_order >= 0) flush(run, stage, kOrder[run_order], spans);
  return summarised;
}

// Bubbles: the gaps of the rank's serial work before the pipeline phase ends, at least min_s
// long, merged by time into the rank's compute spans (its spans from first_span on).
void rank_bubbles(int stage, Busy& busy, double pipeline_end_s, double min_s, std::size_t first_span,
                  std::array<bool, kStreamKinds>& used, std::vector<core::TimelineSpan>& spans) {
  std::sort(busy.begin(), busy.end());
  double covered = 0;
  std::vector<core::TimelineSpan> bubbles;
  auto gap = [&](double from, double to) {
    if (to - from < min_s || to - from <= 0) return;
    core::TimelineSpan s;
    s.stage = stage;
    s.stream = std::string(name(StreamKind::compute));
    s.kind = "bubble";
    s.label = "bubble";
    s.start_s = from;
    s.dur_s = to - from;
    s.tasks = 0;
    s.busy_s = 0;
    bubbles.push_back(std::move(s));
  };
  for (const auto& [a, b] : busy) {
    if (a >= pipeline_end_s) break;
    gap(covered, std::min(a, pipeline_end_s));
    covered = std::max(covered, b);
  }
  gap(covered, pipeline_end_s);
  if (bubbles.empty()) return;
  used[0] = true;
  // the compute stream's spans come first for this rank: merge the bubbles into them by time
  auto compute_end = std::find_if(spans.begin() + static_cast<std::ptrdiff_t>(first_span), spans.end(),
                                  [](const core::TimelineSpan& s) { return s.stream != "compute"; });
  const auto at = spans.insert(compute_end, bubbles.begin(), bubbles.end());
  std::stable_sort(spans.begin() + static_cast<std::ptrdiff_t>(first_span),
                   at + static_cast<std::ptrdiff_t>(bubbles.size()),
                   [](const core::TimelineSpan& a, const core::TimelineSpan& b) { return a.start_s < b.start_s; });
}

}  // namespace

core::Timeline timeline(const StepGraph& g, const TimelineOptions& o) {
  const Engine& e = g.engine;
  core::Timeline out;
  out.step_s = e.makespan();
  out.microbatches = g.microbatches;
  out.tasks = e.size();
  out.min_bubble_s = o.min_bubble_fraction * out.step_s;
  for (TaskId last : g.last_pipeline_task)
    if (last >= 0) out.pipeline_end_s = std::max(out.pipeline_end_s, e.finish(last));
  for (const RankRef& r : g.ranks) out.stages = std::max(out.stages, r.stage + 1);

  std::vector<char> critical(e.size(), 0);
  for (TaskId t : e.critical_path()) critical[static_cast<std::size_t>(t)] = 1;
  const int m = g.microbatches;
  const int k = std::max(1, o.edge_microbatches);
  const bool sample = e.size() > o.max_tasks && m > 2 * k;
  const Detail detailed{e, critical, sample, k, m};

  std::array<bool, kStreamKinds> used{};
  std::size_t summarised = 0;
  std::vector<Item> items;
  Busy busy;
  for (int rank = 0; rank < e.ranks(); ++rank) {
    const int stage = g.ranks[static_cast<std::size_t>(rank)].stage;
    rank_items(e, rank, items, busy);
    const std::size_t first_span = out.spans.size();
    summarised += rank_spans(g, stage, items, detailed, used, out.spans);
    rank_bubbles(stage, busy, out.pipeline_end_s, out.min_bubble_s, first_span, used, out.spans);
  }
  for (int q = 0; q < kStreamKinds; ++q)
    if (used[q]) out.streams.emplace_back(name(kOrder[q]));
  for (int k = 0; k < kTaskKinds; ++k) {
    const std::string_view kind = name(static_cast<TaskKind>(k));
    if (std::any_of(out.spans.begin(), out.spans.end(), [&](const core::TimelineSpan& s) { return s.kind == kind; }))
      out.kinds.emplace_back(kind);
  }
  if (sample) {
    out.sampling = "the step has " + std::to_string(e.size()) + " tasks: every task of micro-batches 0-" +
                   std::to_string(k - 1) + " and " + std::to_string(m - k) + "-" + std::to_string(m - 1) +
                   ", every task on the critical path and every task outside the micro-batch loop is "
                   "drawn; the other " + std::to_string(summarised) +
                   " tasks are drawn as grey bars, one per run of consecutive tasks on a stream";
  }
  return out;
}

}  // namespace ptdsim::sim
