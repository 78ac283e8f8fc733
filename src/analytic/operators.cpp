#include "ptdsim/analytic/operators.hpp"

#include "ptdsim/analytic/context_parallel.hpp"

#include <algorithm>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/analytic/memory_ops.hpp"
#include "ptdsim/core/layer_gemms.hpp"

namespace ptdsim::analytic {
namespace {

using core::Operator;
using core::OperatorKind;
using core::TimeSource;

bool full_width(core::Precision p) { return p == core::Precision::fp32 || p == core::Precision::tf32; }

// Bytes per element of the layer's memory-bound operators, 16-bit tensors (docs/analytic.md): the
// measured classes' own (core::memory_op_bytes) for norms and activations, and for what the tables
// time as separate kernels: Megatron fuses bias, dropout and the residual add into one kernel that
// reads x and the residual and writes the sum and a 1-byte mask (7), its backward reads dy and the
// mask and writes dx (5); the gradients of the two branches are then summed (a residual add's 6).
using Bytes = core::ElementBytes;
constexpr Bytes kDropoutAdd{7, 5};
constexpr Bytes kResidualGradient{0, 6};
constexpr Bytes kPermute{4, 4};  // a token gather (or scatter): read and write each row once
// The weight gradient into the fp32 main gradient (training.fusion.wgrad_accumulation): fused, the
// GEMM's epilogue reads and writes 4 bytes a weight where the tables' rows write 2; separate, an add
// kernel reads the 16-bit gradient and the fp32 main gradient and writes it back (2 + 4 + 4).
constexpr double kFusedAccumulationBytes = 6;
constexpr double kSeparateAccumulationBytes = 10;

// What one layer is timed with: the GpuSpec, the precision of the layer GEMMs and of the GEMMs
// TransformerEngine leaves in 16 bits (attention, router, logits), whether tables are in use, the
// fitted factor on the memory-bound kernels' times (gpu.kernels.overhead.memory_bound_factor), the
// bandwidth of each kind of memory-bound kernel the tables measure, and the framework's fusions.
struct Timing {
  const core::GpuSpec& g;
  core::Precision layer;
  core::Precision wide;
  bool tables;
  double factor;
  double width_bytes;  // 1, or 2 for fp32 / tf32 activations
  KindRates rates;     // valid: the memory-bound operators are timed from their bytes
  core::FusionSpec fusion;
  // the weight gradients accumulate into fp32 main gradients (training.main_grads fp32): how
  core::WgradAccumulation accumulation;
  core::Fp8Recipe recipe;  // which FP8 GEMM kernel each pass runs (fp8_kernel_of)
};

Timing timing(const core::Scenario& s) {
  const auto& g = s.hardware.gpu;
  const auto p = s.training.precision;
  const bool tables = g.kernels != nullptr;
  // TransformerEngine runs the layers' linear GEMMs in FP8; attention, the router and the output
  // layer stay in bf16. The scalar model keeps timing everything at the training precision.
  const core::Precision wide = tables && p == core::Precision::fp8 ? core::Precision::bf16 : p;
  return {g,
          p,
          wide,
          tables,
          tables ? g.memory_bound_factor : 1.0,
          full_width(p) ? 2.0 : 1.0,
          tables ? kind_rates(*g.kernels, s.model.norm, g.tables_hbm_scale()) : KindRates{},
          s.training.fusion,
          s.training.main_grads == core::MainGrads::fp32 ? s.training.fusion.wgrad_accumulation
                                                         : core::WgradAccumulation::none,
          s.training.fp8_recipe};
}

core::OperatorTime op_of(Operator op, OperatorKind kind, double m, double n, double k, double count = 1) {
  core::OperatorTime o;
  o.op = op;
  o.kind = kind;
  o.m = m;
  o.n = n;
  o.k = k;
  o.count = count;
  return o;
}

// Accumulating one weight gradient dW[n,k] into the fp32 main gradient, beyond the GEMM that computes
// it (training.fusion.wgrad_accumulation; docs/analytic.md "Weight gradients into fp32"): fused, the
// epilogue's 6 more bytes a weight; separate, one add kernel of 10 bytes a weight at the pointwise
// kind's measured rate (at least one launch); none, nothing. Only with the tables' rates.
double accumulation_seconds(const Timing& t, core::Precision p, double n, double k) {
  if (!t.rates.valid) return 0;
  switch (t.accumulation) {
    case core::WgradAccumulation::fused: return gemm_epilogue_seconds(t.g, p, n, k, kFusedAccumulationBytes);
    case core::WgradAccumulation::separate: {
      const double rate = t.rates.backward[static_cast<std::size_t>(StreamKind::pointwise)];
      return launch_floor(t.g, kSeparateAccumulationBytes * n * k / rate, TimeSource::model);
    }
    case core::WgradAccumulation::none: break;
  }
  return 0;
}

// A weight GEMM y[m,n] = x[m,k] W^T, `count` of them. With tables its input-gradient GEMM
// dx[m,k] = dy[m,n] W and weight-gradient GEMM dW[n,k] = dy^T x are timed at their own shapes;
// the scalar model gives each the forward's time (equal FLOPs, and its efficiency is symmetric).
// `experts`: the routed experts' grouped GEMM, one host dispatch per local expert (the scalar model
// gives each the host's dispatch floor, compute.hpp expert_gemm_time; the tables' model holds it).
core::OperatorTime gemm_op(const Timing& t, Operator op, core::Precision p, double m, double n, double k,
                           double count = 1, bool experts = false) {
  core::OperatorTime o = op_of(op, OperatorKind::gemm, m, n, k, count);
  if (!t.tables) {
    o.forward_s = o.backward_input_s = o.backward_weight_s =
        experts ? expert_gemm_time(t.g, p, m, n, k, count) : gemm_time(t.g, p, m, n, k, count);
    o.source = TimeSource::scalar_efficiency;
    return o;
  }
  // each pass on the kernel its recipe runs, where the GEMM is in FP8
  const auto kernel = [&](GemmPass pass, double m_, double n_, double k_) {
    const std::optional<core::Fp8Kernel> fp8 =
        p == core::Precision::fp8 ? fp8_kernel_of(t.recipe, pass) : std::nullopt;
    return fp8 ? fp8_gemm_kernel(t.g, *fp8, m_, n_, k_) : gemm_kernel(t.g, p, m_, n_, k_);
  };
  const KernelTime f = kernel(GemmPass::forward, m, n, k);
  const KernelTime b = kernel(GemmPass::input_grad, m, k, n);
  const KernelTime w = kernel(GemmPass::weight_grad, n, k, m);
  // `count` GEMMs (local experts), each at least one launch
  o.forward_s = count * launch_floor(t.g, f.time_s, f.source);
  o.backward_input_s = count * launch_floor(t.g, b.time_s, b.source);
  o.backward_weight_s = count * launch_floor(t.g, w.time_s, w.source);
  o.source = std::max({f.source, b.source, w.source});  // the least direct of the three
  if (op != Operator::router) o.backward_weight_s += count * accumulation_seconds(t, p, n, k);
  return o;
}

// A projection as the framework runs it (core::ProjectionParts): one GEMM, or one per part, each
// reading the whole input again (the GEMMs' own times, which the memory floor of kernel_times
// bounds for the narrow ones), with autograd summing the parts' input gradients after, one
// pointwise kernel reading each and writing the sum: 2 (parts + 1) bytes per input element.
core::OperatorTime projection_op(const Timing& t, Operator op, double m, const core::ProjectionParts& parts, double k) {
  const double n = parts.total();
  if (parts.n == 1) return gemm_op(t, op, t.layer, m, n, k);
  core::OperatorTime o = op_of(op, OperatorKind::gemm, m, n, k);
  for (int i = 0; i < parts.n; ++i) {
    const core::OperatorTime part = gemm_op(t, op, t.layer, m, parts.width[i], k);
    o.forward_s += part.forward_s;
    o.backward_input_s += part.backward_input_s;
    o.backward_weight_s += part.backward_weight_s;
    o.source = std::max(o.source, part.source);
  }
  if (t.rates.valid)
    o.backward_input_s += t.factor * 2 * (parts.n + 1) * m * k /
                          t.rates.backward[static_cast<std::size_t>(StreamKind::pointwise)];
  return o;
}

const core::StreamRate* rate_of(const core::GpuSpec& g, core::MemoryOp op) {
  return g.kernels ? &g.kernels->memory_bound[static_cast<std::size_t>(op)] : nullptr;
}

// A memory-bound operation of class `cls` over rows x width 16-bit elements: at the class's
// measured bandwidth (times the fitted factor), else the scalar model's bytes at hbm_efficiency
// (memory_time: the factor is in already).
core::OperatorTime stream_op(const Timing& t, Operator op, core::MemoryOp cls, Bytes bytes, double rows,
                             double width) {
  core::OperatorTime o = op_of(op, OperatorKind::memory_bound, rows, width, 0);
  const double elements = rows * width;
  const StreamTime st = stream_kernel(t.g, t.tables ? rate_of(t.g, cls) : nullptr, elements,
                                      t.width_bytes * bytes.forward, t.width_bytes * bytes.backward);
  o.source = st.source;
  if (st.source == TimeSource::hbm_efficiency) {
    // the scalar model: bytes of the forward at hbm_efficiency, the backward twice them, each
    // under the factor memory_time applied (not again here)
    o.forward_s = st.forward_s;
    o.backward_input_s = st.backward_s;
    return o;
  }
  o.forward_s = t.factor * st.forward_s;
  o.backward_input_s = t.factor * st.backward_s;
  return o;
}

// A memory-bound operator from the bytes its kernels move (memory_ops.hpp) at the bandwidth the
// tables measure for each kind, times the fitted factor; `width` elements of `rows` rows.
core::OperatorTime bytes_op(const Timing& t, Operator op, const OpBytes& b, double rows, double width,
                            double act_width = -1) {
  core::OperatorTime o = op_of(op, OperatorKind::memory_bound, rows, width, 0);
  const double w = act_width < 0 ? t.width_bytes : act_width;
  o.forward_s = t.factor * pass_seconds(b.forward, t.rates.forward, rows * width, w);
  o.backward_input_s = t.factor * pass_seconds(b.backward, t.rates.backward, rows * width, w);
  o.source = TimeSource::model;
  return o;
}

// Megatron's fused bias-dropout-add at dropout's measured bandwidth, and in the backward the sum of
// the two branches' gradients at residual_add's. The scalar model: 7 bytes forward (read 2 + 2,
// write 2, mask 1) at hbm_efficiency, twice that backward.
core::OperatorTime dropout_add_op(const Timing& t, Operator op, double rows, double width) {
  core::OperatorTime o = stream_op(t, op, core::MemoryOp::dropout, kDropoutAdd, rows, width);
  if (o.source != TimeSource::model) return o;
  const core::OperatorTime sum = stream_op(t, op, core::MemoryOp::residual_add, kResidualGradient, rows, width);
  if (sum.source == TimeSource::model) {
    o.backward_input_s += sum.backward_input_s;
  } else {
    o.source = TimeSource::hbm_efficiency;  // the forward stays measured; say the weaker source
    o.backward_input_s += memory_time(t.g, rows * width * t.width_bytes * kResidualGradient.backward);
  }
  return o;
}

// The FP8 work TransformerEngine adds around the layer's FP8 GEMMs (delayed tensorwise scaling, its
// default recipe; the amax is taken inside the cast): forward, each GEMM input is cast to FP8 with a
// transposed copy for the weight-gradient GEMM (read 2, write 1 + 1: 4 bytes per element), except
// the inputs of QKV and fc1, which the fused norm writes in FP8 (1 byte less) and transposes (read 1,
// write 1): 1 byte more per norm element (`norm_elements`, both norms); backward, each GEMM's output
// gradient is cast and transposed the same way (4 per element of its output). Pointwise kernels.
// The recipe (training.fp8_recipe) sets the bytes per element: delayed 4; current 6 (an amax pass
// reads the tensor first, and the norm can no longer write FP8 itself); blockwise and mxfp8 6
// (each direction quantised in its own pass, scales along rows for the forward GEMM and along columns
// for the weight-gradient GEMM: read 2, write 1, twice; their scales, 4 bytes per 128 or 1 per 32
// elements, are left out); torchao's rowwise 8 (the column-scaled copy made from a transposed 16-bit
// copy), and its backward GEMMs' outputs rescaled after the GEMM, 4 bytes per element of dx[m,k]
// and dW[n,k] (fp8_rescale_bytes).
// Under sequence parallelism QKV's and fc1's inputs are all-gathered first, and so are the output
// gradients of proj and fc2 in the backward. Where the recipe gathers the quantised tensor
// (fp8_gathers_quantized) the cast runs on the rank's own 1/sp of the rows (its bytes less the
// transposed copy's write) and the transposed copy for the weight gradient is made from the
// gathered FP8 tensor (read 1, write 1 per gathered element); the fused norm's transpose moves there
// too. Rowwise casts the gathered 16-bit tensor.
struct CastBytes {
  double forward = 0, backward = 0;
};

// The bytes of the casts above over the layer's FP8 GEMMs, or (`routed_only`) over the routed
// experts' GEMMs alone, which are never gathered over SP and never follow a norm.
CastBytes cast_bytes(const Timing& t, const LayerOps& ops, double norm_elements, double sp,
                     core::Fp8Recipe recipe, int qkv_parts, int fc1_parts, bool routed_only) {
  const double per = fp8_cast_bytes(recipe, t.fusion.fp8_cast);
  const double rescale = fp8_rescale_bytes(recipe);
  const bool norm_fused = !routed_only && t.fusion.norm == core::Fusion::fused && recipe == core::Fp8Recipe::delayed;
  const bool dense = ops.find(Operator::router) == nullptr;
  CastBytes out;
  for (const auto& o : ops) {
    if (o.kind != OperatorKind::gemm || o.op == Operator::router) continue;
    const bool routed = !dense && (o.op == Operator::fc1 || o.op == Operator::fc1_gated || o.op == Operator::fc2);
    if (routed_only && !routed) continue;
    // the fused grouped MLP quantises fc2's input in fc1's epilogue and fc1's output gradient in
    // fc2's input-gradient epilogue (training.fusion.grouped_mlp)
    const bool in_epilogue = routed && t.fusion.grouped_mlp == core::Fusion::fused;
    const bool fc1 = (o.op == Operator::fc1 || o.op == Operator::fc1_gated) && o.count == 1 && dense;
    const bool after_norm = o.op == Operator::qkv || o.op == Operator::q_down || o.op == Operator::kv_down || fc1;
    const bool gathered = sp > 1 && (o.op == Operator::qkv || fc1);
    const double input = in_epilogue && o.op == Operator::fc2 ? 0 : o.m * o.k * o.count;
    const double local = gathered ? input / sp : input;
    if (after_norm && norm_fused)
      out.forward += 2 * (input - local);  // the transpose of the gathered copy, beyond the rank's own rows
    else if (gathered && fp8_gathers_quantized(recipe))
      out.forward += (per - 1) * local + 2 * input;
    else
      out.forward += per * input;
    // the output gradients of the row-parallel GEMMs (proj, fc2) arrive over SP as an all-gather:
    // quantised first on the rank's rows where the recipe gathers FP8, as the inputs above
    const bool row_gathered = sp > 1 && (o.op == Operator::proj || (o.op == Operator::fc2 && o.count == 1 && dense));
    const double grad = in_epilogue && o.op != Operator::fc2 ? 0 : o.m * o.n * o.count;
    if (row_gathered && fp8_gathers_quantized(recipe))
      out.backward += (per - 1) * grad / sp + 2 * grad;
    else
      out.backward += per * grad;
    // (dx once per GEMM the framework runs the projection as)
    const double parts = o.op == Operator::qkv ? qkv_parts : fc1 ? fc1_parts : 1;
    out.backward += rescale * (parts * o.m * o.k + o.n * o.k) * o.count;
  }
  if (norm_fused) out.forward += 2 * norm_elements;  // (QKV's and fc1's, one byte each)
  return out;
}

core::OperatorTime fp8_casts(const Timing& t, const LayerOps& ops, double norm_elements, double sp,
                             core::Fp8Recipe recipe, int qkv_parts, int fc1_parts) {
  const CastBytes b = cast_bytes(t, ops, norm_elements, sp, recipe, qkv_parts, fc1_parts, false);
  core::OperatorTime c = op_of(Operator::fp8_cast, OperatorKind::memory_bound, 0, 0, 0);
  const double rate_f = t.rates.forward[static_cast<std::size_t>(StreamKind::pointwise)];
  const double rate_b = t.rates.backward[static_cast<std::size_t>(StreamKind::pointwise)];
  c.forward_s = t.factor * b.forward / rate_f;
  c.backward_input_s = t.factor * b.backward / rate_b;
  c.source = TimeSource::model;
  return c;
}

// Without tables: the routed experts' casts alone, at hbm_efficiency and times
// gpu.memory_bound_factor, as the rest of the memory-bound work (docs/analytic.md "Memory-bound
// work without tables"). A dense GEMM's casts stay inside the scalar efficiencies, which the
// H100's FP8 runs set with them in.
core::OperatorTime routed_fp8_casts(const Timing& t, const LayerOps& ops, core::Fp8Recipe recipe) {
  const CastBytes b = cast_bytes(t, ops, 0, 1, recipe, 1, 1, true);
  core::OperatorTime c = op_of(Operator::fp8_cast, OperatorKind::memory_bound, 0, 0, 0);
  c.forward_s = memory_time(t.g, b.forward);
  c.backward_input_s = memory_time(t.g, b.backward);
  c.source = TimeSource::hbm_efficiency;
  return c;
}

void add(LayerOps& out, const core::OperatorTime& o) { out.ops[static_cast<std::size_t>(out.count++)] = o; }

// Each pass of an operator (forward, B, W) runs at least one kernel: at least one launch
// (launch_floor), where the tables time it. The fitted overhead is not a kernel. (gemm_op floors
// each of its `count` kernels already; for a GEMM this is a no-op.)
void at_least_one_launch(const Timing& t, core::OperatorTime& o) {
  if (o.kind == OperatorKind::overhead) return;
  for (double* x : {&o.forward_s, &o.backward_input_s, &o.backward_weight_s}) *x = launch_floor(t.g, *x, o.source);
}

// MLA's projections in Megatron-Core (multi_latent_attention.py): the down projections, whole on
// every TP rank, on the rank's own tokens (1/t of them with SP), the latents' norms there too, then
// the column-parallel up projections on all the tokens for this rank's heads. Without q_lora_rank
// the query is one column-parallel projection from h (timed as q_up).
void mla_projections(const Timing& t, const core::ModelSpec& m, double tokens, double tp, double sp, bool by_bytes,
                     LayerOps& out) {
  const core::MlaSpec& l = *m.mla;
  const double h = m.hidden, heads = m.heads, q = l.q_lora_rank, kv = l.kv_lora_rank;
  const double local = tokens / sp;
  if (q > 0) add(out, gemm_op(t, Operator::q_down, t.layer, local, q, h));
  add(out, gemm_op(t, Operator::kv_down, t.layer, local, kv + l.qk_rope_head_dim, h));
  const core::MemoryOp norm = m.norm == core::Norm::rmsnorm ? core::MemoryOp::rmsnorm : core::MemoryOp::layernorm;
  add(out, by_bytes ? bytes_op(t, Operator::latent_norm, norm_bytes(t.fusion.norm), local, q + kv)
                    : stream_op(t, Operator::latent_norm, norm, core::memory_op_bytes(norm), local, q + kv));
  add(out, gemm_op(t, Operator::q_up, t.layer, tokens, heads * l.qk_head_dim() / tp, q > 0 ? q : h));
  add(out, gemm_op(t, Operator::kv_up, t.layer, tokens, heads * (l.qk_nope_head_dim + l.v_head_dim) / tp, kv));
}

}  // namespace

const core::OperatorTime* LayerOps::find(core::Operator op) const {
  for (const auto& o : *this)
    if (o.op == op) return &o;
  return nullptr;
}

static_assert(sizeof(LayerOps) == sizeof(std::array<core::OperatorTime, kMaxLayerOps>) + 2 * sizeof(double),
              "a field was added to LayerOps: reset it in clear()");
void clear(LayerOps& out) {
  // (the operators past `count` are never read: begin() to end() is what a LayerOps holds)
  out.count = 0;
  out.tables = false;
  out.attention_gemm_s = 0;
}

ExpertRows expert_rows(const core::Scenario& s) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  ExpertRows r;
  if (!m.moe) return r;
  const double tokens = s.training.micro_batch * static_cast<double>(s.training.seq_len) / p.cp;
  // with sequence parallelism each rank routes tokens/tp and the expert-TP group gathers etp of
  // those; without, every TP rank holds all the tokens already
  const double rows_in = p.sequence_parallel ? tokens / p.tp * p.expert_tp() : tokens;
  r.local_experts = static_cast<double>(m.moe->experts) / p.ep;
  r.per_expert = rows_in * m.moe->top_k * p.ep / m.moe->experts * s.busiest_expert();
  r.width = static_cast<double>(m.expert_ffn_hidden()) / p.expert_tp();
  return r;
}

double permuted_rows(const core::Scenario& s) {
  if (!s.model.moe) return 0;
  const auto& p = s.parallel;
  const double tokens = s.training.micro_batch * static_cast<double>(s.training.seq_len) / p.cp;
  // token dropping pads every expert's slot to capacity in the first permutation already
  const double cf = s.training.moe.capacity_factor > 0 ? s.busiest_expert() : 1.0;
  const double routed = cf * s.model.moe->top_k * tokens / (p.sequence_parallel ? p.tp : 1.0);
  const ExpertRows r = expert_rows(s);
  const bool sorted = s.training.moe.dispatcher == core::Dispatcher::alltoall && r.local_experts > 1;
  // the received rows as the experts' GEMMs take them: after the expert-TP all-gather, and at the
  // busiest expert's count on every local expert
  return routed + (sorted ? r.per_expert * r.local_experts : 0.0);
}

LayerOps layer_ops(const core::Scenario& s, bool moe_layer) {
  LayerOps out;
  layer_ops(s, moe_layer, out);
  return out;
}

namespace {

// Rotary embeddings on this rank's query and key heads, after the QKV GEMM (the scalar model: the
// fused bytes); MLA ropes its heads' qk_rope_head_dim part and the one shared rope key.
core::OperatorTime rope_op(const Timing& t, const core::ModelSpec& m, double tokens, double tp, double kv_local,
                           bool by_bytes) {
  const double d = m.head_dim();
  const double qk = m.mla ? (m.heads / tp + 1) * m.mla->qk_rope_head_dim : (m.heads / tp + kv_local) * d;
  if (by_bytes) return bytes_op(t, Operator::rope, rope_bytes(t.fusion.rope), tokens, qk);
  core::OperatorTime r = op_of(Operator::rope, OperatorKind::memory_bound, tokens, qk, 0);
  const OpBytes rb = rope_bytes(t.fusion.rope);
  r.forward_s = memory_time(t.g, tokens * qk * t.width_bytes * rb.forward.total());
  r.backward_input_s = memory_time(t.g, tokens * qk * t.width_bytes * rb.backward.total());
  r.source = TimeSource::hbm_efficiency;
  return r;
}

// The attention core over the local heads: s/c query rows of each sequence against all s keys,
// by the attention kernel (with context parallelism's blocks and sliding windows) or, without
// flash attention, two batched GEMMs and the softmax's bytes. Sets out.attention_gemm_s.
core::OperatorTime attention_op(const core::Scenario& s, const Timing& t, LayerOps& out) {
  const auto& m = s.model;
  const double tp = s.parallel.tp, c = s.parallel.cp;
  const double b = s.training.micro_batch, seq = s.training.seq_len;
  AttentionShape a;
  a.batch = b;
  a.heads = m.heads / tp;
  a.kv_heads = s.attention_kv_heads();  // the rank's KV heads, or heads/t where the model repeats them
  // MLA: a head of (d_qk + d_v) / 2, which has the scores' and the weighted sum's FLOPs together
  a.head_dim = m.mla ? (m.qk_head_dim() + m.v_head_dim()) / 2.0 : m.head_dim();
  a.seq_q = seq / c;
  a.seq_k = seq;
  a.causal = true;
  core::OperatorTime att = op_of(Operator::attention, OperatorKind::attention, a.seq_q, a.seq_k, a.head_dim, b * a.heads);
  if (s.training.flash_attention) {
    AttentionTime at = attention_kernel(t.g, t.wide, a, s.training.attention_kernel);
    if (c > 1) {
      // context parallelism runs the core as its method's kernels on blocks (context_parallel.hpp):
      // the same FLOPs, each kernel paying its own query and key/value rows
      const CpKernels k = cp_attention(s);
      at.forward_s = k.forward_s();
      at.backward_s = k.backward_s();
      at.source = std::max(k.first.source, k.later.source);
    }
    out.attention_gemm_s = at.forward_s;
    att.forward_s = at.forward_s;
    att.backward_input_s = at.backward_s;
    att.source = at.source;
    if (const double w = m.windowed_fraction(); w > 0 && m.sliding_window->window < seq) {
      // sliding windows: a windowed layer's queries each against the window's keys, the kernel's
      // skipped blocks (not causal within it); the layer's time is the model's mean over its
      // windowed and full layers (docs/analytic.md "Sliding windows")
      AttentionShape aw = a;
      aw.seq_k = m.sliding_window->window;
      aw.causal = false;
      const AttentionTime win = attention_kernel(t.g, t.wide, aw, s.training.attention_kernel);
      att.forward_s = (1 - w) * at.forward_s + w * win.forward_s;
      att.backward_input_s = (1 - w) * at.backward_s + w * win.backward_s;
      att.source = std::max(at.source, win.source);
      out.attention_gemm_s = att.forward_s;
    }
  } else {
    // explicit scores: two batched GEMMs, then softmax and its dropout as bytes (read 2, write 2,
    // read 2, write 2, mask 1 per score), the backward twice the forward
    const AttentionTime at = attention_gemms(t.g, t.wide, a);
    const double softmax_bytes = 9.0 * m.heads * (seq / c) * seq * b / tp * (full_width(t.layer) ? 2 : 1);
    out.attention_gemm_s = at.forward_s;
    att.forward_s = at.forward_s + memory_time(t.g, softmax_bytes);
    att.backward_input_s = 2 * att.forward_s;
    att.source = at.source;
  }
  return att;
}

// The MLP: the routed experts as grouped GEMMs (with the shared experts beside them) on an MoE
// layer, else the dense fc1 (as `dense_fc1`'s GEMMs), activation and fc2.
void mlp_ops(const core::Scenario& s, const Timing& t, bool moe_layer, double tokens, double sp, bool by_bytes,
             const core::ProjectionParts& dense_fc1, LayerOps& out) {
  const auto& m = s.model;
  const double tp = s.parallel.tp, h = m.hidden;
  const bool swiglu = m.mlp == core::Mlp::swiglu;
  const double mats = swiglu ? 2.0 : 1.0;  // fc1 width multiple
  const core::MemoryOp act = swiglu ? core::MemoryOp::swiglu : core::MemoryOp::gelu;
  const Operator act_op = swiglu ? Operator::swiglu : Operator::gelu;
  const Bytes act_bytes = core::memory_op_bytes(act);
  const OpBytes act_real = swiglu ? swiglu_bytes(t.fusion.activation) : gelu_bytes(t.fusion.activation);
  const auto activation = [&](double rows, double width) {
    return by_bytes ? bytes_op(t, act_op, act_real, rows, width) : stream_op(t, act_op, act, act_bytes, rows, width);
  };
  const Operator fc1 = swiglu ? Operator::fc1_gated : Operator::fc1;
  if (moe_layer) {
    // The routed experts as grouped GEMMs, one per local expert, at the busiest expert's rows
    // (docs/analytic.md "Expert parallelism"): this rank routes tokens/sp; the dispatch brings each
    // local expert top_k * ep / experts of every token of its etp*ep group's ranks.
    const ExpertRows r = expert_rows(s);
    // Without tables the routed experts' memory-bound work moves its own backward bytes, as
    // compute.cpp's scalar sums time it (with tables the tables' bytes are in already).
    const auto routed = [&](core::OperatorTime o, Bytes bytes) {
      if (!t.tables) o.backward_input_s = o.forward_s * bytes.backward / bytes.forward;
      return o;
    };
    add(out, gemm_op(t, Operator::router, t.wide, tokens / sp, m.moe->experts, h));
    const double moved = permuted_rows(s);
    add(out, routed(stream_op(t, Operator::permute, core::MemoryOp::residual_add, kPermute, moved, h), kPermute));
    add(out, gemm_op(t, fc1, t.layer, r.per_expert, mats * r.width, h, r.local_experts, true));
    // under the fused grouped MLP the activation runs in fc1's epilogue and its backward in fc2's
    // (training.fusion.grouped_mlp): shown, at no time of its own
    core::OperatorTime a = routed(activation(r.per_expert * r.local_experts, r.width), act_bytes);
    if (t.fusion.grouped_mlp == core::Fusion::fused) a.forward_s = a.backward_input_s = 0;
    add(out, a);
    add(out, gemm_op(t, Operator::fc2, t.layer, r.per_expert, h, r.width, r.local_experts, true));
    add(out, routed(stream_op(t, Operator::unpermute, core::MemoryOp::residual_add, kPermute, moved, h), kPermute));
    if (m.moe->shared_experts > 0) {
      // the shared experts as one dense MLP of their summed width on every token, split over TP
      // (Megatron-Core's SharedExpertMLP), beside the routed ones
      const double fs = static_cast<double>(m.moe->shared_experts) * m.moe->shared_ffn_hidden;
      core::OperatorTime g1 = gemm_op(t, fc1, t.layer, tokens, mats * fs / tp, h);
      core::OperatorTime a1 = activation(tokens, fs / tp);
      core::OperatorTime g2 = gemm_op(t, Operator::fc2, t.layer, tokens, h, fs / tp);
      g1.op = Operator::shared_fc1;
      a1.op = Operator::shared_activation;
      g2.op = Operator::shared_fc2;
      add(out, g1);
      add(out, a1);
      add(out, g2);
    }
  } else {
    const double f = m.ffn_hidden;
    add(out, projection_op(t, fc1, tokens, dense_fc1, h));
    add(out, activation(tokens, f / tp));
    add(out, gemm_op(t, Operator::fc2, t.layer, tokens, h, f / tp));
  }
}

}  // namespace

void layer_ops(const core::Scenario& s, bool moe_layer, LayerOps& out) {
  const Timing t = timing(s);
  const auto& m = s.model;
  const double tp = s.parallel.tp, c = s.parallel.cp;
  const double sp = s.parallel.sequence_parallel ? tp : 1.0;
  const double b = s.training.micro_batch, seq = s.training.seq_len, tokens = b * seq / c;
  const double h = m.hidden;
  const core::MemoryOp norm = m.norm == core::Norm::rmsnorm ? core::MemoryOp::rmsnorm : core::MemoryOp::layernorm;

  clear(out);
  out.tables = t.tables;
  // norms and dropout-adds run on the full hidden width of the tokens this rank holds (all of
  // them without sequence parallelism, 1/t with it)
  const bool by_bytes = t.rates.valid;
  const auto norm_op = [&](Operator op) {
    return by_bytes ? bytes_op(t, op, norm_bytes(t.fusion.norm), tokens / sp, h)
                    : stream_op(t, op, norm, core::memory_op_bytes(norm), tokens / sp, h);
  };
  const auto dropout_add = [&](Operator op) {
    return by_bytes ? bytes_op(t, op, dropout_add_bytes(t.fusion.dropout_add), tokens / sp, h)
                    : dropout_add_op(t, op, tokens / sp, h);
  };
  add(out, norm_op(Operator::input_norm));
  const bool apart = s.training.fusion.projections_apart();
  const core::ProjectionParts qkv = core::qkv_parts(m, s.parallel.tp, apart);
  const core::ProjectionParts fc1 = core::fc1_parts(m, s.parallel.tp, apart);
  const double kv_local = core::kv_heads_per_rank(m, s.parallel.tp);  // KV heads on this rank
  if (m.mla) {
    mla_projections(t, m, tokens, tp, sp, by_bytes, out);
  } else {
    add(out, projection_op(t, Operator::qkv, tokens, qkv, h));
  }
  if (m.head_qk_norms()) {
    // every local head's query and key, on all the tokens (after the projection's SP gather)
    const double width = static_cast<double>(core::q_width_per_rank(m, s.parallel.tp) + core::kv_width_per_rank(m, s.parallel.tp));
    add(out, by_bytes ? bytes_op(t, Operator::qk_norm, norm_bytes(t.fusion.norm), tokens, width)
                      : stream_op(t, Operator::qk_norm, norm, core::memory_op_bytes(norm), tokens, width));
  }
  if (m.position == core::Position::rope) add(out, rope_op(t, m, tokens, tp, kv_local, by_bytes));
  const core::OperatorTime att = attention_op(s, t, out);
  add(out, att);
  add(out, gemm_op(t, Operator::proj, t.layer, tokens, h, m.attention_out_width() / tp));
  add(out, dropout_add(Operator::attention_dropout_add));
  add(out, norm_op(Operator::mlp_norm));
  mlp_ops(s, t, moe_layer, tokens, sp, by_bytes, fc1, out);
  add(out, dropout_add(Operator::mlp_dropout_add));
  if (by_bytes && t.layer == core::Precision::fp8)
    add(out, fp8_casts(t, out, tokens / sp * h, sp, s.training.fp8_recipe, qkv.n, fc1.n));
  else if (!t.tables && moe_layer && t.layer == core::Precision::fp8)
    add(out, routed_fp8_casts(t, out, s.training.fp8_recipe));

  if (t.tables && t.g.kernel_launch_s > 0)  // (nothing to raise otherwise: the sweep's hot path)
    for (int i = 0; i < out.count; ++i) at_least_one_launch(t, out.ops[static_cast<std::size_t>(i)]);

  if (t.tables && t.g.layer_overhead_s > 0) {
    core::OperatorTime o = op_of(Operator::overhead, OperatorKind::overhead, 0, 0, 0, 1);
    o.forward_s = o.backward_input_s = o.backward_weight_s = t.g.layer_overhead_s;
    o.source = TimeSource::fitted;
    add(out, o);
  }
}

EndOps end_ops(const core::Scenario& s) {
  const Timing t = timing(s);
  const auto& g = s.hardware.gpu;
  const double tp = s.parallel.tp;
  const double sp = s.parallel.sequence_parallel ? tp : 1.0;
  const double tokens = s.training.micro_batch * static_cast<double>(s.training.seq_len) / s.parallel.cp;
  const double sbh = tokens * s.model.hidden;
  const double V = s.model.vocab, h = s.model.hidden;
  EndOps e;

  // embedding: the lookup reads a 16-bit row and writes it, then dropout (read 2, write 2, mask 1)
  // on this rank's share of the tokens; backward, the gradient rows are scattered into the fp32
  // embedding gradient (read 2, read-modify-write 8)
  e.embedding = op_of(core::Operator::embedding, OperatorKind::memory_bound, tokens, h, 0);
  const core::StreamRate* copy = t.tables ? rate_of(g, core::MemoryOp::residual_add) : nullptr;
  const core::StreamRate* dropout = t.tables ? rate_of(g, core::MemoryOp::dropout) : nullptr;
  if (copy && copy->valid() && dropout && dropout->valid()) {
    const double hbm = g.tables_hbm_scale();
    e.embedding.forward_s =
        t.factor * (4 * sbh / copy->forward_Bps + 5 * sbh / sp / dropout->forward_Bps) / hbm;
    e.embedding.backward_weight_s = t.factor * 10 * sbh / copy->backward_Bps / hbm;
    e.embedding.source = TimeSource::model;
  } else {
    e.embedding.forward_s = memory_time(g, 4 * sbh + 5 * sbh / sp);
    e.embedding.backward_weight_s = memory_time(g, 10 * sbh);
    e.embedding.source = TimeSource::hbm_efficiency;
  }

  e.logits = gemm_op(t, core::Operator::logits, t.wide, tokens, V / tp, h);

  // cross-entropy in fp32 over the local vocabulary slice: forward reads the 16-bit logits (2),
  // writes fp32 (4), reads them for the max and the sum (4 + 4); backward reads 4, writes 2, reads 4
  e.cross_entropy = op_of(core::Operator::cross_entropy, OperatorKind::loss, tokens, V / tp, 0);
  const core::StreamRate* ce = t.tables ? &g.kernels->cross_entropy : nullptr;
  if (t.rates.valid) {
    // fp32 work whatever the activations' width
    const core::OperatorTime c = bytes_op(t, core::Operator::cross_entropy,
                                          cross_entropy_bytes(loss_as_run(t.fusion.cross_entropy, s.parallel.tp)),
                                          tokens, V / tp, 1.0);
    e.cross_entropy.forward_s = c.forward_s;
    e.cross_entropy.backward_input_s = c.backward_input_s;
    e.cross_entropy.source = TimeSource::model;
  } else if (ce && ce->valid()) {
    const double logits = tokens * V / tp;
    e.cross_entropy.forward_s = t.factor * core::kCrossEntropyBytes.forward * logits / ce->forward_Bps;
    e.cross_entropy.backward_input_s = t.factor * core::kCrossEntropyBytes.backward * logits / ce->backward_Bps;
    e.cross_entropy.source = TimeSource::model;
  } else {
    e.cross_entropy.forward_s = memory_time(g, 14 * tokens * V / tp);
    e.cross_entropy.backward_input_s = memory_time(g, 10 * tokens * V / tp);
    e.cross_entropy.source = TimeSource::hbm_efficiency;
  }
  if (t.tables && t.g.kernel_launch_s > 0)
    for (core::OperatorTime* o : {&e.embedding, &e.logits, &e.cross_entropy}) at_least_one_launch(t, *o);
  e.mtp = op_of(core::Operator::mtp, OperatorKind::gemm, tokens, V / tp, h, 0);
  if (const double d = s.model.mtp_layers; d > 0) {
    // each module: its projection of [normed h; normed embedding] (2h) to h, column-parallel, then
    // logits through the shared head and one more cross-entropy; their norms are left out
    core::OperatorTime proj = gemm_op(t, core::Operator::mtp, t.layer, tokens, h / tp, 2 * h);
    if (t.tables && t.g.kernel_launch_s > 0) at_least_one_launch(t, proj);
    e.mtp.count = d;
    e.mtp.source = std::max(proj.source, e.logits.source);
    e.mtp.forward_s = d * (proj.forward_s + e.logits.forward_s);
    e.mtp.backward_input_s = d * (proj.backward_input_s + e.logits.backward_input_s);
    e.mtp.backward_weight_s = d * (proj.backward_weight_s + e.logits.backward_weight_s);
    e.cross_entropy.forward_s *= 1 + d;
    e.cross_entropy.backward_input_s *= 1 + d;
    e.cross_entropy.backward_weight_s *= 1 + d;
  }
  return e;
}

}  // namespace ptdsim::analytic
