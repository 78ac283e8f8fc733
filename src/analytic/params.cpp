#include "ptdsim/analytic/params.hpp"

#include "ptdsim/core/split.hpp"
#include "repeated_sum.hpp"

namespace ptdsim::analytic {
namespace {
double norm_of(const core::ModelSpec& m, double width) {
  return m.norm == core::Norm::layernorm ? 2 * width : width;
}
}  // namespace

AttentionParams attention_param_split(const core::ModelSpec& m) {
  const double h = m.hidden;
  AttentionParams a;
  if (m.mla) {
    // DeepSeek-V2/V3 (modeling_deepseek.py): W_q (or W_qa, its norm and W_qb), W_kva to the latent
    // and the shared rope key, the latent's norm, W_kvb to every head's nope key and value, W_o.
    // Megatron-Core keeps the down projections and the latents' norms whole on every TP rank.
    const core::MlaSpec& l = *m.mla;
    const double heads = m.heads, q = l.q_lora_rank, kv = l.kv_lora_rank;
    if (q > 0) {
      a.replicated += h * q + norm_of(m, q);
      a.split += q * heads * l.qk_head_dim();
    } else {
      a.split += h * heads * l.qk_head_dim();
    }
    a.replicated += h * (kv + l.qk_rope_head_dim) + norm_of(m, kv);
    a.split += kv * heads * (l.qk_nope_head_dim + l.v_head_dim) + heads * l.v_head_dim * h;
  } else {
    const double q = m.q_width(), kv = m.kv_width();
    a.split = h * q + 2 * h * kv + q * h;  // Q, K, V; O
    if (m.bias) {
      a.split += q + 2 * kv;  // q, k, v biases
      a.replicated += h;      // the row-parallel output bias
    }
  }
  if (m.attention_sinks) a.split += m.heads;  // one sink logit per head
  if (m.head_qk_norms()) a.replicated += 2 * norm_of(m, m.head_dim());  // q_norm and k_norm, shared by the heads
  return a;
}

double attention_params(const core::ModelSpec& m) { return attention_param_split(m).total(); }

double mlp_params(const core::ModelSpec& m, int ffn) {
  const double h = m.hidden, f = ffn;
  const bool swiglu = m.mlp == core::Mlp::swiglu;
  double p = (swiglu ? 3 : 2) * h * f;
  if (m.bias) p += (swiglu ? 2 : 1) * f + h;
  return p;
}

double norm_params(const core::ModelSpec& m) {
  return m.norm == core::Norm::layernorm ? 2.0 * m.hidden : 1.0 * m.hidden;
}

double shared_expert_params(const core::ModelSpec& m) {
  if (!m.moe || m.moe->shared_experts == 0) return 0;
  return m.moe->shared_experts * mlp_params(m, m.moe->shared_ffn_hidden);
}

double layer_mlp_params(const core::ModelSpec& m, int layer_index) {
  if (!m.is_moe_layer(layer_index)) return mlp_params(m, m.ffn_hidden);
  const double e = m.moe->experts;
  return e * mlp_params(m, m.expert_ffn_hidden()) + m.hidden * e + shared_expert_params(m);
}

double mtp_extra_params(const core::ModelSpec& m) {
  const double h = m.hidden;
  return 2 * h * h + 3 * norm_params(m);  // eh_proj [2h -> h]; enorm, hnorm, the module's final norm
}

double layer_params(const core::ModelSpec& m, int layer_index) {
  return attention_params(m) + layer_mlp_params(m, layer_index) + 2 * norm_params(m);
}

double embedding_params(const core::ModelSpec& m) {
  double p = static_cast<double>(m.vocab) * m.hidden;
  if (m.position == core::Position::learned) p += static_cast<double>(m.max_seq_len) * m.hidden;
  return p;
}

double head_params(const core::ModelSpec& m) {
  return (m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * m.hidden) + norm_params(m);
}

double total_params(const core::ModelSpec& m) {
  double p = embedding_params(m) + head_params(m);
  // every dense layer holds the same count: computed once, added layer by layer as before
  const double dense = attention_params(m) + mlp_params(m, m.ffn_hidden) + 2 * norm_params(m);
  if (!m.moe && m.mtp_layers == 0) return detail::repeated_sum(p, dense, m.layers);
  // the decoder layers, then each MTP module's layer and its projection and norms
  for (int i = 0; i < m.layers + m.mtp_layers; ++i) p += m.is_moe_layer(i) ? layer_params(m, i) : dense;
  return p + m.mtp_layers * mtp_extra_params(m);
}

double active_params(const core::ModelSpec& m) {
  if (!m.moe) return total_params(m);
  double p = total_params(m);
  const double unused = (m.moe->experts - m.moe->top_k) * mlp_params(m, m.expert_ffn_hidden());
  for (int i = 0; i < m.layers + m.mtp_layers; ++i)
    if (m.is_moe_layer(i)) p -= unused;
  return p;
}

namespace {
// Each middle rank (neither end nor next to the first) whose chunks hold rank r - 1's layers,
// chunk for chunk: their stage sums then agree too. (The stages start unmarked.)
void mark_repeats(PipelineLayers& L) {
  const int p = static_cast<int>(L.stages.size()), V = static_cast<int>(L.chunks.size());
  const VirtualStage* c = L.chunks.data();
  StageLayers* st = L.stages.data();
  for (int r = 2; r < p - 1; ++r) {
    int i = r;
    while (i < V && c[i].layers == c[i - 1].layers && c[i].moe_layers == c[i - 1].moe_layers) i += p;
    st[r].repeats_previous = i >= V;
  }
}
}  // namespace

PipelineLayers pipeline_layers(const core::Scenario& s) {
  PipelineLayers out;
  pipeline_layers(s, out);
  return out;
}

void pipeline_layers(const core::Scenario& s, PipelineLayers& out) {
  const auto split = core::pipeline_split(s);
  out.chunks.assign(split.layers.size(), VirtualStage{});
  int first = 0;
  for (std::size_t i = 0; i < out.chunks.size(); ++i) {
    VirtualStage& c = out.chunks[i];
    c.layer_first = first;
    c.layers = split.layers[i];
    if (s.model.moe)
      for (int l = first; l < first + c.layers; ++l) c.moe_layers += s.model.is_moe_layer(l);
    first += c.layers;
  }
  // Megatron-Core builds the MTP modules on the last pipeline stage, after its decoder layers
  if (s.model.mtp_layers > 0 && !out.chunks.empty()) {
    VirtualStage& last = out.chunks.back();
    for (int k = 0; k < s.model.mtp_layers; ++k) last.moe_layers += s.model.is_moe_layer(s.model.layers + k);
    last.layers += s.model.mtp_layers;
  }
  const int p = s.parallel.pp;
  out.stages.assign(p, StageLayers{});
  // virtual stage i lives on rank i % p (counted, not divided: a division per chunk)
  for (std::size_t i = 0, r = 0; i < out.chunks.size(); ++i, r = r + 1 == static_cast<std::size_t>(p) ? 0 : r + 1) {
    out.stages[r].layers += out.chunks[i].layers;
    out.stages[r].moe_layers += out.chunks[i].moe_layers;
  }
  mark_repeats(out);
}

std::vector<VirtualStage> virtual_stages(const core::Scenario& s) { return pipeline_layers(s).chunks; }

std::vector<StageLayers> stage_layers(const core::Scenario& s) { return pipeline_layers(s).stages; }

GpuParams layer_params_per_gpu(const core::Scenario& s, bool moe_layer) {
  const auto& m = s.model;
  const double t = s.parallel.tp, h = m.hidden;
  // Row-parallel biases (attention output, MLP down projection) and the norms are replicated over
  // the TP group; every weight matrix and column-parallel bias is split t ways.
  const double replicated_bias = m.bias ? h : 0.0;
  GpuParams g;
  const AttentionParams a = attention_param_split(m);
  g.dense = a.split / t + a.replicated + 2 * norm_params(m);
  if (!moe_layer || !m.moe) {  // a dense model has no MoE layer to ask about
    g.dense += (mlp_params(m, m.ffn_hidden) - replicated_bias) / t + replicated_bias;
  } else {
    const double local_experts = static_cast<double>(m.moe->experts) / s.parallel.ep;
    const double expert = mlp_params(m, m.expert_ffn_hidden());
    const double et = s.parallel.expert_tp();  // each expert split over the expert-TP group
    g.expert = local_experts * ((expert - replicated_bias) / et + replicated_bias);
    g.dense += h * m.moe->experts;  // the router, replicated
    // shared experts: a dense MLP of each, split over TP, on every expert-parallel rank
    if (m.moe->shared_experts > 0)
      g.dense += m.moe->shared_experts * ((mlp_params(m, m.moe->shared_ffn_hidden) - replicated_bias) / t + replicated_bias);
  }
  return g;
}

GpuParams stage_params_per_gpu(const core::Scenario& s, int stage, const StageLayers& layers) {
  const GpuParams moe = layers.moe_layers > 0 ? layer_params_per_gpu(s, true) : GpuParams{};
  return stage_params_per_gpu(s, stage, layers, layer_params_per_gpu(s, false), moe);
}

GpuParams stage_params_per_gpu(const core::Scenario& s, int stage, const StageLayers& layers,
                               const GpuParams& dense, const GpuParams& moe) {
  const auto& m = s.model;
  const double t = s.parallel.tp, h = m.hidden, V = m.vocab;
  const int p = s.parallel.pp;
  GpuParams g;
  g.dense = layers.dense_layers() * dense.dense;
  if (layers.moe_layers > 0) {
    g.dense += layers.moe_layers * moe.dense;
    g.expert = layers.moe_layers * moe.expert;
  }
  if (stage == 0) {  // vocabulary-parallel embedding; the position table is replicated
    g.dense += V * h / t;
    if (m.position == core::Position::learned) g.dense += static_cast<double>(m.max_seq_len) * h;
  }
  if (stage == p - 1) {
    g.dense += norm_params(m);
    // A tied head shares the embedding when both sit on one GPU; with pp > 1 Megatron keeps a copy
    // on the last stage and all-reduces the two gradients.
    if (!m.tied_embeddings || p > 1) g.dense += V * h / t;
    // the MTP modules' projections (column-parallel) and norms; they read the embedding, which
    // Megatron-Core keeps a copy of on the last stage (as for a tied head) when pp > 1
    if (m.mtp_layers > 0) {
      g.dense += m.mtp_layers * (2 * h * h / t + 3 * norm_params(m));
      if (p > 1 && !m.tied_embeddings) g.dense += V * h / t;
    }
  }
  return g;
}

GpuParams stage_params_per_gpu(const core::Scenario& s, int stage) {
  return stage_params_per_gpu(s, stage, stage_layers(s)[stage]);
}

}  // namespace ptdsim::analytic
