#include <catch2/catch.hpp>

#include <memory>

#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/analytic/memory_ops.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "../common/round_kernel_tables.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Fusion;
using core::LossFusion;
using core::Operator;

namespace {
double fwd(const OpBytes& b) { return b.forward.total(); }
double bwd(const OpBytes& b) { return b.backward.total(); }

// The H100's measured rates (hardware/dgx-h100.yaml gpu.kernels, from calibrate/data/h100), each
// stated over its class's nominal bytes.
core::KernelTables h100_rates() {
  core::KernelTables k;
  auto set = [&](core::MemoryOp op, double f, double b) { k.memory_bound[static_cast<std::size_t>(op)] = {f, b}; };
  set(core::MemoryOp::layernorm, 1788.27e9, 826.449e9);
  set(core::MemoryOp::rmsnorm, 1849.67e9, 838.335e9);
  set(core::MemoryOp::gelu, 2830.07e9, 1389.95e9);
  set(core::MemoryOp::swiglu, 1015.59e9, 677.13e9);
  set(core::MemoryOp::dropout, 2314.74e9, 1285.56e9);
  set(core::MemoryOp::residual_add, 2899.15e9, 2891.84e9);
  k.cross_entropy = {1725.55e9, 941.08e9};
  return k;
}
}  // namespace

TEST_CASE("analytic: the bytes of each memory-bound operator per fusion setting (docs/analytic.md's table)",
          "[analytic][memory_ops]") {
  // norm: forward read x, write y; backward eager reads dy and x twice (dx, weight gradient), fused once
  CHECK(fwd(norm_bytes(Fusion::eager)) == 4);
  CHECK(bwd(norm_bytes(Fusion::eager)) == 10);
  CHECK(fwd(norm_bytes(Fusion::fused)) == 4);
  CHECK(bwd(norm_bytes(Fusion::fused)) == 6);
  // SwiGLU per output element: eager silu (4) then the product (6); backward 12 + 6 + the concatenation 8
  CHECK(fwd(swiglu_bytes(Fusion::eager)) == 10);
  CHECK(bwd(swiglu_bytes(Fusion::eager)) == 26);
  CHECK(fwd(swiglu_bytes(Fusion::fused)) == 6);
  CHECK(bwd(swiglu_bytes(Fusion::fused)) == 10);
  CHECK(fwd(gelu_bytes(Fusion::eager)) == 4);
  CHECK(bwd(gelu_bytes(Fusion::fused)) == 6);
  // dropout-add: eager 5 + 6, fused 7; backward 5 + 6 either way
  CHECK(fwd(dropout_add_bytes(Fusion::eager)) == 11);
  CHECK(fwd(dropout_add_bytes(Fusion::fused)) == 7);
  CHECK(bwd(dropout_add_bytes(Fusion::eager)) == 11);
  CHECK(bwd(dropout_add_bytes(Fusion::fused)) == 11);
  // RoPE: 2 + 4 + 4 + 4 + 6 eager, read 2 write 2 fused, each way
  CHECK(fwd(rope_bytes(Fusion::eager)) == 20);
  CHECK(bwd(rope_bytes(Fusion::eager)) == 20);
  CHECK(fwd(rope_bytes(Fusion::fused)) == 4);
  // cross-entropy per logit: eager 6 + 16 and 4 + 12 + 6; Megatron's unfused 6 + 4 + 8 + 8 + 4 + 8 and
  // 8 + 6; fused 2 + 2 + 2 and 4
  CHECK(fwd(cross_entropy_bytes(LossFusion::eager)) == 22);
  CHECK(bwd(cross_entropy_bytes(LossFusion::eager)) == 22);
  CHECK(fwd(cross_entropy_bytes(LossFusion::vocab_parallel)) == 38);
  CHECK(bwd(cross_entropy_bytes(LossFusion::vocab_parallel)) == 14);
  CHECK(fwd(cross_entropy_bytes(LossFusion::fused)) == 6);
  CHECK(bwd(cross_entropy_bytes(LossFusion::fused)) == 4);
  // PyTorch's loss_parallel: 6 + 4 + 8 + 8 + 4 + 8 forward; 4 + 8 + 12 + 8 + 6 backward; itself only
  // where the logits are sharded
  CHECK(fwd(cross_entropy_bytes(LossFusion::loss_parallel)) == 38);
  CHECK(bwd(cross_entropy_bytes(LossFusion::loss_parallel)) == 38);
  CHECK(loss_as_run(LossFusion::loss_parallel, 8) == LossFusion::loss_parallel);
  CHECK(loss_as_run(LossFusion::loss_parallel, 1) == LossFusion::eager);
  CHECK(loss_as_run(LossFusion::vocab_parallel, 1) == LossFusion::vocab_parallel);
}

TEST_CASE("analytic: each kind's bandwidth is its table's rate over the real bytes the measurement moved",
          "[analytic][memory_ops]") {
  const KindRates r = kind_rates(h100_rates(), core::Norm::rmsnorm);
  REQUIRE(r.valid);
  const auto at = [](const std::array<double, kStreamKinds>& a, StreamKind k) { return a[static_cast<std::size_t>(k)]; };
  // every kind streams at 2.2-2.9 TB/s of real traffic on the H100 (3.35 TB/s HBM3):
  // residual_add 2899 and 2892 GB/s (6 bytes each way, as stated)
  CHECK(at(r.forward, StreamKind::pointwise) == Approx(2899.15e9));
  CHECK(at(r.backward, StreamKind::pointwise) == Approx(2891.84e9));
  // rmsnorm backward: 838.3 GB/s over 6 stated bytes = 16 real bytes at 2235.6 GB/s
  CHECK(at(r.backward, StreamKind::norm) == Approx(838.335e9 * 16 / 6));
  CHECK(at(r.backward, StreamKind::norm) == Approx(2235.6e9).epsilon(1e-4));
  // GeLU backward 1390 x 12/6 = 2780 GB/s; dropout backward 1285.6 x 11/5 = 2828 GB/s
  CHECK(at(r.backward, StreamKind::gelu) == Approx(2779.9e9).epsilon(1e-4));
  CHECK(at(r.backward, StreamKind::dropout) == Approx(2828.2e9).epsilon(1e-4));
  // the chunked SwiGLU forward 1015.6 x 10/6 = 1692.7 GB/s (strided halves); backward 677.1 x 38/10 = 2573 GB/s
  CHECK(at(r.forward, StreamKind::swiglu_chunked) == Approx(1692.65e9).epsilon(1e-4));
  CHECK(at(r.backward, StreamKind::swiglu_chunked) == Approx(2573.1e9).epsilon(1e-4));
  // cross-entropy 1725.6 x 22/14 = 2711.6 GB/s forward, 941.1 x 28/10 = 2635.0 GB/s backward
  CHECK(at(r.forward, StreamKind::softmax) == Approx(2711.6e9).epsilon(1e-4));
  CHECK(at(r.backward, StreamKind::softmax) == Approx(2635.0e9).epsilon(1e-4));

  core::KernelTables missing = h100_rates();
  missing.cross_entropy = {};
  CHECK_FALSE(kind_rates(missing, core::Norm::rmsnorm).valid);
}

TEST_CASE("analytic: Llama 3.1 8B's SwiGLU and RMSNorm at seq 8192 from their bytes on the H100",
          "[analytic][memory_ops]") {
  const KindRates r = kind_rates(h100_rates(), core::Norm::rmsnorm);
  // SwiGLU forward over 4096 x 14336 outputs (the 699 us: the eager class rate x the old
  // factor 2.015). Fused: 6 bytes at 2899.15 GB/s = 121.5 us. Eager: 10 bytes at 1692.65 GB/s = 346.9 us.
  const double e = 4096.0 * 14336;
  CHECK(pass_seconds(swiglu_bytes(Fusion::fused).forward, r.forward, e) == Approx(121.5e-6).epsilon(1e-3));
  CHECK(pass_seconds(swiglu_bytes(Fusion::eager).forward, r.forward, e) == Approx(346.9e-6).epsilon(1e-3));
  // RMSNorm backward over 4096 x 4096 (the 242 us): fused 6 bytes at 2235.6 GB/s = 45.0 us;
  // eager 10 bytes = 75.0 us
  const double n = 4096.0 * 4096;
  CHECK(pass_seconds(norm_bytes(Fusion::fused).backward, r.backward, n) == Approx(45.03e-6).epsilon(1e-3));
  CHECK(pass_seconds(norm_bytes(Fusion::eager).backward, r.backward, n) == Approx(75.05e-6).epsilon(1e-3));
  // fp32 activations double every byte
  CHECK(pass_seconds(norm_bytes(Fusion::fused).backward, r.backward, n, 2.0) == Approx(90.06e-6).epsilon(1e-3));
}

TEST_CASE("analytic: the layer follows training.fusion: eager is slower, RoPE appears with rotary models",
          "[analytic][memory_ops]") {
  auto s = testing::gpt3_1024();
  s.hardware = testing::h100_with_tables();
  s.model.position = core::Position::rope;
  s.model.mlp = core::Mlp::swiglu;
  s.model.norm = core::Norm::rmsnorm;
  {  // the H100's memory-bound rates (the round tables' equal rates would make every kind alike)
    auto k = std::make_shared<core::KernelTables>(*s.hardware.gpu.kernels);
    const core::KernelTables h = h100_rates();
    k->memory_bound = h.memory_bound;
    k->cross_entropy = h.cross_entropy;
    s.hardware.gpu.kernels = k;
  }
  const auto sum = [](const LayerOps& ops, Operator op) {
    const auto* o = ops.find(op);
    REQUIRE(o != nullptr);
    return o->forward_s + o->backward_input_s;
  };
  const LayerOps fused = layer_ops(s, false);
  s.training.fusion = {Fusion::eager, Fusion::eager, Fusion::eager, Fusion::eager, Fusion::fused, LossFusion::eager};
  const LayerOps eager = layer_ops(s, false);
  // rope over this rank's q and k heads: 2048 tokens x (96 + 96) heads x 128 / 8 at the pointwise
  // kind's 2899.15 GB/s forward, 2891.84 backward; 4 bytes fused, 20 eager
  const double qk = 2048.0 * (96 + 96) * 128 / 8;
  CHECK(fused.find(Operator::rope)->forward_s == Approx(4 * qk / 2899.15e9));
  CHECK(eager.find(Operator::rope)->forward_s == Approx(20 * qk / 2899.15e9));
  CHECK(eager.find(Operator::rope)->backward_input_s == Approx(20 * qk / 2891.84e9));
  for (Operator op : {Operator::input_norm, Operator::swiglu, Operator::attention_dropout_add, Operator::rope})
    CHECK(sum(eager, op) > sum(fused, op));
  // a learned-position model has no RoPE operator
  s.model.position = core::Position::learned;
  CHECK(layer_ops(s, false).find(Operator::rope) == nullptr);
}

TEST_CASE("analytic: FP8 adds the casts around the layer's FP8 GEMMs", "[analytic][memory_ops]") {
  auto s = testing::gpt3_1024();  // tp 8, SP, 2048 tokens, h 12288, ffn 49152
  s.hardware = testing::h100_with_tables();
  CHECK(layer_ops(s, false).find(Operator::fp8_cast) == nullptr);
  s.training.precision = core::Precision::fp8;
  const LayerOps ops = layer_ops(s, false);
  const auto* c = ops.find(Operator::fp8_cast);
  REQUIRE(c != nullptr);
  // forward: proj's input 2048 x 1536 and fc2's 2048 x 6144 cast and transposed (4 bytes each),
  // QKV's and fc1's inputs written in FP8 by the fused norm and transposed (1 byte more, 256 x 12288
  // each), the transposes made from the gathered FP8 tensor (read 1, write 1 for the 2048 - 256 rows
  // beyond the rank's own, each); at 2 TB/s
  const double forward = 4.0 * 2048 * (1536 + 6144) + 2.0 * 256 * 12288 + 2 * 2.0 * (2048 - 256) * 12288;
  CHECK(c->forward_s == Approx(forward / 2e12));
  // backward: each GEMM's output gradient, 4 bytes: qkv 2048 x 4608 and fc1 2048 x 6144; proj's and
  // fc2's 2048 x 12288, all-gathered over SP, quantised on the rank's 256 rows (4 - 1) and
  // transposed after the gather (2 a gathered element); at 1 TB/s
  const double backward = 4.0 * 2048 * (4608 + 6144) + 2 * (3.0 * 256 * 12288 + 2.0 * 2048 * 12288);
  CHECK(c->backward_input_s == Approx(backward / 1e12));
}

TEST_CASE("analytic: another GPU's tables: GEMM and attention at its sustained clock, memory-bound at its HBM",
          "[analytic][memory_ops]") {
  auto s = testing::gpt3_1024();
  s.hardware = testing::h100_with_tables();
  const LayerOps base = layer_ops(s, false);
  s.hardware.gpu.sustained_clock = 0.8;
  s.hardware.gpu.tables_hbm_Bps = 2 * s.hardware.gpu.hbm_Bps;  // tables from a GPU with twice the HBM
  const LayerOps carried = layer_ops(s, false);
  // a GEMM and the attention core take 1/0.8 as long; a norm twice as long (half the bandwidth)
  CHECK(carried.find(Operator::fc1)->forward_s == Approx(base.find(Operator::fc1)->forward_s / 0.8));
  CHECK(carried.find(Operator::attention)->backward_input_s ==
        Approx(base.find(Operator::attention)->backward_input_s / 0.8));
  CHECK(carried.find(Operator::input_norm)->forward_s == Approx(2 * base.find(Operator::input_norm)->forward_s));
  CHECK(carried.find(Operator::mlp_dropout_add)->backward_input_s ==
        Approx(2 * base.find(Operator::mlp_dropout_add)->backward_input_s));
}

TEST_CASE("analytic: training.fp8_recipe sets the quantise bytes around the FP8 GEMMs", "[analytic][memory_ops]") {
  const auto eager = core::Fusion::eager, fused = core::Fusion::fused;
  CHECK(fp8_cast_bytes(core::Fp8Recipe::delayed, eager) == 4);  // read 2, write the copy and its transpose
  CHECK(fp8_cast_bytes(core::Fp8Recipe::current, eager) == 6);  // an amax pass (read 2) first
  for (auto r : {core::Fp8Recipe::blockwise, core::Fp8Recipe::mxfp8})
    CHECK(fp8_cast_bytes(r, eager) == 6);  // each direction its own pass: read 2, write 1, twice
  // torchao's rowwise: read 2, write the row-scaled FP8 copy 1 and a transposed 16-bit copy 2; then
  // read that copy 2 and write the column-scaled FP8 copy 1 (torchao's roofline_utils.py)
  CHECK(fp8_cast_bytes(core::Fp8Recipe::rowwise, eager) == 8);
  // torch.compile: the producer does the first pass, so its read of the 16-bit tensor goes
  // (fuse_with_prev / fuse_read): the amax, rowwise's first kernel, the first layout of the block
  // recipes; TransformerEngine's delayed casts stay its own kernels
  CHECK(fp8_cast_bytes(core::Fp8Recipe::current, fused) == 4);
  CHECK(fp8_cast_bytes(core::Fp8Recipe::rowwise, fused) == 6);
  CHECK(fp8_cast_bytes(core::Fp8Recipe::blockwise, fused) == 4);
  CHECK(fp8_cast_bytes(core::Fp8Recipe::mxfp8, fused) == 4);
  CHECK(fp8_cast_bytes(core::Fp8Recipe::delayed, fused) == 4);
  // only rowwise rescales its backward GEMMs' outputs after cuBLAS's tensorwise kernel: read 2, write 2
  CHECK(fp8_rescale_bytes(core::Fp8Recipe::rowwise) == 4);
  for (auto r : {core::Fp8Recipe::delayed, core::Fp8Recipe::current, core::Fp8Recipe::blockwise,
                 core::Fp8Recipe::mxfp8})
    CHECK(fp8_rescale_bytes(r) == 0);
  auto s = testing::gpt3_1024();  // tp 8, SP, 2048 tokens, h 12288, ffn 49152
  s.hardware = testing::h100_with_tables();
  s.training.precision = core::Precision::fp8;
  s.training.fp8_recipe = core::Fp8Recipe::current;
  const auto ops = layer_ops(s, false);  // kept: find() points into it
  const auto* c = ops.find(Operator::fp8_cast);
  REQUIRE(c != nullptr);
  // proj's input 2048 x 1536 and fc2's 2048 x 6144 at 6 bytes (the norm no longer writes FP8
  // itself); QKV's and fc1's quantised on the rank's 256 rows before the all-gather (6 less the
  // transposed copy's write: 5) and transposed after it (read 1, write 1 of 2048 x 12288); at 2 TB/s.
  // Every output gradient at 6 bytes, proj's and fc2's gathered ones as the gathered inputs; at 1 TB/s
  CHECK(c->forward_s ==
        Approx((6.0 * 2048 * (1536 + 6144) + 2 * (5.0 * 256 * 12288 + 2.0 * 2048 * 12288)) / 2e12));
  CHECK(c->backward_input_s ==
        Approx((6.0 * 2048 * (4608 + 6144) + 2 * (5.0 * 256 * 12288 + 2.0 * 2048 * 12288)) / 1e12));

  s.training.fp8_recipe = core::Fp8Recipe::rowwise;
  const auto rw = layer_ops(s, false);
  const auto* r = rw.find(Operator::fp8_cast);
  REQUIRE(r != nullptr);
  // forward: every input at 8 bytes, QKV's and fc1's gathered in 16 bits first (2048 rows)
  CHECK(r->forward_s == Approx(8.0 * 2048 * (12288 + 1536 + 12288 + 6144) / 2e12));
  // backward: the output gradients at 8 bytes, then 4 bytes over every dx[m,k] and dW[n,k]:
  // qkv dx 2048 x 12288, dW 4608 x 12288; proj 2048 x 1536, 12288 x 1536; fc1 2048 x 12288,
  // 6144 x 12288; fc2 2048 x 6144, 12288 x 6144; at 1 TB/s
  const double rescaled = 2048.0 * (12288 + 1536 + 12288 + 6144) +
                          (4608.0 * 12288 + 12288.0 * 1536 + 6144.0 * 12288 + 12288.0 * 6144);
  CHECK(r->backward_input_s == Approx((8.0 * 2048 * (4608 + 12288 + 6144 + 12288) + 4.0 * rescaled) / 1e12));

  // current scaling under torch.compile (fusion.fp8_cast fused): 4 bytes where 6 were, the gathered
  // inputs quantised on the rank's rows at 3 (4 less the transposed copy's write)
  s.training.fp8_recipe = core::Fp8Recipe::current;
  s.training.fusion.fp8_cast = core::Fusion::fused;
  const auto cf = layer_ops(s, false);
  const auto* f = cf.find(Operator::fp8_cast);
  REQUIRE(f != nullptr);
  CHECK(f->forward_s ==
        Approx((4.0 * 2048 * (1536 + 6144) + 2 * (3.0 * 256 * 12288 + 2.0 * 2048 * 12288)) / 2e12));
  CHECK(f->backward_input_s ==
        Approx((4.0 * 2048 * (4608 + 6144) + 2 * (3.0 * 256 * 12288 + 2.0 * 2048 * 12288)) / 1e12));
}

TEST_CASE("analytic: the weight gradient into the fp32 main gradient (training.fusion.wgrad_accumulation)",
          "[analytic][memory_ops]") {
  auto s = testing::gpt3_1024();  // tp 8, 2048 tokens, h 12288, ffn 49152
  s.hardware = testing::h100_with_tables();
  const auto weight = [&](core::WgradAccumulation a, core::MainGrads g = core::MainGrads::fp32) {
    s.training.fusion.wgrad_accumulation = a;
    s.training.main_grads = g;
    const auto ops = layer_ops(s, false);  // kept: find() points into it
    return ops.find(Operator::fc1)->backward_weight_s;
  };
  const double none = weight(core::WgradAccumulation::none);
  // fc1's weight gradient dW[6144, 12288]: 48 x 96 = 4608 tiles of 128 x 128 over 132 SMs, 34 full
  // waves and 120 tiles (34 + 0.25 + 0.75 x 120/132 = 34.9318 waves), 75,546,624 outputs; fused, the
  // epilogue reads and writes 4 bytes each where the GEMM writes 2: 6 more at the round model's 4 TB/s
  CHECK(weight(core::WgradAccumulation::fused) - none == Approx(6 * 75546624.0 / 4e12));
  CHECK(weight(core::WgradAccumulation::fused) - none == Approx(113.32e-6).epsilon(1e-4));
  // separate: an add kernel over the 6144 x 12288 weights, read 2 + 4, write 4, at the pointwise
  // kind's backward 1 TB/s: 755 us
  CHECK(weight(core::WgradAccumulation::separate) - none == Approx(10.0 * 6144 * 12288 / 1e12));
  // 16-bit gradients (DeepSpeed) accumulate nothing in fp32, whatever the switch says
  CHECK(weight(core::WgradAccumulation::fused, core::MainGrads::bit16) == none);
  // the forward and the input gradient do not move
  s.training.fusion.wgrad_accumulation = core::WgradAccumulation::none;
  const auto a = layer_ops(s, false);
  s.training.fusion.wgrad_accumulation = core::WgradAccumulation::fused;
  const auto b = layer_ops(s, false);
  CHECK(a.find(Operator::qkv)->forward_s == b.find(Operator::qkv)->forward_s);
  CHECK(a.find(Operator::qkv)->backward_input_s == b.find(Operator::qkv)->backward_input_s);
}

TEST_CASE("analytic: training.fusion.projections eager runs Q, K, V and the gated MLP's two inputs apart",
          "[analytic][memory_ops]") {
  auto s = testing::gpt3_1024();  // tp 8, SP, 2048 tokens, h 12288, 96 heads of 128: 1536 each of q, k, v
  s.hardware = testing::h100_with_tables();
  s.model.mlp = core::Mlp::swiglu;
  const auto& g = s.hardware.gpu;
  const auto fused_ops = layer_ops(s, false);  // kept: find() points into it
  s.training.fusion.projections = Fusion::eager;
  const auto apart_ops = layer_ops(s, false);
  const auto* fused = fused_ops.find(Operator::qkv);
  const auto* apart = apart_ops.find(Operator::qkv);
  REQUIRE((fused != nullptr && apart != nullptr));
  // the same shape reported, 2048 x 4608 x 12288
  CHECK(apart->n == fused->n);
  // three GEMMs of 2048 x 1536 x 12288, each timed alone
  const double part = gemm_kernel(g, core::Precision::bf16, 2048, 1536, 12288).time_s;
  CHECK(apart->forward_s == Approx(3 * part).epsilon(1e-12));
  // backward: three input-gradient GEMMs, then one kernel summing them: read 3 x 2, write 2 bytes
  // of 2048 x 12288, at the pointwise kind's backward 1 TB/s
  const double dx = gemm_kernel(g, core::Precision::bf16, 2048, 12288, 1536).time_s;
  CHECK(apart->backward_input_s == Approx(3 * dx + 8.0 * 2048 * 12288 / 1e12).epsilon(1e-12));
  // the gated MLP's gate and up projections, 2 x (2048 x 6144 x 12288)
  const double half = gemm_kernel(g, core::Precision::bf16, 2048, 6144, 12288).time_s;
  CHECK(apart_ops.find(Operator::fc1_gated)->forward_s == Approx(2 * half).epsilon(1e-12));
  CHECK(fused_ops.find(Operator::fc1_gated)->forward_s ==
        Approx(gemm_kernel(g, core::Precision::bf16, 2048, 12288, 12288).time_s).epsilon(1e-12));
}
