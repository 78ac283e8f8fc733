#include "ptdsim/analytic/compute.hpp"

#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/op_checkpoint.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/core/layer_gemms.hpp"

#include <algorithm>
#include <cmath>

namespace ptdsim::analytic {
namespace {

bool full_width(core::Precision p) { return p == core::Precision::fp32 || p == core::Precision::tf32; }
bool sixteen_bit(core::Precision p) { return p == core::Precision::bf16 || p == core::Precision::fp16; }

// Rows usable for a precision: its own, else (bf16 <-> fp16, and anything else) the 16-bit rows.
bool usable(const core::GemmEfficiency& r, core::Precision p, bool exact) {
  return exact ? r.precision == p : sixteen_bit(r.precision);
}

}  // namespace

double matmul_efficiency(const core::GpuSpec& g, core::Precision p, double m, double n, double k) {
  if (g.matmul_table.empty()) return g.scalar_matmul_efficiency(p);
  bool exact = false;
  for (const auto& r : g.matmul_table) exact = exact || r.precision == p;
  const double x = std::log(std::max(1.0, m * n * k));
  // nearest row at or below x and nearest above it; linear in log(size) between them
  double lo_x = -INFINITY, hi_x = INFINITY, lo_e = 0, hi_e = 0;
  bool any = false;
  for (const auto& r : g.matmul_table) {
    if (!usable(r, p, exact)) continue;
    any = true;
    const double rx = std::log(std::max(1.0, r.m * r.n * r.k));
    if (rx <= x && rx > lo_x) { lo_x = rx; lo_e = r.efficiency; }
    if (rx > x && rx < hi_x) { hi_x = rx; hi_e = r.efficiency; }
  }
  if (!any) return g.scalar_matmul_efficiency(p);
  if (std::isinf(lo_x)) return hi_e;
  if (std::isinf(hi_x)) return lo_e;
  return lo_e + (hi_e - lo_e) * (x - lo_x) / (hi_x - lo_x);
}

double gemm_time(const core::GpuSpec& g, core::Precision p, double m, double n, double k, double count) {
  const double rate = g.peak_flops[core::index(p)] * matmul_efficiency(g, p, m, n, k);
  return rate > 0 ? count * 2 * m * n * k / rate : 0.0;
}

double expert_gemm_time(const core::GpuSpec& g, core::Precision p, double m, double n, double k, double count) {
  // The floor and knee fitted to the H100 kernel tables (calibrate/data/h100, hardware/dgx-h100.yaml
  // gpu.kernels.gemm.model): bf16 t0 = 19.30 us, p = 2.587; fp8 t0 = 18.52 us, p = 1.800. The floor
  // is the host's dispatch of one GEMM (docs/analytic.md "GEMM time by shape"), which a GPU without
  // tables pays as well; its scalar efficiency was fitted on dense layers whose GEMMs lie far above
  // it, while a fine-grained expert's GEMM on Blackwell (e.g. 8192 x 768 x 2048 fp8, 12 us) does not.
  const double one = gemm_time(g, p, m, n, k, 1);
  const bool eight = p == core::Precision::fp8;
  const double t0 = eight ? 18.52e-6 : 19.30e-6, knee = eight ? 1.800 : 2.587;
  if (p == core::Precision::fp32 || p == core::Precision::tf32 || one <= 0) return count * one;
  const double hi = std::max(t0, one), lo = std::min(t0, one);
  return count * hi * std::pow(1 + std::pow(lo / hi, knee), 1 / knee);
}

// Without kernel tables every memory-bound kernel runs at hbm_efficiency over memory_bound_factor
// (hardware.gpu.memory_bound_factor; docs/analytic.md "Memory-bound work without tables"); with
// tables this is the fallback for work they do not time (CP merges, unfused softmax, any class a
// partial table lacks), under the same fitted factor as theirs (kernels.overhead.memory_bound_factor,
// loaded into the same field): one factor on every memory-bound time.
double memory_time(const core::GpuSpec& g, double bytes) {
  const double bw = g.hbm_Bps * g.hbm_efficiency;
  return bw > 0 ? g.memory_bound_factor * bytes / bw : 0.0;
}

// One MoE layer, one GPU, 16-bit tensors: the routed experts' activation over their rows and the
// tokens' permute and unpermute (operators.hpp permuted_rows: the top_k copies of every token, /t
// with SP, and the alltoall dispatcher's second sort; each row read and written once, forward and
// backward: 8 bytes a row element in all), the backward at each class's own bytes
// (core::memory_op_bytes: SwiGLU 6 and 10 an output element, GeLU 4 and 6), as the tables' model times them.
RoutedBytes routed_elementwise_bytes(const core::Scenario& s) {
  const auto& m = s.model;
  const core::ElementBytes act =
      core::memory_op_bytes(m.mlp == core::Mlp::swiglu ? core::MemoryOp::swiglu : core::MemoryOp::gelu);
  const ExpertRows r = expert_rows(s);
  const double rows = r.per_expert * r.local_experts * r.width, tokens = 8 * m.hidden * permuted_rows(s);
  return {act.forward * rows + tokens, act.backward * rows + tokens};
}

// Forward, one layer, one GPU, bytes read + written by the memory-bound kernels (16-bit tensors):
//   two norms: read 2sbh + write 2sbh each                         8 sbh   (/t with SP)
//   two dropout + residual adds: read 2+2, write 2, mask 1         14 sbh  (/t with SP)
//   gelu: read 2sbf, write 2sbf; swiglu: read 4sbf, write 2sbf     (/t)
//   MoE: top_k x the expert activation, plus token permute and unpermute 8 sbh * top_k (/t with SP)
//   softmax without flash attention: read 2, write 2 for the scores, dropout read 2 write 2 mask 1
//                                    = 9 a (s/c) s b                (/t)
//   qk_norm: every local head's query and key, read 2 + write 2    4 sb (a/t + kv_local) d
double layer_elementwise_bytes(const core::Scenario& s, bool moe_layer) {
  const auto& m = s.model;
  const double t = s.parallel.tp, sp = s.parallel.sequence_parallel ? t : 1.0;
  const double b = s.training.micro_batch, seq = s.training.seq_len, local = seq / s.parallel.cp;
  const double sbh = local * b * m.hidden;
  const double act_per_f = m.mlp == core::Mlp::swiglu ? 6.0 : 4.0;
  double bytes = 22 * sbh / sp;
  if (moe_layer) {
    bytes += routed_elementwise_bytes(s).forward;
    if (m.moe->shared_experts > 0)
      bytes += act_per_f * local * b * (static_cast<double>(m.moe->shared_experts) * m.moe->shared_ffn_hidden) / t;
  } else {
    bytes += act_per_f * local * b * m.ffn_hidden / t;
  }
  if (!s.training.flash_attention) bytes += 9.0 * m.heads * local * seq * b / t;
  if (m.mla) bytes += 4.0 * local * b * (m.mla->q_lora_rank + m.mla->kv_lora_rank) / sp;  // the latents' norms
  if (m.head_qk_norms())  // the heads' query and key norms, on all the tokens: read 2, write 2
    bytes += 4.0 * local * b *
             static_cast<double>(core::q_width_per_rank(m, s.parallel.tp) + core::kv_width_per_rank(m, s.parallel.tp));
  return full_width(s.training.precision) ? 2 * bytes : bytes;
}

namespace {

// The scalar model's sums, in today's grouping so that hardware without kernel tables gives the
// same numbers to the last bit: the attention block's GEMMs, then the MLP's (then the router), the
// attention core's GEMMs, and one stream of memory-bound bytes at hbm_efficiency.
LayerTimes scalar_sums(const core::Scenario& s, bool moe_layer, const LayerOps& ops) {
  auto fwd = [&](core::Operator op) {
    const core::OperatorTime* o = ops.find(op);
    return o ? o->forward_s : 0.0;
  };
  const bool swiglu = s.model.mlp == core::Mlp::swiglu;
  double gemm = fwd(core::Operator::qkv) + fwd(core::Operator::proj);
  gemm += fwd(swiglu ? core::Operator::fc1_gated : core::Operator::fc1) + fwd(core::Operator::fc2);
  if (moe_layer) gemm += fwd(core::Operator::router);
  if (s.model.mla)
    gemm += fwd(core::Operator::q_down) + fwd(core::Operator::kv_down) + fwd(core::Operator::q_up) +
            fwd(core::Operator::kv_up);
  if (moe_layer && s.model.moe->shared_experts > 0) gemm += fwd(core::Operator::shared_fc1) + fwd(core::Operator::shared_fc2);
  const double core_gemm = ops.attention_gemm_s;
  // An MoE layer's routed memory-bound work apart: its bytes leave the stream and its operators come
  // in as operators.cpp times them (permute, activation, unpermute and, in FP8, the experts' casts:
  // their own backward bytes, the fused grouped MLP; docs/analytic.md "Memory-bound work without
  // tables"); memory_time carries hardware.gpu.memory_bound_factor into both
  const core::GpuSpec& g = s.hardware.gpu;
  const double width = full_width(s.training.precision) ? 2.0 : 1.0;
  const RoutedBytes routed = moe_layer ? routed_elementwise_bytes(s) : RoutedBytes{};
  const double elementwise = memory_time(g, layer_elementwise_bytes(s, moe_layer) - width * routed.forward);
  double routed_f = 0, routed_b = 0;
  if (moe_layer)
    for (const core::Operator op : {core::Operator::permute, swiglu ? core::Operator::swiglu : core::Operator::gelu,
                                    core::Operator::unpermute, core::Operator::fp8_cast})
      if (const core::OperatorTime* o = ops.find(op)) {
        routed_f += o->forward_s;
        routed_b += o->backward_input_s;
      }
  LayerTimes out;
  out.attention_core = fwd(core::Operator::attention);
  out.gemm_forward = gemm;
  out.forward = gemm + core_gemm + elementwise + routed_f;
  // backward: each weight GEMM has an input-gradient and a weight-gradient GEMM of its own FLOPs;
  // the attention core has no weights, its 2x forward is all input gradient; elementwise work
  // reads the saved tensor and the incoming gradient and writes the outgoing one (2x).
  out.backward_weight = gemm;
  out.backward_input = gemm + 2 * core_gemm + 2 * elementwise + routed_b;
  return out;
}

LayerTimes table_sums(const LayerOps& ops) {
  LayerTimes out;
  for (const auto& o : ops) {
    out.forward += o.forward_s;
    out.backward_input += o.backward_input_s;
    out.backward_weight += o.backward_weight_s;
    if (o.kind == core::OperatorKind::gemm) out.gemm_forward += o.forward_s;
    if (o.kind == core::OperatorKind::attention) out.attention_core += o.forward_s;
  }
  return out;
}

// Forward FLOPs of one layer on one GPU: the weight GEMMs and the attention core's two products.
double layer_forward_flops(const core::Scenario& s, bool moe_layer) {
  const auto& m = s.model;
  const double t = s.parallel.tp, c = s.parallel.cp;
  const double b = s.training.micro_batch, seq = s.training.seq_len, tokens = b * seq / c;
  const double h = m.hidden, q = m.q_width(), kv = m.kv_width(), d = m.head_dim();
  const double mats = m.mlp == core::Mlp::swiglu ? 2.0 : 1.0;
  double flops = 0;
  if (m.mla) {
    // the down projections whole on each rank, over its tokens (1/t of them with SP); the up
    // projections split over TP
    const core::MlaSpec& l = *m.mla;
    const double sp = s.parallel.sequence_parallel ? t : 1.0, heads = m.heads;
    flops = 2 * tokens / sp * h * (l.q_lora_rank + l.kv_lora_rank + l.qk_rope_head_dim) +
            2 * tokens * heads * ((l.q_lora_rank > 0 ? l.q_lora_rank : h) * l.qk_head_dim() +
                                  l.kv_lora_rank * (l.qk_nope_head_dim + l.v_head_dim)) / t;
  } else {
    flops = 2 * tokens * h * (q + 2 * kv) / t;
  }
  flops += 2 * tokens * m.attention_out_width() * h / t;
  if (moe_layer) {
    // the busiest expert's rank's work (the imbalance included: what its GEMMs execute); every
    // token through the shared experts, split over TP as a dense MLP
    const ExpertRows r = expert_rows(s);
    const double sp = s.parallel.sequence_parallel ? t : 1.0;
    flops += 2 * r.per_expert * r.local_experts * (mats + 1) * r.width * h + 2 * tokens / sp * m.moe->experts * h;
    if (m.moe->shared_experts > 0)
      flops += 2 * tokens * (mats + 1) * (static_cast<double>(m.moe->shared_experts) * m.moe->shared_ffn_hidden) * h / t;
  } else {
    flops += 2 * tokens * (mats + 1) * m.ffn_hidden * h / t;
  }
  const double heads = b * m.heads / t;
  if (m.mla || m.attention_head_dim > 0 || m.sliding_window) {
    // the mean over the windowed and the full layers, as the attention's time (operators.cpp)
    const double w = m.windowed_fraction(), window = m.sliding_window ? std::min(seq, 1.0 * m.sliding_window->window) : seq;
    const double keys = (1 - w) * seq + w * window;
    return flops + 2 * heads * (seq / c) * keys * (static_cast<double>(m.qk_head_dim()) + m.v_head_dim());
  }
  return flops + 4 * heads * (seq / c) * seq * d;
}

}  // namespace

LayerTimes layer_times(const core::Scenario& s, bool moe_layer) { return layer_times(s, moe_layer, layer_ops(s, moe_layer)); }

double recomputed_share(const core::Scenario& s, core::Operator op, core::OperatorKind kind, bool moe_layer) {
  using O = core::Operator;
  using M = core::RecomputeModule;
  const core::TrainingSpec& t = s.training;
  if (t.recompute == core::Recompute::full) return 1;
  if (t.recompute == core::Recompute::op) {
    if (kind == core::OperatorKind::attention || kind == core::OperatorKind::overhead) return 0;
    const OpCheckpointShares g = op_checkpoint_shares(s);
    switch (op) {
      case O::qkv: return g.qkv;
      case O::proj: return g.proj;
      case O::fc1: case O::fc1_gated: return g.fc1;
      case O::fc2: return g.fc2;
      default: return 1;  // the memory-bound operators: no output of theirs is saved
    }
  }
  if (t.recompute != core::Recompute::selective) return 0;
  if (kind == core::OperatorKind::attention) return t.recomputes(M::core_attn);
  switch (op) {
    // MLA's up projections and the rotary embedding applied to their output (Megatron-Core's
    // MLASelfAttention qkv_up_checkpoint)
    case O::q_up: case O::kv_up: case O::rope: return t.recomputes(M::mla_up_proj);
    // an MoE layer's MoE block (MoELayer under the "moe" checkpoint): router, dispatch, experts,
    // combine, shared experts; a dense layer's MLP ("mlp")
    case O::router: case O::permute: case O::unpermute: return moe_layer && t.recomputes(M::moe);
    // the shared experts alone ("shared_experts", MoELayer's shared_experts_recompute)
    case O::shared_fc1: case O::shared_activation: case O::shared_fc2:
      return moe_layer && (t.recomputes(M::moe) || t.recomputes(M::shared_experts));
    // without tables the layer's casts are the routed experts' alone (operators.cpp routed_fp8_casts)
    case O::fp8_cast: return moe_layer && !s.hardware.gpu.kernels && t.recomputes(M::moe);
    case O::fc1: case O::fc1_gated: case O::fc2: return moe_layer ? t.recomputes(M::moe) : t.recomputes(M::mlp);
    // the routed experts' activation alone ("moe_act", the experts' CheckpointWithoutOutput)
    case O::gelu: case O::swiglu:
      return moe_layer ? t.recomputes(M::moe) || t.recomputes(M::moe_act) : t.recomputes(M::mlp);
    // "layernorm": the norms Megatron-Core keeps as modules of their own (gpt_layer_specs.py), an
    // MoE layer's pre-MLP norm and MLA's input norm; the others run inside TransformerEngine's
    // LayerNormLinear and are not recomputed
    case O::input_norm: return s.model.mla.has_value() && t.recomputes(M::layernorm);
    case O::mlp_norm: return moe_layer && t.recomputes(M::layernorm);
    default: return 0;
  }
}

LayerTimes layer_times(const core::Scenario& s, bool moe_layer, const LayerOps& ops) {
  LayerTimes out = ops.tables ? table_sums(ops) : scalar_sums(s, moe_layer, ops);
  out.forward_flops = layer_forward_flops(s, moe_layer);
  switch (s.training.recompute) {
    case core::Recompute::none: out.recompute = 0; break;
    case core::Recompute::selective:
      out.recompute = s.training.recomputes(core::RecomputeModule::core_attn) ? out.attention_core : 0.0;
      if (s.training.recompute_modules != 0) {
        // the named modules' operators, their forward once more (the attention core above)
        for (const core::OperatorTime& o : ops)
          if (o.kind != core::OperatorKind::attention)
            out.recompute += recomputed_share(s, o.op, o.kind, moe_layer) * o.forward_s;
      }
      break;
    case core::Recompute::full: out.recompute = out.forward; break;
    case core::Recompute::op:
      for (const core::OperatorTime& o : ops)
        out.recompute += recomputed_share(s, o.op, o.kind, moe_layer) * o.forward_s;
      break;
  }
  // fine-grained activation offloading: the inputs go down on a side stream that the forward does
  // not wait for (the memory is released when the copy ends), and come back one layer ahead of the
  // backward that needs them (Megatron-Core's reload of the next group): a reload longer than the
  // backward it hides behind lengthens it
  if (const double bytes = offload_copy_bytes(s, moe_layer, s.training.recompute); bytes > 0) {
    const double reload = bytes / s.hardware.host.link_Bps;
    out.backward_input += std::max(0.0, reload - (out.backward_input + out.backward_weight + out.recompute));
  }
  return out;
}

EndTimes embedding_times(const core::Scenario& s) {
  return embedding_times(end_ops(s));
}

EndTimes embedding_times(const EndOps& ends) {
  const core::OperatorTime& e = ends.embedding;
  EndTimes out;
  out.forward = e.forward_s;
  out.backward_weight = e.backward_weight_s;
  return out;
}

EndTimes logits_times(const core::Scenario& s) { return logits_times(s, end_ops(s)); }

EndTimes logits_times(const core::Scenario& s, const EndOps& e) {
  const double tokens = s.training.micro_batch * static_cast<double>(s.training.seq_len) / s.parallel.cp;
  EndTimes out;
  out.forward = e.logits.forward_s + e.cross_entropy.forward_s;
  out.backward_input = e.logits.backward_input_s + e.cross_entropy.backward_input_s;
  out.backward_weight = e.logits.backward_weight_s;
  out.forward_flops = 2 * tokens * s.model.hidden * s.model.vocab / s.parallel.tp;
  if (const double d = s.model.mtp_layers; d > 0) {  // the MTP modules' projections and logits
    out.forward += e.mtp.forward_s;
    out.backward_input += e.mtp.backward_input_s;
    out.backward_weight += e.mtp.backward_weight_s;
    out.forward_flops += d * (out.forward_flops + 2 * tokens * 2.0 * s.model.hidden * s.model.hidden / s.parallel.tp);
  }
  return out;
}

double optimizer_time(const core::GpuSpec& g, const core::TrainingSpec& t, double params_updated) {
  const double bytes = optimizer_step_bytes_per_param(t);
  if (g.kernels && g.kernels->optimizer_Bps > 0)
    return launch_floor(g, g.memory_bound_factor * bytes * params_updated / (g.kernels->optimizer_Bps * g.tables_hbm_scale()),
                        core::TimeSource::model);
  return memory_time(g, bytes * params_updated);
}

double optimizer_step_bytes_per_param(const core::TrainingSpec& t) {
  const bool adam = t.optimizer != core::Optimizer::sgd;
  if (full_width(t.precision)) return adam ? 32 : 24;  // w, m, v read+write 8 each, grad 4, zero 4
  // fp32 master, m, v read + write (8 each), fp32 grad read (4), 16-bit weight write (2), grad zero (4)
  return adam ? 34 : 26;
}

}  // namespace ptdsim::analytic
