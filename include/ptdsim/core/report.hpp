#pragma once
#include <array>
#include <string>
#include <vector>

#include "ptdsim/core/comm_kind.hpp"
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::core {

// Memory of one GPU of one pipeline stage, bytes.
struct StageMemory {
  int stage = 0;
  int layers = 0;
  double params = 0;        // parameters held by this GPU (after TP/PP/EP split, before ZeRO)
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;   // transformer layers x micro-batches in flight
  double embedding_activations = 0;  // input embedding output and dropout mask (first stage)
  double logits = 0;        // the fp32 logits the cross-entropy keeps (last stage)
  // the eager cross-entropy's further fp32 copies at its backward (last stage; analytic/allocator.hpp)
  double loss_buffers = 0;
  double buffers = 0;       // communication buffers (ZeRO-3 gathered layers, DP buckets)
  // the optimizer step's copies the caching allocator holds beside the cached activation blocks
  // (16-bit gradients converted to an fp32 shard, with the flat copy it is made from)
  double step_buffers = 0;
  double context = 0;       // the CUDA context (driver, loaded kernels)
  double nccl = 0;          // NCCL's buffers, for every communicator the GPU's process uses
  double in_flight = 0;     // micro-batches whose activations are held at the peak
  // what PyTorch's caching allocator holds at the peak on a GPU with room for it
  // (torch.cuda.max_memory_reserved): the tensors above, the segments they were rounded up to, and
  // `cache`, the freed blocks it keeps, which it gives back before a cudaMalloc fails
  // (analytic/allocator.hpp); never less than allocated()
  double reserved = 0;
  double cache = 0;
  double other() const {
    return embedding_activations + logits + loss_buffers + buffers + step_buffers + context + nccl;
  }
  // the tensors (torch.cuda.max_memory_allocated), the CUDA context and NCCL's buffers
  double total() const { return weights + gradients + optimizer + activations + other(); }
  // the tensors alone, what the allocator hands out
  double allocated() const {
    return weights + gradients + optimizer + activations + embedding_activations + logits + loss_buffers + buffers +
           step_buffers;
  }
  // what the GPU holds with room for the cache (nvidia-smi): the allocator's reserve, the CUDA
  // context and NCCL's buffers (which the allocator does not see)
  double device() const { return reserved + context + nccl; }
  // what it must hold, the cache given back: the fit check's figure
  double required() const { return reserved - cache + context + nccl; }
};

// Per communication kind, per GPU per step.
struct CommStats {
  double bytes = 0;          // bytes sent by one GPU
  double time_s = 0;         // time of all its collectives if nothing overlapped
  double exposed_s = 0;      // time left on the critical path
  double overlap_ratio = 0;  // t_comm / t_compute of the work it may overlap (< 1: can hide)
  bool overlappable = false; // whether the scenario lets it overlap at all
  bool crosses_nodes = false;
};

// Which engine produced a report's times.
enum class EngineKind { analytic, simulation };

// One part of what set the pace of a step (Report::bounded_by), largest first.
enum class BoundKind {
  compute,    // a stage's compute (stage >= 0) or every stage's together (stage == kAllStages)
  bubble,     // pipeline idle time (analytic engine)
  optimizer,
  comm,       // one kind of communication (BoundPart::comm)
  dp,         // data-parallel communication as a whole (analytic engine)
  offload,    // CPU offload's host copies and CPU optimizer step (training.offload)
};
struct BoundPart {
  static constexpr int kAllStages = -1;
  BoundKind kind = BoundKind::compute;
  CommKind comm = CommKind::tp;  // comm only
  int stage = kAllStages;        // compute only
  bool beside_compute = false;  // a transfer that ran beside compute yet set the pace
  double share = 0;             // of the step
  bool operator==(const BoundPart&) const = default;
};

// What one stretch of the step's critical path was spent on (Report::critical_path). Each instant
// of the step is given to exactly one cause, so the parts add up to the step (docs/simulator.md
// "Where the step goes").
enum class PathCause {
  compute,         // a stage's forward, backward, recompute (SM contention included)
  fill_drain,      // the pipeline's fill and drain: the busiest stage idle in its warm-up or
                   // cool-down while another stage computes
  wait_stage,      // the busiest stage idle in its steady phase while another (slower) stage computes
  tp, cp, ep,      // communication of the passes
  pp,              // pipeline sends
  dp_reduce,       // gradient reductions (DP buckets, ZeRO-3 reduce-scatters)
  dp_gather_wait,  // waiting for a parameter all-gather (ZeRO-1/2 after the update, ZeRO-3 per unit)
  optimizer,
  offload,         // CPU offload: gradients down, the CPU optimizer step, parameters up (training.offload)
  straggler,       // the wait for the slowest of the job's GPUs (hardware.jitter; docs/analytic.md "The cost of scale")
  fp8_amax,        // FP8 delayed scaling's blocking amax all-reduces (docs/analytic.md "FP8 amax reductions")
};
inline constexpr int kPathCauseCount = 13;
// The cause a transfer of kind k on the path is given: ZeRO-3's reduce-scatters count as gradient
// reductions and its all-gathers as waits for parameters (the CSV's fixed columns group them).
constexpr PathCause path_cause(CommKind k) {
  switch (k) {
    case CommKind::tp: return PathCause::tp;
    case CommKind::cp: return PathCause::cp;
    case CommKind::ep: return PathCause::ep;
    case CommKind::p2p: return PathCause::pp;
    case CommKind::dp_reduce:
    case CommKind::zero3_reduce: return PathCause::dp_reduce;
    case CommKind::dp_gather:
    case CommKind::zero3_gather: return PathCause::dp_gather_wait;
  }
  return PathCause::dp_reduce;
}
struct PathPart {
  PathCause cause = PathCause::compute;
  int stage = -1;    // compute and wait_stage: the stage whose compute it is; else -1
  double seconds = 0;
  bool operator==(const PathPart&) const = default;
};
// The parts' key in JSON and CSV ("compute_stage_15", "fill_drain", "dp_gather_wait").
std::string path_key(const PathPart& p);
// In words, for the table ("stage 15 compute", "pipeline fill and drain").
std::string path_words(const PathPart& p);
// Seconds per cause, stages summed (the CSV's fixed columns).
std::array<double, kPathCauseCount> path_by_cause(const std::vector<PathPart>& parts);

// The parts worth naming: the three largest shares of at least 2% (the largest alone if none is),
// largest first, ties in the given order. A reader wants what to attack first.
std::vector<BoundPart> largest_parts(std::vector<BoundPart> parts);

// The operators of one training step's compute (docs/analytic.md "Compute from measured kernels"),
// in the order a layer runs them. Names are built only when rendering (core::name).
enum class Operator {
  embedding, input_norm, qkv, attention, proj, attention_dropout_add, mlp_norm, fc1, fc1_gated, gelu,
  swiglu, fc2, router, permute, unpermute, mlp_dropout_add, logits, cross_entropy, optimizer, overhead,
  rope, fp8_cast,
  // MLA's projections (qkv's place) and its latents' norms; a MoE layer's shared experts; the MTP
  // modules' projections, logits and losses on the last stage
  q_down, q_up, kv_down, kv_up, latent_norm, shared_fc1, shared_activation, shared_fc2, mtp,
  qk_norm  // per-head query and key norms (model.qk_norm)
};
inline constexpr int kOperatorCount = 32;
enum class OperatorKind { gemm, attention, memory_bound, loss, optimizer, overhead };
inline constexpr int kOperatorKindCount = 6;
// Where an operator's time came from: a measured row, a model fitted to measured rows, the scalar
// matmul efficiency, the scalar HBM efficiency, or the end-to-end fit (overhead).
enum class TimeSource { measured, model, scalar_efficiency, hbm_efficiency, fitted };
inline constexpr int kTimeSourceCount = 5;

// One operator on one GPU for one micro-batch (the optimizer: once per step), seconds.
struct OperatorTime {
  Operator op = Operator::qkv;
  OperatorKind kind = OperatorKind::gemm;
  TimeSource source = TimeSource::model;
  // GEMM: y[m,n] = x[m,k] W^T, `count` of them (experts). Attention: m query rows, n key rows,
  // k head_dim, count = batch x local heads. Memory-bound and loss: m rows of width n (k = 0).
  // Optimizer: m parameters.
  double m = 0, n = 0, k = 0, count = 1;
  double forward_s = 0;
  double backward_input_s = 0;   // B
  double backward_weight_s = 0;  // W
  double total_s() const { return forward_s + backward_input_s + backward_weight_s; }
};

// Where one step's compute goes: the operators of one transformer layer (and of an MoE layer when
// the model mixes them), the ends (embedding, logits, loss, optimizer), and the share of the whole
// model's compute per step of each kind (recomputation included).
struct ComputeBreakdown {
  std::vector<OperatorTime> layer;
  std::vector<OperatorTime> moe_layer;  // empty unless the model has both dense and MoE layers
  std::vector<OperatorTime> other;
  std::array<double, kOperatorKindCount> share{};
};

// The whole run (training.tokens) at the step's pace: its length, GPU-hours, GPU energy and cost
// (docs/analytic.md "Time, energy and cost to train"). All zero when no token budget is given.
struct ToTrain {
  double tokens = 0;
  double steps = 0;        // tokens / (global_batch * seq_len)
  double seconds = 0;      // steps * step_s
  double gpu_hours = 0;    // seconds * gpus / 3600
  double gpu_power_w = 0;  // one GPU's mean draw over a step; 0: the hardware gives no power
  double energy_j = 0;     // every GPU over the run; 0 when the power is not known
  double cost = 0;         // gpu_hours * cost.gpu_hour; 0 when no price is given
  bool known() const { return tokens > 0; }
  bool has_energy() const { return known() && gpu_power_w > 0; }
  bool has_cost(const Scenario& s) const { return known() && s.cost.gpu_hour > 0; }
  double days() const { return seconds / 86400; }
};

// An MoE model's experts on one GPU (docs/analytic.md "Expert parallelism", "In the report");
// `present` false without experts.
struct ExpertsReport {
  bool present = false;
  int etp = 1, ep = 1, edp = 1;    // expert tensor parallel, expert parallel, the experts' data parallel
  Scope ep_scope = Scope::intra;   // where the dispatcher's group lands: inside the NVLink domain or across
  int ep_ranks_per_node = 1;
  double busiest = 1;              // the busiest expert's tokens over the mean (training.moe)
  double params = 0;               // expert parameters on a GPU of the peak stage
  double state_bytes = 0;          // their weights, gradients and optimizer states there
  // One MoE layer, one micro-batch, forward + backward (+ recompute), seconds: the router, the
  // permute and unpermute, the routed experts' grouped GEMMs and activation, the dispatch and combine
  double router_s = 0, permute_s = 0, experts_s = 0, dispatch_s = 0;
  double dispatch_bytes = 0;       // what one GPU sends for that layer's dispatch and combine
};

struct Report {
  Scenario scenario;  // as evaluated (dp derived, defaults applied)

  // model
  double params = 0;
  double active_params = 0;  // touched per token (MoE: top_k routed and the shared experts); = params if dense
  double model_flops_per_step = 0;     // fwd+bwd of one global batch, no recomputation
  double hardware_flops_per_step = 0;  // plus recomputed work

  // memory
  std::vector<StageMemory> stages;
  double peak_bytes = 0;            // the largest stage's required(): what must fit, the fit check's
  double peak_allocated_bytes = 0;  // that stage's tensors (StageMemory::allocated)
  double peak_reserved_bytes = 0;   // that stage's allocator reserve with room (StageMemory::reserved)
  double peak_device_bytes = 0;     // that stage's device(): the reserve, CUDA context and NCCL (nvidia-smi)
  int peak_stage = 0;
  double capacity_bytes = 0;
  bool fits = true;
  // What else fits on the layout (analytic::capacity; evaluate fills them, the sweep does not):
  // the largest micro-batch and the longest sequence; 0: not even the scenario's; -1: not computed
  int fit_micro_batch = -1;
  int fit_seq_len = -1;
  // CPU offload (training.offload): what one GPU keeps in host memory (the busiest stage's), the
  // node's total (every GPU of the node holding as much), the node's host memory; fits needs both
  double host_bytes_per_gpu = 0;
  double host_bytes_per_node = 0;
  double host_capacity_bytes = 0;
  bool host_fits = true;

  // time, seconds
  double step_s = 0;
  double compute_s = 0;    // the busiest stage's forward + backward (+ recompute) work
  double contention_s = 0; // of compute_s: lost to the SMs held by collectives running beside it
  double bubble_s = 0;     // pipeline idle time of that stage
  double optimizer_s = 0;
  // CPU offload (training.offload; all 0 without it), the slowest stage's, seconds per step: what of
  // the gradients' copy to the host the backward does not hide, the CPU optimizer step, the copy
  // of the updated parameters back; offload_s their sum, serial after the backward (and before the
  // GPU's optimizer step, which does the rest of the fraction)
  double offload_s = 0;
  double offload_down_s = 0, offload_cpu_s = 0, offload_up_s = 0;
  double stage_forward_s = 0;   // per micro-batch, the slowest stage
  double stage_backward_s = 0;
  std::array<CommStats, kCommBucketCount> comm{};  // per GPU: the busiest GPU's (a middle stage's for pp)
  // PP bytes one GPU of the first or the last stage sends: no gradient goes back from the first
  // virtual stage and no activation forward from the last, so they send less than comm[pp] (0: pp 1)
  double pp_end_bytes = 0;
  // ZeRO-3, one sharding unit (0 without ZeRO-3): t_comm / t_compute of its forward (its all-gather
  // over its forward compute, the seed notes' condition) and of its backward (its gathers, reduce-
  // scatter and replica all-reduce over its backward compute); whether gathers are issued ahead
  double zero3_overlap_ratio = 0;
  double zero3_backward_ratio = 0;
  bool zero3_prefetch = false, zero3_backward_prefetch = false;
  std::vector<BoundPart> bounded_by;  // what set the pace, largest first (names.hpp: describe)
  // Where the step goes: the critical path cut into causes that add up to step_s (compute per
  // stage first, by stage, then the other causes in PathCause order). compute_s, bubble_s and the
  // exposed times above are per-kind totals that may overlap one another; these do not.
  std::vector<PathPart> critical_path;

  // throughput
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  // TFLOP/s (model FLOPs)
  // TFLOP/s per GPU as Megatron-LM and Megatron-Bridge log it (analytic/megatron_count.hpp, 2025),
  // to set beside their logs
  double megatron_tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  double mfu_peak_flops = 0;  // the peak MFU and HFU divide by: the GPU's for the training precision
  double mfu_bf16 = 0;        // MFU against the bf16 peak, beside runs in another precision; else 0

  ToTrain to_train;

  // where the compute goes (analytic::compute_breakdown)
  ComputeBreakdown compute;
  ExpertsReport experts;

  EngineKind engine = EngineKind::analytic;
  // What a reader must not miss: a layout that does not fit, inputs used outside what they describe.
  std::vector<std::string> warnings;

  const CommStats& of(CommBucket k) const { return comm[static_cast<int>(k)]; }
  CommStats& of(CommBucket k) { return comm[static_cast<int>(k)]; }
};

// ZeRO-3's per-unit overlap in words ("" without ZeRO-3), forward and backward: hidden (gathers
// issued ahead and the ratio at most 1), partly exposed (ratio above 1) or exposed (no prefetch).
std::string zero3_verdict(const Report& r);

}  // namespace ptdsim::core
