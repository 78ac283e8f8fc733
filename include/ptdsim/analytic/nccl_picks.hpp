#pragma once
#include <string>
#include <vector>

#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/core/scenario.hpp"

// What runs each kind of the step's communication (the report's communication.collectives;
// docs/analytic.md "NCCL's algorithms and protocols"): per kind and collective, its group, the bytes
// of one call as the step times it, and NCCL's pick for it, "calibrated" where a calibrated
// nccl-tests row times it (a row measured with a forced algorithm: that algorithm, protocol
// "calibrated"), "p2p" for all-to-all and send/recv (NCCL's point-to-point, outside its tuner; the
// link model times them).
namespace ptdsim::analytic {

struct CollectivePick {
  std::string kind;       // tp, cp, ep, pp, dp (the report's communication kinds)
  core::Collective op = core::Collective::all_reduce;
  int ranks = 1;
  double bytes = 0;       // one call's size (nccl-tests' "size")
  std::string algorithm;  // NCCL's name (ring, tree, nvls, nvls_tree, collnet_direct, collnet_chain, pat), calibrated, p2p
  std::string protocol;   // ll, ll128, simple; calibrated; empty for p2p
  // what forced_row_warning says of the calibrated rows forced to an algorithm or protocol at this
  // size: passed over (NCCL's model picks another algorithm) or used outside what they measured
  std::string warning;
};
std::vector<CollectivePick> collective_picks(const core::Scenario& s);
// The same with the groups given (a Step's: analytic::Step::groups).
std::vector<CollectivePick> collective_picks(const core::Scenario& s, const StepGroups& groups);

}  // namespace ptdsim::analytic
