#include <fmt/format.h>

#include "report_fields.hpp"
#include "format.hpp"
#include "ptdsim/report/evaluate.hpp"

namespace ptdsim::report {
namespace {

std::string cell(const report::Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return csv_quote(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return fmt::format("{}", x);  // shortest form that reads back exactly
        } else if constexpr (std::is_same_v<T, report::Absent>) {
          return "";
        } else if constexpr (std::is_same_v<T, report::List>) {
          std::string joined;
          for (const auto& item : x) joined += (joined.empty() ? "" : "; ") + item;
          return cell(report::Value{joined});
        } else {
          return std::to_string(x);
        }
      },
      v);
}

}  // namespace

std::string report_csv_header() {
  std::string line;
  visit_scalars(core::Report{}, [&](const std::string& path, const report::Value&) {
    line += (line.empty() ? "" : ",") + path;
  });
  return line + "\n";
}

std::string report_csv_row(const core::Report& r) {
  std::string line;
  bool first = true;
  visit_scalars(r, [&](const std::string&, const report::Value& v) {
    if (!first) line += ",";
    first = false;
    line += cell(v);
  });
  return line + "\n";
}

}  // namespace ptdsim::report
