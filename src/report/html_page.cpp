#include "html_page.hpp"

#include <fmt/format.h>

namespace ptdsim::report::html {
namespace {

// One stylesheet for every page: system fonts (nothing to fetch), charts as wide as the page,
// and a print rule set that keeps a chart or table row from splitting across pages.
constexpr std::string_view kStyle = R"css(
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1a1a1a; background: #fff; margin: 0 auto; max-width: 1100px; padding: 16px 24px 40px; }
header h1 { font-size: 22px; margin: 8px 0 2px; }
header .sub { color: #555; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }
p.note { color: #555; font-size: 12.5px; margin: 4px 0; }
p.alarm { color: #fff; background: #c0392b; font-weight: 600; padding: 8px 12px; margin: 8px 0; }
p.warning { color: #8a4b00; background: #fff4e0; padding: 4px 10px; margin: 4px 0; }
nav { font-size: 13px; margin: 4px 0 12px; }
nav a { margin-right: 14px; color: #2a5d9f; text-decoration: none; }
figure { margin: 8px 0 18px; }
figcaption { color: #555; font-size: 12.5px; margin-top: 2px; }
svg.chart { width: 100%; height: auto; display: block; font-size: 11px; }
svg.chart text { fill: #222; }
svg.chart .chart-title { font-size: 14px; font-weight: 600; }
svg.chart .axis-label { font-size: 12px; fill: #333; }
svg.chart .tick-label, svg.chart .row-label, svg.chart .legend-label { font-size: 11px; fill: #333; }
svg.chart .grid { stroke: #ececec; }
svg.chart .domain, svg.chart .tick { stroke: #555; }
svg.chart .span { stroke: none; }
svg.chart .span.critical { stroke: #111; stroke-width: 1; }
svg.chart .critical-mark { fill: #111; }
svg.chart .summary { fill: #c8c8c8; }
svg.chart .capacity { stroke: #c0392b; stroke-width: 2; stroke-dasharray: 6 3; }
svg.chart .capacity-label { fill: #c0392b; font-size: 11px; }
svg.chart .over { fill: #c0392b; font-weight: 600; }
svg.chart .identity { stroke: #333; stroke-dasharray: 4 3; fill: none; }
svg.chart .band { fill: #59a14f; opacity: 0.18; }
svg.chart .front { fill: none; stroke: #c0392b; stroke-width: 2; }
svg.chart .front-point { stroke: #c0392b; stroke-width: 1.5; }
svg.chart .front-point.analytic { fill: #fff; }
svg.chart .front-point.simulated { fill: #c0392b; }
svg.chart .ranked { fill: #2a5d9f; stroke: #fff; stroke-width: 1; }
svg.chart .scenario-mark { fill: none; stroke: #111; stroke-width: 2; }
svg.chart .cell-text { font-size: 11px; }
svg.chart .cell-text.on-dark { fill: #fff; }
svg.chart .cell.none { fill: #f2f2f2; }
svg.chart .cell.best { stroke: #111; stroke-width: 3; }
svg.chart .cell.mine { stroke: #c0392b; stroke-width: 3; stroke-dasharray: 5 3; }
svg.chart .point { stroke: #fff; stroke-width: 0.8; }
svg.chart .bar-label { font-size: 11px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 14px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
td { white-space: nowrap; }
td:last-child { white-space: normal; }
#records-table th, #records-table td { padding: 2px 5px; font-size: 11.5px; }
#ranked, #records-table { width: 100%; }
th { background: #f4f4f4; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.best td { font-weight: 600; }
tr.scenario td { background: #fff6e0; }
dl.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 8px 18px; margin: 8px 0 12px; }
dl.facts div { border-left: 3px solid #4e79a7; padding: 2px 8px; }
dl.facts dt { color: #555; font-size: 12px; }
dl.facts dd { margin: 0; font-size: 16px; font-weight: 600; }
footer { color: #777; font-size: 12px; margin-top: 30px; border-top: 1px solid #ddd; padding-top: 6px; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  p.note, figcaption, table { font-size: 10px; }
  nav { display: none; }
  h2 { break-after: avoid; }
  figure, tr, dl.facts div { break-inside: avoid; }
  svg.chart { max-height: 24cm; }
  @page { size: A4 landscape; margin: 12mm; }
}
)css";

}  // namespace

Page::Page(std::string_view kind, std::string_view title, const PageInfo& info)
    : kind_(kind), title_(title), info_(info) {}

void Page::section(std::string_view id, std::string_view heading) {
  body_ += "<h2 id=\"" + svg::escape(id) + "\">" + svg::escape(heading) + "</h2>\n";
}

void Page::para(std::string_view text, std::string_view cls) {
  body_ += cls.empty() ? std::string("<p>") : "<p class=\"" + svg::escape(cls) + "\">";
  body_ += svg::escape(text) + "</p>\n";
}

void Page::figure(const svg::Svg& chart, std::string_view caption) {
  body_ += "<figure>\n" + chart.str();
  if (!caption.empty()) body_ += "<figcaption>" + svg::escape(caption) + "</figcaption>\n";
  body_ += "</figure>\n";
}

void Page::facts(std::string_view id, const std::vector<std::pair<std::string, std::string>>& items) {
  body_ += "<dl class=\"facts\" id=\"" + svg::escape(id) + "\">\n";
  for (const auto& [k, v] : items)
    body_ += "<div><dt>" + svg::escape(k) + "</dt><dd>" + svg::escape(v) + "</dd></div>\n";
  body_ += "</dl>\n";
}

std::string Page::str() const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"ptdsim " + svg::escape(info_.version) + "\">\n";
  out += "<title>ptdsim " + svg::escape(kind_) + ": " + svg::escape(title_) + "</title>\n";
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<header><h1>ptdsim " + svg::escape(kind_) + ": " + svg::escape(title_) + "</h1>\n";
  if (!info_.input.empty()) out += "<p class=\"sub\">from " + svg::escape(info_.input) + "</p>\n";
  out += "</header>\n";
  out += body_;
  out += "<footer>ptdsim " + svg::escape(info_.version) +
         ". A self-contained page: every chart is inline SVG drawn by ptdsim; nothing is fetched. "
         "docs/report.md says what each chart shows and from which field.</footer>\n";
  out += "</body>\n</html>\n";
  return out;
}

Table::Table(std::string_view id, std::vector<std::string> header, std::vector<bool> numeric)
    : numeric_(std::move(numeric)) {
  numeric_.resize(header.size(), false);
  out_ = "<table id=\"" + svg::escape(id) + "\"><thead><tr>";
  for (std::size_t i = 0; i < header.size(); ++i)
    out_ += (numeric_[i] ? "<th class=\"num\">" : "<th>") + svg::escape(header[i]) + "</th>";
  out_ += "</tr></thead><tbody>\n";
}

void Table::row(const std::vector<std::string>& cells, std::string_view cls) {
  out_ += cls.empty() ? std::string("<tr>") : "<tr class=\"" + svg::escape(cls) + "\">";
  for (std::size_t i = 0; i < cells.size(); ++i)
    out_ += (i < numeric_.size() && numeric_[i] ? "<td class=\"num\">" : "<td>") + svg::escape(cells[i]) +
            "</td>";
  out_ += "</tr>\n";
}

TimeUnit time_unit(double span_s) {
  if (span_s < 1e-3) return {1e6, "us"};
  if (span_s < 1) return {1e3, "ms"};
  return {1, "s"};
}

std::string percent(double fraction, int digits) { return fmt::format("{:.{}f}%", 100 * fraction, digits); }

std::string signed_percent(double fraction, int digits) {
  return fmt::format("{:+.{}f}%", 100 * fraction, digits);
}

std::string count(double n) {
  if (n >= 1e12) return fmt::format("{:.2f} T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f} M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

}  // namespace ptdsim::report::html
