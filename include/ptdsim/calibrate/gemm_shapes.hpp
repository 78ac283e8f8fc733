#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/model.hpp"

// The GEMMs of a transformer layer on one GPU under Megatron-LM's tensor parallelism t (Shoeybi et
// al. 2019, Sec. 3: QKV and fc1 split by columns, the attention projection and fc2 by rows), as
// y[m,n] = x[m,k] W[n,k]^T with m the tokens of a micro-batch: the shapes ptdsim-calibrate measures
// (docs/calibration.md "GEMMs"), named as in the kernel tables' gemm.csv.
namespace ptdsim::calibrate {

struct GemmShape {
  std::string op;  // qkv, proj, fc1, fc1_gated (SwiGLU's fused gate and up projections), fc2
  int hidden = 0, ffn = 0, heads = 0, kv_heads = 0, tp = 1;
  long long m = 0, n = 0, k = 0;
};

// The layer's GEMMs for `tokens` tokens under tensor parallelism `tp` (core::layer_gemms: the widths
// the compute model times); empty when tp does not divide the heads, the hidden size or the FFN
// width. Gated MLPs (SwiGLU) list fc1_gated, the gate and up projections fused, after fc1.
std::vector<GemmShape> layer_gemms(const core::ModelSpec& model, int tp, long long tokens);

// Every model x tp x tokens, one shape per distinct (m, n, k) -- the first model, tp and op that
// produced it name it.
std::vector<GemmShape> gemm_shapes(const std::vector<core::ModelSpec>& models, const std::vector<int>& tps,
                                   const std::vector<long long>& tokens);

// A model of the classic shape for `--hidden` lists: 128-wide heads, no GQA, ffn = 4 hidden, GELU.
core::ModelSpec plain_model(int hidden);

}  // namespace ptdsim::calibrate
