#pragma once
#include <vector>

#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/units.hpp"

// Memory per GPU (docs/analytic.md "Memory"). Bytes.
namespace ptdsim::analytic {

struct LayerCosts;

// What a training process holds beside its tensors (docs/analytic.md "What the process holds
// beside its tensors"), each a measured figure:
// - the CUDA context (driver, kernels loaded): 1573 MiB on an A100, measured by BigScience for
//   BLOOM with torch.ones(1).cuda() and nvidia-smi (bigscience tr11-176B-ml chronicles-prequel.md);
//   CUDA before 11.7 loads every kernel at start, lazy loading after it starts near 400 MB and
//   grows with the kernels a run uses (PyTorch issues #109888, #107667), so this is the upper end;
inline constexpr double kCudaContextBytes = 1573.0 * 1024 * 1024;
// - NCCL's buffers per communicator, allocated when the communicator first runs a collective:
//   688 MiB for a group of more than 2 GPUs and 544 MiB for 2, measured with PyTorch on 4 A100s
//   over NVLink (NVIDIA/nccl issue #964); NCCL's buffers are per channel and per peer connection
//   (NCCL_BUFFSIZE 4 MiB for the Simple protocol, plus LL and LL128 buffers: NCCL docs, init.cc),
//   so the figure grows with the channel count, not with the group's size (nccl issue #986).
inline constexpr double kNcclCommBytes = 688.0 * 1024 * 1024;
inline constexpr double kNcclPairCommBytes = 544.0 * 1024 * 1024;

// Bytes per parameter held, by what is held (mixed precision: 16-bit weights, fp32 main gradients,
// fp32 master copy + Adam m, v; fp32/tf32 training keeps everything in fp32 and needs no master copy).
double weight_bytes_per_param(core::Precision p);
double gradient_bytes_per_param(core::Precision p);
double optimizer_bytes_per_param(const core::TrainingSpec& t);
// The gradients as held in memory: 16 bits when training.main_grads is 16bit (DeepSpeed), else
// gradient_bytes_per_param.
double held_gradient_bytes_per_param(const core::TrainingSpec& t);
// Bytes per parameter of the optimizer shard that the step's fp32 gradient copy takes (4) with
// the flat 16-bit copy it is converted from (2), when gradients are held in 16 bits; else 0.
double step_buffer_bytes_per_param(const core::TrainingSpec& t);

// The NCCL communicators a GPU of pipeline stage `stage` uses, each with its rank count: one per
// parallel group of more than one GPU (tp, cp, the gradient group dp*cp, ep, pp), the
// model-parallel group tp*pp (gradient-norm and overflow reductions), the whole job (barriers),
// and on the first and last stage of a pipeline with tied embeddings the embedding group.
struct Communicator {
  const char* group;
  int ranks;
};
std::vector<Communicator> communicators(const core::Scenario& s, int stage);

// What a GPU's process holds beside its tensors on pipeline stage `stage`: the CUDA context and
// NCCL's buffers (one figure per communicator). Kept apart from the tensors' terms.
struct ProcessOverhead {
  double context = 0;
  double nccl = 0;
};
ProcessOverhead process_overhead(const core::Scenario& s, int stage);

// The ranks that share (shard) optimizer states under ZeRO: Megatron's distributed optimizer shards
// over dp*cp for dense parameters and over dp*cp/ep for expert parameters.
int zero_shard_ranks(const core::Scenario& s, bool expert);

// Activations one transformer layer keeps for one micro-batch on one GPU (Korthikanti et al. 2022,
// section 4, generalised to GQA, swiglu and f != 4h; recompute, flash attention, SP, CP applied).
double activation_bytes_per_layer(const core::Scenario& s, bool moe_layer = false);
// The same under a given recomputation mode (activation_bytes_per_layer: the scenario's).
double layer_activation_bytes(const core::Scenario& s, bool moe_layer, core::Recompute recompute);
// Fine-grained activation offloading (training.offload_modules): the bytes of one MoE layer's
// saved activations, one micro-batch, one GPU, that go to the host after its forward and come back
// before its backward (docs/analytic.md "Activation offloading"); layer_activation_bytes leaves
// them out. 0 on a dense layer, without the key, or where the MoE block is recomputed.
double offloaded_activation_bytes(const core::Scenario& s, bool moe_layer, core::Recompute recompute);
// The bytes the copies carry for the same (under MXFP8 the experts' fc1 keeps, and moves, its
// quantised input, not the 16-bit copy the tool's activations count).
double offload_copy_bytes(const core::Scenario& s, bool moe_layer, core::Recompute recompute);

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
// The same with the split and the layer costs given (pipeline_layers(s), layer_costs(s)).
double peak_memory_bytes(const core::Scenario& s, const PipelineLayers& layers, const LayerCosts& costs);
// ZeRO-3's communication buffers on one GPU of a stage holding `layers`: the gathered units in
// flight, one unit's unsharded gradient, the framework's reduce bucket; `layer_params` one of its
// layers' parameters on one GPU (layer_params_per_gpu).
double zero3_buffer_bytes(const core::Scenario& s, const StageLayers& layers);
double zero3_buffer_bytes(const core::Scenario& s, const StageLayers& layers, const GpuParams& layer_params);

// Every pipeline stage's memory on one of its GPUs. `in_flight` (one per stage) replaces the
// schedule's closed-form in-flight counts when an engine measured them (the scheduler does).
std::vector<core::StageMemory> stage_memory(const core::Scenario& s,
                                            const std::vector<double>* in_flight = nullptr);
std::vector<core::StageMemory> stage_memory(const core::Scenario& s, const PipelineLayers& layers,
                                            const LayerCosts& costs, const std::vector<double>* in_flight);
// Stage `stage` alone, holding `in_flight` micro-batches' activations.
core::StageMemory stage_memory(const core::Scenario& s, int stage, const PipelineLayers& layers,
                               const LayerCosts& costs, double in_flight);

// The optimizer shard of one GPU of pipeline stage `stage`: its parameters over the ZeRO shard
// ranks from ZeRO-1 on (dense over dp*cp, experts over dp*cp/ep), all of them at ZeRO-0.
double optimizer_shard_params(const core::Scenario& s, int stage, const PipelineLayers& layers,
                              const LayerCosts& costs);
// The host bytes of the GPU that keeps the most there: under CPU offload analytic::host_bytes of
// its optimizer shard, and with offloaded activations (training.offload_modules) the pinned copies
// of every micro-batch its stage holds in flight; 0 with neither. A node holds gpus_sharing_host(s)
// times this at most.
double host_bytes_per_gpu(const core::Scenario& s, const PipelineLayers& layers, const LayerCosts& costs);

}  // namespace ptdsim::analytic
