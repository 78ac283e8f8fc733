#include "ptdsim/analytic/kv_cache.hpp"

namespace ptdsim::analytic {

double kv_elements_per_token_layer(const core::ModelSpec& m) {
  if (m.mla) return static_cast<double>(m.mla->kv_lora_rank) + m.mla->qk_rope_head_dim;
  return 2 * m.kv_width();
}

double kv_bytes_per_token(const core::ModelSpec& m, double bytes_per_element) {
  return bytes_per_element * m.layers * kv_elements_per_token_layer(m);
}

}  // namespace ptdsim::analytic
