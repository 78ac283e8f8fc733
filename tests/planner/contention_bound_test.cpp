#include <catch2/catch.hpp>

#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "ptdsim/sim/summary.hpp"
#include "fixtures.hpp"

// The bounds against the scheduler where collectives hold SMs or share a link: hand-made plans of
// one stage whose steps are worked by hand (docs/planner.md "Lower bound", "Schedule bound").
using namespace ptdsim;
using planner::test::simulated;
using core::CommKind;
using analytic::GroupId;
using analytic::Overlap;
using analytic::PlanComm;
using analytic::Stream;

namespace {

// One stage, one chunk, m micro-batches, 1F1B: a forward of one `f`-second segment carrying the
// first `forward_comms` of `comms`, a backward of `b_repeat` runs of a `b`-second segment carrying
// the rest; collectives holding `share` of the SMs; TP, CP and EP inside the node, DP across nodes.
analytic::StepPlan one_stage(int m, double share, std::vector<PlanComm> comms, int forward_comms, double f,
                             double b, int b_repeat = 1, double optimizer = 0) {
  analytic::StepPlan plan;
  plan.schedule = &core::kOneFOneB;
  plan.shape = core::PipelineShape{1, 1, m};
  plan.comm_share = share;
  for (GroupId g : {GroupId::tp, GroupId::cp, GroupId::ep}) plan.groups[static_cast<int>(g)].scope = core::Scope::intra;
  plan.groups[static_cast<int>(GroupId::dp)].scope = core::Scope::inter;
  const int n = static_cast<int>(comms.size());
  plan.comms = std::move(comms);
  analytic::Segment fs;
  fs.compute_s = f;
  fs.comm_count = forward_comms;
  analytic::Segment bs;
  bs.compute_s = b;
  bs.repeat = b_repeat;
  bs.comm_begin = forward_comms;
  bs.comm_count = n - forward_comms;
  plan.segments = {fs, bs};
  analytic::StagePlan st;
  st.start_begin = st.start_end = st.end_begin = st.end_end = st.post_begin = st.post_end = st.comm_end = n;
  st.optimizer_s = optimizer;
  analytic::ChunkPlan c;
  c.layers = b_repeat;
  c.pass[0] = analytic::PassPlan{0, 1, f, 0};
  c.pass[1] = analytic::PassPlan{1, 1, b * b_repeat, 0};
  c.pass[2].seg_begin = 2;  // no W: B holds it
  c.last_grad = c.pass[1];
  plan.chunks.push_back(c);
  plan.stages.push_back(st);
  return plan;
}

}  // namespace

TEST_CASE("contention bounds: the SMs a DP reduction holds beside the passes after it", "[plan][contention]") {
  // m = 2: F 1 s, B 1 s followed by a 0.5 s reduction on the DP stream (as ZeRO-3's per-micro-batch
  // reduce-scatter) holding 0.2 of the compute; optimizer 0.1 s. By hand: F0 [0, 1], B0 [1, 2], its
  // reduction [2, 2.5]; F1 from 2 runs at 0.8 until 2.5 (0.4 s of work) and ends at 2.5 + 0.6 = 3.1;
  // B1 [3.1, 4.1], its reduction [4.1, 4.6]; the optimizer waits for it: 4.7. The chains prove 4.3
  // (the contention term over the whole step: 4.1 + 0.2 x 1.0); the pass graph, following the DP
  // stream, 4.7.
  auto plan = one_stage(2, 0.2, {PlanComm{CommKind::dp_reduce, Stream::dp, Overlap::after, GroupId::dp, 0.5, 1e6, 0, 0}},
                        0, 1.0, 1.0, 1, 0.1);
  CHECK(simulated(plan) == Approx(4.7).epsilon(1e-12));
  CHECK(planner::step_lower_bound(plan) == Approx(4.3).epsilon(1e-12));
  CHECK(planner::schedule_lower_bound(plan) == Approx(4.7).epsilon(1e-12));

  SECTION("a reduction longer than the pass after it slows all of it") {
    // 2 s reductions: F1 runs at 0.8 from 2 to 3.25, B1 at 0.8 until the first ends at 4 (0.6 s of
    // work) and ends at 4.4; the second reduction [4.4, 6.4], the optimizer 6.5. The graph has B1
    // end at 4.4 too, but issues its reduction after B1's compute alone (3.25 + 1), unslowed: 6.35.
    plan.comms[0].time_s = 2.0;
    CHECK(simulated(plan) == Approx(6.5).epsilon(1e-12));
    CHECK(planner::schedule_lower_bound(plan) == Approx(6.35).epsilon(1e-12));
  }
  SECTION("a share past the scheduler's floor slows no more than the floor") {
    // share 0.95: the compute runs at kMinComputeRate (0.1), not 0.05: F1 moves 0.05 s of work in
    // [2, 2.5] and ends at 3.45, B1 [3.45, 4.45], its reduction to 4.95, the optimizer 5.05
    plan.comm_share = 0.95;
    CHECK(simulated(plan) == Approx(5.05).epsilon(1e-12));
    CHECK(planner::schedule_lower_bound(plan) == Approx(5.05).epsilon(1e-12));
  }
}

TEST_CASE("contention bounds: the SMs a collective beside the compute holds", "[plan][contention]") {
  // m = 1: the forward's 1 s of compute beside a 0.5 s TP collective (userbuffers overlap) holding
  // 0.2 of the SMs; the backward's 1 s alone. By hand: the compute moves 0.4 s of work while TP
  // runs and ends at 1.1; the step 2.1. Whenever the collective starts (no earlier than the
  // compute), the segment ends no earlier than C + share·T = 1.1 (T·0.8 <= C); each alone would
  // give 1.0.
  auto plan = one_stage(1, 0.2, {PlanComm{CommKind::tp, Stream::tp, Overlap::beside, GroupId::tp, 0.5, 1e6, 1.0, 0}},
                        1, 1.0, 1.0);
  CHECK(simulated(plan) == Approx(2.1).epsilon(1e-12));
  CHECK(planner::step_lower_bound(plan) == Approx(2.1).epsilon(1e-12));
  CHECK(planner::schedule_lower_bound(plan) == Approx(2.1).epsilon(1e-12));
  SECTION("a collective as long as the compute") {
    // T = 1: 0.8 s of work by 1.0, the rest alone: 1.2, and C + share·T = 1.2
    plan.comms[0].time_s = 1.0;
    CHECK(simulated(plan) == Approx(2.2).epsilon(1e-12));
    CHECK(planner::step_lower_bound(plan) == Approx(2.2).epsilon(1e-12));
  }
  SECTION("a share past the scheduler's floor slows no more than the floor") {
    // An EP collective holding 0.95 of the SMs in the plan (a hardware file cannot say that:
    // GpuSpec::comm_share() caps it at 0.9); the scheduler runs the compute at its floor, 0.1, not
    // 0.05: 0.05 s of work by 0.5, the rest alone, 1.45 s; the backward's 1 s: 2.45.
    plan.comm_share = 0.95;
    plan.comms[0] = PlanComm{CommKind::ep, Stream::ep, Overlap::beside, GroupId::ep, 0.5, 1e6, 0, 0};
    CHECK(simulated(plan) == Approx(2.45).epsilon(1e-12));
    CHECK(planner::step_lower_bound(plan) == Approx(2.45).epsilon(1e-12));
    CHECK(planner::schedule_lower_bound(plan) == Approx(2.45).epsilon(1e-12));
  }
}

TEST_CASE("contention bounds: a pass's own DP reductions slow the rest of it", "[plan][contention]") {
  // m = 1: F 1 s; B three runs of a 1 s segment, each followed by a 0.5 s reduction on the DP stream
  // (the last micro-batch's buckets) holding 0.2 of the SMs; optimizer 0.1 s. By hand: B's runs
  // [1, 2], [2, 3.1] (0.4 s of work while the first reduction runs to 2.5), [3.1, 4.2]; the
  // reductions end at 2.5, 3.6 and 4.7; the optimizer 4.8. The pass: 1 + 2 x 1.1 = 3.2 s; its last
  // batch is issued no earlier than 1 + 1 + 2 x 1.1 = 4.2: 4.7, then 4.8. The chains alone: B ends
  // at 4.2, and the contention term gives 4.1 + 0.2 x 1.5 = 4.4.
  const auto plan = one_stage(1, 0.2, {PlanComm{CommKind::dp_reduce, Stream::dp, Overlap::after, GroupId::dp, 0.5, 1e6, 0, 0}},
                              0, 1.0, 1.0, 3, 0.1);
  CHECK(simulated(plan) == Approx(4.8).epsilon(1e-12));
  CHECK(planner::step_lower_bound(plan) == Approx(4.4).epsilon(1e-12));
  CHECK(planner::schedule_lower_bound(plan) == Approx(4.8).epsilon(1e-12));
}

TEST_CASE("contention bounds: collectives that share a link within a segment", "[plan][sharing]") {
  // m = 1, no SM contention. The forward's 1 s of compute hides a 0.6 s CP exchange behind its last
  // 0.5 s and is followed by a 0.3 s serial TP collective, both over NVLink. By hand: the exchange
  // runs alone from 0.5 to 1.0 (0.5 s of its work), then beside TP at half the link each: its last
  // 0.1 s of work ends at 1.2, TP's 0.3 s at 1.4 (0.1 by 1.2, the rest alone); the backward's 1 s:
  // 2.4. Each alone, the segment would end at max(1 + 0.3, 0.5 + 0.6) = 1.3; the link moves both
  // from 0.5 on: 0.5 + 0.6 + 0.3 = 1.4.
  auto plan = one_stage(1, 0.0,
                        {PlanComm{CommKind::cp, Stream::cp, Overlap::window, GroupId::cp, 0.6, 1e6, 0.5, 0},
                         PlanComm{CommKind::tp, Stream::tp, Overlap::serial, GroupId::tp, 0.3, 1e6, 0, 0}},
                        2, 1.0, 1.0);
  CHECK(simulated(plan) == Approx(2.4).epsilon(1e-12));
  CHECK(planner::step_lower_bound(plan) == Approx(2.4).epsilon(1e-12));
  CHECK(planner::schedule_lower_bound(plan) == Approx(2.4).epsilon(1e-12));

  SECTION("on two links they do not wait for each other") {
    // CP across nodes: each on its own link, the segment ends with TP at 1.3
    plan.groups[static_cast<int>(GroupId::cp)].scope = core::Scope::inter;
    CHECK(simulated(plan) == Approx(2.3).epsilon(1e-12));
    CHECK(planner::step_lower_bound(plan) == Approx(2.3).epsilon(1e-12));
  }
}
