#pragma once
// Hand-made stage work for the schedule and summary tests: equal stages, free communication unless
// a test sets it, so the closed forms of the pipeline schedules apply exactly. The plan's rules
// (analytic::plan_from_work) cut the work into passes as they do for a scenario.
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/sim/step_graph.hpp"

namespace ptdsim::testing {

// Per stage, per micro-batch, whole stage (its chunks share it equally), as the tests write it.
struct HandStage {
  int layers = 0;
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0, recompute_s = 0, forward_flops = 0;
  double attention_core_s = 0;
  double tp_forward_s = 0, tp_backward_s = 0, tp_bytes = 0;
  double cp_forward_s = 0, cp_backward_s = 0, cp_bytes = 0;
  double ep_forward_s = 0, ep_backward_s = 0, ep_bytes = 0;
  double p2p_s = 0, p2p_bytes = 0;
  double grad_bytes = 0, dp_reduce_s = 0, dp_gather_s = 0;
  double zero3_gather_s = 0, zero3_reduce_s = 0;  // per layer: a sharding unit per layer
  double optimizer_s = 0;
};
struct HandWork {
  std::vector<HandStage> stages;
  int microbatches = 1;
  int vpp = 1;
};

inline HandWork equal_stages(int p, int m, double tf, double tb, double tw = 0, int v = 1, int layers = 4) {
  HandWork c;
  c.microbatches = m;
  c.vpp = v;
  for (int s = 0; s < p; ++s) {
    HandStage sc;
    sc.layers = layers;
    sc.forward_s = tf;
    sc.backward_input_s = tb;
    sc.backward_weight_s = tw;
    sc.forward_flops = 1e12;  // only the trace and HFU read it
    c.stages.push_back(sc);
  }
  return c;
}

inline analytic::PlanOptions with(core::Schedule s) {
  analytic::PlanOptions o;
  o.schedule = s;
  using analytic::GroupId;
  for (GroupId g : {GroupId::tp, GroupId::cp, GroupId::ep}) o.groups[static_cast<int>(g)].scope = core::Scope::intra;
  for (GroupId g : {GroupId::dp, GroupId::pp, GroupId::shard, GroupId::replica})
    o.groups[static_cast<int>(g)].scope = core::Scope::inter;
  return o;
}

// The step's work: each stage's chunks take 1/v of it, each chunk's layers in pipeline order.
inline analytic::StepWork work_of(const HandWork& c) {
  const int p = static_cast<int>(c.stages.size()), v = c.vpp;
  analytic::StepWork w;
  w.chunks.resize(static_cast<std::size_t>(p) * v);
  int first = 0;
  for (int k = 0; k < v; ++k)
    for (int r = 0; r < p; ++r) {
      const HandStage& h = c.stages[r];
      const double f = 1.0 / v;
      analytic::ChunkWork& x = w.chunks[k * p + r];
      x.layer_first = first;
      x.layers = h.layers / v;
      first += x.layers;
      x.forward_s = f * h.forward_s, x.backward_input_s = f * h.backward_input_s;
      x.backward_weight_s = f * h.backward_weight_s, x.recompute_s = f * h.recompute_s;
      x.forward_flops = f * h.forward_flops, x.cp_forward_window_s = f * h.attention_core_s;
      x.cp_backward_window_s = 2 * f * h.attention_core_s;  // the backward's attention: twice the forward's
      x.tp_forward_s = f * h.tp_forward_s, x.tp_backward_s = f * h.tp_backward_s, x.tp_bytes = f * h.tp_bytes;
      x.cp_forward_s = f * h.cp_forward_s, x.cp_backward_s = f * h.cp_backward_s, x.cp_bytes = f * h.cp_bytes;
      x.ep_forward_s = f * h.ep_forward_s, x.ep_backward_s = f * h.ep_backward_s, x.ep_bytes = f * h.ep_bytes;
      x.zero3_gather_s = h.zero3_gather_s, x.zero3_reduce_s = h.zero3_reduce_s;
      if (h.zero3_gather_s > 0 || h.zero3_reduce_s > 0) x.zero3_units = x.layers;
      x.grad_share = f;
    }
  for (const HandStage& h : c.stages) {
    analytic::StageWork st;
    st.p2p_s = h.p2p_s, st.p2p_bytes = h.p2p_bytes;
    st.grad_bytes = h.grad_bytes, st.dp_reduce_s = h.dp_reduce_s, st.dp_gather_s = h.dp_gather_s;
    st.optimizer_s = h.optimizer_s;
    w.stages.push_back(st);
  }
  return w;
}

inline analytic::StepPlan plan(const HandWork& c, analytic::PlanOptions o) {
  o.microbatches = c.microbatches;
  o.vpp = c.vpp;
  return analytic::plan_from_work(work_of(c), o);
}

inline sim::StepGraph build(const HandWork& c, const analytic::PlanOptions& o, std::vector<sim::RankRef> ranks = {}) {
  return sim::build_step(plan(c, o), std::move(ranks));
}

}  // namespace ptdsim::testing
