#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/network.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "ptdsim/sim/summary.hpp"
#include "fixtures.hpp"
#include "../common/scenarios.hpp"

// The three readers of a step plan (issue "One description of a training step"): the analytic
// fold, the scheduler and the sweep's bound, on the same plan.
using namespace ptdsim;
using planner::test::simulated;
using core::CommKind;
using analytic::GroupId;
using analytic::Overlap;
using analytic::PlanComm;
using analytic::Stream;

namespace {

// A plan written field by field: p equal stages, one chunk, 1F1B, m micro-batches. Each pass is one
// segment of compute followed by a serial TP collective; stages pass activations over the network;
// each stage reduces its gradients after its last pass (no overlap) and then steps its optimizer.
analytic::StepPlan hand_plan(int p, int m, double tf, double tb, double tp_f, double tp_b, double p2p,
                             double reduce, double opt) {
  analytic::StepPlan plan;
  plan.schedule = &core::kOneFOneB;
  plan.shape = core::PipelineShape{p, 1, m};
  plan.groups[static_cast<int>(GroupId::tp)].scope = core::Scope::intra;
  plan.groups[static_cast<int>(GroupId::pp)].scope = core::Scope::inter;
  plan.groups[static_cast<int>(GroupId::dp)].scope = core::Scope::inter;
  plan.overlap_dp = false;
  plan.overlap_pp = true;
  auto comm = [&](core::CommKind kind, Stream stream, GroupId g, double t) {
    plan.comms.push_back(PlanComm{kind, stream, Overlap::serial, g, t, 1e6, 0, 0});
    return static_cast<int>(plan.comms.size()) - 1;
  };
  auto pass = [&](double compute, double tp) {
    analytic::Segment seg;
    seg.compute_s = compute;
    seg.comm_begin = comm(core::CommKind::tp, Stream::tp, GroupId::tp, tp);
    seg.comm_count = 1;
    plan.segments.push_back(seg);
    analytic::PassPlan pp;
    pp.seg_begin = static_cast<int>(plan.segments.size()) - 1;
    pp.seg_count = 1;
    pp.compute_s = compute;
    return pp;
  };
  for (int r = 0; r < p; ++r) {
    analytic::StagePlan st;
    st.stage = r;
    st.layers = 1;
    st.chunk_begin = r;
    st.comm_begin = static_cast<int>(plan.comms.size());
    analytic::ChunkPlan c;
    c.layer_first = r;
    c.layers = 1;
    c.pass[0] = pass(tf, tp_f);
    c.pass[1] = pass(tb, tp_b);
    c.pass[2].seg_begin = static_cast<int>(plan.segments.size());  // no W: B holds it
    c.last_grad = c.pass[1];
    if (r < p - 1) c.send_forward = comm(core::CommKind::p2p, Stream::pp_send, GroupId::pp, p2p);
    if (r > 0) c.send_backward = comm(core::CommKind::p2p, Stream::pp_send, GroupId::pp, p2p);
    plan.chunks.push_back(c);
    st.start_begin = st.start_end = st.end_begin = static_cast<int>(plan.comms.size());
    comm(core::CommKind::dp_reduce, Stream::dp, GroupId::dp, reduce);
    st.end_end = st.post_begin = st.post_end = st.comm_end = static_cast<int>(plan.comms.size());
    st.optimizer_s = opt;
    plan.stages.push_back(st);
  }
  return plan;
}

}  // namespace

TEST_CASE("plan: the three readers of a hand-made plan agree where nothing overlaps", "[plan][readers]") {
  // 1F1B over p = 4 equal stages, m = 8, free sends: every micro-batch slot takes F + B with their
  // serial TP, (m + p - 1) slots; then the last stage to finish (stage 0) reduces its gradients and
  // steps: 11 * (1 + 0.1 + 2 + 0.2) + 0.3 + 0.1 = 36.7
  const auto plan = hand_plan(4, 8, 1.0, 2.0, 0.1, 0.2, 0.0, 0.3, 0.1);
  const double expected = 11 * 3.3 + 0.3 + 0.1;
  const double sim = simulated(plan);
  CHECK(sim == Approx(expected).epsilon(1e-12));
  CHECK(analytic::analytic_timing(plan).step_s == Approx(expected).epsilon(1e-12));
  const double bound = planner::step_lower_bound(plan);
  CHECK(bound <= sim * (1 + 1e-12));
  CHECK(bound >= 0.95 * sim);  // here the bound's chains are nearly the whole step

  SECTION("sends over the network: the bound still holds, the closed form counts the fill and drain") {
    // Each of the 2(p-1) fill and drain hops delays the step; in 1F1B's steady state a micro-batch's
    // round trip p(F+B) + 2(p-1)c also outlasts the p slots stage 0 holds, so the scheduler pays more
    // than the closed form's 2(p-1)c: the analytic engine is a first-order estimate here.
    const auto sends = hand_plan(4, 8, 1.0, 2.0, 0.1, 0.2, 0.05, 0.3, 0.1);
    const double s_sim = simulated(sends);
    CHECK(analytic::analytic_timing(sends).step_s == Approx(expected + 6 * 0.05).epsilon(1e-12));
    CHECK(s_sim >= expected + 6 * 0.05 - 1e-9);
    CHECK(planner::step_lower_bound(sends) <= s_sim * (1 + 1e-12));
  }
  SECTION("GPipe holds the same slots") {
    auto gp = plan;
    gp.schedule = &core::kGpipe;
    CHECK(simulated(gp) == Approx(expected).epsilon(1e-12));
    CHECK(analytic::analytic_timing(gp).step_s == Approx(expected).epsilon(1e-12));
    CHECK(planner::step_lower_bound(gp) <= simulated(gp) * (1 + 1e-12));
  }
}

TEST_CASE("plan: the three readers of ZeRO-3's units", "[plan][readers][zero3]") {
  // One stage, m = 1, 4 units: F 0.25 s and B 0.5 s a unit, gather 0.2 s, reduce-scatter 0.1 s
  // on one link (analytic zero3_test.cpp derives the closed forms by hand).
  analytic::StepWork w;
  w.stages.resize(1);
  w.chunks.resize(1);
  analytic::ChunkWork& c = w.chunks[0];
  c.layers = 4, c.forward_s = 1.0, c.backward_input_s = 2.0, c.grad_share = 1;
  c.zero3_units = 4, c.zero3_unit_params = 1e6, c.zero3_gather_s = 0.2, c.zero3_reduce_s = 0.1;
  analytic::PlanOptions o;
  o.zero = 3;
  auto check = [&](const analytic::StepPlan& plan, double expected) {
    const double sim = simulated(plan);
    CHECK(sim == Approx(expected).epsilon(1e-12));
    CHECK(analytic::analytic_timing(plan).step_s == Approx(expected).epsilon(1e-12));
    CHECK(planner::step_lower_bound(plan) <= sim * (1 + 1e-12));
  };
  SECTION("prefetch one unit ahead: the first gather and the last reduce-scatter show, 3.3 s") {
    check(analytic::plan_from_work(w, o), 3.3);
  }
  SECTION("no prefetch: 5.0 s") {
    o.zero3_prefetch = false;
    check(analytic::plan_from_work(w, o), 5.0);
  }
  SECTION("two units ahead: the same 3.3 s while every gather is shorter than a unit's compute") {
    o.sharding.prefetch_units = 2;
    check(analytic::plan_from_work(w, o), 3.3);
  }
  SECTION("synchronised collectives: every gather and reduce-scatter in line, 5.0 s") {
    // F 4 x (0.2 + 0.25); B 4 x (0.2 + 0.5 + 0.1), the gather beside the previous reduce-scatter
    // on their shared link ending together with it: 1.8 + 0.7 + 3 x 0.8 + 0.1 = 5.0
    o.sharding.sync = true;
    check(analytic::plan_from_work(w, o), 5.0);
  }
  SECTION("hybrid sharding: the replica all-reduce on the network after each reduce-scatter") {
    // 0.05 s a unit on the other link: hidden behind the backward but the last, 3.35 s
    c.zero3_replica_s = 0.05;
    o.groups[static_cast<int>(GroupId::replica)].scope = core::Scope::inter;
    const auto plan = analytic::plan_from_work(w, o);
    const double sim = simulated(plan);
    CHECK(sim == Approx(3.35).epsilon(1e-12));
    CHECK(analytic::analytic_timing(plan).step_s == Approx(3.35).epsilon(1e-12));
    CHECK(planner::step_lower_bound(plan) <= sim * (1 + 1e-12));
  }
}

TEST_CASE("plan: the analytic engine equals the scheduler on real layouts where nothing overlaps",
          "[plan][readers]") {
  // No pipeline (no bubble to approximate), no overlap switch on, no context parallelism (ring
  // attention always overlaps), no ZeRO-3 (its reduce-scatters run on their own stream beside the
  // next unit): every collective is serial, so the closed form is the schedule.
  core::Scenario base = testing::gpt3_1024();
  base.training.global_batch = 256;
  base.training.overlap = core::Overlap{false, false, false, false};
  // ZeRO-3 with synchronised collectives (DeepSpeed 0.3) runs every gather and reduce-scatter in
  // line with the compute: serial too.
  for (int tp : {1, 2, 4, 8})
    for (int zero : {0, 1, 2, 3}) {
      core::Scenario s = base;
      s.parallel.tp = tp;
      s.parallel.pp = 1;
      s.parallel.dp = s.gpus / tp;
      s.parallel.zero = zero;
      s.parallel.sharding.sync = true;
      s.parallel.sharding.unit_layers = 0.25;
      s.parallel.sharding.overhead_per_rank_s = 1e-5;
      s.parallel.sequence_parallel = tp > 1;
      s.training.global_batch = s.parallel.dp;  // one micro-batch each
      REQUIRE(core::check(s).empty());
      const auto plan = analytic::plan_step(s);
      INFO("tp " << tp << " zero " << zero);
      CHECK(analytic::analytic_timing(plan).step_s == Approx(simulated(plan)).epsilon(1e-9));
    }
}

TEST_CASE("plan: the bound never exceeds the simulated step over sampled layouts", "[plan][readers]") {
  // 300 random layouts of GPT-3 175B on 1024 A100s and of a GQA model on 64 GPUs: degrees,
  // schedules, ZeRO stages, recomputation and every overlap switch drawn at random.
  std::mt19937 rng(20261123);
  auto pick = [&](std::vector<int> v) { return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)]; };
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  core::Scenario gpt3 = testing::gpt3_1024();
  core::Scenario gqa = testing::gpt3_1024();
  gqa.model = testing::llama(32, 4096, 32, 8, 14336, 128256);
  gqa.model.max_seq_len = 8192;
  gqa.gpus = 64;
  gqa.training.seq_len = 4096;
  int checked = 0;
  for (int trial = 0; trial < 3000 && checked < 300; ++trial) {
    core::Scenario s = coin() ? gpt3 : gqa;
    auto& p = s.parallel;
    p.tp = pick({1, 2, 4, 8});
    p.pp = pick({1, 2, 4, 8});
    p.cp = pick({1, 1, 2});
    p.zero = pick({0, 1, 2, 3});
    p.vpp = 1;
    p.schedule = static_cast<core::Schedule>(pick({0, 1, 2, 3}));
    if (p.schedule == core::Schedule::interleaved) p.vpp = pick({2, 4});
    p.sequence_parallel = p.tp > 1 && coin();
    if (p.tp * p.pp * p.cp > s.gpus) continue;
    p.dp = s.gpus / (p.tp * p.pp * p.cp);
    s.training.micro_batch = pick({1, 2});
    s.training.global_batch = p.dp * s.training.micro_batch * pick({4, 8, 16});
    s.training.recompute = static_cast<core::Recompute>(pick({0, 1, 2}));
    s.training.overlap = core::Overlap{coin(), coin(), coin(), coin()};
    if (p.zero == 3) {  // the ways ZeRO-3 / FSDP frameworks run
      auto& z = p.sharding;
      z.unit_layers = pick({1, 1, 2, 4}) / static_cast<double>(pick({1, 4}));
      z.reshard_after_forward = coin();
      z.regather_on_recompute = coin();
      z.reduce_bytes = pick({2, 4});
      z.prefetch_units = pick({1, 2, 3});
      z.backward_prefetch = coin();
      z.max_live_params = coin() ? 0.0 : 2e8;
      z.sync = pick({0, 0, 1}) == 1;
      z.overhead_s = coin() ? 1e-4 : 0.0;
      z.overhead_per_rank_s = coin() ? 1e-5 : 0.0;
      z.shard_ranks = coin() ? 0 : pick({2, 4, 8});
    }
    s.hardware.gpu.sms = coin() ? 108 : 0;
    s.hardware.gpu.comm_sms = s.hardware.gpu.sms ? 16 : 0;
    if (!core::check(s).empty()) continue;
    const auto plan = analytic::plan_step(s);
    const double sim = simulated(plan);
    const double bound = planner::step_lower_bound(plan);
    INFO("tp " << p.tp << " pp " << p.pp << " cp " << p.cp << " vpp " << p.vpp << " zero " << p.zero
               << " schedule " << static_cast<int>(p.schedule) << " mb " << s.training.micro_batch
               << " m " << plan.shape.m << " unit " << p.sharding.unit_layers << " shard "
               << p.sharding.shard_ranks << " sync " << p.sharding.sync);
    CHECK(bound <= sim * (1 + 1e-9));
    CHECK(bound > 0);
    // the schedule bound: never looser, still a bound
    const double graph = planner::schedule_lower_bound(plan);
    CHECK(graph >= bound);
    CHECK(graph <= sim * (1 + 1e-9));
    ++checked;
  }
  CHECK(checked == 300);
}

namespace {

// The scheduler on the scenario's own fabric (as sim::simulate builds it): FlowShare where the
// fabric is blocking.
double simulated_on_fabric(const analytic::StepPlan& plan, const core::HardwareSpec& hw) {
  sim::StepGraph g;
  g.fabric = sim::fabric_of(hw);
  sim::build_step(plan, g);
  g.engine.run();
  return sim::summarize(g).step_s;
}

// GPT-3 175B on 1024 A100s on a fabric whose leaf and spine are 2:1 oversubscribed (the uplinks
// above them give a GPU 1/2 and 1/4 of its NIC): groups that leave a leaf take routes of different
// shares through one NIC, and the scheduler shares them max-min (FlowShare).
core::Scenario gpt3_blocking() {
  core::Scenario s = testing::gpt3_1024();
  s.hardware.fabric.nics_per_node = 8;
  s.hardware.fabric.tiers = {{"leaf", 40, 25e9, 0.3e-6, 2.0, 0},
                             {"spine", 40, 25e9, 0.3e-6, 2.0, 0},
                             {"core", 40, 25e9, 0.3e-6, 1.0, 0}};
  return s;
}

}  // namespace

TEST_CASE("plan: the closed form of link sharing on a blocking fabric", "[plan][readers][sharing]") {
  const core::Scenario base = gpt3_blocking();
  const auto u = analytic::uplink_shares(base.hardware);
  REQUIRE(u.blocking());
  // per GPU: 25 GB/s x 8 NICs / 8 GPUs over the 25 GB/s NIC, / 2 above the leaf, / 4 above the spine
  REQUIRE(u.count == 2);
  CHECK(u.uplink[0] == Approx(0.5));
  CHECK(u.uplink[1] == Approx(0.25));
  CHECK(u.route(0) == 1.0);   // under one leaf: the NIC alone
  CHECK(u.route(2) == 0.25);  // through the core: the spine's uplinks

  SECTION("hand-worked: two collectives of one rank through one NIC, one of them up a 2:1 leaf") {
    // One stage, one micro-batch. The forward's 10 ms of compute has two collectives beside it, 1 s
    // alone each: one over a group that crosses the leaf's 2:1 uplinks (its route, alone, at 1/2 of
    // the NIC), one over a group under one leaf (the NIC alone). Max-min: the first takes its 1/2 and
    // ends at 1 s; the second gets the NIC's other 1/2, has 0.5 s of work left at 1 s and ends at
    // 1.5 s; the backward's 10 ms follows: 1.51 s. The closed form: the NIC serves 1 x 1/2 + 1 x 1
    // = 1.5 s of capacity, so the bound is 1.5 s; summing the work alone (2 s) would exceed the step.
    analytic::StepPlan plan;
    plan.schedule = &core::kOneFOneB;
    plan.shape = core::PipelineShape{1, 1, 1};
    auto& up = plan.groups[static_cast<int>(GroupId::tp)];
    up.scope = core::Scope::inter;
    up.span.top = 1;
    auto& under = plan.groups[static_cast<int>(GroupId::cp)];
    under.scope = core::Scope::inter;
    under.span.top = 0;
    plan.fabric.count = 1;
    plan.fabric.uplink[0] = 0.5;
    plan.comms.push_back(PlanComm{CommKind::tp, Stream::tp, Overlap::beside, GroupId::tp, 1.0, 1e6, 0.01, 0});
    plan.comms.push_back(PlanComm{CommKind::cp, Stream::cp, Overlap::beside, GroupId::cp, 1.0, 1e6, 0.01, 0});
    analytic::Segment f;
    f.compute_s = 0.01;
    f.comm_begin = 0;
    f.comm_count = 2;
    analytic::Segment b;
    b.compute_s = 0.01;
    b.comm_begin = 2;
    plan.segments = {f, b};
    analytic::StagePlan st;
    st.start_begin = st.start_end = st.end_begin = st.end_end = st.post_begin = st.post_end = st.comm_end = 2;
    analytic::ChunkPlan c;
    c.layers = 1;
    c.pass[0] = analytic::PassPlan{0, 1, 0.01, 0};
    c.pass[1] = analytic::PassPlan{1, 1, 0.01, 0};
    c.pass[2].seg_begin = 2;
    c.last_grad = c.pass[1];
    plan.chunks.push_back(c);
    plan.stages.push_back(st);
    sim::StepGraph g;
    g.fabric.uplink = {0.5};
    sim::build_step(plan, g);
    g.engine.run();
    const double sim = sim::summarize(g).step_s;
    CHECK(sim == Approx(1.51).epsilon(1e-9));
    const double bound = planner::step_lower_bound(plan);
    CHECK(bound == Approx(1.5).epsilon(1e-12));
    CHECK(bound <= sim);
    CHECK(planner::schedule_lower_bound(plan) <= sim * (1 + 1e-12));
  }

  SECTION("the bound stays at or below the simulated step over sampled layouts") {
    // Layouts whose DP reduction (crossing the spine) runs beside pipeline sends (under a leaf) on
    // one NIC: the sends take the NIC the reduction's narrow route leaves, so the NIC carries more
    // than one second of work a second and a bound summing the work alone would exceed the step.
    std::mt19937 rng(20261129);
    auto pick = [&](std::vector<int> v) { return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)]; };
    auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
    int checked = 0, shared = 0;
    for (int trial = 0; trial < 2000 && checked < 60; ++trial) {
      core::Scenario s = base;
      auto& p = s.parallel;
      p.tp = pick({1, 2, 4, 8});
      p.pp = pick({2, 4, 8, 16});
      p.cp = 1;
      p.zero = pick({0, 1, 2, 3});
      p.vpp = 1;
      p.schedule = static_cast<core::Schedule>(pick({0, 1, 2, 3}));
      if (p.schedule == core::Schedule::interleaved) p.vpp = pick({2, 3});
      p.sequence_parallel = p.tp > 1 && coin();
      p.dp = s.gpus / (p.tp * p.pp);
      s.training.micro_batch = 1;
      s.training.global_batch = p.dp * pick({4, 8, 16});
      s.training.recompute = static_cast<core::Recompute>(pick({0, 1, 2}));
      s.training.overlap = core::Overlap{coin(), true, true, coin()};
      s.hardware.gpu.sms = coin() ? 108 : 0;
      s.hardware.gpu.comm_sms = s.hardware.gpu.sms ? 16 : 0;
      if (!core::check(s).empty()) continue;
      const auto plan = analytic::plan_step(s);
      const double sim = simulated_on_fabric(plan, s.hardware);
      const double bound = planner::step_lower_bound(plan);
      INFO("tp " << p.tp << " pp " << p.pp << " zero " << p.zero << " schedule " << static_cast<int>(p.schedule)
                 << " vpp " << p.vpp << " m " << plan.shape.m);
      CHECK(bound <= sim * (1 + 1e-9));
      CHECK(planner::schedule_lower_bound(plan) <= sim * (1 + 1e-9));
      if (plan.group(analytic::GroupId::dp).span.top != plan.group(analytic::GroupId::pp).span.top) ++shared;
      // The analytic engine gives each collective its time alone (as FairShare's one link a rank
      // does with nothing beside it): on this fabric max-min sharing moves the simulated step by
      // -0.4%..0% (median -0.03% over these draws) against one fair link per rank, so the analytic
      // engine stays as near the simulation as it is on a non-blocking fabric, within 0.5%.
      const double fair = simulated(plan);
      CHECK(std::abs(sim / fair - 1) <= 0.005);
      ++checked;
    }
    CHECK(checked == 60);
    CHECK(shared > 10);  // most draw routes of different shares on one NIC
  }
}
