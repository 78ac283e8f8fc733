#include <catch2/catch.hpp>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/context_parallel.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

namespace {
// GPT-3 175B with tp 2, cp 4 (the cp group of 4 ranks 2 apart inside one 8-GPU node), seq 2048:
// each rank holds 512 rows and 48 heads. K and V per rank: 2 bytes x 512 x (2 x 48 x 128) =
// 12,582,912 bytes; one hop on NVLink (alpha 5 us, 300 GB/s): 5e-6 + 12582912 / 300e9 = 46.943 us.
core::Scenario cp4() {
  auto s = testing::gpt3_1024();
  s.parallel.tp = 2;
  s.parallel.cp = 4;
  s.parallel.dp = 8;
  return s;
}
constexpr double kKv = 12582912.0;
constexpr double kHop = 5e-6 + kKv / 300e9;

CpKernels by_hand(double f0, double f, double b0, double b) {
  CpKernels k;
  k.steps = 4;
  k.first.forward_s = f0, k.first.backward_s = b0;
  k.later.forward_s = f, k.later.backward_s = b;
  return k;
}
}  // namespace

TEST_CASE("context parallel: K/V bytes follow kv heads, head_dim and MLA", "[analytic][cp]") {
  auto s = cp4();
  CHECK(cp_kv_bytes(s) == Approx(kKv).epsilon(1e-12));
  s.model.kv_heads = 8;  // GQA: 8 kv heads over tp 2 = 4 a rank: 2 x 512 x 2 x 4 x 128
  CHECK(cp_kv_bytes(s) == Approx(2.0 * 512 * 2 * 4 * 128).epsilon(1e-12));
  s.model.attention_head_dim = 256;  // an explicit head_dim doubles it
  CHECK(cp_kv_bytes(s) == Approx(2.0 * 512 * 2 * 4 * 256).epsilon(1e-12));
  s.model.mla = core::MlaSpec{1536, 512, 128, 64, 128};  // the up-projected heads: 48 x (192 + 128)
  CHECK(cp_kv_bytes(s) == Approx(2.0 * 512 * 48 * (192 + 128)).epsilon(1e-12));
}

TEST_CASE("context parallel: ring attention hides each hop behind one step's kernel", "[analytic][cp]") {
  auto s = cp4();
  s.training.cp_comm = core::CpComm::p2p;
  // Forward, kernels 30 us (step 0) and 60 us (later): 3 hops of 46.943 us; the first hides 30 of
  // its 46.943, the next two hide whole: hidden 30 + 2 x 46.943 = 123.887 us, exposed 16.943 us.
  const CpExchange x = cp_exchange(s, step_groups(s), by_hand(30e-6, 60e-6, 100e-6, 80e-6));
  CHECK(x.forward_s == Approx(3 * kHop).epsilon(1e-12));
  CHECK(x.forward_window_s == Approx(30e-6 + 2 * kHop).epsilon(1e-12));
  CHECK(x.forward_s - x.forward_window_s == Approx(kHop - 30e-6).epsilon(1e-9));
  // Backward, kernels 100 us and 80 us: 3 K/V hops and 4 gradient hops. Step 0 hides its K/V hop;
  // steps 1 and 2 each carry a K/V hop and a gradient hop (93.887 us) beside 80 us, 13.887 us out
  // each; step 3 hides the gradient hop of step 2; the last gradient hop goes home alone:
  // exposed 46.943 + 2 x 13.887 = 74.716 us.
  CHECK(x.backward_s == Approx(7 * kHop).epsilon(1e-12));
  CHECK(x.backward_s - x.backward_window_s == Approx(kHop + 2 * (2 * kHop - 80e-6)).epsilon(1e-9));
  CHECK(x.forward_bytes == Approx(3 * kKv).epsilon(1e-12));
  CHECK(x.backward_bytes == Approx(7 * kKv).epsilon(1e-12));
  SECTION("a fast link still leaves the hop that cannot hide") {
    // kernels of 1 s: the forward's 3 hops hide whole, so they run beside the whole span, 4 s
    const CpExchange y = cp_exchange(s, step_groups(s), by_hand(1, 1, 1, 1));
    CHECK(y.forward_window_s == Approx(4).epsilon(1e-12));
    CHECK(y.backward_s - y.backward_window_s == Approx(kHop).epsilon(1e-9));
  }
  SECTION("full recompute repeats the forward's exchange in the backward") {
    s.training.recompute = core::Recompute::full;
    const CpExchange y = cp_exchange(s, step_groups(s), by_hand(30e-6, 60e-6, 100e-6, 80e-6));
    CHECK(y.backward_s == Approx(10 * kHop).epsilon(1e-12));
    CHECK(y.backward_bytes == Approx(10 * kKv).epsilon(1e-12));
  }
}

TEST_CASE("context parallel: allgather gathers once beside the local block", "[analytic][cp]") {
  auto s = cp4();
  s.training.cp_comm = core::CpComm::allgather;
  // all-gather of 4 x 12,582,912 bytes over 4 ranks, as NCCL runs it (ring, Simple, inside the node:
  // tuning.cc's base 8.4 us + 3 NVLink hops of 3.4 us = 18.6 us; the ring's bus bandwidth is the link's
  // 300 GB/s): 18.6e-6 + 3/4 x 50,331,648 / 300e9 = 144.43 us; forward: it hides behind step 0's 30 us
  // only. Backward: gathered again beside step 0's 100 us, then 4 gradient hops (send/recv, the link's
  // 5 us alpha), 3 beside the next step's 80 us, the last exposed.
  // The gradient hops carry fp32 (PyTorch's _cp_options.convert_to_f32): 2 x 12,582,912 bytes,
  // 5e-6 + 25,165,824 / 300e9 = 88.886 us each, so the 3 beside the 80 us kernels leave 8.886 us out
  // each and the last 88.886 us.
  const double ag = (8.4e-6 + 3 * 3.4e-6) + 0.75 * 4 * kKv / 300e9;
  const double grad = 5e-6 + 2 * kKv / 300e9;
  const CpExchange x = cp_exchange(s, step_groups(s), by_hand(30e-6, 60e-6, 100e-6, 80e-6));
  CHECK(x.forward_s == Approx(ag).epsilon(1e-12));
  CHECK(x.forward_window_s == Approx(30e-6).epsilon(1e-12));
  CHECK(x.forward_bytes == Approx(0.75 * 4 * kKv).epsilon(1e-12));
  CHECK(x.backward_s == Approx(ag + 4 * grad).epsilon(1e-12));
  CHECK(x.backward_s - x.backward_window_s == Approx(ag - 100e-6 + 3 * (grad - 80e-6) + grad).epsilon(1e-9));
  CHECK(x.backward_bytes == Approx(0.75 * 4 * kKv + 4 * 2 * kKv).epsilon(1e-12));
}

TEST_CASE("context parallel: overlap.cp false waits on each collective at once", "[analytic][cp]") {
  // torch.compile's traced ring (torchtitan-compile): nothing hides, so the exposed exchange is all
  // of it; the time and bytes are the overlapped method's.
  auto s = cp4();
  for (const auto method : {core::CpComm::p2p, core::CpComm::allgather}) {
    s.training.cp_comm = method;
    s.training.overlap.cp = true;
    const CpExchange on = cp_exchange(s, step_groups(s), by_hand(1, 1, 1, 1));
    s.training.overlap.cp = false;
    const CpExchange off = cp_exchange(s, step_groups(s), by_hand(1, 1, 1, 1));
    CHECK(off.forward_window_s == 0);
    CHECK(off.backward_window_s == 0);
    CHECK(off.forward_s == Approx(on.forward_s).epsilon(1e-12));
    CHECK(off.backward_s == Approx(on.backward_s).epsilon(1e-12));
    CHECK(off.backward_bytes == Approx(on.backward_bytes).epsilon(1e-12));
    CHECK(on.forward_s - on.forward_window_s < 0);  // 1 s kernels: all of it hid
  }
}

TEST_CASE("context parallel: repeated key/value heads are exchanged and attended as every head's", "[analytic][cp]") {
  // Llama-style GQA, 8 kv heads over tp 2: 4 a rank; torchtitan's repeat_kv makes them 48 (heads/tp),
  // so the rank's K and V are GPT-3's 12,582,912 bytes again, and the core's kernels see 48.
  auto s = cp4();
  s.model.kv_heads = 8;
  CHECK(s.attention_kv_heads() == 4);
  CHECK(cp_kv_bytes(s) == Approx(kKv / 12).epsilon(1e-12));
  s.training.repeat_kv = true;
  CHECK(s.attention_kv_heads() == 48);
  CHECK(cp_kv_bytes(s) == Approx(kKv).epsilon(1e-12));
}

TEST_CASE("context parallel: PyTorch's merge and gradient sums move fp32 bytes each step", "[analytic][cp]") {
  // cp 4 of GPT-3 at tp 2: 512 rows x 48 heads x 128 = 3,145,728 output elements a rank. Forward,
  // each later step: read the fp32 running output (4) and the step's bf16 one (2), write fp32 (4):
  // 10 x 3,145,728 = 31,457,280 bytes. Backward, each step: the same for dQ, and for dK and dV
  // (48 kv heads: 3,145,728 elements each) into the fp32 buffer sent on: 10 + 20 = 30 x 3,145,728.
  auto s = cp4();
  s.training.cp_comm = core::CpComm::allgather;
  const double e = 512.0 * 48 * 128;
  CpMergeBytes b = cp_merge_bytes(s);
  CHECK(b.forward == Approx(10 * e).epsilon(1e-12));
  CHECK(b.backward == Approx(30 * e).epsilon(1e-12));
  s.model.kv_heads = 8;  // 4 kv heads a rank: dK and dV are 512 x 4 x 128 elements each
  b = cp_merge_bytes(s);
  CHECK(b.backward == Approx(10 * e + 20 * 512.0 * 4 * 128).epsilon(1e-12));
  s.model.kv_heads = 96;
  SECTION("at the HBM rate, between the ring's kernels: 3 forward merges, 4 backward sums") {
    // A100 80GB: 2039 GB/s x 0.85 = 1733.15 GB/s; forward 31,457,280 / 1733.15e9 = 18.150 us
    const double bw = 2039e9 * 0.85;
    const CpKernels k = cp_attention(s);
    CHECK(k.merge.forward_s == Approx(10 * e / bw).epsilon(1e-12));
    CHECK(k.merge.backward_s == Approx(30 * e / bw).epsilon(1e-12));
    CHECK(k.forward_s() == Approx(k.first.forward_s + 3 * (k.later.forward_s + 10 * e / bw)).epsilon(1e-12));
    CHECK(k.backward_s() == Approx(k.first.backward_s + 3 * k.later.backward_s + 4 * 30 * e / bw).epsilon(1e-12));
  }
  SECTION("Megatron's ring (p2p) is not charged it") {
    s.training.cp_comm = core::CpComm::p2p;
    CHECK(cp_attention(s).merge.forward_s == 0);
  }
}

TEST_CASE("context parallel: the collectives of each method", "[analytic][cp]") {
  auto s = cp4();
  using C = core::Collective;
  s.training.cp_comm = core::CpComm::p2p;
  auto c = cp_collectives(s, step_groups(s));
  REQUIRE(c.size() == 1);
  CHECK(c[0].op == C::send_recv);
  CHECK(c[0].bytes == Approx(kKv).epsilon(1e-12));
  CHECK(c[0].group.ranks == 4);
  s.training.cp_comm = core::CpComm::allgather;
  c = cp_collectives(s, step_groups(s));
  REQUIRE(c.size() == 2);
  CHECK(c[0].op == C::all_gather);
  CHECK(c[0].bytes == Approx(4 * kKv).epsilon(1e-12));
  CHECK(c[1].op == C::send_recv);
  CHECK(c[1].bytes == Approx(2 * kKv).epsilon(1e-12));  // fp32 gradients
  s.training.cp_comm = core::CpComm::a2a;
  c = cp_collectives(s, step_groups(s));
  REQUIRE(c.size() == 1);
  CHECK(c[0].op == C::all_to_all);
  CHECK(c[0].bytes == Approx(6291456.0 + kKv).epsilon(1e-12));  // Q with K and V
}

TEST_CASE("context parallel: Ulysses all-to-alls run serial", "[analytic][cp]") {
  auto s = cp4();
  s.training.cp_comm = core::CpComm::a2a;
  // Q (2 x 512 x 48 x 128 = 6,291,456 bytes) with K and V (12,582,912) in one all-to-all, the
  // output (6,291,456) in another, over 4 ranks: each 5 us + 3/4 x bytes / 300 GB/s; nothing hides.
  const double q = 6291456.0, o = 6291456.0;
  const double t = 5e-6 + 0.75 * (q + kKv) / 300e9 + 5e-6 + 0.75 * o / 300e9;
  const CpExchange x = cp_exchange(s, step_groups(s), cp_attention(s));
  CHECK(x.forward_s == Approx(t).epsilon(1e-12));
  CHECK(x.backward_s == Approx(t).epsilon(1e-12));
  CHECK(x.forward_window_s == 0);
  CHECK(x.backward_window_s == 0);
  CHECK(x.forward_bytes == Approx(0.75 * (q + kKv + o)).epsilon(1e-12));
  // one kernel: the whole 2048-token sequence over 48 / 4 = 12 heads
  int calls = 0;
  const CpKernels k = cp_kernels(s, AttentionShape{1, 48, 48, 128, 512, 2048, true}, [&](const AttentionShape& a) {
    ++calls;
    CHECK(a.heads == 12);
    CHECK(a.seq_q == 2048);
    CHECK(a.seq_k == 2048);
    CHECK(a.causal);
    return AttentionTime{1.0, 2.5};
  });
  CHECK(k.steps == 1);
  CHECK(calls == 1);
}

TEST_CASE("context parallel: the balanced chunking gives every rank 1/c of the causal work", "[analytic][cp]") {
  // Timed by FLOPs alone, the 4 ring kernels of a rank add up to the one-kernel core of 512 query
  // rows against 2048 keys, causal: 4 x 48 x 512 x 2048 x 128 / 2 FLOPs (512 x 1024 query-key pairs
  // a head). Step 0: 512 x 512 causal, 131,072 pairs (1/4); steps 1-3: 512 x 256 or 256 x 512
  // unmasked, 131,072 each (1/4): 4 x 1/4 = 1, the load-balance factor is 1. Contiguous chunks
  // would leave the last rank 0.5 + 3 = 3.5 blocks of 512 x 512 against the mean 2 (factor 1.75).
  auto s = cp4();
  const AttentionShape local{1, 48, 48, 128, 512, 2048, true};
  const CpKernels k = cp_kernels(s, local, [](const AttentionShape& a) {
    return AttentionTime{a.flops(), 2.5 * a.flops()};
  });
  CHECK(k.steps == 4);
  CHECK(k.first.forward_s == Approx(local.flops() / 4).epsilon(1e-12));
  CHECK(k.later.forward_s == Approx(local.flops() / 4).epsilon(1e-12));
  CHECK(k.forward_s() == Approx(local.flops()).epsilon(1e-12));
  CHECK(k.backward_s() == Approx(2.5 * local.flops()).epsilon(1e-12));
  SECTION("the measured shape model charges each block its own rows: more than one kernel") {
    core::AttentionModel m;
    m.rate_flops = 300e12, m.q_Bps = 100e9, m.kv_Bps = 300e9;
    const auto time = [&](const AttentionShape& a) { return AttentionTime{m.time(a, false), m.time(a, true)}; };
    const CpKernels blocks = cp_kernels(s, local, time);
    const double one = m.time(local, false);
    // rows: 2 bytes x 128 = 256 bytes a row; one kernel: 512 query and 2048 key rows a head. The
    // later steps' slower half is all 512 queries against 256 keys (512/100e9 + 256/300e9 against
    // 256/100e9 + 512/300e9), so the blocks read 512 + 3 x 512 query and 512 + 3 x 256 key rows.
    const double extra = 256.0 * 48 * (3 * 512 / 100e9 + (512 + 3 * 256 - 2048) / 300e9);
    CHECK(blocks.forward_s() == Approx(one + extra).epsilon(1e-9));
  }
}

TEST_CASE("context parallel: layer_comm takes the method's exchange", "[analytic][cp]") {
  auto s = cp4();
  const auto c = layer_comm(s, false);
  CHECK(c.cp_bytes_forward == Approx(3 * kKv).epsilon(1e-12));
  CHECK(c.cp_bytes_backward == Approx(7 * kKv).epsilon(1e-12));
  CHECK(c.cp_forward_window_s <= c.cp_forward_s);
  CHECK(c.cp_backward_s - c.cp_backward_window_s >= kHop * (1 - 1e-12));  // the hop that cannot hide
}
