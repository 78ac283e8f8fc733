#include <cmath>
#include <map>

#include "ptdsim/core/names.hpp"
#include "ptdsim/validation/validate.hpp"

namespace ptdsim::validation {
namespace {

// bf16 and fp16 run on the same tensor cores at the same peak: one efficiency serves both
core::Precision rate_class(core::Precision p) {
  return p == core::Precision::fp16 ? core::Precision::bf16 : p;
}

std::vector<io::Record> with_efficiency(std::vector<io::Record> recs, double eff) {
  for (auto& r : recs) {
    auto& by = r.scenario->hardware.gpu.matmul_efficiency_by_precision;
    const auto p = rate_class(r.scenario->training.precision);
    by[static_cast<std::size_t>(p)] = eff;
    if (p == core::Precision::bf16) by[static_cast<std::size_t>(core::Precision::fp16)] = eff;
  }
  return recs;
}

Error step_error(const std::vector<io::Record>& recs) {
  auto sum = validate(recs);
  auto it = sum.by_quantity.find("step_s");
  return it == sum.by_quantity.end() ? Error{} : it->second;
}

}  // namespace

std::vector<EfficiencyFit> fit_matmul_efficiency(const std::vector<io::Record>& records) {
  // group modelled records by GPU and precision; a calibrated GEMM table takes precedence
  std::map<std::string, std::pair<std::vector<io::Record>, std::vector<io::Record>>> by_gpu;
  std::map<std::string, double> shipped;
  for (const auto& r : records) {
    if (!r.scenario || !r.not_modelled.empty()) continue;
    const auto& gpu = r.scenario->hardware.gpu;
    if (!gpu.matmul_table.empty()) continue;
    const auto precision = r.scenario->training.precision;
    const std::string key = gpu.name + " " + std::string(core::name(rate_class(precision)));
    shipped[key] = gpu.scalar_matmul_efficiency(precision);
    (r.split == "fit" ? by_gpu[key].first : by_gpu[key].second).push_back(r);
  }
  std::vector<EfficiencyFit> out;
  for (auto& [gpu, sets] : by_gpu) {
    auto& [fit_set, holdout_set] = sets;
    EfficiencyFit f;
    f.gpu = gpu;
    f.shipped = shipped[gpu];
    if (fit_set.empty()) {
      f.fitted = f.shipped;
    } else {
      // the step-time error is unimodal in the efficiency (time falls monotonically with it)
      const double phi = (std::sqrt(5.0) - 1) / 2;
      double lo = 0.3, hi = 1.0;
      double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
      double f1 = step_error(with_efficiency(fit_set, x1)).mape;
      double f2 = step_error(with_efficiency(fit_set, x2)).mape;
      while (hi - lo > 1e-3) {
        if (f1 < f2) {
          hi = x2; x2 = x1; f2 = f1;
          x1 = hi - phi * (hi - lo);
          f1 = step_error(with_efficiency(fit_set, x1)).mape;
        } else {
          lo = x1; x1 = x2; f1 = f2;
          x2 = lo + phi * (hi - lo);
          f2 = step_error(with_efficiency(fit_set, x2)).mape;
        }
      }
      f.fitted = std::round((lo + hi) / 2 * 1000) / 1000;
      f.fit = step_error(with_efficiency(fit_set, f.fitted));
    }
    if (!holdout_set.empty()) f.holdout = step_error(with_efficiency(holdout_set, f.fitted));
    out.push_back(f);
  }
  return out;
}

}  // namespace ptdsim::validation
