// Speed of the analytic engine (docs/performance.md "Analytic engine"): evaluate() end to end on
// three shipped layouts, and how its cost grows with the pipeline's depth (BM_EvaluateScaleStages:
// tests/planner/scaling.py fits the exponent).
#include <benchmark/benchmark.h>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/io/load.hpp"
#include "../common/scenarios.hpp"

namespace {

ptdsim::core::Scenario load(const char* name) {
  return ptdsim::io::load_scenario(std::string(PTDSIM_SOURCE_DIR) + "/scenarios/" + name);
}

}  // namespace

// GPT-3 175B on 1024 A100: the scalar model (no kernel tables).
static void BM_Evaluate(benchmark::State& state) {
  const auto s = ptdsim::testing::gpt3_1024();
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_Evaluate);

// GPT-3 175B in FP8 on 512 H100 (NeMo's layout): every operator from the shipped kernel tables
// (row lookups, the GEMM and attention models).
static void BM_EvaluateKernelTables(benchmark::State& state) {
  const auto s = load("nemo-gpt3-175b-h100-fp8.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_EvaluateKernelTables);

// Llama 3 405B on 16,384 H100 as Meta ran it: ZeRO-3 without resharding (one segment per unit),
// 16 stages of 8 virtual stages, the embedding and the loss in the split, kernel tables.
static void BM_EvaluateLlama3_405b(benchmark::State& state) {
  const auto s = load("meta-llama3-405b-16k-h100.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_EvaluateLlama3_405b);

// GPT-3 175B on 1024 A100 with pp stages (tp 8, dp 128/pp, everything else as BM_Evaluate): the
// per-stage work (plan, folds, memory) grows with pp.
static void BM_EvaluateScaleStages(benchmark::State& state) {
  auto s = ptdsim::testing::gpt3_1024();
  s.parallel.pp = static_cast<int>(state.range(0));
  s.parallel.dp = 1024 / (8 * s.parallel.pp);
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_EvaluateScaleStages)->RangeMultiplier(2)->Range(1, 64);

BENCHMARK_MAIN();
