#include "import_hf_moe.hpp"

#include <fmt/format.h>

#include "ptdsim/core/names.hpp"
#include "ptdsim/core/printable.hpp"

namespace ptdsim::io::detail {
namespace {

std::string int_text(long long v) { return yaml_int(v); }

Mark at(const Fields& f, const char* key) {
  const Entry* e = f.get(key);
  return e ? e->value->mark : Mark{};
}

int required(const Fields& f, const char* key, const char* as) {
  return static_cast<int>(f.required_integer_as(key, as));
}

int optional(const Fields& f, const char* key, const char* as, int fallback) {
  return static_cast<int>(f.integer_as(key, as).value_or(fallback));
}

// "field" or "field absent: defaulted to X" for a line's comment
std::string from(const Fields& f, const char* key, const std::string& fallback_text) {
  return f.get(key) ? std::string(key) : std::string(key) + " absent: defaulted to " + fallback_text;
}

// A list field's items (null or absent: none); anything but a list is an error at the field.
const std::vector<NodePtr>* list_of(const Fields& f, const char* key) {
  const Entry* e = f.get(key);
  if (!e) return nullptr;
  if (e->value->kind != Node::Kind::list) fail(e->value->mark, std::string(key) + " must be a list, got " + describe(*e->value));
  return &e->value->items;
}

// The full-attention period of the per-layer list `key` (full: its flags), refused at the list
// when it does not cover every layer or is not periodic as ptdsim's (i + 1) % full_every rule.
int full_every_from(const Fields& f, const char* key, const std::vector<bool>& full, long long layers) {
  if (static_cast<long long>(full.size()) != layers)
    fail(at(f, key), std::string(key) + " has " + std::to_string(full.size()) + " entries but num_hidden_layers is " +
                         int_text(layers));
  const int every = detail::period_of(full);
  if (every < 0)
    fail(at(f, key), std::string(key) + " is not modelled: ptdsim's full-attention layers are those with (i + 1) % "
                                        "sliding_window.full_every == 0, the rest windowed");
  return every;
}

void add_router(ModelLines& lines, core::Router r, const std::string& why, const Mark& where = {}) {
  lines.add_moe("router", std::string(core::name(r)), why, where);
}

// DeepseekV3MoE's fields, which GLM-4-MoE's classes inherit: the routed and shared experts and the
// dense first layers, each taking its default where absent (0: the field is required).
struct DeepseekExperts {
  int experts, top_k, ffn_hidden, shared_experts, first_k_dense;
};

int field(const Fields& f, const char* key, const char* as, int fallback) {
  return fallback > 0 ? optional(f, key, as, fallback) : required(f, key, as);
}

core::MoeSpec deepseek_experts(const Fields& f, const DeepseekExperts& d) {
  core::MoeSpec e;
  e.experts = field(f, "n_routed_experts", "model.moe.experts", d.experts);
  e.top_k = field(f, "num_experts_per_tok", "model.moe.top_k", d.top_k);
  e.ffn_hidden = field(f, "moe_intermediate_size", "model.moe.ffn_hidden", d.ffn_hidden);
  e.shared_experts = optional(f, "n_shared_experts", "model.moe.shared_experts", d.shared_experts);
  e.shared_ffn_hidden = e.ffn_hidden;
  e.first_k_dense = optional(f, "first_k_dense_replace", "model.moe.first_k_dense", d.first_k_dense);
  return e;
}

// Their lines, the `every` line saying why every layer past the dense ones is sparse.
void deepseek_expert_lines(const Fields& f, const core::MoeSpec& e, const DeepseekExperts& d,
                           const std::string& every_from, const Mark& every_at, ModelLines& lines) {
  lines.add_moe("experts", int_text(e.experts), from(f, "n_routed_experts", int_text(d.experts)), at(f, "n_routed_experts"));
  lines.add_moe("top_k", int_text(e.top_k), from(f, "num_experts_per_tok", int_text(d.top_k)), at(f, "num_experts_per_tok"));
  lines.add_moe("every", "1", every_from, every_at);
  lines.add_moe("ffn_hidden", int_text(e.ffn_hidden), from(f, "moe_intermediate_size", int_text(d.ffn_hidden)),
                at(f, "moe_intermediate_size"));
  lines.add_moe("shared_experts", int_text(e.shared_experts), from(f, "n_shared_experts", int_text(d.shared_experts)),
                at(f, "n_shared_experts"));
  lines.add_moe("shared_ffn_hidden", int_text(e.shared_ffn_hidden), "moe_intermediate_size: each shared expert's",
                at(f, "moe_intermediate_size"));
  lines.add_moe("first_k_dense", int_text(e.first_k_dense), from(f, "first_k_dense_replace", int_text(d.first_k_dense)),
                at(f, "first_k_dense_replace"));
}

// The multi-token prediction modules (num_nextn_predict_layers) and routed_scaling_factor, read
// alike for DeepSeek and GLM-4-MoE.
void deepseek_mtp(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings) {
  if (f.get("routed_scaling_factor"))
    warnings.push_back("routed_scaling_factor scales the experts' output: no cost of its own");
  m.mtp_layers = optional(f, "num_nextn_predict_layers", "model.mtp_layers", 0);
  lines.add("mtp_layers", int_text(m.mtp_layers),
            from(f, "num_nextn_predict_layers", "0") + " (trained with the model; transformers' inference drops them)",
            at(f, "num_nextn_predict_layers"));
}

}  // namespace

void read_hf_deepseek(const Fields& f, bool v2, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings) {
  // DeepseekV3Config: the routed experts' count, top-k and width required, no shared or dense ones
  const DeepseekExperts defaults{0, 0, 0, 0, 0};
  core::MoeSpec e = deepseek_experts(f, defaults);
  if (const int freq = optional(f, "moe_layer_freq", "model.moe.every", 1); freq != 1)
    fail(at(f, "moe_layer_freq"),
         "moe_layer_freq " + int_text(freq) + " is not modelled: DeepSeek's MoE layers past first_k_dense_replace are "
         "those with i % moe_layer_freq == 0, ptdsim's (moe.every) those with (i + 1) % every == 0; only 1 agrees");
  const std::string scoring = f.string("scoring_func").value_or(v2 ? "softmax" : "sigmoid");
  const auto router = core::parse<core::Router>(scoring);
  if (!router) fail(at(f, "scoring_func"), "scoring_func '" + core::printable(scoring) + "' is not modelled (softmax or sigmoid)");
  e.router = *router;
  // greedy: top-k over all experts; group_limited_greedy (V2) and noaux_tc (V3): the best topk_group
  // of n_group groups first
  const std::string method = f.string("topk_method").value_or(v2 ? "greedy" : "noaux_tc");
  if (method == "group_limited_greedy" || method == "noaux_tc") {
    e.router_groups = required(f, "n_group", "model.moe.router_groups");
    e.router_group_topk = required(f, "topk_group", "model.moe.router_group_topk");
  } else if (method != "greedy") {
    fail(at(f, "topk_method"), "topk_method '" + core::printable(method) +
                                   "' is not modelled (greedy, group_limited_greedy or noaux_tc)");
  }
  m.moe = e;
  deepseek_expert_lines(f, e, defaults, from(f, "moe_layer_freq", "1"), at(f, "moe_layer_freq"), lines);
  add_router(lines, e.router, from(f, "scoring_func", std::string(core::name(e.router))), at(f, "scoring_func"));
  const bool grouped = e.router_groups > 0;
  lines.add_moe("router_groups", int_text(e.router_groups),
                "topk_method " + method + (grouped ? ": n_group" : ": no groups"), grouped ? at(f, "n_group") : Mark{});
  lines.add_moe("router_group_topk", int_text(e.router_group_topk),
                "topk_method " + method + (grouped ? ": topk_group" : ": no groups"), grouped ? at(f, "topk_group") : Mark{});

  core::MlaSpec a;
  a.q_lora_rank = optional(f, "q_lora_rank", "model.mla.q_lora_rank", 0);  // null: a full query projection
  a.kv_lora_rank = required(f, "kv_lora_rank", "model.mla.kv_lora_rank");
  a.qk_nope_head_dim = required(f, "qk_nope_head_dim", "model.mla.qk_nope_head_dim");
  a.qk_rope_head_dim = required(f, "qk_rope_head_dim", "model.mla.qk_rope_head_dim");
  a.v_head_dim = required(f, "v_head_dim", "model.mla.v_head_dim");
  m.mla = a;
  lines.add_in("mla", "q_lora_rank", int_text(a.q_lora_rank), from(f, "q_lora_rank", "0 (a full query projection)"),
               at(f, "q_lora_rank"));
  lines.add_in("mla", "kv_lora_rank", int_text(a.kv_lora_rank), "kv_lora_rank", at(f, "kv_lora_rank"));
  lines.add_in("mla", "qk_nope_head_dim", int_text(a.qk_nope_head_dim), "qk_nope_head_dim", at(f, "qk_nope_head_dim"));
  lines.add_in("mla", "qk_rope_head_dim", int_text(a.qk_rope_head_dim), "qk_rope_head_dim", at(f, "qk_rope_head_dim"));
  lines.add_in("mla", "v_head_dim", int_text(a.v_head_dim), "v_head_dim", at(f, "v_head_dim"));
  deepseek_mtp(f, m, lines, warnings);
}

void read_hf_qwen_moe(const Fields& f, bool v2, core::ModelSpec& m, ModelLines& lines,
                      std::vector<std::string>& warnings) {
  core::MoeSpec e;
  e.experts = required(f, "num_experts", "model.moe.experts");
  e.top_k = required(f, "num_experts_per_tok", "model.moe.top_k");
  e.ffn_hidden = required(f, "moe_intermediate_size", "model.moe.ffn_hidden");
  e.every = optional(f, "decoder_sparse_step", "model.moe.every", 1);
  // Qwen2-MoE's one shared expert of shared_expert_intermediate_size beside the routed ones
  // (Qwen2MoeSparseMoeBlock.shared_expert; 0: none)
  if (v2) {
    e.shared_ffn_hidden = optional(f, "shared_expert_intermediate_size", "import.hf.shared_expert_intermediate_size", 5632);
    e.shared_experts = e.shared_ffn_hidden > 0 ? 1 : 0;
  }
  // Qwen{2,3}MoeDecoderLayer: dense where the layer is in mlp_only_layers; ptdsim's dense layers are the
  // first k (moe.first_k_dense)
  if (const auto* only = list_of(f, "mlp_only_layers")) {
    for (std::size_t i = 0; i < only->size(); ++i) {
      const Node& item = *(*only)[i];
      const long long layer = read_json_integer(item, "mlp_only_layers[" + std::to_string(i) + "]", "model.moe.first_k_dense");
      if (layer != static_cast<long long>(i))
        fail(item.mark, "mlp_only_layers must be the first k layers (0, 1, ..., k-1) to be modelled (moe.first_k_dense), "
                        "got layer " + int_text(layer) + " at position " + std::to_string(i));
    }
    e.first_k_dense = static_cast<int>(only->size());
  }
  m.moe = e;
  lines.add_moe("experts", int_text(e.experts), "num_experts", at(f, "num_experts"));
  lines.add_moe("top_k", int_text(e.top_k), "num_experts_per_tok", at(f, "num_experts_per_tok"));
  lines.add_moe("every", int_text(e.every), from(f, "decoder_sparse_step", "1"), at(f, "decoder_sparse_step"));
  lines.add_moe("ffn_hidden", int_text(e.ffn_hidden), "moe_intermediate_size", at(f, "moe_intermediate_size"));
  if (e.first_k_dense > 0)
    lines.add_moe("first_k_dense", int_text(e.first_k_dense), "mlp_only_layers", at(f, "mlp_only_layers"));
  if (v2) {
    const std::string from_field = from(f, "shared_expert_intermediate_size", "5632 (Qwen2MoeConfig's default)");
    lines.add_moe("shared_experts", int_text(e.shared_experts), "Qwen2MoeSparseMoeBlock's shared expert (" +
                  from_field + ")", at(f, "shared_expert_intermediate_size"));
    if (e.shared_experts > 0) {
      lines.add_moe("shared_ffn_hidden", int_text(e.shared_ffn_hidden), from_field,
                    at(f, "shared_expert_intermediate_size"));
      warnings.push_back("Qwen2-MoE's shared_expert_gate (a sigmoid of one " + int_text(m.hidden) +
                         "-wide projection a token, scaling the shared expert's output) is not counted");
    }
  }
  add_router(lines, core::Router::softmax, v2 ? "Qwen2-MoE's softmax router" : "Qwen3-MoE's softmax router");
}

void read_hf_glm4_moe(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings) {
  // DeepSeek-V3's MoE layers (DeepseekV3DecoderLayer: MoE from first_k_dense_replace on, the
  // sigmoid router with n_group / topk_group, shared experts of moe_intermediate_size) under GQA
  // attention; absent fields take Glm4MoeConfig's defaults
  const DeepseekExperts defaults{128, 8, 1408, 1, 1};
  core::MoeSpec e = deepseek_experts(f, defaults);
  e.router = core::Router::sigmoid;
  e.router_groups = optional(f, "n_group", "model.moe.router_groups", 1);
  e.router_group_topk = optional(f, "topk_group", "model.moe.router_group_topk", 1);
  m.moe = e;
  deepseek_expert_lines(f, e, defaults, "every layer past first_k_dense_replace is sparse", Mark{}, lines);
  add_router(lines, e.router, "Glm4MoeTopkRouter: DeepSeek-V3's sigmoid router");
  lines.add_moe("router_groups", int_text(e.router_groups), from(f, "n_group", "1"), at(f, "n_group"));
  lines.add_moe("router_group_topk", int_text(e.router_group_topk), from(f, "topk_group", "1"), at(f, "topk_group"));
  deepseek_mtp(f, m, lines, warnings);
  // Glm4MoeAttention: an RMSNorm over each head's query and key when use_qk_norm (default false)
  m.qk_norm = f.boolean("use_qk_norm", false);
  lines.add("qk_norm", detail::yaml_bool(m.qk_norm), from(f, "use_qk_norm", "false"), at(f, "use_qk_norm"));
  // rotary embeddings on partial_rotary_factor of each head (default 0.5): ptdsim ropes whole heads
  const Entry* rotary = f.get("partial_rotary_factor");
  if (!rotary || rotary->value->kind != Node::Kind::scalar || parse_number(rotary->value->text).value_or(0.5) != 1.0)
    warnings.push_back("partial_rotary_factor: GLM rotates part of each head's query and key; ptdsim times the "
                     "rotary embedding over whole heads (a memory-bound pass)");
}

void read_hf_gpt_oss(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>&) {
  core::MoeSpec e;
  e.experts = required(f, "num_local_experts", "model.moe.experts");
  e.top_k = required(f, "num_experts_per_tok", "model.moe.top_k");
  e.ffn_hidden = m.ffn_hidden;
  m.moe = e;
  lines.add_moe("experts", int_text(e.experts), "num_local_experts", at(f, "num_local_experts"));
  lines.add_moe("top_k", int_text(e.top_k), "num_experts_per_tok", at(f, "num_experts_per_tok"));
  lines.add_moe("every", "1", "every layer is sparse");
  lines.add_moe("ffn_hidden", int_text(e.ffn_hidden), "intermediate_size: each expert's", at(f, "intermediate_size"));
  add_router(lines, core::Router::softmax, "GPT-OSS: a softmax over the top-k router logits");

  core::SlidingWindow w;
  w.window = required(f, "sliding_window", "model.sliding_window.window");
  std::string pattern_from = "layer_types absent: transformers' GptOssConfig alternates sliding and full, sliding first";
  w.full_every = 2;
  if (const auto* types = list_of(f, "layer_types")) {
    std::vector<bool> full;
    for (std::size_t i = 0; i < types->size(); ++i) {
      const Node& item = *(*types)[i];
      if (item.kind != Node::Kind::scalar || (item.text != "sliding_attention" && item.text != "full_attention"))
        fail(item.mark, "layer_types[" + std::to_string(i) + "] must be sliding_attention or full_attention, got " +
                            describe(item));
      full.push_back(item.text == "full_attention");
    }
    w.full_every = full_every_from(f, "layer_types", full, m.layers);
    pattern_from = "layer_types";
  }
  m.sliding_window = w;
  lines.add_in("sliding_window", "window", int_text(w.window), "sliding_window", at(f, "sliding_window"));
  lines.add_in("sliding_window", "full_every", int_text(w.full_every), pattern_from, at(f, "layer_types"));
  m.attention_sinks = true;
  lines.add("attention_sinks", "true", "GPT-OSS: a learned sink logit per head");
}

void read_hf_llama4(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings) {
  core::MoeSpec e;
  e.experts = required(f, "num_local_experts", "model.moe.experts");
  e.top_k = required(f, "num_experts_per_tok", "model.moe.top_k");
  e.ffn_hidden = required(f, "intermediate_size", "model.moe.ffn_hidden");
  e.every = optional(f, "interleave_moe_layer_step", "model.moe.every", 1);
  // Llama4TextMoe: the routed experts and one shared expert of intermediate_size
  e.shared_experts = 1;
  e.shared_ffn_hidden = e.ffn_hidden;
  e.router = core::Router::sigmoid;
  if (const auto* layers = list_of(f, "moe_layers")) {
    // transformers' default: interleave_moe_layer_step - 1, then every step layers
    std::vector<bool> moe(static_cast<std::size_t>(m.layers), false);
    for (std::size_t i = 0; i < layers->size(); ++i) {
      const long long l = read_json_integer(*(*layers)[i], "moe_layers[" + std::to_string(i) + "]", "model.moe.first_k_dense");
      if (l >= m.layers) fail((*layers)[i]->mark, "moe_layers[" + std::to_string(i) + "] = " + int_text(l) +
                                                       " is past the " + int_text(m.layers) + " layers");
      moe[static_cast<std::size_t>(l)] = true;
    }
    for (int i = 0; i < m.layers; ++i)
      if (moe[static_cast<std::size_t>(i)] != ((i + 1) % e.every == 0))
        fail(at(f, "moe_layers"), "moe_layers is not modelled: ptdsim's MoE layers are those with (i + 1) % "
                                  "interleave_moe_layer_step == 0 (moe.every " + int_text(e.every) + ")");
  }
  m.moe = e;
  lines.add_moe("experts", int_text(e.experts), "num_local_experts", at(f, "num_local_experts"));
  lines.add_moe("top_k", int_text(e.top_k), "num_experts_per_tok", at(f, "num_experts_per_tok"));
  lines.add_moe("every", int_text(e.every), from(f, "interleave_moe_layer_step", "1"), at(f, "interleave_moe_layer_step"));
  lines.add_moe("ffn_hidden", int_text(e.ffn_hidden), "intermediate_size: each routed expert's", at(f, "intermediate_size"));
  lines.add_moe("shared_experts", "1", "Llama4TextMoe's shared expert");
  lines.add_moe("shared_ffn_hidden", int_text(e.shared_ffn_hidden), "intermediate_size", at(f, "intermediate_size"));
  add_router(lines, e.router, "Llama 4: a sigmoid of the chosen experts' logits");

  // Llama4TextL2Norm of each head's query and key on the RoPE layers: x·rsqrt(mean(x²) + eps) with
  // no weights, on 3 layers in 4, where model.qk_norm counts Qwen3's learned norm on every layer,
  // so said rather than taken for it
  if (f.boolean("use_qk_norm", true))
    warnings.push_back("use_qk_norm: Llama 4's L2 norm of each head's query and key on the RoPE layers (Llama4TextL2Norm, "
                       "an RMS norm without weights) is not timed, nor its saved inputs counted: a memory-bound pass "
                       "over the queries and keys");
  // chunked attention on the RoPE layers, global attention on the NoPE ones (no_rope_layers 0):
  // a query sees the keys of its chunk, which ptdsim counts as a window of the chunk
  if (const auto chunk = f.integer_as("attention_chunk_size", "model.sliding_window.window")) {
    core::SlidingWindow w;
    w.window = static_cast<int>(*chunk);
    // Llama4TextConfig: an absent or empty no_rope_layers is one NoPE (global) layer in
    // no_rope_layer_interval, the layers i with (i + 1) % interval == 0: ptdsim's full_every, or
    // none (0) when the interval passes the last layer; a given list needs an entry per layer and
    // may hold more, which no layer reads
    const auto interval = f.integer_as("no_rope_layer_interval", "import.hf.no_rope_layer_interval");
    const long long period = interval.value_or(4);
    w.full_every = period > m.layers ? 0 : static_cast<int>(period);
    std::string pattern_from = !interval ? "every 4th layer global (transformers' no_rope_layer_interval 4)"
                               : w.full_every == 0
                                   ? "no_rope_layer_interval " + int_text(period) + " passes the last layer: none global"
                                   : "no_rope_layer_interval: one layer in " + int_text(period) + " global (NoPE)";
    Mark pattern_at = at(f, "no_rope_layer_interval");
    if (const auto* rope = list_of(f, "no_rope_layers"); rope && !rope->empty()) {
      if (static_cast<long long>(rope->size()) < m.layers)
        fail(at(f, "no_rope_layers"), "no_rope_layers has " + std::to_string(rope->size()) +
                                          " entries but num_hidden_layers is " + int_text(m.layers) +
                                          ": transformers indexes it by layer");
      std::vector<bool> full;
      for (long long i = 0; i < m.layers; ++i)
        full.push_back(read_json_integer(*(*rope)[static_cast<std::size_t>(i)], "no_rope_layers[" + std::to_string(i) + "]",
                                         "import.hf.no_rope_layers[]") == 0);
      w.full_every = full_every_from(f, "no_rope_layers", full, m.layers);
      pattern_from = "no_rope_layers: the NoPE layers attend globally";
      pattern_at = at(f, "no_rope_layers");
    } else {
      pattern_from = std::string(rope ? "no_rope_layers empty, which transformers takes as absent: "
                                      : "no_rope_layers absent: ") +
                     pattern_from;
    }
    m.sliding_window = w;
    lines.add_in("sliding_window", "window", int_text(w.window),
                 "attention_chunk_size: chunked attention, counted as a window of the chunk", at(f, "attention_chunk_size"));
    lines.add_in("sliding_window", "full_every", int_text(w.full_every), pattern_from, pattern_at);
    warnings.push_back("Llama 4's chunked attention is timed as a sliding window of attention_chunk_size (the same FLOPs "
                       "in ptdsim's count, where a causal query is charged every key it may see)");
  }
}

const std::vector<std::string>& hf_moe_read_keys() {
  static const std::vector<std::string> keys{
      "n_routed_experts",  "moe_intermediate_size", "n_shared_experts", "first_k_dense_replace", "moe_layer_freq",
      "scoring_func",      "topk_method",           "n_group",          "topk_group",            "q_lora_rank",
      "kv_lora_rank",      "qk_nope_head_dim",      "qk_rope_head_dim", "v_head_dim",            "num_nextn_predict_layers",
      "num_experts",       "decoder_sparse_step",   "mlp_only_layers",  "layer_types",           "interleave_moe_layer_step",
      "moe_layers",        "attention_chunk_size",  "no_rope_layers",   "intermediate_size_mlp", "routed_scaling_factor",
      "text_config",       "use_qk_norm",           "shared_expert_intermediate_size", "qkv_bias",
      "partial_rotary_factor", "no_rope_layer_interval"};
  return keys;
}

}  // namespace ptdsim::io::detail
