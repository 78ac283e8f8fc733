#include "ptdsim/core/layer_gemms.hpp"

namespace ptdsim::core {

namespace {
int ffn_of(const ModelSpec& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden; }
}  // namespace

bool tp_splits_layer(const ModelSpec& m, int tp) {
  return tp >= 1 && m.heads >= 1 && m.hidden % m.heads == 0 && m.heads % tp == 0 && m.hidden % tp == 0 &&
         ffn_of(m) % tp == 0;
}

ProjectionParts qkv_parts(const ModelSpec& m, int tp, bool apart) {
  const auto q = static_cast<double>(q_width_per_rank(m, tp)), kv = static_cast<double>(kv_width_per_rank(m, tp));
  return apart ? ProjectionParts{3, {q, kv, kv}} : ProjectionParts{1, {q + 2 * kv, 0, 0}};
}

ProjectionParts fc1_parts(const ModelSpec& m, int tp, bool apart) {
  const double f = static_cast<double>(ffn_of(m)) / tp;
  if (m.mlp != Mlp::swiglu) return {1, {f, 0, 0}};
  return apart ? ProjectionParts{2, {f, f, 0}} : ProjectionParts{1, {2 * f, 0, 0}};
}

LayerGemms layer_gemms(const ModelSpec& m, int tp) {
  const long long h = m.hidden, ffn = ffn_of(m);
  LayerGemms g;
  g.qkv = {qkv_width(m, tp), h};
  g.proj = {h, h / tp};
  g.fc1 = {ffn / tp, h};
  g.fc1_gated = {2 * ffn / tp, h};
  g.fc2 = {h, ffn / tp};
  g.gated = m.mlp == Mlp::swiglu;
  return g;
}

}  // namespace ptdsim::core
