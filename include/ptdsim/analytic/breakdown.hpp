#pragma once
#include <vector>

#include "ptdsim/analytic/params.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/report.hpp"

// Where one step's compute goes (Report::compute): the operators of a transformer layer with their
// shapes, times and sources, the ends of the model, and the share of each kind of work in the whole
// model's compute per step (docs/analytic.md "Where the compute goes").
namespace ptdsim::analytic {

// `plan`: the scenario's step plan (the optimizer step of every stage comes from there).
core::ComputeBreakdown compute_breakdown(const core::Scenario& s, const StepPlan& plan);
// The same with the stages' layers given (stage_layers(s)).
core::ComputeBreakdown compute_breakdown(const core::Scenario& s, const StepPlan& plan,
                                         const std::vector<StageLayers>& stages);
// The same with the operators given as well (layer_costs(s)'s).
struct LayerCosts;
core::ComputeBreakdown compute_breakdown(const core::Scenario& s, const StepPlan& plan,
                                         const std::vector<StageLayers>& stages, const LayerCosts& costs);

}  // namespace ptdsim::analytic
