// The cost of scale (docs/analytic.md "The cost of scale"): the expected maximum of N normal draws
// and the step's wait for its slowest GPU, in both engines.
#include <catch2/catch.hpp>
#include <cmath>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/scale_cost.hpp"
#include "ptdsim/core/report.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

TEST_CASE("scale cost: Blom's expected maximum of n normals against the exact values", "[analytic][scale]") {
  // Harter (1961) tabulates E[max of n standard normals]: 0.5642 at n 2 (exactly 1/sqrt(pi)),
  // 1.5388 at 10, 2.5076 at 100, 3.2414 at 1,000. Blom's (n - 0.375)/(n + 0.25) quantile is within
  // 0.6% of each from n 10 on (1.5466, 2.4986, 3.2273 by Python's NormalDist().inv_cdf).
  CHECK(expected_max_normal(1) == 0.0);
  CHECK(expected_max_normal(0.5) == 0.0);
  CHECK(expected_max_normal(10) == Approx(1.5388).epsilon(0.006));
  CHECK(expected_max_normal(100) == Approx(2.5076).epsilon(0.006));
  CHECK(expected_max_normal(1000) == Approx(3.2414).epsilon(0.006));
  CHECK(expected_max_normal(10) == Approx(1.5466353).epsilon(1e-6));
  CHECK(expected_max_normal(2048) == Approx(3.4270053).epsilon(1e-6));
  // n 2: Blom's quantile of 1.625/2.25 = 0.7222 is 0.5895, 4.5% above 1/sqrt(pi): the approximation
  // is for the sizes a job has
  CHECK(expected_max_normal(2) == Approx(0.5895).epsilon(0.001));
  // it grows without bound, as sqrt(2 ln n) does, and ever more slowly
  CHECK(expected_max_normal(1e6) > expected_max_normal(1e5));
  CHECK(expected_max_normal(1e6) - expected_max_normal(1e5) < expected_max_normal(1e2) - expected_max_normal(1e1));
  CHECK(expected_max_normal(1e6) / std::sqrt(2 * std::log(1e6)) == Approx(1.0).epsilon(0.1));
}

TEST_CASE("scale cost: the wait for the slowest rank", "[analytic][scale]") {
  // 2048 GPUs, 10 s of compute at 2% spread and 1 s of exposed communication at 10%: the rank's
  // standard deviation is hypot(0.2, 0.1) = 0.2236 s, times z(2048) = 3.4270: 0.7663 s.
  const core::JitterSpec j{0.02, 0.10};
  CHECK(straggler_wait_s(j, 2048, 10.0, 1.0) == Approx(3.4270053 * std::hypot(0.2, 0.1)).epsilon(1e-6));
  CHECK(straggler_wait_s(j, 1, 10.0, 1.0) == 0.0);
  CHECK(straggler_wait_s(core::JitterSpec{}, 2048, 10.0, 1.0) == 0.0);
}

TEST_CASE("scale cost: both engines' steps wait for the slowest of the job's GPUs", "[analytic][scale]") {
  auto s = testing::gpt3_1024();
  const core::Report before = evaluate(s);
  s.hardware.jitter = core::JitterSpec{0.01, 0.05};
  const core::Report after = evaluate(s);
  double exposed = 0;
  for (const auto& k : before.comm) exposed += k.exposed_s;
  const double wait = expected_max_normal(1024) * std::hypot(0.01 * before.compute_s, 0.05 * exposed);
  CHECK(wait > 0);
  CHECK(after.step_s == Approx(before.step_s + wait).epsilon(1e-12));
  // the critical path gains the wait as its last part, and still adds up to the step
  REQUIRE(!after.critical_path.empty());
  CHECK(after.critical_path.back().cause == core::PathCause::straggler);
  CHECK(after.critical_path.back().seconds == Approx(wait).epsilon(1e-12));
  double sum = 0;
  for (const auto& p : after.critical_path) sum += p.seconds;
  CHECK(sum == Approx(after.step_s).epsilon(1e-9));
  CHECK(after.tokens_per_s == Approx(before.tokens_per_s * before.step_s / after.step_s).epsilon(1e-12));
}

TEST_CASE("scale cost: FP8 delayed scaling's amax reductions, by hand", "[analytic][scale][fp8]") {
  // GPT-3 175B on 1024 A100s (tp 8, pp 16, dp 8): the amax group is tp*cp*dp = 64 ranks, a node's 8
  // tp ranks times 8 dp ranks one node apart: 8 nodes. The reductions are a few hundred bytes (6
  // layers a stage of 4 GEMMs: 3 x 4 B x 24 = 288 B forward, 192 B backward), so NCCL's model
  // picks the tree with LL, whose latency (tuning.cc) is base 6.8 + 2 x ((8 - 1) x NVLink 0.6 +
  // log2(8) x network 5.0) = 45.2 us; the bytes add under 0.1 us at LL's bandwidth.
  const auto s = testing::gpt3_1024();
  const Group g = amax_group(s);
  CHECK(g.ranks == 64);
  CHECK(g.ranks_per_node == 8);
  const AmaxSync a = amax_sync(s.hardware, g, 192, 1, 6);
  CHECK(a.regions == 192);
  CHECK(a.forward_s == Approx(45.2e-6).epsilon(0.002));
  CHECK(a.backward_s == Approx(45.2e-6).epsilon(0.002));
  // a step: m = 1536 / 8 = 192 micro-batches, one chunk each, a forward and a backward reduction
  CHECK(a.step_s() == Approx(192 * 2 * 45.2e-6).epsilon(0.002));
  // inside one node (dp 1, tp 8) the ring with LL is NCCL's pick: 6.6 + 2 x 7 x 0.6 = 15.0 us,
  // below the tree's 6.8 + 2 x 7 x 0.6 = 15.2
  CHECK(amax_sync(s.hardware, Group(8, core::Scope::intra, 8), 1, 1, 6).forward_s == Approx(15.0e-6).epsilon(0.002));
  // nothing to reduce on one rank
  CHECK(amax_sync(s.hardware, Group(1, core::Scope::intra, 1), 192, 1, 6).step_s() == 0.0);
}

TEST_CASE("scale cost: the amax reductions join the step under FP8 delayed scaling only", "[analytic][scale][fp8]") {
  auto s = testing::gpt3_1024();
  // an FP8 peak for the test's A100 so that an FP8 run passes the checks: the reductions do not
  // read it
  s.hardware.gpu.peak_flops[core::index(core::Precision::fp8)] = 624e12;
  s.training.precision = core::Precision::fp8;
  s.training.fp8_recipe = core::Fp8Recipe::delayed;
  const core::Report delayed = evaluate(s);
  const double amax = amax_sync(s.hardware, amax_group(s), 192, 1, 6).step_s();
  double part = 0, sum = 0;
  for (const auto& p : delayed.critical_path) {
    if (p.cause == core::PathCause::fp8_amax) part += p.seconds;
    sum += p.seconds;
  }
  CHECK(part == Approx(amax).epsilon(1e-12));
  CHECK(sum == Approx(delayed.step_s).epsilon(1e-9));
  // current scaling takes each tensor's own amax: no reduction across ranks
  s.training.fp8_recipe = core::Fp8Recipe::current;
  for (const auto& p : evaluate(s).critical_path) CHECK(p.cause != core::PathCause::fp8_amax);
}
