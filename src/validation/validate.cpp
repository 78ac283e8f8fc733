#include "ptdsim/validation/validate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <exception>

#include "ptdsim/analytic/megatron_count.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/sim/simulate.hpp"

namespace ptdsim::validation {

std::optional<double> convention_flops(const std::string& convention, const core::Scenario& s,
                                       const core::Report& predicted) {
  const double B = s.training.global_batch;
  const double sl = s.training.seq_len;
  const double L = s.model.layers;
  const double h = s.model.hidden;
  const double V = s.model.vocab;
  if (convention == "megatron96") return 96 * B * sl * L * h * h * (1 + sl / (6 * h) + V / (16 * L * h));
  if (convention == "megatron72") return 72 * B * sl * L * h * h * (1 + sl / (6 * h) + V / (12 * L * h));
  if (convention == "megatron") return analytic::megatron_flops_per_step(s, analytic::MegatronCount::v2025);
  if (convention == "megatron-2024") return analytic::megatron_flops_per_step(s, analytic::MegatronCount::v2024);
  if (convention == "model" || convention == "unstated" || convention.empty())
    return predicted.model_flops_per_step;
  return std::nullopt;
}

std::string source_group(const std::string& source) { return source.substr(0, source.find(',')); }

std::string size_bucket(double params) { return params < 10e9 ? "<10B" : params <= 100e9 ? "10-100B" : ">100B"; }

RecordResult validate_record(const io::Record& rec) {
  RecordResult out;
  out.name = rec.name;
  out.source = rec.source;
  out.split = rec.split.empty() ? "holdout" : rec.split;
  out.not_modelled = rec.not_modelled;
  if (!rec.scenario) {
    if (out.not_modelled.empty()) out.not_modelled = "no scenario";
    return out;
  }
  const core::Scenario& s = *rec.scenario;
  core::Report r;
  try {
    r = sim::simulate(s);
  } catch (const std::exception& e) {
    out.not_modelled = std::string("the simulation failed: ") + e.what();
    return out;
  }
  const auto flops = convention_flops(rec.flops_convention, s, r);
  out.fits = r.fits;
  out.predicted_peak_gib = r.peak_bytes / core::kGiB;
  out.capacity_gib = r.capacity_bytes / core::kGiB;

  out.step_s.predicted = r.step_s;
  out.params = r.params;
  out.gpu = s.hardware.gpu.name;
  if (rec.measured.step_s) {
    out.step_s.measured = rec.measured.step_s;
    out.step_from = "measured";
  } else if (rec.measured.tflops_per_gpu && flops) {
    // the source computed tflops = F / (t * gpus); invert it with the same F
    out.step_s.measured = *flops / (*rec.measured.tflops_per_gpu * core::kTera * s.gpus);
    out.step_from = "tflops (" + (rec.flops_convention.empty() ? std::string("unstated")
                                                               : rec.flops_convention) + ")";
  }
  if (rec.measured.tflops_per_gpu && flops) {
    out.tflops_per_gpu.measured = rec.measured.tflops_per_gpu;
    out.tflops_per_gpu.predicted = *flops / (r.step_s * s.gpus) / core::kTera;
  }
  if (rec.measured.peak_memory_bytes) {
    out.peak_memory_gib.measured = *rec.measured.peak_memory_bytes / core::kGiB;
    out.peak_memory_gib.predicted = r.peak_device_bytes / core::kGiB;  // nvidia-smi's: with the cache
  } else if (rec.measured.peak_reserved_bytes) {
    // the caching allocator's reserve (torchtitan logs reserved_bytes.all.peak): without the CUDA
    // context and NCCL's buffers, which it does not allocate
    out.memory_reserved = true;
    out.peak_memory_gib.measured = *rec.measured.peak_reserved_bytes / core::kGiB;
    out.peak_memory_gib.predicted = r.peak_reserved_bytes / core::kGiB;
  }
  return out;
}

namespace {

void add(Error& e, const std::string& name, double err) {
  e.mape = (e.mape * e.count + std::abs(err)) / (e.count + 1);
  e.mean = (e.mean * e.count + err) / (e.count + 1);
  ++e.count;
  if (e.count == 1 || std::abs(err) > std::abs(e.worst_error)) {
    e.worst = name;
    e.worst_error = err;
  }
}

}  // namespace

std::string RecordResult::memory_flag() const {
  if (!predicted() || fits) return "";
  return fmt::format("does not fit: {:.1f} GiB of {:.1f} GiB", predicted_peak_gib, capacity_gib);
}

Summary summarize(std::vector<RecordResult> records) {
  Summary sum;
  for (const auto& r : records) {
    if (!r.predicted()) {
      ++sum.not_modelled;
      continue;
    }
    ++sum.predicted;
    if (!r.fits) ++sum.does_not_fit;
    if (r.step_s.complete()) {
      add(sum.by_quantity["step_s"], r.name, r.step_s.error());
      add(sum.step_by_source[source_group(r.source)], r.name, r.step_s.error());
      add(sum.step_by_split[r.split], r.name, r.step_s.error());
      add(sum.step_by_gpu[r.gpu], r.name, r.step_s.error());
      add(sum.step_by_size[r.gpu + " " + size_bucket(r.params)], r.name, r.step_s.error());
    }
    if (r.tflops_per_gpu.complete()) add(sum.by_quantity["tflops_per_gpu"], r.name, r.tflops_per_gpu.error());
    if (r.peak_memory_gib.complete())
      add(sum.by_quantity["peak_memory_gib"], r.name, r.peak_memory_gib.error());
  }
  sum.records = std::move(records);
  return sum;
}

Summary validate(const std::vector<io::Record>& records) {
  std::vector<RecordResult> results;
  results.reserve(records.size());
  for (const auto& rec : records) results.push_back(validate_record(rec));
  return summarize(std::move(results));
}

void require_all_predicted(const std::vector<io::Record>& records, const Summary& summary) {
  for (std::size_t i = 0; i < records.size() && i < summary.records.size(); ++i) {
    const auto& res = summary.records[i];
    if (res.predicted()) continue;
    if (!records[i].problems.empty()) throw core::ConfigError(records[i].problems);
    core::Diagnostic d = records[i].where;
    d.message = "record '" + res.name + "' is not modelled: " + res.not_modelled;
    throw core::ConfigError({d});
  }
}

}  // namespace ptdsim::validation
