#pragma once
#include <string>

#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/timeline.hpp"

namespace ptdsim::sim {

// Simulates one training step (the step's plan: it must hold one) with the discrete-event engine
// and returns the report `ptdsim evaluate` prints: memory and FLOPs from the analytic engine, step time, bubble,
// exposed communication per kind, micro-batches in flight per stage and the critical path from
// the simulation (report.engine == "simulation"). When `trace_json` is given it receives a Chrome
// trace-event JSON of the step, and `timeline` the step's bars for the HTML report (sim/timeline.hpp).
// Assumes core::check(s) is empty.
core::Report simulate(const analytic::Step& step, std::string* trace_json = nullptr,
                      core::Timeline* timeline = nullptr);
// The same on the scenario's step, built into this thread's kept one (analytic::make_step).
core::Report simulate(const core::Scenario& s, std::string* trace_json = nullptr,
                      core::Timeline* timeline = nullptr);

}  // namespace ptdsim::sim
