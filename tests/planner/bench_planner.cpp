// The sweep's speed (docs/performance.md "Planner"): the full spaces of GPT-3 175B on 1024
// A100-80GB (scenarios/default.yaml), Megatron-LM's 1T on 3072 GPUs (scenarios/narayanan-1t.yaml)
// and Llama 3 405B on 16,384 H100 (scenarios/meta-llama3-405b-16k-h100.yaml: ZeRO-3 / FSDP and
// hybrid sharding in the space, the embedding and the loss in the pipeline split), every legal
// layout with micro-batches 1..8, scheduler included; what tier 1 runs per candidate; and how the
// sweep's cost grows, one size at a time (BM_SweepScale*: tests/planner/scaling.py fits the exponent).
// Counters: candidates, feasible, simulated, candidates per second.
#include <benchmark/benchmark.h>

#include <string>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;

namespace {

core::Scenario load(const char* name) {
  return io::load_scenario(std::string(PTDSIM_SOURCE_DIR) + "/scenarios/" + name);
}

void run_sweep(benchmark::State& state, const core::Scenario& base, const planner::SearchSpace& bounds,
               planner::SweepOptions o) {
  const planner::Space space(base, bounds);
  planner::SweepResult r;
  for (auto _ : state) {
    r = planner::sweep(base, space, o);
    benchmark::DoNotOptimize(r.results.data());
  }
  state.counters["indices"] = static_cast<double>(space.size());
  state.counters["candidates"] = static_cast<double>(r.evaluated);
  state.counters["feasible"] = static_cast<double>(r.feasible);
  state.counters["simulated"] = static_cast<double>(r.simulated);
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(r.evaluated), benchmark::Counter::kIsIterationInvariantRate);
}

// `ptdsim sweep SCENARIO --threads T`: the defaults (top 10, the scenario's layout ranked).
void sweep_bench(benchmark::State& state, const char* scenario) {
  planner::SweepOptions o;
  o.threads = static_cast<int>(state.range(0));
  run_sweep(state, load(scenario), planner::SearchSpace{}, o);
}

void BM_SweepGpt3_175b_1024(benchmark::State& s) { sweep_bench(s, "default.yaml"); }
void BM_SweepMegatron1T_3072(benchmark::State& s) { sweep_bench(s, "narayanan-1t.yaml"); }
void BM_SweepLlama3_405b_16384(benchmark::State& s) { sweep_bench(s, "meta-llama3-405b-16k-h100.yaml"); }

// How the cost grows, one size at a time, on one thread, the scenario's own layout not ranked (it
// is a layout of 1024 GPUs only): GPT-3 175B on 1024 GPUs with micro-batches up to N (the number of
// candidates: the space's micro-batch digit takes 1, 2, 3, 4, 5, 6 values), and on N GPUs with
// everything else as in scenarios/default.yaml (global batch 1536).
void BM_SweepScaleCandidates(benchmark::State& state) {
  planner::SearchSpace b;
  b.max_micro_batch = static_cast<int>(state.range(0));
  planner::SweepOptions o;
  o.threads = 1;
  o.rank_scenario = false;
  run_sweep(state, load("default.yaml"), b, o);
}
void BM_SweepScaleGpus(benchmark::State& state) {
  core::Scenario base = load("default.yaml");
  base.gpus = static_cast<int>(state.range(0));
  planner::SweepOptions o;
  o.threads = 1;
  o.rank_scenario = false;
  run_sweep(state, base, planner::SearchSpace{}, o);
}

// What tier 1 runs per candidate, on the published GPT-3 layout: the memory test, the plan, the
// bound; and the analytic engine's whole report (CSV rows, the scenario's layout).
void BM_PeakMemory(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(analytic::peak_memory_bytes(s));
}
void BM_PlanStep(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(analytic::plan_step(s).comms.size());
}
void BM_LowerBound(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  const analytic::StepPlan plan = analytic::plan_step(s);
  for (auto _ : state) benchmark::DoNotOptimize(planner::step_lower_bound(plan));
}
// The schedule bound that the sweep asks for before a simulation: the README's layout (16 stages,
// 192 micro-batches) and the GPT-3 sweep's winner (8 stages of 12 chunks, 48 micro-batches).
void BM_ScheduleBound(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  const analytic::StepPlan plan = analytic::plan_step(s);
  for (auto _ : state) benchmark::DoNotOptimize(planner::schedule_lower_bound(plan));
}
void BM_ScheduleBoundCp4(benchmark::State& state) {
  const analytic::StepPlan plan = analytic::plan_step(testing::gpt3_cp4_contention());
  for (auto _ : state) benchmark::DoNotOptimize(planner::schedule_lower_bound(plan));
}
// Megatron-LM's 1T layout on 3072 GPUs: 64 stages of 512 micro-batches, 65,536 passes
void BM_ScheduleBound1T(benchmark::State& state) {
  const analytic::StepPlan plan = analytic::plan_step(load("narayanan-1t.yaml"));
  for (auto _ : state) benchmark::DoNotOptimize(planner::schedule_lower_bound(plan));
}
void BM_AnalyticEvaluate(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(analytic::evaluate(s).step_s);
}
void BM_Simulate(benchmark::State& state) {
  const core::Scenario s = load("default.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s).step_s);
}

}  // namespace

BENCHMARK(BM_SweepGpt3_175b_1024)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepMegatron1T_3072)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepLlama3_405b_16384)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepScaleCandidates)->Arg(1)->Arg(2)->Arg(3)->Arg(4)->Arg(6)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepScaleGpus)->RangeMultiplier(2)->Range(64, 4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PeakMemory)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanStep)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LowerBound)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleBound)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleBoundCp4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleBound1T)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnalyticEvaluate)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Simulate)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
