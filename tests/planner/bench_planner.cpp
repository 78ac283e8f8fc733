// The sweep's speed on the two spaces docs/performance.md quotes: GPT-3 175B on 1024 A100-80GB
// (scenarios/default.yaml) and Megatron-LM's 1T on 3072 GPUs (scenarios/narayanan-1t.yaml), every
// legal layout with micro-batches 1..8, scheduler included. Counters: candidates per second.
#include <benchmark/benchmark.h>

#include <string>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/simulate.hpp"

using namespace ptdsim;

namespace {

core::Scenario load(const char* name) {
  return io::load_scenario(std::string(PTDSIM_SOURCE_DIR) + "/scenarios/" + name);
}

void sweep_bench(benchmark::State& state, const char* scenario) {
  const core::Scenario base = load(scenario);
  const planner::Space space(base, planner::SearchSpace{});
  planner::SweepOptions o;
  o.threads = static_cast<int>(state.range(0));
  planner::SweepResult r;
  for (auto _ : state) {
    r = planner::sweep(base, space, o);
    benchmark::DoNotOptimize(r.results.data());
  }
  state.counters["candidates"] = static_cast<double>(r.evaluated);
  state.counters["feasible"] = static_cast<double>(r.feasible);
  state.counters["simulated"] = static_cast<double>(r.simulated);
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(r.evaluated), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SweepGpt3_175b_1024(benchmark::State& s) { sweep_bench(s, "default.yaml"); }
void BM_SweepMegatron1T_3072(benchmark::State& s) { sweep_bench(s, "narayanan-1t.yaml"); }

// The two tiers alone, per candidate, on the published GPT-3 layout.
void BM_AnalyticEvaluate(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(analytic::evaluate(s).step_s);
}
void BM_LowerBound(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  const analytic::StepPlan plan = analytic::plan_step(s);
  for (auto _ : state) benchmark::DoNotOptimize(planner::step_lower_bound(plan));
}
void BM_Simulate(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s).step_s);
}

}  // namespace

BENCHMARK(BM_SweepGpt3_175b_1024)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepMegatron1T_3072)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyticEvaluate)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LowerBound)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Simulate)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
