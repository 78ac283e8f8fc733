#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/planner/space.hpp"

// The sweep: every candidate of a Space is checked (core::check), evaluated by the analytic engine
// (memory and a lower bound on the step time) and, unless the bound proves it cannot reach the
// top K, simulated by the discrete-event scheduler. Deterministic: the result depends neither on
// the thread count nor on the order the threads finish (docs/planner.md "Determinism").
namespace ptdsim::planner {

enum class Objective { time, memory, mfu };

// One evaluated candidate, for CSV: every candidate that passed core::check, in index order.
struct Row {
  const Candidate& candidate;
  // "ranked" (simulated), "pruned" (fits, but its bound shows it cannot reach the top K: the
  // numbers are the analytic engine's) or "memory" (does not fit: analytic numbers)
  const char* status;
  double lower_bound_s;
  const core::Report& report;  // report.engine says which engine produced it
};

struct Progress {
  const char* phase;  // "analytic", "simulation", "rows"
  std::uint64_t done;
  std::uint64_t total;
};

struct SweepOptions {
  Objective objective = Objective::time;
  int top = 10;
  int threads = 0;  // 0: std::thread::hardware_concurrency()
  // Called once per evaluated candidate, in index order, from the calling thread (CSV streaming).
  std::function<void(const Row&)> on_row;
  // Called from the calling thread about every 100 ms while the sweep runs.
  std::function<void(const Progress&)> on_progress;
};

struct Ranked {
  Candidate candidate;
  core::Report report;  // identical to sim::simulate of the candidate's scenario
  std::string slower_because;  // "" for the first; see explain.hpp
};

struct SweepResult {
  int gpus = 0;
  std::uint64_t evaluated = 0;  // candidates enumerated (feasible + every rejected reason)
  std::uint64_t feasible = 0;   // passed core::check and fit in memory
  std::uint64_t simulated = 0;  // feasible candidates the scheduler ran
  std::uint64_t pruned = 0;     // feasible, not simulated: bound above the K-th best (not rejected)
  std::map<std::string, std::uint64_t> rejected;  // reason -> count (core::check's words, memory)
  std::vector<Ranked> results;                    // best first, at most `top`
};

SweepResult sweep(const core::Scenario& base, const Space& space, const SweepOptions& options = {});

// A lower bound on sim::simulate(s).step_s from the analytic engine's per-stage costs
// (docs/planner.md "Lower bound"). `analytic` is analytic::evaluate(s).
double step_lower_bound(const core::Scenario& s, const core::Report& analytic);

}  // namespace ptdsim::planner
