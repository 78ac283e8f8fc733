#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/schedule.hpp"

// The step plan: one description of a training step that every engine reads (docs/architecture.md
// "The step: who builds what, who reads it"). plan_from_work() is the single place that knows how DP, ZeRO-1/2/3, TP/SP, CP, EP and
// PP turn into work: per pipeline stage and virtual chunk, each pass (F, B, W) is an ordered list of
// compute segments, and each segment carries its collectives with how they relate to its compute.
// The analytic engine folds the plan in closed form (evaluate.cpp), the discrete-event scheduler
// turns it into tasks (sim/step_graph.cpp) and the sweep's bound takes its minimum (planner/bound.cpp);
// none of them re-derives a rule.
namespace ptdsim::analytic {

struct LayerCosts;
struct PipelineLayers;

// The streams of one GPU: each runs one task at a time, in program order (CUDA stream semantics).
// Gradient reductions (dp) and parameter all-gathers (dp_gather) get separate streams, as in FSDP
// and Megatron's distributed optimizer, so a prefetch is not queued behind a reduction.
enum class Stream : std::uint8_t { compute, tp, cp, ep, dp, dp_gather, pp_send };
inline constexpr int kStreamCount = 7;

// How a collective relates to the compute of the segment it belongs to.
enum class Overlap : std::uint8_t {
  // After the segment's compute, and before anything that follows it in the pass: NCCL between
  // dependent GEMMs (TP without overlap, EP's dispatch and combine).
  serial,
  // On its own stream from the segment's start, beside its compute; the pass ends when both did.
  // It hides behind `window_s` of the compute (TP with userbuffers overlap: the GEMMs).
  beside,
  // On its own stream from when the last `window_s` of the segment's compute starts, beside it; the
  // pass ends when both did (CP's ring exchange beside the attention core).
  window,
  // A parameter all-gather the segment needs before it starts, on its own stream, issued once the
  // compute `depth` segments before this one is done (ZeRO-3 prefetch; depth 0: only after the
  // previous segment, i.e. no prefetch). It hides behind `window_s` of compute.
  prefetch,
  // On its own stream once the segment's compute is done; nothing in the pipeline waits for it,
  // only the optimizer (ZeRO-3 gradient reduce-scatter, a DP gradient bucket).
  after,
};

// The communication groups of a step (PlanComm::group). ZeRO-3 gathers and reduce-scatters over
// `shard` (dp*cp, or the shard group of hybrid sharding) and all-reduces across `replica`.
enum class GroupId : std::uint8_t { tp, cp, ep, dp, pp, shard, replica };
inline constexpr int kGroupCount = 7;

struct PlanComm {
  core::CommKind kind = core::CommKind::tp;
  Stream stream = Stream::tp;
  Overlap overlap = Overlap::serial;
  GroupId group = GroupId::tp;
  double time_s = 0;      // alone on its link: alpha + bytes * bus_factor / busbw
  double sent_bytes = 0;  // bytes one GPU sends (the report's volume)
  double window_s = 0;    // beside, window, prefetch: the compute it may hide behind
  // prefetch: how many segments ahead it may be issued. 0: once the previous segment's compute is
  // done (no prefetch); d: once the compute d+1 segments back is done, so d gathers run ahead.
  int depth = 0;
};
inline constexpr int kMaxPrefetchDepth = 64;
// A layer is cut into at most this many sharding units (a layer has a few dozen weight tensors).
inline constexpr int kMaxUnitsPerLayer = 64;

// `repeat` identical segments in a row: each computes `compute_s` and carries the collectives
// comms[comm_begin, comm_begin + comm_count) of StepPlan::comms, in order.
struct Segment {
  double compute_s = 0;
  double flops = 0;
  int repeat = 1;
  int comm_begin = 0;
  int comm_count = 0;
};

// One pass of one micro-batch through one chunk: segments[seg_begin, seg_begin + seg_count).
struct PassPlan {
  int seg_begin = 0;
  int seg_count = 0;
  double compute_s = 0;  // of all its segments
  double flops = 0;
};

// One virtual chunk of a pipeline rank (the whole rank when vpp == 1).
struct ChunkPlan {
  int layer_first = 0;
  int layers = 0;
  std::array<PassPlan, 3> pass{};  // F, B (with W unless the schedule splits it), W (split only)
  // The gradient pass (B, or W when split) of the step's last micro-batch: the same work as
  // pass[B or W] split where the DP gradient buckets are reduced as soon as they are complete.
  PassPlan last_grad;
  int send_forward = -1;   // comms index of the p2p after F (-1: the last virtual stage)
  int send_backward = -1;  // comms index of the p2p after B (-1: the first virtual stage)
};

struct StagePlan {
  int stage = 0;
  int layers = 0;
  int chunk_begin = 0;  // StepPlan::chunks[chunk_begin, chunk_begin + v)
  int comm_begin = 0, comm_end = 0;  // every collective of the stage: StepPlan::comms[begin, end)
  // Once per step, comms indices [begin, end):
  int start_begin = 0, start_end = 0;  // issued at the step's start; the stage's second pass waits
  int end_begin = 0, end_end = 0;      // after the stage's last pass; the optimizer waits
  int post_begin = 0, post_end = 0;    // after the optimizer
  double optimizer_s = 0;
  // CPU offload (docs/analytic.md "CPU offload"), serial after the stage's gradient reduction and
  // before its optimizer step: the gradients' copy to the host that the last backward did not hide,
  // the CPU's optimizer step, the updated parameters' copy back; offload_s their sum (0: none)
  double offload_s = 0;
  double offload_down_s = 0, offload_cpu_s = 0, offload_up_s = 0;
  double dp_bucket_count = 1;  // buckets of the last gradient pass (for the report's volumes)
  double grad_bytes = 0;       // gradient bytes this GPU reduces per step (before ZeRO-3's per-unit)
  // An earlier stage whose work this one repeats exactly: the same chunks' passes, segments and
  // collectives, number for number (the middle stages of an even split); -1 when none. It shares
  // that stage's segments and collectives (its indices are that stage's); only `stage`,
  // `chunk_begin` and its chunks' layer_first differ. A reader whose result depends on the numbers
  // alone (the analytic fold, the sweep's bound) may reuse that stage's instead of reading this one.
  int repeats = -1;
};

struct StepPlan {
  const core::ScheduleRules* schedule = nullptr;
  core::PipelineShape shape;  // p, v, m
  std::array<Group, kGroupCount> groups{};
  bool overlap_tp = false;  // TP beside the GEMMs (the report's `overlappable`)
  bool overlap_dp = true;   // DP gradient reduction overlapped with the backward
  bool overlap_pp = true;   // p2p sends asynchronous (the sender does not wait for them)
  double comm_share = 0;    // compute speed a running collective takes (GpuSpec::comm_share)
  UplinkShares fabric;      // the fabric above a rank's NIC (uplink_shares of the hardware)
  std::vector<StagePlan> stages;
  std::vector<ChunkPlan> chunks;
  std::vector<Segment> segments;
  std::vector<PlanComm> comms;

  const Group& group(GroupId g) const { return groups[static_cast<int>(g)]; }
  const ChunkPlan& chunk(const StagePlan& st, int c) const { return chunks[st.chunk_begin + c]; }
  // The pass of `ref` as it runs on stage `st`: its last gradient pass for the last micro-batch.
  const PassPlan& pass_of(const StagePlan& st, core::PassRef ref) const {  // (inline: once per simulated pass)
    const ChunkPlan& c = chunk(st, ref.chunk);
    if (ref.microbatch == shape.m - 1 && grad_pass(ref.pass)) return c.last_grad;
    return c.pass[static_cast<int>(ref.pass)];
  }
  bool grad_pass(core::Pass p) const {
    return p == (schedule->splits_weight_grad ? core::Pass::W : core::Pass::B);
  }
};

// What the step spends before plan_from_work() cuts it into passes: the closed forms of
// compute.cpp, comm.cpp and memory.cpp summed over each virtual stage's layers (per micro-batch)
// and over each pipeline rank (once per step). Tests write these by hand to drive the rules.
struct ChunkWork {  // one virtual stage, per micro-batch
  int layer_first = 0;
  int layers = 0;
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0, recompute_s = 0;
  double forward_flops = 0;
  double gemm_forward_s = 0;    // forward weight GEMMs (what TP communication may hide behind)
  // What CP's key/value exchange hides behind in F and in B: the part of its attention kernels it
  // runs beside (context_parallel.hpp cp_exchange; a recomputed forward's in B)
  double cp_forward_window_s = 0, cp_backward_window_s = 0;
  double tp_forward_s = 0, tp_backward_s = 0, tp_bytes = 0;  // bytes: sent, forward + backward
  double tp_serial_forward_s = 0, tp_serial_backward_s = 0;   // of those, serial even beside the GEMMs
  double cp_forward_s = 0, cp_backward_s = 0, cp_bytes = 0;
  double ep_forward_s = 0, ep_backward_s = 0, ep_bytes = 0;
  // ZeRO-3 per sharding unit (parallel.sharding.unit_layers): the all-gather of one unit's 16-bit
  // weights, the reduce-scatter of its gradients in the reduce dtype and, with hybrid sharding, the
  // all-reduce of that shard across the replicas; each includes the framework's host overhead.
  int zero3_units = 0;            // units in this virtual stage (0: not ZeRO-3)
  double zero3_unit_params = 0;   // parameters of one unit on one GPU before sharding
  double zero3_gather_s = 0, zero3_gather_bytes = 0;
  double zero3_reduce_s = 0, zero3_reduce_bytes = 0;
  double zero3_replica_s = 0, zero3_replica_bytes = 0;
  double grad_share = 0;  // of its rank's gradients (the DP buckets its last backward reduces)
};
struct StageWork {  // one pipeline rank, once per step
  double p2p_s = 0, p2p_bytes = 0;  // one send to a neighbour stage
  double grad_bytes = 0;            // gradient bytes this GPU holds before reduction
  // the step's gradient reduction (all-reduce, or reduce-scatter under ZeRO) and, from ZeRO-1 on,
  // the all-gather of the updated parameters; under ZeRO-3 only the embedding and head's
  double dp_reduce_s = 0, dp_reduce_bytes = 0, dp_gather_s = 0, dp_gather_bytes = 0;
  double optimizer_s = 0;  // the GPU's (the part of the optimizer CPU offload leaves it)
  // CPU offload: the gradients' copy to the host at the step's end (all of it; the plan decides
  // what the last backward hides), the CPU step, the parameters' copy back
  double offload_down_s = 0, offload_cpu_s = 0, offload_up_s = 0;
};
struct StepWork {
  std::vector<StageWork> stages;  // p
  std::vector<ChunkWork> chunks;  // p * v, in pipeline order: rank r's chunk k is chunks[k * p + r]
  // Per stage, 1 where step_work() made its work and each of its chunks' a copy of the stage
  // before's (PipelineLayers::repeats_previous), so they are equal bit for bit (layer_first aside)
  // and the planner need not compare them; empty or 0 where not known (work written by hand): the
  // planner compares. Whoever changes a stage's work after step_work() clears it.
  std::vector<std::uint8_t> copied_previous;
};

// The switches that decide how the stages' work combines.
struct PlanOptions {
  core::Schedule schedule = core::Schedule::one_f_one_b;
  int vpp = 1;
  int microbatches = 1;
  int zero = 0;
  bool overlap_tp = false;  // TP collectives beside the GEMMs (analytic::tp_overlaps)
  bool overlap_pp = true;
  bool overlap_dp = true;   // gradient buckets reduced as soon as the last backward made them
  bool zero3_prefetch = true;
  // EP's dispatch and combine of one micro-batch beside another's compute (Megatron-Core's
  // overlap_moe_expert_parallel_comm, the combined 1F1B), where the framework runs it
  // (analytic::ep_overlaps); ep_hidden_share says how much of a stage's EP it hides.
  bool overlap_ep = false;
  bool overlap_offload = true;      // gradients copied to the host beside the last backward (buckets)
  core::Sharding sharding;          // how the framework runs ZeRO-3 (zero == 3)
  bool recompute_full = false;      // full recomputation: the backward recomputes each unit's forward
  double comm_share = 0;
  UplinkShares fabric;  // uplink_shares(hardware): the links a step's transfers share
  double dp_bucket_bytes = 40e6 * 4;  // Megatron-LM's DDP bucket: 40M fp32 gradients
  std::array<Group, kGroupCount> groups{};
};

// ZeRO-3's rule for one pass of a sharding unit of `unit_params` parameters (on one GPU, before
// sharding): how many all-gathers it needs before it runs and how many units ahead they may be
// issued (docs/analytic.md "ZeRO-3 and FSDP"). The planner and the memory of the units in flight
// (memory.cpp) both read it.
struct Zero3Pass {
  int gathers = 0;
  int depth = 0;
};
Zero3Pass zero3_pass(const core::Sharding& sh, bool prefetch, bool recompute_full, core::Pass pass,
                     double unit_params);
// The sharding as the framework runs it on this layout: parallel.sharding, pipeline_accumulates
// only under pp > 1, and then the units kept gathered from forward to backward
// (reshard_after_forward false; torchtitan's apply_fsdp: "For PP, do not reshard after forward").
core::Sharding sharding_as_run(const core::Scenario& s);

// One pass of one chunk as the rules make it up, per micro-batch, before it is cut into segments:
// its compute, the collectives it carries, what each may hide behind and ZeRO-3's gathers. The
// planner cuts it into segments (plan_from_work) and the sweep's work bound takes each pass's
// floor from it (planner::work_lower_bound), so neither derives the makeup on its own.
struct PassMakeup {
  core::Pass pass = core::Pass::F;
  int units = 1;  // equal segments: ZeRO-3's sharding units, else 1
  double compute_s = 0, flops = 0;
  double tp_s = 0, tp_bytes = 0;
  bool tp_beside = false;   // TP beside the GEMMs (overlap_tp), else serial between them
  double tp_serial_s = 0;   // of tp_s, what stays serial beside them (LayerComm::tp_serial_forward_s)
  double tp_window_s = 0;   // the weight GEMMs, which TP beside them hides behind
  double cp_s = 0, cp_bytes = 0;
  double cp_window_s = 0;   // the attention kernels within the pass CP's exchange hides behind (0: serial)
  double ep_s = 0, ep_bytes = 0;
  // Some of EP beside the compute (PlanOptions::overlap_ep): how much depends on the stage
  // (ep_hidden_share), so the work bound takes the stages' extremes (planner/bound.cpp).
  bool ep_beside = false;
  Zero3Pass zero3;          // the unit's gathers before it runs and how far ahead (none below ZeRO-3)
};
// The share of pipeline rank `stage`'s (of `stages`) EP collectives that the combined 1F1B runs
// beside another micro-batch's compute (docs/analytic.md "Expert parallelism", EP overlap): the passes paired in
// its steady phase. Megatron-Core (schedules.py get_pp_rank_microbatches) runs w = 2(p - r - 1) +
// (v - 1)p + 1 forward passes before the first pair under interleaving, w = 1 without a pipeline
// (combined_1f1b_schedule_for_no_pipelining), and as many backward passes after the last, so
// (m·v - w) / (m·v) of each pass is paired. 0 when overlap_ep is off.
double ep_hidden_share(const PlanOptions& o, int stages, int stage);

// A chunk's F, B (with W unless the schedule splits it) and W passes (W's makeup empty unless split).
std::array<PassMakeup, 3> chunk_passes(const ChunkWork& c, const PlanOptions& o);

// The step's work from the scenario alone (tests; a Step builds it once, analytic/step.hpp).
StepWork step_work(const core::Scenario& s);
// The same from the layout's groups, layer costs and split (step_groups(s), layer_costs(s),
// pipeline_layers(s)), into `out`, whose storage is reused (the sweep works one candidate after
// another).
void step_work(const core::Scenario& s, const StepGroups& groups, const LayerCosts& costs,
               const PipelineLayers& split, StepWork& out);
// The switches of the scenario, with its groups (step_groups(s)).
PlanOptions plan_options(const core::Scenario& s, const StepGroups& groups);
// The same, resolving the groups (tests).
PlanOptions plan_options(const core::Scenario& s);
// The rules: how the step's work becomes passes, segments and collectives. Every engine's reading
// of a step starts here.
StepPlan plan_from_work(const StepWork& work, const PlanOptions& options);
// The same into `out`, whose storage is reused.
void plan_from_work(const StepWork& work, const PlanOptions& options, StepPlan& out);
// The plan of analytic::Step(s) (step.hpp), on its own. Assumes core::check(s) is empty.
StepPlan plan_step(const core::Scenario& s);

}  // namespace ptdsim::analytic
