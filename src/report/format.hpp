#pragma once
#include <fmt/format.h>

#include <string>

#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

// Numbers as people read them, shared by the table and the HTML report.
namespace ptdsim::report {

// "0", "12.5 us", "3.4 ms", "1.234 s"
inline std::string seconds(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

// training.flash_attention with what times its core: "on (cudnn)" or "on (flash2)", the kernel
// whose measured tables do (core::attention_tables, which analytic::attention_kernel reads too;
// "on (cudnn, no flash2 tables)" where the asked-for one has none), "on (two GEMMs)" where the
// hardware file has no attention tables for the run's precision, or "off".
inline std::string flash_attention_text(const core::TrainingSpec& t, const core::GpuSpec& g) {
  if (!t.flash_attention) return "off";
  const core::AttentionTables tables = core::attention_tables(g, t.precision, t.attention_kernel);
  if (!tables.forward) return "on (two GEMMs)";
  return tables.other ? fmt::format("on ({}, no {} tables)", core::name(tables.kernel), core::name(t.attention_kernel))
                      : fmt::format("on ({})", core::name(tables.kernel));
}

// decimal units, as bandwidths are quoted: "1.50 GB"
inline std::string bytes(double b) {
  if (b >= 1e12) return fmt::format("{:.2f} TB", b / 1e12);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b > 0) return fmt::format("{:.0f} B", b);
  return "0";
}

// A CSV cell by RFC 4180: quoted when it holds a comma, a quote or a line break, quotes doubled.
// A text cell a spreadsheet would run as a formula (starting with =, +, @, a tab or a carriage
// return, or - followed by more) gets a leading apostrophe, OWASP's advice on CSV injection
// (docs/architecture.md "How outputs are written"); numbers are written by the callers, never here.
inline std::string csv_quote(const std::string& cell) {
  const bool formula = !cell.empty() && (cell[0] == '=' || cell[0] == '+' || cell[0] == '@' || cell[0] == '\t' ||
                                         cell[0] == '\r' || (cell[0] == '-' && cell.size() > 1));
  const std::string x = formula ? "'" + cell : cell;
  if (x.find_first_of(",\"\n\r") == std::string::npos) return x;
  std::string q = "\"";
  for (char c : x) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// "15T tokens (1.79M steps): 223.4 days, 2.74M GPU-hours, 1.45e+03 MWh of GPU energy at 520 W per
// GPU, cost 6.86M at 2.5 per GPU-hour", saying what is missing where an input is not given
// (table.cpp; the HTML evaluate page shows the same line).
std::string to_train_line(const core::Report& r);

}  // namespace ptdsim::report
