#include <catch2/catch.hpp>

#include "../common/scenarios.hpp"
#include "ptdsim/analytic/to_train.hpp"

// Days, GPU-hours, energy and cost to train (docs/analytic.md "Time, energy and cost to train"),
// worked by hand.
using namespace ptdsim;

TEST_CASE("analytic: time, GPU-hours, energy and cost to train, by hand", "[analytic][to_train]") {
  core::Scenario s = testing::gpt3_1024();
  s.gpus = 512;
  s.training.seq_len = 8192;
  s.training.global_batch = 1024;
  s.training.tokens = 15e12;
  s.hardware.gpu.tdp_w = 700;
  s.hardware.gpu.idle_w = 140;
  s.cost.gpu_hour = 2.5;
  // 15e12 / (1024 * 8192) = 1,788,139.343 steps; at 14.2 s: 25,391,578.67 s = 293.884 days;
  // x 512 GPUs / 3600 = 3,611,246.7 GPU-hours; x 2.5 = 9,028,116.9
  const auto t = analytic::to_train(s, 14.2, 0.9 * 14.2);
  CHECK(t.steps == Approx(1788139.343).epsilon(1e-9));
  CHECK(t.days() == Approx(293.8840).epsilon(1e-6));
  CHECK(t.gpu_hours == Approx(3611246.7).epsilon(1e-7));
  CHECK(t.cost == Approx(9028116.9).epsilon(1e-7));
  // busy 90% of the step: 140 + (700 - 140) * 0.9 = 644 W; x 512 GPUs x 25,391,578.67 s
  // = 8.3723e15 J = 2325.64 MWh (1 MWh = 3.6e9 J)
  CHECK(t.gpu_power_w == Approx(644).epsilon(1e-12));
  CHECK(t.energy_j / 3.6e9 == Approx(2325.64).epsilon(1e-5));
  CHECK(t.has_energy());
  CHECK(t.has_cost(s));
  SECTION("no token budget: nothing") {
    s.training.tokens = 0;
    const auto none = analytic::to_train(s, 14.2, 10);
    CHECK_FALSE(none.known());
    CHECK(none.days() == 0);
  }
  SECTION("no power figures: time and cost, no energy") {
    s.hardware.gpu.idle_w = 0;
    const auto no_power = analytic::to_train(s, 14.2, 10);
    CHECK_FALSE(no_power.has_energy());
    CHECK(no_power.cost == Approx(9028116.9).epsilon(1e-7));
  }
  SECTION("no price: no cost") {
    s.cost.gpu_hour = 0;
    CHECK_FALSE(analytic::to_train(s, 14.2, 10).has_cost(s));
  }
  SECTION("power: idle when nothing runs, TDP when always busy") {
    CHECK(analytic::gpu_power_w(s.hardware.gpu, 10, 0) == 140);
    CHECK(analytic::gpu_power_w(s.hardware.gpu, 10, 10) == 700);
    CHECK(analytic::gpu_power_w(s.hardware.gpu, 10, 25) == 700);  // clamped: busy is a share of the step
  }
}
