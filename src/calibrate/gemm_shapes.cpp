#include "ptdsim/calibrate/gemm_shapes.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "ptdsim/core/layer_gemms.hpp"

namespace ptdsim::calibrate {

std::vector<GemmShape> layer_gemms(const core::ModelSpec& model, int tp, long long tokens) {
  std::vector<GemmShape> out;
  if (!core::tp_splits_layer(model, tp)) return out;
  const int h = model.hidden, heads = model.heads, kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const int ffn = model.ffn_hidden > 0 ? model.ffn_hidden : 4 * h;
  const core::LayerGemms g = core::layer_gemms(model, tp);
  auto add = [&](const char* op, core::GemmWidth w) {
    GemmShape s;
    s.op = op;
    s.hidden = h;
    s.ffn = ffn;
    s.heads = heads;
    s.kv_heads = kv;
    s.tp = tp;
    s.m = tokens;
    s.n = w.n;
    s.k = w.k;
    out.push_back(s);
  };
  add("qkv", g.qkv);
  add("proj", g.proj);
  add("fc1", g.fc1);
  if (g.gated) add("fc1_gated", g.fc1_gated);
  add("fc2", g.fc2);
  return out;
}

std::vector<GemmShape> gemm_shapes(const std::vector<core::ModelSpec>& models, const std::vector<int>& tps,
                                   const std::vector<long long>& tokens) {
  std::vector<GemmShape> out;
  std::set<std::tuple<long long, long long, long long>> seen;
  for (const auto& model : models) {
    for (int tp : tps) {
      for (long long t : tokens) {
        for (auto& s : layer_gemms(model, tp, t)) {
          if (seen.insert({s.m, s.n, s.k}).second) out.push_back(std::move(s));
        }
      }
    }
  }
  return out;
}

core::ModelSpec plain_model(int hidden) {
  core::ModelSpec m;
  m.name = "hidden-" + std::to_string(hidden);
  m.hidden = hidden;
  m.heads = std::max(1, hidden / 128);
  m.kv_heads = m.heads;
  m.ffn_hidden = 4 * hidden;
  m.mlp = core::Mlp::gelu;
  return m;
}

}  // namespace ptdsim::calibrate
