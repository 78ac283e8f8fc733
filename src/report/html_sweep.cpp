// The sweep page: the best step time per (tp, pp), the Pareto front of step time against peak
// memory over every candidate, the ranked table (docs/report.md "sweep"). Every candidate reaches
// it through SweepCollector, which keeps a bounded summary, never the rows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "format.hpp"
#include "html_page.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"

namespace ptdsim::report {

// ---- the collector -----------------------------------------------------------------------------

namespace {

// The grid bin of a value, log10 bins from 10^log0; outside values land in the edge bins.
int bin(double value, double log0, int bins) {
  const double l = value > 0 ? std::log10(value) : log0;
  const double b = std::floor((l - log0) * SweepCollector::kBinsPerDecade);
  return static_cast<int>(std::clamp(b, 0.0, static_cast<double>(bins - 1)));
}

}  // namespace

SweepCollector::SweepCollector()
    : fit_(static_cast<std::size_t>(kStepBins) * kPeakBins, 0), over_(fit_.size(), 0) {}

void SweepCollector::add(const planner::Row& row) {
  const planner::Candidate& c = row.candidate;
  const core::Report& r = row.report;
  const bool fits = std::string_view(row.status) != "memory" && r.fits;
  const bool simulated = r.engine == core::EngineKind::simulation;
  if (rows_ == 0) {
    min_step_ = max_step_ = r.step_s;
    min_peak_ = max_peak_ = r.peak_bytes;
  }
  ++rows_;
  min_step_ = std::min(min_step_, r.step_s);
  max_step_ = std::max(max_step_, r.step_s);
  min_peak_ = std::min(min_peak_, r.peak_bytes);
  max_peak_ = std::max(max_peak_, r.peak_bytes);
  const int sb = bin(r.step_s, kStepLog0, kStepBins);
  const int pb = bin(r.peak_bytes / core::kGiB, kPeakLog0, kPeakBins);
  auto& grid = fits ? fit_ : over_;
  auto& n = grid[static_cast<std::size_t>(pb) * kStepBins + sb];
  if (n < std::numeric_limits<std::uint32_t>::max()) ++n;

  Cell& cell = cells_[{c.tp, c.pp}];
  if (cell.rows == 0 || r.peak_bytes < cell.min_peak_bytes) cell.min_peak_bytes = r.peak_bytes;
  ++cell.rows;
  if (!fits) return;
  if (cell.fitting == 0 || r.step_s < cell.best_step_s ||
      (r.step_s == cell.best_step_s && r.peak_bytes < cell.best_peak_bytes)) {
    cell.best_step_s = r.step_s;
    cell.best_peak_bytes = r.peak_bytes;
    cell.best_simulated = simulated;
    cell.best = c;
  }
  ++cell.fitting;

  // The front keeps, by ascending peak, strictly falling step times. A point is dominated when a
  // kept one has no more memory and no more time; the first such row (lowest index) stays.
  const double peak = r.peak_bytes, step = r.step_s;
  auto after = front_.upper_bound(peak);
  if (after != front_.begin() && std::prev(after)->second.step_s <= step) return;
  for (auto it = front_.lower_bound(peak); it != front_.end() && it->second.step_s >= step;)
    it = front_.erase(it);
  front_.emplace(peak, Point{peak, step, simulated, c});
}

std::vector<SweepCollector::Point> SweepCollector::front() const {
  std::vector<Point> out;
  out.reserve(front_.size());
  for (const auto& [peak, p] : front_) out.push_back(p);
  return out;
}

// ---- the page ------------------------------------------------------------------------------------

namespace {

using core::kGiB;
using html::Page;
using html::Table;

std::string step_text(double s) { return fmt::format("{:.3g} s", s); }

std::string cell_tip(int tp, int pp, const SweepCollector::Cell& c) {
  std::string tip = fmt::format("tp {}, pp {}: {} layouts pass the checks, {} fit", tp, pp, c.rows, c.fitting);
  if (c.fitting > 0)
    tip += fmt::format("; best step {} ({}), peak {:.1f} GiB: {}", step_text(c.best_step_s),
                       c.best_simulated ? "simulated" : "analytic estimate", c.best_peak_bytes / kGiB,
                       planner::label(c.best));
  else
    tip += fmt::format("; the smallest needs {:.1f} GiB", c.min_peak_bytes / kGiB);
  return tip;
}

// The heatmap's axes: tp across under the cells, pp down beside them.
void heatmap_axes(svg::Svg& chart, const svg::Frame& f, const std::vector<int>& tp, const std::vector<int>& pp,
                  double cell_w, double cell_h) {
  chart.open_group("axis x");
  for (std::size_t i = 0; i < tp.size(); ++i)
    chart.text(f.x0() + cell_w * (static_cast<double>(i) + 0.5), f.y0() + 16, std::to_string(tp[i]), "tick-label",
               "middle");
  chart.text((f.x0() + f.x1()) / 2, f.y0() + 36, "tensor-parallel degree tp", "axis-label", "middle");
  chart.close_group();
  chart.open_group("axis y");
  for (std::size_t j = 0; j < pp.size(); ++j)
    chart.text(f.x0() - 8, f.y1() + cell_h * (static_cast<double>(j) + 0.5) + 4, std::to_string(pp[j]), "tick-label",
               "end");
  chart.text(18, (f.y0() + f.y1()) / 2, "pipeline-parallel degree pp", "axis-label", "middle", -90);
  chart.close_group();
}

// The colour bar beside the heatmap: step time on a log scale from `lo` to `hi`, fastest at the
// top, in the cells' shades.
template <class Shade>
void colour_bar(svg::Svg& chart, const svg::Frame& f, double lo, double hi, const Shade& shade) {
  chart.open_group("colour-bar");
  const double bx = f.x1() + 24, bw = 16, by0 = f.y1(), by1 = f.y0();
  const svg::Scale s{lo, hi > lo ? hi : lo * 1.01, by0, by1, true};
  const int steps = 24;
  for (int k = 0; k < steps; ++k) {
    const double a = by0 + (by1 - by0) * k / steps, b = by0 + (by1 - by0) * (k + 1) / steps;
    const double v = std::exp(std::log(s.d0) + (std::log(s.d1) - std::log(s.d0)) * (k + 0.5) / steps);
    chart.rect(bx, a, bw, b - a + 0.5, "ramp", shade(v));
  }
  const std::vector<double> ticks = s.ticks(5);
  for (double v : ticks) {
    chart.line(bx + bw, s(v), bx + bw + 4, s(v), "tick");
    chart.text(bx + bw + 7, s(v) + 4, svg::tick_label(v), "tick-label");
  }
  chart.text(bx + bw + 40, (by0 + by1) / 2, "best step time (s)", "axis-label", "middle", 90);
  chart.close_group();
}

svg::Svg heatmap(const planner::SweepResult& result, const SweepCollector& rows) {
  std::set<int> tps, pps;
  for (const auto& [key, cell] : rows.cells()) {
    tps.insert(key.first);
    pps.insert(key.second);
  }
  const std::vector<int> tp(tps.begin(), tps.end()), pp(pps.begin(), pps.end());
  svg::Frame f;
  f.left = 70;
  f.right = 130;  // the colour bar
  f.top = 40;
  const double cell_h = std::clamp(360.0 / std::max<std::size_t>(1, pp.size()), 20.0, 44.0);
  f.bottom = 56;
  f.height = f.top + cell_h * static_cast<double>(pp.size()) + f.bottom;
  svg::Svg chart("heatmap", f, "Best step time per tensor- and pipeline-parallel degree");
  chart.hatch("heatmap-hatch", "#c0392b", "#f6dcd9");
  const double cell_w = (f.x1() - f.x0()) / static_cast<double>(std::max<std::size_t>(1, tp.size()));

  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& [key, c] : rows.cells())
    if (c.fitting > 0) {
      lo = any ? std::min(lo, c.best_step_s) : c.best_step_s;
      hi = any ? std::max(hi, c.best_step_s) : c.best_step_s;
      any = true;
    }
  // fastest brightest: t = 1 at the best cell, 0 at the slowest, on a log scale of time
  auto shade = [&](double s) {
    const double t = hi > lo ? 1 - std::log(s / lo) / std::log(hi / lo) : 1.0;
    return svg::ramp(t);
  };
  const planner::Candidate* best = result.results.empty() ? nullptr : &result.results.front().candidate;
  const planner::Candidate* mine =
      result.scenario && result.scenario->ranked ? &result.scenario->candidate : nullptr;

  chart.open_group("cells");
  for (std::size_t j = 0; j < pp.size(); ++j)
    for (std::size_t i = 0; i < tp.size(); ++i) {
      const double x = f.x0() + cell_w * static_cast<double>(i), y = f.y1() + cell_h * static_cast<double>(j);
      const auto it = rows.cells().find({tp[i], pp[j]});
      if (it == rows.cells().end()) {
        chart.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "cell none", {},
                   fmt::format("tp {}, pp {}: no layout passes the checks", tp[i], pp[j]));
        continue;
      }
      const auto& c = it->second;
      std::string cls = c.fitting > 0 ? "cell fits" : "cell oom";
      if (best && best->tp == tp[i] && best->pp == pp[j]) cls += " best";
      if (mine && mine->tp == tp[i] && mine->pp == pp[j]) cls += " mine";
      const std::string fill = c.fitting > 0 ? shade(c.best_step_s) : "url(#heatmap-hatch)";
      chart.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, cls, fill, cell_tip(tp[i], pp[j], c));
      const std::string text = c.fitting == 0     ? std::string("no fit")
                               : c.best_simulated ? fmt::format("{:.3g}", c.best_step_s)
                                                  : fmt::format("~{:.3g}", c.best_step_s);
      const bool dark_text = c.fitting == 0 || svg::light(fill);
      if (cell_w >= 34)
        chart.text(x + cell_w / 2, y + cell_h / 2 + 4, text, dark_text ? "cell-text" : "cell-text on-dark", "middle");
    }
  chart.close_group();
  heatmap_axes(chart, f, tp, pp, cell_w, cell_h);
  if (any) colour_bar(chart, f, lo, hi, shade);
  return chart;
}

svg::Svg pareto(const planner::SweepResult& result, const SweepCollector& rows, double capacity_bytes) {
  svg::Frame f;
  f.height = 480;
  f.bottom = 94;  // ticks, axis label, two legend rows
  svg::Svg chart("pareto", f, "Step time against peak memory: every candidate and the Pareto front");
  const auto [x0, x1] = svg::log_domain(std::max(1e-3, rows.min_peak_bytes() / kGiB),
                                        std::max({1e-3, rows.max_peak_bytes() / kGiB, 1.05 * capacity_bytes / kGiB}));
  const auto [y0, y1] = svg::log_domain(std::max(1e-6, rows.min_step_s()), std::max(1e-6, rows.max_step_s()));
  const svg::Scale x{x0, x1, f.x0(), f.x1(), true};
  const svg::Scale y{y0, y1, f.y0(), f.y1(), true};
  chart.x_axis(x, "peak memory per GPU (GiB, log scale)");
  chart.y_axis(y, "step time (s, log scale)");

  // the cloud: one rectangle per occupied grid bin, darker for more candidates
  chart.open_group("cloud");
  for (bool fits : {false, true}) {
    const auto& grid = rows.cloud(fits);
    const std::uint32_t most = *std::max_element(grid.begin(), grid.end());
    if (most == 0) continue;
    const double d = 1.0 / SweepCollector::kBinsPerDecade;
    for (int pb = 0; pb < SweepCollector::kPeakBins; ++pb)
      for (int sb = 0; sb < SweepCollector::kStepBins; ++sb) {
        const std::uint32_t n = grid[static_cast<std::size_t>(pb) * SweepCollector::kStepBins + sb];
        if (n == 0) continue;
        const double p0 = std::pow(10.0, SweepCollector::kPeakLog0 + pb * d), p1 = p0 * std::pow(10.0, d);
        const double s0 = std::pow(10.0, SweepCollector::kStepLog0 + sb * d), s1 = s0 * std::pow(10.0, d);
        const double a = std::clamp(x(p0), f.x0(), f.x1()), b = std::clamp(x(p1), f.x0(), f.x1());
        const double c = std::clamp(y(s1), f.y1(), f.y0()), e = std::clamp(y(s0), f.y1(), f.y0());
        const double level = 0.25 + 0.75 * std::log1p(n) / std::log1p(most);
        const std::string colour = fits ? fmt::format("rgba(78,121,167,{:.2f})", level)
                                        : fmt::format("rgba(225,87,89,{:.2f})", 0.6 * level);
        chart.rect(a, c, b - a, e - c, fits ? "bin fits" : "bin oom", colour);
      }
  }
  chart.close_group();
  const double cx = x(capacity_bytes / kGiB);
  chart.line(cx, f.y1(), cx, f.y0(), "capacity");
  chart.text(cx + 4, f.y1() + 12, fmt::format("capacity {:.0f} GiB", capacity_bytes / kGiB), "capacity-label");

  const auto front = rows.front();
  if (!front.empty()) {
    std::vector<std::pair<double, double>> stairs;
    for (std::size_t i = 0; i < front.size(); ++i) {
      if (i > 0) stairs.emplace_back(x(front[i].peak_bytes / kGiB), y(front[i - 1].step_s));
      stairs.emplace_back(x(front[i].peak_bytes / kGiB), y(front[i].step_s));
    }
    chart.polyline(stairs, "front");
    chart.open_group("front-points");
    for (const auto& p : front)
      chart.circle(x(p.peak_bytes / kGiB), y(p.step_s), 3.5,
                   p.simulated ? "front-point simulated" : "front-point analytic", {},
                   fmt::format("{}: step {}, peak {:.1f} GiB ({})", planner::label(p.candidate), step_text(p.step_s),
                               p.peak_bytes / kGiB, p.simulated ? "simulated" : "analytic estimate"));
    chart.close_group();
  }
  chart.open_group("ranked-points");
  for (const auto& r : result.results) {
    chart.circle(x(r.report.peak_bytes / kGiB), y(r.report.step_s), 3, "ranked", {},
                 fmt::format("#{}{} {}: step {}, peak {:.1f} GiB", r.rank, r.near_tie_of >= 0 ? " (near-tie)" : "",
                             planner::label(r.candidate),
                             step_text(r.report.step_s), r.report.peak_bytes / kGiB));
  }
  chart.close_group();
  if (result.scenario && result.scenario->ranked) {
    const auto& sr = *result.scenario;
    chart.circle(x(sr.report.peak_bytes / kGiB), y(sr.report.step_s), 7, "scenario-mark", {},
                 fmt::format("the scenario's layout {}: step {}, peak {:.1f} GiB", planner::label(sr.candidate),
                             step_text(sr.report.step_s), sr.report.peak_bytes / kGiB));
  }
  chart.legend(f.x0(), f.y0() + 56,
               {{"candidates that fit (darker: more)", "#4e79a7"},
                {"candidates that do not fit", "#e15759"},
                {"Pareto front (filled: simulated, hollow: analytic)", "#c0392b"},
                {"ranked top K", "#2a5d9f"},
                {"the scenario's layout (ring)", "#111111"}});
  return chart;
}

std::string ranked_table(const core::Scenario& base, const planner::SweepResult& result, std::string_view objective) {
  const bool moe = base.model.moe.has_value();
  std::vector<std::string> head{"rank", "tp", "pp", "dp", "cp"};
  if (moe) head.push_back("ep");
  for (const char* h : {"vpp", "mb", "zero", "recompute", "sp", "schedule", "step (s)", "MFU", "tokens/s", "peak GiB",
                        "free GiB"})
    head.emplace_back(h);
  head.emplace_back(objective == "memory" ? "uses more than #1 for" : "slower than #1 because");
  std::vector<bool> numeric(head.size(), true);
  for (const char* text : {"recompute", "sp", "schedule"})
    numeric[static_cast<std::size_t>(std::find(head.begin(), head.end(), text) - head.begin())] = false;
  numeric.back() = false;
  Table tab("ranked", head, numeric);
  for (const auto& x : result.results) {
    const auto& c = x.candidate;
    const auto& r = x.report;
    const int rank = x.rank;
    // a near-tie (planner/near_ties.hpp) follows its row, with its rank
    std::vector<std::string> cells{x.near_tie_of >= 0 ? fmt::format("{} (tie)", rank) : std::to_string(rank),
                                   std::to_string(c.tp), std::to_string(c.pp),
                                   std::to_string(c.dp), std::to_string(c.cp)};
    if (moe) cells.push_back(std::to_string(c.ep));
    for (auto&& v : {std::to_string(c.vpp), std::to_string(c.micro_batch), std::to_string(c.zero),
                     std::string(core::name(c.recompute)), std::string(c.sequence_parallel ? "on" : "off"),
                     std::string(core::name(c.schedule)), fmt::format("{:.3f}", r.step_s), html::percent(r.mfu),
                     fmt::format("{:.0f}", r.tokens_per_s), fmt::format("{:.1f}", r.peak_bytes / kGiB),
                     fmt::format("{:.1f}", (r.capacity_bytes - r.peak_bytes) / kGiB)})
      cells.push_back(v);
    const bool first = &x == &result.results.front();
    cells.push_back(first ? "(best)" : x.slower_because.empty() ? "tie" : x.slower_because);
    tab.row(cells, first ? "best" : "");
  }
  return tab.str();
}

std::string scenario_words(const planner::SweepResult& r) {
  if (!r.scenario) return "The scenario's own layout was not ranked (--no-scenario-rank).";
  const auto& sr = *r.scenario;
  if (!sr.ranked) return "The scenario's own layout is not ranked: " + sr.why_not + ".";
  std::string rank = sr.rank_is_lower_bound ? fmt::format("rank {} to {}", sr.rank, sr.rank + sr.unresolved)
                                            : fmt::format("rank {}", sr.rank);
  std::string out = fmt::format("The scenario's own layout, {}: {} of {} feasible, step {:.3f} s", planner::label(sr.candidate),
                                rank, r.feasible, sr.report.step_s);
  if (!r.results.empty() && r.results.front().report.step_s > 0)
    out += fmt::format(" ({} vs #1)", html::signed_percent(sr.report.step_s / r.results.front().report.step_s - 1));
  if (!sr.slower_because.empty()) out += ": " + sr.slower_because;
  return out + ".";
}

}  // namespace

std::string sweep_html(const core::Scenario& base, const planner::SweepResult& result, const SweepCollector& rows,
                       std::string_view objective, const PageInfo& info) {
  Page page("sweep", fmt::format("{} on {} GPUs", base.model.name, result.gpus), info);
  page.raw(
      "<nav><a href=\"#answer\">answer</a><a href=\"#tp-pp\">tp x pp</a><a href=\"#front\">time vs memory</a>"
      "<a href=\"#ranking\">ranking</a><a href=\"#counts\">counts</a></nav>\n");
  page.section("answer", "The answer");
  std::vector<std::pair<std::string, std::string>> facts;
  if (!result.results.empty()) {
    const auto& b = result.results.front();
    facts.emplace_back("best layout (objective " + std::string(objective) + ")", planner::label(b.candidate));
    facts.emplace_back("its step time", fmt::format("{:.3f} s", b.report.step_s));
    facts.emplace_back("its MFU", html::percent(b.report.mfu));
    facts.emplace_back("its peak memory", fmt::format("{:.1f} of {:.1f} GiB", b.report.peak_bytes / kGiB,
                                                      b.report.capacity_bytes / kGiB));
  } else {
    facts.emplace_back("best layout", "none fits");
  }
  facts.emplace_back("candidates", fmt::format("{} ({} feasible)", result.evaluated, result.feasible));
  facts.emplace_back("simulated / pruned", fmt::format("{} / {}", result.simulated, result.pruned));
  page.facts("facts", facts);
  page.para(fmt::format("{} on {} x {}, global batch {}, sequence {}.", base.model.name, result.gpus,
                        base.hardware.gpu.name.empty() ? base.hardware.name : base.hardware.gpu.name,
                        base.training.global_batch, base.training.seq_len));
  page.para(scenario_words(result));
  if (!result.results.empty() && !result.results.front().report.bounded_by.empty())
    page.para("The best is bounded by " + core::describe(result.results.front().report.bounded_by) + ".");
  // its groups against the topology (planner/tiers.hpp): the same words as the text report
  for (const auto& line : result.tier_notes) page.para("Against the topology: " + line + ".");

  page.section("tp-pp", "Best step time per (tp, pp)");
  if (rows.cells().empty()) {
    page.note("No candidate passed the checks.");
  } else {
    page.figure(heatmap(result, rows),
                fmt::format("Each cell: the fastest layout that fits among the {} candidates that passed the "
                            "checks (every other dimension free). Step times are the scheduler's for the "
                            "simulated candidates and the analytic engine's (marked ~) for those the bound "
                            "pruned. Hatched: none fits; grey: none passes the checks. Black edge: the best "
                            "layout; dashed red edge: the scenario's. Hover a cell for its best layout.",
                            rows.rows()));
  }
  page.section("front", "Step time against peak memory");
  if (rows.rows() > 0)
    page.figure(pareto(result, rows, base.hardware.gpu.memory_bytes),
                "Every candidate that passed the checks, counted on a grid (blue: fits, red: does not), the "
                "Pareto front of the fitting ones (no other layout is both faster and smaller), the ranked "
                "top K and the scenario's layout. Step times as in the heat map.");
  page.section("ranking", "Ranked layouts");
  if (result.results.empty() && result.evaluated == 0) page.note("No candidate: " + result.no_candidate + ".");
  else if (result.results.empty()) page.note("No layout fits: see the counts below.");
  else page.raw(ranked_table(base, result, objective));

  page.section("counts", "Counts");
  Table counts("counts-table", {"candidates", "count"}, {false, true});
  counts.row({"enumerated", std::to_string(result.evaluated)});
  counts.row({"feasible", std::to_string(result.feasible)});
  counts.row({"simulated", std::to_string(result.simulated)});
  counts.row({"pruned (cannot reach the top K)", std::to_string(result.pruned)});
  for (const auto& [reason, n] : result.rejected) counts.row({"rejected: " + reason, std::to_string(n)});
  page.raw(counts.str());
  // which rule rejected what: the first candidate of each of core::check's reasons
  for (const auto& [reason, p] : result.rejected_example)
    page.note("First rejected for " + reason + ": " + core::describe(p) + ".");
  return page.str();
}

}  // namespace ptdsim::report
