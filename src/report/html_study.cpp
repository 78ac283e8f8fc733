// The study page (docs/report.md "study", docs/study.md "Outputs"): the objective's sensitivity to
// each knob, time against cost with the Pareto front, a heat map over two knobs, and every point.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "html_page.hpp"
#include "ptdsim/report/study.hpp"

namespace ptdsim::report {
namespace {

using html::Page;
using html::Table;

struct Ok {
  std::uint64_t point;
  io::StudySpec::Point at;
  const io::StudyLayout* best;
  double objective;
};

std::string value_of(const io::StudySpec& spec, const io::StudySpec::Point& p, std::size_t knob) {
  return spec.vary[knob].values[p.value[knob]].value;
}

std::string point_text(const io::StudySpec& spec, const io::StudySpec::Point& p) {
  std::string out;
  if (spec.bases.size() > 1) out = "base " + spec.base_names[p.base];
  for (std::size_t k = 0; k < spec.vary.size(); ++k)
    out += (out.empty() ? "" : ", ") + spec.vary[k].key + " " + value_of(spec, p, k);
  return out;
}

// Sensitivity as main effects: for each knob, the objective's mean over the points at each of its
// values (the other knobs averaged out); the bar spans the lowest mean to the highest.
svg::Svg tornado(const io::StudySpec& spec, const std::vector<Ok>& ok) {
  struct Bar {
    std::string key, lo_value, hi_value;
    double lo = 0, hi = 0;
  };
  std::vector<Bar> bars;
  for (std::size_t k = 0; k < spec.vary.size(); ++k) {
    const std::size_t n = spec.vary[k].values.size();
    if (n < 2) continue;
    std::vector<double> sum(n, 0);
    std::vector<std::uint64_t> count(n, 0);
    for (const auto& o : ok) {
      sum[o.at.value[k]] += o.objective;
      ++count[o.at.value[k]];
    }
    Bar b{spec.vary[k].key, "", "", std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    for (std::size_t v = 0; v < n; ++v) {
      if (count[v] == 0) continue;
      const double mean = sum[v] / static_cast<double>(count[v]);
      if (mean < b.lo) b.lo = mean, b.lo_value = spec.vary[k].values[v].value;
      if (mean > b.hi) b.hi = mean, b.hi_value = spec.vary[k].values[v].value;
    }
    if (std::isfinite(b.lo)) bars.push_back(std::move(b));
  }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.hi - a.lo > b.hi - b.lo; });
  svg::Frame f;
  f.left = 260;
  f.right = 40;
  f.height = f.top + f.bottom + 34.0 * static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  svg::Svg chart("tornado", f, "Sensitivity: the objective's mean at each knob's best and worst value");
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& b : bars) lo = std::min(lo, b.lo), hi = std::max(hi, b.hi);
  if (bars.empty()) {
    chart.text(f.x0(), f.y1() + 20, "no knob with two values has a point with a layout", "note");
    return chart;
  }
  const auto [d0, d1] = svg::nice_domain(lo, hi);
  const svg::Scale x{d0, d1, f.x0(), f.x1()};
  chart.x_axis(x, "mean " + study_objective_label(spec.objective));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = f.y1() + 34.0 * static_cast<double>(i) + 6;
    const double a = x(b.lo), w = std::max(x(b.hi) - a, 1.0);
    chart.rect(a, y, w, 22, "bar", svg::palette(0),
               fmt::format("{}: mean {:.4g} at {}, {:.4g} at {}", b.key, b.lo, b.lo_value, b.hi, b.hi_value));
    chart.text(f.x0() - 8, y + 15, b.key, "tick-label", "end");
    chart.text(a - 4, y + 15, b.lo_value, "cell-text", "end");
    chart.text(a + w + 4, y + 15, b.hi_value, "cell-text");
  }
  return chart;
}

// Time against what it costs: days and cost with a budget and a price, else GPU-hours, else the
// step time and the GPU-seconds of one step. The front: no other point is both faster and cheaper.
svg::Svg pareto(const io::StudySpec& spec, const std::vector<Ok>& ok, std::string& axes) {
  bool days = !ok.empty(), cost = !ok.empty(), hours = !ok.empty();
  for (const auto& o : ok) {
    days = days && o.best->days > 0;
    cost = cost && o.best->cost > 0;
    hours = hours && o.best->gpu_hours > 0;
  }
  auto xv = [&](const io::StudyLayout& l) { return days ? l.days : l.step_s; };
  auto yv = [&](const io::StudyLayout& l) {
    const double gpus = static_cast<double>(l.tp) * l.pp * l.dp * l.cp;
    return days && cost ? l.cost : days && hours ? l.gpu_hours : l.step_s * gpus;
  };
  const std::string xl = days ? "days to train" : "step time (s)";
  const std::string yl = days && cost ? "cost to train" : days && hours ? "GPU-hours to train" : "GPU-seconds per step";
  axes = xl + " against " + yl;
  svg::Frame f;
  f.height = 440;
  svg::Svg chart("pareto", f, "Time against cost: every point and the Pareto front");
  if (ok.empty()) {
    chart.text(f.x0(), f.y1() + 20, "no point has a layout", "note");
    return chart;
  }
  double x0 = xv(*ok.front().best), x1 = x0, y0 = yv(*ok.front().best), y1 = y0;
  for (const auto& o : ok) {
    x0 = std::min(x0, xv(*o.best)), x1 = std::max(x1, xv(*o.best));
    y0 = std::min(y0, yv(*o.best)), y1 = std::max(y1, yv(*o.best));
  }
  const auto [a0, a1] = svg::log_domain(std::max(x0, 1e-9), std::max(x1, 1e-9));
  const auto [b0, b1] = svg::log_domain(std::max(y0, 1e-9), std::max(y1, 1e-9));
  const svg::Scale x{a0, a1, f.x0(), f.x1(), true};
  const svg::Scale y{b0, b1, f.y0(), f.y1(), true};
  chart.x_axis(x, xl + " (log scale)");
  chart.y_axis(y, yl + " (log scale)");
  std::vector<const Ok*> order;
  for (const auto& o : ok) order.push_back(&o);
  std::stable_sort(order.begin(), order.end(), [&](const Ok* a, const Ok* b) {
    return xv(*a->best) != xv(*b->best) ? xv(*a->best) < xv(*b->best) : yv(*a->best) < yv(*b->best);
  });
  std::vector<std::pair<double, double>> front;
  double cheapest = std::numeric_limits<double>::infinity();
  for (const Ok* o : order) {
    const bool on_front = yv(*o->best) < cheapest;
    if (on_front) {
      cheapest = yv(*o->best);
      front.emplace_back(x(xv(*o->best)), y(yv(*o->best)));
    }
    chart.circle(x(xv(*o->best)), y(yv(*o->best)), on_front ? 5 : 3.5, on_front ? "point front-point" : "point",
                 on_front ? "#c0392b" : svg::palette(0),
                 fmt::format("point {}: {}; {} {:.4g}, {} {:.4g}", o->point, point_text(spec, o->at), xl, xv(*o->best), yl,
                             yv(*o->best)));
  }
  if (front.size() > 1) chart.polyline(front, "front");
  return chart;
}

// The best objective over the other knobs at each pair of values of two knobs: a's values across,
// b's down.
svg::Svg heat(const io::StudySpec& spec, const std::vector<Ok>& ok, std::size_t a, std::size_t b) {
  const auto& ka = spec.vary[a];
  const auto& kb = spec.vary[b];
  const std::size_t na = ka.values.size(), nb = kb.values.size();
  std::vector<double> best(na * nb, std::numeric_limits<double>::infinity());
  for (const auto& o : ok) {
    double& c = best[o.at.value[b] * na + o.at.value[a]];
    c = std::min(c, o.objective);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : best)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  svg::Frame f;
  f.left = 110;
  f.top = 64;  // the title, then the rows' key above the rows' values
  const double cell_h = std::clamp(360.0 / static_cast<double>(nb), 24.0, 44.0);
  f.bottom = 56;
  f.height = f.top + cell_h * static_cast<double>(nb) + f.bottom;
  svg::Svg chart("heatmap", f, "The best " + study_objective_label(spec.objective) + " over the other knobs");
  const double cell_w = (f.x1() - f.x0()) / static_cast<double>(na);
  for (std::size_t j = 0; j < nb; ++j)
    for (std::size_t i = 0; i < na; ++i) {
      const double v = best[j * na + i];
      const double cx = f.x0() + cell_w * static_cast<double>(i), cy = f.y1() + cell_h * static_cast<double>(j);
      const std::string where = fmt::format("{} {}, {} {}", ka.key, ka.values[i].value, kb.key, kb.values[j].value);
      if (!std::isfinite(v)) {
        chart.rect(cx + 1, cy + 1, cell_w - 2, cell_h - 2, "cell none", {}, where + ": no point has a layout");
        continue;
      }
      // best brightest
      const std::string fill = svg::ramp(hi > lo ? 1 - (v - lo) / (hi - lo) : 1.0);
      chart.rect(cx + 1, cy + 1, cell_w - 2, cell_h - 2, "cell fits", fill, fmt::format("{}: {:.4g}", where, v));
      if (cell_w >= 34)
        chart.text(cx + cell_w / 2, cy + cell_h / 2 + 4, fmt::format("{:.3g}", v),
                   svg::light(fill) ? "cell-text" : "cell-text on-dark", "middle");
    }
  for (std::size_t i = 0; i < na; ++i)
    chart.text(f.x0() + cell_w * (static_cast<double>(i) + 0.5), f.y0() + 16, ka.values[i].value, "tick-label", "middle");
  chart.text((f.x0() + f.x1()) / 2, f.y0() + 36, ka.key, "axis-label", "middle");
  for (std::size_t j = 0; j < nb; ++j)
    chart.text(f.x0() - 8, f.y1() + cell_h * (static_cast<double>(j) + 0.5) + 4, kb.values[j].value, "tick-label", "end");
  chart.text(8, f.y1() - 10, kb.key + " (rows)", "axis-label", "start");
  return chart;
}

}  // namespace

// The answer: the points, how many have a layout, the objective, and the best point's step,
// MFU and layout (`best`: null when none has one).
void answer_section(Page& page, const io::StudySpec& spec, std::size_t points, std::size_t with_layout, const Ok* best) {
  page.section("answer", "The answer");
  std::vector<std::pair<std::string, std::string>> facts{
      {"points", std::to_string(points)},
      {"with a layout", std::to_string(with_layout)},
      {"objective", spec.objective},
  };
  if (best) {
    facts.emplace_back("best step", fmt::format("{:.4g} s", best->best->step_s));
    facts.emplace_back("its MFU", html::percent(best->best->mfu));
    facts.emplace_back("its layout", fmt::format("tp {} pp {} dp {} cp {}", best->best->tp, best->best->pp,
                                                 best->best->dp, best->best->cp));
  }
  page.facts("facts", facts);
  if (best)
    page.para(fmt::format("The best point by the objective is point {}: {}; its layout tp {} pp {} dp {} cp {} vpp {} "
                          "micro-batch {} ZeRO {}, bounded by {}.",
                          best->point, point_text(spec, best->at), best->best->tp, best->best->pp, best->best->dp,
                          best->best->cp, best->best->vpp, best->best->micro_batch, best->best->zero,
                          best->best->bounded_by));
}

// Every point as a row: its knob values and its best layout, or why it has none.
void points_section(Page& page, const io::StudySpec& spec, const std::vector<io::StudyRecord>& records) {
  page.section("points", "Every point");
  std::vector<std::string> header{"point"};
  if (spec.bases.size() > 1) header.push_back("base");
  for (const auto& k : spec.vary) header.push_back(k.key);
  for (const char* h : {"tp", "pp", "dp", "cp", "vpp", "mb", "zero", "step (s)", "MFU", "days", "cost", "peak GiB",
                        "bounded by / why not"})
    header.push_back(h);
  Table table("points-table", header);
  for (const auto& r : records) {
    const auto p = spec.point(r.point);
    std::vector<std::string> row{std::to_string(r.point)};
    if (spec.bases.size() > 1) row.push_back(spec.base_names[p.base]);
    for (std::size_t k = 0; k < spec.vary.size(); ++k) row.push_back(value_of(spec, p, k));
    if (r.layouts.empty()) {
      for (int i = 0; i < 11; ++i) row.push_back("");
      row.push_back(r.failed);
      table.row(row, "failed");
      continue;
    }
    const auto& l = r.layouts.front();
    for (int v : {l.tp, l.pp, l.dp, l.cp, l.vpp, l.micro_batch, l.zero}) row.push_back(std::to_string(v));
    row.push_back(fmt::format("{:.4g}", l.step_s));
    row.push_back(html::percent(l.mfu));
    row.push_back(l.days > 0 ? fmt::format("{:.4g}", l.days) : "-");
    row.push_back(l.cost > 0 ? fmt::format("{:.4g}", l.cost) : "-");
    row.push_back(fmt::format("{:.1f}", l.peak_gib));
    row.push_back(l.bounded_by);
    table.row(row);
  }
  page.raw(table.str());
}

std::string study_html(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records, const PageInfo& info) {
  Page page("study", spec.file, info);
  std::vector<Ok> ok;
  for (const auto& r : records)
    if (!r.layouts.empty())
      ok.push_back(Ok{r.point, spec.point(r.point), &r.layouts.front(), study_objective(spec.objective, r.layouts.front())});
  const Ok* best = nullptr;
  for (const auto& o : ok)
    if (!best || o.objective < best->objective) best = &o;

  answer_section(page, spec, records.size(), ok.size(), best);

  page.section("sensitivity", "Sensitivity to each knob");
  page.figure(tornado(spec, ok),
              "For each knob, the objective averaged over every point with a layout at each of its values (the other "
              "knobs averaged out); the bar runs from the best value's mean to the worst's, widest first.");
  page.section("pareto", "Time against cost");
  std::string axes;
  const auto chart = pareto(spec, ok, axes);
  page.figure(chart, "Every point's best layout, " + axes + "; larger dots: the Pareto front, where no other point is "
                         "both faster and cheaper.");
  std::vector<std::size_t> pair = spec.heatmap;
  if (pair.size() != 2) {
    pair.clear();
    for (std::size_t k = 0; k < spec.vary.size() && pair.size() < 2; ++k)
      if (spec.vary[k].values.size() > 1) pair.push_back(k);
  }
  if (pair.size() == 2) {
    page.section("heatmap", "Two knobs");
    page.figure(heat(spec, ok, pair[0], pair[1]),
                "Per pair of values of two knobs (the study's heatmap, else the first two that vary), the best "
                "objective over the other knobs' values; brighter is better, blank: no point there has a layout.");
  }

  points_section(page, spec, records);
  return page.str();
}

}  // namespace ptdsim::report
