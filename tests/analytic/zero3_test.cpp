#include <catch2/catch.hpp>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "../common/plan.hpp"
#include "../common/scenarios.hpp"

// ZeRO-3 and FSDP as the step plan runs them (docs/analytic.md "ZeRO-3 and FSDP"): one unit's
// bytes and times by hand, the per-pass rules, the exposed time with and without prefetch, the
// memory of the units in flight.
using namespace ptdsim;
using testing::pass_comm;
using namespace ptdsim::analytic;

namespace {

// GPT-3 175B with tp 8 and no pipeline: dp 128 on 1024 A100s, ZeRO-3. The dp group's ranks are 8
// apart (tp inside), so it has one rank per node: 128 nodes, one NIC each.
core::Scenario zero3_gpt3() {
  core::Scenario s = testing::gpt3_1024();
  s.parallel.pp = 1;
  s.parallel.dp = 128;
  s.parallel.zero = 3;
  return s;
}

// One layer on one GPU under tp 8 (params_test): (12h^2 + 7h)/8 + 6h at h = 12288.
constexpr double kLayer = 226576896.0;
// NCCL's line for that group at a layer's bytes (collectives_test.cpp): the ring Simple, 127 steps
// each across the network (one rank a node: the tree's network hop, 14 us), 8.4 + 127 x 14 =
// 1786.4 us; busbw = one 25 GB/s NIC. (PAT, one GPU a node: 25 x 0.75 GB/s, slower at these sizes.)
constexpr double kAlpha = 8.4e-6 + 127 * 14e-6;
constexpr double kBusbw = 25e9;

// The step's work of one stage (hand-made): 4 units, F 1 s, B 2 s, per unit a 0.2 s gather and
// a 0.1 s reduce-scatter, one micro-batch, nothing else.
StepWork hand_units() {
  StepWork w;
  w.stages.resize(1);
  w.chunks.resize(1);
  ChunkWork& c = w.chunks[0];
  c.layers = 4;
  c.forward_s = 1.0;
  c.backward_input_s = 2.0;
  c.grad_share = 1;
  c.zero3_units = 4;
  c.zero3_unit_params = 1e6;
  c.zero3_gather_s = 0.2;
  c.zero3_reduce_s = 0.1;
  return w;
}

const PlanComm* first_comm(const StepPlan& plan, const PassPlan& pass, core::CommKind kind) {
  const Segment& seg = plan.segments[pass.seg_begin];
  for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
    if (plan.comms[j].kind == kind) return &plan.comms[j];
  return nullptr;
}

}  // namespace

TEST_CASE("analytic: one ZeRO-3 unit by hand: bytes gathered and reduce-scattered, and their times",
          "[analytic][zero3]") {
  auto s = zero3_gpt3();
  SECTION("a unit per layer, fp32 gradients") {
    const ChunkWork c = step_work(s).chunks[0];
    CHECK(c.zero3_units == 96);
    CHECK(c.zero3_unit_params == Approx(kLayer).epsilon(1e-12));
    // all-gather of the 16-bit layer: S = 2 x 226,576,896 = 453,153,792 B; one GPU sends
    // S (n-1)/n = 449,613,528 B and takes alpha + that / 25 GB/s = 0.0197585 s
    CHECK(c.zero3_gather_bytes == Approx(453153792.0 * 127 / 128).epsilon(1e-12));
    CHECK(c.zero3_gather_s == Approx(kAlpha + 453153792.0 * 127 / 128 / kBusbw).epsilon(1e-12));
    // reduce-scatter of the fp32 gradients: twice the bytes, 899,227,056 sent, 0.0377431 s
    CHECK(c.zero3_reduce_bytes == Approx(906307584.0 * 127 / 128).epsilon(1e-12));
    CHECK(c.zero3_reduce_s == Approx(kAlpha + 906307584.0 * 127 / 128 / kBusbw).epsilon(1e-12));
    CHECK(c.zero3_replica_s == 0);
  }
  SECTION("bf16 gradients halve the reduce-scatter: 3x the weight volume a step, not 4x") {
    s.parallel.sharding.reduce_bytes = 2;
    const ChunkWork c = step_work(s).chunks[0];
    CHECK(c.zero3_reduce_bytes == Approx(c.zero3_gather_bytes).epsilon(1e-12));
  }
  SECTION("a unit per submodule (DeepSpeed): four units a layer, each its own call") {
    s.parallel.sharding.unit_layers = 0.25;
    const ChunkWork c = step_work(s).chunks[0];
    CHECK(c.zero3_units == 384);
    CHECK(c.zero3_unit_params == Approx(kLayer / 4).epsilon(1e-12));
    // a quarter of the bytes: NCCL picks LL128, 14 + 127 x 8.5 = 1093.5 us at 25 x 0.92 = 23 GB/s
    // (5980.6 us; the ring Simple would take 1786.4 + 4496.1 = 6282.5 us)
    CHECK(c.zero3_gather_s == Approx(1093.5e-6 + 453153792.0 / 4 * 127 / 128 / 23e9).epsilon(1e-12));
  }
  SECTION("the framework's host overhead: per call, and per rank of the group") {
    s.parallel.sharding.overhead_s = 100e-6;
    s.parallel.sharding.overhead_per_rank_s = 10e-6;
    const ChunkWork c = step_work(s).chunks[0];
    // 100 us + 128 x 10 us = 1.38 ms on each call
    CHECK(c.zero3_gather_s == Approx(kAlpha + 1.38e-3 + 453153792.0 * 127 / 128 / kBusbw).epsilon(1e-12));
    CHECK(c.zero3_reduce_s == Approx(kAlpha + 1.38e-3 + 906307584.0 * 127 / 128 / kBusbw).epsilon(1e-12));
  }
  SECTION("hybrid sharding: gathered within 16 ranks, the shard all-reduced across 8 replicas") {
    s.parallel.sharding.shard_ranks = 16;
    const ChunkWork c = step_work(s).chunks[0];
    // shard group: 16 ranks on 16 nodes, ring Simple 8.4 + 15 x 14 = 218.4 us; busbw one NIC
    const double a16 = 8.4e-6 + 15 * 14e-6;
    CHECK(c.zero3_gather_s == Approx(a16 + 453153792.0 * 15 / 16 / kBusbw).epsilon(1e-12));
    // replica group: 8 ranks 128 apart, 8 nodes; the shard of fp32 gradients, 906,307,584 / 16 =
    // 56,644,224 B, all-reduced (factor 2 x 7/8) by the ring Simple: 14 network steps, (8.4 + 14 x
    // 14) x 1.4 (the plateau) = 286.16 us; the tree's 11.5 GB/s (25 x 0.92 x 0.5) is slower
    const double shard = 906307584.0 / 16;
    CHECK(c.zero3_replica_bytes == Approx(shard * 2 * 7 / 8).epsilon(1e-12));
    CHECK(c.zero3_replica_s == Approx(286.16e-6 + shard * 2 * 7 / 8 / kBusbw).epsilon(1e-12));
    // the states are sharded 16 ways, not 128
    CHECK(stage_memory(s)[0].weights == Approx(2 * stage_params_per_gpu(s, 0).total() / 16).epsilon(1e-12));
  }
}

TEST_CASE("analytic: ZeRO-3's rules per pass", "[analytic][zero3]") {
  const StepWork w = hand_units();
  PlanOptions o;
  o.zero = 3;
  o.groups[static_cast<int>(GroupId::shard)].scope = core::Scope::inter;
  auto plan_of = [&](const PlanOptions& x) { return plan_from_work(w, x); };
  SECTION("FSDP FULL_SHARD: a gather before each unit's forward and backward, one unit ahead") {
    const auto plan = plan_of(o);
    const auto& c = plan.chunk(plan.stages[0], 0);
    CHECK(pass_comm(plan, c.pass[0], core::CommKind::zero3_gather) == Approx(0.8).epsilon(1e-12));
    CHECK(pass_comm(plan, c.pass[1], core::CommKind::zero3_gather) == Approx(0.8).epsilon(1e-12));
    CHECK(pass_comm(plan, c.pass[1], core::CommKind::zero3_reduce) == Approx(0.4).epsilon(1e-12));
    CHECK(first_comm(plan, c.pass[0], core::CommKind::zero3_gather)->depth == 1);
    CHECK(first_comm(plan, c.pass[0], core::CommKind::zero3_gather)->group == GroupId::shard);
    CHECK(first_comm(plan, c.pass[1], core::CommKind::zero3_reduce)->overlap == Overlap::after);
  }
  SECTION("kept gathered after the forward (SHARD_GRAD_OP, ZeRO++): no backward gather") {
    o.sharding.reshard_after_forward = false;
    const auto plan = plan_of(o);
    CHECK(pass_comm(plan, plan.chunk(plan.stages[0], 0).pass[1], core::CommKind::zero3_gather) == 0);
  }
  SECTION("re-gathered for the recomputed forward under full recomputation (DeepSpeed)") {
    o.sharding.regather_on_recompute = true;
    o.recompute_full = true;
    const auto plan = plan_of(o);
    CHECK(pass_comm(plan, plan.chunk(plan.stages[0], 0).pass[1], core::CommKind::zero3_gather) == Approx(1.6).epsilon(1e-12));
    o.recompute_full = false;  // selective recomputation re-runs no weight-bearing module
    const auto sel = plan_of(o);
    CHECK(pass_comm(sel, sel.chunk(sel.stages[0], 0).pass[1], core::CommKind::zero3_gather) == Approx(0.8).epsilon(1e-12));
  }
  SECTION("prefetch depth: the limit, the backward switch, max live parameters, no prefetch") {
    o.sharding.prefetch_units = 3;
    o.sharding.backward_prefetch = false;
    auto plan = plan_of(o);
    auto c = plan.chunk(plan.stages[0], 0);
    CHECK(first_comm(plan, c.pass[0], core::CommKind::zero3_gather)->depth == 3);
    CHECK(first_comm(plan, c.pass[1], core::CommKind::zero3_gather)->depth == 0);
    CHECK(first_comm(plan, c.pass[1], core::CommKind::zero3_gather)->window_s == 0);
    // DeepSpeed prefetches while fewer than max_live_params are live: with 2.5e6 and 1e6 a unit,
    // 1e6 (computing) and 2e6 are below it, 3e6 is not: two ahead, ceil(2.5) - 1
    o.sharding.max_live_params = 2.5e6;
    plan = plan_of(o);
    CHECK(first_comm(plan, plan.chunk(plan.stages[0], 0).pass[0], core::CommKind::zero3_gather)->depth == 2);
    // fewer than one unit: nothing ahead (DeepSpeed's 530B layer against 1e9)
    o.sharding.max_live_params = 0.9e6;
    plan = plan_of(o);
    CHECK(first_comm(plan, plan.chunk(plan.stages[0], 0).pass[0], core::CommKind::zero3_gather)->depth == 0);
    o.sharding.max_live_params = 0;
    o.zero3_prefetch = false;
    plan = plan_of(o);
    CHECK(first_comm(plan, plan.chunk(plan.stages[0], 0).pass[0], core::CommKind::zero3_gather)->depth == 0);
  }
  SECTION("synchronised collectives (DeepSpeed 0.3): nothing ahead, the reduce-scatter serial") {
    o.sharding.sync = true;
    const auto plan = plan_of(o);
    const auto& c = plan.chunk(plan.stages[0], 0);
    CHECK(first_comm(plan, c.pass[0], core::CommKind::zero3_gather)->depth == 0);
    CHECK(first_comm(plan, c.pass[1], core::CommKind::zero3_reduce)->overlap == Overlap::serial);
  }
  SECTION("hybrid sharding: the replica all-reduce follows each unit's reduce-scatter") {
    StepWork h = hand_units();
    h.chunks[0].zero3_replica_s = 0.05;
    const auto plan = plan_from_work(h, o);
    const auto& c = plan.chunk(plan.stages[0], 0);
    const Segment& seg = plan.segments[c.pass[1].seg_begin];
    REQUIRE(seg.comm_count == 3);  // gather, reduce-scatter, all-reduce
    CHECK(plan.comms[seg.comm_begin + 2].group == GroupId::replica);
    CHECK(plan.comms[seg.comm_begin + 2].overlap == Overlap::after);
    CHECK(pass_comm(plan, c.pass[1], core::CommKind::zero3_reduce) == Approx(4 * 0.15).epsilon(1e-12));
  }
}

TEST_CASE("analytic: the exposed time of ZeRO-3's units with and without prefetch", "[analytic][zero3]") {
  // One stage, m = 1, 4 units: F 0.25 s and B 0.5 s a unit, gather 0.2 s, reduce-scatter 0.1 s.
  PlanOptions o;
  o.zero = 3;
  SECTION("prefetch one unit ahead: only the first gather and the last reduce-scatter show") {
    // Every gather but the first hides behind the unit before it (0.2 < 0.25 forward; 0.2 + 0.1 of
    // reduce-scatter on the same link < 0.5 backward); the first waits for nothing before it
    // (FSDP notes: "the 1st all-gather will not be able to overlap with anything") and the
    // optimizer waits for the last reduce-scatter: step = 3 + 0.2 + 0.1 = 3.3 s.
    const auto plan = plan_from_work(hand_units(), o);
    const StepTiming t = analytic_timing(plan);
    CHECK(t.step_s == Approx(3.3).epsilon(1e-12));
    CHECK(t.exposed_s[static_cast<int>(core::CommBucket::dp)] == Approx(0.3).epsilon(1e-12));
  }
  SECTION("no prefetch: every gather waits for the compute before it") {
    // F: 4 x (0.2 + 0.25) = 1.8; B: the first unit 0.2 + 0.5, then each gather shares the link with
    // the reduce-scatter before it (0.2 + 0.1) before its 0.5, and the last reduce-scatter 0.1:
    // 0.7 + 3 x 0.8 + 0.1 = 3.2; step 5.0 s, 2.0 s of it exposed.
    o.zero3_prefetch = false;
    const auto plan = plan_from_work(hand_units(), o);
    const StepTiming t = analytic_timing(plan);
    CHECK(t.step_s == Approx(5.0).epsilon(1e-12));
    CHECK(t.exposed_s[static_cast<int>(core::CommBucket::dp)] == Approx(2.0).epsilon(1e-12));
  }
}

TEST_CASE("analytic: the memory of ZeRO-3's units in flight", "[analytic][zero3][memory]") {
  auto s = zero3_gpt3();
  const StageLayers all{96, 0};
  SECTION("the unit computing and the one prefetched, one unit's gradient twice") {
    // bf16 gathered: (1 + 1) x 2 B; gradient: 2 B as the backward makes it + 4 B for the fp32
    // reduce-scatter: 10 B x 226,576,896
    CHECK(zero3_buffer_bytes(s, all) == Approx(10 * kLayer).epsilon(1e-12));
  }
  SECTION("three units ahead hold three more; bf16 gradients need no second copy") {
    s.parallel.sharding.prefetch_units = 3;
    s.parallel.sharding.reduce_bytes = 2;
    CHECK(zero3_buffer_bytes(s, all) == Approx((4 * 2 + 2) * kLayer).epsilon(1e-12));
  }
  SECTION("no prefetch: the unit computing only") {
    s.training.overlap.zero3_prefetch = false;
    CHECK(zero3_buffer_bytes(s, all) == Approx((2 + 6) * kLayer).epsilon(1e-12));
  }
  SECTION("kept gathered from forward to backward: every layer of the stage in 16 bits") {
    s.parallel.sharding.reshard_after_forward = false;
    CHECK(zero3_buffer_bytes(s, all) == Approx((2 * 96 + 2 + 6) * kLayer).epsilon(1e-12));
  }
  SECTION("a pipeline that accumulates (torchtitan): the stage gathered, its gradients unsharded in fp32") {
    s.parallel.sharding.pipeline_accumulates = true;
    CHECK(zero3_buffer_bytes(s, all) == Approx(10 * kLayer).epsilon(1e-12));  // pp 1: as before
    s.parallel.pp = 8;
    s.parallel.dp /= 8;
    const StageLayers stage{12, 0};
    // 12 layers gathered in bf16 and the unit prefetched (2 B x 13, as kept gathered above), the
    // unit's bf16 gradient (2 B) and the stage's fp32 accumulated gradients (4 B x 12 layers)
    CHECK(zero3_buffer_bytes(s, stage) == Approx((2 * 13 + 2 + 4 * 12) * kLayer).epsilon(1e-12));
    // the backward gathers nothing: kept from the forward
    CHECK(sharding_as_run(s).reshard_after_forward == false);
    CHECK(zero3_pass(sharding_as_run(s), true, false, core::Pass::B, kLayer).gathers == 0);
  }
  SECTION("two layers a unit, and DeepSpeed's contiguous 5e8-element fp16 reduce bucket") {
    s.parallel.sharding.unit_layers = 2;
    s.parallel.sharding.reduce_bytes = 2;
    s.training.dp_bucket_params = 5e8;
    CHECK(zero3_buffer_bytes(s, all) == Approx((2 * 2 + 2) * 2 * kLayer + 2 * 5e8).epsilon(1e-12));
  }
  SECTION("max live parameters below a unit: nothing prefetched") {
    s.parallel.sharding.max_live_params = 1e8;
    CHECK(zero3_buffer_bytes(s, all) == Approx((2 + 6) * kLayer).epsilon(1e-12));
  }
}

TEST_CASE("analytic: ZeRO-3's data-parallel bytes add the units' and the ends'", "[analytic][zero3][evaluate]") {
  // m = 1536 / 128 = 12 micro-batches. Per micro-batch 96 units gather forward and backward
  // (2 x 449,613,528 B) and reduce-scatter (899,227,056 B): 172,651,594,752 B. Once per step the
  // embedding and head, 51200 x 12288 / 8 twice + 2048 x 12288 positions + 2 x 12288 final norm =
  // 182,476,800 parameters, reduce-scattered in fp32 and gathered in bf16: 6 x 127/128 of that.
  const auto s = zero3_gpt3();
  const auto r = evaluate(s);
  const double units = 12 * 96 * (2 * 453153792.0 + 906307584.0) * 127 / 128;
  const double ends = 6 * 182476800.0 * 127 / 128;
  CHECK(r.of(core::CommBucket::dp).bytes == Approx(units + ends).epsilon(1e-12));
}
