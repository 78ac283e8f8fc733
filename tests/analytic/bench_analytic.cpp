// Speed of the analytic engine: the sweep calls evaluate() once per candidate layout.
#include <benchmark/benchmark.h>

#include "ptdsim/analytic/evaluate.hpp"
#include "../common/scenarios.hpp"

static void BM_Evaluate(benchmark::State& state) {
  const auto s = ptdsim::testing::gpt3_1024();
  for (auto _ : state) benchmark::DoNotOptimize(ptdsim::analytic::evaluate(s));
}
BENCHMARK(BM_Evaluate);

BENCHMARK_MAIN();
