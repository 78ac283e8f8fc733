#pragma once
#include <string>

#include "ptdsim/core/report.hpp"

// Why a ranked layout trails the best one, in a few words for the sweep table.
namespace ptdsim::planner {

// The largest positive difference between the two reports' step-time breakdowns: "bigger bubble",
// "exposed DP comm", "exposed TP comm across nodes", "recompute overhead", "slower kernels",
// "optimizer step", with its size ("bigger bubble +0.41 s"). "" when `r` is not slower.
std::string why_slower(const core::Report& best, const core::Report& r);

// The largest positive difference in the peak stage's memory: "activations +3.2 GiB", ...
// "" when `r` does not use more.
std::string why_bigger(const core::Report& best, const core::Report& r);

}  // namespace ptdsim::planner
