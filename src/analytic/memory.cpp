#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/allocator.hpp"
#include "ptdsim/analytic/offload.hpp"
#include "ptdsim/analytic/op_checkpoint.hpp"

#include <algorithm>

#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/memory_ops.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/schedule.hpp"

namespace ptdsim::analytic {
namespace {

bool full_width(core::Precision p) { return p == core::Precision::fp32 || p == core::Precision::tf32; }

// The routed experts' tokens times their width on one GPU, one micro-batch: top_k copies of each
// token, the busiest expert's rank holding `busiest` x the mean; over t after the sequence-parallel
// tokens are gathered over etp (each expert's width split etp ways), else over etp
double routed_units(const core::Scenario& s) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const double t = p.tp, local = static_cast<double>(s.training.seq_len) / p.cp;
  const double moe_share = p.sequence_parallel && p.tp > 1 ? 1.0 : t / p.expert_tp();
  return m.moe->top_k * local * s.training.micro_batch * m.expert_ffn_hidden() * s.busiest_expert() * moe_share;
}

bool recomputes_moe_block(const core::Scenario& s, core::Recompute recompute) {
  return recompute == core::Recompute::full || s.training.recomputes_under(recompute, core::RecomputeModule::moe);
}

}  // namespace

// Activations of one layer, one micro-batch, one GPU, for a given recompute mode; bytes at 16 bits
// (Korthikanti et al. 2022, section 4.1, term by term):
//   kept whole on every TP rank unless SP:  LN1 input 2sbh, QKV input 2sbh, attention dropout mask sbh,
//                                           LN2 input 2sbh, MLP input 2sbh, MLP dropout mask sbh = 10sbh
//   split over TP:  Q 2sbh, K and V 2sbh*k/a each, output-projection input 2sbh,
//                   MLP gelu: 2sbf + 2sbf (activation input and output) = 16sbh at f = 4h;
//                   swiglu: gate 2sbf, up 2sbf, product 2sbf
//                   attention core: scores-softmax output 2as^2b, its dropout mask as^2b,
//                   dropout output 2as^2b = 5as^2b (gone with selective recompute or flash attention)
//   full recompute keeps only the layer input: 2sbh.
// FP8 (TransformerEngine) keeps the inputs its GEMMs need for the weight gradients as the FP8
// copies it cast them to, one byte instead of two: the QKV and MLP inputs (2sbh of the
// replicated part), the output-projection input (sbh) and the second MLP GEMM's input (sbf).
// Context parallel: each rank holds s/c of the queries (and of every sbh term); its scores span
// the whole key length, (s/c)*s.
double layer_activation_bytes(const core::Scenario& s, bool moe_layer, core::Recompute recompute) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const double t = p.tp, c = p.cp;
  const double b = s.training.micro_batch, seq = s.training.seq_len, local = seq / c;
  const double h = m.hidden, a = m.heads;
  const double sbh = local * b * h;
  const double width = full_width(s.training.precision) ? 2.0 : 1.0;
  const double sp = p.sequence_parallel ? t : 1.0;
  if (recompute == core::Recompute::full) return width * 2 * sbh / sp;
  if (recompute == core::Recompute::op) return op_checkpoint_saved_bytes(s);

  double replicated = 10 * sbh;
  const double mlp_per_f = m.mlp == core::Mlp::swiglu ? 6.0 : 4.0;  // bytes per token per ffn unit
  double split = 0;
  const double sb = local * b;
  // Megatron-Core's recompute modules (training.recompute_modules) under selective recompute:
  // a module recomputed keeps only its input (docs/analytic.md "Recompute modules")
  const auto again = [&](core::RecomputeModule x) { return s.training.recomputes_under(recompute, x); };
  if (m.mla) {
    // MLA (Megatron-Core): the latents' norm inputs and the up projections' inputs, on the rank's
    // own tokens; then every local head's query and key (d_qk), value and output (d_v). With
    // mla_up_proj recomputed the queries, keys and values are freed after the attention core
    // (qkv_up_checkpoint.discard_output_and_register_recompute) and only its output stays.
    const core::MlaSpec& l = *m.mla;
    replicated += 2 * sb * (2.0 * l.q_lora_rank + 2.0 * l.kv_lora_rank + l.qk_rope_head_dim);
    split = again(core::RecomputeModule::mla_up_proj) ? 2 * sb * m.heads * l.v_head_dim
                                                      : 2 * sb * m.heads * (2.0 * l.qk_head_dim() + 2.0 * l.v_head_dim);
  } else {
    // the attention core keeps the keys and values it ran on: every query head's copy where the
    // model code repeats them before SDPA (training.repeat_kv, torchtitan's repeat_kv), which
    // materialises the expanded tensor
    const double kv_width = s.training.repeat_kv ? static_cast<double>(m.heads) * m.head_dim() : m.kv_width();
    split = 2 * sb * (m.q_width() + 2 * kv_width + m.attention_out_width());
  }
  // the query and key norms keep their inputs, the projection's query and key outputs, beside the
  // normed (and rotated) copies the attention core keeps
  if (m.head_qk_norms()) split += 2 * sb * (m.q_width() + m.kv_width());
  // tokens through the MLP times its width: top_k copies of each through an expert, the busiest
  // expert's rank holding `busiest` x the mean; over t after the sequence-parallel tokens are
  // gathered over etp (each expert's width split etp ways), else over etp; and every token through
  // the shared experts, split over TP as a dense MLP
  const double routed_f = moe_layer ? routed_units(s) : 0.0;
  const double shared_f = moe_layer && m.moe->shared_experts > 0
                              ? local * b * (static_cast<double>(m.moe->shared_experts) * m.moe->shared_ffn_hidden)
                              : 0.0;
  const double dense_f = moe_layer ? 0.0 : local * b * m.ffn_hidden;
  // a recomputed MoE block (moe) or dense MLP (mlp) keeps only its input, which the layer's
  // replicated terms hold already: its GEMMs' inputs, activations and the permuted tokens go.
  // moe_act drops the routed experts' activation output, fc2's input (2 bytes a unit; fc2 keeps the
  // original, not an FP8 copy: set_save_original_input); shared_experts keeps only the shared
  // experts' input, the norm's output the replicated terms hold
  const bool mlp_again = again(moe_layer ? core::RecomputeModule::moe : core::RecomputeModule::mlp);
  const bool act_again = moe_layer && again(core::RecomputeModule::moe_act);
  const bool shared_again = moe_layer && again(core::RecomputeModule::shared_experts);
  const double fc2_inputs_f = dense_f + (act_again ? 0.0 : routed_f) + (shared_again ? 0.0 : shared_f);
  if (!mlp_again) {
    split += mlp_per_f * (dense_f + routed_f + (shared_again ? 0.0 : shared_f)) - (act_again ? 2 * routed_f : 0.0);
    // the permuted copy of the tokens the dispatch keeps for the backward pass
    if (moe_layer) split += m.moe->top_k * 2 * sbh;
  }
  // layernorm drops a norm's output (the next GEMM's input, 2sbh) where the norm is a module of its
  // own: MLA's input norm, an MoE layer's pre-MLP norm (compute.cpp recomputed_share)
  const bool qkv_input_again = m.mla && again(core::RecomputeModule::layernorm);
  const bool mlp_input_again = moe_layer && again(core::RecomputeModule::layernorm);
  replicated -= 2 * sbh * ((qkv_input_again ? 1 : 0) + (mlp_input_again ? 1 : 0));
  double scores = 5 * a * local * seq * b;
  if (again(core::RecomputeModule::core_attn) || s.training.flash_attention) scores = 0;
  // FP8 keeps as one byte what the replicated QKV and MLP inputs, the output projection's input and
  // fc2's inputs hold at two, where they are still held
  double fp8_saved = 0;
  if (s.training.precision == core::Precision::fp8) {
    const double inputs = (qkv_input_again ? 0 : 1) + (mlp_again || mlp_input_again ? 0 : 1);
    fp8_saved = inputs * sbh / sp + (sbh + (mlp_again ? 0.0 : fc2_inputs_f)) / t;
  }
  return width * (replicated / sp + (split + scores) / t) - fp8_saved - offloaded_activation_bytes(s, moe_layer, recompute);
}

// Megatron-Core's fine-grained activation offloading moves a module's saved input: expert_fc1 the
// permuted tokens the routed experts' fc1 keeps (k·2sbh, the dispatch's copy above; under MXFP8 fc1
// keeps its quantised copy instead, k·sbh and a scale byte every 32, and that is what moves:
// experts.py saves the original only for the other recipes), moe_act the activation's input, fc1's
// output (4 bytes a routed unit under swiglu, gate and up; 2 under gelu). `held`: what the tool's
// activations hold of them; `moved`: what the copies carry.
namespace {
struct Offloaded {
  double held = 0, moved = 0;
};
Offloaded offloaded(const core::Scenario& s, bool moe_layer, core::Recompute recompute) {
  const core::TrainingSpec& tr = s.training;
  if (!moe_layer || tr.offload_modules == 0 || recompute == core::Recompute::op || recomputes_moe_block(s, recompute))
    return {};
  const double t = s.parallel.tp;
  const double sbh = static_cast<double>(tr.seq_len) / s.parallel.cp * tr.micro_batch * s.model.hidden;
  const double width = full_width(tr.precision) ? 2.0 : 1.0;
  const double act_input = s.model.mlp == core::Mlp::swiglu ? 4.0 : 2.0;
  const bool mx = tr.precision == core::Precision::fp8 && tr.fp8_recipe == core::Fp8Recipe::mxfp8;
  Offloaded o;
  if (tr.offloads(core::OffloadModule::expert_fc1)) {
    o.held += s.model.moe->top_k * 2 * sbh;
    o.moved += s.model.moe->top_k * (mx ? 33.0 / 32 : 2.0) * sbh;
  }
  if (tr.offloads(core::OffloadModule::moe_act)) {
    o.held += act_input * routed_units(s);
    o.moved += act_input * routed_units(s);
  }
  return {width * o.held / t, width * o.moved / t};
}
}  // namespace

double offloaded_activation_bytes(const core::Scenario& s, bool moe_layer, core::Recompute recompute) {
  return offloaded(s, moe_layer, recompute).held;
}

double offload_copy_bytes(const core::Scenario& s, bool moe_layer, core::Recompute recompute) {
  return offloaded(s, moe_layer, recompute).moved;
}

// ZeRO-3's gathered units and gradient buffers at the peak (docs/analytic.md "Memory"): the unit
// computing and the units prefetched ahead of it (plan.hpp zero3_pass), or every unit of the stage
// when they stay gathered from forward to backward; one unit's unsharded gradient, in the compute
// precision and, when it differs, again in the reduce dtype; DeepSpeed's contiguous reduce bucket
// (training.dp_bucket_params, reduce_bucket_size) in the reduce dtype.
double zero3_buffer_bytes(const core::Scenario& s, const StageLayers& layers) {
  return zero3_buffer_bytes(s, layers, layer_params_per_gpu(s, layers.moe_layers > 0));
}

double zero3_buffer_bytes(const core::Scenario& s, const StageLayers& layers, const GpuParams& layer_params) {
  const core::Sharding sh = sharding_as_run(s);
  const auto& tr = s.training;
  const double wb = weight_bytes_per_param(tr.precision);
  const double layer = layer_params.total();
  const double unit =
      layer * std::clamp(sh.unit_layers, 1.0 / kMaxUnitsPerLayer, static_cast<double>(layers.layers));
  const bool full = tr.recompute == core::Recompute::full;
  int ahead = 0;
  for (core::Pass p : {core::Pass::F, core::Pass::B})
    ahead = std::max(ahead, zero3_pass(sh, tr.overlap.zero3_prefetch, full, p, unit).depth);
  const double gathered = sh.reshard_after_forward ? (1 + ahead) * unit : layers.layers * layer + ahead * unit;
  // under a pipeline that accumulates: the stage's gradients unsharded in the reduce dtype all step,
  // beside the one unit's 16-bit gradient autograd has just made
  const double grads = sh.pipeline_accumulates ? unit * wb + layers.layers * layer * sh.reduce_bytes
                                   : unit * (wb + (sh.reduce_bytes != wb ? sh.reduce_bytes : 0.0));
  return wb * gathered + grads + sh.reduce_bytes * tr.dp_bucket_params;
}

double weight_bytes_per_param(core::Precision p) { return full_width(p) ? 4 : 2; }
double gradient_bytes_per_param(core::Precision) { return 4; }

double held_gradient_bytes_per_param(const core::TrainingSpec& t) {
  const bool bit16 = t.main_grads == core::MainGrads::bit16 && !full_width(t.precision);
  return bit16 ? 2 : gradient_bytes_per_param(t.precision);
}

double step_buffer_bytes_per_param(const core::TrainingSpec& t) {
  // DeepSpeed's ZeRO step (stage_1_and_2.py step): flatten the shard's 16-bit gradients, then
  // .to(fp32) as the fp32 optimizer's .grad; both exist while the copy runs
  return held_gradient_bytes_per_param(t) < 4 ? 4 + 2 : 0;
}

namespace {

// Calls fn(group, ranks) for each communicator of a GPU of `stage`, in communicators()'s order.
template <class Fn>
void for_each_communicator(const core::Scenario& s, int stage, Fn fn) {
  const auto& p = s.parallel;
  auto add = [&](const char* group, int ranks) {
    if (ranks > 1) fn(group, ranks);
  };
  add("tp", p.tp);
  add("cp", p.cp);
  add("dp", p.dp * p.cp);
  add("ep", p.ep);
  add("pp", p.pp);
  add("model-parallel", p.tp * p.pp);
  add("world", s.gpus);
  if (p.pp > 1 && s.model.tied_embeddings && (stage == 0 || stage == p.pp - 1)) add("embedding", 2);
}

}  // namespace

std::vector<Communicator> communicators(const core::Scenario& s, int stage) {
  std::vector<Communicator> out;
  for_each_communicator(s, stage, [&](const char* group, int ranks) { out.push_back({group, ranks}); });
  return out;
}

ProcessOverhead process_overhead(const core::Scenario& s, int stage) {
  ProcessOverhead o;
  o.context = kCudaContextBytes;
  for_each_communicator(s, stage, [&](const char*, int ranks) {
    o.nccl += ranks > 2 ? kNcclCommBytes : kNcclPairCommBytes;
  });
  return o;
}
double optimizer_bytes_per_param(const core::TrainingSpec& t) {
  const bool adam = t.optimizer != core::Optimizer::sgd;
  if (full_width(t.precision)) return adam ? 8 : 4;  // m, v (or momentum); the weights are the master
  return adam ? 12 : 8;                               // fp32 master + m, v (or momentum)
}

int zero_shard_ranks(const core::Scenario& s, bool expert) {
  const int ranks = s.parallel.dp * s.parallel.cp;
  if (expert) return s.parallel.expert_dp();  // tp*cp*dp / (etp*ep): dp*cp/ep when etp == tp
  // hybrid sharding (ZeRO-3 only): the states are sharded within a shard group, replicated across
  const int shard = s.parallel.sharding.shard_ranks;
  return s.parallel.zero >= 3 && shard > 0 ? std::min(ranks, shard) : ranks;
}

double activation_bytes_per_layer(const core::Scenario& s, bool moe_layer) {
  return layer_activation_bytes(s, moe_layer, s.training.recompute);
}

double in_flight_microbatches(const core::Scenario& s, int stage) {
  const core::PipelineShape shape{s.parallel.pp, s.parallel.vpp, s.num_microbatches()};
  return core::schedule_rules(s.parallel.schedule).in_flight(shape, stage);
}

double korthikanti_first_stage_activation_bytes(const core::Scenario& s) {
  const double p = s.parallel.pp, v = s.parallel.vpp;
  const double factor = v > 1 ? 1 + (p - 1) / (p * v) : 1.0;
  return s.model.layers * activation_bytes_per_layer(s, false) * factor;
}

double korthikanti_params_and_optimizer_bytes(const core::Scenario& s) {
  const double h = s.model.hidden;
  return 12 * h * h * s.model.layers / (s.parallel.tp * s.parallel.pp) * 18;
}

double peak_memory_bytes(const core::Scenario& s) { return peak_memory_bytes(s, pipeline_layers(s), layer_costs(s)); }

double peak_memory_bytes(const core::Scenario& s, const PipelineLayers& layers, const LayerCosts& costs) {
  double peak = 0;
  for (int i = 0; i < s.parallel.pp; ++i)
    peak = std::max(peak, stage_memory(s, i, layers, costs, in_flight_microbatches(s, i)).required());
  return peak;
}

std::vector<core::StageMemory> stage_memory(const core::Scenario& s, const std::vector<double>* in_flight) {
  return stage_memory(s, pipeline_layers(s), layer_costs(s), in_flight);
}

namespace {

// What a stage's micro-batches in flight hold: its layers' activations and, on the first stage, the
// embedding's.
void set_activations(const core::Scenario& s, int i, const StageLayers& L, const LayerCosts& costs, double in_flight,
                     core::StageMemory& st) {
  const auto& tr = s.training;
  st.in_flight = in_flight;
  const double per_mb = L.dense_layers() * costs.activation_dense + L.moe_layers * costs.activation_moe;
  st.activations = per_mb * st.in_flight;
  if (L.layers > 0) {
    // the layer being recomputed holds its whole activations during its backward pass (layer_costs:
    // 0 where no layer is recomputed whole)
    const bool moe_only = L.dense_layers() == 0;
    st.activations += moe_only ? costs.recomputed_moe : costs.recomputed_dense;
  }
  if (i == 0) {  // embedding output (2sbh) and its dropout mask (sbh) for each micro-batch in flight
    const double width = full_width(tr.precision) ? 2.0 : 1.0;
    const double t = s.parallel.tp, b = tr.micro_batch, local = static_cast<double>(tr.seq_len) / s.parallel.cp;
    const double sp = s.parallel.sequence_parallel ? t : 1.0;
    st.embedding_activations = width * 3 * local * b * s.model.hidden / sp * st.in_flight;
  }
}

}  // namespace

std::vector<core::StageMemory> stage_memory(const core::Scenario& s, const PipelineLayers& layers,
                                            const LayerCosts& costs, const std::vector<double>* in_flight) {
  const int p = s.parallel.pp;
  std::vector<core::StageMemory> out;
  out.reserve(p);
  // in_flight_microbatches per stage, the schedule's rules looked up once
  const core::PipelineShape shape{p, s.parallel.vpp, s.num_microbatches()};
  const core::ScheduleRules& rules = core::schedule_rules(s.parallel.schedule);
  int run = 0;  // the first stage of the run of repeating stages that i is in
  for (int i = 0; i < p; ++i) {
    const double f = in_flight ? (*in_flight)[i] : rules.in_flight(shape, i);
    // a middle stage repeating the one before holds the same parameters, states, buffers and
    // communicators: its copy, with its own micro-batches in flight, is stage_memory's, bit for bit
    // (copied from the first of the run, not the stage just written, whose stores a copy would wait for)
    if (layers.repeats_previous(i)) {
      core::StageMemory& st = out.emplace_back(out[run]);  // (reserved: no reallocation)
      st.stage = i;
      set_activations(s, i, layers.stages[i], costs, f, st);
      set_reserve(st);
    } else {
      run = i;
      out.push_back(stage_memory(s, i, layers, costs, f));
    }
  }
  return out;
}

core::StageMemory stage_memory(const core::Scenario& s, int i, const PipelineLayers& layers, const LayerCosts& costs,
                               double in_flight) {
  const auto& m = s.model;
  const auto& par = s.parallel;
  const auto& tr = s.training;
  const StageLayers& L = layers.stages[i];
  const double wb = weight_bytes_per_param(tr.precision), gb = held_gradient_bytes_per_param(tr);
  const double ob = optimizer_bytes_per_param(tr), sb = step_buffer_bytes_per_param(tr);
  const double t = par.tp, b = tr.micro_batch, local = static_cast<double>(tr.seq_len) / par.cp;

  core::StageMemory st;
  st.stage = i;
  st.layers = L.layers;
  const GpuParams g = stage_params_per_gpu(s, i, L, costs.dense_params, costs.moe_params);
  st.params = g.total();
  const double d_dense = zero_shard_ranks(s, false), d_expert = zero_shard_ranks(s, true);
  auto sharded = [&](int from_stage) {
    return par.zero >= from_stage ? g.dense / d_dense + g.expert / d_expert : g.total();
  };
  st.weights = wb * sharded(3);
  st.gradients = gb * sharded(2);
  st.optimizer = ob * sharded(1);
  st.step_buffers = sb * sharded(1);
  if (tr.offload != core::Offload::none) {
    // CPU offload (docs/analytic.md "CPU offload"): the share f of the optimizer states leaves the
    // GPU, and so does the fp32 copy of the gradients the step makes (the CPU makes it); DeepSpeed
    // keeps its 16-bit gradient partition (ZeRO-2, -3) in pinned host memory, where Megatron keeps
    // its fp32 main-gradient buffer on the GPU; ZeRO-Infinity's parameter shard lives on the host
    const double keep = 1 - offload_share(tr);
    st.optimizer *= keep;
    st.step_buffers *= keep;
    if (sb > 0 && par.zero >= 2) st.gradients *= keep;
    if (tr.offload == core::Offload::optimizer_params) st.weights = 0;
  }

  set_activations(s, i, L, costs, in_flight, st);
  if (i == par.pp - 1) {  // fp32 logits for the cross-entropy, vocabulary split over TP, one micro-batch
    st.logits = 4 * local * b * m.vocab / t;
    // F.cross_entropy(logits.float()) (training.fusion.cross_entropy eager): its backward holds the
    // saved log-softmax output (the logits above), nll_loss's gradient of it and log_softmax's
    // gradient of its input, all fp32 of the logits' size, at once. Under loss_parallel the
    // backward's separate ops hold one more: the saved output, the zeros with the targets' -1, the
    // exponentials and their sum (docs/analytic.md "The loss")
    const core::LossFusion loss = loss_as_run(tr.fusion.cross_entropy, par.tp);
    if (loss == core::LossFusion::eager) st.loss_buffers = 2 * st.logits;
    if (loss == core::LossFusion::loss_parallel) st.loss_buffers = 3 * st.logits;
  }
  if (par.zero >= 3 && st.layers > 0)
    st.buffers = zero3_buffer_bytes(s, L, L.moe_layers > 0 ? costs.moe_params : costs.dense_params);
  if (sb > 0 && par.zero < 3) {
    // DeepSpeed reduces 16-bit gradients through a bucket of its own (reduce_bucket_size
    // elements: stage_1_and_2.py allocates ipg_buffer in backward() / reduce_gradients());
    // Megatron's buckets are views into its fp32 buffer and cost nothing beside it. (Under
    // ZeRO-3 zero3_buffer_bytes counts it.)
    st.buffers += 2 * s.dp_bucket_params();
  }
  const ProcessOverhead o = process_overhead(s, i);
  st.context = o.context;
  st.nccl = o.nccl;
  set_reserve(st);
  return st;
}

double optimizer_shard_params(const core::Scenario& s, int stage, const PipelineLayers& layers,
                              const LayerCosts& costs) {
  const GpuParams g = stage_params_per_gpu(s, stage, layers.stages[stage], costs.dense_params, costs.moe_params);
  return s.parallel.zero >= 1 ? g.dense / zero_shard_ranks(s, false) + g.expert / zero_shard_ranks(s, true)
                              : g.total();
}

double host_bytes_per_gpu(const core::Scenario& s, const PipelineLayers& layers, const LayerCosts& costs) {
  if (!s.training.uses_host()) return 0;
  const bool optimizer = s.training.offload != core::Offload::none;
  // Megatron-Core's offload manager keeps each offloaded group in pinned host memory until its reload
  const double pinned = offload_copy_bytes(s, true, s.training.recompute);
  double most = 0;
  for (int i = 0; i < s.parallel.pp; ++i) {
    const double optimizer_bytes = optimizer ? host_bytes(s, optimizer_shard_params(s, i, layers, costs)) : 0.0;
    const double activations = pinned * layers.stages[static_cast<std::size_t>(i)].moe_layers * in_flight_microbatches(s, i);
    most = std::max(most, optimizer_bytes + activations);
  }
  return most;
}

}  // namespace ptdsim::analytic
