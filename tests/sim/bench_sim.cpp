// One simulated training step, end to end (analytic costs, DAG build, run, summary): the figures
// docs/performance.md's "Simulator" section records.
#include <benchmark/benchmark.h>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/sim/schedule.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/sim/summary.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;

namespace {

void report_tasks(benchmark::State& state, const core::Scenario& s) {
  auto g = sim::build_step(analytic::plan_step(s));
  state.counters["tasks"] = static_cast<double>(g.engine.size());
  state.counters["edges"] = static_cast<double>(g.engine.edges());
}

// Megatron-LM 1T (L128 h25600 a160) on 3072 GPUs: tp 8, pp 64, dp 6, m = 512. Target < 20 ms.
void BM_simulate_1t_3072(benchmark::State& state) {
  const core::Scenario s = testing::megatron_1t_3072();
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s));
  report_tasks(state, s);
}
BENCHMARK(BM_simulate_1t_3072)->Unit(benchmark::kMillisecond);

// The same with the shipped A100 files' SM contention (16 of 108 SMs per running collective): every
// collective start and end reschedules its rank's running compute task.
void BM_simulate_1t_3072_contention(benchmark::State& state) {
  core::Scenario s = testing::megatron_1t_3072();
  s.hardware.gpu.sms = 108;
  s.hardware.gpu.comm_sms = 16;
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s));
  report_tasks(state, s);
}
BENCHMARK(BM_simulate_1t_3072_contention)->Unit(benchmark::kMillisecond);

// GPT-3 175B on 1024 GPUs: tp 8, pp 16, dp 8, m = 192. Target < 2 ms.
void BM_simulate_gpt3_1024(benchmark::State& state) {
  const core::Scenario s = testing::gpt3_1024();
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s));
  report_tasks(state, s);
}
BENCHMARK(BM_simulate_gpt3_1024)->Unit(benchmark::kMillisecond);

// The parts of the 1T step: building the DAG, and running it.
void BM_build_1t_3072(benchmark::State& state) {
  const core::Scenario s = testing::megatron_1t_3072();
  const auto plan = analytic::plan_step(s);
  for (auto _ : state) benchmark::DoNotOptimize(sim::build_step(plan));
}
BENCHMARK(BM_build_1t_3072)->Unit(benchmark::kMillisecond);

void BM_run_1t_3072(benchmark::State& state) {
  const core::Scenario s = testing::megatron_1t_3072();
  auto g = sim::build_step(analytic::plan_step(s));
  for (auto _ : state) {
    g.engine.run();
    benchmark::DoNotOptimize(g.engine.makespan());
  }
}
BENCHMARK(BM_run_1t_3072)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
