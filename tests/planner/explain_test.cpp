#include <catch2/catch.hpp>

#include "ptdsim/core/units.hpp"
#include "ptdsim/planner/explain.hpp"

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
