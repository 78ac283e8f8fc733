#pragma once
#include <vector>

#include "ptdsim/sim/engine.hpp"

namespace ptdsim::sim {

// Checks on the task graph built into an engine (its dependencies plus the stream-order edges),
// done with Boost.Graph in the source so Boost stays out of the headers.

// True when the graph has no cycle (a topological order exists).
bool is_acyclic(const Engine& engine);

// Length of the longest path when every task takes its alone_s(): the contention-free critical
// path. Equals the simulated makespan when no link is shared. Throws std::logic_error on a cycle.
double static_critical_path_s(const Engine& engine, std::vector<TaskId>* path = nullptr);

}  // namespace ptdsim::sim
