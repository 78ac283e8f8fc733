#include <catch2/catch.hpp>

#include <algorithm>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/op_checkpoint.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

TEST_CASE("analytic: tensor-parallel volume per layer", "[analytic][comm]") {
  auto s = testing::gpt3_1024();
  s.parallel.sequence_parallel = false;
  const double S = 2.0 * 2048 * 12288;  // the s*b*h activation in bf16: 50,331,648 bytes
  // one all-reduce on NVLink, NCCL's ring Simple (collectives_test.cpp): 8.4 + 14 x 3.4 = 56 us
  const double ar = 56e-6 + 1.75 * S / 300e9;
  SECTION("2 all-reduces forward, 2 backward: each GPU sends 2(t-1)/t * S per all-reduce") {
    const auto c = layer_comm(s, false);
    CHECK(c.tp_bytes_forward == Approx(2 * 1.75 * S).epsilon(1e-12));
    CHECK(c.tp_bytes_backward == Approx(2 * 1.75 * S).epsilon(1e-12));
    CHECK(c.tp_forward_s == Approx(2 * ar).epsilon(1e-12));
  }
  SECTION("full recomputation repeats the forward's two in the backward pass") {
    s.training.recompute = core::Recompute::full;
    const auto c = layer_comm(s, false);
    CHECK(c.tp_bytes_backward == Approx(4 * 1.75 * S).epsilon(1e-12));
    CHECK(c.tp_backward_s == Approx(4 * ar).epsilon(1e-12));
  }
  SECTION("sequence parallel: all-gather + reduce-scatter, same volume, twice the latency") {
    s.parallel.sequence_parallel = true;
    const auto c = layer_comm(s, false);
    CHECK(c.tp_bytes_forward == Approx(2 * 1.75 * S).epsilon(1e-12));
    // each all-gather and reduce-scatter a ring Simple of 7 steps: 8.4 + 7 x 3.4 = 32.2 us
    CHECK(c.tp_forward_s == Approx(2 * (2 * 32.2e-6 + 1.75 * S / 300e9)).epsilon(1e-12));
  }
  SECTION("FP8 under sequence parallelism: the all-gathers carry one byte an element, except rowwise's") {
    s.parallel.sequence_parallel = true;
    s.training.precision = core::Precision::fp8;
    s.training.fp8_recipe = core::Fp8Recipe::current;
    auto c = layer_comm(s, false);
    // all-gather 0.875 x S/2, reduce-scatter 0.875 x S, twice each way (the backward gathers proj's
    // and fc2's output gradients, quantised too)
    CHECK(c.tp_bytes_forward == Approx(2 * (0.875 * S / 2 + 0.875 * S)).epsilon(1e-12));
    CHECK(c.tp_bytes_backward == Approx(2 * (0.875 * S / 2 + 0.875 * S)).epsilon(1e-12));
    CHECK(c.tp_forward_s == Approx(2 * (2 * 32.2e-6 + 1.3125 * S / 300e9)).epsilon(1e-12));
    // torchao's rowwise gathers the 16-bit input and quantises after
    s.training.fp8_recipe = core::Fp8Recipe::rowwise;
    c = layer_comm(s, false);
    CHECK(c.tp_bytes_forward == Approx(2 * 1.75 * S).epsilon(1e-12));
  }
  SECTION("tp 1 sends nothing") {
    s.parallel.tp = 1;
    s.parallel.dp = 64;
    CHECK(layer_comm(s, false).tp_bytes_forward == 0);
  }
}

TEST_CASE("analytic: pipeline, context and expert volumes", "[analytic][comm]") {
  auto s = testing::gpt3_1024();
  SECTION("p2p: s b h * 2 bytes / t per micro-batch and boundary") {
    CHECK(p2p_bytes(s) == Approx(2.0 * 2048 * 12288 / 8).epsilon(1e-12));  // 6,291,456
  }
  SECTION("cp: K and V of the local chunk go c-1 hops forward; backward c-1 again and c of their gradients") {
    s.parallel.cp = 4;
    s.parallel.dp = 2;
    // per hop: 2 (K,V) * 2 bytes * (2048/4) tokens * 12288 / t 8 = 3,145,728 bytes; the ring's
    // backward (training.cp_comm p2p) sends the blocks on 3 times and their gradients 4 times, the
    // last home to their owner (docs/analytic.md "Context parallelism")
    const auto c = layer_comm(s, false);
    CHECK(c.cp_bytes_forward == Approx(3 * 3145728.0).epsilon(1e-12));
    CHECK(c.cp_bytes_backward == Approx(7 * 3145728.0).epsilon(1e-12));
  }
  SECTION("ep: dispatch and combine all-to-alls, forward and backward") {
    auto m = testing::llama(32, 4096, 32, 8, 14336, 32000);
    m.moe = core::MoeSpec{8, 2, 1, 0};
    core::Scenario x;
    x.model = m;
    x.hardware = testing::dgx_a100_80g();
    x.gpus = 8;
    x.parallel.dp = 8;
    x.parallel.ep = 8;
    x.training.seq_len = 4096;
    // per all-to-all: 2 bytes * 4096 tokens * 4096 * top_k 2 = 67,108,864; each GPU sends 7/8 of it
    const auto c = layer_comm(x, true);
    CHECK(c.ep_bytes_forward == Approx(2 * 0.875 * 67108864.0).epsilon(1e-12));
    CHECK(c.ep_bytes_backward == Approx(2 * 0.875 * 67108864.0).epsilon(1e-12));
    CHECK(c.ep_forward_s == Approx(2 * (5e-6 + 0.875 * 67108864.0 / 300e9)).epsilon(1e-12));
    CHECK(layer_comm(x, false).ep_bytes_forward == 0);  // dense layers exchange no tokens
  }
}

namespace {
// A layer's four GEMMs with the times given, the rest of the layer left out: what TP overlap reads.
LayerOps four_gemms(double qkv, double proj, double fc1, double fc2) {
  LayerOps ops;
  auto add = [&](core::Operator op, double t) {
    core::OperatorTime& o = ops.ops[static_cast<std::size_t>(ops.count++)];
    o.op = op;
    o.forward_s = o.backward_input_s = o.backward_weight_s = t;
  };
  add(core::Operator::qkv, qkv);
  add(core::Operator::proj, proj);
  add(core::Operator::fc1, fc1);
  add(core::Operator::fc2, fc2);
  return ops;
}
}  // namespace

TEST_CASE("analytic: overlapped TP hides each collective behind the GEMM it is fused with", "[analytic][comm]") {
  auto s = testing::gpt3_1024();  // tp 8 in one node, sequence parallel
  s.training.overlap.tp = true;
  s.training.recompute = core::Recompute::none;
  const double S = 2.0 * 2048 * 12288;
  const double c = 32.2e-6 + 0.875 * S / 300e9;  // one all-gather or reduce-scatter: 179.0 us
  // QKV 100 us, proj 40, fc1 400, fc2 200 in every pass
  const LayerOps ops = four_gemms(100e-6, 40e-6, 400e-6, 200e-6);
  SECTION("Megatron-Core with TE: a chunked GEMM hides (t-1)/t of itself, the bulk reduce-scatters the weight GEMM") {
    const auto l = layer_comm(s, false, &ops);
    // forward: all-gather beside 7/8 of QKV (87.5 us), reduce-scatter 7/8 of proj (35), then fc1's
    // (350) and fc2's (175): 91.5 + 144.0 + 0 + 4.0 us
    const double forward = (c - 87.5e-6) + (c - 35e-6) + 0 + (c - 175e-6);
    CHECK(l.tp_serial_forward_s == Approx(forward).epsilon(1e-9));
    // backward: the output gradients' all-gathers beside 7/8 of proj's and fc2's input-gradient
    // GEMMs; QKV's and fc1's input gradients reduce-scattered beside their whole weight GEMMs
    const double backward = (c - 35e-6) + (c - 100e-6) + (c - 175e-6) + 0;
    CHECK(l.tp_serial_backward_s == Approx(backward).epsilon(1e-9));
    CHECK(l.tp_forward_s == Approx(4 * c).epsilon(1e-12));  // the collectives themselves unchanged
  }
  SECTION("full recomputation reruns the forward's, exposed the same") {
    s.training.recompute = core::Recompute::full;
    const auto l = layer_comm(s, false, &ops);
    CHECK(l.tp_serial_backward_s ==
          Approx(l.tp_serial_forward_s + (c - 35e-6) + (c - 100e-6) + (c - 175e-6)).epsilon(1e-9));
  }
  SECTION("projections apart (torchtitan): the summed input gradients' reduce-scatters stay whole") {
    s.training.fusion.projections = core::Fusion::eager;
    const auto l = layer_comm(s, false, &ops);
    CHECK(l.tp_serial_backward_s == Approx((c - 35e-6) + (c - 175e-6) + 2 * c).epsilon(1e-9));
  }
  SECTION("per-op checkpointing: a re-gather hides behind the share of its GEMM that reruns") {
    s.training.recompute = core::Recompute::op;
    s.training.fusion.projections = core::Fusion::eager;
    // GPT-3's mm order is wq wk wv wo fc1 fc2, every second rerun: wk, wo, fc2. QKV's re-gather
    // feeds the rerun wk; fc1's input is gathered again only for its weight gradient, which reads it
    // as its second operand: nothing fuses with it, it is serial whole
    const auto share = op_checkpoint_shares(s);
    REQUIRE(share.qkv > 0);
    CHECK(share.fc1 == 0);
    const auto l = layer_comm(s, false, &ops);
    const double own = (c - 35e-6) + (c - 175e-6) + 2 * c;  // as with the projections apart
    const double regathers = std::max(0.0, c - 0.875 * share.qkv * 100e-6) + c;
    CHECK(l.tp_serial_backward_s == Approx(own + regathers).epsilon(1e-9));
  }
  SECTION("rowwise FP8: every all-gather feeds the cast, and the rescaled input gradients are summed") {
    s.training.precision = core::Precision::fp8;
    s.training.fp8_recipe = core::Fp8Recipe::rowwise;
    const auto l = layer_comm(s, false, &ops);  // rowwise gathers 16 bits: c as in bf16
    CHECK(l.tp_serial_forward_s == Approx(2 * c + (c - 35e-6) + (c - 175e-6)).epsilon(1e-9));
    CHECK(l.tp_serial_backward_s == Approx(4 * c).epsilon(1e-9));
  }
  SECTION("an MoE layer keeps the attention's two each way") {
    const auto l = layer_comm(s, true, &ops);
    CHECK(l.tp_serial_forward_s == Approx((c - 87.5e-6) + (c - 35e-6)).epsilon(1e-9));
  }
  SECTION("without the operators nothing fused is called serial; without overlap the same (the plan ignores it)") {
    CHECK(layer_comm(s, false).tp_serial_backward_s == 0);
    const double on = layer_comm(s, false, &ops).tp_serial_forward_s;
    s.training.overlap.tp = false;  // the layer costs do not read the switch (layer_costs_key)
    CHECK(layer_comm(s, false, &ops).tp_serial_forward_s == on);
    s.parallel.sequence_parallel = false;  // all-reduces: TP overlap needs SP
    CHECK(layer_comm(s, false, &ops).tp_serial_forward_s == 0);
  }
}
