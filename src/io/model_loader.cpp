#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "schema.hpp"

namespace ptdsim::io::detail {

core::ModelSpec convert_model(const Node& n, const Mark& where, const std::string& default_name) {
  Fields f(n, where, "model", "model", section_keys("model"));
  core::ModelSpec m;
  m.name = f.string("name").value_or(default_name);
  f.string("source");
  m.layers = static_cast<int>(f.required_integer("layers"));
  m.hidden = static_cast<int>(f.required_integer("hidden"));
  m.heads = static_cast<int>(f.required_integer("heads"));
  m.kv_heads = static_cast<int>(f.integer("kv_heads", m.heads));
  m.ffn_hidden = static_cast<int>(f.integer("ffn_hidden", 4LL * m.hidden));
  m.vocab = static_cast<int>(f.required_integer("vocab"));
  m.mlp = f.enumeration<core::Mlp>("mlp", 2).value_or(core::Mlp::gelu);
  m.norm = f.enumeration<core::Norm>("norm", 2).value_or(core::Norm::layernorm);
  m.position = f.enumeration<core::Position>("position", 2).value_or(core::Position::learned);
  m.max_seq_len = static_cast<int>(f.integer("max_seq_len", 2048));
  m.tied_embeddings = f.boolean("tied_embeddings", false);
  // GPT-2/3 and BLOOM (LayerNorm) carry biases; LLaMA-style (RMSNorm) models drop them.
  m.bias = f.boolean("bias", m.norm == core::Norm::layernorm);
  if (const Entry* e = f.get("moe")) {
    Fields moe(*e->value, where_of(*e), "model.moe", "model.moe", section_keys("model.moe"));
    core::MoeSpec s;
    s.experts = static_cast<int>(moe.required_integer("experts"));
    s.top_k = static_cast<int>(moe.integer("top_k", 1));
    s.every = static_cast<int>(moe.integer("every", 1));
    s.ffn_hidden = static_cast<int>(moe.integer("ffn_hidden", m.ffn_hidden));
    m.moe = s;
  }
  return m;
}

}  // namespace ptdsim::io::detail
