#pragma once
#include "ptdsim/analytic/assemble.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::analytic {

// The analytic engine end to end: the step plan folded in closed form (the schedule's bubble plus
// the communication that cannot hide; docs/analytic.md "Folding the plan"), assembled into the
// report (memory per stage, FLOPs, communication, throughput). Assumes core::check(s) is empty.
// The step must hold its plan (StepParts::plan). Pure and allocation-light: the sweep calls it per candidate.
core::Report evaluate(const Step& step);
// The same on the scenario's step, built into this thread's kept one (make_step).
core::Report evaluate(const core::Scenario& s);
// The analytic engine's times of a plan alone (no scenario: hand-made plans in tests).
StepTiming analytic_timing(const StepPlan& plan);

}  // namespace ptdsim::analytic
