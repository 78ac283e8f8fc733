#include <catch2/catch.hpp>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/op_checkpoint.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/core/check.hpp"
#include "../common/round_kernel_tables.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Operator;

namespace {
// Llama 3 8B (h 4096, 32 heads, 8 KV heads of 128, SwiGLU 14336) at tp 8 with SP, one sequence of
// 8192 tokens, torchtitan's per-op checkpointing and its separate projections
core::Scenario llama8b_tp8() {
  auto s = testing::gpt3_1024();
  s.model = testing::llama(32, 4096, 32, 8, 14336, 128256);
  s.gpus = 64;
  s.parallel.tp = 8;
  s.parallel.pp = 1;
  s.parallel.dp = 8;
  s.training.seq_len = 8192;
  s.training.global_batch = 8;
  s.training.recompute = core::Recompute::op;
  s.training.fusion.projections = core::Fusion::eager;
  return s;
}
}  // namespace

TEST_CASE("analytic: torchtitan's per-op checkpointing recomputes every second mm", "[analytic][recompute]") {
  auto s = llama8b_tp8();
  SECTION("separate projections: wq wk wv wo w1 w3 w2, the 2nd, 4th and 6th again") {
    const OpCheckpointShares g = op_checkpoint_shares(s);
    CHECK(g.qkv == Approx(128.0 / (512 + 128 + 128)));  // wk of q 512, k 128, v 128 a rank
    CHECK(g.proj == 1);
    CHECK(g.fc1 == Approx(0.5));  // w3 of w1 and w3
    CHECK(g.fc2 == 0);
  }
  SECTION("one QKV and one fc1 GEMM: qkv, proj, fc1, fc2, the 2nd and 4th again") {
    s.training.fusion.projections = core::Fusion::fused;
    const OpCheckpointShares g = op_checkpoint_shares(s);
    CHECK((g.qkv == 0 && g.proj == 1 && g.fc1 == 0 && g.fc2 == 1));
  }
  SECTION("FP8: torchao's linears call torch.mm on Float8Tensors, counted and saved alike") {
    s.training.precision = core::Precision::fp8;
    const OpCheckpointShares g = op_checkpoint_shares(s);
    CHECK((g.qkv == Approx(1.0 / 6) && g.proj == 1 && g.fc1 == Approx(0.5) && g.fc2 == 0));
  }
}

TEST_CASE("analytic: what per-op checkpointing keeps, by hand", "[analytic][recompute][memory]") {
  auto s = llama8b_tp8();
  // the block's input over SP: 2 x 8192 x 4096 / 8; the saved mm outputs wq 512, wv 128, w1 1792
  // a rank and w2's whole 4096 before its reduce-scatter, 2 bytes x 8192 tokens; SDPA's output
  // 2 x 8192 x 4096 / 8 and its fp32 log-sum-exp 4 x 8192 x 4 heads; two reduce-scatter outputs
  const double input = 2.0 * 8192 * 4096 / 8;
  const double mms = 2.0 * 8192 * (512 + 128 + 1792 + 4096);
  const double sdpa = 2.0 * 8192 * 4096 / 8 + 4.0 * 8192 * 4;
  const double rs = 2 * (2.0 * 8192 * 4096 / 8);
  CHECK(op_checkpoint_saved_bytes(s) == Approx(input + mms + sdpa + rs).epsilon(1e-12));
  CHECK(layer_activation_bytes(s, false, s.training.recompute) == op_checkpoint_saved_bytes(s));
  // FP8 the same: the saved mm outputs are 16-bit
  s.training.precision = core::Precision::fp8;
  CHECK(op_checkpoint_saved_bytes(s) == Approx(input + mms + sdpa + rs).epsilon(1e-12));
}

TEST_CASE("analytic: per-op checkpointing's recomputed forward, FLOPs and TP all-gathers", "[analytic][recompute]") {
  auto s = llama8b_tp8();
  s.hardware = testing::h100_with_tables();
  const LayerOps ops = layer_ops(s, false);
  const LayerTimes t = layer_times(s, false, ops);
  double expected = 0;
  for (const auto& o : ops) {
    if (o.kind == core::OperatorKind::attention || o.kind == core::OperatorKind::overhead) continue;
    const double share = o.op == Operator::qkv ? 128.0 / 768 : o.op == Operator::proj ? 1.0
                         : o.op == Operator::fc1_gated ? 0.5 : o.op == Operator::fc2 ? 0.0 : 1.0;
    expected += share * o.forward_s;
  }
  CHECK(t.recompute == Approx(expected).epsilon(1e-12));
  CHECK(t.recompute > 0);
  // FLOPs: per layer 2 x 8192 x 4096 x (1024 wk + 4096 wo + 14336 w3) more than the model's
  const double model = model_flops_per_step(s);
  CHECK(hardware_flops_per_step(s) - model ==
        Approx(s.training.global_batch * 32 * 2.0 * 8192 * 4096 * (1024 + 4096 + 14336)).epsilon(1e-9));
  // the backward all-gathers QKV's and fc1's inputs again (their outputs are not saved): two more
  // all-gathers than without recomputation, the reduce-scatters' outputs saved
  auto none = s;
  none.training.recompute = core::Recompute::none;
  const LayerComm with = layer_comm(s, false), without = layer_comm(none, false);
  CHECK(with.tp_forward_s == without.tp_forward_s);
  CHECK(with.tp_bytes_backward - without.tp_bytes_backward == Approx(2 * 0.875 * 2.0 * 8192 * 4096).epsilon(1e-12));
}

TEST_CASE("core: per-op checkpointing is refused for MoE and MLA models", "[core][recompute]") {
  auto s = testing::mixtral_like_64(1);
  s.training.recompute = core::Recompute::op;
  const auto problems = core::check(s);
  REQUIRE(!problems.empty());
  CHECK(problems.front().key == "training.recompute");
}
