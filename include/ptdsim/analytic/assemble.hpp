#pragma once
#include <array>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::analytic {

// What an engine found out about a step: the times that depend on how it was run. Everything else
// in the report comes from the scenario and the plan, the same for every engine.
struct StepTiming {
  core::EngineKind engine = core::EngineKind::analytic;
  double step_s = 0;
  double compute_s = 0;     // the busiest stage's pipeline compute, contention included
  double contention_s = 0;  // of compute_s: lost to SMs held by collectives beside it
  double bubble_s = 0;
  double optimizer_s = 0;
  double offload_s = 0;     // CPU offload's serial phase (StagePlan::offload_s), the longest
  std::array<double, core::kCommBucketCount> exposed_s{};
  std::vector<double> in_flight;  // per stage: micro-batches held at the peak; empty: the schedule's
  std::vector<core::BoundPart> bounded_by;
  std::vector<core::PathPart> critical_path;  // parts that add up to step_s
};

// The report of a step, assembled in one place from whichever engine ran: memory per stage (with
// the engine's in-flight counts), FLOPs, communication volumes and overlap ratios (from the plan),
// the engine's times, and throughput, MFU and HFU, all read off the step (which holds its plan). `t`'s lists move into the report.
core::Report assemble_report(const Step& step, StepTiming t);

}  // namespace ptdsim::analytic
