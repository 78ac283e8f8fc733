#include "ptdsim/analytic/megatron_count.hpp"

namespace ptdsim::analytic {
namespace {

double count_2024(const core::ModelSpec& m, double B, double s, double V) {
  const double L = m.layers, h = m.hidden, a = m.heads, g = m.kv_heads;
  const double q = m.q_width();  // kv_channels x heads
  const double routed = m.moe ? m.moe->top_k : 1;
  const double gated = m.mlp == core::Mlp::swiglu ? 1.5 : 1.0;
  return 12 * B * s * L * h * h *
         ((1 + g / a + s / h) * q / h + (m.ffn_hidden / h) * routed * gated + V / (2 * L * h));
}

double count_2025(const core::ModelSpec& m, double B, double s, double V) {
  const double h = m.hidden, a = m.heads;
  const double mtp = m.mtp_layers;
  // Megatron takes the MoE layers from its layer pattern (the list Megatron-Bridge sets, which is
  // is_moe_layer's) and gives the MTP modules' layers the last decoder layer's kind
  const int moe_layers = m.moe_layer_count();
  const bool last_moe = m.is_moe_layer(m.layers - 1);
  const double n_moe = moe_layers + (last_moe ? mtp : 0);
  const double n_dense = (m.layers - moe_layers) + (last_moe ? 0 : mtp);
  const double n_attention = m.layers + mtp;
  const double ffn_factor = m.mlp == core::Mlp::swiglu ? 3 : 2;  // the h -> (2)f and f -> h GEMMs
  double routed = 0, shared = 0;
  if (m.moe) {
    routed = static_cast<double>(m.expert_ffn_hidden()) * m.moe->top_k;
    shared = static_cast<double>(m.moe->shared_experts) * m.moe->shared_ffn_hidden;
  }
  // 3 (forward, wgrad, dgrad) x 2 (a multiply-add) on every GEMM
  const double mlp = 6 * h * (static_cast<double>(m.ffn_hidden) * ffn_factor * n_dense + (routed + shared) * ffn_factor * n_moe);
  double projections = 0, core = 0;  // per token and layer; core per token and key
  if (m.mla) {
    const auto& l = *m.mla;
    const double nope = l.qk_nope_head_dim, rope = l.qk_rope_head_dim, v = l.v_head_dim;
    const double q_term = l.q_lora_rank > 0 ? l.q_lora_rank * (h + a * (nope + rope) + 1) : h * a * (nope + rope);
    projections = 6 * (q_term + l.kv_lora_rank * (h + a * (nope + v) + 1) + h * rope + a * v * h);
    core = 6 * (a * (nope + rope) / 2 + a * v / 2);
  } else {
    const double q = m.q_width(), kv = m.kv_width();
    projections = 6 * (h * (q + 2 * kv) + q * h);
    core = 6 * q;  // QK^T and its product with V (x 2), half the causal matrix (/ 2)
  }
  const double mtp_extra = 6 * mtp * (3 * h + 2 * h * h);
  const double logits = 6 * h * V * (mtp + 1);
  return B * s * (mlp + projections * n_attention + mtp_extra + logits) + B * s * s * core * n_attention;
}

}  // namespace

double megatron_flops_per_step(const core::Scenario& s, MegatronCount revision) {
  const double B = s.training.global_batch, seq = s.training.seq_len;
  const double V = static_cast<double>(core::megatron_padded_vocab(s.model.vocab, 128, s.parallel.tp));
  return revision == MegatronCount::v2024 ? count_2024(s.model, B, seq, V) : count_2025(s.model, B, seq, V);
}

}  // namespace ptdsim::analytic
