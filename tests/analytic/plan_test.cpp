#include <catch2/catch.hpp>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "../common/plan.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using testing::pass_comm;
using namespace ptdsim::analytic;

namespace {

}  // namespace

TEST_CASE("analytic: the step plan of GPT-3 175B on 1024 A100s", "[analytic][plan]") {
  const auto s = testing::gpt3_1024();
  const auto work = step_work(s);
  const auto plan = plan_step(s);
  REQUIRE(plan.stages.size() == 16);
  CHECK(plan.shape.m == 192);
  CHECK(plan.schedule->id == core::Schedule::one_f_one_b);
  CHECK(plan.group(GroupId::tp).scope == core::Scope::intra);
  CHECK(plan.group(GroupId::dp).scope == core::Scope::inter);
  const auto& first = plan.chunk(plan.stages[0], 0);
  const auto& mid = plan.chunk(plan.stages[7], 0);
  const auto& last = plan.chunk(plan.stages[15], 0);
  SECTION("equal middle stages; the first adds the embedding, the last the logits and loss") {
    CHECK(first.pass[0].compute_s - mid.pass[0].compute_s == Approx(embedding_times(s).forward).epsilon(1e-9));
    CHECK(last.pass[0].compute_s - mid.pass[0].compute_s == Approx(logits_times(s).forward).epsilon(1e-9));
    // 1F1B keeps W in B: input and weight gradients of the logits GEMM and the loss
    CHECK(last.pass[1].compute_s - mid.pass[1].compute_s ==
          Approx(logits_times(s).backward_input + logits_times(s).backward_weight).epsilon(1e-9));
    CHECK(first.layers == 6);
    CHECK(plan.chunk(plan.stages[1], 0).layer_first == 6);
  }
  SECTION("serial TP: two collectives forward and two backward per layer, after the GEMMs") {
    // overlap.tp is off: the TP collectives are serial, their time the layers' sum
    CHECK(pass_comm(plan, mid.pass[0], core::CommKind::tp) == Approx(work.chunks[7].tp_forward_s).epsilon(1e-12));
    CHECK(pass_comm(plan, mid.pass[1], core::CommKind::tp) == Approx(work.chunks[7].tp_backward_s).epsilon(1e-12));
    const Segment& seg = plan.segments[mid.pass[0].seg_begin];
    REQUIRE(seg.comm_count == 1);
    CHECK(plan.comms[seg.comm_begin].overlap == Overlap::serial);
  }
  SECTION("the data-parallel step with ZeRO-1: fp32 gradient reduce-scatter, bf16 all-gather") {
    // 1,463,270,400 params on a first-stage GPU; dp 8, one rank per node: 25 GB/s, and NCCL's ring
    // Simple over 8 nodes: 7 steps, each across the network (14 us): 8.4 + 7 x 14 = 106.4 us
    const double reduce = 106.4e-6 + 0.875 * 4 * 1463270400.0 / 25e9;  // 0.2050 s
    const double gather = 106.4e-6 + 0.875 * 2 * 1463270400.0 / 25e9;  // 0.1025 s
    CHECK(plan.stages[0].grad_bytes == Approx(4 * 1463270400.0).epsilon(1e-12));
    // overlap.dp: reduced in buckets of max(40M, 1M * dp) fp32 gradients as the last backward makes them
    CHECK(pass_comm(plan, first.last_grad, core::CommKind::dp_reduce) == Approx(reduce).epsilon(1e-12));
    CHECK(pass_comm(plan, first.pass[1], core::CommKind::dp_reduce) == 0);
    CHECK(plan.stages[0].dp_bucket_count == 6);  // 5.85 GB / 160 MB = 37, at most one per layer
    // the updated parameters' all-gather is issued at the step's start, hidden behind the forwards
    REQUIRE(plan.stages[0].start_end - plan.stages[0].start_begin == 1);
    CHECK(plan.comms[plan.stages[0].start_begin].time_s == Approx(gather).epsilon(1e-12));
    CHECK(plan.stages[0].end_end == plan.stages[0].end_begin);
  }
  SECTION("the optimizer step: 34 bytes per parameter of the shard at 0.85 x 2039 GB/s") {
    CHECK(plan.stages[0].optimizer_s == Approx(34 * 1463270400.0 / 8 / (2039e9 * 0.85)).epsilon(1e-12));  // 3.59 ms
  }
  SECTION("p2p across nodes: one NIC; no send forward from the last stage nor backward from the first") {
    REQUIRE(first.send_forward >= 0);
    CHECK(plan.comms[first.send_forward].sent_bytes == Approx(6291456.0).epsilon(1e-12));
    CHECK(plan.comms[first.send_forward].time_s == Approx(10e-6 + 6291456.0 / 25e9).epsilon(1e-12));
    CHECK(first.send_backward == -1);
    CHECK(last.send_forward == -1);
    CHECK(last.send_backward >= 0);
  }
}

TEST_CASE("analytic: the plan's rules on hand-made stage work", "[analytic][plan]") {
  // one stage: F 1 s, B 2 s; 8 layers; TP 0.2 s forward
  StepWork work;
  work.stages.resize(1);
  work.chunks.resize(1);
  ChunkWork& w = work.chunks[0];
  StageWork& st = work.stages[0];
  w.layers = 8;
  w.forward_s = 1.0;
  w.backward_input_s = 2.0;
  w.tp_forward_s = 0.2;
  w.gemm_forward_s = 0.6;
  w.grad_share = 1;
  PlanOptions o;
  o.microbatches = 4;
  SECTION("ZeRO-3: one segment per unit, each gathering its weights before it") {
    o.zero = 3;
    w.zero3_units = 8;
    w.zero3_gather_s = 0.01;
    w.zero3_reduce_s = 0.02;
    const auto plan = plan_from_work(work, o);
    const auto& c = plan.chunk(plan.stages[0], 0);
    const Segment& f = plan.segments[c.pass[0].seg_begin];
    CHECK(f.repeat == 8);
    CHECK(f.compute_s == Approx(1.0 / 8).epsilon(1e-12));
    CHECK(pass_comm(plan, c.pass[0], core::CommKind::zero3_gather) == Approx(0.08).epsilon(1e-12));
    CHECK(pass_comm(plan, c.pass[1], core::CommKind::zero3_gather) == Approx(0.08).epsilon(1e-12));
    CHECK(pass_comm(plan, c.pass[1], core::CommKind::zero3_reduce) == Approx(0.16).epsilon(1e-12));
    CHECK(pass_comm(plan, c.pass[0], core::CommKind::zero3_reduce) == 0);
    CHECK(plan.comms[f.comm_begin].overlap == Overlap::prefetch);
    CHECK(plan.comms[f.comm_begin].depth == 1);
  }
  SECTION("overlap.tp: TP beside the pass, hiding behind its GEMMs") {
    o.overlap_tp = true;
    const auto plan = plan_from_work(work, o);
    const Segment& f = plan.segments[plan.chunk(plan.stages[0], 0).pass[0].seg_begin];
    const PlanComm& tp = plan.comms[f.comm_begin];
    CHECK(tp.overlap == Overlap::beside);
    CHECK(tp.window_s == Approx(0.6).epsilon(1e-12));
  }
  SECTION("overlap.tp: what no GEMM hides (tp_serial_forward_s) stays serial, with its share of the bytes") {
    o.overlap_tp = true;
    w.tp_serial_forward_s = 0.05;
    w.tp_bytes = 1e9;  // 0.5e9 in each pass
    const auto plan = plan_from_work(work, o);
    const Segment& f = plan.segments[plan.chunk(plan.stages[0], 0).pass[0].seg_begin];
    REQUIRE(f.comm_count == 2);
    const PlanComm& beside = plan.comms[f.comm_begin];
    const PlanComm& serial = plan.comms[f.comm_begin + 1];
    CHECK(beside.overlap == Overlap::beside);
    CHECK(beside.time_s == Approx(0.15).epsilon(1e-12));
    CHECK(beside.sent_bytes == Approx(0.375e9).epsilon(1e-12));
    CHECK(serial.overlap == Overlap::serial);
    CHECK(serial.time_s == Approx(0.05).epsilon(1e-12));
    CHECK(serial.sent_bytes == Approx(0.125e9).epsilon(1e-12));
    o.overlap_tp = false;  // without overlap all of it is serial, one collective
    const auto off = plan_from_work(work, o);
    const Segment& g = off.segments[off.chunk(off.stages[0], 0).pass[0].seg_begin];
    CHECK(g.comm_count == 1);
    CHECK(off.comms[g.comm_begin].time_s == Approx(0.2).epsilon(1e-12));
  }
  SECTION("ZB-H1 splits W off B and reduces gradients after W") {
    o.schedule = core::Schedule::zb_h1;
    w.backward_weight_s = 0.5;
    st.dp_reduce_s = 0.3;
    st.grad_bytes = 1e6;
    const auto plan = plan_from_work(work, o);
    const auto& c = plan.chunk(plan.stages[0], 0);
    CHECK(c.pass[1].compute_s == Approx(2.0).epsilon(1e-12));
    CHECK(c.pass[2].compute_s == Approx(0.5).epsilon(1e-12));
    CHECK(pass_comm(plan, c.last_grad, core::CommKind::dp_reduce) == Approx(0.3).epsilon(1e-12));
    CHECK(c.last_grad.compute_s == Approx(0.5).epsilon(1e-12));
  }
}
