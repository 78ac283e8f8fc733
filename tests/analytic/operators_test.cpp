#include <catch2/catch.hpp>

#include "ptdsim/analytic/breakdown.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/core/layer_gemms.hpp"
#include "../common/round_kernel_tables.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Operator;
using core::OperatorKind;
using core::Precision;
using core::TimeSource;

namespace {
// GPT-3 175B's layer (tp 8, SP, micro-batch 1, seq 2048) on the round tables
core::Scenario gpt3_on_tables() {
  auto s = testing::gpt3_1024();
  s.hardware = testing::h100_with_tables();
  return s;
}
}  // namespace

TEST_CASE("analytic: with kernel tables a layer's times are the sums of its operators", "[analytic][operators]") {
  for (auto recompute : {core::Recompute::none, core::Recompute::selective, core::Recompute::full}) {
    auto s = gpt3_on_tables();
    s.training.recompute = recompute;
    s.hardware.gpu.layer_overhead_s = 30e-6;
    const LayerOps ops = layer_ops(s, false);
    REQUIRE(ops.tables);
    double f = 0, b = 0, w = 0, gemm = 0;
    for (const auto& o : ops) {
      f += o.forward_s;
      b += o.backward_input_s;
      w += o.backward_weight_s;
      if (o.kind == OperatorKind::gemm) gemm += o.forward_s;
    }
    const LayerTimes lt = layer_times(s, false);
    CHECK(lt.forward == Approx(f).epsilon(1e-12));
    CHECK(lt.backward_input == Approx(b).epsilon(1e-12));
    CHECK(lt.backward_weight == Approx(w).epsilon(1e-12));
    CHECK(lt.gemm_forward == Approx(gemm).epsilon(1e-12));
    CHECK(lt.attention_core == ops.find(Operator::attention)->forward_s);
    const double expected = recompute == core::Recompute::none        ? 0.0
                            : recompute == core::Recompute::selective ? lt.attention_core
                                                                      : lt.forward;
    CHECK(lt.recompute == expected);
  }
}

TEST_CASE("analytic: the layer's operators in order, with shapes", "[analytic][operators]") {
  const auto s = gpt3_on_tables();
  const LayerOps ops = layer_ops(s, false);
  const std::vector<Operator> order{Operator::input_norm, Operator::qkv,      Operator::attention,
                                    Operator::proj,       Operator::attention_dropout_add, Operator::mlp_norm,
                                    Operator::fc1,        Operator::gelu,     Operator::fc2,
                                    Operator::mlp_dropout_add};
  REQUIRE(ops.count == static_cast<int>(order.size()));  // no overhead op when layer_overhead_s is 0
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(ops.ops[i].op == order[i]);
  // qkv of GPT-3 under tp 8: 2048 tokens x (12288 + 2 x 12288)/8 x 12288
  const auto* qkv = ops.find(Operator::qkv);
  CHECK(qkv->m == 2048);
  CHECK(qkv->n == 4608);
  CHECK(qkv->k == 12288);
  // a norm on the 2048/8 tokens this rank holds under SP (the tool's default fusion: one pass each
  // way): 4 bytes x 256 x 12288 at 2 TB/s forward = 6.29 us; backward 6 bytes at the norm kind's
  // 1 TB/s x 16/6 (the measured sequence moved 16 bytes where the rate states 6) = 7.08 us
  const auto* norm = ops.find(Operator::input_norm);
  CHECK(norm->forward_s == Approx(4.0 * 256 * 12288 / 2e12).epsilon(1e-12));
  CHECK(norm->backward_input_s == Approx(6.0 * 256 * 12288 / (1e12 * 16 / 6)).epsilon(1e-12));
  // the fused dropout-add: 7 bytes forward at dropout's 2 TB/s; backward dropout's 5 bytes at
  // 1 TB/s x 11/5 plus the residual gradient sum, 6 bytes at 1 TB/s x 6/6
  const auto* add = ops.find(Operator::attention_dropout_add);
  CHECK(add->forward_s == Approx(7.0 * 256 * 12288 / 2e12).epsilon(1e-12));
  CHECK(add->backward_input_s == Approx((5.0 / 2.2 + 6.0) * 256 * 12288 / 1e12).epsilon(1e-12));
}

TEST_CASE("analytic: with tables the backward GEMMs run at their own shapes", "[analytic][operators]") {
  const auto s = gpt3_on_tables();
  const auto& g = s.hardware.gpu;
  const LayerOps ops = layer_ops(s, false);
  const auto* proj = ops.find(Operator::proj);  // y[2048, 12288] = x[2048, 1536] W^T
  CHECK(proj->forward_s == gemm_kernel(g, Precision::bf16, 2048, 12288, 1536).time_s);
  CHECK(proj->backward_input_s == gemm_kernel(g, Precision::bf16, 2048, 1536, 12288).time_s);   // dx = dy W
  // dW = dy^T x, accumulated into the fp32 main gradient (wgrad_accumulation fused, the default): its
  // epilogue's 6 more bytes per weight (docs/analytic.md "Weight gradients into fp32")
  CHECK(proj->backward_weight_s == gemm_kernel(g, Precision::bf16, 12288, 1536, 2048).time_s +
                                       gemm_epilogue_seconds(g, Precision::bf16, 12288, 1536, 6));
  CHECK(proj->source == TimeSource::model);
}

TEST_CASE("analytic: FP8 runs the layer GEMMs in fp8, attention and the logits stay bf16", "[analytic][operators]") {
  auto s = gpt3_on_tables();
  s.training.precision = Precision::fp8;
  const auto& g = s.hardware.gpu;
  const LayerOps ops = layer_ops(s, false);
  CHECK(ops.find(Operator::qkv)->forward_s == gemm_kernel(g, Precision::fp8, 2048, 4608, 12288).time_s);
  core::AttentionShape a;
  a.heads = a.kv_heads = 12;
  a.seq_q = a.seq_k = 2048;
  CHECK(ops.find(Operator::attention)->forward_s == attention_kernel(g, Precision::bf16, a).forward_s);
  // logits: 2048 tokens x 51200/8 x 12288 in bf16
  CHECK(end_ops(s).logits.forward_s == gemm_kernel(g, Precision::bf16, 2048, 6400, 12288).time_s);
}

TEST_CASE("analytic: the layer's attention core follows training.attention_kernel, and evaluate warns when the "
          "file lacks FlashAttention-2's rates", "[analytic][operators]") {
  auto s = gpt3_on_tables();
  core::AttentionShape a;
  a.heads = a.kv_heads = 12;
  a.seq_q = a.seq_k = 2048;
  auto tables = std::make_shared<core::KernelTables>(*s.hardware.gpu.kernels);
  const auto with = [&](core::AttentionKernel k) {
    s.training.attention_kernel = k;
    return layer_ops(s, false).find(Operator::attention)->forward_s;
  };
  const auto warned = [&] {
    for (const auto& w : evaluate(s).warnings)
      if (w.find("attention_flash2") != std::string::npos) return true;
    return false;
  };
  // without FlashAttention-2 rates: the cuDNN table either way, and a warning only when flash2 is asked
  CHECK(with(core::AttentionKernel::flash2) == with(core::AttentionKernel::cudnn));
  s.training.attention_kernel = core::AttentionKernel::flash2;  // (with() leaves whichever ran last)
  CHECK(warned());
  s.training.attention_kernel = core::AttentionKernel::cudnn;
  CHECK_FALSE(warned());
  tables->flash2_forward.rate_flops = tables->attention_forward.rate_flops / 2;
  tables->flash2_backward.rate_flops = tables->attention_backward.rate_flops / 2;
  s.hardware.gpu.kernels = tables;
  CHECK(with(core::AttentionKernel::flash2) ==
        attention_kernel(s.hardware.gpu, Precision::bf16, a, core::AttentionKernel::flash2).forward_s);
  CHECK(with(core::AttentionKernel::flash2) == Approx(2 * with(core::AttentionKernel::cudnn)).epsilon(1e-12));
  s.training.attention_kernel = core::AttentionKernel::flash2;
  CHECK_FALSE(warned());
}

TEST_CASE("analytic: the fitted overhead per layer and the factor on memory-bound work", "[analytic][operators]") {
  auto s = gpt3_on_tables();
  const LayerOps plain = layer_ops(s, false);
  s.hardware.gpu.layer_overhead_s = 50e-6;
  s.hardware.gpu.memory_bound_factor = 2.0;
  const LayerOps fitted = layer_ops(s, false);
  REQUIRE(fitted.count == plain.count + 1);
  const auto* o = fitted.find(Operator::overhead);
  CHECK(o->source == TimeSource::fitted);
  CHECK(o->forward_s == 50e-6);  // one per pass: forward, B, W
  CHECK(o->backward_input_s == 50e-6);
  CHECK(o->backward_weight_s == 50e-6);
  for (int i = 0; i < plain.count; ++i) {
    const auto& a = plain.ops[static_cast<std::size_t>(i)];
    const auto& b = fitted.ops[static_cast<std::size_t>(i)];
    const double factor = a.kind == OperatorKind::memory_bound ? 2.0 : 1.0;  // GEMMs and attention as measured
    CHECK(b.forward_s == Approx(factor * a.forward_s).epsilon(1e-12));
    CHECK(b.backward_input_s == Approx(factor * a.backward_input_s).epsilon(1e-12));
  }
  // the optimizer step too: Adam moves 34 bytes per parameter, 1e9 of them at 2.5 TB/s = 13.6 ms, x 2
  CHECK(optimizer_time(s.hardware.gpu, s.training, 1e9) == Approx(2 * 34e9 / 2.5e12).epsilon(1e-12));
}

TEST_CASE("analytic: PyTorch's loss_parallel moves 38 bytes a logit each way, and is F.cross_entropy on one rank",
          "[analytic][operators]") {
  auto s = gpt3_on_tables();  // tp 8: 2048 x 6400 logits a rank
  s.training.fusion.cross_entropy = core::LossFusion::eager;
  const EndOps eager = end_ops(s);
  s.training.fusion.cross_entropy = core::LossFusion::loss_parallel;
  const EndOps parallel = end_ops(s);
  // the same kind of kernel (the measured cross-entropy's bandwidth), 38 bytes where eager moves 22
  CHECK(parallel.cross_entropy.forward_s == Approx(38.0 / 22 * eager.cross_entropy.forward_s).epsilon(1e-12));
  CHECK(parallel.cross_entropy.backward_input_s ==
        Approx(38.0 / 22 * eager.cross_entropy.backward_input_s).epsilon(1e-12));
  // tp 1: nothing to shard, torchtitan calls F.cross_entropy itself
  s.parallel.tp = 1;
  s.parallel.dp *= 8;
  s.parallel.sequence_parallel = false;
  const EndOps one_rank = end_ops(s);
  s.training.fusion.cross_entropy = core::LossFusion::eager;
  CHECK(one_rank.cross_entropy.forward_s == end_ops(s).cross_entropy.forward_s);
  CHECK(one_rank.cross_entropy.backward_input_s == end_ops(s).cross_entropy.backward_input_s);
}

TEST_CASE("analytic: with tables no pass of an operator is shorter than one kernel launch", "[analytic][operators]") {
  auto s = gpt3_on_tables();
  s.hardware.gpu.layer_overhead_s = 2e-6;  // the fitted overhead is not a kernel: never raised
  const LayerOps plain = layer_ops(s, false);
  const EndOps plain_ends = end_ops(s);
  // a launch above some of GPT-3's passes at tp 8 (the norms' 2048/8 rows: tens of microseconds)
  // and below others (qkv's hundreds)
  const double launch = 40e-6;
  s.hardware.gpu.kernel_launch_s = launch;
  const LayerOps floored = layer_ops(s, false);
  const EndOps ends = end_ops(s);
  REQUIRE(floored.count == plain.count);
  int raised = 0, kept = 0;
  auto check_pass = [&](double before, double after, OperatorKind kind) {
    if (kind == OperatorKind::overhead || before == 0) {
      CHECK(after == before);  // no kernel, or not a kernel: no floor
    } else if (before < launch) {
      CHECK(after == launch);
      ++raised;
    } else {
      CHECK(after == before);
      ++kept;
    }
  };
  for (int i = 0; i < plain.count; ++i) {
    const auto& a = plain.ops[static_cast<std::size_t>(i)];
    const auto& b = floored.ops[static_cast<std::size_t>(i)];
    check_pass(a.forward_s, b.forward_s, a.kind);
    check_pass(a.backward_input_s, b.backward_input_s, a.kind);
    check_pass(a.backward_weight_s, b.backward_weight_s, a.kind);
  }
  check_pass(plain_ends.embedding.forward_s, ends.embedding.forward_s, OperatorKind::memory_bound);
  check_pass(plain_ends.cross_entropy.forward_s, ends.cross_entropy.forward_s, OperatorKind::loss);
  CHECK(raised > 0);
  CHECK(kept > 0);
  // the optimizer step of a handful of parameters: one launch, not nanoseconds
  CHECK(optimizer_time(s.hardware.gpu, s.training, 10) == launch);
  // the scalar model (no tables) is fitted end to end and takes no floor
  auto scalar = testing::gpt3_1024();
  const LayerOps before = layer_ops(scalar, false);
  scalar.hardware.gpu.kernel_launch_s = launch;
  const LayerOps after = layer_ops(scalar, false);
  for (int i = 0; i < before.count; ++i)
    CHECK(after.ops[static_cast<std::size_t>(i)].forward_s == before.ops[static_cast<std::size_t>(i)].forward_s);
  CHECK(launch_floor(scalar.hardware.gpu, 1e-9, TimeSource::model) == 1e-9);  // no tables
  CHECK(launch_floor(s.hardware.gpu, 1e-9, TimeSource::model) == launch);
  CHECK(launch_floor(s.hardware.gpu, 1e-9, TimeSource::measured) == launch);
  CHECK(launch_floor(s.hardware.gpu, 0.0, TimeSource::model) == 0.0);  // no kernel
  // times the tables do not give take none, tables or not: fp32 GEMMs at the scalar efficiency,
  // the hbm_efficiency fallbacks
  CHECK(launch_floor(s.hardware.gpu, 1e-9, TimeSource::scalar_efficiency) == 1e-9);
  CHECK(launch_floor(s.hardware.gpu, 1e-9, TimeSource::hbm_efficiency) == 1e-9);
  auto fp32 = s;
  fp32.training.precision = Precision::fp32;
  fp32.hardware.gpu.peak_flops[core::index(Precision::fp32)] = 67e12;
  fp32.hardware.gpu.kernel_launch_s = 1.0;  // above every pass: only what the tables time is raised
  const LayerOps wide = layer_ops(fp32, false);
  const auto* qkv = wide.find(Operator::qkv);
  CHECK(qkv->source == TimeSource::scalar_efficiency);
  CHECK(qkv->forward_s == gemm_time(fp32.hardware.gpu, Precision::fp32, 2048, 4608, 12288));
  CHECK(qkv->forward_s < 1.0);
  CHECK(wide.find(Operator::input_norm)->forward_s == 1.0);  // the norm's table still times it
}

TEST_CASE("analytic: without tables the operators carry the scalar model's times", "[analytic][operators]") {
  const auto s = testing::gpt3_1024();
  const auto& g = s.hardware.gpu;
  const LayerOps ops = layer_ops(s, false);
  CHECK_FALSE(ops.tables);
  const auto* qkv = ops.find(Operator::qkv);
  CHECK(qkv->source == TimeSource::scalar_efficiency);
  CHECK(qkv->forward_s == gemm_time(g, Precision::bf16, 2048, 4608, 12288));
  CHECK(qkv->backward_input_s == qkv->forward_s);
  CHECK(ops.find(Operator::gelu)->source == TimeSource::hbm_efficiency);
  // the memory-bound operators add up to the layer's one stream of bytes (8 + 14 sbh/t + 4 sbf/t)
  double bytes_time = 0;
  for (const auto& o : ops)
    if (o.kind == OperatorKind::memory_bound) bytes_time += o.forward_s;
  CHECK(bytes_time == Approx(memory_time(g, layer_elementwise_bytes(s, false))).epsilon(1e-9));
  CHECK(optimizer_time(g, s.training, 1e9) == memory_time(g, 34e9));
}

TEST_CASE("analytic: the compute breakdown's shares add up to one and follow the work", "[analytic][operators]") {
  auto s = gpt3_on_tables();
  s.hardware.gpu.layer_overhead_s = 20e-6;
  const core::ComputeBreakdown c = compute_breakdown(s, plan_step(s));
  double total = 0;
  for (double v : c.share) total += v;
  CHECK(total == Approx(1.0).epsilon(1e-12));
  CHECK(c.share[static_cast<std::size_t>(OperatorKind::gemm)] > 0.8);  // GPT-3's layer is GEMMs
  CHECK(c.share[static_cast<std::size_t>(OperatorKind::overhead)] > 0);
  CHECK(c.layer.size() == 11);  // ten operators and the overhead
  CHECK(c.moe_layer.empty());
  REQUIRE(c.other.size() == 4);
  CHECK(c.other[0].op == Operator::embedding);
  CHECK(c.other[3].op == Operator::optimizer);
  // the optimizer entry is every stage's step once
  double opt = 0;
  for (const auto& st : plan_step(s).stages) opt += st.optimizer_s;
  CHECK(c.other[3].forward_s == Approx(opt).epsilon(1e-12));
}

TEST_CASE("analytic: with fewer KV heads than TP ranks each rank computes one KV head's copy", "[analytic][operators]") {
  // Llama 3 70B's attention (hidden 8192, 64 heads of 128) with 2 KV heads under tp 8 (core::check
  // refuses this layout for a scenario; the measuring tool lists its shapes, core/layer_gemms.hpp).
  // Each rank: 64/8 = 8 query heads and one copy of a K and a V head, so the QKV GEMM writes
  // (8 + 2) x 128 = 1280 columns, not (8192 + 2 x 256) / 8 = 1088 (a fraction of a KV head); RoPE
  // runs on 8 + 1 heads: 1152 wide; the attention core reads 1 KV head.
  auto s = gpt3_on_tables();
  s.model.hidden = 8192;
  s.model.heads = 64;
  s.model.kv_heads = 2;
  s.model.position = core::Position::rope;
  s.parallel.tp = 8;
  CHECK(core::kv_heads_per_rank(s.model, 8) == 1);
  CHECK(core::qkv_width(s.model, 8) == 1280);
  const LayerOps ops = layer_ops(s, false);
  REQUIRE(ops.find(Operator::qkv));
  CHECK(ops.find(Operator::qkv)->n == 1280);
  CHECK(ops.find(Operator::qkv)->k == 8192);
  REQUIRE(ops.find(Operator::rope));
  CHECK(ops.find(Operator::rope)->n == 1152);
  // where tp divides the KV heads the width is (hidden + 2 kv_heads x head_dim) / tp: 16 of 8 ranks
  s.model.kv_heads = 16;
  CHECK(core::qkv_width(s.model, 8) == (8192 + 2 * 16 * 128) / 8);
  const LayerOps divided = layer_ops(s, false);
  REQUIRE(divided.find(Operator::qkv));
  CHECK(divided.find(Operator::qkv)->n == (8192 + 2 * 16 * 128) / 8);
}

TEST_CASE("analytic: an FP8 layer's GEMMs run each pass on its recipe's kernel where the tables time it",
          "[analytic][operators]") {
  auto s = testing::gpt3_1024();  // tp 8, SP, 2048 tokens a micro-batch, h 12288, ffn 49152
  s.hardware = testing::h100_with_tables();
  s.training.precision = core::Precision::fp8;
  s.training.fp8_recipe = core::Fp8Recipe::current;
  const LayerOps before = layer_ops(s, false);
  auto k = std::make_shared<core::KernelTables>(*s.hardware.gpu.kernels);
  k->fp8_kernels[static_cast<std::size_t>(core::Fp8Kernel::fast_accum)] = testing::round_gemm_model(1900);
  s.hardware.gpu.kernels = k;
  const LayerOps after = layer_ops(s, false);
  const auto& g = s.hardware.gpu;
  // fc1 y[2048, 49152/8] = x[2048, 12288] W^T: forward on the fast-accumulation model, its two
  // gradients still on the tensorwise one
  const auto* f = after.find(Operator::fc1);
  REQUIRE(f != nullptr);
  CHECK(f->forward_s == fp8_gemm_kernel(g, core::Fp8Kernel::fast_accum, 2048, 6144, 12288).time_s);
  CHECK(f->forward_s == testing::round_gemm_model(1900).time(132, 2048, 6144, 12288));
  CHECK(f->forward_s < before.find(Operator::fc1)->forward_s);
  CHECK(f->backward_input_s == before.find(Operator::fc1)->backward_input_s);
  CHECK(f->backward_weight_s == before.find(Operator::fc1)->backward_weight_s);
  // blockwise (not measured here): every pass on the tensorwise kernel, as before the kernels were
  s.training.fp8_recipe = core::Fp8Recipe::blockwise;
  s.hardware.gpu.kernels = testing::round_tables();
  const LayerOps block = layer_ops(s, false);
  CHECK(block.find(Operator::fc1)->forward_s == before.find(Operator::fc1)->forward_s);
  // in bf16 the FP8 kernels are not read
  s.training.precision = core::Precision::bf16;
  s.hardware.gpu.kernels = k;
  CHECK(layer_ops(s, false).find(Operator::fc1)->forward_s ==
        gemm_kernel(g, core::Precision::bf16, 2048, 6144, 12288).time_s);
}
