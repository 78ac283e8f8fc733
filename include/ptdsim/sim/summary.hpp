#pragma once
#include <array>
#include <string>
#include <vector>

#include "ptdsim/core/report.hpp"
#include "ptdsim/sim/step_graph.hpp"

namespace ptdsim::sim {

// What a simulated step comes to, read off a StepGraph whose engine has run.
struct StepSummary {
  double step_s = 0;
  int busiest_rank = 0;     // the rank with the most pipeline compute (F, B, W)
  double compute_s = 0;     // that rank's pipeline compute
  double contention_s = 0;  // the part of compute_s its collectives' SMs cost (Engine::set_comm_share)
  double bubble_s = 0;      // that rank's idle time until the last pipeline pass of any rank
                            // ends: neither compute nor its TP/CP/EP collectives running
  double optimizer_s = 0;   // the longest optimizer step
  double offload_s = 0;     // the longest CPU offload phase (0: none)
  // Per core::CommBucket: the time of that kind's transfers on the critical path during which the
  // rank waiting for them computes nothing.
  std::array<double, core::kCommBucketCount> exposed_s{};
  std::vector<double> in_flight;  // per rank: peak micro-batches whose activations it holds
  std::vector<core::BoundPart> bounded_by;  // the critical path, largest parts first
  // the critical path cut into causes that add up to step_s (core::Report::critical_path)
  std::vector<core::PathPart> critical_path;
};

StepSummary summarize(const StepGraph& g);

}  // namespace ptdsim::sim
