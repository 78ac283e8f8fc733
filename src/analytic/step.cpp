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

void copy_step(const Step& from, Step& to) {
  to.scenario = from.scenario;
  to.groups = from.groups;
  to.own_split = *from.split;
  to.split = &to.own_split;
  to.own_costs = *from.costs;
  to.costs = &to.own_costs;
  to.work = from.work;
  to.options = from.options;
  to.plan = from.plan;
  to.planned = from.planned;
}

StepPlan plan_step(const core::Scenario& s) {
  Step step(s);
  return std::move(step.plan);
}

}  // namespace ptdsim::analytic
