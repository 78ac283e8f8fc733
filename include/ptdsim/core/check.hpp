#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/scenario.hpp"

namespace ptdsim::core {

// One cross-field problem of a scenario. `key` is the dotted path it is reported against
// (io maps it to a file position); `reason` is a short stable word the planner counts by
// (divisibility, batch, range, unsupported).
struct Problem {
  std::string key;
  std::string reason;
  std::string message;
};

// Every cross-field problem of a scenario, not only the first: tp*cp*pp*dp == gpus, tp divides
// heads and kv_heads, layers split over pp*vpp, global batch divides by micro_batch*dp, ep divides
// experts, ... Empty when the scenario can be evaluated. Pure, cheap: the sweep calls it per candidate.
std::vector<Problem> check(const Scenario& s);

}  // namespace ptdsim::core
