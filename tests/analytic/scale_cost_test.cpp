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
