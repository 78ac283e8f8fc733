#pragma once
#include "ptdsim/core/model.hpp"
#include "ptdsim/core/scenario.hpp"

// Floating-point operations, a multiply-add counted as 2 (docs/analytic.md "FLOPs"). Only matrix
// products are counted (the GEMMs and the attention score/value products); biases, norms,
// activations, softmax and dropout are left out of the FLOP count (they are timed as memory-bound
// work), which makes the dense GPT count equal Narayanan et al.'s closed form exactly.
namespace ptdsim::analytic {

// One transformer layer's forward pass over b sequences of s tokens, whole layer (all TP ranks).
struct LayerFlops {
  double qkv = 0;             // 2*b*s*h*(h + 2*h*k/a); MLA: its down and up projections
  double attention_core = 0;  // Q K^T and softmax(.) V: 4*b*s^2*h, causal mask not halved (Megatron);
                              // 2*b*s*keys*a*(d_qk + d_v) with head_dim, MLA or a window (keys = min(s, window))
  double out_proj = 0;        // 2*b*s*h^2 (2*b*s*a*d_v*h)
  double mlp = 0;             // gelu 4*b*s*h*f, swiglu 6*b*s*h*f; MoE: top_k experts and the shared ones
  double router = 0;          // MoE gate: 2*b*s*h*experts
  double total() const { return qkv + attention_core + out_proj + mlp + router; }
  double gemm() const { return qkv + out_proj + mlp + router; }  // weight GEMMs (have a W half)
};
LayerFlops layer_forward_flops(const core::ModelSpec& m, bool moe_layer, double b, double s);
// The same for a layer with sliding-window attention when `windowed` (model.sliding_window).
LayerFlops layer_forward_flops(const core::ModelSpec& m, bool moe_layer, bool windowed, double b, double s);
// The QKV projections' forward FLOPs over `tokens` tokens (MLA: down and up projections).
double qkv_forward_flops(const core::ModelSpec& m, double tokens);
// The keys each query attends to: s, or the window on a windowed layer.
double attention_keys(const core::ModelSpec& m, bool windowed, double s);
// The MTP modules beyond their transformer layers: each a 2h -> h projection and its logits.
double mtp_extra_forward_flops(const core::ModelSpec& m, double b, double s);

// Logits: 2*b*s*h*V forward.
double logits_forward_flops(const core::ModelSpec& m, double b, double s);

// Sum over all layers (the MTP modules' layers too) of the forward FLOPs for b sequences of s tokens.
double layers_forward_flops(const core::ModelSpec& m, double b, double s);

// Extra forward work recomputed before the backward pass, for b sequences, all layers:
// none 0; selective the attention core of every layer; full a whole forward of every layer; op 0
// here (its shares depend on the scenario: hardware_flops_per_step counts them).
double recompute_flops(const core::ModelSpec& m, core::Recompute r, double b, double s);

// Forward + backward (2x forward) of one global batch, no recomputation (interface.md).
double model_flops_per_step(const core::Scenario& s);
// model_flops_per_step plus the recomputed forward work (what the hardware executes).
double hardware_flops_per_step(const core::Scenario& s);
// The same with model_flops_per_step(s) given (the report has it already).
double hardware_flops_per_step(const core::Scenario& s, double model_flops);

}  // namespace ptdsim::analytic
