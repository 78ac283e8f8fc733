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
  m.attention_head_dim = static_cast<int>(f.integer("head_dim", 0));
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
    s.shared_experts = static_cast<int>(moe.integer("shared_experts", 0));
    s.shared_ffn_hidden = static_cast<int>(moe.integer("shared_ffn_hidden", s.ffn_hidden));
    s.first_k_dense = static_cast<int>(moe.integer("first_k_dense", 0));
    s.router = moe.enumeration<core::Router>("router", 2).value_or(core::Router::softmax);
    s.router_groups = static_cast<int>(moe.integer("router_groups", 0));
    s.router_group_topk = static_cast<int>(moe.integer("router_group_topk", 0));
    m.moe = s;
  }
  if (const Entry* e = f.get("mla")) {
    Fields mla(*e->value, where_of(*e), "model.mla", "model.mla", section_keys("model.mla"));
    core::MlaSpec a;
    a.q_lora_rank = static_cast<int>(mla.integer("q_lora_rank", 0));
    a.kv_lora_rank = static_cast<int>(mla.required_integer("kv_lora_rank"));
    a.qk_nope_head_dim = static_cast<int>(mla.required_integer("qk_nope_head_dim"));
    a.qk_rope_head_dim = static_cast<int>(mla.required_integer("qk_rope_head_dim"));
    a.v_head_dim = static_cast<int>(mla.required_integer("v_head_dim"));
    m.mla = a;
  }
  if (const Entry* e = f.get("sliding_window")) {
    Fields sw(*e->value, where_of(*e), "model.sliding_window", "model.sliding_window",
              section_keys("model.sliding_window"));
    core::SlidingWindow w;
    w.window = static_cast<int>(sw.required_integer("window"));
    w.full_every = static_cast<int>(sw.integer("full_every", 0));
    m.sliding_window = w;
  }
  m.attention_sinks = f.boolean("attention_sinks", false);
  m.qk_norm = f.boolean("qk_norm", false);
  m.mtp_layers = static_cast<int>(f.integer("mtp_layers", 0));
  return m;
}

}  // namespace ptdsim::io::detail
