#include "ptdsim/analytic/experts.hpp"

#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/analytic/memory.hpp"

namespace ptdsim::analytic {

core::ExpertsReport experts_report(const core::Scenario& s, int stage, const PipelineLayers& split,
                                   const LayerCosts& costs) {
  core::ExpertsReport e;
  if (!s.model.moe) return e;
  const auto& p = s.parallel;
  const auto& tr = s.training;
  e.present = true;
  e.etp = p.expert_tp();
  e.ep = p.ep;
  e.edp = p.expert_dp();
  const Group g = tr.moe.dispatcher == core::Dispatcher::alltoall ? ep_group(s) : expert_tp_ep_group(s);
  e.ep_scope = g.scope;
  e.ep_ranks_per_node = g.ranks_per_node;
  e.busiest = s.busiest_expert();

  // expert parameters and their states, sharded over the experts' data-parallel group as ZeRO says
  if (stage >= 0 && stage < static_cast<int>(split.stages.size())) {
    const GpuParams gp = stage_params_per_gpu(s, stage, split.stages[static_cast<std::size_t>(stage)],
                                              costs.dense_params, costs.moe_params);
    e.params = gp.expert;
    const double d = zero_shard_ranks(s, true);
    auto sharded = [&](int from_stage) { return p.zero >= from_stage ? gp.expert / d : gp.expert; };
    e.state_bytes = weight_bytes_per_param(tr.precision) * sharded(3) + held_gradient_bytes_per_param(tr) * sharded(2) +
                    optimizer_bytes_per_param(tr) * sharded(1);
  }

  // one MoE layer: forward, both backward passes, and the forward again under full recomputation
  const bool full = tr.recompute == core::Recompute::full;
  for (const auto& o : costs.moe_ops) {
    const double t = o.total_s() + (full ? o.forward_s : 0.0);
    switch (o.op) {
      case core::Operator::router: e.router_s += t; break;
      case core::Operator::permute:
      case core::Operator::unpermute: e.permute_s += t; break;
      case core::Operator::fc1:
      case core::Operator::fc1_gated:
      case core::Operator::fc2:
      case core::Operator::gelu:
      case core::Operator::swiglu: e.experts_s += t; break;
      // without tables the layer's FP8 casts are the routed experts' alone (operators.cpp routed_fp8_casts)
      case core::Operator::fp8_cast:
        if (!costs.moe_ops.tables) e.experts_s += t;
        break;
      default: break;
    }
  }
  e.dispatch_s = costs.moe_comm.ep_forward_s + costs.moe_comm.ep_backward_s;
  e.dispatch_bytes = costs.moe_comm.ep_bytes_forward + costs.moe_comm.ep_bytes_backward;
  return e;
}

}  // namespace ptdsim::analytic
