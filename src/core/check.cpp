#include "ptdsim/core/check.hpp"

#include "ptdsim/core/layer_gemms.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/schedule.hpp"
#include "ptdsim/core/split.hpp"

namespace ptdsim::core {
namespace {

// Where the rules' problems go. check() keeps every problem with its message; first_problem()
// keeps the first one's reason and stops the rules there, building no message (the sweep counts a
// rejected candidate under it, for about a million candidates). fail() returns whether to stop.
struct AllProblems {
  std::vector<Problem>& out;
  template <class Message>
  bool fail(const char* key, const char* reason, const Message& message) {
    out.push_back(Problem{key, reason, message()});
    return false;
  }
};
struct FirstReason {
  std::string reason;  // a short word: no allocation
  template <class Message>
  bool fail(const char*, const char* why, const Message&) {
    reason = why;
    return true;
  }
};

std::string str(long long v) { return std::to_string(v); }

// The model's own rules on MLA, sliding windows and MTP (true: the sink says stop).
template <class Sink>
bool model_rules(const ModelSpec& m, Sink& sink) {
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    if (m.kv_heads != m.heads && sink.fail("model.kv_heads", "unsupported", [&] {
          return "MLA (model.mla) gives every head its own key and value: kv_heads " + str(m.kv_heads) +
                 " must equal heads " + str(m.heads);
        }))
      return true;
    if (a.qk_head_dim() < 1 && sink.fail("model.mla.qk_nope_head_dim", "range", [] {
          return std::string("qk_nope_head_dim + qk_rope_head_dim must be at least 1");
        }))
      return true;
    if (m.bias && sink.fail("model.bias", "unsupported", [] {
          return std::string("MLA's projections have no biases (DeepSeek-V2/V3): set bias: false");
        }))
      return true;
    if (m.qk_norm && sink.fail("model.qk_norm", "unsupported", [] {
          return std::string("MLA normalises its latents (DeepSeek-V2/V3), not each head's query and key: set qk_norm: false");
        }))
      return true;
  }
  if (m.sliding_window && m.sliding_window->full_every > m.layers && sink.fail("model.sliding_window.full_every", "range", [&] {
        return "full_every " + str(m.sliding_window->full_every) + " exceeds the " + str(m.layers) +
               " layers (no layer would keep full attention; 0 windows every layer)";
      }))
    return true;
  return false;
}

// The MoE block's own rules (true: the sink says stop).
template <class Sink>
bool moe_rules(const ModelSpec& m, Sink& sink) {
  const MoeSpec& e = *m.moe;
  if (e.first_k_dense >= m.layers && sink.fail("model.moe.first_k_dense", "range", [&] {
        return "first_k_dense " + str(e.first_k_dense) + " leaves none of the " + str(m.layers) + " layers MoE";
      }))
    return true;
  if (e.router_groups == 0) {
    if (e.router_group_topk != 0 && sink.fail("model.moe.router_group_topk", "range", [] {
          return std::string("router_group_topk needs router_groups (group-limited routing)");
        }))
      return true;
    return false;
  }
  if (e.experts % e.router_groups != 0)
    return sink.fail("model.moe.router_groups", "divisibility", [&] {
      return "router_groups " + str(e.router_groups) + " does not divide the " + str(e.experts) + " experts";
    });
  if (e.router_group_topk < 1 || e.router_group_topk > e.router_groups)  // (then the top_k rule cannot be read)
    return sink.fail("model.moe.router_group_topk", "range", [&] {
      return "router_group_topk " + str(e.router_group_topk) + " must be 1 to router_groups " + str(e.router_groups);
    });
  if (1LL * e.router_group_topk * (e.experts / e.router_groups) < e.top_k &&
      sink.fail("model.moe.top_k", "range", [&] {
        return "top_k " + str(e.top_k) + " exceeds the " + str(1LL * e.router_group_topk * (e.experts / e.router_groups)) +
               " experts of the router_group_topk " + str(e.router_group_topk) + " groups a token may use";
      }))
    return true;
  return false;
}

// The experts' layout (docs/inputs.md "parallel.etp"), as Megatron-Core imposes it; whether to
// stop.
template <class Sink>
bool check_experts(const Scenario& s, Sink& sink) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  if (!m.moe) {
    return p.etp > 1 && sink.fail("parallel.etp", "unsupported", [] {
             return std::string("etp > 1 needs a mixture-of-experts model (model.moe)");
           });
  }
  const int etp = p.expert_tp();
  // parallel_state.initialize_model_parallel: world_size % (etp * ep * pp) == 0, the experts'
  // data-parallel size being what is left of the tp*cp*dp ranks
  const long long block = 1LL * p.tp * p.cp * p.dp, experts_group = 1LL * etp * p.ep;
  if (p.folded_experts() && block % experts_group != 0 && sink.fail("parallel.etp", "divisibility", [&] {
        return "etp*ep = " + str(etp) + "*" + str(p.ep) + " = " + str(experts_group) + " must divide tp*cp*dp = " +
               str(block) + " (the experts fold over the attention's ranks)";
      }))
    return true;
  // each expert's fc1 columns and fc2 rows are split over etp (TEGroupedLinear's partition)
  if (m.expert_ffn_hidden() % etp != 0 && sink.fail(p.etp > 0 ? "parallel.etp" : "parallel.tp", "divisibility", [&] {
        return "etp " + str(etp) + " does not divide the experts' ffn_hidden " + str(m.expert_ffn_hidden());
      }))
    return true;
  return false;
}

// The GPUs the layout spans: tp*cp*pp*dp, all of them (true: the sink says stop).
template <class Sink>
bool gpu_rules(const Scenario& s, Sink& sink) {
  const auto& p = s.parallel;
  const long long model_parallel = 1LL * p.tp * p.cp * p.pp;
  if (s.gpus % model_parallel != 0) {
    if (sink.fail("parallel.tp", "divisibility", [&] {
          return "tp*cp*pp = " + str(p.tp) + "*" + str(p.cp) + "*" + str(p.pp) + " = " + str(model_parallel) +
                 " does not divide the " + str(s.gpus) + " GPUs";
        }))
      return true;
  } else if (model_parallel * p.dp != s.gpus) {
    if (sink.fail("parallel.dp", "divisibility", [&] {
          return "tp*cp*pp*dp = " + str(model_parallel * p.dp) + " but the cluster has " + str(s.gpus) +
                 " GPUs (dp would be " + str(s.gpus / model_parallel) + ")";
        }))
      return true;
  }
  return false;
}

// The model's heads and widths, and their split over the tensor-parallel ranks; whether to stop.
template <class Sink>
bool shape_rules(const Scenario& s, Sink& sink) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  if (m.attention_head_dim == 0 && !m.mla && m.hidden % m.heads != 0 && sink.fail("model.hidden", "divisibility", [&] {
        return "hidden " + str(m.hidden) + " is not a multiple of heads " + str(m.heads);
      }))
    return true;
  if (m.heads % m.kv_heads != 0 && sink.fail("model.kv_heads", "divisibility", [&] {
        return "kv_heads " + str(m.kv_heads) + " does not divide heads " + str(m.heads);
      }))
    return true;
  if (model_rules(m, sink)) return true;
  if (m.heads % p.tp != 0 && sink.fail("parallel.tp", "divisibility", [&] {
        return "tp " + str(p.tp) + " does not divide heads " + str(m.heads);
      }))
    return true;
  if (m.kv_heads != m.heads && m.kv_heads % p.tp != 0 && sink.fail("parallel.tp", "divisibility", [&] {
        return "tp " + str(p.tp) + " does not divide kv_heads " + str(m.kv_heads);
      }))
    return true;
  if (m.ffn_hidden % p.tp != 0 && sink.fail("parallel.tp", "divisibility", [&] {
        return "tp " + str(p.tp) + " does not divide ffn_hidden " + str(m.ffn_hidden);
      }))
    return true;
  return false;
}

// The pipeline split (core/split.cpp): every virtual stage holds a layer, or the embedding or the
// loss in its place; whether to stop.
template <class Sink>
bool split_rules(const Scenario& s, const PipelineSplit& split, Sink& sink) {
  const auto& p = s.parallel;
  if (split.layers.empty()) {
    if (sink.fail(split.key.c_str(), "divisibility", [&] { return split.problem; })) return true;
  } else {
    for (std::size_t i = 0; i < split.layers.size(); ++i) {
      const bool end_slot = (i == 0 && split.embedding_slot) || (i + 1 == split.layers.size() && split.loss_slot);
      if (split.layers[i] < 0 || (split.layers[i] == 0 && !end_slot)) {
        if (sink.fail(split.method == SplitMethod::stage_layers ? "parallel.stage_layers" : "parallel.pp",
                      "divisibility", [&] {
                        return "virtual stage " + str(static_cast<long long>(i)) + " of the " +
                               std::string(name(split.method)) + " split holds no layer (" +
                               describe_layers(split.layers) + ")";
                      }))
          return true;
        break;
      }
    }
  }

  if (p.vpp > 1 && p.pp == 1 &&
      sink.fail("parallel.vpp", "unsupported", [] { return std::string("vpp > 1 needs pipeline parallelism (pp > 1)"); }))
    return true;
  return false;
}

// The schedule's own constraints (src/core/schedule/), with the micro-batch count once it is
// whole, then a global batch that is a whole number of micro_batch*dp; whether to stop.
template <class Sink>
bool batch_rules(const Scenario& s, Sink& sink) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  const long long per_step = 1LL * t.micro_batch * p.dp;
  const bool whole = per_step > 0 && t.global_batch % per_step == 0;
  {
    std::vector<Problem> schedule;  // allocates only when the schedule has a problem
    schedule_rules(p.schedule).check(PipelineShape{p.pp, p.vpp, whole ? static_cast<int>(t.global_batch / per_step) : 0},
                                     schedule);
    for (auto& problem : schedule)
      if (sink.fail(problem.key.c_str(), problem.reason.c_str(), [&] { return problem.message; })) return true;
  }
  if (!whole && per_step > 0 && sink.fail("training.global_batch", "batch", [&] {
        return "global_batch " + str(t.global_batch) + " is not a multiple of micro_batch*dp = " + str(t.micro_batch) +
               "*" + str(p.dp) + " = " + str(per_step);
      }))
    return true;
  return false;
}

// The experts' count, routing and layout; whether to stop.
template <class Sink>
bool expert_rules(const Scenario& s, Sink& sink) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  if (m.moe) {
    if (m.moe->experts % p.ep != 0 && sink.fail("parallel.ep", "divisibility", [&] {
          return "ep " + str(p.ep) + " does not divide the " + str(m.moe->experts) + " experts";
        }))
      return true;
    if (m.moe->top_k > m.moe->experts && sink.fail("model.moe.top_k", "range", [&] {
          return "top_k " + str(m.moe->top_k) + " exceeds the " + str(m.moe->experts) + " experts";
        }))
      return true;
    if (moe_rules(m, sink)) return true;
    if (m.moe->shared_experts > 0 && m.moe->shared_ffn_hidden % p.tp != 0 &&
        sink.fail("parallel.tp", "divisibility", [&] {
          return "tp " + str(p.tp) + " does not divide the shared experts' ffn_hidden " + str(m.moe->shared_ffn_hidden);
        }))
      return true;
  } else if (p.ep > 1 && sink.fail("parallel.ep", "unsupported", [] {
               return std::string("ep > 1 needs a mixture-of-experts model (model.moe)");
             })) {
    return true;
  }
  if (!p.folded_experts() && p.ep > 1 && (1LL * p.dp * p.cp) % p.ep != 0 &&
      sink.fail("parallel.ep", "divisibility", [&] {
        // Megatron-Core's parallel_state lays the experts' groups over each stage's tp*cp*dp ranks
        // (etp*ep*edp*pp = world); with etp = tp that is ep dividing dp*cp. A smaller etp (MoE
        // parallel folding) lets ep span tensor-parallel ranks.
        const std::string groups = "Megatron-Core's expert groups, etp*ep*edp*pp = world";
        if (p.tp == 1)
          return "ep " + str(p.ep) + " must divide dp*cp = " + str(1LL * p.dp * p.cp) +
                 " (experts are spread over data-parallel ranks: " + groups + ")";
        return "ep " + str(p.ep) + " must divide dp*cp = " + str(1LL * p.dp * p.cp) +
               " (experts are spread over data-parallel ranks: " + groups + "; with etp = tp " + str(p.tp) +
               " that is etp*ep = " + str(1LL * p.tp * p.ep) + " dividing tp*cp*dp = " +
               str(1LL * p.tp * p.cp * p.dp) + "; a smaller parallel.etp folds ep over tensor-parallel ranks)";
      }))
    return true;
  if (check_experts(s, sink)) return true;
  return false;
}

// What the simulator expands into tasks, bounded so no accepted scenario outgrows memory and time;
// whether to stop.
template <class Sink>
bool size_rules(const Scenario& s, Sink& sink) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& t = s.training;
  const long long per_step = 1LL * t.micro_batch * p.dp;
  if (per_step > 0 && t.global_batch % per_step == 0) {
    const long long micro_batches = t.global_batch / per_step;
    const bool per_layer = p.zero >= 3;
    const long long chunks = per_layer ? m.layers : 1LL * p.pp * p.vpp;
    if (micro_batches * chunks > kMaxPipelinePasses && sink.fail("training.global_batch", "size", [&] {
          return str(micro_batches) + " micro-batches x " + str(chunks) +
                 (per_layer ? " layers (ZeRO-3 runs each pass per layer)" : " pipeline chunks (pp*vpp)") + " = " +
                 str(micro_batches * chunks) + " pipeline passes per step, more than the " + str(kMaxPipelinePasses) +
                 " the simulator takes";
        }))
      return true;
  }
  return false;
}

// ZeRO-3's shard group, context parallelism's chunks and heads, sequence parallelism's split and
// learned positions; whether to stop.
template <class Sink>
bool sequence_rules(const Scenario& s, Sink& sink) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (p.zero == 3 && p.sharding.shard_ranks > 0 && (1LL * p.dp * p.cp) % p.sharding.shard_ranks != 0 &&
      sink.fail("parallel.sharding.shard_ranks", "divisibility", [&] {
        return "shard_ranks " + str(p.sharding.shard_ranks) + " must divide dp*cp = " + str(1LL * p.dp * p.cp) +
               " (each shard group is replicated dp*cp/shard_ranks times)";
      }))
    return true;

  if (t.seq_len % (2 * p.cp) != 0 && p.cp > 1 && sink.fail("parallel.cp", "divisibility", [&] {
        return "seq_len " + str(t.seq_len) + " must be a multiple of 2*cp = " + str(2 * p.cp) +
               " (each rank takes two balanced chunks)";
      }))
    return true;
  if (const int a = s.cp_a2a_ranks();
      a > 1 && (m.heads % (1LL * p.tp * a) != 0 || kv_heads_per_rank(m, p.tp) % a != 0) &&
      sink.fail("training.cp_comm", "divisibility", [&] {
        return "cp_comm " + std::string(name(t.cp_comm)) + " splits each rank's heads over " + str(a) +
               " context-parallel ranks: heads/tp = " + str(m.heads / p.tp) + " and kv heads per rank " +
               str(kv_heads_per_rank(m, p.tp)) + " must both be multiples of " + str(a);
      }))
    return true;
  if (p.sequence_parallel && p.tp > 1 && (t.seq_len / p.cp) % p.tp != 0 &&
      sink.fail("parallel.sequence_parallel", "divisibility", [&] {
        return "sequence parallel needs seq_len/cp = " + str(t.seq_len / p.cp) + " to be a multiple of tp " + str(p.tp);
      }))
    return true;
  // TransformerConfig.__post_init__: mla_up_proj needs multi_latent_attention, moe an MoE layer.
  // (The modules are read under recompute: selective only, as Megatron-Core reads them under
  // recompute_granularity "selective"; the sweep's none and full leave them unread.)
  if (t.recompute_modules != 0) {
    if (t.names(RecomputeModule::mla_up_proj) && !m.mla &&
        sink.fail("training.recompute_modules", "unsupported", [] {
          return std::string("recompute module mla_up_proj needs MLA attention (model.mla)");
        }))
      return true;
    if (t.names(RecomputeModule::moe) && !m.moe && sink.fail("training.recompute_modules", "unsupported", [] {
          return std::string("recompute module moe needs a mixture-of-experts model (model.moe)");
        }))
      return true;
    // Megatron-Core reads moe_act and shared_experts in MoE layers only, and recomputes a norm
    // only where it is a module apart (gpt_layer_specs.py: an MoE layer's pre-MLP norm, MLA's input
    // norm; the others are fused into TransformerEngine's LayerNormLinear): on another model they
    // recompute nothing, which a scenario that names them did not mean
    if (t.names(RecomputeModule::moe_act) && !m.moe && sink.fail("training.recompute_modules", "unsupported", [] {
          return std::string("recompute module moe_act needs a mixture-of-experts model (model.moe)");
        }))
      return true;
    if (t.names(RecomputeModule::shared_experts) && !(m.moe && m.moe->shared_experts > 0) &&
        sink.fail("training.recompute_modules", "unsupported", [] {
          return std::string("recompute module shared_experts needs shared experts (model.moe.shared_experts)");
        }))
      return true;
    if (t.names(RecomputeModule::layernorm) && !m.moe && !m.mla && sink.fail("training.recompute_modules", "unsupported", [] {
          return std::string("recompute module layernorm recomputes nothing on this model: Megatron-Core fuses a dense "
                             "layer's norms into the following GEMM (TransformerEngine's LayerNormLinear); it recomputes "
                             "an MoE layer's pre-MLP norm and MLA's input norm");
        }))
      return true;
  }
  // Megatron-Core refuses moe_act and layernorm recompute under FP8's delayed scaling
  // (TransformerConfig.__post_init__: the output-discarding checkpoint needs a recipe that quantises
  // the recomputed input again)
  if (t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::delayed &&
      (t.recomputes(RecomputeModule::moe_act) || t.recomputes(RecomputeModule::layernorm)) &&
      sink.fail("training.recompute_modules", "unsupported", [] {
        return std::string("recompute modules moe_act and layernorm need an FP8 recipe other than delayed (as "
                           "Megatron-Core requires): set training.fp8_recipe");
      }))
    return true;
  // fine-grained activation offloading moves an MoE layer's expert inputs over the host link
  if (t.offload_modules != 0 && !m.moe && sink.fail("training.offload_modules", "unsupported", [] {
        return std::string("offload modules expert_fc1 and moe_act need a mixture-of-experts model (model.moe)");
      }))
    return true;
  // TransformerConfig asserts it: the MoE block's checkpoint saves nothing inside it to offload
  if (t.offload_modules != 0 && t.recomputes(RecomputeModule::moe) && sink.fail("training.offload_modules", "unsupported", [] {
        return std::string("offload modules expert_fc1 and moe_act cannot be offloaded while recompute module moe "
                           "recomputes the whole MoE block (as Megatron-Core asserts): remove one of them");
      }))
    return true;
  if (t.offload_modules != 0 && !s.hardware.host.known() && sink.fail("training.offload_modules", "unsupported", [&] {
        return "activation offloading needs the hardware's host: hardware.host.link_gbs, memory_gib and memory_gbs (" +
               s.hardware.name + " gives " + (s.hardware.host.link_Bps > 0 ? "only some" : "none") + " of them)";
      }))
    return true;
  // torchtitan's per-op checkpointing is modelled for its dense Llama block (analytic/op_checkpoint.hpp):
  // an MoE layer's or MLA's operators run other mm's than the block's seven
  if (t.recompute == Recompute::op && (m.moe || m.mla) && sink.fail("training.recompute", "unsupported", [] {
        return std::string("recompute op (torchtitan's per-op checkpointing) is modelled for dense models without "
                           "MLA: use none, selective or full");
      }))
    return true;
  if (m.position == Position::learned && t.seq_len > m.max_seq_len && sink.fail("training.seq_len", "range", [&] {
        return "seq_len " + str(t.seq_len) + " exceeds the model's learned positions (max_seq_len " +
               str(m.max_seq_len) + ")";
      }))
    return true;
  return false;
}

// The precision the GPU must run; whether to stop.
template <class Sink>
bool precision_rules(const Scenario& s, Sink& sink) {
  const auto& t = s.training;
  if (!precision_ok(s.hardware.gpu, t.precision) &&
      sink.fail("training.precision", "unsupported", [&] { return precision_problem(s.hardware.gpu, t.precision); }))
    return true;
  // MXFP8's block scales are a Blackwell tensor-core format (the generation with FP4 peaks)
  if (t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::mxfp8 &&
      !(s.hardware.gpu.peak_flops[static_cast<std::size_t>(Precision::fp4)] > 0) &&
      sink.fail("training.fp8_recipe", "unsupported", [&] {
        return "fp8_recipe mxfp8 needs Blackwell's MX tensor cores; " + s.hardware.gpu.name +
               " has none (no fp4 peak): use delayed, current, rowwise or blockwise";
      }))
    return true;
  // TransformerEngine's fused grouped MLP (ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8) runs the MXFP8
  // recipe only, on routed experts with a gated MLP, each expert whole on a rank
  if (t.fusion.grouped_mlp == Fusion::fused) {
    const bool mxfp8 = t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::mxfp8;
    const char* missing = nullptr;
    if (!s.model.moe)
      missing = "a mixture-of-experts model (model.moe)";
    else if (s.model.mlp != Mlp::swiglu)
      missing = "a SwiGLU MLP (model.mlp swiglu)";
    else if (!mxfp8)
      missing = "precision fp8 with fp8_recipe mxfp8";
    else if (s.parallel.expert_tp() != 1)
      missing = "the experts unsplit (etp 1)";
    if (missing && sink.fail("training.fusion.grouped_mlp", "unsupported", [&] {
          return std::string("training.fusion.grouped_mlp fused (TransformerEngine's MXFP8 grouped MLP) needs ") + missing;
        }))
      return true;
  }
  return false;
}

// CPU offload (docs/analytic.md "CPU offload"): DeepSpeed offloads the optimizer from ZeRO stage 1
// and the parameters at stage 3 only (DeepSpeed config docs, offload_optimizer / offload_param);
// the host's link, memory and bandwidth time it. Whether to stop.
template <class Sink>
bool offload_rules(const Scenario& s, Sink& sink) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (t.offload != Offload::none) {
    if (p.zero < 1 && sink.fail("training.offload", "unsupported", [&] {
          return std::string("training.offload ") + std::string(name(t.offload)) +
                 " needs parallel.zero >= 1 (each data-parallel rank offloads its optimizer shard)";
        }))
      return true;
    if (t.offload == Offload::optimizer_params && p.zero < 3 && sink.fail("training.offload", "unsupported", [&] {
          return std::string("training.offload optimizer_params needs parallel.zero 3 (ZeRO-Infinity offloads "
                             "the parameter shard; below stage 3 every GPU holds the whole parameters)");
        }))
      return true;
    if (!s.hardware.host.known() && sink.fail("training.offload", "unsupported", [&] {
          return "training.offload needs the hardware's host: hardware.host.link_gbs, memory_gib and memory_gbs (" +
                 s.hardware.name + " gives " + (s.hardware.host.link_Bps > 0 ? "only some" : "none") + " of them)";
        }))
      return true;
  }
  return false;
}

// Every cross-field rule, in the order check() reports them; `split` is pipeline_split(s). Each
// message is a lambda, called only by a sink that keeps it.
template <class Sink>
void rules(const Scenario& s, const PipelineSplit& split, Sink& sink) {
  (void)(gpu_rules(s, sink) || shape_rules(s, sink) || split_rules(s, split, sink) || batch_rules(s, sink) ||
         expert_rules(s, sink) || size_rules(s, sink) || sequence_rules(s, sink) || precision_rules(s, sink) ||
         offload_rules(s, sink));
}

}  // namespace

bool trainable(Precision p) { return p != Precision::fp4; }

std::vector<std::string> trainable_spellings() {
  std::vector<std::string> out;
  for (int i = 0; i < kPrecisionCount; ++i)
    if (trainable(static_cast<Precision>(i))) out.emplace_back(name(static_cast<Precision>(i)));
  return out;
}

bool precision_ok(const GpuSpec& g, Precision p) {
  return trainable(p) && g.peak_flops[static_cast<std::size_t>(p)] > 0;
}

std::string precision_problem(const GpuSpec& g, Precision p) {
  if (!trainable(p)) return "fp4 is a peak rate only: 4-bit training is not modelled (use fp8 or bf16)";
  if (!(g.peak_flops[static_cast<std::size_t>(p)] > 0)) return std::string(name(p)) + " has no peak rate on " + g.name;
  return {};
}

std::vector<Problem> check(const Scenario& s) {
  std::vector<Problem> out;
  AllProblems sink{out};
  rules(s, pipeline_split(s), sink);
  return out;
}

std::string describe(const Problem& p) {
  return p.message.rfind(p.key, 0) == 0 ? p.message : p.key + ": " + p.message;
}

std::string first_problem(const Scenario& s, const PipelineSplit& split) {
  FirstReason sink;
  rules(s, split, sink);
  return sink.reason;
}

}  // namespace ptdsim::core
