#pragma once
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::analytic {

// What else fits on the layout (docs/analytic.md "What fits"): the largest micro-batch (a divisor of
// global_batch / dp, so the global batch stays) and the longest sequence (a multiple of 256, at the
// scenario's micro-batch) for which core::check passes and every stage's memory fits the GPU, by the
// analytic engine's memory model. 0 when not even the scenario's own value fits.
struct Capacity {
  int micro_batch = 0;
  int seq_len = 0;
};
Capacity capacity(const core::Scenario& s);

}  // namespace ptdsim::analytic
