#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/op_checkpoint.hpp"

#include "repeated_sum.hpp"

namespace ptdsim::analytic {

double attention_keys(const core::ModelSpec& m, bool windowed, double s) {
  return windowed && m.sliding_window->window < s ? m.sliding_window->window : s;
}

double qkv_forward_flops(const core::ModelSpec& m, double tokens) {
  const double h = m.hidden;
  if (!m.mla) return 2 * tokens * h * (m.q_width() + 2 * m.kv_width());
  // MLA: down to the latents (and the shared rope key), then up to every head's query, nope key
  // and value; the latents' norms are not FLOPs
  const core::MlaSpec& l = *m.mla;
  const double heads = m.heads, q = l.q_lora_rank, kv = l.kv_lora_rank;
  const double query = q > 0 ? h * q + q * heads * l.qk_head_dim() : h * heads * l.qk_head_dim();
  return 2 * tokens * (query + h * (kv + l.qk_rope_head_dim) + kv * heads * (l.qk_nope_head_dim + l.v_head_dim));
}

LayerFlops layer_forward_flops(const core::ModelSpec& m, bool moe_layer, double b, double s) {
  return layer_forward_flops(m, moe_layer, false, b, s);
}

LayerFlops layer_forward_flops(const core::ModelSpec& m, bool moe_layer, bool windowed, double b, double s) {
  const double h = m.hidden;
  const double tokens = b * s;
  const double mlp_mats = m.mlp == core::Mlp::swiglu ? 3 : 2;
  LayerFlops f;
  f.qkv = qkv_forward_flops(m, tokens);
  // Q K^T over the query/key width and P V over the value width, each query against every key
  // (the causal half not removed) or its window: 2 b s k heads (d_qk + d_v) = 4 b s^2 h for MHA
  const double keys = attention_keys(m, windowed, s);
  f.attention_core = m.mla || m.attention_head_dim > 0 || windowed
                         ? 2 * b * s * keys * m.heads * (static_cast<double>(m.qk_head_dim()) + m.v_head_dim())
                         : 4 * b * s * s * h;
  f.out_proj = 2 * tokens * m.attention_out_width() * h;
  if (moe_layer) {
    f.mlp = m.moe->top_k * 2 * mlp_mats * tokens * h * m.expert_ffn_hidden();
    if (m.moe->shared_experts > 0) f.mlp += m.moe->shared_experts * 2 * mlp_mats * tokens * h * m.moe->shared_ffn_hidden;
    f.router = 2 * tokens * h * m.moe->experts;
  } else {
    f.mlp = 2 * mlp_mats * tokens * h * m.ffn_hidden;
  }
  return f;
}

double logits_forward_flops(const core::ModelSpec& m, double b, double s) {
  return 2 * b * s * m.hidden * static_cast<double>(m.vocab);
}

double mtp_extra_forward_flops(const core::ModelSpec& m, double b, double s) {
  // each module: its 2h -> h projection and its own logits over the shared head
  return m.mtp_layers * (2 * b * s * 2.0 * m.hidden * m.hidden + logits_forward_flops(m, b, s));
}

double layers_forward_flops(const core::ModelSpec& m, double b, double s) {
  const double dense = layer_forward_flops(m, false, b, s).total();
  const double moe = m.moe ? layer_forward_flops(m, true, b, s).total() : 0.0;
  if (!m.moe && !m.sliding_window && m.mtp_layers == 0) return detail::repeated_sum(0.0, dense, m.layers);
  double total = 0;
  for (int i = 0; i < m.layers + m.mtp_layers; ++i) {
    if (m.is_windowed_layer(i)) total += layer_forward_flops(m, m.is_moe_layer(i), true, b, s).total();
    else total += m.is_moe_layer(i) ? moe : dense;
  }
  return total;
}

double recompute_flops(const core::ModelSpec& m, core::Recompute r, double b, double s) {
  switch (r) {
    case core::Recompute::none: return 0;
    case core::Recompute::selective: {
      if (!m.sliding_window && m.mtp_layers == 0) return m.layers * layer_forward_flops(m, false, b, s).attention_core;
      double core = 0;
      for (int i = 0; i < m.layers + m.mtp_layers; ++i)
        core += layer_forward_flops(m, false, m.is_windowed_layer(i), b, s).attention_core;
      return core;
    }
    case core::Recompute::full: return layers_forward_flops(m, b, s);
    case core::Recompute::op: break;  // needs the scenario: op_recompute_flops
  }
  return 0;
}

namespace {

// Selective recompute with training.recompute_modules: each layer's named modules' forward once
// more (the MTP modules' layers too): the attention core, MLA's up projections, the MoE block
// (router and experts) or a dense layer's MLP, or the shared experts alone; moe_act and layernorm
// recompute no matrix product.
double module_recompute_flops(const core::Scenario& s, double b, double seq) {
  using M = core::RecomputeModule;
  const auto& m = s.model;
  const auto& t = s.training;
  double total = 0;
  for (int i = 0; i < m.layers + m.mtp_layers; ++i) {
    const bool moe = m.is_moe_layer(i);
    const LayerFlops f = layer_forward_flops(m, moe, m.is_windowed_layer(i), b, seq);
    if (t.recomputes(M::core_attn)) total += f.attention_core;
    if (t.recomputes(moe ? M::moe : M::mlp)) {
      total += f.mlp + f.router;
    } else if (moe && t.recomputes(M::shared_experts) && m.moe->shared_experts > 0) {
      const double mats = m.mlp == core::Mlp::swiglu ? 3 : 2;
      total += m.moe->shared_experts * 2 * mats * b * seq * m.hidden * m.moe->shared_ffn_hidden;
    }
    if (m.mla && t.recomputes(M::mla_up_proj)) {
      const core::MlaSpec& l = *m.mla;
      total += 2 * b * seq * m.heads *
               ((l.q_lora_rank > 0 ? l.q_lora_rank : m.hidden) * l.qk_head_dim() +
                l.kv_lora_rank * (static_cast<double>(l.qk_nope_head_dim) + l.v_head_dim));
    }
  }
  return total;
}

// torchtitan's per-op checkpointing: each layer's weight GEMMs again by their recomputed shares
// (op_checkpoint_shares); the attention core is saved. Dense models only (core::check).
double op_recompute_flops(const core::Scenario& s, double b, double seq) {
  const auto& m = s.model;
  const OpCheckpointShares g = op_checkpoint_shares(s);
  const double fc1 = m.mlp == core::Mlp::swiglu ? 2.0 / 3 : 0.5;  // fc1's part of the MLP's FLOPs
  double total = 0;
  for (int i = 0; i < m.layers + m.mtp_layers; ++i) {
    const LayerFlops f = layer_forward_flops(m, false, m.is_windowed_layer(i), b, seq);
    total += f.qkv * g.qkv + f.out_proj * g.proj + f.mlp * (fc1 * g.fc1 + (1 - fc1) * g.fc2);
  }
  return total;
}

}  // namespace

double model_flops_per_step(const core::Scenario& s) {
  const double B = s.training.global_batch, seq = s.training.seq_len;
  const double mtp = s.model.mtp_layers > 0 ? mtp_extra_forward_flops(s.model, B, seq) : 0.0;
  return 3 * (layers_forward_flops(s.model, B, seq) + logits_forward_flops(s.model, B, seq) + mtp);
}

double hardware_flops_per_step(const core::Scenario& s) { return hardware_flops_per_step(s, model_flops_per_step(s)); }

double hardware_flops_per_step(const core::Scenario& s, double model_flops) {
  const double B = s.training.global_batch, seq = s.training.seq_len;
  if (s.training.recompute == core::Recompute::selective && s.training.recompute_modules != 0)
    return model_flops + module_recompute_flops(s, B, seq);
  if (s.training.recompute == core::Recompute::op) return model_flops + op_recompute_flops(s, B, seq);
  return model_flops + recompute_flops(s.model, s.training.recompute, B, seq);
}

}  // namespace ptdsim::analytic
