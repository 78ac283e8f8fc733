#include "ptdsim/analytic/costs.hpp"

#include <algorithm>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::analytic {

StepCosts step_costs(const core::Scenario& s) {
  const auto& hw = s.hardware;
  const auto& par = s.parallel;
  const auto& tr = s.training;
  const bool moe = s.model.moe.has_value();

  StepCosts out;
  out.microbatches = s.num_microbatches();
  out.vpp = par.vpp;
  out.tp = group_of(s, core::Dim::tp);
  out.cp = group_of(s, core::Dim::cp);
  out.ep = group_of(s, core::Dim::ep);
  out.dp = grad_group(s, false);
  out.pp = group_of(s, core::Dim::pp);
  const Group expert_dp = moe ? grad_group(s, true) : out.dp;

  const auto layers = stage_layers(s);
  const LayerTimes lt_dense = layer_times(s, false);
  const LayerTimes lt_moe = moe ? layer_times(s, true) : LayerTimes{};
  const LayerComm lc_dense = layer_comm(s, false);
  const LayerComm lc_moe = moe ? layer_comm(s, true) : LayerComm{};
  const EndTimes emb = embedding_times(s);
  const EndTimes logit = logits_times(s);

  // neighbouring pipeline ranks: one link of the pp group's kind
  Group hop;
  hop.ranks = 2;
  hop.scope = out.pp.scope;
  hop.ranks_per_node = std::min(2, out.pp.ranks_per_node);
  const double p2p = p2p_bytes(s);
  const double p2p_s = par.pp > 1 ? collective_time(hw, core::Collective::send_recv, p2p, hop) : 0.0;

  const double wb = weight_bytes_per_param(tr.precision), gb = gradient_bytes_per_param(tr.precision);
  const double d_dense = zero_shard_ranks(s, false), d_expert = zero_shard_ranks(s, true);

  out.stages.resize(par.pp);
  for (int r = 0; r < par.pp; ++r) {
    auto& c = out.stages[r];
    const StageLayers& L = layers[r];
    const double nd = L.dense_layers(), nm = L.moe_layers;
    c.stage = r;
    c.layers = L.layers;
    auto sum = [&](double dense, double moe_v) { return nd * dense + nm * moe_v; };
    c.forward_s = sum(lt_dense.forward, lt_moe.forward);
    c.backward_input_s = sum(lt_dense.backward_input, lt_moe.backward_input);
    c.backward_weight_s = sum(lt_dense.backward_weight, lt_moe.backward_weight);
    c.recompute_s = sum(lt_dense.recompute, lt_moe.recompute);
    c.forward_flops = sum(lt_dense.forward_flops, lt_moe.forward_flops);
    c.gemm_s = 3 * sum(lt_dense.gemm_forward, lt_moe.gemm_forward);  // forward, B and W GEMMs
    c.attention_core_s = sum(lt_dense.attention_core, lt_moe.attention_core);
    const LayerTimes& typical = L.dense_layers() > 0 ? lt_dense : lt_moe;
    c.layer_forward_s = typical.forward;
    c.layer_backward_s = typical.backward_input + typical.backward_weight + typical.recompute;
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
      c.zero3_layer_bytes = wb * layer.total();
      c.zero3_gather_layer_s = collective_time(hw, core::Collective::all_gather, wb * layer.dense, out.dp) +
                               collective_time(hw, core::Collective::all_gather, wb * layer.expert, expert_dp);
      c.zero3_reduce_layer_s =
          collective_time(hw, core::Collective::reduce_scatter, gb * layer.dense, out.dp) +
          collective_time(hw, core::Collective::reduce_scatter, gb * layer.expert, expert_dp);
    }
    const auto reduce_op = par.zero == 0 ? core::Collective::all_reduce : core::Collective::reduce_scatter;
    c.dp_reduce_s = collective_time(hw, reduce_op, gb * per_step.dense, out.dp) +
                    collective_time(hw, reduce_op, gb * per_step.expert, expert_dp);
    if (par.zero >= 1)
      c.dp_gather_s = collective_time(hw, core::Collective::all_gather, wb * per_step.dense, out.dp) +
                      collective_time(hw, core::Collective::all_gather, wb * per_step.expert, expert_dp);

    const double updated = par.zero >= 1 ? g.dense / d_dense + g.expert / d_expert : g.total();
    c.optimizer_s = optimizer_time(hw.gpu, tr, updated);
  }
  return out;
}

}  // namespace ptdsim::analytic
