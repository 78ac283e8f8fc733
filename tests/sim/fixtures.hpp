#pragma once
// Hand-made stage work for the schedule and summary tests: equal stages, free communication unless
// a test sets it, so the closed forms of the pipeline schedules apply exactly. The plan's rules
// (analytic::plan_from_work) cut the work into passes as they do for a scenario.
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/sim/schedule.hpp"

namespace ptdsim::testing {

struct HandWork {
  std::vector<analytic::StageWork> stages;
  int microbatches = 1;
  int vpp = 1;
};

inline HandWork equal_stages(int p, int m, double tf, double tb, double tw = 0, int v = 1, int layers = 4) {
  HandWork c;
  c.microbatches = m;
  c.vpp = v;
  for (int s = 0; s < p; ++s) {
    analytic::StageWork sc;
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
  for (GroupId g : {GroupId::dp, GroupId::pp}) o.groups[static_cast<int>(g)].scope = core::Scope::inter;
  return o;
}

inline analytic::StepPlan plan(const HandWork& c, analytic::PlanOptions o) {
  o.microbatches = c.microbatches;
  o.vpp = c.vpp;
  return analytic::plan_from_work(c.stages, o);
}

inline sim::StepGraph build(const HandWork& c, const analytic::PlanOptions& o, std::vector<sim::RankRef> ranks = {}) {
  return sim::build_step(plan(c, o), std::move(ranks));
}

}  // namespace ptdsim::testing
