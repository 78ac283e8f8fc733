#pragma once
#include <array>

#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

// The operators of one transformer layer, and of the ends of the model, on one GPU for one
// micro-batch, each timed from the hardware's kernel tables or the scalar model
// (docs/analytic.md "Compute from measured kernels"). layer_times() and logits_times() sum them.
// Fixed-size and allocation-free: the sweep evaluates this for every candidate layout.
namespace ptdsim::analytic {

inline constexpr int kMaxLayerOps = 24;

struct LayerOps {
  std::array<core::OperatorTime, kMaxLayerOps> ops{};
  int count = 0;
  bool tables = false;  // timed from kernel tables (false: the scalar efficiencies)
  // The scalar model keeps today's grouping: the attention core's GEMMs apart from its explicit
  // softmax bytes, which join the layer's one stream of memory-bound bytes.
  double attention_gemm_s = 0;

  const core::OperatorTime* begin() const { return ops.data(); }
  const core::OperatorTime* end() const { return ops.data() + count; }
  const core::OperatorTime* find(core::Operator op) const;
};

// In execution order: input_norm, qkv (MLA: q_down, kv_down, latent_norm, q_up, kv_up), qk_norm, rope,
// attention, proj, attention_dropout_add, mlp_norm, then fc1 or fc1_gated, gelu or swiglu, fc2 (MoE
// layers: router, permute, the local experts' fc1, activation and fc2 as `count` GEMMs, unpermute,
// then the shared experts' shared_fc1, shared_activation, shared_fc2), mlp_dropout_add, fp8_cast,
// and with tables the fitted overhead.
LayerOps layer_ops(const core::Scenario& s, bool moe_layer);
// The same into `out`, whose operators it replaces (layer_costs() fills its own in place: a
// LayerOps returned and copied in is a kilobyte).
void layer_ops(const core::Scenario& s, bool moe_layer, LayerOps& out);
// `out` with no operators, as a default LayerOps reads.
void clear(LayerOps& out);

// An MoE layer's routed experts on one GPU, one micro-batch: the rows each local expert's GEMMs
// take (the busiest expert's: training.moe.load_imbalance or capacity_factor times the mean), the
// local experts, and each expert's FFN width on this GPU (ffn_hidden / etp).
struct ExpertRows {
  double per_expert = 0;
  double local_experts = 0;
  double width = 0;
};
ExpertRows expert_rows(const core::Scenario& s);
// The rows each of the permute and the unpermute moves (of the model's hidden width): the top_k
// copies of the tokens this rank routes, and, under the alltoall dispatcher with more than one local
// expert, the rows it receives once more: Megatron-Core's MoEAlltoAllTokenDispatcher sorts them by
// local expert after the all-to-all ("Permutation 2", sort_chunks_by_idxs, or a transposed copy when
// it drops and pads) and unsorts them before the combine; DeepEP's fused dispatch does the
// sender's permutation inside its kernel, so the flex dispatcher moves each row once each way.
double permuted_rows(const core::Scenario& s);

// The embedding (first stage), and the logits GEMM and cross-entropy (last stage).
// With MTP modules (model.mtp_layers), `mtp` is their 2h -> h projections and logits GEMMs on the
// last stage, and cross_entropy counts each module's loss beside the main one (their layers are
// the last stage's layers: analytic::pipeline_layers); `mtp` is zero without them.
struct EndOps {
  core::OperatorTime embedding, logits, cross_entropy, mtp;
};
EndOps end_ops(const core::Scenario& s);

}  // namespace ptdsim::analytic
