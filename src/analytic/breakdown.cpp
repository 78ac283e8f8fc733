#include "ptdsim/analytic/breakdown.hpp"

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::analytic {
namespace {

// One layer's operators, each with what recomputation adds to it: its forward again where the
// backward reruns it (compute.hpp recomputed).
double with_recompute(const core::OperatorTime& o, const core::Scenario& s, bool moe_layer) {
  return o.total_s() + recomputed_share(s, o.op, o.kind, moe_layer) * o.forward_s;
}

// The breakdown from one dense and one MoE layer's operators and the ends' (moe: unread
// without MoE layers).
core::ComputeBreakdown breakdown(const core::Scenario& s, const StepPlan& plan, const std::vector<StageLayers>& stages,
                                 const LayerOps& dense, const LayerOps& moe, const EndOps& ends) {
  core::ComputeBreakdown out;
  int moe_layers = 0;
  for (const auto& st : stages) moe_layers += st.moe_layers;
  int layers = 0;  // the decoder layers and the MTP modules' (on the last stage)
  for (const auto& st : stages) layers += st.layers;
  const int dense_layers = layers - moe_layers;
  const LayerOps& first = dense_layers > 0 ? dense : moe;
  out.layer.assign(first.begin(), first.end());
  if (dense_layers > 0 && moe_layers > 0) out.moe_layer.assign(moe.begin(), moe.end());

  core::OperatorTime optimizer;
  optimizer.op = core::Operator::optimizer;
  optimizer.kind = core::OperatorKind::optimizer;
  const auto& g = s.hardware.gpu;
  optimizer.source = g.kernels && g.kernels->optimizer_Bps > 0 ? core::TimeSource::model
                                                                : core::TimeSource::hbm_efficiency;
  for (const auto& st : plan.stages) optimizer.forward_s += st.optimizer_s;  // every stage's step, once
  out.other = {ends.embedding, ends.logits, ends.cross_entropy, optimizer};
  if (s.model.mtp_layers > 0) out.other.insert(out.other.end() - 1, ends.mtp);

  // the whole model's compute per step, summed over the pipeline stages: every layer and the ends
  // once per micro-batch, the optimizer once
  const double m = plan.shape.m;
  auto add = [&](const core::OperatorTime& o, double times, bool moe_layer) {
    out.share[static_cast<std::size_t>(o.kind)] += times * with_recompute(o, s, moe_layer);
  };
  for (const auto& o : dense) add(o, m * dense_layers, false);
  if (moe_layers > 0)
    for (const auto& o : moe) add(o, m * moe_layers, true);
  for (const auto* o : {&ends.embedding, &ends.logits, &ends.cross_entropy, &ends.mtp})
    out.share[static_cast<std::size_t>(o->kind)] += m * o->total_s();
  out.share[static_cast<std::size_t>(core::OperatorKind::optimizer)] += optimizer.forward_s;
  double total = 0;
  for (double v : out.share) total += v;
  if (total > 0)
    for (double& v : out.share) v /= total;
  return out;
}

}  // namespace

core::ComputeBreakdown compute_breakdown(const core::Scenario& s, const StepPlan& plan) {
  return compute_breakdown(s, plan, stage_layers(s));
}

core::ComputeBreakdown compute_breakdown(const core::Scenario& s, const StepPlan& plan,
                                         const std::vector<StageLayers>& stages) {
  int moe_layers = 0;
  for (const auto& st : stages) moe_layers += st.moe_layers;
  return breakdown(s, plan, stages, layer_ops(s, false), moe_layers > 0 ? layer_ops(s, true) : LayerOps{}, end_ops(s));
}

core::ComputeBreakdown compute_breakdown(const core::Scenario& s, const StepPlan& plan,
                                         const std::vector<StageLayers>& stages, const LayerCosts& costs) {
  return breakdown(s, plan, stages, costs.dense_ops, costs.moe_ops, costs.ends);
}

}  // namespace ptdsim::analytic
