#pragma once
#include <vector>

#include "ptdsim/core/model.hpp"
#include "ptdsim/core/scenario.hpp"

// Parameter counts (docs/analytic.md "Parameters"). Counts are plain numbers of parameters.
namespace ptdsim::analytic {

// One attention block: Q and O are h*h, K and V h*(h*k/a) (grouped-query attention), plus the
// four biases when the model has them; with head_dim, Q and O are h*(a*d), K and V h*(k*d). MLA:
// its down and up projections, the latents' norms and O (docs/analytic.md "Parameters"). Attention
// sinks add a logit per head.
double attention_params(const core::ModelSpec& m);
// The same split by how Megatron-Core places it over TP: `split` divided over the TP ranks,
// `replicated` whole on each (the row-parallel output bias; MLA's down projections and norms).
struct AttentionParams {
  double split = 0, replicated = 0;
  double total() const { return split + replicated; }
};
AttentionParams attention_param_split(const core::ModelSpec& m);
// The shared experts of one MoE layer (0 without them).
double shared_expert_params(const core::ModelSpec& m);
// One MTP module beside its transformer layer: the 2h -> h projection and three norms.
double mtp_extra_params(const core::ModelSpec& m);
// One dense MLP of ffn width f: gelu 2*h*f, swiglu 3*h*f, plus biases (f + h, or 2f + h).
double mlp_params(const core::ModelSpec& m, int ffn);
// One norm: layernorm 2h (scale, bias), rmsnorm h.
double norm_params(const core::ModelSpec& m);
// The MLP part of layer i: a dense MLP, or experts * expert MLP + router h*experts + the shared
// experts on MoE layers.
double layer_mlp_params(const core::ModelSpec& m, int layer_index);
// Transformer layer i: attention + MLP part + two norms.
double layer_params(const core::ModelSpec& m, int layer_index);
// Input embedding V*h plus learned positions max_seq_len*h.
double embedding_params(const core::ModelSpec& m);
// LM head V*h (0 when tied) plus the final norm.
double head_params(const core::ModelSpec& m);
// The whole model, each tied matrix counted once, with its MTP modules (their layer, projection
// and norms; they share the embedding and the head).
double total_params(const core::ModelSpec& m);
// Parameters touched per token (MoE: top_k of the experts and the shared ones); equals
// total_params for dense models.
double active_params(const core::ModelSpec& m);

// The transformer layers of each virtual stage, in pipeline order (core::pipeline_split): rank r
// holds virtual stages r, r+p, r+2p, ... (Megatron's interleaved assignment). The last virtual
// stage also holds the MTP modules' layers (model.mtp_layers), after its decoder layers.
struct VirtualStage {
  int layer_first = 0;
  int layers = 0;
  int moe_layers = 0;
  int dense_layers() const { return layers - moe_layers; }
};
std::vector<VirtualStage> virtual_stages(const core::Scenario& s);

// Which transformer layers a pipeline rank holds over all its chunks: `layers` in all, `moe_layers`
// of them MoE.
struct StageLayers {
  int layers = 0;
  int moe_layers = 0;
  // PipelineLayers::repeats_previous, set once by pipeline_layers (three readers ask per stage)
  bool repeats_previous = false;
  int dense_layers() const { return layers - moe_layers; }
};
std::vector<StageLayers> stage_layers(const core::Scenario& s);

// Both at once, from one core::pipeline_split: what step_work and the memory model read of the
// split (the sweep keeps one per pp and vpp).
struct PipelineLayers {
  std::vector<VirtualStage> chunks;  // pp * vpp, in pipeline order
  std::vector<StageLayers> stages;   // pp
  // Whether pipeline rank r, neither end nor next to the first, holds the layers of rank r - 1,
  // chunk for chunk: then its work and memory are r - 1's number for number (only the ends hold the
  // embedding and the head), which step_work and stage_memory copy instead of computing again.
  bool repeats_previous(int r) const { return stages[static_cast<std::size_t>(r)].repeats_previous; }
};
PipelineLayers pipeline_layers(const core::Scenario& s);
// The same into `out`, whose storage is reused (nothing of what it held is read).
void pipeline_layers(const core::Scenario& s, PipelineLayers& out);

// Parameters one GPU of a pipeline stage holds after the TP, PP and EP split, before ZeRO.
// `expert` is kept apart because its ZeRO/data-parallel group is dp*cp/ep, not dp*cp.
struct GpuParams {
  double dense = 0;   // attention, dense MLPs, norms, routers, embedding, head
  double expert = 0;  // the experts this GPU holds
  double total() const { return dense + expert; }
};
GpuParams stage_params_per_gpu(const core::Scenario& s, int stage, const StageLayers& layers);
GpuParams stage_params_per_gpu(const core::Scenario& s, int stage);
// The same with one dense and one MoE layer's parameters given (layer_params_per_gpu's).
GpuParams stage_params_per_gpu(const core::Scenario& s, int stage, const StageLayers& layers,
                               const GpuParams& dense_layer, const GpuParams& moe_layer);

// One layer's parameters on one GPU (TP split; experts split over ep and tp).
GpuParams layer_params_per_gpu(const core::Scenario& s, bool moe_layer);

}  // namespace ptdsim::analytic
