#include "ptdsim/core/schedule.hpp"
#include "ptdsim/sim/step_graph.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <tuple>

#include "ptdsim/sim/graph_check.hpp"
#include "fixtures.hpp"

using namespace ptdsim;
using testing::equal_stages;
using testing::with;
using Op = core::PassRef;
using core::Pass;

namespace {

std::vector<Op> order(core::Schedule sched, int p, int v, int m, int stage) {
  std::vector<Op> ops;
  core::schedule_rules(sched).order(core::PipelineShape{p, v, m}, stage, ops);
  return ops;
}

// Equal stages, free communication unless a test sets it.

// Peak number of micro-batches whose activations one stage holds, from the order alone.
int peak_in_flight(const std::vector<Op>& ops, bool split) {
  int now = 0, peak = 0;
  for (const Op& op : ops) {
    if (op.pass == Pass::F) peak = std::max(peak, ++now);
    if ((op.pass == Pass::B && !split) || op.pass == Pass::W) --now;
  }
  return peak;
}

}  // namespace

TEST_CASE("core: schedule orders hold every pass once", "[sim][schedule]") {
  const int p = 4, m = 8;
  SECTION("1F1B stage 0 of 4: three warm-up forwards, then F/B pairs, then the cool-down") {
    const auto ops = order(core::Schedule::one_f_one_b, p, 1, m, 0);
    REQUIRE(ops.size() == 16u);
    CHECK(ops[0] == Op{Pass::F, 0, 0});
    CHECK(ops[2] == Op{Pass::F, 0, 2});
    CHECK(ops[3] == Op{Pass::F, 0, 3});
    CHECK(ops[4] == Op{Pass::B, 0, 0});
    CHECK(ops[15] == Op{Pass::B, 0, 7});
    // Narayanan et al. 2021: stage s holds p - s micro-batches
    for (int s = 0; s < p; ++s)
      CHECK(peak_in_flight(order(core::Schedule::one_f_one_b, p, 1, m, s), false) ==
            p - s);
  }
  SECTION("GPipe holds all m micro-batches") {
    CHECK(peak_in_flight(order(core::Schedule::gpipe, p, 1, m, 0), false) == m);
  }
  SECTION("ZB-H1 never holds more than p micro-batches (1F1B's peak) on any stage") {
    for (int s = 0; s < p; ++s) {
      const auto ops = order(core::Schedule::zb_h1, p, 1, m, s);
      CHECK(ops.size() == static_cast<std::size_t>(3 * m));
      CHECK(peak_in_flight(ops, true) <= p);
    }
    // the last stage defers its W the most and reaches p
    CHECK(peak_in_flight(order(core::Schedule::zb_h1, p, 1, m, p - 1), true) == p);
  }
  SECTION("interleaved: every (chunk, micro-batch) forward and backward once, Megatron's order") {
    const int v = 2;
    const auto ops = order(core::Schedule::interleaved, p, v, m, 0);
    std::set<std::tuple<int, int, int>> seen;
    for (const Op& op : ops) seen.insert({static_cast<int>(op.pass), op.chunk, op.microbatch});
    CHECK(seen.size() == static_cast<std::size_t>(2 * v * m));
    CHECK(ops.size() == seen.size());
    // warm-up of stage 0: (p-1)*2 + (v-1)*p = 10 forwards: mb 0-3 chunk 0, mb 0-3 chunk 1, mb 4-5 chunk 0
    CHECK(ops[4] == Op{Pass::F, 1, 0});
    CHECK(ops[9] == Op{Pass::F, 0, 5});
    CHECK(ops[10] == Op{Pass::F, 0, 6});
    CHECK(ops[11] == Op{Pass::B, 1, 0});  // the first backward is of the last chunk
    // Megatron's interleaved schedule needs the micro-batch count to be a multiple of p
    std::vector<core::Problem> problems;
    core::kInterleaved.check(core::PipelineShape{p, v, 6}, problems);
    REQUIRE(problems.size() == 1u);
    CHECK(problems[0].key == "training.global_batch");
    CHECK(problems[0].message == "the interleaved schedule needs the micro-batch count 6 to be a multiple of pp 4");
  }
}

TEST_CASE("sim: GPipe and 1F1B take (m + p - 1)(t_f + t_b) on equal stages", "[sim][schedule]") {
  // Narayanan et al. 2021 / formulas.md "Pipeline schedules": free communication, equal stages.
  const double tf = 1.3e-3, tb = 2.6e-3;
  for (auto [p, m] : {std::pair{4, 8}, std::pair{8, 8}, std::pair{4, 1}, std::pair{16, 64}}) {
    for (auto sched : {core::Schedule::gpipe, core::Schedule::one_f_one_b}) {
      auto g = testing::build(equal_stages(p, m, tf, tb), with(sched));
      g.engine.run();
      const double expected = (m + p - 1) * (tf + tb);
      CHECK(g.engine.makespan() == Approx(expected).epsilon(1e-9));
    }
  }
}

TEST_CASE("sim: interleaved bubble is (p-1)/(v m) of the work", "[sim][schedule]") {
  // Narayanan et al. 2021 section 2.2.2: chunks of t/v; step = m(t_f+t_b) + (p-1)(t_f+t_b)/v.
  const double tf = 1e-3, tb = 2e-3;
  for (auto [p, v, m] : {std::tuple{4, 2, 8}, std::tuple{4, 4, 16}, std::tuple{8, 2, 16}}) {
    auto g = testing::build(equal_stages(p, m, tf, tb, 0, v, 8), with(core::Schedule::interleaved));
    g.engine.run();
    const double work = m * (tf + tb);
    CHECK(g.engine.makespan() == Approx(work * (1 + double(p - 1) / (v * m))).epsilon(1e-9));
  }
}

TEST_CASE("sim: ZB-H1 bubble is (p-1)(T_F + T_B - T_W) when T_W <= T_F", "[sim][schedule]") {
  // Qi et al. 2023 section 3.1: 1F1B with B and W split takes m(T_F+T_B+T_W) + (p-1)(T_F+T_B+T_W);
  // ZB-H1 fills the cool-down with W and takes m(T_F+T_B+T_W) + (p-1)(T_F+T_B-T_W).
  // Condition: each W must fit in the gap it fills, T_W <= T_F (and T_W <= T_B) here.
  const double tf = 1.0, tb = 1.0;
  for (double tw : {1.0, 0.5, 0.25}) {
    for (auto [p, m] : {std::pair{4, 8}, std::pair{8, 16}, std::pair{4, 4}}) {
      auto g = testing::build(equal_stages(p, m, tf, tb, tw), with(core::Schedule::zb_h1));
      g.engine.run();
      const double expected = m * (tf + tb + tw) + (p - 1) * (tf + tb - tw);
      INFO("p=" << p << " m=" << m << " tw=" << tw);
      CHECK(g.engine.makespan() == Approx(expected).epsilon(1e-9));
      auto one = testing::build(equal_stages(p, m, tf, tb, tw), with(core::Schedule::one_f_one_b));
      one.engine.run();
      CHECK(one.engine.makespan() == Approx((m + p - 1) * (tf + tb + tw)).epsilon(1e-9));
    }
  }
}
