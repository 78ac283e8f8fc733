#include "ptdsim/analytic/flops.hpp"

#include "repeated_sum.hpp"

namespace ptdsim::analytic {

LayerFlops layer_forward_flops(const core::ModelSpec& m, bool moe_layer, double b, double s) {
  const double h = m.hidden, kv = static_cast<double>(m.hidden) * m.kv_heads / m.heads;
  const double tokens = b * s;
  const double mlp_mats = m.mlp == core::Mlp::swiglu ? 3 : 2;
  LayerFlops f;
  f.qkv = 2 * tokens * h * (h + 2 * kv);
  f.attention_core = 4 * b * s * s * h;
  f.out_proj = 2 * tokens * h * h;
  if (moe_layer) {
    f.mlp = m.moe->top_k * 2 * mlp_mats * tokens * h * m.expert_ffn_hidden();
    f.router = 2 * tokens * h * m.moe->experts;
  } else {
    f.mlp = 2 * mlp_mats * tokens * h * m.ffn_hidden;
  }
  return f;
}

double logits_forward_flops(const core::ModelSpec& m, double b, double s) {
  return 2 * b * s * m.hidden * static_cast<double>(m.vocab);
}

double layers_forward_flops(const core::ModelSpec& m, double b, double s) {
  const double dense = layer_forward_flops(m, false, b, s).total();
  const double moe = m.moe ? layer_forward_flops(m, true, b, s).total() : 0.0;
  if (!m.moe) return detail::repeated_sum(0.0, dense, m.layers);
  double total = 0;
  for (int i = 0; i < m.layers; ++i) total += m.is_moe_layer(i) ? moe : dense;
  return total;
}

double recompute_flops(const core::ModelSpec& m, core::Recompute r, double b, double s) {
  switch (r) {
    case core::Recompute::none: return 0;
    case core::Recompute::selective: return m.layers * layer_forward_flops(m, false, b, s).attention_core;
    case core::Recompute::full: return layers_forward_flops(m, b, s);
  }
  return 0;
}

double model_flops_per_step(const core::Scenario& s) {
  const double B = s.training.global_batch, seq = s.training.seq_len;
  return 3 * (layers_forward_flops(s.model, B, seq) + logits_forward_flops(s.model, B, seq));
}

double hardware_flops_per_step(const core::Scenario& s) { return hardware_flops_per_step(s, model_flops_per_step(s)); }

double hardware_flops_per_step(const core::Scenario& s, double model_flops) {
  const double B = s.training.global_batch, seq = s.training.seq_len;
  return model_flops + recompute_flops(s.model, s.training.recompute, B, seq);
}

}  // namespace ptdsim::analytic
