#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/tiers.hpp"

// The sweep: every candidate of a Space is checked (core::check), evaluated by the analytic engine
// (memory and a lower bound on the step time) and, unless the bound proves it cannot reach the
// top K, simulated by the discrete-event scheduler. Deterministic: the result depends neither on
// the thread count nor on the order the threads finish (docs/planner.md "Determinism").
namespace ptdsim::planner {

// What the sweep ranks by. Days, GPU-hours and cost to train rank as time does (for one GPU count
// and token budget they are proportional to the step time); energy is step time weighted by the
// GPU's power over the step (analytic::gpu_power_w), so a slower layout that idles more can win.
enum class Objective { time, memory, mfu, energy };

// One evaluated candidate, for CSV: every candidate that passed core::check, in index order.
struct Row {
  const Candidate& candidate;
  // "ranked" (simulated), "pruned" (fits, but its bound shows it cannot reach the top K: the
  // numbers are the analytic engine's) or "memory" (does not fit: analytic numbers)
  const char* status;
  // step_lower_bound(), or for a candidate that its schedule bound kept from the simulation, that
  // bound (schedule_lower_bound()), with the cost of scale's floor added (scale_wait_floor())
  double lower_bound_s;
  const core::Report& report;  // report.engine says which engine produced it
};

struct Progress {
  const char* phase;  // "analytic", "simulation", "rank", "rows"
  std::uint64_t done;
  // What the phase will do in all: the simulation phase counts the candidates it will still
  // simulate or spare by their schedule bound, a number that shrinks as the top K improves and the
  // bound prunes more.
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
  // Also rank the base scenario's own layout among the candidates (SweepResult::scenario).
  bool rank_scenario = true;
  // A layout fits only with at least this much memory left on every GPU (--min-free-gib), bytes.
  double min_free_bytes = 0;
  // At most this many simulations beyond the top K's for that rank; past it the rank is a range.
  // (A candidate whose schedule bound puts it beyond the layout costs none.)
  // An exact rank can need thousands (8,700 for GPT-3's published layout on 1024 GPUs, 7,300 for
  // the 1T's at 50 ms each), so the default is sized for the speed targets of docs/performance.md.
  std::uint64_t rank_limit = 64;
};

struct Ranked {
  Candidate candidate;
  core::Report report;  // identical to sim::simulate of the candidate's scenario
  std::string slower_because;  // "" for the first; see explain.hpp
  int rank = 0;                // its row's place: near-ties share the rank of the row they tie
  int near_tie_of = -1;        // the index in `results` of the row it is a near-tie of (near_ties.hpp), -1: a row
};

// Where the base scenario's own layout ranks among every feasible candidate, in the same total
// order as `results` (docs/planner.md "Where does my layout rank").
struct ScenarioRank {
  bool ranked = false;
  std::string why_not;  // when not ranked: another GPU count, outside the space, check(), memory
  Candidate candidate;  // the layout as a point of the space (when it is one)
  std::uint64_t rank = 0;  // 1 + the feasible candidates that order before it
  // rank_limit stopped the count: the true rank lies in [rank, rank + unresolved].
  bool rank_is_lower_bound = false;
  std::uint64_t unresolved = 0;  // candidates that could order before it, left unsettled
  std::uint64_t simulated = 0;   // simulations beyond the top K's spent on the rank
  core::Report report;           // what the sweep ranks it by: sim::simulate, as for `results`
  std::string slower_because;    // against results[0], as for a ranked layout; "" at rank 1
};

struct SweepResult {
  int gpus = 0;
  std::uint64_t evaluated = 0;  // candidates enumerated (feasible + every rejected reason)
  std::uint64_t feasible = 0;   // passed core::check and fit in memory
  std::uint64_t simulated = 0;  // feasible candidates the scheduler ran
  std::uint64_t pruned = 0;     // feasible, not simulated: a bound above the K-th best (not rejected)
  std::map<std::string, std::uint64_t> rejected;  // reason -> count (core::check's words, memory)
  // For each of core::check's reasons in `rejected`: the first candidate's (in enumeration order)
  // first problem, with its key and message, so a sweep that rejects everything says which rule did
  std::map<std::string, core::Problem> rejected_example;
  std::vector<Ranked> results;  // best first: `top` rows at most, each followed by none or more of its near-ties
  std::optional<ScenarioRank> scenario;           // absent when options.rank_scenario is off
  std::string no_candidate;  // when nothing was enumerated: why (Space::why_no_candidate)
  // The best layout's groups against the topology (tiers.hpp), and for each group kind whose tiers
  // differ between it and a runner-up, the sentence of the best-ranked such runner-up (at most one
  // a kind). Empty when there are no results.
  std::vector<GroupTiers> best_tiers;
  std::vector<std::string> tier_notes;
};

SweepResult sweep(const core::Scenario& base, const Space& space, const SweepOptions& options = {});

// A lower bound on sim::simulate(s).step_s from the step plan the scheduler is built from
// (docs/planner.md "Lower bound"); `plan` is analytic::plan_step(s).
double step_lower_bound(const analytic::StepPlan& plan);

// A tighter lower bound on the same, at about a tenth of a simulation's cost: step_lower_bound()
// with each stage's chain of passes replaced by the longest path through the schedule's graph of
// passes (docs/planner.md "Schedule bound"). Never below step_lower_bound(plan). The sweep asks for
// it before it simulates a candidate that the cheaper keys could not prune.
double schedule_lower_bound(const analytic::StepPlan& plan);

// A lower bound on step_lower_bound() and busiest_stage_compute() of the step's plan, read off the
// step's work and options (a Step built with StepParts::work) without building the plan: each pass counts only its compute
// and its serial TP and EP collectives, the collective streams only ZeRO-3's. The sweep orders
// candidates by it and builds plans only for those that can still matter (docs/planner.md
// "Lower bound").
struct WorkBound {
  double bound_s = 0;
  double busiest_s = 0;
};
WorkBound work_lower_bound(const analytic::Step& step);

// The energy one GPU spends on a step, joules (the objective `energy`): the linear power model
// of analytic::gpu_power_w integrated over the step; 0 when the hardware gives no power.
double step_energy_j(const core::Report& r);

// Whether a report's layout fits with `min_free_bytes` left over (SweepOptions::min_free_bytes).
bool fits(const core::Report& r, double min_free_bytes);
bool fits(double peak_bytes, double capacity_bytes, double min_free_bytes);

// The largest compute of one pipeline stage over a step, per the plan (no contention): the
// scheduler's busiest rank computes at least this long.
double busiest_stage_compute(const analytic::StepPlan& plan);

// What either engine adds to the makespan the bounds above bound, at least: the cost of scale's
// wait for the slowest of the job's GPUs (analytic::straggler_wait_s) over `busiest_s` of compute,
// no exposed communication counted. The wait grows with the busiest rank's compute, which is at
// least busiest_stage_compute() (or WorkBound::busiest_s), so the sweep adds this to each bound
// before it compares one with a simulated step. 0 on hardware without a jitter.
double scale_wait_floor(const core::Scenario& s, double busiest_s);

}  // namespace ptdsim::planner
