#include "ptdsim/analytic/step.hpp"

#include <utility>

namespace ptdsim::analytic {

Step::Step(const core::Scenario& s) { make_step(s, *this); }

void make_step(const core::Scenario& s, Step& out, StepParts parts, const StepLent& lent) {
  out.scenario = &s;
  out.groups = lent.groups ? *lent.groups : step_groups(s);
  if (lent.split) {
    out.split = lent.split;
  } else {
    pipeline_layers(s, out.own_split);
    out.split = &out.own_split;
  }
  if (lent.costs) {
    out.costs = lent.costs;
  } else {
    layer_costs(s, out.groups, out.own_costs);
    out.costs = &out.own_costs;
  }
  step_work(s, out.groups, *out.costs, *out.split, out.work);
  out.options = plan_options(s, out.groups);
  out.planned = parts == StepParts::plan;
  if (out.planned) plan_from_work(out.work, out.options, out.plan);
}

void own_lent(Step& step) {
  if (step.split != &step.own_split) {
    step.own_split = *step.split;
    step.split = &step.own_split;
  }
  if (step.costs != &step.own_costs) {
    step.own_costs = *step.costs;
    step.costs = &step.own_costs;
  }
}

StepPlan plan_step(const core::Scenario& s) {
  Step step(s);
  return std::move(step.plan);
}

}  // namespace ptdsim::analytic
