#include <cmath>

#include "report_fields.hpp"
#include "ptdsim/report/evaluate.hpp"

namespace ptdsim::report {

// Every number of a report is a time, a size, a count, a rate or a ratio: finite and not negative,
// but for the memory left free, which a layout that does not fit has below zero. Visits the same
// declared fields the writers print, so nothing printed escapes the check.
std::string report_problem(const core::Report& r) {
  std::string bad;
  auto check = [&](const std::string& path, const report::Value& v) {
    if (!bad.empty()) return;
    const bool signed_quantity = path == "memory.headroom_gib";
    if (const double* x = std::get_if<double>(&v); x && !(std::isfinite(*x) && (*x >= 0 || signed_quantity)))
      bad = path + " = " + std::to_string(*x);
  };
  visit_scalars(r, check);
  for (const auto& st : r.stages)
    visit_stage(st, [&](const std::string& key, const report::Value& v) {
      check("memory.by_stage[" + std::to_string(st.stage) + "]." + key, v);
    });
  return bad;
}

}  // namespace ptdsim::report
