// One simulated training step, end to end (analytic costs, DAG build, run, summary): the figures
// docs/performance.md's "Simulator" section records.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/sim/step_graph.hpp"
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

// Megatron-LM 1T (L128 h25600 a160) on 3072 GPUs: tp 8, pp 64, dp 6, m = 512. Target (issue 18) < 5 ms.
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

// GPT-3 175B on 1024 GPUs: tp 8, pp 16, dp 8, m = 192. Target (issue 18) < 0.3 ms.
void BM_simulate_gpt3_1024(benchmark::State& state) {
  const core::Scenario s = testing::gpt3_1024();
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s));
  report_tasks(state, s);
}
BENCHMARK(BM_simulate_gpt3_1024)->Unit(benchmark::kMillisecond);

// The GPT-3 sweep's winner: a CP exchange beside every segment's compute under SM contention, so the
// step is not walked (docs/simulator.md "Fast-forward").
void BM_simulate_gpt3_cp4_contention(benchmark::State& state) {
  const core::Scenario s = testing::gpt3_cp4_contention();
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s));
  report_tasks(state, s);
}
BENCHMARK(BM_simulate_gpt3_cp4_contention)->Unit(benchmark::kMillisecond);

// A step's run alone (the DAG built once), with walks (Arg 1) or by the event loop alone (Arg 0).
void run_only(benchmark::State& state, const core::Scenario& s) {
  auto g = sim::build_step(analytic::plan_step(s));
  g.engine.set_walks(state.range(0) != 0);
  for (auto _ : state) {
    g.engine.run();
    benchmark::DoNotOptimize(g.engine.makespan());
  }
  state.counters["walked"] = static_cast<double>(g.engine.walked_tasks()) / static_cast<double>(g.engine.size());
}
void BM_run_gpt3_cp4_contention(benchmark::State& state) { run_only(state, testing::gpt3_cp4_contention()); }
BENCHMARK(BM_run_gpt3_cp4_contention)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
void BM_run_gpt3_1024(benchmark::State& state) { run_only(state, testing::gpt3_1024()); }
BENCHMARK(BM_run_gpt3_1024)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The parts of the 1T step: building the DAG (into the previous one's storage, as simulate() does),
// and running it.
void BM_build_1t_3072(benchmark::State& state) {
  const core::Scenario s = testing::megatron_1t_3072();
  const auto plan = analytic::plan_step(s);
  sim::StepGraph g;
  for (auto _ : state) {
    sim::build_step(plan, g);
    benchmark::DoNotOptimize(g.engine.size());
  }
}
BENCHMARK(BM_build_1t_3072)->Unit(benchmark::kMillisecond);

void BM_run_1t_3072(benchmark::State& state) { run_only(state, testing::megatron_1t_3072()); }
BENCHMARK(BM_run_1t_3072)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The floor under a run (docs/performance.md "The floor under a run"): a plain longest path over the
// same step's DAG (its edges and stream orders), each task lasting what it lasted in the run,
// visited in the run's time order, so no search for the next task, no event, no check that links
// stay unshared. Arg 0: the tasks numbered as the run lays them out (lane by lane); Arg 1: numbered
// in time order, so that the tasks visited together sit together in memory. The counter step_error
// says whether the order held (a dependency visited late would end the step early).
void longest_path_floor(benchmark::State& state, const core::Scenario& s) {
  auto g = sim::build_step(analytic::plan_step(s));
  sim::Engine& e = g.engine;
  e.run();
  const auto n = static_cast<std::int32_t>(e.size());
  std::vector<std::int32_t> run(static_cast<std::size_t>(n));  // the run's place of each task
  std::int32_t k = 0;
  for (int r = 0; r < e.ranks(); ++r)
    for (int q = 0; q < sim::kStreamKinds; ++q)
      for (sim::TaskId t : e.stream_tasks(r, static_cast<sim::StreamKind>(q))) run[t] = k++;
  std::vector<sim::TaskId> by_time(static_cast<std::size_t>(n));
  std::iota(by_time.begin(), by_time.end(), 0);
  std::sort(by_time.begin(), by_time.end(), [&](sim::TaskId a, sim::TaskId b) {
    if (e.start(a) != e.start(b)) return e.start(a) < e.start(b);
    if (e.finish(a) != e.finish(b)) return e.finish(a) < e.finish(b);
    return run[a] < run[b];
  });
  std::vector<std::int32_t> place(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) place[by_time[i]] = state.range(0) == 0 ? run[by_time[i]] : i;
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) order[i] = place[by_time[i]];
  std::vector<std::pair<sim::TaskId, sim::TaskId>> edges;
  e.all_edges(edges);
  std::vector<std::int32_t> begin(static_cast<std::size_t>(n) + 1, 0), succ(edges.size());
  for (const auto& [a, b] : edges) ++begin[place[a] + 1];
  for (std::int32_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<std::int32_t> fill(begin.begin(), begin.end() - 1);
  for (const auto& [a, b] : edges) succ[fill[place[a]]++] = place[b];
  std::vector<double> lasts(static_cast<std::size_t>(n)), ready(static_cast<std::size_t>(n)), finish(static_cast<std::size_t>(n));
  for (sim::TaskId t = 0; t < n; ++t) lasts[place[t]] = e.finish(t) - e.start(t);
  double end = 0;
  for (auto _ : state) {
    std::fill(ready.begin(), ready.end(), 0.0);
    end = 0;
    for (std::int32_t x : order) {
      const double f = ready[x] + lasts[x];
      finish[x] = f;
      end = std::max(end, f);
      for (std::int32_t j = begin[x]; j < begin[x + 1]; ++j) ready[succ[j]] = std::max(ready[succ[j]], f);
    }
    benchmark::DoNotOptimize(finish.data());
  }
  state.counters["tasks"] = n;
  state.counters["edges"] = static_cast<double>(edges.size());
  // the same step as the run's (each task lasting what it lasted there): 0 up to rounding
  state.counters["step_error"] = std::abs(end - e.makespan()) / e.makespan();
}
void BM_longest_path_1t_3072(benchmark::State& state) { longest_path_floor(state, testing::megatron_1t_3072()); }
BENCHMARK(BM_longest_path_1t_3072)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
void BM_longest_path_gpt3_1024(benchmark::State& state) { longest_path_floor(state, testing::gpt3_1024()); }
BENCHMARK(BM_longest_path_gpt3_1024)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// How the cost grows: GPT-3 175B on A100s (gpt3_1024: tp 8, pp 16, dp 8, m = 192) with one size
// varied at a time, the others kept. The table and fitted exponents of docs/performance.md
// ("Simulator", "How the cost grows") come from these: tests/sim/scaling_fit.py reads
// `bench_sim --benchmark_filter=scale --benchmark_format=json`.
void run_scaled(benchmark::State& state, const core::Scenario& s) {
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(s));
  report_tasks(state, s);
  state.counters["size"] = static_cast<double>(state.range(0));
}

// Transformer layers (pp 16: 3 to 48 layers a stage). A stage's pass is one task whatever its
// layers, so only the analytic side grows.
void BM_simulate_scale_layers(benchmark::State& state) {
  core::Scenario s = testing::gpt3_1024();
  s.model.layers = static_cast<int>(state.range(0));
  run_scaled(state, s);
}
BENCHMARK(BM_simulate_scale_layers)->Arg(48)->Arg(96)->Arg(192)->Arg(384)->Arg(768)->Unit(benchmark::kMillisecond);

// Pipeline stages (GPUs = 64 pp: the stages are added, tp and dp kept).
void BM_simulate_scale_pp(benchmark::State& state) {
  core::Scenario s = testing::gpt3_1024();
  s.parallel.pp = static_cast<int>(state.range(0));
  s.gpus = s.parallel.tp * s.parallel.pp * s.parallel.dp;
  run_scaled(state, s);
}
BENCHMARK(BM_simulate_scale_pp)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Arg(96)->Unit(benchmark::kMillisecond);

// Micro-batches per step (global batch = 8 m).
void BM_simulate_scale_microbatches(benchmark::State& state) {
  core::Scenario s = testing::gpt3_1024();
  s.training.global_batch = static_cast<int>(state.range(0)) * s.parallel.dp;
  run_scaled(state, s);
}
BENCHMARK(BM_simulate_scale_microbatches)
    ->Arg(48)->Arg(96)->Arg(192)->Arg(384)->Arg(768)->Arg(1536)->Unit(benchmark::kMillisecond);

// GPUs through data parallelism (GPUs = 128 dp, m = 192 kept: the global batch grows with dp, as
// large runs scale): 1024 to 262,144 GPUs. The simulator runs one representative rank per stage.
void BM_simulate_scale_gpus(benchmark::State& state) {
  core::Scenario s = testing::gpt3_1024();
  s.gpus = static_cast<int>(state.range(0));
  s.parallel.dp = s.gpus / (s.parallel.tp * s.parallel.pp);
  s.training.global_batch = 192 * s.parallel.dp;
  run_scaled(state, s);
}
BENCHMARK(BM_simulate_scale_gpus)
    ->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Arg(262144)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
