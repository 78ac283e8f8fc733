#include "ptdsim/analytic/assemble.hpp"

#include "fold.hpp"
#include "ptdsim/analytic/breakdown.hpp"
#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/experts.hpp"
#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/analytic/megatron_count.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/nccl_picks.hpp"
#include "ptdsim/analytic/offload.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/analytic/scale_cost.hpp"
#include "ptdsim/analytic/to_train.hpp"
#include "ptdsim/core/units.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace ptdsim::analytic {

namespace {

// Memory per stage with the engine's in-flight counts, the peak, whether it fits, and the warnings
// about the inputs: a layout that does not fit, an attention kernel timed from another one's
// table, calibrated collective rows used on groups they were not measured on.
void memory_and_warnings(const Step& step, const StepTiming& t, core::Report& r) {
  const core::Scenario& s = *step.scenario;
  r.stages = stage_memory(s, *step.split, *step.costs, t.in_flight.empty() ? nullptr : &t.in_flight);
  r.capacity_bytes = s.hardware.gpu.memory_bytes;
  for (const auto& st : r.stages)
    if (const double required = st.required(); required > r.peak_bytes) {
      r.peak_bytes = required;
      r.peak_allocated_bytes = st.allocated();
      r.peak_reserved_bytes = st.reserved;
      r.peak_device_bytes = st.device();
      r.peak_stage = st.stage;
    }
  r.fits = r.peak_bytes <= r.capacity_bytes;
  if (s.training.uses_host()) {
    // CPU offload and offloaded activations: the host memory the node's GPUs keep there (each as
    // much as the one that keeps the most), against the node's
    r.host_bytes_per_gpu = host_bytes_per_gpu(s, *step.split, *step.costs);
    r.host_bytes_per_node = r.host_bytes_per_gpu * gpus_sharing_host(s);
    r.host_capacity_bytes = s.hardware.host.memory_bytes;
    r.host_fits = r.host_bytes_per_node <= r.host_capacity_bytes;
    if (!r.host_fits) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "what the run offloads does not fit the host: %.1f GiB per node of %.1f GiB (%.1f GiB over)",
                    r.host_bytes_per_node / core::kGiB, r.host_capacity_bytes / core::kGiB,
                    (r.host_bytes_per_node - r.host_capacity_bytes) / core::kGiB);
      r.warnings.emplace_back(line);
      r.fits = false;
    }
  }
  if (r.peak_bytes > r.capacity_bytes) {  // (the GPU; the host said its own above)
    char line[160];
    std::snprintf(line, sizeof line, "the layout does not fit: peak %.1f GiB on stage %d of %.1f GiB (%.1f GiB over)",
                  r.peak_bytes / core::kGiB, r.peak_stage, r.capacity_bytes / core::kGiB,
                  (r.peak_bytes - r.capacity_bytes) / core::kGiB);
    r.warnings.emplace_back(line);
  }
  // an attention kernel whose table the file lacks, timed from the other one
  if (s.hardware.gpu.kernels) {
    std::string w = attention_fallback(s.hardware.gpu, s.training.precision, s.training.flash_attention,
                                       s.training.attention_kernel);
    if (!w.empty()) r.warnings.push_back(std::move(w));
  }
  // calibrated collective rows applied to groups they were not measured on (docs/calibration.md)
  if (!s.hardware.collectives.empty()) {
    for (auto& w : collective_warnings(s, step.groups)) r.warnings.push_back(std::move(w));
    // rows forced to an algorithm: used or passed over at the size each collective moves
    const bool forced = std::any_of(s.hardware.collectives.begin(), s.hardware.collectives.end(),
                                    [](const core::CollectiveFit& f) { return f.forced(); });
    if (forced)
      for (auto& k : collective_picks(s, step.groups))
        if (!k.warning.empty() && std::find(r.warnings.begin(), r.warnings.end(), k.warning) == r.warnings.end())
          r.warnings.push_back(std::move(k.warning));
  }
}

}  // namespace

namespace detail {

namespace {

// FP8 delayed scaling's amax reductions (scale_cost.hpp): each blocks the compute stream of every
// rank of the tp*cp*dp group, twice per micro-batch and model chunk on the busiest stage, whose
// steady phase sets the step; added to either engine's step as its own part of the critical path.
void add_amax_sync(const Step& step, StepTiming& t) {
  const core::Scenario& s = *step.scenario;
  if (s.training.precision != core::Precision::fp8 || s.training.fp8_recipe != core::Fp8Recipe::delayed) return;
  const auto& sh = step.plan.shape;
  int per_chunk = 0;  // the busiest chunk's layers, as the split placed them
  for (const auto& c : step.split->chunks) per_chunk = std::max(per_chunk, c.layers);
  if (const double amax = amax_sync(s.hardware, step.groups.amax, sh.m, sh.v, per_chunk).step_s(); amax > 0) {
    t.step_s += amax;
    t.critical_path.push_back(core::PathPart{core::PathCause::fp8_amax, -1, amax});
  }
}

// The cost of scale (scale_cost.hpp): the step ends with its slowest GPU, so either engine's step
// (one representative rank per stage, DP replicas alike) waits for the slowest of the job's GPUs
// beyond it. Its part of the critical path comes last: the step's final synchronisation.
void add_straggler_wait(const core::Scenario& s, StepTiming& t) {
  double exposed = 0;
  for (double e : t.exposed_s) exposed += e;
  if (const double wait = straggler_wait_s(s.hardware.jitter, s.gpus, t.compute_s, exposed); wait > 0) {
    t.step_s += wait;
    t.critical_path.push_back(core::PathPart{core::PathCause::straggler, -1, wait});
  }
}

// ZeRO-3's overlap ratios and prefetch depths, from the stage comm_stats reports DP for.
void zero3_overlap(const Folds& folds, core::Report& r) {
  const StageFold* d = &folds.dp_fold();
  if (d->unit_gather_s > 0 || d->unit_backward_comm_s > 0) {
    r.zero3_overlap_ratio = ratio(d->unit_gather_s, d->unit_forward_s);
    r.zero3_backward_ratio = ratio(d->unit_backward_comm_s, d->unit_backward_s);
    r.zero3_prefetch = d->unit_forward_ahead;
    r.zero3_backward_prefetch = d->unit_backward_ahead;
  }
}

// Throughput, TFLOP/s per GPU, MFU and HFU (against the precision's peak, and an FP8 run's also
// against bf16's) from the step time.
void rates(const core::Scenario& s, core::Report& r) {
  const double peak = s.hardware.gpu.peak_flops[core::index(s.training.precision)];
  const double bf16_peak = s.hardware.gpu.peak_flops[core::index(core::Precision::bf16)];
  r.mfu_peak_flops = peak;
  if (r.step_s > 0) {
    r.tokens_per_s = static_cast<double>(s.training.global_batch) * s.training.seq_len / r.step_s;
    r.tflops_per_gpu = r.model_flops_per_step / r.step_s / s.gpus / core::kTera;
    r.megatron_tflops_per_gpu = megatron_flops_per_step(s, MegatronCount::v2025) / r.step_s / s.gpus / core::kTera;
    if (peak > 0) {
      r.mfu = r.model_flops_per_step / r.step_s / s.gpus / peak;
      r.hfu = r.hardware_flops_per_step / r.step_s / s.gpus / peak;
    }
    // an FP8 run's MFU against the FP8 peak (twice bf16's) reads low beside bf16 runs: both are given
    if (s.training.precision != core::Precision::bf16 && bf16_peak > 0)
      r.mfu_bf16 = r.model_flops_per_step / r.step_s / s.gpus / bf16_peak;
  }
}

}  // namespace

core::Report assemble(const Step& step, const Folds& folds,
                      const std::array<core::CommStats, core::kCommBucketCount>& comm, StepTiming t) {
  const core::Scenario& s = *step.scenario;
  const StepPlan& plan = step.plan;
  const PipelineLayers& split = *step.split;
  const LayerCosts& costs = *step.costs;
  core::Report r;
  r.scenario = s;
  r.engine = t.engine;
  r.params = total_params(s.model);
  r.active_params = s.model.moe ? active_params(s.model) : r.params;
  r.model_flops_per_step = model_flops_per_step(s);
  r.hardware_flops_per_step = hardware_flops_per_step(s, r.model_flops_per_step);

  memory_and_warnings(step, t, r);

  add_amax_sync(step, t);
  add_straggler_wait(s, t);
  r.step_s = t.step_s;
  r.compute_s = t.compute_s;
  r.contention_s = t.contention_s;
  r.bubble_s = t.bubble_s;
  r.optimizer_s = t.optimizer_s;
  r.offload_s = t.offload_s;
  for (const auto& st : plan.stages)  // the parts of the longest offload phase
    if (st.offload_s > 0 && st.offload_s >= r.offload_down_s + r.offload_cpu_s + r.offload_up_s) {
      r.offload_down_s = st.offload_down_s;
      r.offload_cpu_s = st.offload_cpu_s;
      r.offload_up_s = st.offload_up_s;
    }
  r.bounded_by = std::move(t.bounded_by);
  r.critical_path = std::move(t.critical_path);
  const StageFold& slowest = folds.slowest_fold();
  r.stage_forward_s = slowest.f;
  r.stage_backward_s = slowest.b + slowest.w;
  r.comm = comm;
  if (plan.shape.p > 1) {  // the first and last stage send one transfer a micro-batch and chunk fewer (comm_stats)
    const double v = plan.shape.v;
    r.pp_end_bytes = comm[static_cast<int>(core::CommBucket::pp)].bytes * (2 * v - 1) / (plan.shape.p > 2 ? 2 * v : 2 * v - 1);
  }
  r.compute = compute_breakdown(s, plan, split.stages, costs);
  r.experts = experts_report(s, r.peak_stage, split, costs);
  for (int k = 0; k < core::kCommBucketCount; ++k) r.comm[k].exposed_s = t.exposed_s[k];
  zero3_overlap(folds, r);

  rates(s, r);
  // the GPU runs kernels during its stage's compute (contention included); bubbles and exposed
  // communication count as idle
  r.to_train = to_train(s, r.step_s, r.compute_s);
  return r;
}

}  // namespace detail

core::Report assemble_report(const Step& step, StepTiming t) {
  const auto folds = detail::fold_stages(step.plan);
  return detail::assemble(step, folds, detail::comm_stats(step.plan, folds), std::move(t));
}

}  // namespace ptdsim::analytic
