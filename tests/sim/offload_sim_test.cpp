// CPU offload in the simulator: the plan's phase (StagePlan::offload_s) runs as one task on each
// rank's compute stream after the gradient reduction and before the optimizer step; the critical
// path gives it its own cause and still adds up to the step (docs/analytic.md "CPU offload").
#include <catch2/catch.hpp>

#include <algorithm>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;

TEST_CASE("sim: CPU offload's phase before the optimizer step", "[sim][offload]") {
  auto s = testing::gpt3_1024();
  // the DGX A100's host (hardware/FACTS.md section 7)
  s.hardware.host.link_Bps = 32e9;
  s.hardware.host.memory_bytes = 1024 * core::kGiB;
  s.hardware.host.memory_Bps = 409.6e9;
  s.training.offload = core::Offload::optimizer;
  REQUIRE(core::check(s).empty());
  const auto plan = analytic::plan_step(s);
  double longest = 0;
  for (const auto& st : plan.stages) longest = std::max(longest, st.offload_s);
  REQUIRE(longest > 0.1);  // 136.7 ms on the first stage (tests/analytic/offload_test.cpp)

  const core::Report r = sim::simulate(s);
  CHECK(r.offload_s == Approx(longest).epsilon(1e-9));
  double parts = 0, offload = 0;
  for (const auto& p : r.critical_path) {
    parts += p.seconds;
    if (p.cause == core::PathCause::offload) offload += p.seconds;
  }
  CHECK(parts == Approx(r.step_s).epsilon(1e-9));
  // the step ends with some stage's offload phase then its optimizer step (0 here: all on the CPU)
  CHECK(offload > 0);
  CHECK(offload <= longest * (1 + 1e-9));
  // against no offload the step grows by about the phase less the GPU's own optimizer step
  auto plain = s;
  plain.training.offload = core::Offload::none;
  const core::Report r0 = sim::simulate(plain);
  CHECK(r.step_s > r0.step_s);
  CHECK(r.step_s - r0.step_s <= longest + 1e-9);
}
