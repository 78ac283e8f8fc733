#pragma once
#include "ptdsim/core/model.hpp"

// The weight GEMMs of a transformer layer on one GPU under Megatron-LM's tensor parallelism t
// (Shoeybi et al. 2019, Sec. 3: QKV and fc1 split by columns, the attention projection and fc2 by
// rows), as y[m,n] = x[m,k] W[n,k]^T with m the tokens of a micro-batch. The compute model
// (analytic/operators.cpp) times them and ptdsim-calibrate measures them (calibrate/gemm_shapes.cpp):
// one statement of the widths, so the measured shapes are the ones the model looks up.
namespace ptdsim::core {

// The KV heads one rank holds: kv_heads / t, and one copy each when there are fewer KV heads than
// ranks (the attention core and RoPE run on that copy). core::check refuses t that does not divide
// kv_heads for a scenario; the measuring tool still lists such shapes.
inline int kv_heads_per_rank(const ModelSpec& m, int tp) {
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  return kv >= tp ? kv / tp : 1;
}

// The query projection's outputs on one rank, heads / t x head_dim, and the key's (the value's the same),
// kv heads per rank x head_dim: the parts of the QKV GEMM, which a framework may run apart
// (training.fusion.projections).
inline long long q_width_per_rank(const ModelSpec& m, int tp) {
  return static_cast<long long>(m.heads / tp) * m.head_dim();
}
inline long long kv_width_per_rank(const ModelSpec& m, int tp) {
  return static_cast<long long>(kv_heads_per_rank(m, tp)) * m.head_dim();
}
// The QKV GEMM's outputs on one rank: (heads / t + 2 kv heads per rank) x head_dim. Equal to
// (hidden + 2 kv_heads x head_dim) / t where t divides kv_heads.
inline long long qkv_width(const ModelSpec& m, int tp) {
  return q_width_per_rank(m, tp) + 2 * kv_width_per_rank(m, tp);
}

// The GEMMs a framework runs for a layer's QKV projection and a dense layer's fc1, in the order it
// runs them, by their output widths on one rank: one GEMM of the summed width (Megatron-Core's
// linear_qkv and linear_fc1), or, with the projections apart (training.fusion.projections eager:
// torchtitan's wq, wk, wv and w1, w3), one per projection: q, k, v; a gated MLP's gate and up.
struct ProjectionParts {
  int n = 0;
  double width[3] = {};
  double total() const { return width[0] + width[1] + width[2]; }
};
ProjectionParts qkv_parts(const ModelSpec& m, int tp, bool apart);
ProjectionParts fc1_parts(const ModelSpec& m, int tp, bool apart);

struct GemmWidth {
  long long n = 0, k = 0;
};
// A dense layer's GEMMs on one rank. fc1 is one FFN projection (n = ffn / t); a gated MLP (SwiGLU)
// runs fc1_gated instead, the gate and up projections fused in one GEMM (n = 2 ffn / t), as
// Megatron-LM does; `gated` says which.
struct LayerGemms {
  GemmWidth qkv, proj, fc1, fc1_gated, fc2;
  bool gated = false;
};
// Whether t splits the layer's heads, hidden size and FFN width evenly (else there is no shape).
bool tp_splits_layer(const ModelSpec& m, int tp);
LayerGemms layer_gemms(const ModelSpec& m, int tp);  // t must split the layer (tp_splits_layer)

}  // namespace ptdsim::core
