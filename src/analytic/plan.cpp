#include "ptdsim/analytic/plan.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/offload.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::analytic {

Zero3Pass zero3_pass(const core::Sharding& sh, bool prefetch, bool recompute_full, core::Pass pass,
                     double unit_params) {
  // Prefetch: none when switched off or when the framework synchronises around every collective; at
  // most prefetch_units ahead; none beyond max_live_params gathered parameters (DeepSpeed prefetches
  // only while fewer than stage3_max_live_parameters are live, the unit computing included).
  int depth = prefetch && !sh.sync ? sh.prefetch_units : 0;
  if (sh.max_live_params > 0 && unit_params > 0) {
    const double live = std::min(std::ceil(sh.max_live_params / unit_params), kMaxPrefetchDepth + 1.0);
    depth = std::min(depth, std::max(0, static_cast<int>(live) - 1));
  }
  depth = std::clamp(depth, 0, kMaxPrefetchDepth);
  Zero3Pass z;
  switch (pass) {
    case core::Pass::F:
      z.gathers = 1;
      z.depth = depth;
      break;
    case core::Pass::B:
      // Resharded after the forward: gathered again for the backward, and once more before it when
      // the recomputed forward re-gathers (DeepSpeed's per-module hooks; FSDP checkpoints inside the
      // unit, whose gathered parameters the recomputation reuses). Kept gathered: none.
      z.gathers = sh.reshard_after_forward ? 1 + (sh.regather_on_recompute && recompute_full ? 1 : 0) : 0;
      z.depth = sh.backward_prefetch ? depth : 0;
      break;
    case core::Pass::W: break;  // weight gradients need the activations, not the weights
  }
  return z;
}

core::Sharding sharding_as_run(const core::Scenario& s) {
  core::Sharding sh = s.parallel.sharding;
  if (s.parallel.pp <= 1) sh.pipeline_accumulates = false;  // no pipeline: nothing to accumulate over
  if (sh.pipeline_accumulates) sh.reshard_after_forward = false;
  return sh;
}

double ep_hidden_share(const PlanOptions& o, int stages, int stage) {
  if (!o.overlap_ep) return 0.0;
  const int p = std::max(1, stages), v = std::max(1, o.vpp);
  const double passes = static_cast<double>(std::max(1, o.microbatches)) * v;
  const double unpaired = p == 1 ? 1.0 : 2.0 * (p - stage - 1) + (v - 1.0) * p + 1;
  return std::max(0.0, passes - unpaired) / passes;
}

std::array<PassMakeup, 3> chunk_passes(const ChunkWork& c, const PlanOptions& o) {
  const bool split = core::schedule_rules(o.schedule).splits_weight_grad;
  const bool zero3 = o.zero >= 3 && c.zero3_units > 0;
  // (each makeup built whole in its place: a default one overwritten field by field cost a tenth
  // of an evaluation's plan)
  auto make = [&](core::Pass pass, double compute, double flops, double gemm, double cp_window, double tp,
                  double tp_serial, double cp, double ep, double share) {
    return PassMakeup{
        .pass = pass,
        .units = zero3 ? c.zero3_units : 1,  // ZeRO-3: a segment per unit
        .compute_s = compute,
        .flops = flops,
        .tp_s = tp,
        .tp_bytes = c.tp_bytes * share,
        .tp_beside = o.overlap_tp,
        .tp_serial_s = o.overlap_tp ? tp_serial : 0.0,
        .tp_window_s = gemm,
        .cp_s = cp,
        .cp_bytes = c.cp_bytes * share,
        // CP's key/value exchange hides behind the attention kernels only: the projections before
        // them produce the keys and values, the ones after need their output.
        .cp_window_s = std::min(compute, cp_window),
        .ep_s = ep,
        .ep_bytes = c.ep_bytes * share,
        .ep_beside = o.overlap_ep && ep > 0,
        .zero3 = zero3 ? zero3_pass(o.sharding, o.zero3_prefetch, o.recompute_full, pass, c.zero3_unit_params)
                       : Zero3Pass{},
    };
  };
  return {
      make(core::Pass::F, c.forward_s, c.forward_flops, c.gemm_forward_s, c.cp_forward_window_s, c.tp_forward_s,
           c.tp_serial_forward_s, c.cp_forward_s, c.ep_forward_s, 0.5),
      // B: the recomputed forward it needs, the input gradients and, unless split off, the weight
      // gradients; each weight GEMM has an input- and a weight-gradient GEMM of its forward's size
      make(core::Pass::B, c.recompute_s + c.backward_input_s + (split ? 0 : c.backward_weight_s),
           c.forward_flops * (split ? 1 : 2), (split ? 1 : 2) * c.gemm_forward_s, c.cp_backward_window_s,
           c.tp_backward_s, c.tp_serial_backward_s, c.cp_backward_s, c.ep_backward_s, 0.5),
      // W on its own only where the schedule splits it (no reader looks at it otherwise)
      split ? make(core::Pass::W, c.backward_weight_s, c.forward_flops, c.gemm_forward_s, 0, 0, 0, 0, 0, 0)
            : PassMakeup{.pass = core::Pass::W, .zero3 = {}},
  };
}

namespace {

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// Equal work, bit for bit (layer_first aside: where a chunk's layers start changes no number).
// Every field is compared: a field added to ChunkWork or StageWork must be added here, which the
// size checks below enforce.
static_assert(sizeof(ChunkWork) == 3 * sizeof(int) + 27 * sizeof(double) + 4,  // 4: padding after zero3_units
              "a field was added to ChunkWork: compare it in same_work");
bool same_work(const ChunkWork& a, const ChunkWork& b) {
  return a.layers == b.layers && a.zero3_units == b.zero3_units && same_bits(a.forward_s, b.forward_s) &&
         same_bits(a.backward_input_s, b.backward_input_s) && same_bits(a.backward_weight_s, b.backward_weight_s) &&
         same_bits(a.recompute_s, b.recompute_s) && same_bits(a.forward_flops, b.forward_flops) &&
         same_bits(a.gemm_forward_s, b.gemm_forward_s) && same_bits(a.cp_forward_window_s, b.cp_forward_window_s) &&
         same_bits(a.cp_backward_window_s, b.cp_backward_window_s) &&
         same_bits(a.tp_forward_s, b.tp_forward_s) && same_bits(a.tp_backward_s, b.tp_backward_s) &&
         same_bits(a.tp_serial_forward_s, b.tp_serial_forward_s) &&
         same_bits(a.tp_serial_backward_s, b.tp_serial_backward_s) &&
         same_bits(a.tp_bytes, b.tp_bytes) && same_bits(a.cp_forward_s, b.cp_forward_s) &&
         same_bits(a.cp_backward_s, b.cp_backward_s) && same_bits(a.cp_bytes, b.cp_bytes) &&
         same_bits(a.ep_forward_s, b.ep_forward_s) && same_bits(a.ep_backward_s, b.ep_backward_s) &&
         same_bits(a.ep_bytes, b.ep_bytes) && same_bits(a.zero3_unit_params, b.zero3_unit_params) &&
         same_bits(a.zero3_gather_s, b.zero3_gather_s) && same_bits(a.zero3_gather_bytes, b.zero3_gather_bytes) &&
         same_bits(a.zero3_reduce_s, b.zero3_reduce_s) && same_bits(a.zero3_reduce_bytes, b.zero3_reduce_bytes) &&
         same_bits(a.zero3_replica_s, b.zero3_replica_s) && same_bits(a.zero3_replica_bytes, b.zero3_replica_bytes) &&
         same_bits(a.grad_share, b.grad_share);
}
static_assert(sizeof(StageWork) == 11 * sizeof(double), "a field was added to StageWork: compare it in same_work");
bool same_work(const StageWork& a, const StageWork& b) {
  return same_bits(a.p2p_s, b.p2p_s) && same_bits(a.p2p_bytes, b.p2p_bytes) && same_bits(a.grad_bytes, b.grad_bytes) &&
         same_bits(a.dp_reduce_s, b.dp_reduce_s) && same_bits(a.dp_reduce_bytes, b.dp_reduce_bytes) &&
         same_bits(a.dp_gather_s, b.dp_gather_s) && same_bits(a.dp_gather_bytes, b.dp_gather_bytes) &&
         same_bits(a.optimizer_s, b.optimizer_s) && same_bits(a.offload_down_s, b.offload_down_s) &&
         same_bits(a.offload_cpu_s, b.offload_cpu_s) && same_bits(a.offload_up_s, b.offload_up_s);
}

// The rules: each chunk's passes, cut into segments that carry their collectives.
class Planner {
 public:
  Planner(const StepWork& work, const PlanOptions& o, StepPlan& out) : work_(work), o_(o), plan_(out) {}

  void build() {
    const int p = static_cast<int>(work_.stages.size()), v = std::max(1, o_.vpp);
    plan_.schedule = &core::schedule_rules(o_.schedule);
    plan_.shape = core::PipelineShape{p, v, std::max(1, o_.microbatches)};
    plan_.groups = o_.groups;
    plan_.overlap_tp = o_.overlap_tp;
    plan_.overlap_dp = o_.overlap_dp;
    plan_.overlap_pp = o_.overlap_pp;
    plan_.comm_share = o_.comm_share;
    plan_.fabric = o_.fabric;
    split_ = plan_.schedule->splits_weight_grad;
    // cleared, not freed: a plan reused for the next candidate keeps its storage. Every stage and
    // chunk is written whole below (add_stage starts each from a default one, share_previous copies
    // one), so what the storage held is never read and need not be reset first.
    plan_.segments.clear();
    plan_.comms.clear();
    plan_.stages.resize(p);
    plan_.chunks.resize(static_cast<std::size_t>(p) * v);
    plan_.segments.reserve(static_cast<std::size_t>(p) * v * 4);
    plan_.comms.reserve(static_cast<std::size_t>(p) * v * 10);
    for (int r = 0; r < p; ++r) {
      if (r > 0 && repeats_previous(r)) share_previous(r);
      else add_stage(r);
    }
  }

 private:
  // Whether stage r's plan is stage r-1's, number for number: the same per-step work, each chunk's
  // work the same (its layers may start elsewhere), the same sends and the same receivers' forward
  // (a send's window). Then add_stage would compute the same values: they are shared instead.
  bool repeats_previous(int r) const {
    const int p = plan_.shape.p, v = plan_.shape.v, V = p * v;
    // (step_work() says where it copied: comparing the work again would cost a fifth of a plan)
    const bool copied = static_cast<std::size_t>(r) < work_.copied_previous.size() && work_.copied_previous[r];
    if (!copied && !same_work(work_.stages[r], work_.stages[r - 1])) return false;
    // the combined 1F1B pairs fewer passes on earlier stages: EP hidden differently
    if (o_.overlap_ep && !same_bits(ep_hidden_share(o_, p, r), ep_hidden_share(o_, p, r - 1))) return false;
    const bool sends = work_.stages[r].p2p_s > 0;
    const ChunkWork* chunks = work_.chunks.data();
    for (int k = 0; k < v; ++k) {
      const int vs = k * p + r;  // >= 1 (r >= 1)
      if (!copied && !same_work(chunks[vs], chunks[vs - 1])) return false;
      if (!sends) continue;
      // the same sends: virtual stage 1 sends back to the first (which sends none back) and V - 1
      // is the last (which sends none on); the same window: the receiver's forward (vs - 1's
      // receiver is vs)
      if (vs == 1 || vs == V - 1) return false;
      if (!same_bits(chunks[vs + 1].forward_s, chunks[vs].forward_s)) return false;
    }
    return true;
  }

  // Stage r as the stage it repeats (r-1's, or the one r-1 repeats): its chunks and collective
  // ranges are that stage's, so its segments and collectives are shared, not copied (a copy would
  // cost a fifth of an evaluation); only the stage number, its chunks' place and layer_first differ.
  void share_previous(int r) {
    const int v = plan_.shape.v;
    const StagePlan& prev = plan_.stages[r - 1];
    const int src = prev.repeats >= 0 ? prev.repeats : r - 1;
    for (int k = 0; k < v; ++k) {
      ChunkPlan& c = plan_.chunks[static_cast<std::size_t>(r) * v + k];
      c = plan_.chunks[static_cast<std::size_t>(src) * v + k];
      c.layer_first = work_.chunks[k * plan_.shape.p + r].layer_first;
    }
    StagePlan& sp = plan_.stages[r];
    sp = plan_.stages[src];
    sp.stage = r;
    sp.chunk_begin = r * v;
    sp.repeats = src;
  }

  // Every element is written in place in the plan's storage (no temporary copied in: building a
  // plan is most of what the sweep does per candidate).
  int add_comm(core::CommKind kind, Stream stream, Overlap overlap, GroupId group, double time_s, double sent_bytes,
               double window_s, int depth) {
    PlanComm& c = plan_.comms.emplace_back();
    c.kind = kind;
    c.stream = stream;
    c.overlap = overlap;
    c.group = group;
    c.time_s = time_s;
    c.sent_bytes = sent_bytes;
    c.window_s = window_s;
    c.depth = depth;
    return static_cast<int>(plan_.comms.size()) - 1;
  }

  // One pass of one chunk: `nseg` equal segments of its compute, each with its collectives.
  PassPlan add_pass(const PassMakeup& w, const ChunkWork& c, int nseg, double bucket_s, double bucket_bytes) {
    const bool zero3 = o_.zero >= 3 && c.zero3_units > 0;
    const bool makes_grads = w.pass == core::Pass::W || (w.pass == core::Pass::B && !split_);
    const Zero3Pass& z = w.zero3;
    // one segment's share (x / 1 is x exactly: most passes are one segment)
    auto per = [nseg](double x) { return nseg == 1 ? x : x / nseg; };
    PassPlan pp;
    pp.seg_begin = static_cast<int>(plan_.segments.size());
    pp.seg_count = 1;
    pp.compute_s = w.compute_s;
    pp.flops = w.flops;
    Segment& seg = plan_.segments.emplace_back();
    seg.compute_s = per(w.compute_s);
    seg.flops = per(w.flops);
    seg.repeat = nseg;
    seg.comm_begin = static_cast<int>(plan_.comms.size());
    if (z.gathers > 0 && c.zero3_gather_s > 0) {
      // the unit's parameters, gathered before it runs (twice when the backward first recomputes
      // its forward and the framework re-gathers for it), issued up to `depth` units ahead
      add_comm(core::CommKind::zero3_gather, Stream::dp_gather, Overlap::prefetch, GroupId::shard,
               z.gathers * c.zero3_gather_s, z.gathers * c.zero3_gather_bytes, z.depth > 0 ? seg.compute_s : 0.0,
               z.depth);
    }
    if (w.tp_s > 0) {
      // TP collectives sit between dependent GEMMs; with overlap they run beside them, chunked
      // (Megatron's tp-comm-overlap), hiding behind the GEMMs, but for those a kernel separates
      // from their GEMM (tp_serial_s), which stay between
      const double serial = w.tp_beside ? w.tp_serial_s : w.tp_s, beside = w.tp_s - serial;
      const double bytes_per_s = w.tp_bytes / w.tp_s;
      if (beside > 0)
        add_comm(core::CommKind::tp, Stream::tp, Overlap::beside, GroupId::tp, per(beside),
                 per(serial > 0 ? beside * bytes_per_s : w.tp_bytes), per(w.tp_window_s), 0);
      // (the window once: the overlap ratio sets the pass's TP against its GEMMs)
      if (serial > 0)
        add_comm(core::CommKind::tp, Stream::tp, Overlap::serial, GroupId::tp, per(serial),
                 per(beside > 0 ? serial * bytes_per_s : w.tp_bytes), beside > 0 ? 0.0 : per(w.tp_window_s), 0);
    }
    if (w.cp_s > 0) {  // beside the attention core (PassMakeup::cp_window_s), serial without one
      const double window = per(w.cp_window_s);
      add_comm(core::CommKind::cp, Stream::cp, window > 0 ? Overlap::window : Overlap::serial, GroupId::cp, per(w.cp_s),
               per(w.cp_bytes), window, 0);
    }
    if (w.ep_s > 0) {
      // EP's all-to-all feeds the experts: serial; under the combined 1F1B the share of the passes
      // paired with another micro-batch's runs beside that one's compute (here this pass's own, of
      // the same layers: docs/analytic.md "Expert parallelism")
      const double hidden = w.ep_beside ? ep_hidden_ : 0.0;
      if (hidden > 0)
        add_comm(core::CommKind::ep, Stream::ep, Overlap::beside, GroupId::ep, per(hidden * w.ep_s),
                 per(hidden * w.ep_bytes), seg.compute_s, 0);
      if (hidden < 1)
        add_comm(core::CommKind::ep, Stream::ep, Overlap::serial, GroupId::ep, per((1 - hidden) * w.ep_s),
                 per((1 - hidden) * w.ep_bytes), seg.compute_s, 0);
    }
    if (zero3 && makes_grads && c.zero3_reduce_s > 0) {
      // the unit's gradients, reduce-scattered once its gradient pass made them (per micro-batch:
      // ZeRO-3 keeps no unsharded gradients), then, with hybrid sharding, all-reduced across replicas
      const Overlap o = o_.sharding.sync ? Overlap::serial : Overlap::after;
      add_comm(core::CommKind::zero3_reduce, Stream::dp, o, GroupId::shard, c.zero3_reduce_s, c.zero3_reduce_bytes, 0, 0);
      if (c.zero3_replica_s > 0)
        add_comm(core::CommKind::zero3_reduce, Stream::dp, o, GroupId::replica, c.zero3_replica_s, c.zero3_replica_bytes,
                 0, 0);
    }
    if (bucket_s > 0) {  // a DP gradient bucket, reduced as soon as its gradients are complete
      add_comm(core::CommKind::dp_reduce, Stream::dp, Overlap::after, GroupId::dp, per(bucket_s), per(bucket_bytes), 0, 0);
    }
    seg.comm_count = static_cast<int>(plan_.comms.size()) - seg.comm_begin;
    return pp;
  }

  // Stage r: its chunks' passes and sends, then the collectives it runs once per step.
  void add_stage(int r) {
    const int p = plan_.shape.p, v = plan_.shape.v;
    const StageWork& st = work_.stages[r];
    const bool buckets = o_.zero < 3 && o_.overlap_dp && st.dp_reduce_s > 0;
    ep_hidden_ = ep_hidden_share(o_, p, r);

    // Stages and chunks start as copies of a default one, a constant: copies of a temporary on the
    // stack made GCC store and reload it per element, stalling on the reload.
    static const StagePlan kFreshStage{};
    StagePlan& sp = plan_.stages[r];
    sp = kFreshStage;
    sp.stage = r;
    sp.chunk_begin = r * v;
    sp.comm_begin = static_cast<int>(plan_.comms.size());
    sp.optimizer_s = st.optimizer_s;
    sp.grad_bytes = st.grad_bytes;
    sp.dp_bucket_count = 0;
    double forward_s = 0, backward_s = 0;  // the stage's, per micro-batch (the DP collectives' windows)
    for (int k = 0; k < v; ++k) {
      const ChunkWork& cw = work_.chunks[k * p + r];
      sp.layers += cw.layers;
      forward_s += cw.forward_s;
      backward_s += cw.backward_input_s + cw.backward_weight_s + cw.recompute_s;
      add_chunk(r, k, st, buckets, sp);
    }
    if (sp.dp_bucket_count == 0) sp.dp_bucket_count = 1;
    add_step_collectives(st, buckets, forward_s, backward_s, sp);
    add_offload(st, buckets, backward_s, sp);
  }

  // CPU offload's phase (docs/analytic.md "CPU offload"), serial after the stage's gradient
  // reduction and before its optimizer step. DeepSpeed copies each reduced gradient bucket to the
  // host during the last backward (stage_1_and_2.py, cpu_offload:
  // async_inplace_copy_grad_to_fp32_buffer_from_gpu from the reduction), so what the backward after
  // the first bucket does not hide stays, and at least the last bucket's copy; the CPU step and the
  // parameters' copy back are serial before the next step (ZeRO-Offload's one-step delayed update
  // is off by default).
  void add_offload(const StageWork& st, bool buckets, double backward_s, StagePlan& sp) {
    if (!(st.offload_down_s > 0 || st.offload_cpu_s > 0 || st.offload_up_s > 0)) return;
    double down = st.offload_down_s;
    if (buckets && o_.overlap_offload) down = std::max(down / sp.dp_bucket_count, down - backward_s);
    sp.offload_down_s = down;
    sp.offload_cpu_s = st.offload_cpu_s;
    sp.offload_up_s = st.offload_up_s;
    sp.offload_s = down + st.offload_cpu_s + st.offload_up_s;
  }

  // Chunk k of stage r: its passes cut into segments (the last micro-batch's gradient pass cut
  // where the DP buckets complete) and its sends to the neighbouring virtual stages.
  void add_chunk(int r, int k, const StageWork& st, bool buckets, StagePlan& sp) {
    const int p = plan_.shape.p, v = plan_.shape.v;
    const int vs = k * p + r;  // virtual stage
    const ChunkWork& cw = work_.chunks[vs];
    const std::array<PassMakeup, 3> mk = chunk_passes(cw, o_);
    const PassMakeup &f = mk[0], &b = mk[1], &w = mk[2];

    static const ChunkPlan kFreshChunk{};  // (a constant, as kFreshStage)
    ChunkPlan& c = plan_.chunks[static_cast<std::size_t>(r) * v + k];
    c = kFreshChunk;
    c.layer_first = cw.layer_first;
    c.layers = cw.layers;
    const int units = f.units;
    c.pass[0] = add_pass(f, cw, units, 0, 0);
    c.pass[1] = add_pass(b, cw, units, 0, 0);
    if (split_) c.pass[2] = add_pass(w, cw, units, 0, 0);
    else c.pass[2].seg_begin = static_cast<int>(plan_.segments.size());
    if (buckets) {
      // Megatron-LM's DDP: the chunk's gradients in buckets of dp_bucket_bytes, at most one per
      // layer, each reduced as soon as the last micro-batch's backward completes it
      const double bytes = st.grad_bytes * cw.grad_share;
      const int nb = std::clamp(static_cast<int>(std::ceil(bytes / std::max(1.0, o_.dp_bucket_bytes))), 1,
                                std::max(1, cw.layers));
      sp.dp_bucket_count += nb;
      c.last_grad = add_pass(split_ ? w : b, cw, nb, st.dp_reduce_s * cw.grad_share,
                             st.dp_reduce_bytes * cw.grad_share);
    } else {
      c.last_grad = c.pass[split_ ? 2 : 1];
    }
    if (st.p2p_s > 0) {
      // activations forward and gradients backward; window: the receiver's forward
      const double recv_forward = vs + 1 < p * v ? work_.chunks[vs + 1].forward_s : cw.forward_s;
      if (vs < p * v - 1)
        c.send_forward = add_comm(core::CommKind::p2p, Stream::pp_send, Overlap::after, GroupId::pp, st.p2p_s,
                                  st.p2p_bytes, recv_forward, 0);
      if (vs > 0)
        c.send_backward = add_comm(core::CommKind::p2p, Stream::pp_send, Overlap::after, GroupId::pp, st.p2p_s,
                                   st.p2p_bytes, recv_forward, 0);
    }
  }

  // The stage's collectives once per step: at its start, after its last pass, after the optimizer.
  // `forward_s` and `backward_s`: the stage's per micro-batch, the windows they may hide behind.
  void add_step_collectives(const StageWork& st, bool buckets, double forward_s, double backward_s, StagePlan& sp) {
    const bool zero3 = o_.zero >= 3;
    const bool gathers = o_.zero >= 1 && st.dp_gather_s > 0;
    auto gather = [&] {
      add_comm(core::CommKind::dp_gather, Stream::dp_gather, Overlap::prefetch, GroupId::dp, st.dp_gather_s,
               st.dp_gather_bytes, forward_s, 0);
    };
    sp.start_begin = static_cast<int>(plan_.comms.size());
    // Megatron's overlapped all-gather of the previous step's updated parameters, hidden behind the
    // first forward passes: the second pass needs all of it. Under ZeRO-3 it is the embedding and
    // head's (FSDP's root unit), which the first forward needs before anything: exposed, as the
    // next step's first collective (after the optimizer, below).
    if (gathers && o_.overlap_dp && !zero3) gather();
    sp.start_end = sp.end_begin = static_cast<int>(plan_.comms.size());
    if (st.dp_reduce_s > 0 && !buckets)
      add_comm(core::CommKind::dp_reduce, Stream::dp, Overlap::serial, GroupId::dp, st.dp_reduce_s, st.dp_reduce_bytes,
               backward_s, 0);
    sp.end_end = sp.post_begin = static_cast<int>(plan_.comms.size());
    if (gathers && (!o_.overlap_dp || zero3)) gather();
    sp.post_end = sp.comm_end = static_cast<int>(plan_.comms.size());
  }

  const StepWork& work_;
  const PlanOptions& o_;
  StepPlan& plan_;
  bool split_ = false;
  double ep_hidden_ = 0;  // the share of this stage's EP beside another micro-batch's compute
};

}  // namespace

namespace {

// The collectives of a set of parameters once per step or per ZeRO-3 unit, priced once: chunks and
// stages of equal size ask for the same collectives, so each price is kept with the parameters it
// was asked for (the last ones), which changes no number.
class ParamCollectives {
 public:
  ParamCollectives(const core::Scenario& s, const StepGroups& g) : s_(s), g_(g) {
    const auto& tr = s.training;
    wb_ = weight_bytes_per_param(tr.precision);
    gb_ = gradient_bytes_per_param(tr.precision);
    rb_ = s.parallel.zero >= 3 ? s.parallel.sharding.reduce_bytes : gb_;
  }

  // ZeRO-3's collectives of a unit (or of the per-step parameters): dense parameters over the shard
  // group (all of dp*cp unless hybrid, whose shards are then all-reduced across the replica group),
  // experts over their own group; every call also pays the framework's host overhead
  // (parallel.sharding.overhead_us, _per_rank_us).
  struct Sharded {
    double gather_s = 0, gather_bytes = 0, reduce_s = 0, reduce_bytes = 0, replica_s = 0, replica_bytes = 0;
  };
  Sharded sharded(const GpuParams& g) {
    if (sharded_known_ && same(g, sharded_of_)) return sharded_last_;
    Sharded o;
    o.gather_s = call(core::Collective::all_gather, wb_ * g.dense, g_.shard, &o.gather_bytes) +
                 call(core::Collective::all_gather, wb_ * g.expert, g_.expert_dp, &o.gather_bytes);
    o.reduce_s = call(core::Collective::reduce_scatter, rb_ * g.dense, g_.shard, &o.reduce_bytes) +
                 call(core::Collective::reduce_scatter, rb_ * g.expert, g_.expert_dp, &o.reduce_bytes);
    o.replica_s = call(core::Collective::all_reduce, rb_ * g.dense / g_.shard.ranks, g_.replica, &o.replica_bytes);
    if (s_.training.offload != core::Offload::none) {
      // CPU offload: each gradient shard goes down to the host once reduced (DeepSpeed stage 3's
      // partition_grads), and under ZeRO-Infinity each parameter shard comes up before its gather
      const double shard_params = g.dense / g_.shard.ranks + g.expert / g_.expert_dp.ranks;
      o.reduce_s += host_link_time(s_, offload_share(s_.training) * rb_ * shard_params);
      if (s_.training.offload == core::Offload::optimizer_params) o.gather_s += host_link_time(s_, wb_ * shard_params);
    }
    sharded_known_ = true;
    sharded_of_ = g;
    sharded_last_ = o;
    return o;
  }

  // The step's gradient reduction and, from ZeRO-1 on, the all-gather of the updated parameters,
  // of the parameters `per_step` (under ZeRO-3 the embedding and head's), into `c`.
  void per_step(const GpuParams& per_step, StageWork& c) {
    const int zero = s_.parallel.zero;
    if (dp_known_ && same(per_step, dp_of_)) {
      c.dp_reduce_s = dp_last_.dp_reduce_s, c.dp_reduce_bytes = dp_last_.dp_reduce_bytes;
      c.dp_gather_s = dp_last_.dp_gather_s, c.dp_gather_bytes = dp_last_.dp_gather_bytes;
    } else if (zero >= 3) {
      const Sharded z = sharded(per_step);
      c.dp_reduce_s = z.reduce_s + z.replica_s, c.dp_reduce_bytes = z.reduce_bytes + z.replica_bytes;
      c.dp_gather_s = z.gather_s, c.dp_gather_bytes = z.gather_bytes;
    } else {
      const auto reduce_op = zero == 0 ? core::Collective::all_reduce : core::Collective::reduce_scatter;
      c.dp_reduce_s = both(reduce_op, gb_, per_step, &c.dp_reduce_bytes);
      if (zero >= 1) c.dp_gather_s = both(core::Collective::all_gather, wb_, per_step, &c.dp_gather_bytes);
    }
    dp_known_ = true;
    dp_of_ = per_step;
    dp_last_ = c;
  }

 private:
  static bool same(const GpuParams& a, const GpuParams& b) { return a.dense == b.dense && a.expert == b.expert; }
  // one collective of ZeRO-3 with the framework's host overhead
  double call(core::Collective op, double bytes, const Group& g, double* sent) const {
    if (g.ranks <= 1 || bytes <= 0) return 0.0;
    const core::Sharding& sh = s_.parallel.sharding;
    *sent += bytes_sent(op, bytes, g.ranks);
    return collective_time(s_.hardware, op, bytes, g) + sh.overhead_s + sh.overhead_per_rank_s * g.ranks;
  }
  // a DP collective of dense parameters over dp*cp and of expert ones over their group
  double both(core::Collective op, double per_param, const GpuParams& g, double* sent) const {
    const Group& dp = g_.dp;
    const Group& expert_dp = g_.expert_dp;
    *sent = bytes_sent(op, per_param * g.dense, dp.ranks) + bytes_sent(op, per_param * g.expert, expert_dp.ranks);
    return collective_time(s_.hardware, op, per_param * g.dense, dp) +
           collective_time(s_.hardware, op, per_param * g.expert, expert_dp);
  }

  const core::Scenario& s_;
  const StepGroups& g_;
  double wb_ = 0, gb_ = 0, rb_ = 0;
  bool sharded_known_ = false;
  GpuParams sharded_of_;
  Sharded sharded_last_;
  bool dp_known_ = false;
  GpuParams dp_of_;
  StageWork dp_last_;
};

// A chunk's parameters on one GPU (the same expression wherever it is needed).
GpuParams chunk_params(const VirtualStage& L, const LayerCosts& costs) {
  const double nd = L.dense_layers(), nm = L.moe_layers;
  return GpuParams{nd * costs.dense_params.dense + nm * costs.moe_params.dense,
                   nd * costs.dense_params.expert + nm * costs.moe_params.expert};
}

// One virtual stage's compute and in-layer collectives per micro-batch: its layers' closed forms
// summed, the input embedding in the first virtual stage, the logits and the loss in the last.
void chunk_layers_work(const VirtualStage& L, bool first, bool last, const LayerCosts& costs, ChunkWork& c) {
  const LayerTimes& lt_dense = costs.dense;
  const LayerTimes& lt_moe = costs.moe;
  const LayerComm& lc_dense = costs.dense_comm;
  const LayerComm& lc_moe = costs.moe_comm;
  const double nd = L.dense_layers(), nm = L.moe_layers;
  auto sum = [&](double dense, double moe_v) { return nd * dense + nm * moe_v; };
  c.layer_first = L.layer_first;
  c.layers = L.layers;
  c.forward_s = sum(lt_dense.forward, lt_moe.forward);
  c.backward_input_s = sum(lt_dense.backward_input, lt_moe.backward_input);
  c.backward_weight_s = sum(lt_dense.backward_weight, lt_moe.backward_weight);
  c.recompute_s = sum(lt_dense.recompute, lt_moe.recompute);
  c.forward_flops = sum(lt_dense.forward_flops, lt_moe.forward_flops);
  c.gemm_forward_s = sum(lt_dense.gemm_forward, lt_moe.gemm_forward);
  if (first) {
    c.forward_s += costs.embedding.forward;
    c.backward_weight_s += costs.embedding.backward_weight;
  }
  if (last) {
    c.forward_s += costs.logits.forward;
    c.backward_input_s += costs.logits.backward_input;
    c.backward_weight_s += costs.logits.backward_weight;
    c.forward_flops += costs.logits.forward_flops;
  }
  c.tp_forward_s = sum(lc_dense.tp_forward_s, lc_moe.tp_forward_s);
  c.tp_backward_s = sum(lc_dense.tp_backward_s, lc_moe.tp_backward_s);
  c.tp_serial_forward_s = sum(lc_dense.tp_serial_forward_s, lc_moe.tp_serial_forward_s);
  c.tp_serial_backward_s = sum(lc_dense.tp_serial_backward_s, lc_moe.tp_serial_backward_s);
  c.tp_bytes = sum(lc_dense.tp_bytes_forward + lc_dense.tp_bytes_backward,
                   lc_moe.tp_bytes_forward + lc_moe.tp_bytes_backward);
  c.cp_forward_s = sum(lc_dense.cp_forward_s, lc_moe.cp_forward_s);
  c.cp_backward_s = sum(lc_dense.cp_backward_s, lc_moe.cp_backward_s);
  c.cp_forward_window_s = sum(lc_dense.cp_forward_window_s, lc_moe.cp_forward_window_s);
  c.cp_backward_window_s = sum(lc_dense.cp_backward_window_s, lc_moe.cp_backward_window_s);
  c.cp_bytes = sum(lc_dense.cp_bytes_forward + lc_dense.cp_bytes_backward,
                   lc_moe.cp_bytes_forward + lc_moe.cp_bytes_backward);
  c.ep_forward_s = nm * lc_moe.ep_forward_s;
  c.ep_backward_s = nm * lc_moe.ep_backward_s;
  c.ep_bytes = nm * (lc_moe.ep_bytes_forward + lc_moe.ep_bytes_backward);
}

// ZeRO-3: the chunk's layers cut into units of unit_layers layers (below 1: several units a
// layer), and each unit's gather, reduce-scatter and replica all-reduce.
void chunk_zero3_work(const VirtualStage& L, const LayerCosts& costs, const core::Sharding& sh,
                      ParamCollectives& priced, ChunkWork& c) {
  c.zero3_units = static_cast<int>(
      std::clamp(std::round(L.layers / sh.unit_layers), 1.0, static_cast<double>(kMaxUnitsPerLayer) * L.layers));
  const GpuParams params = chunk_params(L, costs);
  const GpuParams unit{params.dense / c.zero3_units, params.expert / c.zero3_units};
  c.zero3_unit_params = unit.total();
  const ParamCollectives::Sharded z = priced.sharded(unit);
  c.zero3_gather_s = z.gather_s, c.zero3_gather_bytes = z.gather_bytes;
  c.zero3_reduce_s = z.reduce_s, c.zero3_reduce_bytes = z.reduce_bytes;
  c.zero3_replica_s = z.replica_s, c.zero3_replica_bytes = z.replica_bytes;
}

// Every virtual stage's work per micro-batch (grad_share is the stages' to write).
void chunks_work(const core::Scenario& s, const LayerCosts& costs, const PipelineLayers& split,
                 ParamCollectives& priced, StepWork& out) {
  const bool zero3 = s.parallel.zero >= 3;
  const auto& virtual_ = split.chunks;
  const int V = static_cast<int>(virtual_.size());
  // Every chunk is written whole below: copied from an equal one, or started from a default one (a
  // constant, not a temporary: see Planner::add_stage) and filled; so what the storage held is
  // never read and need not be reset first.
  static const ChunkWork kFreshChunk{};
  out.chunks.resize(V);
  int like = -1;  // a middle chunk whose layers match chunk i's (the first of a run of them)
  for (int i = 0; i < V; ++i) {
    ChunkWork& c = out.chunks[i];
    const VirtualStage& L = virtual_[i];
    // A middle chunk with another middle chunk's layers has its work, number for number (every
    // field below is a function of its layer counts, and of being first or last): copied from the
    // first of the run, not the chunk just written, whose fields would be read back before their
    // stores land.
    if (i > 0 && i < V - 1) {
      if (like >= 0 && virtual_[like].layers == L.layers && virtual_[like].moe_layers == L.moe_layers) {
        c = out.chunks[like];
        c.layer_first = L.layer_first;
        continue;
      }
      like = i;
    }
    c = kFreshChunk;
    chunk_layers_work(L, i == 0, i == V - 1, costs, c);
    if (zero3 && L.layers > 0) chunk_zero3_work(L, costs, s.parallel.sharding, priced, c);
  }
}

// Every pipeline rank's work once per step: its sends, gradients, the DP collectives and the
// optimizer step; and each of its chunks' share of its gradients.
void stages_work(const core::Scenario& s, const LayerCosts& costs, const PipelineLayers& split,
                 ParamCollectives& priced, StepWork& out) {
  const auto& par = s.parallel;
  const GpuParams& dl = costs.dense_params;
  const GpuParams& ml = costs.moe_params;
  const double gb = gradient_bytes_per_param(s.training.precision);
  const double d_dense = zero_shard_ranks(s, false), d_expert = zero_shard_ranks(s, true);
  const auto& virtual_ = split.chunks;
  const int V = static_cast<int>(virtual_.size());
  static const StageWork kFreshStage{};  // (written whole below, as the chunks)
  out.stages.resize(par.pp);
  out.copied_previous.assign(par.pp, 0);
  int run = 0;  // the first stage of the run of repeating stages that r is in
  for (int r = 0; r < par.pp; ++r) {
    StageWork& c = out.stages[r];
    const StageLayers& L = split.stages[r];
    if (split.repeats_previous(r)) {
      // the same parameters as the stage before, chunk for chunk: the same numbers (the priced
      // collectives hold them already), copied from the first of the run, not the stage just
      // written (as for the chunks)
      c = out.stages[run];
      for (int i = r; i < V; i += par.pp) out.chunks[i].grad_share = out.chunks[i - (r - run)].grad_share;
      out.copied_previous[r] = 1;  // (its chunks, middle ones with r - 1's layers, were copied too)
      continue;
    }
    run = r;
    c = kFreshStage;
    c.p2p_bytes = par.pp > 1 ? costs.p2p_bytes : 0.0;
    c.p2p_s = costs.p2p_s;
    const GpuParams g = stage_params_per_gpu(s, r, L, dl, ml);
    c.grad_bytes = gb * g.total();
    // each chunk's share of the rank's gradients: its layers', the embedding and head with the ends
    double layer_params = 0;
    for (int i = r; i < V; i += par.pp) layer_params += chunk_params(virtual_[i], costs).total();
    const double ends = g.total() - layer_params;
    for (int i = r; i < V; i += par.pp) {
      // a rank holds at most one end chunk (both only when it is the whole pipeline, V == 1)
      const double own = chunk_params(virtual_[i], costs).total() + (i == 0 || i == V - 1 ? ends : 0.0);
      out.chunks[i].grad_share = g.total() > 0 ? own / g.total() : 1.0 / par.vpp;
    }
    // ZeRO-3 handles the transformer layers per layer; the embedding and head stay per step
    GpuParams per_step = g;
    if (par.zero >= 3) {
      per_step.dense -= L.dense_layers() * dl.dense + L.moe_layers * ml.dense;
      per_step.expert = 0;
    }
    priced.per_step(per_step, c);

    const double updated = par.zero >= 1 ? g.dense / d_dense + g.expert / d_expert : g.total();
    if (s.training.offload == core::Offload::none) {
      c.optimizer_s = optimizer_time(s.hardware.gpu, s.training, updated);
    } else {
      // under ZeRO-3 every gradient went down with its reduce-scatter (ParamCollectives::sharded)
      const OffloadStep off = offload_step(s, updated, par.zero >= 3 ? 0.0 : updated);
      c.optimizer_s = off.gpu_params > 0 ? optimizer_time(s.hardware.gpu, s.training, off.gpu_params) : 0.0;
      c.offload_down_s = off.down_s;
      c.offload_cpu_s = off.cpu_s;
      c.offload_up_s = off.up_s;
    }
  }
}

}  // namespace

StepWork step_work(const core::Scenario& s) {
  const StepGroups groups = step_groups(s);
  StepWork out;
  LayerCosts costs;
  layer_costs(s, groups, costs);
  step_work(s, groups, costs, pipeline_layers(s), out);
  return out;
}

void step_work(const core::Scenario& s, const StepGroups& groups, const LayerCosts& costs,
               const PipelineLayers& split, StepWork& out) {
  ParamCollectives priced(s, groups);
  chunks_work(s, costs, split, priced, out);
  stages_work(s, costs, split, priced, out);
}

PlanOptions plan_options(const core::Scenario& s) { return plan_options(s, step_groups(s)); }

PlanOptions plan_options(const core::Scenario& s, const StepGroups& g) {
  PlanOptions o;
  o.schedule = s.parallel.schedule;
  o.vpp = s.parallel.vpp;
  o.microbatches = s.num_microbatches();
  o.zero = s.parallel.zero;
  o.overlap_tp = tp_overlaps(s, g.tp);
  o.overlap_pp = s.training.overlap.pp;
  o.overlap_dp = s.training.overlap.dp;
  o.zero3_prefetch = s.training.overlap.zero3_prefetch;
  o.overlap_offload = s.training.overlap.offload;
  o.overlap_ep = ep_overlaps(s);
  o.sharding = sharding_as_run(s);
  o.recompute_full = s.training.recompute == core::Recompute::full;
  o.comm_share = s.hardware.gpu.comm_share();
  o.fabric = uplink_shares(s.hardware);
  // The scenario's (or its framework's) bucket, else Megatron-LM's rule: bucket_size = max(40M, 1M * dp)
  // parameters (distributed_data_parallel_config.py), of the gradients' width
  const double params = s.training.dp_bucket_params > 0 ? s.training.dp_bucket_params
                                                         : std::max(40e6, 1e6 * s.parallel.dp);
  o.dp_bucket_bytes = params * gradient_bytes_per_param(s.training.precision);
  o.groups[static_cast<int>(GroupId::tp)] = g.tp;
  o.groups[static_cast<int>(GroupId::cp)] = g.cp;
  o.groups[static_cast<int>(GroupId::ep)] = g.dispatch;  // the dispatcher's group (groups.cpp)
  o.groups[static_cast<int>(GroupId::dp)] = g.dp;
  o.groups[static_cast<int>(GroupId::pp)] = g.pp;
  o.groups[static_cast<int>(GroupId::shard)] = g.shard;
  o.groups[static_cast<int>(GroupId::replica)] = g.replica;
  return o;
}

StepPlan plan_from_work(const StepWork& work, const PlanOptions& options) {
  StepPlan plan;
  Planner(work, options, plan).build();
  return plan;
}

void plan_from_work(const StepWork& work, const PlanOptions& options, StepPlan& out) {
  Planner(work, options, out).build();
}

}  // namespace ptdsim::analytic
