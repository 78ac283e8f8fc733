// Speed of the analytic engine: the sweep calls evaluate() once per candidate layout.
#include <benchmark/benchmark.h>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/io/load.hpp"
#include "../common/scenarios.hpp"

// GPT-3 175B on 1024 A100: the scalar model (no kernel tables).
static void BM_Evaluate(benchmark::State& state) {
  const auto s = ptdsim::testing::gpt3_1024();
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_Evaluate);

// GPT-3 175B in FP8 on 512 H100 (NeMo's layout): every operator from the shipped kernel tables
// (row lookups, the GEMM and attention models).
static void BM_EvaluateKernelTables(benchmark::State& state) {
  const auto s = ptdsim::io::load_scenario(std::string(PTDSIM_SOURCE_DIR) + "/scenarios/nemo-gpt3-175b-h100-fp8.yaml");
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_EvaluateKernelTables);

BENCHMARK_MAIN();
