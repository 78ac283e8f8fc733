#include "ptdsim/analytic/plan.hpp"

#include <algorithm>
#include <cmath>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::analytic {

core::CommKind comm_kind(CommTask t) {
  switch (t) {
    case CommTask::tp: return core::CommKind::tp;
    case CommTask::cp: return core::CommKind::cp;
    case CommTask::ep: return core::CommKind::ep;
    case CommTask::p2p: return core::CommKind::pp;
    case CommTask::dp_reduce:
    case CommTask::dp_gather:
    case CommTask::zero3_gather:
    case CommTask::zero3_reduce: return core::CommKind::dp;
  }
  return core::CommKind::dp;
}

const PassPlan& StepPlan::pass_of(const StagePlan& st, core::PassRef ref) const {
  const ChunkPlan& c = chunk(st, ref.chunk);
  if (ref.microbatch == shape.m - 1 && grad_pass(ref.pass)) return c.last_grad;
  return c.pass[static_cast<int>(ref.pass)];
}

namespace {

class Planner {
 public:
  Planner(const std::vector<StageWork>& work, const PlanOptions& o) : work_(work), o_(o) {}

  StepPlan build() {
    const int p = static_cast<int>(work_.size()), v = std::max(1, o_.vpp);
    plan_.schedule = &core::schedule_rules(o_.schedule);
    plan_.shape = core::PipelineShape{p, v, std::max(1, o_.microbatches)};
    plan_.groups = o_.groups;
    plan_.overlap_tp = o_.overlap_tp;
    plan_.overlap_dp = o_.overlap_dp;
    plan_.overlap_pp = o_.overlap_pp;
    plan_.comm_share = o_.comm_share;
    split_ = plan_.schedule->splits_weight_grad;
    plan_.stages.reserve(p);
    plan_.chunks.reserve(static_cast<std::size_t>(p) * v);
    plan_.segments.reserve(static_cast<std::size_t>(p) * v * 8);
    plan_.comms.reserve(static_cast<std::size_t>(p) * v * 16);
    int first_layer = 0;
    for (int r = 0; r < p; ++r) {
      add_stage(r, work_[r], first_layer, r + 1 < p ? &work_[r + 1] : nullptr);
      first_layer += work_[r].layers;
    }
    return std::move(plan_);
  }

 private:
  int add_comm(const PlanComm& c) {
    plan_.comms.push_back(c);
    return static_cast<int>(plan_.comms.size()) - 1;
  }

  // One pass of one chunk: `nseg` equal segments of its compute, each with its collectives.
  struct PassWork {
    core::Pass pass;
    double compute_s, flops;
    double gemm_s;       // weight-GEMM part (TP's window)
    double attention_s;  // attention-core part (CP's window)
    double tp_s, tp_bytes, cp_s, cp_bytes, ep_s, ep_bytes;
  };
  PassPlan add_pass(const PassWork& w, const StageWork& st, int nseg, bool buckets) {
    const bool zero3 = o_.zero >= 3;
    const bool makes_grads = w.pass == core::Pass::W || (w.pass == core::Pass::B && !split_);
    const bool needs_weights = w.pass != core::Pass::W;
    const double inv_v = 1.0 / plan_.shape.v;
    PassPlan pp;
    pp.seg_begin = static_cast<int>(plan_.segments.size());
    pp.compute_s = w.compute_s;
    pp.flops = w.flops;
    Segment seg;
    seg.compute_s = w.compute_s / nseg;
    seg.flops = w.flops / nseg;
    seg.repeat = nseg;
    seg.comm_begin = static_cast<int>(plan_.comms.size());
    if (zero3 && needs_weights && st.zero3_gather_layer_s > 0) {
      // the unit's parameters, gathered before it runs: prefetched one unit ahead (two units'
      // buffers, memory.cpp), or only once the previous unit is done
      add_comm(PlanComm{CommTask::zero3_gather, Stream::dp_gather, Overlap::prefetch, GroupId::dp,
                        st.zero3_gather_layer_s, st.zero3_gather_bytes,
                        o_.zero3_prefetch ? seg.compute_s : 0.0, o_.zero3_prefetch ? 1 : 0});
    }
    if (w.tp_s > 0) {
      // TP collectives sit between dependent GEMMs; with overlap they run beside them, chunked
      // (Megatron's tp-comm-overlap), hiding behind the GEMMs
      add_comm(PlanComm{CommTask::tp, Stream::tp, o_.overlap_tp ? Overlap::beside : Overlap::serial, GroupId::tp,
                        w.tp_s / nseg, w.tp_bytes / nseg, w.gemm_s / nseg, 0});
    }
    if (w.cp_s > 0) {
      // Ring attention hides CP's key/value exchange behind the attention core only: the
      // projections before it produce the keys and values, the ones after need its output.
      const double window = std::min(w.compute_s, w.attention_s) / nseg;
      add_comm(PlanComm{CommTask::cp, Stream::cp, window > 0 ? Overlap::window : Overlap::serial, GroupId::cp,
                        w.cp_s / nseg, w.cp_bytes / nseg, window, 0});
    }
    if (w.ep_s > 0) {  // EP's all-to-all feeds the experts: serial
      add_comm(PlanComm{CommTask::ep, Stream::ep, Overlap::serial, GroupId::ep, w.ep_s / nseg,
                        w.ep_bytes / nseg, seg.compute_s, 0});
    }
    if (zero3 && makes_grads && st.zero3_reduce_layer_s > 0) {
      add_comm(PlanComm{CommTask::zero3_reduce, Stream::dp, Overlap::after, GroupId::dp,
                        st.zero3_reduce_layer_s, st.zero3_reduce_bytes, 0, 0});
    }
    if (buckets) {  // a DP gradient bucket, reduced as soon as its gradients are complete
      add_comm(PlanComm{CommTask::dp_reduce, Stream::dp, Overlap::after, GroupId::dp,
                        st.dp_reduce_s * inv_v / nseg, st.dp_reduce_bytes * inv_v / nseg, 0, 0});
    }
    seg.comm_count = static_cast<int>(plan_.comms.size()) - seg.comm_begin;
    plan_.segments.push_back(seg);
    pp.seg_count = 1;
    return pp;
  }

  void add_stage(int r, const StageWork& st, int first_layer, const StageWork* next) {
    const int p = plan_.shape.p, v = plan_.shape.v;
    const double inv_v = 1.0 / v;
    const bool zero3 = o_.zero >= 3;
    const int chunk_layers = std::max(1, st.layers / v);
    const bool buckets = !zero3 && o_.overlap_dp && st.dp_reduce_s > 0;
    const int nb = std::clamp(
        static_cast<int>(std::ceil(st.grad_bytes * inv_v / std::max(1.0, o_.dp_bucket_bytes))), 1, chunk_layers);

    StagePlan sp;
    sp.stage = r;
    sp.layers = st.layers;
    sp.chunk_begin = static_cast<int>(plan_.chunks.size());
    sp.comm_begin = static_cast<int>(plan_.comms.size());
    sp.optimizer_s = st.optimizer_s;
    sp.grad_bytes = st.grad_bytes;
    sp.dp_bucket_count = buckets ? nb : 1;

    const PassWork f{core::Pass::F, st.forward_s * inv_v, st.forward_flops * inv_v, st.gemm_forward_s * inv_v,
                     st.attention_core_s * inv_v, st.tp_forward_s * inv_v, st.tp_bytes * inv_v * 0.5,
                     st.cp_forward_s * inv_v, st.cp_bytes * inv_v * 0.5, st.ep_forward_s * inv_v,
                     st.ep_bytes * inv_v * 0.5};
    // B: the recomputed forward it needs, the input gradients and, unless split off, the weight
    // gradients; each weight GEMM has an input- and a weight-gradient GEMM of its forward's size
    const double b_compute = st.recompute_s + st.backward_input_s + (split_ ? 0 : st.backward_weight_s);
    const PassWork b{core::Pass::B, b_compute * inv_v, st.forward_flops * inv_v * (split_ ? 1 : 2),
                     (split_ ? 1 : 2) * st.gemm_forward_s * inv_v, 2 * st.attention_core_s * inv_v,
                     st.tp_backward_s * inv_v, st.tp_bytes * inv_v * 0.5, st.cp_backward_s * inv_v,
                     st.cp_bytes * inv_v * 0.5, st.ep_backward_s * inv_v, st.ep_bytes * inv_v * 0.5};
    const PassWork w{core::Pass::W, st.backward_weight_s * inv_v, st.forward_flops * inv_v,
                     st.gemm_forward_s * inv_v, 0, 0, 0, 0, 0, 0, 0};

    for (int k = 0; k < v; ++k) {
      const int vs = k * p + r;  // virtual stage
      ChunkPlan c;
      c.layer_first = v > 1 ? vs * chunk_layers : first_layer;
      c.layers = chunk_layers;
      const int units = zero3 ? chunk_layers : 1;
      c.pass[0] = add_pass(f, st, units, false);
      c.pass[1] = add_pass(b, st, units, false);
      if (split_) c.pass[2] = add_pass(w, st, units, false);
      c.last_grad = buckets ? add_pass(split_ ? w : b, st, nb, true) : c.pass[split_ ? 2 : 1];
      if (st.p2p_s > 0) {
        // the activations forward and the gradients backward; window: the receiver's forward
        const double recv_forward = (next ? next->forward_s : st.forward_s) * inv_v;
        const PlanComm send{CommTask::p2p, Stream::pp_send, Overlap::after, GroupId::pp, st.p2p_s,
                            st.p2p_bytes, recv_forward, 0};
        if (vs < p * v - 1) c.send_forward = add_comm(send);
        if (vs > 0) c.send_backward = add_comm(send);
      }
      plan_.chunks.push_back(c);
    }

    // once per step
    const bool gathers = o_.zero >= 1 && st.dp_gather_s > 0;
    const PlanComm gather{CommTask::dp_gather, Stream::dp_gather, Overlap::prefetch, GroupId::dp,
                          st.dp_gather_s, st.dp_gather_bytes, st.forward_s, 0};
    sp.start_begin = static_cast<int>(plan_.comms.size());
    // Megatron's overlapped all-gather of the previous step's updated parameters, hidden behind the
    // first forward passes: the second pass needs all of it
    if (gathers && o_.overlap_dp) add_comm(gather);
    sp.start_end = sp.end_begin = static_cast<int>(plan_.comms.size());
    if (st.dp_reduce_s > 0 && !buckets)
      add_comm(PlanComm{CommTask::dp_reduce, Stream::dp, Overlap::serial, GroupId::dp, st.dp_reduce_s,
                        st.dp_reduce_bytes, st.backward_input_s + st.backward_weight_s + st.recompute_s, 0});
    sp.end_end = sp.post_begin = static_cast<int>(plan_.comms.size());
    if (gathers && !o_.overlap_dp) add_comm(gather);
    sp.post_end = sp.comm_end = static_cast<int>(plan_.comms.size());
    plan_.stages.push_back(sp);
  }

  const std::vector<StageWork>& work_;
  const PlanOptions& o_;
  StepPlan plan_;
  bool split_ = false;
};

}  // namespace

std::vector<StageWork> stage_work(const core::Scenario& s) {
  const auto& hw = s.hardware;
  const auto& par = s.parallel;
  const auto& tr = s.training;
  const bool moe = s.model.moe.has_value();
  const Group dp = grad_group(s, false);
  const Group expert_dp = moe ? grad_group(s, true) : dp;
  const auto layers = stage_layers(s);
  const LayerTimes lt_dense = layer_times(s, false);
  const LayerTimes lt_moe = moe ? layer_times(s, true) : LayerTimes{};
  const LayerComm lc_dense = layer_comm(s, false);
  const LayerComm lc_moe = moe ? layer_comm(s, true) : LayerComm{};
  const EndTimes emb = embedding_times(s);
  const EndTimes logit = logits_times(s);

  // neighbouring pipeline ranks: one link of the pp group's kind
  const Group pp = group_of(s, core::Dim::pp);
  Group hop;
  hop.ranks = 2;
  hop.scope = pp.scope;
  hop.ranks_per_node = std::min(2, pp.ranks_per_node);
  const double p2p = p2p_bytes(s);
  const double p2p_s = par.pp > 1 ? collective_time(hw, core::Collective::send_recv, p2p, hop) : 0.0;

  const double wb = weight_bytes_per_param(tr.precision), gb = gradient_bytes_per_param(tr.precision);
  const double d_dense = zero_shard_ranks(s, false), d_expert = zero_shard_ranks(s, true);
  const auto reduce_op = par.zero == 0 ? core::Collective::all_reduce : core::Collective::reduce_scatter;
  auto both = [&](core::Collective op, double per_param, const GpuParams& g, double* sent) {
    *sent = bytes_sent(op, per_param * g.dense, dp.ranks) + bytes_sent(op, per_param * g.expert, expert_dp.ranks);
    return collective_time(hw, op, per_param * g.dense, dp) +
           collective_time(hw, op, per_param * g.expert, expert_dp);
  };

  std::vector<StageWork> out(par.pp);
  for (int r = 0; r < par.pp; ++r) {
    StageWork& c = out[r];
    const StageLayers& L = layers[r];
    const double nd = L.dense_layers(), nm = L.moe_layers;
    auto sum = [&](double dense, double moe_v) { return nd * dense + nm * moe_v; };
    c.layers = L.layers;
    c.forward_s = sum(lt_dense.forward, lt_moe.forward);
    c.backward_input_s = sum(lt_dense.backward_input, lt_moe.backward_input);
    c.backward_weight_s = sum(lt_dense.backward_weight, lt_moe.backward_weight);
    c.recompute_s = sum(lt_dense.recompute, lt_moe.recompute);
    c.forward_flops = sum(lt_dense.forward_flops, lt_moe.forward_flops);
    c.gemm_forward_s = sum(lt_dense.gemm_forward, lt_moe.gemm_forward);
    c.attention_core_s = sum(lt_dense.attention_core, lt_moe.attention_core);
    if (r == 0) {
      c.forward_s += emb.forward;
      c.backward_weight_s += emb.backward_weight;
    }
    if (r == par.pp - 1) {
      c.forward_s += logit.forward;
      c.backward_input_s += logit.backward_input;
      c.backward_weight_s += logit.backward_weight;
      c.forward_flops += logit.forward_flops;
    }
    c.tp_forward_s = sum(lc_dense.tp_forward_s, lc_moe.tp_forward_s);
    c.tp_backward_s = sum(lc_dense.tp_backward_s, lc_moe.tp_backward_s);
    c.tp_bytes = sum(lc_dense.tp_bytes_forward + lc_dense.tp_bytes_backward,
                     lc_moe.tp_bytes_forward + lc_moe.tp_bytes_backward);
    c.cp_forward_s = sum(lc_dense.cp_forward_s, lc_moe.cp_forward_s);
    c.cp_backward_s = sum(lc_dense.cp_backward_s, lc_moe.cp_backward_s);
    c.cp_bytes = sum(lc_dense.cp_bytes_forward + lc_dense.cp_bytes_backward,
                     lc_moe.cp_bytes_forward + lc_moe.cp_bytes_backward);
    c.ep_forward_s = nm * lc_moe.ep_forward_s;
    c.ep_backward_s = nm * lc_moe.ep_backward_s;
    c.ep_bytes = nm * (lc_moe.ep_bytes_forward + lc_moe.ep_bytes_backward);
    c.p2p_bytes = par.pp > 1 ? p2p : 0.0;
    c.p2p_s = p2p_s;

    const GpuParams g = stage_params_per_gpu(s, r, L);
    c.grad_bytes = gb * g.total();
    // ZeRO-3 handles the transformer layers per layer below; the embedding and head stay per step
    GpuParams per_step = g;
    if (par.zero >= 3) {
      const GpuParams dl = layer_params_per_gpu(s, false), ml = layer_params_per_gpu(s, true);
      per_step.dense -= nd * dl.dense + (nm > 0 ? nm * ml.dense : 0.0);
      per_step.expert = 0;
      const GpuParams& layer = L.dense_layers() > 0 ? dl : ml;
      c.zero3_gather_layer_s = both(core::Collective::all_gather, wb, layer, &c.zero3_gather_bytes);
      c.zero3_reduce_layer_s = both(core::Collective::reduce_scatter, gb, layer, &c.zero3_reduce_bytes);
    }
    c.dp_reduce_s = both(reduce_op, gb, per_step, &c.dp_reduce_bytes);
    if (par.zero >= 1) c.dp_gather_s = both(core::Collective::all_gather, wb, per_step, &c.dp_gather_bytes);

    const double updated = par.zero >= 1 ? g.dense / d_dense + g.expert / d_expert : g.total();
    c.optimizer_s = optimizer_time(hw.gpu, tr, updated);
  }
  return out;
}

PlanOptions plan_options(const core::Scenario& s) {
  PlanOptions o;
  o.schedule = s.parallel.schedule;
  o.vpp = s.parallel.vpp;
  o.microbatches = s.num_microbatches();
  o.zero = s.parallel.zero;
  o.overlap_tp = tp_overlaps(s);
  o.overlap_pp = s.training.overlap.pp;
  o.overlap_dp = s.training.overlap.dp;
  o.zero3_prefetch = s.training.overlap.zero3_prefetch;
  o.comm_share = s.hardware.gpu.comm_share();
  // Megatron-LM: bucket_size = max(40M, 1M * dp) parameters of fp32 main gradients
  o.dp_bucket_bytes = std::max(40e6, 1e6 * s.parallel.dp) * 4;
  o.groups[static_cast<int>(GroupId::tp)] = group_of(s, core::Dim::tp);
  o.groups[static_cast<int>(GroupId::cp)] = group_of(s, core::Dim::cp);
  o.groups[static_cast<int>(GroupId::ep)] = group_of(s, core::Dim::ep);
  o.groups[static_cast<int>(GroupId::dp)] = grad_group(s, false);
  o.groups[static_cast<int>(GroupId::pp)] = group_of(s, core::Dim::pp);
  return o;
}

StepPlan plan_from_work(const std::vector<StageWork>& stages, const PlanOptions& options) {
  return Planner(stages, options).build();
}

StepPlan plan_step(const core::Scenario& s) { return plan_from_work(stage_work(s), plan_options(s)); }

}  // namespace ptdsim::analytic
