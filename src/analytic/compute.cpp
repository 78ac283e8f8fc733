#include "ptdsim/analytic/compute.hpp"

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

double memory_time(const core::GpuSpec& g, double bytes) {
  const double bw = g.hbm_Bps * g.hbm_efficiency;
  return bw > 0 ? bytes / bw : 0.0;
}

// Forward, one layer, one GPU, bytes read + written by the memory-bound kernels (16-bit tensors):
//   two norms: read 2sbh + write 2sbh each                         8 sbh   (/t with SP)
//   two dropout + residual adds: read 2+2, write 2, mask 1         14 sbh  (/t with SP)
//   gelu: read 2sbf, write 2sbf; swiglu: read 4sbf, write 2sbf     (/t)
//   MoE: top_k x the expert activation, plus token permute and unpermute 8 sbh * top_k (/t with SP)
//   softmax without flash attention: read 2, write 2 for the scores, dropout read 2 write 2 mask 1
//                                    = 9 a (s/c) s b                (/t)
double layer_elementwise_bytes(const core::Scenario& s, bool moe_layer) {
  const auto& m = s.model;
  const double t = s.parallel.tp, sp = s.parallel.sequence_parallel ? t : 1.0;
  const double b = s.training.micro_batch, seq = s.training.seq_len, local = seq / s.parallel.cp;
  const double sbh = local * b * m.hidden;
  const double act_per_f = m.mlp == core::Mlp::swiglu ? 6.0 : 4.0;
  double bytes = 22 * sbh / sp;
  if (moe_layer) {
    bytes += m.moe->top_k * (act_per_f * local * b * m.expert_ffn_hidden() / t + 8 * sbh / sp);
  } else {
    bytes += act_per_f * local * b * m.ffn_hidden / t;
  }
  if (!s.training.flash_attention) bytes += 9.0 * m.heads * local * seq * b / t;
  return full_width(s.training.precision) ? 2 * bytes : bytes;
}

LayerTimes layer_times(const core::Scenario& s, bool moe_layer) {
  const auto& g = s.hardware.gpu;
  const auto& m = s.model;
  const auto p = s.training.precision;
  const double t = s.parallel.tp, c = s.parallel.cp;
  const double b = s.training.micro_batch, seq = s.training.seq_len, tokens = b * seq / c;
  const double h = m.hidden, kv = h * m.kv_heads / m.heads, d = m.head_dim();
  const double mats = m.mlp == core::Mlp::swiglu ? 2.0 : 1.0;  // fc1 width multiple

  double gemm = gemm_time(g, p, tokens, (h + 2 * kv) / t, h) + gemm_time(g, p, tokens, h, h / t);
  double flops = 2 * tokens * h * (h + 2 * kv) / t + 2 * tokens * h * h / t;
  if (moe_layer) {
    const double experts = m.moe->experts, local = experts / s.parallel.ep, f = m.expert_ffn_hidden();
    const double per_expert = tokens * m.moe->top_k * s.parallel.ep / experts;
    gemm += gemm_time(g, p, per_expert, mats * f / t, h, local) + gemm_time(g, p, per_expert, h, f / t, local);
    gemm += gemm_time(g, p, tokens, experts, h);
    flops += 2 * per_expert * local * (mats + 1) * f * h / t + 2 * tokens * experts * h;
  } else {
    const double f = m.ffn_hidden;
    gemm += gemm_time(g, p, tokens, mats * f / t, h) + gemm_time(g, p, tokens, h, f / t);
    flops += 2 * tokens * (mats + 1) * f * h / t;
  }
  // attention core: per local head and sequence, (s/c) x s scores over head_dim, then the weighted sum
  const double heads = b * m.heads / t;
  const double softmax_bytes = s.training.flash_attention ? 0.0 : 9.0 * m.heads * (seq / c) * seq * b / t *
                                                                      (full_width(p) ? 2 : 1);
  const double core_gemm = gemm_time(g, p, seq / c, seq, d, heads) + gemm_time(g, p, seq / c, d, seq, heads);
  flops += 4 * heads * (seq / c) * seq * d;

  const double elementwise = memory_time(g, layer_elementwise_bytes(s, moe_layer));
  LayerTimes out;
  out.attention_core = core_gemm + memory_time(g, softmax_bytes);
  out.gemm_forward = gemm;
  out.forward = gemm + core_gemm + elementwise;
  out.forward_flops = flops;
  // backward: each weight GEMM has an input-gradient and a weight-gradient GEMM of its own FLOPs;
  // the attention core has no weights, its 2x forward is all input gradient; elementwise work
  // reads the saved tensor and the incoming gradient and writes the outgoing one (2x).
  out.backward_weight = gemm;
  out.backward_input = gemm + 2 * core_gemm + 2 * elementwise;
  switch (s.training.recompute) {
    case core::Recompute::none: out.recompute = 0; break;
    case core::Recompute::selective: out.recompute = out.attention_core; break;
    case core::Recompute::full: out.recompute = out.forward; break;
  }
  return out;
}

EndTimes embedding_times(const core::Scenario& s) {
  const auto& g = s.hardware.gpu;
  const double sp = s.parallel.sequence_parallel ? s.parallel.tp : 1.0;
  const double sbh = s.training.micro_batch * static_cast<double>(s.training.seq_len) / s.parallel.cp *
                     s.model.hidden;
  EndTimes e;
  // lookup: read 2sbh of rows, write 2sbh; dropout: read 2, write 2, mask 1
  e.forward = memory_time(g, 4 * sbh + 5 * sbh / sp);
  // gradient rows scattered into the fp32 embedding gradient: read 2sbh, read-modify-write 8sbh
  e.backward_weight = memory_time(g, 10 * sbh);
  return e;
}

EndTimes logits_times(const core::Scenario& s) {
  const auto& g = s.hardware.gpu;
  const auto p = s.training.precision;
  const double t = s.parallel.tp;
  const double tokens = s.training.micro_batch * static_cast<double>(s.training.seq_len) / s.parallel.cp;
  const double V = s.model.vocab, h = s.model.hidden;
  const double gemm = gemm_time(g, p, tokens, V / t, h);
  EndTimes e;
  // cross-entropy in fp32 over the local vocabulary slice: forward reads the 16-bit logits (2),
  // writes fp32 (4), reads them for the max and the sum (4 + 4); backward reads 4, writes 2, reads 4.
  e.forward = gemm + memory_time(g, 14 * tokens * V / t);
  e.backward_input = gemm + memory_time(g, 10 * tokens * V / t);
  e.backward_weight = gemm;
  e.forward_flops = 2 * tokens * h * V / t;
  return e;
}

double optimizer_step_bytes_per_param(const core::TrainingSpec& t) {
  const bool adam = t.optimizer != core::Optimizer::sgd;
  if (full_width(t.precision)) return adam ? 32 : 24;  // w, m, v read+write 8 each, grad 4, zero 4
  // fp32 master, m, v read + write (8 each), fp32 grad read (4), 16-bit weight write (2), grad zero (4)
  return adam ? 34 : 26;
}

double optimizer_time(const core::GpuSpec& g, const core::TrainingSpec& t, double params_updated) {
  return memory_time(g, optimizer_step_bytes_per_param(t) * params_updated);
}

}  // namespace ptdsim::analytic
