#pragma once
#include <vector>

#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/units.hpp"

// Memory per GPU (docs/analytic.md "Memory"). Bytes.
namespace ptdsim::analytic {

// The CUDA context and allocator reserve each GPU loses before training starts. formulas.md gives
// 0.5 to 1 GiB; we take the middle.
inline constexpr double kCudaContextBytes = 0.75 * core::kGiB;

// Bytes per parameter held, by what is held (mixed precision: 16-bit weights, fp32 main gradients,
// fp32 master copy + Adam m, v; fp32/tf32 training keeps everything in fp32 and needs no master copy).
double weight_bytes_per_param(core::Precision p);
double gradient_bytes_per_param(core::Precision p);
double optimizer_bytes_per_param(const core::TrainingSpec& t);

// The ranks that share (shard) optimizer states under ZeRO: Megatron's distributed optimizer shards
// over dp*cp for dense parameters and over dp*cp/ep for expert parameters.
int zero_shard_ranks(const core::Scenario& s, bool expert);

// Activations one transformer layer keeps for one micro-batch on one GPU (Korthikanti et al. 2022,
// section 4, generalised to GQA, swiglu and f != 4h; recompute, flash attention, SP, CP applied).
double activation_bytes_per_layer(const core::Scenario& s, bool moe_layer = false);

// Micro-batches whose activations a pipeline rank holds at its peak, the schedule's closed form
// (core::ScheduleRules::in_flight; fractional with interleaving: chunks in flight / vpp).
double in_flight_microbatches(const core::Scenario& s, int stage);

// Korthikanti et al.'s Figure 1 quantities, exactly as the paper counts them (transformer layers only):
// first-stage activations L * per_layer * (1 + (p-1)/(p*v)) (the factor only with vpp > 1)...
double korthikanti_first_stage_activation_bytes(const core::Scenario& s);
// ... and parameters plus optimizer states 12*h^2*L/(t*p) params * 18 bytes (2 + 4 + 12).
double korthikanti_params_and_optimizer_bytes(const core::Scenario& s);

// The largest of stage_memory(s)'s totals: what a GPU must hold under the schedule's closed form.
double peak_memory_bytes(const core::Scenario& s);
// ZeRO-3's communication buffers on one GPU of a stage holding `layers`: the gathered units in
// flight, one unit's unsharded gradient, the framework's reduce bucket.
double zero3_buffer_bytes(const core::Scenario& s, const StageLayers& layers);

// Every pipeline stage's memory on one of its GPUs. `in_flight` (one per stage) replaces the
// schedule's closed-form in-flight counts when an engine measured them (the scheduler does).
std::vector<core::StageMemory> stage_memory(const core::Scenario& s,
                                            const std::vector<double>* in_flight = nullptr);

}  // namespace ptdsim::analytic
