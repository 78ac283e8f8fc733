#include "ptdsim/analytic/layer_costs.hpp"

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/memory.hpp"

namespace ptdsim::analytic {

LayerCosts layer_costs(const core::Scenario& s) {
  const bool moe = s.model.moe.has_value();  // (MoE layers only exist with moe)
  LayerCosts c;
  layer_ops(s, false, c.dense_ops);
  c.dense = layer_times(s, false, c.dense_ops);
  c.dense_comm = layer_comm(s, false);
  c.dense_params = layer_params_per_gpu(s, false);
  c.activation_dense = activation_bytes_per_layer(s, false);
  if (moe) {
    layer_ops(s, true, c.moe_ops);
    c.moe = layer_times(s, true, c.moe_ops);
    c.moe_comm = layer_comm(s, true);
    c.moe_params = layer_params_per_gpu(s, true);
    c.activation_moe = activation_bytes_per_layer(s, true);
  }
  if (s.training.recompute == core::Recompute::full) {
    c.recomputed_dense = layer_activation_bytes(s, false, core::Recompute::none);
    if (moe) c.recomputed_moe = layer_activation_bytes(s, true, core::Recompute::none);
  }
  c.ends = end_ops(s);
  c.embedding = embedding_times(c.ends);
  c.logits = logits_times(s, c.ends);
  c.p2p_bytes = p2p_bytes(s);
  if (s.parallel.pp > 1)
    c.p2p_s = collective_time(s.hardware, core::Collective::send_recv, c.p2p_bytes, pp_hop_group(s));
  return c;
}

LayerCostsKey layer_costs_key(const core::Scenario& s) {
  const auto& p = s.parallel;
  return LayerCostsKey{p.tp, p.pp, p.dp, p.cp, p.ep, s.training.micro_batch, p.sequence_parallel, s.training.recompute};
}

}  // namespace ptdsim::analytic
