#include <catch2/catch.hpp>

#include <cmath>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/check.hpp"
#include "../common/round_kernel_tables.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Precision;

namespace {
core::GemmEfficiency row(Precision p, double n, double e) {
  core::GemmEfficiency r;
  r.precision = p;
  r.m = r.n = r.k = n;
  r.efficiency = e;
  return r;
}
}  // namespace

TEST_CASE("analytic: GEMM efficiency from the calibrated table", "[analytic][compute]") {
  auto g = testing::dgx_a100_80g().gpu;
  SECTION("no table: the flat matmul_efficiency") {
    CHECK(matmul_efficiency(g, Precision::bf16, 4096, 4096, 4096) == Approx(0.8).epsilon(1e-12));
  }
  g.matmul_table = {row(Precision::bf16, 1024, 0.4), row(Precision::bf16, 8192, 0.8), row(Precision::fp8, 8192, 0.6)};
  SECTION("linear in log(m n k): 2048^3 lies a third of the way from 1024^3 to 8192^3") {
    CHECK(matmul_efficiency(g, Precision::bf16, 2048, 2048, 2048) == Approx(0.4 + 0.4 / 3).epsilon(1e-12));
  }
  SECTION("clamped outside the table") {
    CHECK(matmul_efficiency(g, Precision::bf16, 64, 64, 64) == Approx(0.4).epsilon(1e-12));
    CHECK(matmul_efficiency(g, Precision::bf16, 65536, 65536, 65536) == Approx(0.8).epsilon(1e-12));
  }
  SECTION("the precision's own rows, else the 16-bit rows") {
    CHECK(matmul_efficiency(g, Precision::fp8, 1024, 1024, 1024) == Approx(0.6).epsilon(1e-12));
    CHECK(matmul_efficiency(g, Precision::fp16, 8192, 8192, 8192) == Approx(0.8).epsilon(1e-12));
  }
}

TEST_CASE("analytic: GEMM and memory-bound times", "[analytic][compute]") {
  const auto g = testing::dgx_a100_80g().gpu;
  // 2 * 8192^3 / (312e12 * 0.8) = 4.4049e-3 s
  CHECK(gemm_time(g, Precision::bf16, 8192, 8192, 8192) == Approx(2.0 * 8192 * 8192 * 8192 / (312e12 * 0.8)).epsilon(1e-12));
  // 1 GB at 2039 GB/s x 0.85 = 0.57698 ms
  CHECK(memory_time(g, 1e9) == Approx(1e9 / (2039e9 * 0.85)).epsilon(1e-12));
}

TEST_CASE("analytic: a fine-grained expert's GEMM without tables pays the host's dispatch floor", "[analytic][compute]") {
  auto g = testing::dgx_a100_80g().gpu;
  g.peak_flops[static_cast<std::size_t>(Precision::fp8)] = 4500e12;  // B200's fp8 peak at its provisional 0.47
  g.matmul_efficiency_by_precision[static_cast<std::size_t>(Precision::fp8)] = 0.47;
  // Qwen3-30B-A3B's fc2 on 8 B200 (ep 8, micro-batch 4): 16 experts of 8192 x 2048 x 768.
  // Alone: 2 * 8192 * 2048 * 768 / (4500e12 * 0.47) = 12.184 us; with the H100 fp8 floor 18.52 us
  // and knee 1.8: 18.52 * (1 + (12.184 / 18.52)^1.8)^(1 / 1.8) = 22.946 us each.
  const double alone = 2.0 * 8192 * 2048 * 768 / (4500e12 * 0.47);
  CHECK(gemm_time(g, Precision::fp8, 8192, 2048, 768) == Approx(alone).epsilon(1e-12));
  CHECK(expert_gemm_time(g, Precision::fp8, 8192, 2048, 768, 16) == Approx(16 * 22.9456e-6).epsilon(1e-4));
  // a large expert GEMM barely feels it: 65536 x 14336 x 4096 (Mixtral-sized), 3.64 ms alone
  const double big = gemm_time(g, Precision::fp8, 65536, 14336, 4096);
  CHECK(expert_gemm_time(g, Precision::fp8, 65536, 14336, 4096, 1) / big == Approx(1.0).epsilon(1e-3));
  // bf16 has its own floor and knee: 19.30 us, 2.587 (A100's 312 TFLOP/s x 0.8, 1024^3: 8.604 us ->
  // 19.30 * (1 + (8.604 / 19.30)^2.587)^(1 / 2.587) = 20.19 us)
  const double small = gemm_time(g, Precision::bf16, 1024, 1024, 1024);
  CHECK(small == Approx(8.6043e-6).epsilon(1e-4));
  CHECK(expert_gemm_time(g, Precision::bf16, 1024, 1024, 1024, 1) ==
        Approx(19.30e-6 * std::pow(1 + std::pow(small / 19.30e-6, 2.587), 1 / 2.587)).epsilon(1e-12));
  CHECK(expert_gemm_time(g, Precision::bf16, 1024, 1024, 1024, 1) == Approx(20.19e-6).epsilon(2e-3));
}

TEST_CASE("analytic: one layer's time splits into forward, B and W", "[analytic][compute]") {
  auto s = testing::gpt3_1024();
  s.hardware.gpu.hbm_Bps = 0;  // GEMMs only: every GEMM at the flat 0.8 of 312 TFLOP/s
  const double rate = 312e12 * 0.8, sq = 2048, h = 12288, t = 8;
  const auto lt = layer_times(s, false);
  // forward: (24 s h^2 + 4 s^2 h) / t FLOPs on one GPU
  const double gemm = 24 * sq * h * h / t / rate, core_t = 4 * sq * sq * h / t / rate;
  CHECK(lt.forward_flops == Approx((24 * sq * h * h + 4 * sq * sq * h) / t).epsilon(1e-12));
  CHECK(lt.forward == Approx(gemm + core_t).epsilon(1e-12));
  CHECK(lt.backward_weight == Approx(gemm).epsilon(1e-12));         // W: weight gradients only
  CHECK(lt.backward_input == Approx(gemm + 2 * core_t).epsilon(1e-12));  // B: the attention core is all B
  CHECK(lt.recompute == Approx(core_t).epsilon(1e-12));             // selective: the attention core
  s.training.recompute = core::Recompute::full;
  CHECK(layer_times(s, false).recompute == Approx(gemm + core_t).epsilon(1e-12));
}

TEST_CASE("analytic: without tables every memory-bound time carries memory_bound_factor, an MoE layer's own work too",
          "[analytic][compute][moe]") {
  auto s = testing::mixtral_like_64(8);  // tp 8 with SP, ep 8, 8 experts top-2, h 4096, ffn 14336, swiglu
  s.parallel.etp = 1;
  // each rank routes 4096 / 8 = 512 tokens; its one local expert gets 512 x 2 x 8 / 8 = 1024 rows
  // of the full ffn 14336: SwiGLU reads 4 and writes 2 bytes an output element forward, reads 6 and
  // writes 4 backward; permute and unpermute read and write each of the top_k copies of the rank's
  // 512 x 4096 once, 2 + 2 bytes, in both passes
  const double act = 1024.0 * 14336, tokens = 2 * 8.0 * 512 * 4096;
  const RoutedBytes routed = routed_elementwise_bytes(s);
  CHECK(routed.forward == Approx(6 * act + tokens).epsilon(1e-12));
  CHECK(routed.backward == Approx(10 * act + tokens).epsilon(1e-12));
  const core::GpuSpec& g = s.hardware.gpu;
  REQUIRE(g.kernels == nullptr);
  REQUIRE(g.memory_bound_factor == 1.0);
  const double bw = g.hbm_Bps * g.hbm_efficiency;
  for (const core::Precision p : {core::Precision::bf16, core::Precision::tf32}) {
    s.training.precision = p;
    const double width = p == core::Precision::tf32 ? 2.0 : 1.0;  // 32-bit tensors move twice the bytes
    // the layer's whole stream (norms, dropout-adds, activation; here the routed work in it), whose
    // backward moves twice its forward bytes but for the routed work's own
    const double moe_bytes = layer_elementwise_bytes(s, true), dense_bytes = layer_elementwise_bytes(s, false);
    CHECK(moe_bytes == Approx(width * (22 * 512.0 * 4096 + routed.forward)).epsilon(1e-12));
    s.hardware.gpu.memory_bound_factor = 1.0;
    const LayerTimes at_one = layer_times(s, true);
    const double dense_one = layer_times(s, false).forward;
    const LayerOps ops_one = layer_ops(s, true);
    s.hardware.gpu.memory_bound_factor = 2.5;
    const LayerTimes at = layer_times(s, true);
    CHECK(at.forward - at_one.forward == Approx(1.5 * moe_bytes / bw).epsilon(1e-9));
    CHECK(at.backward_input - at_one.backward_input ==
          Approx(1.5 * (2 * (moe_bytes - width * routed.forward) + width * routed.backward) / bw).epsilon(1e-9));
    CHECK(at.backward_weight == Approx(at_one.backward_weight).epsilon(1e-12));  // no GEMM moves
    CHECK(layer_times(s, false).forward - dense_one == Approx(1.5 * dense_bytes / bw).epsilon(1e-9));
    // the report's operator table: the routed operators at the same bytes, and the rest 2.5x too
    const LayerOps ops = layer_ops(s, true);
    double f = 0, b = 0;
    for (const core::Operator op : {core::Operator::permute, core::Operator::swiglu, core::Operator::unpermute}) {
      CHECK(ops.find(op)->forward_s == Approx(2.5 * ops_one.find(op)->forward_s).epsilon(1e-12));
      f += ops.find(op)->forward_s;
      b += ops.find(op)->backward_input_s;
    }
    CHECK(f == Approx(2.5 * width * routed.forward / bw).epsilon(1e-9));
    CHECK(b == Approx(2.5 * width * routed.backward / bw).epsilon(1e-9));
    CHECK(ops.find(core::Operator::mlp_norm)->forward_s ==
          Approx(2.5 * ops_one.find(core::Operator::mlp_norm)->forward_s).epsilon(1e-12));
  }
}

TEST_CASE("analytic: memory_time carries memory_bound_factor with or without tables, the optimizer step with it",
          "[analytic][compute]") {
  auto g = testing::mixtral_like_64(8).hardware.gpu;  // the A100 file: no tables
  REQUIRE(g.kernels == nullptr);
  const double bw = g.hbm_Bps * g.hbm_efficiency;
  core::TrainingSpec t;
  const double adam = optimizer_time(g, t, 1e9);
  CHECK(adam == Approx(34e9 / bw).epsilon(1e-12));  // mixed-precision Adam, 34 bytes a parameter
  g.memory_bound_factor = 2.5;
  CHECK(memory_time(g, 1e9) == Approx(2.5e9 / bw).epsilon(1e-12));
  CHECK(optimizer_time(g, t, 1e9) == Approx(2.5 * adam).epsilon(1e-12));
  // with tables the factor is the tables' own (kernels.overhead), on what they time and on their
  // fallback at hbm_efficiency (CP merges, an unfused softmax) alike
  auto h = testing::h100_with_tables().gpu;
  REQUIRE(h.kernels != nullptr);
  h.memory_bound_factor = 2.5;
  CHECK(memory_time(h, 1e9) == Approx(2.5e9 / (h.hbm_Bps * h.hbm_efficiency)).epsilon(1e-12));
}

TEST_CASE("analytic: in FP8 the routed experts' casts are timed without tables, a dense layer's are not",
          "[analytic][compute][moe]") {
  auto s = testing::mixtral_like_64(8);  // as above: one local expert of 1024 rows, h 4096, ffn 14336
  s.parallel.etp = 1;
  s.training.precision = core::Precision::fp8;
  const core::GpuSpec& g = s.hardware.gpu;
  REQUIRE(g.kernels == nullptr);
  const double bw = g.hbm_Bps * g.hbm_efficiency, rows = 1024, h = 4096, f = 14336;
  // fc1 (gated, 2f wide) reads rows x h and fc2 rows x f; in the backward their output gradients
  // are rows x 2f and rows x h. Each cast reads 2 bytes and writes the FP8 copy and its transpose:
  // 4 bytes an element under delayed scaling, 6 under MXFP8 (a pass for each direction), 8 rowwise
  // (plus its 4-byte rescale of dx and dW, 2 GEMMs each)
  struct Case {
    core::Fp8Recipe recipe;
    double per, rescale;
  };
  for (const Case c : {Case{core::Fp8Recipe::delayed, 4, 0}, Case{core::Fp8Recipe::mxfp8, 6, 0},
                       Case{core::Fp8Recipe::rowwise, 8, 4}}) {
    s.training.fp8_recipe = c.recipe;
    const double forward = c.per * rows * (h + f);
    const double backward = c.per * rows * (2 * f + h) + c.rescale * (rows * h + 2 * f * h + rows * f + h * f);
    for (const double factor : {1.0, 2.5}) {
      s.hardware.gpu.memory_bound_factor = factor;
      const LayerOps ops = layer_ops(s, true);
      const core::OperatorTime* casts = ops.find(core::Operator::fp8_cast);
      REQUIRE(casts != nullptr);
      CHECK(casts->forward_s == Approx(factor * forward / bw).epsilon(1e-12));
      CHECK(casts->backward_input_s == Approx(factor * backward / bw).epsilon(1e-12));
      CHECK(casts->backward_weight_s == 0);
    }
    // the step's sums: raising the factor from 1 to 2.5 adds 1.5x the stream's bytes and the casts'
    const RoutedBytes routed = routed_elementwise_bytes(s);
    const double stream = layer_elementwise_bytes(s, true);  // its routed part included
    s.hardware.gpu.memory_bound_factor = 1.0;
    const LayerTimes at_one = layer_times(s, true);
    s.hardware.gpu.memory_bound_factor = 2.5;
    const LayerTimes at = layer_times(s, true);
    CHECK(at.forward - at_one.forward == Approx(1.5 * (stream + forward) / bw).epsilon(1e-9));
    CHECK(at.backward_input - at_one.backward_input ==
          Approx(1.5 * (2 * (stream - routed.forward) + routed.backward + backward) / bw).epsilon(1e-9));
    CHECK(at.backward_weight == Approx(at_one.backward_weight).epsilon(1e-12));
  }
  // a dense layer's casts stay inside the scalar efficiencies; a 16-bit MoE layer has none
  CHECK(layer_ops(s, false).find(core::Operator::fp8_cast) == nullptr);
  s.training.precision = core::Precision::bf16;
  CHECK(layer_ops(s, true).find(core::Operator::fp8_cast) == nullptr);
}

TEST_CASE("analytic: the fused grouped MLP runs the experts' SwiGLU and two of their casts in the GEMMs' epilogues",
          "[analytic][compute][moe]") {
  auto s = testing::mixtral_like_64(8);  // one local expert of 1024 rows, h 4096, ffn 14336, swiglu
  s.parallel.etp = 1;
  s.training.precision = core::Precision::fp8;
  s.training.fp8_recipe = core::Fp8Recipe::mxfp8;
  s.hardware.gpu.memory_bound_factor = 2.0;
  const core::GpuSpec& g = s.hardware.gpu;
  const double bw = g.hbm_Bps * g.hbm_efficiency, rows = 1024, h = 4096, f = 14336;
  const LayerOps eager = layer_ops(s, true);
  const LayerTimes eager_t = layer_times(s, true, eager);
  s.training.fusion.grouped_mlp = core::Fusion::fused;
  const LayerOps fused = layer_ops(s, true);
  const LayerTimes fused_t = layer_times(s, true, fused);
  // SwiGLU: shown, at no time of its own
  CHECK(fused.find(core::Operator::swiglu)->forward_s == 0);
  CHECK(fused.find(core::Operator::swiglu)->backward_input_s == 0);
  CHECK(eager.find(core::Operator::swiglu)->forward_s == Approx(2.0 * 6 * rows * f / bw).epsilon(1e-12));
  // the casts left: fc1's input forward and fc2's output gradient backward, 6 bytes an element
  // each under MXFP8 (fc2's input is quantised in fc1's epilogue, fc1's output gradient in fc2's)
  CHECK(fused.find(core::Operator::fp8_cast)->forward_s == Approx(2.0 * 6 * rows * h / bw).epsilon(1e-12));
  CHECK(fused.find(core::Operator::fp8_cast)->backward_input_s == Approx(2.0 * 6 * rows * h / bw).epsilon(1e-12));
  CHECK(eager.find(core::Operator::fp8_cast)->forward_s == Approx(2.0 * 6 * rows * (h + f) / bw).epsilon(1e-12));
  CHECK(eager.find(core::Operator::fp8_cast)->backward_input_s ==
        Approx(2.0 * 6 * rows * (2 * f + h) / bw).epsilon(1e-12));
  // the step's sums lose exactly the activation (6 bytes forward, 10 backward an output element)
  // and the two casts; the GEMMs do not move
  CHECK(eager_t.forward - fused_t.forward == Approx(2.0 * (6 * rows * f + 6 * rows * f) / bw).epsilon(1e-9));
  CHECK(eager_t.backward_input - fused_t.backward_input ==
        Approx(2.0 * (10 * rows * f + 6 * rows * 2 * f) / bw).epsilon(1e-9));
  CHECK(fused_t.backward_weight == Approx(eager_t.backward_weight).epsilon(1e-12));
  // the stream's routed bytes, which the operators' times replace, do not change with the fusion
  CHECK(routed_elementwise_bytes(s).forward == Approx(6 * rows * f + 2 * 8.0 * 512 * 4096).epsilon(1e-12));
  // under recompute of the MoE block (selective, module moe) the casts rerun with it
  s.training.recompute = core::Recompute::selective;
  s.training.recompute_modules = 1u << static_cast<unsigned>(core::RecomputeModule::moe);
  CHECK(recomputed_share(s, core::Operator::fp8_cast, core::OperatorKind::memory_bound, true) == 1);
  CHECK(recomputed_share(s, core::Operator::fp8_cast, core::OperatorKind::memory_bound, false) == 0);
}

TEST_CASE("analytic: moe_act, shared_experts and layernorm recompute their operators' forward", "[analytic][compute]") {
  using O = core::Operator;
  using K = core::OperatorKind;
  auto s = testing::mixtral_like_64(1);
  s.model.moe->shared_experts = 1;
  s.model.moe->shared_ffn_hidden = 2048;
  s.training.recompute = core::Recompute::selective;
  const auto bit = [](core::RecomputeModule m) { return 1u << static_cast<unsigned>(m); };
  s.training.recompute_modules = bit(core::RecomputeModule::moe_act);
  CHECK(recomputed_share(s, O::swiglu, K::memory_bound, true) == 1);    // the routed experts' activation
  CHECK(recomputed_share(s, O::swiglu, K::memory_bound, false) == 0);   // a dense layer's MLP: "mlp"
  CHECK(recomputed_share(s, O::fc1_gated, K::gemm, true) == 0);
  CHECK(recomputed_share(s, O::shared_activation, K::memory_bound, true) == 0);
  s.training.recompute_modules = bit(core::RecomputeModule::shared_experts);
  for (O op : {O::shared_fc1, O::shared_activation, O::shared_fc2})
    CHECK(recomputed_share(s, op, K::gemm, true) == 1);
  CHECK(recomputed_share(s, O::fc2, K::gemm, true) == 0);
  s.training.recompute_modules = bit(core::RecomputeModule::layernorm);
  CHECK(recomputed_share(s, O::mlp_norm, K::memory_bound, true) == 1);   // the MoE block's own norm
  CHECK(recomputed_share(s, O::mlp_norm, K::memory_bound, false) == 0);  // fused into fc1 in a dense layer
  CHECK(recomputed_share(s, O::input_norm, K::memory_bound, true) == 0); // fused into the QKV GEMM
  s.model = testing::deepseek_v3();
  CHECK(recomputed_share(s, O::input_norm, K::memory_bound, false) == 1); // MLA's, apart
  // the layer's recomputed time is the named operators' forward, nothing else
  s = testing::mixtral_like_64(1);
  s.model.moe->shared_experts = 1;
  s.model.moe->shared_ffn_hidden = 2048;
  s.training.recompute = core::Recompute::selective;
  s.training.recompute_modules = bit(core::RecomputeModule::moe_act) | bit(core::RecomputeModule::shared_experts) |
                                 bit(core::RecomputeModule::layernorm);
  const LayerOps ops = layer_ops(s, true);
  double by_hand = 0;
  for (const core::OperatorTime& o : ops)
    if (o.op == O::swiglu || o.op == O::shared_fc1 || o.op == O::shared_activation || o.op == O::shared_fc2 ||
        o.op == O::mlp_norm)
      by_hand += o.forward_s;
  CHECK(by_hand > 0);
  CHECK(layer_times(s, true).recompute == Approx(by_hand).epsilon(1e-12));
  // and the hardware FLOPs add the shared experts' forward alone: 3 GEMMs of 2 s b h f_s a layer
  const double B = s.training.global_batch, seq = s.training.seq_len;
  CHECK(hardware_flops_per_step(s) - model_flops_per_step(s) ==
        Approx(32 * 3 * 2 * B * seq * 4096 * 2048).epsilon(1e-12));
}

TEST_CASE("analytic: offloaded activations' reloads lengthen the backward only beyond it", "[analytic][compute]") {
  auto s = testing::mixtral_like_64(1);
  s.training.recompute = core::Recompute::none;
  s.training.offload_modules = 1u << static_cast<unsigned>(core::OffloadModule::expert_fc1);
  const double bytes = offload_copy_bytes(s, true, core::Recompute::none);  // 2 x 2sbh = 67 MB
  s.hardware.host.link_Bps = 1e15;  // a copy far shorter than either pass: hidden
  const LayerTimes plain = layer_times(s, true);
  s.training.offload_modules = 0;
  const LayerTimes none = layer_times(s, true);
  CHECK(plain.forward == Approx(none.forward).epsilon(1e-12));
  CHECK(plain.backward_input == Approx(none.backward_input).epsilon(1e-12));
  // a link so slow that a copy outlasts both passes: the forward does not wait for its copy down,
  // the backward waits for the reload it needs
  s.training.offload_modules = 1u << static_cast<unsigned>(core::OffloadModule::expert_fc1);
  s.hardware.host.link_Bps = bytes / 1.0;  // one second a copy
  const LayerTimes slow = layer_times(s, true);
  CHECK(slow.forward == Approx(none.forward).epsilon(1e-12));
  CHECK(slow.backward_input + slow.backward_weight == Approx(1.0).epsilon(1e-12));
  // under MXFP8 fc1 keeps, and the copies move, its quantised input: k·sbh·33/32, not k·2sbh
  s.training.precision = core::Precision::fp8;
  s.training.fp8_recipe = core::Fp8Recipe::mxfp8;
  const double sbh = 4096.0 * 4096;
  CHECK(offload_copy_bytes(s, true, core::Recompute::none) == Approx(2 * sbh * 33 / 32).epsilon(1e-12));
  CHECK(offloaded_activation_bytes(s, true, core::Recompute::none) == Approx(2 * 2 * sbh).epsilon(1e-12));
}

TEST_CASE("analytic: memory-bound bytes of a layer", "[analytic][compute]") {
  auto s = testing::gpt3_1024();  // SP, flash attention, gelu
  const double sbh = 2048.0 * 12288, t = 8;
  // norms 8 sbh + dropout/residual 14 sbh, both /t with SP; gelu 4 s b f / t with f = 4h
  CHECK(layer_elementwise_bytes(s, false) == Approx(22 * sbh / t + 16 * sbh / t).epsilon(1e-12));
  s.training.flash_attention = false;  // plus 9 a s^2 b / t for softmax and its dropout
  CHECK(layer_elementwise_bytes(s, false) == Approx(38 * sbh / t + 9.0 * 96 * 2048 * 2048 / t).epsilon(1e-12));
  // optimizer: Adam 34 bytes per parameter updated, SGD 26
  CHECK(optimizer_step_bytes_per_param(s.training) == 34);
}

TEST_CASE("analytic: the heads' query and key norms (Qwen3's QK-norm), hand-worked", "[analytic][compute]") {
  // tp 8 with SP, h 4096, 32 heads and 8 KV heads of 128, sequence 4096, micro-batch 1: after the
  // QKV projection each rank holds all 4096 tokens of 4 query heads and 1 key head, 640 wide
  auto s = testing::mixtral_like_64(8);
  s.model.moe.reset();
  s.parallel.ep = 1;
  const double tokens = 4096, width = (32 / 8 + 1) * 128;
  const double stream = layer_elementwise_bytes(s, false), saved = layer_activation_bytes(s, false, core::Recompute::selective);
  const double attention = attention_params(s.model);
  s.model.qk_norm = true;
  REQUIRE(core::check(s).empty());
  // the scalar stream: read 2, write 2 an element forward
  CHECK(layer_elementwise_bytes(s, false) - stream == Approx(4 * tokens * width).epsilon(1e-12));
  const LayerOps ops = layer_ops(s, false);
  const core::OperatorTime* qk = ops.find(core::Operator::qk_norm);
  REQUIRE(qk != nullptr);
  CHECK(qk->m == Approx(tokens).epsilon(1e-12));
  CHECK(qk->n == Approx(width).epsilon(1e-12));
  const auto& g = s.hardware.gpu;
  CHECK(qk->forward_s == Approx(4 * tokens * width / (g.hbm_Bps * g.hbm_efficiency)).epsilon(1e-12));
  // memory: the norms keep their inputs, the query (32 x 128) and one key (8 x 128) a token, over tp
  CHECK(layer_activation_bytes(s, false, core::Recompute::selective) - saved ==
        Approx(2 * tokens * (32 * 128 + 8 * 128) / 8).epsilon(1e-12));
  // parameters: an RMSNorm weight of head_dim each, shared by the heads
  CHECK(attention_params(s.model) - attention == Approx(2 * 128).epsilon(1e-12));
  // with tables the operator is a norm at the tables' rates, beside RoPE
  s.hardware = testing::h100_with_tables();
  const LayerOps with_tables = layer_ops(s, false);
  REQUIRE(with_tables.find(core::Operator::qk_norm) != nullptr);
  CHECK(with_tables.find(core::Operator::qk_norm)->forward_s > 0);
}
