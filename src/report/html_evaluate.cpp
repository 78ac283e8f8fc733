// The evaluate page: inputs, the answer, the simulated step's timeline, memory per stage and where
// the step time goes (docs/report.md "evaluate").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>

#include "report_fields.hpp"
#include "format.hpp"
#include "html_page.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"

namespace ptdsim::report {
namespace {

using core::kGiB;
using html::Page;
using html::Table;

// ---- where the step time goes: the adaptor the chart reads ------------------------------------

// One bar of "where the step time goes".
struct Share {
  std::string label;
  double seconds = 0;
};

// The critical path's parts (Report::critical_path): one cause per instant of the step, so the bars
// add up to the step.
std::vector<Share> step_shares(const core::Report& r) {
  std::vector<Share> out;
  for (const auto& p : r.critical_path) out.push_back({core::path_words(p), p.seconds});
  return out;
}

// The per-kind totals beside them, each on its own; they overlap one another.
std::string totals_table(const core::Report& r) {
  Table tab("totals", {"total", "seconds", "of the step"}, {false, true, true});
  auto row = [&](const std::string& what, double s) {
    tab.row({what, report::seconds(s), html::percent(r.step_s > 0 ? s / r.step_s : 0)});
  };
  row("compute, busiest stage (contention included)", r.compute_s);
  if (r.contention_s > 0) row("of which slowed by collectives beside it", r.contention_s);
  row(r.engine == core::EngineKind::simulation ? "idle, busiest stage (all waits)" : "pipeline bubble", r.bubble_s);
  row("optimizer step", r.optimizer_s);
  if (r.scenario.training.offload != core::Offload::none) {  // docs/analytic.md "CPU offload"
    row("CPU offload", r.offload_s);
    row("of which gradients to the host", r.offload_down_s);
    row("of which the CPU's optimizer step", r.offload_cpu_s);
    row("of which parameters back", r.offload_up_s);
  }
  for (int k = 0; k < core::kCommBucketCount; ++k)
    if (r.comm[k].exposed_s > 0) row(fmt::format("exposed {} comm", core::kCommBucketNames[k]), r.comm[k].exposed_s);
  return tab.str();
}

// One layer's operators on one GPU, one micro-batch (Report::compute.layer), as the table prints them.
std::string operators_table(const core::Report& r) {
  Table tab("operators", {"operator", "forward", "backward", "source"}, {false, true, true, false});
  for (const auto& o : r.compute.layer)
    tab.row({std::string(core::name(o.op)), report::seconds(o.forward_s),
             seconds(o.backward_input_s + o.backward_weight_s), std::string(core::name(o.source))});
  return tab.str();
}

// ---- the answer and the inputs -----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> answer(const core::Report& r) {
  std::vector<std::pair<std::string, std::string>> f;
  f.emplace_back("step time (" + std::string(core::name(r.engine)) + ")", report::seconds(r.step_s));
  f.emplace_back("tokens per second", fmt::format("{:.0f}", r.tokens_per_s));
  f.emplace_back(fmt::format("MFU / HFU (of the {} peak, {:.0f} TFLOP/s)", core::name(r.scenario.training.precision),
                             r.mfu_peak_flops / 1e12),
                 html::percent(r.mfu) + " / " + html::percent(r.hfu) +
                     (r.mfu_bf16 > 0 ? " (MFU " + html::percent(r.mfu_bf16) + " of the bf16 peak)" : std::string()));
  f.emplace_back("TFLOP/s per GPU (model FLOPs)", fmt::format("{:.1f}", r.tflops_per_gpu));
  f.emplace_back("TFLOP/s per GPU as Megatron-LM logs it", fmt::format("{:.1f}", r.megatron_tflops_per_gpu));
  f.emplace_back("peak memory (stage " + std::to_string(r.peak_stage) + ")",
                 fmt::format("{:.1f} of {:.1f} GiB", r.peak_bytes / kGiB, r.capacity_bytes / kGiB));
  f.emplace_back("fits", r.fits ? fmt::format("yes, {:.1f} GiB free", (r.capacity_bytes - r.peak_bytes) / kGiB)
                 : r.peak_bytes > r.capacity_bytes
                     ? fmt::format("NO, {:.1f} GiB over", (r.peak_bytes - r.capacity_bytes) / kGiB)
                     : fmt::format("NO: the host holds {:.1f} of {:.1f} GiB per node", r.host_bytes_per_node / kGiB,
                                   r.host_capacity_bytes / kGiB));
  if (const auto& t = r.scenario.training; t.uses_host())
    f.emplace_back(t.offload == core::Offload::none
                       ? std::string("host memory per node (offloaded activations)")
                       : fmt::format("host memory per node (CPU offload {}{})", core::name(t.offload),
                                     t.offload_modules != 0 ? ", and offloaded activations" : ""),
                   fmt::format("{:.1f} of {:.1f} GiB", r.host_bytes_per_node / kGiB, r.host_capacity_bytes / kGiB));
  // what the inputs do not give is said, not guessed (report::to_train_line)
  f.emplace_back("days and cost to train", report::to_train_line(r));
  return f;
}

std::string inputs_table(const core::Report& r, const PageInfo& info) {
  const auto& s = r.scenario;
  const auto& p = s.parallel;
  const auto& t = s.training;
  const auto& g = s.hardware.gpu;
  Table tab("inputs", {"", "value"});
  tab.row({"model", fmt::format("{}: {} parameters, {} layers, hidden {}, heads {} (kv {}), ffn {}, vocab {}{}",
                                s.model.name, html::count(r.params), s.model.layers, s.model.hidden,
                                s.model.heads, s.model.kv_heads, s.model.ffn_hidden, s.model.vocab,
                                s.model.moe ? fmt::format(", MoE {} experts top {}", s.model.moe->experts,
                                                          s.model.moe->top_k)
                                            : std::string())});
  tab.row({"hardware", fmt::format("{}: {}, {:.0f} GiB, {:.0f} TFLOP/s {}, {} GPUs per node", s.hardware.name,
                                   g.name, g.memory_bytes / kGiB, g.peak_flops[core::index(t.precision)] / 1e12,
                                   core::name(t.precision), s.hardware.gpus_per_node)});
  tab.row({"layout", fmt::format("{} GPUs = tp {} x pp {} x dp {} x cp {} (ep {}), vpp {}, schedule {}", s.gpus,
                                 p.tp, p.pp, p.dp, p.cp, p.ep, p.vpp, core::name(p.schedule))});
  tab.row({"batch", fmt::format("global {} = micro-batch {} x {} micro-batches x dp {}; sequence {}",
                                t.global_batch, t.micro_batch, s.num_microbatches(), p.dp, t.seq_len)});
  auto on = [](bool b) { return b ? "on" : "off"; };
  tab.row({"switches",
           fmt::format("ZeRO-{}, sequence parallel {}, recompute {}, flash attention {}, optimizer {}; "
                       "overlap: tp {}, pp {}, dp {}, ZeRO-3 prefetch {}{}{}",
                       p.zero, on(p.sequence_parallel), core::name(t.recompute), report::flash_attention_text(t, s.hardware.gpu),
                       core::name(t.optimizer), on(t.overlap.tp), on(t.overlap.pp), on(t.overlap.dp),
                       on(t.overlap.zero3_prefetch),
                       p.cp > 1 ? fmt::format(", cp {}; cp_comm {}", on(t.overlap.cp), core::name(t.cp_comm)) : std::string(),
                       t.repeat_kv ? "; key/value heads repeated" : "")});
  tab.row({"precision and gradients", fmt::format("{}, {} main gradients, placement {}", core::name(t.precision),
                                                  core::name(t.main_grads), core::placement_text(p))});
  tab.row({"engine", fmt::format("{} (ptdsim {})", core::name(r.engine), info.version)});
  return tab.str();
}

std::string comm_table(const core::Report& r) {
  Table tab("communication", {"kind", "volume per GPU", "time alone", "exposed", "overlap ratio", "crosses nodes"},
            {false, true, true, true, true, false});
  for (int k = 0; k < core::kCommBucketCount; ++k) {
    const auto& c = r.comm[k];
    if (c.bytes <= 0 && c.time_s <= 0) continue;
    tab.row({core::kCommBucketNames[k], report::bytes(c.bytes), report::seconds(c.time_s),
             seconds(c.exposed_s), fmt::format("{:.2f}", c.overlap_ratio), c.crosses_nodes ? "yes" : "no"});
  }
  return tab.str();
}

// ---- charts ------------------------------------------------------------------------------------

std::string kind_class(std::string_view kind) {
  std::string c = "k-";
  for (char ch : kind) c += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '-';
  return c;
}

// The timeline chart's rows: per stage, the streams it uses, in the timeline's stream order.
struct TimelineRows {
  std::map<std::pair<int, int>, int> row_of;  // (stage, stream index) -> row
  std::vector<std::pair<int, int>> rows;      // (stage, stream index) per row
};
TimelineRows timeline_rows(const core::Timeline& t) {
  TimelineRows out;
  std::vector<std::vector<char>> used(static_cast<std::size_t>(t.stages), std::vector<char>(t.streams.size(), 0));
  for (const auto& s : t.spans) {
    const auto q = std::find(t.streams.begin(), t.streams.end(), s.stream) - t.streams.begin();
    if (s.stage >= 0 && s.stage < t.stages && q < static_cast<long>(t.streams.size()))
      used[static_cast<std::size_t>(s.stage)][static_cast<std::size_t>(q)] = 1;
  }
  for (int st = 0; st < t.stages; ++st)
    for (std::size_t q = 0; q < t.streams.size(); ++q)
      if (used[static_cast<std::size_t>(st)][q]) {
        out.row_of[{st, static_cast<int>(q)}] = static_cast<int>(out.rows.size());
        out.rows.emplace_back(st, static_cast<int>(q));
      }
  return out;
}

// Each row's label right-aligned at `x`: the stage on its first row and the stream; on thin rows
// only every few stages' names.
void row_labels(svg::Svg& chart, const core::Timeline& t, const std::vector<std::pair<int, int>>& rows,
                const std::vector<double>& row_y, double row_h, double x) {
  chart.open_group("row-labels");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto [st, q] = rows[i];
    const bool first_of_stage = i == 0 || rows[i - 1].first != st;
    const std::string text = (first_of_stage ? fmt::format("stage {} ", st) : std::string()) +
                             t.streams[static_cast<std::size_t>(q)];
    if (row_h >= 9 || (first_of_stage && (st % std::max(1, static_cast<int>(12 / row_h)) == 0)))
      chart.text(x, row_y[i] + row_h * 0.8, row_h >= 9 ? text : fmt::format("stage {}", st), "row-label", "end");
  }
  chart.close_group();
}

// The timeline's legend: each task kind's colour, the summary and bubble fills where the chart has
// them, the critical path's edge.
std::vector<std::pair<std::string, std::string>> timeline_legend(const core::Timeline& t, svg::Colours& colours,
                                                                 const std::string& hatch) {
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& k : t.kinds) legend.emplace_back(k, std::string(colours.of(k)));
  auto any = [&](auto pred) { return std::any_of(t.spans.begin(), t.spans.end(), pred); };
  if (any([](const core::TimelineSpan& s) { return s.kind == "summary"; }))
    legend.emplace_back("several tasks (summary)", "#c8c8c8");
  if (any([](const core::TimelineSpan& s) { return s.kind == "bubble"; }))
    legend.emplace_back("bubble", "url(#" + hatch + ")");
  legend.emplace_back("critical path (black edge)", "#111111");
  return legend;
}

// The critical path, also as a bar along the top of its rows: thin tasks stay visible. `place`
// gives a span's pixels in the chart's window (false: outside it). One path for all the bars.
template <class Place>
void critical_marks(svg::Svg& chart, const core::Timeline& t, const std::map<std::pair<int, int>, int>& row_of,
                    const std::vector<double>& row_y, const Place& place) {
  std::vector<std::array<double, 4>> bars;
  for (const auto& s : t.spans) {
    if (!s.critical) continue;
    const auto q = std::find(t.streams.begin(), t.streams.end(), s.stream) - t.streams.begin();
    const auto it = row_of.find({s.stage, static_cast<int>(q)});
    if (it == row_of.end()) continue;
    double x0 = 0, w = 0;
    if (!place(s, x0, w)) continue;
    bars.push_back({x0, row_y[static_cast<std::size_t>(it->second)], std::max(0.6, w), 2});
  }
  chart.open_group("critical-path");
  chart.rects(bars, "critical-mark");
  chart.close_group();
}

// The spans of `t` that overlap [from, to], on a time axis of that window (clipped at its ends).
svg::Svg timeline_chart(const core::Timeline& t, std::string_view id, std::string_view title, double from,
                        double to) {
  const TimelineRows layout = timeline_rows(t);
  const std::map<std::pair<int, int>, int>& row_of = layout.row_of;
  const std::vector<std::pair<int, int>>& rows = layout.rows;
  const int n = static_cast<int>(rows.size());
  // 14 px rows, thinner for deep pipelines so the chart stays about a screen high
  const double row_h = std::clamp(1100.0 / std::max(1, n), 5.0, 14.0);
  const double stage_gap = row_h >= 10 ? 4 : 2;
  svg::Frame f;
  f.left = 120;
  f.top = 36;
  f.bottom = 100;  // ticks, axis label, two legend rows
  std::vector<double> row_y(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    row_y[static_cast<std::size_t>(i)] = f.top + i * row_h + rows[static_cast<std::size_t>(i)].first * stage_gap;
  // the x axis sits under the last row
  f.height = (n > 0 ? row_y.back() + row_h : f.top) + f.bottom;
  svg::Svg chart(id, f, title);
  const std::string hatch = std::string(id) + "-hatch";
  chart.hatch(hatch, "#e15759", "#fbe3e3");
  if (!(to > from)) to = from + 1;
  // the axis in s, ms or us, whichever keeps the tick labels short
  const auto axis = html::time_unit(to - from);
  const double k = axis.per_second;  // a variable, not a binding: lambdas below capture it
  const char* unit = axis.name;
  const svg::Scale x{from * k, to * k, f.x0(), f.x1()};
  // a span's pixels, clipped to the window; false when it lies outside
  auto place = [&](const core::TimelineSpan& s, double& x0, double& w) {
    const double a = std::max(from, s.start_s), b = std::min(to, s.start_s + s.dur_s);
    if (b < a || s.start_s > to || s.start_s + s.dur_s < from) return false;
    x0 = x(a * k);
    w = x(b * k) - x0;
    return true;
  };
  chart.x_axis(x,
               fmt::format("time in the step ({}{})", unit, from > 0 || to < t.step_s ? "; this window only" : ""),
               10);

  row_labels(chart, t, rows, row_y, row_h, f.x0() - 6);

  svg::Colours colours(t.kinds);
  chart.open_group("spans");
  for (const auto& s : t.spans) {
    const auto q = std::find(t.streams.begin(), t.streams.end(), s.stream) - t.streams.begin();
    const auto it = row_of.find({s.stage, static_cast<int>(q)});
    if (it == row_of.end()) continue;
    const double y = row_y[static_cast<std::size_t>(it->second)];
    double x0 = 0, w = 0;
    if (!place(s, x0, w)) continue;
    w = std::max(0.4, w);
    const std::string when = fmt::format("{} to {} ({})", report::seconds(s.start_s),
                                         seconds(s.start_s + s.dur_s), report::seconds(s.dur_s));
    if (s.kind == "bubble") {
      chart.rect(x0, y + 1, w, row_h - 2, "span bubble", "url(#" + hatch + ")",
                 fmt::format("stage {} idle: {}", s.stage, when));
    } else if (s.kind == "summary") {
      chart.rect(x0, y + 1, w, row_h - 2, "span summary", {},
                 fmt::format("stage {} {}: {}, {}; busy {:.0f}% of it", s.stage, s.stream, s.label, when,
                             s.dur_s > 0 ? 100 * s.busy_s / s.dur_s : 0.0));
    } else {
      const std::string cls = "span " + kind_class(s.kind) + (s.critical ? " critical" : "");
      chart.rect(x0, y + 1, w, row_h - 2, cls, colours.of(s.kind),
                 fmt::format("stage {} {}: {}, {}{}", s.stage, s.stream, s.label, when,
                             s.critical ? "; on the critical path" : ""));
    }
  }
  chart.close_group();
  critical_marks(chart, t, row_of, row_y, place);

  chart.legend(f.x0(), f.y0() + 62, timeline_legend(t, colours, hatch));
  return chart;
}

svg::Svg memory_chart(const core::Report& r) {
  svg::Frame f;
  f.height = 380;
  f.bottom = 70;
  svg::Svg chart("memory", f, "Memory per GPU of each pipeline stage against capacity");
  const std::vector<std::string> parts{"weights", "gradients", "optimizer", "activations", "other", "cache"};
  svg::Colours colours(parts);
  double top = r.capacity_bytes;
  for (const auto& m : r.stages) top = std::max(top, m.device());
  const auto [lo, hi] = svg::nice_domain(0, 1.05 * top / kGiB, 6);
  const svg::Scale y{lo, hi, f.y0(), f.y1()};
  chart.y_axis(y, "GiB per GPU");
  const std::size_t n = std::max<std::size_t>(1, r.stages.size());
  const double band = (f.x1() - f.x0()) / static_cast<double>(n);
  const double w = std::clamp(band * 0.75, 1.0, 60.0);
  const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(24.0 / band)));
  chart.open_group("bars");
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const auto& m = r.stages[i];
    const double x0 = f.x0() + band * static_cast<double>(i) + (band - w) / 2;
    // the tensors, the CUDA context and NCCL, then what the allocator holds beyond the tensors: device()
    const std::array<double, 6> v{m.weights,     m.gradients, m.optimizer,
                                  m.activations, m.other(),   m.reserved - m.allocated()};
    double acc = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
      const double y0 = y(acc / kGiB), y1 = y((acc + v[k]) / kGiB);
      acc += v[k];
      if (v[k] <= 0) continue;
      chart.rect(x0, y1, w, y0 - y1, "bar seg-" + parts[k], colours.of(parts[k]),
                 fmt::format("stage {} {}: {:.2f} GiB", m.stage, parts[k], v[k] / kGiB));
    }
    const bool over = m.required() > r.capacity_bytes;
    if (over || n <= 32)
      chart.text(x0 + w / 2, y(acc / kGiB) - 4,
                 m.device() < 10 * kGiB ? fmt::format("{:.1f}", m.device() / kGiB)
                                        : fmt::format("{:.0f}", m.device() / kGiB),
                 over ? "bar-label over" : "bar-label", "middle");
    if (i % every == 0) chart.text(x0 + w / 2, f.y0() + 16, std::to_string(m.stage), "tick-label", "middle");
  }
  chart.close_group();
  const double cy = y(r.capacity_bytes / kGiB);
  chart.line(f.x0(), cy, f.x1(), cy, "capacity");
  chart.text(f.x1() - 4, cy - 5, fmt::format("capacity {:.0f} GiB", r.capacity_bytes / kGiB), "capacity-label", "end");
  chart.text((f.x0() + f.x1()) / 2, f.y0() + 34, "pipeline stage", "axis-label", "middle");
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& p : parts) legend.emplace_back(p, std::string(colours.of(p)));
  chart.legend(f.x0(), f.height - 10, legend);
  return chart;
}

svg::Svg shares_chart(const core::Report& r, const std::vector<Share>& shares) {
  svg::Frame f;
  f.left = 210;
  f.right = 90;
  const double bar_h = 22;
  f.height = f.top + bar_h * static_cast<double>(shares.size()) + f.bottom;
  svg::Svg chart("shares", f, "Where the step time goes (the critical path)");
  double top = r.step_s;
  for (const auto& s : shares) top = std::max(top, s.seconds);
  const auto axis = html::time_unit(top);
  const double k = axis.per_second;  // a variable, not a binding: the lambda below captures it
  const char* unit = axis.name;
  const auto [lo, hi] = svg::nice_domain(0, top * k, 8);
  const svg::Scale xk{lo, hi, f.x0(), f.x1()};
  auto x = [&](double seconds) { return xk(seconds * k); };
  chart.x_axis(xk, fmt::format("time per step ({})", unit));
  svg::Colours colours;
  chart.open_group("bars");
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const auto& s = shares[i];
    const double y = f.top + bar_h * static_cast<double>(i);
    chart.text(f.x0() - 8, y + bar_h * 0.65, s.label, "row-label", "end");
    chart.rect(x(0), y + 3, x(std::max(0.0, s.seconds)) - x(0), bar_h - 6, "bar", colours.of(s.label),
               fmt::format("{}: {} ({} of the step)", s.label, report::seconds(s.seconds),
                           html::percent(r.step_s > 0 ? s.seconds / r.step_s : 0)));
    chart.text(x(std::max(0.0, s.seconds)) + 5, y + bar_h * 0.65,
               fmt::format("{} ({})", report::seconds(s.seconds), html::percent(r.step_s > 0 ? s.seconds / r.step_s : 0)),
               "bar-label");
  }
  chart.close_group();
  const double sx = x(r.step_s);
  chart.line(sx, f.y1(), sx, f.y0(), "capacity");
  chart.text(sx - 4, f.y1() - 4, "step " + report::seconds(r.step_s), "capacity-label", "end");
  return chart;
}

}  // namespace

// The answer first: a layout that does not fit, the warnings, the facts and what bounds the step.
void answer_section(Page& page, const core::Report& r) {
  page.section("answer", "The answer");
  // a layout that does not fit is the first thing on the page
  if (r.peak_bytes > r.capacity_bytes)  // (the host's own limit is its warning below)
    page.para(fmt::format("DOES NOT FIT: peak {:.1f} GiB on stage {} of {:.1f} GiB per GPU ({:.1f} GiB over).",
                          r.peak_bytes / kGiB, r.peak_stage, r.capacity_bytes / kGiB,
                          (r.peak_bytes - r.capacity_bytes) / kGiB),
              "alarm");
  for (const auto& w : r.warnings)
    if (r.fits || w.rfind("the layout does not fit", 0) != 0) page.para("Warning: " + w, "warning");
  page.facts("facts", answer(r));
  if (!r.bounded_by.empty()) page.para("Bounded by: " + core::describe(r.bounded_by) + ".");
  page.note("Days and cost: tokens / (global batch x sequence) steps at this step time, GPU-hours over every "
            "GPU, GPU energy from the linear power model between idle and TDP (docs/analytic.md \"Time, "
            "energy and cost to train\"); checkpoints, restarts and evaluation are not counted.");
}

// The simulated step's timeline, and the pipeline's fill enlarged.
void step_section(Page& page, const core::Timeline& t) {
  page.section("step", "The simulated step");
  if (t.spans.empty()) {
    page.note("No timeline: this report was not simulated.");
  } else {
    page.figure(timeline_chart(t, "timeline", "The simulated step, per pipeline stage and stream", 0, t.step_s),
                fmt::format("Every bar is a task of the discrete-event simulation (sim::timeline of the step "
                            "graph): one row per stage and stream; colour by task kind; black edges mark the "
                            "critical path; hatched gaps are pipeline bubbles (idle before the last pipeline "
                            "pass ends at {}; gaps under {} not drawn). Hover a bar for its task.",
                            seconds(t.pipeline_end_s), report::seconds(t.min_bubble_s)));
    if (!t.sampling.empty()) page.note("Sampled: " + t.sampling + ".");
    // The pipeline's fill, enlarged: until the first backward pass of stage 0 ends (1F1B's
    // warm-up and the first micro-batch's round trip), when there is a pipeline and that is
    // under half the step.
    double fill = 0;
    for (const auto& s : t.spans)
      if (s.stage == 0 && (s.kind == "B" || s.kind == "B(input)")) {
        fill = s.start_s + s.dur_s;
        break;
      }
    if (t.stages > 1 && fill > 0 && fill < 0.5 * t.step_s)
      page.figure(timeline_chart(t, "timeline-fill", "The pipeline filling: the step's first moments", 0, 1.05 * fill),
                  fmt::format("The same bars from 0 to {}: until the first backward pass of stage 0 ends.",
                              seconds(1.05 * fill)));
  }
}

std::string evaluate_html(const core::Report& r, const core::Timeline& t, const PageInfo& info) {
  Page page("evaluate", r.scenario.name, info);
  page.raw(
      "<nav><a href=\"#answer\">answer</a><a href=\"#inputs\">inputs</a><a href=\"#step\">timeline</a>"
      "<a href=\"#memory-per-stage\">memory</a><a href=\"#where\">where the time goes</a>"
      "<a href=\"#comm\">communication</a></nav>\n");
  answer_section(page, r);

  page.section("inputs", "Inputs");
  page.raw(inputs_table(r, info));

  step_section(page, t);

  page.section("memory-per-stage", "Memory per stage");
  page.figure(memory_chart(r),
              "Stacked per GPU of each stage from Report.stages (weights, gradients, optimizer states, "
              "activations of the micro-batches in flight; other = embedding activations, logits and "
              "loss, communication buffers, the optimizer step's copies, the CUDA context and NCCL's buffers; "
              "cache = what the caching allocator reserves beyond the tensors), against "
              "Report.capacity_bytes.");

  page.section("where", "Where the step time goes");
  const auto shares = step_shares(r);
  page.figure(shares_chart(r, shares),
              "From Report.critical_path: the simulated step's critical path, each instant given to one cause "
              "(a stage's compute; pipeline fill and drain, the busiest stage idle in its warm-up or cool-down "
              "while another stage computes; a wait for a slower stage; communication by kind; a wait for a DP "
              "all-gather; the optimizer step). These parts add up to the step (docs/simulator.md \"Where the "
              "step goes\").");
  page.raw(totals_table(r));
  page.note("Per-kind totals, each on its own: compute and communication run at the same time on different "
            "streams and stages, so these overlap one another and do not add up to the step.");
  if (!r.compute.layer.empty()) {
    page.raw(operators_table(r));
    page.note("One transformer layer on one GPU for one micro-batch (Report.compute.layer; JSON compute.layer).");
  }

  page.section("comm", "Communication per GPU per step");
  page.raw(comm_table(r));
  page.note("overlap ratio = t_comm / t_compute of the work it may hide behind (below 1 it can hide); "
            "exposed = its time on the critical path.");
  if (const std::string z = core::zero3_verdict(r); !z.empty())
    page.note(fmt::format("ZeRO-3 per unit: all-gather / forward {:.2f}, collectives / backward {:.2f}: {}.",
                          r.zero3_overlap_ratio, r.zero3_backward_ratio, z));
  return page.str();
}

}  // namespace ptdsim::report
