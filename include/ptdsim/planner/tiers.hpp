#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/report.hpp"

// Where a ranked layout's parallel groups sit in the cluster (docs/planner.md "Groups against the
// topology"): for each of tp, cp, ep, dp and pp, how many nodes (NVLink domains) its group spans
// and which switch tiers its traffic crosses, read off the groups the step resolves
// (analytic::step_groups, FabricSpan). Computed for the sweep's winner and runners-up only, never
// per candidate.
namespace ptdsim::planner {

struct GroupTiers {
  const char* group = "tp";  // "tp", "cp", "ep", "dp", "pp" (core::kCommBucketNames)
  int degree = 1;            // the dimension's degree in the layout (parallel.tp, ...)
  int ranks = 1;             // the ranks of the group its traffic runs over: dp's is dp*cp
                             // (gradients), pp's the two neighbouring stages of a send
  int nodes = 1;             // nodes (NVLink domains) those ranks lie on
  int top = -1;              // the highest switch tier crossed: -1 none (inside the NVLink domain)
  // "NVLink domain" (when the group leaves it), then each switch tier's name from the leaf up to
  // `top`; empty when the group stays inside one NVLink domain
  std::vector<std::string> crosses;
};

// One entry per group kind, in core::kCommBucketNames order (a dimension of degree 1 included:
// it crosses nothing).
std::vector<GroupTiers> group_tiers(const core::Scenario& s);

// When the two layouts' groups of one kind (`kind`, a core::CommBucket index) cross different tiers,
// one sentence with the cost difference, e.g. "tp 16 crosses the NVLink domain where #2's tp 8 does
// not: +12.3 ms of exposed TP comm per step (+40.1 ms of TP collectives)"; "" when they cross the
// same. `a` is the best layout (#1), `b` the one ranked `rank_b`.
std::string tier_difference(const core::Report& a, const GroupTiers& x, const core::Report& b, const GroupTiers& y,
                            int kind, int rank_b);

}  // namespace ptdsim::planner
