#pragma once
#include <optional>
#include <string>

namespace ptdsim::core {

enum class Mlp { gelu, swiglu };
enum class Norm { layernorm, rmsnorm };
enum class Position { learned, rope };

struct MoeSpec {
  int experts = 0;
  int top_k = 1;
  int every = 1;       // an MoE layer every `every` layers (layer index i is MoE when (i+1) % every == 0)
  int ffn_hidden = 0;  // per expert; 0 means the model's ffn_hidden
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

  int head_dim() const { return hidden / heads; }
  bool is_moe_layer(int layer_index) const {
    return moe && (layer_index + 1) % moe->every == 0;
  }
  int expert_ffn_hidden() const { return moe && moe->ffn_hidden > 0 ? moe->ffn_hidden : ffn_hidden; }
};

}  // namespace ptdsim::core
