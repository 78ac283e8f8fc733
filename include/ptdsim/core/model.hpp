#pragma once
#include <optional>
#include <string>

namespace ptdsim::core {

enum class Mlp { gelu, swiglu };
enum class Norm { layernorm, rmsnorm };
enum class Position { learned, rope };
// How the router turns its logits into the top-k experts' weights: a softmax over all experts
// (Mixtral, Qwen3), or a sigmoid per expert normalised over the chosen ones (DeepSeek-V3).
enum class Router { softmax, sigmoid };

struct MoeSpec {
  int experts = 0;
  int top_k = 1;
  int every = 1;       // an MoE layer every `every` layers (layer index i is MoE when (i+1) % every == 0)
  int ffn_hidden = 0;  // per expert; 0 means the model's ffn_hidden
  int shared_experts = 0;     // experts every token passes through, in every MoE layer (DeepSeek, Llama 4)
  int shared_ffn_hidden = 0;  // one shared expert's FFN width; 0 means ffn_hidden (the routed experts')
  int first_k_dense = 0;      // the first k layers are dense MLPs of the model's ffn_hidden
  Router router = Router::softmax;
  int router_groups = 0;      // group-limited routing: experts in this many groups (0: none)
  int router_group_topk = 0;  // ... of which a token's experts come from the best this many
};

// Multi-head Latent Attention (DeepSeek-V2/V3): queries through a rank-q_lora_rank bottleneck (0:
// a full projection), keys and values from one rank-kv_lora_rank latent plus a shared rope key of
// qk_rope_head_dim; each of the `heads` heads has a qk_nope_head_dim + qk_rope_head_dim query/key
// and a v_head_dim value. Without it attention is multi-head or grouped-query by heads/kv_heads.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  int qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

// Sliding-window attention (Mistral, GPT-OSS, Gemma): each query sees its `window` latest keys.
// full_every > 0: layer i keeps full attention when (i+1) % full_every == 0 (GPT-OSS alternates, 2);
// 0: every layer is windowed.
struct SlidingWindow {
  int window = 0;
  int full_every = 0;
};

// A decoder-only transformer, as in models/*.yaml (interface.md "Model file").
struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // == heads unless grouped-query attention
  int ffn_hidden = 0;  // default 4*hidden
  int vocab = 0;
  Mlp mlp = Mlp::gelu;
  Norm norm = Norm::layernorm;
  Position position = Position::learned;
  int max_seq_len = 2048;  // rows of a learned position table
  bool tied_embeddings = false;
  bool bias = true;  // linear and norm biases (GPT, BLOOM); default true for layernorm, false for rmsnorm
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::optional<SlidingWindow> sliding_window;
  bool attention_sinks = false;  // a learned sink logit per head in every softmax (GPT-OSS)
  // A norm over each head's query and key after the QKV projection (Qwen3's q_norm and k_norm,
  // Megatron-Core's --qk-layernorm): head_dim weights each, two memory-bound kernels a pass
  bool qk_norm = false;
  // Whether the heads' norms run: not under MLA, whose latents have norms of their own (check()
  // refuses the pair; the engines read this so an unchecked model is not counted twice).
  bool head_qk_norms() const { return qk_norm && !mla; }
  // Multi-token prediction modules (DeepSeek-V3): each one more transformer layer (the kind of the
  // layer that would follow the last), a projection of 2h to h and three norms, on the last
  // pipeline stage, sharing the embedding and the output head; each predicts one token further.
  int mtp_layers = 0;
  int attention_head_dim = 0;  // 0: hidden / heads (Qwen3 and GPT-OSS set their own)

  int head_dim() const { return attention_head_dim > 0 ? attention_head_dim : hidden / heads; }
  // A head's query/key and value widths (MLA: qk_nope + qk_rope, and v_head_dim)
  int qk_head_dim() const { return mla ? mla->qk_head_dim() : head_dim(); }
  int v_head_dim() const { return mla ? mla->v_head_dim : head_dim(); }
  // All heads' query width, one of K or V's width (grouped-query: kv_heads of them), and the width
  // of the attention output the output projection reads. For MHA/GQA without head_dim, q_width()
  // is hidden and kv_width() hidden * kv_heads / heads.
  double q_width() const { return static_cast<double>(heads) * qk_head_dim(); }
  double kv_width() const { return static_cast<double>(kv_heads) * head_dim(); }
  double attention_out_width() const { return static_cast<double>(heads) * v_head_dim(); }
  // Layer index i counts the decoder layers 0..layers-1, then the MTP modules' layers.
  bool is_moe_layer(int layer_index) const {
    return moe && layer_index >= moe->first_k_dense && (layer_index + 1) % moe->every == 0;
  }
  bool is_windowed_layer(int layer_index) const {
    return sliding_window && (sliding_window->full_every == 0 || (layer_index + 1) % sliding_window->full_every != 0);
  }
  // The share of the decoder layers with sliding-window attention (0 without sliding_window).
  double windowed_fraction() const {
    if (!sliding_window || layers < 1) return 0;
    if (sliding_window->full_every == 0) return 1;
    return static_cast<double>(layers - layers / sliding_window->full_every) / layers;
  }
  int expert_ffn_hidden() const { return moe && moe->ffn_hidden > 0 ? moe->ffn_hidden : ffn_hidden; }
  // The decoder layers is_moe_layer counts: i + 1 a multiple of `every`, i at least first_k_dense.
  int moe_layer_count() const { return moe ? layers / moe->every - moe->first_k_dense / moe->every : 0; }
};

// Megatron-LM's padded vocabulary (_vocab_size_with_padding): the vocabulary rounded up to a multiple
// of --make-vocab-size-divisible-by times tp.
inline long long megatron_padded_vocab(long long vocab, long long divisible_by, long long tp) {
  const long long multiple = divisible_by * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

}  // namespace ptdsim::core
