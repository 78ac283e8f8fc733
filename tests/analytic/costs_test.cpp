#include <catch2/catch.hpp>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/costs.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

TEST_CASE("analytic: per-stage costs for the simulator", "[analytic][costs]") {
  const auto s = testing::gpt3_1024();
  const auto c = step_costs(s);
  REQUIRE(c.stages.size() == 16);
  CHECK(c.microbatches == 192);
  CHECK(c.tp.scope == core::Scope::intra);
  CHECK(c.dp.scope == core::Scope::inter);
  const auto& first = c.stages[0];
  const auto& mid = c.stages[7];
  const auto& last = c.stages[15];
  SECTION("equal middle stages; the first adds the embedding, the last the logits and loss") {
    CHECK(first.forward_s - mid.forward_s == Approx(embedding_times(s).forward).epsilon(1e-9));
    CHECK(last.forward_s - mid.forward_s == Approx(logits_times(s).forward).epsilon(1e-9));
    CHECK(last.backward_weight_s - mid.backward_weight_s == Approx(logits_times(s).backward_weight).epsilon(1e-9));
  }
  SECTION("the data-parallel step with ZeRO-1: fp32 gradient reduce-scatter, bf16 all-gather") {
    // 1,463,270,400 params on a first-stage GPU; dp 8, one rank per node: 25 GB/s, 10 us, and a
    // ring over 8 nodes crosses the network 6 times more than over 2 (14 us each)
    CHECK(first.grad_bytes == Approx(4 * 1463270400.0).epsilon(1e-12));
    CHECK(first.dp_reduce_s == Approx(94e-6 + 0.875 * 4 * 1463270400.0 / 25e9).epsilon(1e-12));  // 0.2050 s
    CHECK(first.dp_gather_s == Approx(94e-6 + 0.875 * 2 * 1463270400.0 / 25e9).epsilon(1e-12));  // 0.1025 s
  }
  SECTION("the optimizer step: 34 bytes per parameter of the shard at 0.85 x 2039 GB/s") {
    CHECK(first.optimizer_s == Approx(34 * 1463270400.0 / 8 / (2039e9 * 0.85)).epsilon(1e-12));  // 3.59 ms
  }
  SECTION("p2p across nodes: one NIC") {
    CHECK(first.p2p_bytes == Approx(6291456.0).epsilon(1e-12));
    CHECK(first.p2p_s == Approx(10e-6 + 6291456.0 / 25e9).epsilon(1e-12));
  }
}
