#include "ptdsim/calibrate/gemm_shapes.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace ptdsim::calibrate {

std::vector<GemmShape> layer_gemms(const core::ModelSpec& model, int tp, long long tokens) {
  std::vector<GemmShape> out;
  const int h = model.hidden, heads = model.heads, kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const int ffn = model.ffn_hidden > 0 ? model.ffn_hidden : 4 * h;
  if (tp < 1 || heads < 1 || h % heads != 0 || heads % tp != 0 || h % tp != 0 || ffn % tp != 0) return out;
  const long long hd = h / heads;
  const long long qkv = kv >= tp && kv % tp == 0 ? (heads + 2LL * kv) * hd / tp : (heads / tp + 2LL) * hd;
  const bool gated = model.mlp == core::Mlp::swiglu;
  auto add = [&](const char* op, long long n, long long k) {
    GemmShape s;
    s.op = op;
    s.hidden = h;
    s.ffn = ffn;
    s.heads = heads;
    s.kv_heads = kv;
    s.tp = tp;
    s.m = tokens;
    s.n = n;
    s.k = k;
    out.push_back(s);
  };
  add("qkv", qkv, h);
  add("proj", h, static_cast<long long>(h) / tp);
  add("fc1", static_cast<long long>(ffn) / tp, h);
  if (gated) add("fc1_gated", 2LL * ffn / tp, h);
  add("fc2", h, static_cast<long long>(ffn) / tp);
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
