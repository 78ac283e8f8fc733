#include <catch2/catch.hpp>

#include "ptdsim/core/units.hpp"
#include "ptdsim/planner/explain.hpp"
#include "ptdsim/planner/tiers.hpp"

using namespace ptdsim;
using namespace ptdsim::planner;

TEST_CASE("planner: the reason a layout is slower is its largest extra cost", "[planner][explain]") {
  core::Report best, r;
  best.step_s = 10;
  best.bubble_s = 1;
  best.compute_s = 8;
  r = best;
  SECTION("not slower") { CHECK(why_slower(best, r).empty()); }
  SECTION("bubble") {
    r.step_s = 10.5;
    r.bubble_s = 1.4;  // +0.4 s, the largest difference
    r.of(core::CommBucket::dp).exposed_s = 0.1;
    CHECK(why_slower(best, r) == "bigger bubble +0.4 s");
  }
  SECTION("TP across nodes") {
    r.step_s = 12;
    r.of(core::CommBucket::tp).exposed_s = 2;
    r.of(core::CommBucket::tp).crosses_nodes = true;
    CHECK(why_slower(best, r) == "exposed TP comm across nodes +2 s");
  }
  SECTION("more hardware FLOPs on the busiest stage is recomputation") {
    best.hardware_flops_per_step = 100;
    r.hardware_flops_per_step = 133;
    r.step_s = 12;
    r.compute_s = 10;
    CHECK(why_slower(best, r) == "recompute overhead +2 s");
  }
  SECTION("compute slowed by collectives beside it is overlap's cost, not the kernels'") {
    r.step_s = 11.5;
    r.compute_s = 9.5;      // +1.5 s, of which 1.2 s contention
    r.contention_s = 1.2;
    CHECK(why_slower(best, r) == "comm beside compute +1.2 s");
  }
}

TEST_CASE("planner: the reason a layout needs more memory", "[planner][explain]") {
  core::Report best, r;
  best.stages.resize(1);
  best.stages[0].activations = 10 * core::kGiB;
  best.peak_bytes = best.stages[0].total();
  r = best;
  r.stages[0].activations = 13.5 * core::kGiB;
  r.stages[0].optimizer = 1 * core::kGiB;
  r.peak_bytes = r.stages[0].total();
  CHECK(why_bigger(best, r) == "activations +3.5 GiB");
  CHECK(why_bigger(r, best).empty());
}

TEST_CASE("planner: a group that crosses a tier the other layout's does not is named with its cost", "[planner][explain][topology]") {
  core::Report a, b;
  a.of(core::CommBucket::tp).exposed_s = 0.0100;  // tp 8 on NVLink: 10.0 ms exposed, 30.0 ms in all
  a.of(core::CommBucket::tp).time_s = 0.0300;
  b.of(core::CommBucket::tp).exposed_s = 0.0223;  // tp 16 across two nodes: 22.3 ms, 70.1 ms
  b.of(core::CommBucket::tp).time_s = 0.0701;
  GroupTiers tp8{"tp", 8, 8, 1, -1, {}};
  GroupTiers tp16{"tp", 16, 16, 2, 0, {"NVLink domain", "leaf"}};
  const int tp = static_cast<int>(core::CommBucket::tp);
  // the runner-up (#3) crosses: +12.3 ms exposed (22.3 - 10.0), +40.1 ms in all (70.1 - 30.0)
  CHECK(tier_difference(a, tp8, b, tp16, tp, 3) ==
        "#3's tp 16 crosses the NVLink domain where #1's tp 8 does not: +12.3 ms of exposed TP comm per step "
        "(+40.1 ms of TP collectives)");
  // the best crosses: the same words from its side
  CHECK(tier_difference(b, tp16, a, tp8, tp, 2) ==
        "tp 16 crosses the NVLink domain where #2's tp 8 does not: +12.3 ms of exposed TP comm per step "
        "(+40.1 ms of TP collectives)");
  // both leave the NVLink domain, one through the spine: the spine is the tier named
  GroupTiers dp_leaf{"dp", 16, 16, 16, 0, {"NVLink domain", "leaf"}};
  GroupTiers dp_spine{"dp", 64, 64, 64, 1, {"NVLink domain", "leaf", "spine"}};
  const int dp = static_cast<int>(core::CommBucket::dp);
  CHECK(tier_difference(a, dp_spine, b, dp_leaf, dp, 2).rfind("dp 64 crosses the spine where #2's dp 16 does not: ", 0) == 0);
  // the same tiers: nothing to say
  CHECK(tier_difference(a, tp8, b, tp8, tp, 2).empty());
}
