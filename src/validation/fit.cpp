#include <boost/math/tools/minima.hpp>

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ptdsim/core/join.hpp"
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

std::vector<io::Record> with_jitter(std::vector<io::Record> recs, double compute, double link) {
  for (auto& r : recs) r.scenario->hardware.jitter = core::JitterSpec{compute, link};
  return recs;
}

std::vector<io::Record> with_overhead(std::vector<io::Record> recs, double layer_s, double factor) {
  for (auto& r : recs) {
    r.scenario->hardware.gpu.layer_overhead_s = layer_s;
    r.scenario->hardware.gpu.memory_bound_factor = factor;
  }
  return recs;
}

// Brent's method to 2^-14 relative: below the rounding of what is reported (0.001 of an
// efficiency or a factor, 0.1 us of a per-layer time).
constexpr int kBrentBits = 14;

Error step_error(const std::vector<io::Record>& recs) {
  auto sum = validate(recs);
  auto it = sum.by_quantity.find("step_s");
  return it == sum.by_quantity.end() ? Error{} : it->second;
}

}  // namespace

std::vector<EfficiencyFit> fit_matmul_efficiency(const std::vector<io::Record>& records) {
  // group modelled records by GPU and precision; a calibrated GEMM table or measured kernel tables
  // take precedence (fit_overheads fits what the latter leave unexplained)
  std::map<std::string, std::pair<std::vector<io::Record>, std::vector<io::Record>>> by_gpu;
  std::map<std::string, double> shipped;
  for (const auto& r : records) {
    if (!r.scenario || !r.not_modelled.empty()) continue;
    const auto& gpu = r.scenario->hardware.gpu;
    if (!gpu.matmul_table.empty() || gpu.kernels) continue;
    const auto precision = r.scenario->training.precision;
    const std::string key = gpu.name + " " + std::string(core::name(rate_class(precision)));
    shipped[key] = gpu.scalar_matmul_efficiency(precision);
    (r.split == "fit" ? by_gpu[key].first : by_gpu[key].second).push_back(r);
  }
  std::vector<EfficiencyFit> out;
  for (auto& [gpu, sets] : by_gpu) {
    // named references, not a structured binding: clang 14 cannot capture bindings in lambdas
    const auto& fit_set = sets.first;
    const auto& holdout_set = sets.second;
    EfficiencyFit f;
    f.gpu = gpu;
    f.shipped = shipped[gpu];
    if (fit_set.empty()) {
      f.fitted = f.shipped;
    } else {
      // the step-time error is unimodal in the efficiency (time falls monotonically with it)
      const auto best = boost::math::tools::brent_find_minima(
          [&](double e) { return step_error(with_efficiency(fit_set, e)).mape; }, 0.3, 1.0, kBrentBits);
      f.fitted = std::round(best.first * 1000) / 1000;
      f.fit = step_error(with_efficiency(fit_set, f.fitted));
    }
    if (!holdout_set.empty()) f.holdout = step_error(with_efficiency(holdout_set, f.fitted));
    out.push_back(f);
  }
  return out;
}

std::vector<OverheadFit> fit_overheads(const std::vector<io::Record>& records) {
  std::map<std::string, std::pair<std::vector<io::Record>, std::vector<io::Record>>> by_gpu;
  std::map<std::string, OverheadFit> out;
  for (const auto& r : records) {
    if (!r.scenario || !r.not_modelled.empty()) continue;
    const auto& gpu = r.scenario->hardware.gpu;
    if (!gpu.kernels) continue;
    auto& f = out[gpu.name];
    f.gpu = gpu.name;
    f.shipped_layer_s = gpu.layer_overhead_s;
    f.shipped_factor = gpu.memory_bound_factor;
    (r.split == "fit" ? by_gpu[gpu.name].first : by_gpu[gpu.name].second).push_back(r);
  }
  std::vector<OverheadFit> fits;
  for (auto& [gpu, sets] : by_gpu) {
    const auto& fit_set = sets.first;  // not a binding: clang 14 cannot capture bindings in lambdas
    const auto& holdout_set = sets.second;
    OverheadFit f = out[gpu];
    f.layer_s = f.shipped_layer_s;
    f.factor = f.shipped_factor;
    if (!fit_set.empty()) {
      // Nested Brent searches: for each memory-bound factor in [0.5, 3], the best per-layer time in
      // [0, 1 ms]; the error is unimodal in each (the step time grows monotonically with both).
      auto best_layer_us = [&](double factor) {
        return boost::math::tools::brent_find_minima(
            [&](double us) { return step_error(with_overhead(fit_set, us * 1e-6, factor)).mape; }, 0.0, 1000.0,
            kBrentBits);
      };
      const auto best = boost::math::tools::brent_find_minima(
          [&](double factor) { return best_layer_us(factor).second; }, 0.5, 3.0, kBrentBits);
      f.factor = std::round(best.first * 1000) / 1000;                          // to 0.001
      f.layer_s = std::round(best_layer_us(f.factor).first * 10) / 10 * 1e-6;  // to 0.1 us
      f.fit = step_error(with_overhead(fit_set, f.layer_s, f.factor));
    }
    if (!holdout_set.empty()) f.holdout = step_error(with_overhead(holdout_set, f.layer_s, f.factor));
    fits.push_back(f);
  }
  return fits;
}

std::vector<JitterFit> fit_jitter(const std::vector<io::Record>& records) {
  struct Fabric {
    std::set<std::string> files;
    std::string network;
    core::JitterSpec shipped;
    std::vector<io::Record> fit, holdout;
  };
  std::map<std::string, Fabric> by_fabric;
  for (const auto& r : records) {
    if (!r.scenario || !r.not_modelled.empty()) continue;
    const auto& hw = r.scenario->hardware;
    const std::string network = fmt::format("{}, {:.0f} GB/s NIC per GPU", core::name(hw.topology),
                                            hw.network.bandwidth_Bps / 1e9);
    Fabric& f = by_fabric[network];
    f.network = network;
    f.files.insert(hw.name);
    f.shipped = hw.jitter;
    (r.split == "fit" ? f.fit : f.holdout).push_back(r);
  }
  std::vector<JitterFit> out;
  for (auto& [key, fab] : by_fabric) {
    const auto& fit_set = fab.fit;  // not a binding: clang 14 cannot capture bindings in lambdas
    JitterFit f;
    f.fabric = core::joined(fab.files) + " (" + fab.network + ")";
    f.shipped = f.fitted = fab.shipped;
    if (!fit_set.empty()) {
      // the step time grows monotonically with each spread, so the error is unimodal in each
      auto best_compute = [&](double link) {
        return boost::math::tools::brent_find_minima(
            [&](double c) { return step_error(with_jitter(fit_set, c, link)).mape; }, 0.0, 0.1, kBrentBits);
      };
      const auto best = boost::math::tools::brent_find_minima(
          [&](double link) { return best_compute(link).second; }, 0.0, 0.5, kBrentBits);
      f.fitted.link = std::round(best.first * 1000) / 1000;                                // to 0.001
      f.fitted.compute = std::round(best_compute(f.fitted.link).first * 10000) / 10000;  // to 0.0001
      f.fit = step_error(with_jitter(fit_set, f.fitted.compute, f.fitted.link));
    }
    if (!fab.holdout.empty()) f.holdout = step_error(with_jitter(fab.holdout, f.fitted.compute, f.fitted.link));
    out.push_back(f);
  }
  return out;
}

}  // namespace ptdsim::validation
