#pragma once
#include "ptdsim/core/model.hpp"

// The keys and values one token leaves behind for the tokens after it (docs/analytic.md "MLA"):
// what an inference server caches, and what sets how far MLA shrinks attention's state.
namespace ptdsim::analytic {

// Elements per token per layer: 2 * kv_heads * head_dim (K and V); MLA caches its compressed
// latent and the shared rope key, kv_lora_rank + qk_rope_head_dim (DeepSeek-V2, arXiv:2405.04434,
// Table 1: (d_c + d_h^R) * l).
double kv_elements_per_token_layer(const core::ModelSpec& m);
// Bytes per token over every decoder layer at `bytes_per_element` (2 for 16-bit).
double kv_bytes_per_token(const core::ModelSpec& m, double bytes_per_element);

}  // namespace ptdsim::analytic
