#pragma once
#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/scenario.hpp"

// One training step of a scenario, built once by make_step() and read by every engine and writer:
// the analytic fold (evaluate), the scheduler (sim::simulate), the report (assemble_report), the
// warnings and the sweep's bounds (docs/architecture.md "The step: who builds what, who reads it").
// Nothing that reads a Step derives again what it holds.
namespace ptdsim::analytic {

struct Step {
  const core::Scenario* scenario = nullptr;  // what it was built from; must outlive the Step
  StepGroups groups;                          // every communication group (groups.cpp)
  const PipelineLayers* split = nullptr;      // the pipeline split: `own_split`, or one lent
  const LayerCosts* costs = nullptr;          // the layer costs: `own_costs`, or one lent
  StepWork work;                              // closed forms per virtual stage and rank (step_work)
  PlanOptions options;                        // the switches (plan_options)
  StepPlan plan;                              // the rules applied (plan_from_work); empty: StepParts::work
  bool planned = false;

  // Storage for the split and costs the step computed itself.
  PipelineLayers own_split;
  LayerCosts own_costs;

  Step() = default;
  explicit Step(const core::Scenario& s);  // make_step(s, *this)
  // (not copied or moved: `split` and `costs` may point into the Step itself)
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
};

// How far make_step() goes: the work alone (what the sweep's first tier reads for its work bound),
// or the plan too.
enum class StepParts { work, plan };

// What a caller already holds for the scenario, to be lent instead of computed again: the sweep
// keeps splits, layer costs and groups across the candidates that share them (equal to
// pipeline_layers(s), layer_costs(s) and step_groups(s) to the last bit, planner/sweep.cpp). The
// split and costs must outlive the Step.
struct StepLent {
  const PipelineLayers* split = nullptr;
  const LayerCosts* costs = nullptr;
  const StepGroups* groups = nullptr;  // copied into the step (equal to step_groups(s))
};

// Builds the step of `s` into `out`, whose storage is reused (nothing of what it held is read):
// the groups, the split and the layer costs, the work, the options and, with StepParts::plan, the
// plan. The one place a Step is made. Assumes core::check(s) is empty.
void make_step(const core::Scenario& s, Step& out, StepParts parts = StepParts::plan, const StepLent& lent = {});

// Makes `step` own its split and layer costs: copies of what it was lent, so that it outlives the
// lender (the sweep keeps the steps it built for the plan key until its simulation tier takes
// them, planner/sweep.cpp). Nothing else of the step is copied.
void own_lent(Step& step);

}  // namespace ptdsim::analytic
