#pragma once
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::analytic {

// The analytic engine end to end: parameters, FLOPs, memory per stage, communication, compute
// and the first-order step time (1F1B closed form plus the communication that cannot hide).
// Assumes core::check(s) is empty. Pure and allocation-light: the sweep calls it per candidate.
core::Report evaluate(const core::Scenario& s);

}  // namespace ptdsim::analytic
