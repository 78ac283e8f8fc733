#pragma once
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/report.hpp"

// An MoE model's experts as the report shows them (docs/analytic.md "Expert parallelism", "In the
// report"): their layout, their memory on a GPU of one stage, and where one MoE layer's time goes.
namespace ptdsim::analytic {

// `stage` is the pipeline stage whose GPU the memory is for (the report's peak stage); `split` and
// `costs` are the step's. An empty report (present false) for a dense model.
core::ExpertsReport experts_report(const core::Scenario& s, int stage, const PipelineLayers& split,
                                   const LayerCosts& costs);

}  // namespace ptdsim::analytic
