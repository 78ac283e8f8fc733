// The validate page: predicted against measured step time, the error per source group and per
// model size, every record and the records not modelled (docs/report.md "validate").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "html_page.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::report {
namespace {

using html::Page;
using html::Table;

// The size buckets of the issue: below 10 B parameters, 10 to 100 B, above 100 B.
std::string size_bucket(double params) {
  if (params < 10e9) return "< 10 B";
  if (params <= 100e9) return "10-100 B";
  return "> 100 B";
}

// Each record's parameter count (analytic::total_params of its model), by record name; records
// without a scenario have none.
std::map<std::string, double> params_by_name(const std::vector<io::Record>& records) {
  std::map<std::string, double> out;
  for (const auto& r : records)
    if (r.scenario) out.emplace(r.name, analytic::total_params(r.scenario->model));
  return out;
}

std::string num(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}
// Long source groups (a README's full title) cut for tables and legends; the records keep them whole.
std::string shorten(const std::string& text, std::size_t n = 40) {
  return text.size() <= n ? text : text.substr(0, n - 3) + "...";
}
std::string err(const validation::Quantity& q) { return q.complete() ? html::signed_percent(q.error()) : ""; }

// The scatter's marker per split: circles for fit records, squares for holdout ones.
void marker(svg::Svg& chart, double x, double y, bool fit, std::string_view colour, const std::string& tip) {
  if (fit) chart.circle(x, y, 5, "point split-fit", colour, tip);
  else chart.rect(x - 4.5, y - 4.5, 9, 9, "point split-holdout", colour, tip);
}

svg::Svg scatter(const validation::Summary& s, svg::Colours& colours) {
  svg::Frame f;
  f.width = 1000;
  f.height = 640;
  f.left = 80;
  f.right = 300;  // the legend
  f.bottom = 56;
  svg::Svg chart("scatter", f, "Predicted against measured step time");
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& r : s.records)
    if (r.not_modelled.empty() && r.step_s.complete() && *r.step_s.predicted > 0 && *r.step_s.measured > 0) {
      for (double v : {*r.step_s.predicted, *r.step_s.measured}) {
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
      }
    }
  if (!any) lo = 1, hi = 10;
  // one domain for both axes, so the diagonal is the diagonal and the band's edges are parallel
  const auto [d0, d1] = svg::log_domain(lo / 1.15, hi * 1.15);
  const svg::Scale x{d0, d1, f.x0(), f.x1(), true};
  const svg::Scale y{d0, d1, f.y0(), f.y1(), true};
  chart.x_axis(x, "measured step time (s, log scale)");
  chart.y_axis(y, "predicted step time (s, log scale)");
  // |error| <= 10%: between y = 0.9x and y = 1.1x, clipped to the square domain
  chart.polygon({{x(d0 / 0.9), y(d0)},
                 {x(d1), y(0.9 * d1)},
                 {x(d1), y(d1)},
                 {x(d1 / 1.1), y(d1)},
                 {x(d0), y(1.1 * d0)},
                 {x(d0), y(d0)}},
                "band");
  chart.line(x(d0), y(d0), x(d1), y(d1), "identity");
  const double mid = std::sqrt(d0 * d1);  // label the band's edges half way along
  chart.text(x(mid) - 6, y(1.1 * mid) - 4, "+10%", "tick-label", "end");
  chart.text(x(mid) + 6, y(0.9 * mid) + 12, "-10%", "tick-label");
  chart.open_group("points");
  for (const auto& r : s.records) {
    if (!r.not_modelled.empty() || !r.step_s.complete()) continue;
    const double m = *r.step_s.measured, p = *r.step_s.predicted;
    if (!(m > 0) || !(p > 0)) continue;
    const std::string group = validation::source_group(r.source);
    marker(chart, x(m), y(p), r.split == "fit", colours.of(group),
           fmt::format("{} ({}, {}): predicted {:.3g} s, measured {:.3g} s ({}), error {}", r.name, group, r.split, p,
                       m, r.step_from, html::signed_percent(r.step_s.error())));
  }
  chart.close_group();
  // the legend: colours by source group, then the two markers
  chart.open_group("legend");
  double ly = f.y1() + 10;
  const double lx = f.x1() + 24;
  for (const auto& g : colours.categories()) {
    chart.rect(lx, ly - 9, 10, 10, "swatch", colours.of(g));
    chart.text(lx + 16, ly, shorten(g), "legend-label");
    ly += 17;
  }
  ly += 8;
  marker(chart, lx + 5, ly - 4, true, "#888888", "");
  chart.text(lx + 16, ly, "fit split (constants fitted on it)", "legend-label");
  ly += 17;
  marker(chart, lx + 5, ly - 4, false, "#888888", "");
  chart.text(lx + 16, ly, "holdout split", "legend-label");
  ly += 17;
  chart.rect(lx, ly - 9, 10, 10, "band");
  chart.text(lx + 16, ly, "within 10% of measured", "legend-label");
  chart.close_group();
  return chart;
}

// Horizontal bars of step-time MAPE, one per group, with a 10% reference line.
svg::Svg error_bars(std::string_view id, std::string_view title,
                    const std::vector<std::pair<std::string, validation::Error>>& groups, svg::Colours* colours) {
  svg::Frame f;
  f.left = 300;
  f.right = 150;
  const double bar_h = 22;
  f.height = f.top + bar_h * static_cast<double>(std::max<std::size_t>(1, groups.size())) + f.bottom;
  svg::Svg chart(id, f, title);
  double top = 0.1;
  for (const auto& [g, e] : groups) top = std::max(top, e.mape);
  const auto [lo, hi] = svg::nice_domain(0, 100 * top * 1.05, 6);
  const svg::Scale x{lo, hi, f.x0(), f.x1()};
  chart.x_axis(x, "mean absolute error of the step time (%)");
  chart.open_group("bars");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& [g, e] = groups[i];
    const double y = f.top + bar_h * static_cast<double>(i);
    chart.text(f.x0() - 8, y + bar_h * 0.65, shorten(g, 46), "row-label", "end");
    chart.rect(x(0), y + 3, x(100 * e.mape) - x(0), bar_h - 6, "bar", colours ? colours->of(g) : "#4e79a7",
               fmt::format("{}: MAPE {:.1f}% over {} records; worst {} ({})", g, 100 * e.mape, e.count, e.worst,
                           html::signed_percent(e.worst_error)));
    chart.text(x(100 * e.mape) + 5, y + bar_h * 0.65, fmt::format("{:.1f}% (n = {})", 100 * e.mape, e.count),
               "bar-label");
  }
  chart.close_group();
  chart.line(x(10), f.y1(), x(10), f.y0(), "identity");
  return chart;
}

}  // namespace

// The step-time error per size bucket: the records of each bucket scored by validation::summarize,
// as the source groups are.
std::vector<std::pair<std::string, validation::Error>> step_error_by_size(const validation::Summary& s,
                                                                          const std::vector<io::Record>& records) {
  const auto params = params_by_name(records);
  std::map<std::string, std::vector<validation::RecordResult>> buckets;
  for (const auto& r : s.records) {
    const auto p = params.find(r.name);
    if (r.not_modelled.empty() && p != params.end()) buckets[size_bucket(p->second)].push_back(r);
  }
  std::vector<std::pair<std::string, validation::Error>> by_size;
  for (const char* b : {"< 10 B", "10-100 B", "> 100 B"}) {
    const auto it = buckets.find(b);
    if (it == buckets.end()) continue;
    const auto sum = validation::summarize(it->second);
    const auto e = sum.by_quantity.find("step_s");
    if (e != sum.by_quantity.end()) by_size.emplace_back(std::string(b) + " parameters", e->second);
  }
  return by_size;
}

// The records as tables: every modelled one with its three quantities, then those not modelled
// and why.
void records_sections(Page& page, const validation::Summary& s) {
  page.section("records", "Every record");
  Table tab("records-table",
            {"record", "source group", "split", "step from", "step (s)", "measured", "error", "TFLOP/s", "measured",
             "error", "GiB", "measured", "error"},
            {false, false, false, false, true, true, true, true, true, true, true, true, true});
  for (const auto& r : s.records) {
    if (!r.not_modelled.empty()) continue;
    tab.row({r.name, shorten(validation::source_group(r.source), 24), r.split, r.step_from, num(r.step_s.predicted, "{:.2f}"),
             num(r.step_s.measured, "{:.2f}"), err(r.step_s), num(r.tflops_per_gpu.predicted, "{:.1f}"),
             num(r.tflops_per_gpu.measured, "{:.1f}"), err(r.tflops_per_gpu), num(r.peak_memory_gib.predicted, "{:.1f}"),
             num(r.peak_memory_gib.measured, "{:.1f}"), err(r.peak_memory_gib)});
  }
  page.raw(tab.str());

  page.section("not-modelled", "Records not modelled");
  Table skipped("not-modelled-table", {"record", "source group", "why"});
  std::size_t n_skipped = 0;
  for (const auto& r : s.records)
    if (!r.not_modelled.empty()) {
      skipped.row({r.name, shorten(validation::source_group(r.source)), r.not_modelled});
      ++n_skipped;
    }
  if (n_skipped == 0) page.note("Every record is modelled.");
  else page.raw(skipped.str());
}

std::string validate_html(const validation::Summary& s, const std::vector<io::Record>& records, const PageInfo& info) {
  Page page("validate", "predictions against published runs", info);
  page.raw(
      "<nav><a href=\"#answer\">answer</a><a href=\"#predicted\">predicted vs measured</a>"
      "<a href=\"#errors\">error by group</a><a href=\"#records\">records</a>"
      "<a href=\"#not-modelled\">not modelled</a></nav>\n");
  std::size_t modelled = 0, scored = 0;
  for (const auto& r : s.records) {
    if (r.not_modelled.empty()) ++modelled;
    if (r.not_modelled.empty() && r.step_s.complete()) ++scored;
  }
  page.section("answer", "The answer");
  std::vector<std::pair<std::string, std::string>> facts{
      {"records", std::to_string(s.records.size())},
      {"predicted / not modelled", fmt::format("{} / {}", modelled, s.records.size() - modelled)}};
  const std::map<std::string, std::string> words{
      {"step_s", "step time"}, {"tflops_per_gpu", "TFLOP/s per GPU"}, {"peak_memory_gib", "peak memory"}};
  for (const auto& [q, e] : s.by_quantity)
    facts.emplace_back("MAPE of " + (words.count(q) ? words.at(q) : q),
                       fmt::format("{} (n = {})", html::percent(e.mape), e.count));
  for (const auto& [split, e] : s.step_by_split)
    facts.emplace_back("MAPE of step time, " + split + " split", fmt::format("{} (n = {})", html::percent(e.mape), e.count));
  page.facts("facts", facts);

  std::vector<std::string> groups;
  for (const auto& [g, e] : s.step_by_source) groups.push_back(g);
  svg::Colours colours(groups);
  page.section("predicted", "Predicted against measured step time");
  page.figure(scatter(s, colours),
              fmt::format("{} records with a measured (or recovered) step time. RecordResult.step_s: predicted by "
                          "sim::simulate, measured as published or recovered from TFLOP/s with the source's own "
                          "FLOP convention (hover a point). Shaded: within 10%; dashed: exact.",
                          scored));

  page.section("errors", "Error by source group and by model size");
  std::vector<std::pair<std::string, validation::Error>> by_source(s.step_by_source.begin(), s.step_by_source.end());
  page.figure(error_bars("by-source", "Step-time error per source group", by_source, &colours),
              "Summary.step_by_source: the mean absolute percentage error of the step time of each source "
              "group's records (the source up to its first comma). Line: 10%.");
  page.figure(error_bars("by-size", "Step-time error per model size", step_error_by_size(s, records), nullptr),
              "The same error over the records of each size bucket; size = analytic::total_params of the "
              "record's model. Line: 10%.");

  records_sections(page, s);
  return page.str();
}

}  // namespace ptdsim::report
