#include "ptdsim/analytic/layer_costs.hpp"

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/memory.hpp"

namespace ptdsim::analytic {

LayerCosts layer_costs(const core::Scenario& s) {
  LayerCosts c;
  layer_costs(s, c);
  return c;
}

// Every field is written below, whatever the scenario (a fresh LayerCosts is a 3 KB image to copy):
// a field added to LayerCosts must be written here too, which this check makes its author look at.
static_assert(sizeof(LayerCosts) == 2 * sizeof(LayerTimes) + 2 * sizeof(LayerComm) + 2 * sizeof(EndTimes) +
                                        2 * sizeof(GpuParams) + 6 * sizeof(double) + 2 * sizeof(LayerOps) +
                                        sizeof(EndOps),
              "a field was added to LayerCosts: write it in layer_costs()");
void layer_costs(const core::Scenario& s, LayerCosts& c) { layer_costs(s, step_groups(s), c); }

void layer_costs(const core::Scenario& s, const StepGroups& groups, LayerCosts& c) {
  const bool moe = s.model.moe.has_value();  // (MoE layers only exist with moe)
  layer_ops(s, false, c.dense_ops);
  c.dense = layer_times(s, false, c.dense_ops);
  c.dense_comm = layer_comm(s, groups, false, &c.dense_ops);
  c.dense_params = layer_params_per_gpu(s, false);
  c.activation_dense = activation_bytes_per_layer(s, false);
  if (moe) {
    layer_ops(s, true, c.moe_ops);
    c.moe = layer_times(s, true, c.moe_ops);
    c.moe_comm = layer_comm(s, groups, true, &c.moe_ops);
    c.moe_params = layer_params_per_gpu(s, true);
    c.activation_moe = activation_bytes_per_layer(s, true);
  } else {
    clear(c.moe_ops);
    c.moe = LayerTimes{};
    c.moe_comm = LayerComm{};
    c.moe_params = GpuParams{};
    c.activation_moe = 0;
  }
  // the layer the backward recomputes holds its whole activations meanwhile (full, and op's region)
  const bool full = s.training.recompute == core::Recompute::full || s.training.recompute == core::Recompute::op;
  c.recomputed_dense = full ? layer_activation_bytes(s, false, core::Recompute::none) : 0.0;
  // (all it saves: the recomputed forward's inputs are not offloaded)
  c.recomputed_moe = full && moe ? layer_activation_bytes(s, true, core::Recompute::none) +
                                       offloaded_activation_bytes(s, true, core::Recompute::none)
                                 : 0.0;
  c.ends = end_ops(s);
  c.embedding = embedding_times(c.ends);
  c.logits = logits_times(s, c.ends);
  c.p2p_bytes = p2p_bytes(s);
  c.p2p_s = s.parallel.pp > 1
                ? collective_time(s.hardware, core::Collective::send_recv, c.p2p_bytes, groups.pp_hop)
                : 0.0;
}

LayerCostsKey layer_costs_key(const core::Scenario& s) {
  const auto& p = s.parallel;
  return LayerCostsKey{p.tp, p.pp, p.dp, p.cp, p.ep, s.training.micro_batch, p.sequence_parallel, s.training.recompute,
                       p.etp, s.training.recompute_modules, s.training.offload_modules};
}

}  // namespace ptdsim::analytic
