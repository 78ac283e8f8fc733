#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ptdsim/report/html.hpp"
#include "svg.hpp"

// The frame every HTML page shares: document head with the inline stylesheet (screen and print),
// headings, paragraphs, tables and figures. Text given here is escaped here (svg::escape).
namespace ptdsim::report::html {

class Page {
 public:
  // `kind` is the command ("evaluate", "sweep", "validate"), `title` what the page is about.
  Page(std::string_view kind, std::string_view title, const PageInfo& info);

  void section(std::string_view id, std::string_view heading);  // an <h2 id=...>
  void para(std::string_view text, std::string_view cls = {});
  void note(std::string_view text) { para(text, "note"); }
  // A chart with its caption (what it shows, from which field).
  void figure(const svg::Svg& chart, std::string_view caption);
  // Label / value pairs as a definition grid (the answer's key figures).
  void facts(std::string_view id, const std::vector<std::pair<std::string, std::string>>& items);
  void raw(std::string_view html) { body_ += html; }

  std::string str() const;

 private:
  std::string kind_, title_;
  PageInfo info_;
  std::string body_;
};

// A table with a header row; cells are escaped; `numeric` columns are right-aligned.
class Table {
 public:
  Table(std::string_view id, std::vector<std::string> header, std::vector<bool> numeric = {});
  void row(const std::vector<std::string>& cells, std::string_view cls = {});
  std::string str() const { return out_ + "</tbody></table>\n"; }

 private:
  std::vector<bool> numeric_;
  std::string out_;
};

// The unit of a time axis spanning `span_s` seconds: s, ms or us, whichever keeps tick labels short.
struct TimeUnit {
  double per_second;  // multiply seconds by this
  const char* name;
};
TimeUnit time_unit(double span_s);

// "12.3%" of a fraction; "+4.5%" with sign.
std::string percent(double fraction, int digits = 1);
std::string signed_percent(double fraction, int digits = 1);
// "1.50 B", "175 B", "70.0 M": a parameter count.
std::string count(double n);

}  // namespace ptdsim::report::html
