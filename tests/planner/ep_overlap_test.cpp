// EP overlap (docs/analytic.md "Expert parallelism", EP overlap): the share of a stage's dispatch
// and combine that Megatron-Core's combined 1F1B runs beside another micro-batch's compute, where
// the framework runs it, and the three readers of a plan that holds it (the fold, the scheduler,
// the bounds).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "ptdsim/sim/summary.hpp"
#include "fixtures.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using planner::test::simulated;

namespace {

constexpr int kEp = static_cast<int>(core::CommBucket::ep);

// tp 2, dp 32, ep 8 (its ranks 2 apart, so across two nodes), global batch 256, no recomputation
core::Scenario moe_64() {
  core::Scenario s = testing::mixtral_like_64(2);
  s.training.recompute = core::Recompute::none;
  return s;
}

}  // namespace

TEST_CASE("EP overlap: the share of each stage's passes the combined 1F1B pairs", "[plan][ep_overlap]") {
  analytic::PlanOptions o;
  o.overlap_ep = true;
  o.microbatches = 8;
  // no pipeline: one forward before the first pair, one backward after the last
  // (combined_1f1b_schedule_for_no_pipelining): 7 of 8 paired
  CHECK(analytic::ep_hidden_share(o, 1, 0) == Approx(7.0 / 8));
  // p 4, v 2, m 8: 16 passes a rank; rank 0 runs 2*3 + 1*4 + 1 = 11 forwards before the first
  // pair (schedules.py get_pp_rank_microbatches with the overlap's extra one), rank 3 0 + 4 + 1 = 5
  o.vpp = 2;
  CHECK(analytic::ep_hidden_share(o, 4, 0) == Approx(5.0 / 16));
  CHECK(analytic::ep_hidden_share(o, 4, 3) == Approx(11.0 / 16));
  // fewer micro-batches than the warm-up: nothing paired
  o.microbatches = 2;
  CHECK(analytic::ep_hidden_share(o, 4, 0) == 0.0);
  o.overlap_ep = false;
  o.microbatches = 8;
  CHECK(analytic::ep_hidden_share(o, 4, 3) == 0.0);
}

TEST_CASE("EP overlap: only where Megatron-Core runs it", "[plan][ep_overlap]") {
  core::Scenario s = moe_64();
  CHECK_FALSE(analytic::ep_overlaps(s));  // not asked for
  s.training.overlap.ep = true;
  CHECK(analytic::ep_overlaps(s));
  // transformer_config.py: alltoall or flex only, no full recomputation, interleaving with a
  // pipeline, ep > 1
  auto with = [&](auto change) {
    core::Scenario t = s;
    change(t);
    return analytic::ep_overlaps(t);
  };
  CHECK_FALSE(with([](core::Scenario& t) { t.training.moe.dispatcher = core::Dispatcher::allgather; }));
  CHECK(with([](core::Scenario& t) { t.training.moe.dispatcher = core::Dispatcher::flex; }));
  CHECK_FALSE(with([](core::Scenario& t) { t.training.recompute = core::Recompute::full; }));
  CHECK_FALSE(with([](core::Scenario& t) { t.parallel.ep = 1; }));
  CHECK_FALSE(with([](core::Scenario& t) {
    t.parallel.pp = 2;
    t.parallel.dp = 16;
  }));
  CHECK(with([](core::Scenario& t) {
    t.parallel.pp = 2;
    t.parallel.dp = 16;
    t.parallel.vpp = 2;
    t.parallel.schedule = core::Schedule::interleaved;
  }));
  core::Scenario dense = s;
  dense.model.moe.reset();
  dense.parallel.ep = 1;
  CHECK_FALSE(analytic::ep_overlaps(dense));
}

TEST_CASE("EP overlap: the fold hides the paired share behind the pass, the scheduler runs it beside",
          "[plan][ep_overlap]") {
  core::Scenario s = moe_64();
  const analytic::StepPlan serial = analytic::plan_step(s);
  s.training.overlap.ep = true;
  const analytic::StepPlan beside = analytic::plan_step(s);
  // m = 256 / (32 * 1) = 8 micro-batches, no pipeline: 7/8 of every EP collective beside its pass
  REQUIRE(beside.shape.m == 8);
  double serial_ep = 0, beside_ep = 0, hidden_ep = 0;
  for (const auto& c : serial.comms)
    if (c.kind == core::CommKind::ep) serial_ep += c.time_s;
  for (const auto& c : beside.comms) {
    if (c.kind != core::CommKind::ep) continue;
    beside_ep += c.time_s;
    if (c.overlap == analytic::Overlap::beside) hidden_ep += c.time_s;
  }
  REQUIRE(serial_ep > 0);
  CHECK(beside_ep == Approx(serial_ep).epsilon(1e-12));  // the same traffic, split
  CHECK(hidden_ep == Approx(7.0 / 8 * serial_ep).epsilon(1e-12));
  // the fold: the serial eighth exposed, the rest hidden behind each pass's compute (an A100's
  // all-to-all of 2 x 4096/2 x 4096 x 2 bytes over 16 ranks is far shorter than a pass of 32 MoE layers)
  const auto a_serial = analytic::analytic_timing(serial);
  const auto a_beside = analytic::analytic_timing(beside);
  CHECK(a_beside.exposed_s[kEp] == Approx(a_serial.exposed_s[kEp] / 8).epsilon(1e-9));
  CHECK(a_beside.step_s < a_serial.step_s);
  // the scheduler agrees that overlap shortens the step, the bound stays below it
  const double sim_serial = simulated(serial), sim_beside = simulated(beside);
  CHECK(sim_beside < sim_serial);
  CHECK(planner::step_lower_bound(beside) <= sim_beside * (1 + 1e-9));
}

TEST_CASE("EP overlap: the bounds never exceed the simulated step over sampled MoE layouts", "[plan][ep_overlap]") {
  std::mt19937 rng(20261129);
  auto pick = [&](std::vector<int> v) { return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)]; };
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  int checked = 0, overlapped = 0;
  for (int trial = 0; trial < 2000 && checked < 120; ++trial) {
    core::Scenario s = moe_64();
    auto& p = s.parallel;
    p.tp = pick({1, 2, 4});
    p.pp = pick({1, 2, 4});
    p.vpp = 1;
    p.schedule = core::Schedule::one_f_one_b;
    if (p.pp > 1 && coin()) {
      p.schedule = core::Schedule::interleaved;
      p.vpp = pick({2, 4});
    }
    p.dp = s.gpus / (p.tp * p.pp);
    p.ep = pick({2, 4, 8});
    p.zero = pick({0, 1});
    p.sequence_parallel = p.tp > 1;
    s.training.global_batch = p.dp * pick({2, 4, 8});
    s.training.recompute = static_cast<core::Recompute>(pick({0, 1, 0, 1, 2}));
    s.training.moe.dispatcher = static_cast<core::Dispatcher>(pick({0, 2, 0, 2, 1}));
    s.training.overlap = core::Overlap{coin(), coin(), coin(), coin()};
    s.training.overlap.ep = true;
    s.hardware.gpu.sms = coin() ? 108 : 0;
    s.hardware.gpu.comm_sms = s.hardware.gpu.sms ? 16 : 0;
    if (!core::check(s).empty()) continue;
    const analytic::Step step(s);
    const analytic::StepPlan& plan = step.plan;
    const double sim = simulated(plan);
    const double bound = planner::step_lower_bound(plan);
    INFO("tp " << p.tp << " pp " << p.pp << " vpp " << p.vpp << " ep " << p.ep << " m " << plan.shape.m
               << " dispatcher " << static_cast<int>(s.training.moe.dispatcher) << " recompute "
               << static_cast<int>(s.training.recompute));
    CHECK(bound <= sim * (1 + 1e-9));
    CHECK(planner::schedule_lower_bound(plan) <= sim * (1 + 1e-9));
    CHECK(planner::work_lower_bound(step).bound_s <= bound);
    if (analytic::ep_overlaps(s)) ++overlapped;
    ++checked;
  }
  CHECK(checked == 120);
  CHECK(overlapped > 30);  // not vacuous
}
