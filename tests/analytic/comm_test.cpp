#include <catch2/catch.hpp>

#include "ptdsim/analytic/comm.hpp"
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
