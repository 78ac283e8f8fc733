// `ptdsim import megatron`: a Megatron-LM command line (pretrain_gpt.py's arguments) as a ptdsim
// model or scenario (docs/inputs.md "Importing a Megatron-LM command line"). Defaults where a flag
// is absent are Megatron-LM's own (megatron/training/arguments.py); the scenario names framework
// megatron-core-0.8, whose documented defaults fill the switches no flag sets.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "import_megatron_moe.hpp"
#include "megatron_arguments.hpp"
#include "yaml_fields.hpp"
#include "import_yaml.hpp"
#include "loaders.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/io/import.hpp"

namespace ptdsim::io {
namespace {

using namespace megatron;

using detail::Mark;

// What --recompute-modules leaves to write: the modules selective recomputes, or none at all.
struct RecomputeModules {
  std::vector<std::string> names;  // training.recompute_modules, in the flag's order; empty: the key unwritten
  bool none_left = false;          // selective with an empty list: nothing recomputed (recompute: none)
};

// Megatron-Core reads --recompute-method and --recompute-num-layers under --recompute-granularity
// full only (TransformerBlock), and arguments.py refuses a method under selective (which
// --recompute-activations sets); without a granularity they change nothing.
bool recompute_granularity_given(const Arguments& a) {
  return a.has("--recompute-granularity") || a.has("--recompute-activations");
}

// The flags that change the model or the step: refused, but for a recompute method ptdsim models
// (uniform over one-layer chunks: every layer's input checkpointed). True for that one.
bool read_refused(const Arguments& a) {
  bool recompute_every_layer = false;
  const Flag* granularity = a.get("--recompute-granularity");
  const bool selective = a.has("--recompute-activations") || (granularity && granularity->value == "selective");
  for (const auto& r : a.refused_flags()) {
    if (r.flag == "--recompute-method" || r.flag == "--recompute-num-layers") {
      // argparse's checks, whatever the granularity: a value, among the choices, an integer
      if (r.value.empty()) detail::fail(r.at, r.flag + " needs a value");
      if (r.flag == "--recompute-method" && r.value != "uniform" && r.value != "block")
        detail::fail(r.at, "--recompute-method must be one of uniform, block, got \"" + core::printable(r.value) + "\"");
      if (r.flag == "--recompute-num-layers" && !python_int(r.value))
        detail::fail(r.at, "--recompute-num-layers must be an integer, got \"" + core::printable(r.value) + "\"");
      if (!recompute_granularity_given(a)) continue;  // not read (check_flags says so)
      if (selective && r.flag == "--recompute-method")
        detail::fail(r.at, "--recompute-method applies to --recompute-granularity full only (as in Megatron-LM)");
      const auto* method = a.refused_flag("--recompute-method");
      const auto* layers = a.refused_flag("--recompute-num-layers");
      // uniform over chunks of one layer checkpoints every layer's input: recompute: full
      if (method && method->value == "uniform" && (!layers || python_int(layers->value) == 1)) {
        recompute_every_layer = true;
        continue;
      }
    }
    if (r.flag == "--optimizer" && r.value == "adam") continue;  // Megatron-LM's default, what ptdsim models
    detail::fail(r.at, r.flag + (r.value.empty() ? "" : " " + r.value) + " changes the model or the step, and " +
                           r.why->why);
  }
  if (recompute_every_layer && granularity && granularity->value != "full")
    detail::fail(granularity->at, "--recompute-method applies to --recompute-granularity full only (as in Megatron-LM)");
  return recompute_every_layer;
}

// A warning per unknown flag (with the nearest known one), then every flag read checked whether or
// not a scenario is written.
void check_flags(const Arguments& a, Imported& out) {
  for (const auto& u : a.unknown()) {
    if (u.word.rfind("--", 0) != 0) {  // a value of an unknown flag that takes several, or a slip
      out.warnings.push_back(fmt::format("megatron:1:{}: stray word {}: not read by ptdsim (a value the flag before "
                                         "it does not take, or a slip)", u.at.column,
                                         u.word.empty() ? std::string("''") : core::printable(u.word)));
      continue;
    }
    const std::string near = core::closest_match(u.word, megatron_flags());
    out.warnings.push_back(fmt::format("megatron:1:{}: unknown flag {}{}", u.at.column, core::printable(u.word),
                                       near.empty() ? ": not read by ptdsim; if it changes the model or the step, "
                                                      "the imported file does not show it"
                                                    : ": did you mean " + near + "? (not read)"));
  }
  if (!recompute_granularity_given(a))
    for (const char* flag : {"--recompute-method", "--recompute-num-layers"})
      if (const auto* r = a.refused_flag(flag))
        out.warnings.push_back(fmt::format("megatron:1:{}: {} is read under --recompute-granularity full only, as "
                                           "Megatron-Core reads it: not read (nothing is recomputed)", r->at.column,
                                           r->flag));
  if (const Flag* g = a.get("--recompute-granularity");
      g && g->value == "full" && !a.has("--recompute-activations")) {
    if (!a.refused_flag("--recompute-method") || !a.refused_flag("--recompute-num-layers"))
      out.warnings.push_back(fmt::format("megatron:1:{}: --recompute-granularity full without --recompute-method and "
                                         "--recompute-num-layers is refused by Megatron-LM's TransformerConfig; read "
                                         "as every layer recomputed (uniform over one-layer chunks)", g->at.column));
  }
  if (a.has("--moe-router-num-groups") &&
      a.integer("--moe-router-group-topk", "model.moe.router_group_topk").value_or(0) == 0)
    out.warnings.push_back(fmt::format("megatron:1:{}: --moe-router-num-groups is read with a --moe-router-group-topk "
                                       "above 0 only, as Megatron-Core reads it: not read (the router takes its top-k "
                                       "over every expert)", a.at("--moe-router-num-groups").column));
  if (a.has("--bf16") && a.has("--fp16"))
    detail::fail(a.at("--fp16"), "--fp16 and --bf16 cannot be used together (Megatron-LM asserts it)");
  for (const auto& r : a.repeated())
    out.warnings.push_back(fmt::format("megatron:1:{}: {} is given again: Megatron-LM (argparse) keeps the last "
                                       "one, read here; the earlier is not", r.at.column, r.word));
  if (a.unmodelled_flag("--cuda-graph-scope") && a.unmodelled_flag("--cuda-graph-modules"))
    detail::fail(a.unmodelled_flag("--cuda-graph-scope")->at,
                 "--cuda-graph-scope and --cuda-graph-modules cannot be used together (Megatron-LM asserts it; "
                 "--cuda-graph-scope is the older name)");
  const Arguments::UnmodelledFlag* impl = a.unmodelled_flag("--cuda-graph-impl");
  const bool no_graphs = impl && impl->value == "none";
  for (const auto& u : a.unmodelled_flags())
    if (!(no_graphs && u.why->why == kNoHost))  // --cuda-graph-impl none: no graphs, nothing left out
      out.warnings.push_back(fmt::format("{}{}{}: not modelled: {}", u.flag, u.value.empty() ? "" : " ",
                                       core::printable(u.value), u.why->why));

  // every flag read is checked whether or not a scenario is written: a model-only import that took
  // --fp8-format e5m2x or --train-samples -5 in silence would refuse them only once --hardware is given
  a.integer("--tensor-model-parallel-size", "parallel.tp");
  a.integer("--pipeline-model-parallel-size", "parallel.pp");
  a.integer("--context-parallel-size", "parallel.cp");
  a.integer("--expert-model-parallel-size", "parallel.ep");
  a.integer("--expert-tensor-parallel-size", "parallel.etp");
  dispatcher(a);
  a.integer("--num-layers-per-virtual-pipeline-stage", "model.layers");
  a.integer("--micro-batch-size", "training.micro_batch");
  a.integer("--global-batch-size", "training.global_batch");
  a.integer("--seq-length", "training.seq_len");
  a.integer("--decoder-first-pipeline-num-layers", "parallel.first_stage_layers");
  a.integer("--decoder-last-pipeline-num-layers", "parallel.last_stage_layers");
  a.wide("--train-iters", "training.tokens");
  a.wide("--train-samples", "training.tokens");
  a.choice("--fp8-format", {"e4m3", "hybrid"}, "hybrid");
  a.choice("--recompute-granularity", {"full", "selective"}, "full");
  local_impl(a);
}

// The model's keys, each with the flag it came from (or Megatron-LM's default).
core::ModelSpec read_model(const Arguments& a, const ImportScenario& scenario, const detail::SourcePtr& src,
                           detail::ModelLines& model, Imported& out) {
  core::ModelSpec m;
  m.layers = a.required("--num-layers", "model.layers");
  m.hidden = a.required("--hidden-size", "model.hidden");
  m.heads = a.required("--num-attention-heads", "model.heads");
  // --kv-channels: the heads' width, written as head_dim where it is not hidden / heads
  if (const auto kv = a.integer("--kv-channels", "model.head_dim"); kv && (1LL * *kv * m.heads != m.hidden))
    m.attention_head_dim = *kv;
  const int tp = a.integer("--tensor-model-parallel-size", "parallel.tp").value_or(1);
  // --num-query-groups counts only with --group-query-attention (arguments.py)
  m.kv_heads = m.heads;
  if (a.has("--group-query-attention")) m.kv_heads = a.integer("--num-query-groups", "model.kv_heads").value_or(1);
  else if (a.has("--num-query-groups"))
    out.warnings.push_back("--num-query-groups is ignored without --group-query-attention, as Megatron-LM does");
  // the activation (argument_utils.py): --swiglu and --quick-geglu gate the MLP (three matrices,
  // ptdsim's swiglu whichever function gates it), --squared-relu does not (two, as GeLU's); the
  // default width follows --swiglu alone
  const bool swiglu = a.has("--swiglu");
  for (const char* other : {"--quick-geglu", "--squared-relu"})
    if (swiglu && a.has(other))
      detail::fail(a.at(other), std::string(other) + " and --swiglu name two activations (Megatron-LM asserts against it)");
  const bool gated = swiglu || (a.has("--quick-geglu") && !a.has("--squared-relu"));
  m.mlp = gated ? core::Mlp::swiglu : core::Mlp::gelu;
  // Megatron's default FFN width: 4h, or for SwiGLU 2/3 of it rounded down to a multiple of 64
  const int default_ffn = swiglu ? static_cast<int>((4.0 * m.hidden * 2 / 3) / 64) * 64 : 4 * m.hidden;
  m.ffn_hidden = a.integer("--ffn-hidden-size", "model.ffn_hidden").value_or(default_ffn);
  if (m.ffn_hidden < 1)  // a hidden size under 24 rounds SwiGLU's default down to nothing
    detail::fail(a.at("--hidden-size"), "--hidden-size " + itext(m.hidden) + " gives Megatron's SwiGLU FFN width "
                                        "int(8h/3 / 64) * 64 = 0: give --ffn-hidden-size");
  const int seq = a.integer("--seq-length", "training.seq_len").value_or(scenario.seq_len);
  m.max_seq_len = a.integer("--max-position-embeddings", "model.max_seq_len").value_or(seq > 0 ? seq : 2048);
  // the vocabulary comes from the tokenizer unless --vocab-size gives it; Megatron pads it to a
  // multiple of make-vocab-size-divisible-by x tp (_vocab_size_with_padding)
  const Flag* vocab_flag = a.get("--vocab-size");
  if (!vocab_flag)
    detail::fail(Mark{src, 0, 0}, "missing --vocab-size (Megatron-LM reads the vocabulary from the tokenizer: "
                                  "give its size with --vocab-size N)");
  const int vocab = *a.integer("--vocab-size", "model.vocab");
  // in 64 bits: divisible-by and tp may each be up to 2^22
  const long long divisible_by = a.integer("--make-vocab-size-divisible-by", "model.vocab").value_or(128);
  const long long multiple = divisible_by * tp;
  const long long padded = core::megatron_padded_vocab(vocab, divisible_by, tp);
  if (padded > detail::bound_of("model.vocab").max)
    detail::fail(vocab_flag->at, "--vocab-size " + itext(vocab) + " padded to a multiple of " + itext(multiple) +
                                     " is " + itext(padded) + ", above model.vocab's most (" +
                                     itext(static_cast<long long>(detail::bound_of("model.vocab").max)) + ")");
  m.vocab = static_cast<int>(padded);
  const std::string norm = a.choice("--normalization", {"LayerNorm", "RMSNorm"}, "LayerNorm");
  m.norm = norm == "RMSNorm" ? core::Norm::rmsnorm : core::Norm::layernorm;
  // YaRN (GPT-OSS, DeepSeek) and multimodal RoPE rotate as RoPE does, at its cost
  const std::string position = a.choice("--position-embedding-type",
                                        {"learned_absolute", "rope", "yarn", "mrope", "relative", "none"},
                                        "learned_absolute");
  if (position == "relative")
    detail::fail(a.at("--position-embedding-type"), "--position-embedding-type relative (T5's bias buckets) is not "
                                                    "modelled: ptdsim models learned positions and RoPE");
  m.position = position == "learned_absolute" ? core::Position::learned : core::Position::rope;
  if (position == "none") out.warnings.push_back("--position-embedding-type none taken as rope (no position table)");
  m.tied_embeddings = !a.has("--untie-embeddings-and-output-weights");
  m.bias = !a.has("--disable-bias-linear");
  // with MLA the flag is the latents' norms (gpt_layer_specs.py: q_up and kv_up become layer-norm
  // linears), which ptdsim's MLA always has; otherwise the heads' query and key norms
  m.qk_norm = a.has("--qk-layernorm") && !a.has("--multi-latent-attention");

  model.add("layers", itext(m.layers), "--num-layers", a.at("--num-layers"));
  model.add("hidden", itext(m.hidden), "--hidden-size", a.at("--hidden-size"));
  model.add("heads", itext(m.heads), "--num-attention-heads", a.at("--num-attention-heads"));
  model.add("kv_heads", itext(m.kv_heads),
            !a.has("--group-query-attention") ? "no GQA"
            : a.has("--num-query-groups")     ? "--num-query-groups"
                                              : "--num-query-groups absent: Megatron's default 1",
            a.has("--group-query-attention") ? (a.has("--num-query-groups") ? a.at("--num-query-groups")
                                                                            : a.at("--group-query-attention"))
                                             : a.at("--num-attention-heads"));
  model.add("ffn_hidden", itext(m.ffn_hidden), a.has("--ffn-hidden-size") ? "--ffn-hidden-size"
                                               : swiglu ? "Megatron's SwiGLU default int(8h/3 / 64) * 64"
                                                        : "Megatron's default 4h",
            a.has("--ffn-hidden-size") ? a.at("--ffn-hidden-size") : a.at("--hidden-size"));
  model.add("vocab", itext(m.vocab), "--vocab-size " + itext(vocab) + " padded to a multiple of " + itext(multiple));
  model.add("mlp", gated ? "swiglu" : "gelu",
            swiglu                     ? "--swiglu"
            : gated                    ? "--quick-geglu: a gated MLP, timed as SwiGLU's"
            : a.has("--squared-relu") ? (a.has("--quick-geglu")
                                              ? "--squared-relu (Megatron-LM takes it over --quick-geglu): an ungated MLP, timed as GeLU's"
                                              : "--squared-relu: an ungated MLP, timed as GeLU's")
                                       : "no --swiglu: GeLU");
  model.add("norm", m.norm == core::Norm::rmsnorm ? "rmsnorm" : "layernorm", "--normalization " + norm);
  model.add("position", m.position == core::Position::rope ? "rope" : "learned", "--position-embedding-type " + position);
  model.add("max_seq_len", itext(m.max_seq_len), a.has("--max-position-embeddings") ? "--max-position-embeddings"
                                                                                     : "--seq-length");
  model.add("tied_embeddings", detail::yaml_bool(m.tied_embeddings),
            m.tied_embeddings ? "no --untie-embeddings-and-output-weights" : "--untie-embeddings-and-output-weights");
  model.add("bias", detail::yaml_bool(m.bias), m.bias ? "no --disable-bias-linear" : "--disable-bias-linear");
  if (m.attention_head_dim > 0) model.add("head_dim", itext(m.attention_head_dim), "--kv-channels", a.at("--kv-channels"));
  if (m.qk_norm) model.add("qk_norm", "true", "--qk-layernorm", a.at("--qk-layernorm"));
  read_moe_and_mla(a, m, model, out.warnings);
  // what evaluate would refuse, at the flag that gave it
  detail::check_model(m, model, Mark{src, 0, 0});
  return m;
}

// The scenario's parallel keys: the degrees, the virtual stages, SP and ZeRO, Megatron's uneven
// pipeline split written out per stage.
void parallel_lines(const Arguments& a, const core::ModelSpec& m, detail::ScenarioLines& lines) {
  const int tp = a.integer("--tensor-model-parallel-size", "parallel.tp").value_or(1);
  const int pp = a.integer("--pipeline-model-parallel-size", "parallel.pp").value_or(1);
  for (const auto& [key, flag] : std::vector<std::pair<const char*, const char*>>{
           {"parallel.tp", "--tensor-model-parallel-size"},
           {"parallel.pp", "--pipeline-model-parallel-size"},
           {"parallel.cp", "--context-parallel-size"},
           {"parallel.ep", "--expert-model-parallel-size"},
           {"parallel.etp", "--expert-tensor-parallel-size"},
           {"training.fp8_recipe", "--fp8-recipe"},
           {"training.offload", "--optimizer-cpu-offload"},
           {"training.offload_fraction", "--optimizer-offload-fraction"},
           {"parallel.vpp", "--num-layers-per-virtual-pipeline-stage"},
           {"parallel.stage_layers", "--decoder-first-pipeline-num-layers"},
           {"training.seq_len", "--seq-length"},
           {"training.micro_batch", "--micro-batch-size"},
           {"training.global_batch", "--global-batch-size"}})
    if (a.get(flag)) lines.at.emplace_back(key, a.get(flag)->at);
  // tp*cp*pp's check is told at parallel.tp: without --tensor-model-parallel-size, at the degree given
  if (!a.has("--tensor-model-parallel-size"))
    for (const auto& [flag, key] : {std::pair{"--context-parallel-size", "parallel.cp"},
                                    std::pair{"--pipeline-model-parallel-size", "parallel.pp"}})
      if (a.integer(flag, key).value_or(1) > 1) {
        lines.at.emplace_back("parallel.tp", a.at(flag));
        break;
      }
  const auto given = [&](const char* flag) { return a.has(flag) ? std::string(flag) : std::string(flag) + " absent: 1"; };
  lines.parallel.push_back({"tp: " + itext(tp), given("--tensor-model-parallel-size")});
  lines.parallel.push_back({"pp: " + itext(pp), given("--pipeline-model-parallel-size")});
  lines.parallel.push_back({"cp: " + itext(a.integer("--context-parallel-size", "parallel.cp").value_or(1)),
                            given("--context-parallel-size")});
  if (m.moe) lines.parallel.push_back({"ep: " + itext(a.integer("--expert-model-parallel-size", "parallel.ep").value_or(1)),
                                       given("--expert-model-parallel-size")});
  if (m.moe && a.has("--expert-tensor-parallel-size"))
    lines.parallel.push_back({"etp: " + itext(*a.integer("--expert-tensor-parallel-size", "parallel.etp")),
                              "--expert-tensor-parallel-size"});
  const int vpp = virtual_stages(a, m.layers);
  if (a.has("--num-layers-per-virtual-pipeline-stage"))
    lines.parallel.push_back({"vpp: " + itext(vpp), "--num-layers / (pp * --num-layers-per-virtual-pipeline-stage)"});
  const bool sp = a.has("--sequence-parallel"), dist_opt = a.has("--use-distributed-optimizer");
  lines.parallel.push_back({std::string("sequence_parallel: ") + detail::yaml_bool(sp),
                            sp ? "--sequence-parallel" : "no --sequence-parallel"});
  lines.parallel.push_back({std::string("zero: ") + (dist_opt ? "1" : "0"),
                            dist_opt ? "--use-distributed-optimizer: optimizer states sharded"
                                     : "no --use-distributed-optimizer"});
  // Megatron's uneven splits, written out as the layers of each stage by core::pipeline_split
  const bool first_last = a.has("--decoder-first-pipeline-num-layers") || a.has("--decoder-last-pipeline-num-layers");
  const bool accounting = a.has("--account-for-embedding-in-pipeline-split") || a.has("--account-for-loss-in-pipeline-split");
  if (first_last || accounting) {
    core::Scenario probe;
    probe.model = m;
    probe.parallel.pp = pp;
    probe.parallel.vpp = vpp;
    probe.parallel.first_stage_layers = a.integer("--decoder-first-pipeline-num-layers", "parallel.first_stage_layers").value_or(0);
    probe.parallel.last_stage_layers = a.integer("--decoder-last-pipeline-num-layers", "parallel.last_stage_layers").value_or(0);
    probe.parallel.embedding_in_split = a.has("--account-for-embedding-in-pipeline-split");
    probe.parallel.loss_in_split = a.has("--account-for-loss-in-pipeline-split");
    const core::PipelineSplit split = core::pipeline_split(probe);
    const Mark at = first_last ? (a.get("--decoder-first-pipeline-num-layers") ? a.get("--decoder-first-pipeline-num-layers")->at
                                                                             : a.get("--decoder-last-pipeline-num-layers")->at)
                               : (a.get("--account-for-embedding-in-pipeline-split") ? a.get("--account-for-embedding-in-pipeline-split")->at
                                                                                   : a.get("--account-for-loss-in-pipeline-split")->at);
    if (split.layers.empty()) detail::fail(at, split.problem);
    std::string list;
    for (int l : split.layers) list += (list.empty() ? "" : ", ") + itext(l);
    lines.parallel.push_back({"stage_layers: [" + list + "]",
                              first_last ? "--decoder-first/last-pipeline-num-layers, the middle stages even"
                                         : "--account-for-embedding/loss-in-pipeline-split"});
  }
}

// training.precision: fp8, bf16 or fp16 as the flags say, else the --precision given, else fp32.
std::pair<std::string, std::string> precision_line(const Arguments& a, const ImportScenario& opt) {
  std::string precision = "fp32", precision_from = "no --bf16, --fp16 or --fp8-format: Megatron trains in fp32";
  if (a.has("--fp8-format")) {
    a.choice("--fp8-format", {"e4m3", "hybrid"}, "hybrid");
    precision = "fp8";
    precision_from = "--fp8-format";
  } else if (a.has("--bf16")) {
    precision = "bf16";
    precision_from = "--bf16";
  } else if (a.has("--fp16")) {
    precision = "fp16";
    precision_from = "--fp16";
  }
  if (!opt.precision.empty() && !a.has("--fp8-format") && !a.has("--bf16") && !a.has("--fp16")) {
    precision = opt.precision;
    precision_from = "--precision";
  }
  return {"precision: " + precision, precision_from};
}

// training.recompute: --recompute-granularity, a uniform one-layer recompute method, or
// --recompute-activations; none where the modules selective recomputes come to none.
std::pair<std::string, std::string> recompute_line(const Arguments& a, bool recompute_every_layer,
                                                   const RecomputeModules& modules) {
  std::string recompute = "none", recompute_from = "no --recompute-granularity";
  if (modules.none_left) {
    recompute_from = "--recompute-granularity selective with no module of --recompute-modules to recompute";
  } else if (a.has("--recompute-activations")) {  // arguments.py: selective, whatever the granularity says
    if (a.has("--recompute-granularity")) a.choice("--recompute-granularity", {"full", "selective"}, "full");
    recompute = "selective";
    recompute_from = "--recompute-activations (selective)";
  } else if (a.has("--recompute-granularity")) {
    recompute = a.choice("--recompute-granularity", {"full", "selective"}, "full");
    recompute_from = recompute == "full" && recompute_every_layer
                         ? "--recompute-granularity with --recompute-method uniform, one layer a chunk"
                         : "--recompute-granularity";
  }
  return {"recompute: " + recompute, recompute_from};
}

// Megatron-Core's recompute modules (TransformerConfig.recompute_modules's choices); those ptdsim
// models are core::RecomputeModule's.
const std::vector<std::string> kRecomputeModules{"core_attn", "mla_up_proj", "mlp", "moe",
                                                 "moe_act", "layernorm", "shared_experts", "gdn_norm_out",
                                                 "gdp_in_proj", "gdp_qkv", "mhc"};

// --recompute-modules (docs/inputs.md "import megatron"; megatron/training/arguments.py and
// megatron/core/transformer/transformer_config.py). Megatron-Core reads the list under
// --recompute-granularity selective only (each module: `recompute_granularity == 'selective' and
// name in recompute_modules`), there it replaces the default ["core_attn"], and an empty list
// recomputes nothing (TransformerConfig.__post_init__ checks the names only when the list is
// non-empty). The names are checked under any granularity, as every flag read is.
RecomputeModules read_recompute_modules(const Arguments& a, bool recompute_every_layer, std::vector<std::string>& warnings) {
  RecomputeModules out;
  const Flag* f = a.get("--recompute-modules");
  if (!f) return out;
  const std::string all = core::joined(kRecomputeModules);
  std::vector<std::string> seen;
  for (const auto& item : f->items) {
    if (!among(kRecomputeModules, item.text)) {
      const std::string near = core::closest_match(item.text, kRecomputeModules);
      detail::fail(item.at, "--recompute-modules: unknown module \"" + core::printable(item.text) + "\"" +
                                (near.empty() ? "" : ": did you mean " + near + "?") + " (Megatron-Core's: " + all + ")");
    }
    if (among(seen, item.text)) detail::fail(item.at, "--recompute-modules names " + item.text + " twice");
    seen.push_back(item.text);
  }
  const std::string granularity = recompute_line(a, recompute_every_layer, out).first.substr(std::string("recompute: ").size());
  if (granularity != "selective") {
    warnings.push_back("--recompute-modules is read under --recompute-granularity selective only, as Megatron-LM "
                       "does: not read (the recompute is " + granularity + ")");
    return out;
  }
  for (const auto& item : f->items) {
    if (!core::parse<core::RecomputeModule>(item.text))
      detail::fail(item.at, "--recompute-modules " + item.text + " changes the step, and recomputing " + item.text +
                                " is not modelled (ptdsim models " + core::spelling_list<core::RecomputeModule>() + ")");
    if (item.text == "mla_up_proj" && !a.has("--multi-latent-attention"))
      detail::fail(item.at, "--recompute-modules mla_up_proj needs --multi-latent-attention (as in Megatron-LM)");
    // TransformerConfig.__post_init__'s other checks of the modules
    if (item.text == "moe_act" && !a.has("--moe-grouped-gemm"))
      detail::fail(item.at, "--recompute-modules moe_act needs --moe-grouped-gemm (as in Megatron-LM)");
    if (item.text == "shared_experts" && a.has("--moe-shared-expert-intermediate-size") &&
        a.has("--moe-shared-expert-overlap"))
      detail::fail(item.at, "--recompute-modules shared_experts cannot work with --moe-shared-expert-overlap (as in "
                            "Megatron-LM)");
    // Megatron-Core reads moe, moe_act and shared_experts in MoE layers only, and layernorm where a
    // norm is a module of its own (an MoE layer's pre-MLP norm, MLA's input norm): elsewhere they
    // recompute nothing
    const bool moe = a.has("--num-experts");
    const char* idle = nullptr;
    if ((item.text == "moe" || item.text == "moe_act") && !moe) idle = "without --num-experts";
    if (item.text == "shared_experts" && !(moe && a.has("--moe-shared-expert-intermediate-size")))
      idle = "without --num-experts or --moe-shared-expert-intermediate-size";
    // gpt_layer_specs.py's local spec keeps every norm a module of its own, which layernorm recomputes
    // (TransformerLayer: any norm that is not an IdentityOp); ptdsim counts the TransformerEngine spec's
    if (item.text == "layernorm" && local_impl(a) && !moe && !a.has("--multi-latent-attention")) {
      warnings.push_back("--recompute-modules layernorm under --transformer-impl local recomputes every layer's norms, "
                         "which ptdsim does not count (it models the TransformerEngine spec's separate norms): not written");
      continue;
    }
    if (item.text == "layernorm" && local_impl(a))
      warnings.push_back("--recompute-modules layernorm under --transformer-impl local also recomputes the norms the "
                         "TransformerEngine spec fuses into its GEMMs, which ptdsim does not count: their memory and "
                         "time are the TransformerEngine spec's");
    if (item.text == "layernorm" && !moe && !a.has("--multi-latent-attention"))
      idle = "without --num-experts or --multi-latent-attention (a dense layer's norms are fused into TransformerEngine's "
             "LayerNormLinear)";
    if (idle) {
      warnings.push_back("--recompute-modules " + item.text + " recomputes nothing " + idle + ", as in Megatron-LM: not written");
      continue;
    }
    out.names.push_back(item.text);
  }
  out.none_left = out.names.empty();
  return out;
}

// Megatron-Core's default transformer_engine runs attention through Transformer Engine, which
// takes cuDNN's fused attention on Hopper; `local` runs the flash-attn package (FlashAttention-2)
// with --use-flash-attn and the unfused core without it.
void attention_lines(const Arguments& a, detail::ScenarioLines& lines) {
  const bool local = local_impl(a);
  if (local && a.has("--use-flash-attn")) {
    lines.training.push_back({"flash_attention: true", "--use-flash-attn"});
    lines.training.push_back({"attention_kernel: flash2", "--transformer-impl local: the flash-attn package"});
  } else if (local) {
    lines.training.push_back({"flash_attention: false", "--transformer-impl local without --use-flash-attn"});
  } else if (a.has("--use-flash-attn")) {
    lines.training.push_back({"flash_attention: true", "--use-flash-attn"});
  }
}

// The fusions Megatron-Core's switches turn off (or, for the loss, on); the rest the framework sets.
void fusion_line(const Arguments& a, detail::ScenarioLines& lines) {
  std::string fusion, from;
  const auto add_fusion = [&](const char* flag, const std::string& entry) {
    if (!a.has(flag)) return;
    if (fusion.find(entry) == std::string::npos)  // (two switches may set one key)
      fusion += (fusion.empty() ? "" : ", ") + entry;
    from += (from.empty() ? "" : "; ") + std::string(flag);
  };
  add_fusion("--no-rope-fusion", "rope: eager");
  // bias_activation_fusion (argument_utils.py): --swiglu takes --no-bias-swiglu-fusion's, every other
  // activation (--quick-geglu's gated one too) --no-bias-gelu-fusion's, which --disable-bias-linear
  // turns off as well (arguments.py); the other activation's switch changes nothing
  if (a.has("--swiglu")) {
    add_fusion("--no-bias-swiglu-fusion", "activation: eager");
  } else {
    add_fusion("--no-bias-gelu-fusion", "activation: eager");
    add_fusion("--disable-bias-linear", "activation: eager");
  }
  add_fusion("--no-bias-dropout-fusion", "dropout_add: eager");
  add_fusion("--cross-entropy-loss-fusion", "cross_entropy: fused");
  add_fusion("--no-gradient-accumulation-fusion", "wgrad_accumulation: separate");
  if (!fusion.empty()) lines.training.push_back({"fusion: {" + fusion + "}", from});
}

// --offload-modules under --fine-grained-activation-offloading (TransformerConfig.offload_modules's
// choices; Megatron-Core offloads only with the switch on): training.offload_modules with the
// modules ptdsim models; Megatron-Core's others are refused, as the scenario key refuses them.
void offload_modules_line(const Arguments& a, detail::ScenarioLines& lines, std::vector<std::string>& warnings) {
  const Flag* f = a.get("--offload-modules");
  const bool on = a.has("--fine-grained-activation-offloading");
  if (!f) {
    if (on) detail::fail(a.get("--fine-grained-activation-offloading")->at,
                         "--fine-grained-activation-offloading needs --offload-modules (Megatron-Core asserts the list "
                         "is not empty)");
    return;
  }
  static const std::vector<std::string> all{"attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm",
                                            "expert_fc1", "moe_act", "fused_group_mlp", "gdp_qkv"};
  std::vector<std::string> seen;
  for (const auto& item : f->items) {  // the names at their word, switch or not, as --recompute-modules
    if (!among(all, item.text)) {
      const std::string near = core::closest_match(item.text, all);
      detail::fail(item.at, "--offload-modules: unknown module \"" + core::printable(item.text) + "\"" +
                                (near.empty() ? "" : ": did you mean " + near + "?"));
    }
    if (among(seen, item.text)) detail::fail(item.at, "--offload-modules names " + item.text + " twice");
    seen.push_back(item.text);
  }
  if (!on) {
    warnings.push_back("--offload-modules is read under --fine-grained-activation-offloading only, as Megatron-LM "
                       "does: not read");
    return;
  }
  for (const auto& item : f->items)
    if (!core::parse<core::OffloadModule>(item.text))
      detail::fail(item.at, "--offload-modules " + item.text + " changes the memory, and offloading " + item.text +
                                " is not modelled (ptdsim models " + core::spelling_list<core::OffloadModule>() + ")");
  // arguments.py: fine-grained activation offloading runs on TransformerEngine only; the experts'
  // offload groups live in TEGroupedMLP, which --moe-grouped-gemm selects
  if (local_impl(a))
    detail::fail(a.get("--fine-grained-activation-offloading")->at,
                 "--fine-grained-activation-offloading needs --transformer-impl transformer_engine (as in Megatron-LM)");
  if (!a.has("--num-experts")) {  // Megatron-Core offloads them in MoE layers only
    warnings.push_back("--offload-modules offloads nothing without --num-experts, as in Megatron-LM: not written");
    return;
  }
  if (!a.has("--moe-grouped-gemm")) {  // SequentialMLP has no offload groups
    warnings.push_back("--offload-modules offloads nothing without --moe-grouped-gemm (Megatron-Core offloads the "
                       "experts' inputs in TEGroupedMLP): not written");
    return;
  }
  lines.training.push_back({"offload_modules: [" + core::joined(seen) + "]", "--offload-modules"});
  lines.at.emplace_back("training.offload_modules", f->at);
}

// --cp-comm-type (arguments.py: nargs '+', one type for every layer or one per layer; the values are
// TransformerEngine's, context_parallel.py: p2p, all_gather, a2a, a2a+p2p): training.cp_comm, read
// with cp > 1 only, as TransformerConfig reads it.
void cp_comm_line(const Arguments& a, detail::ScenarioLines& lines, std::vector<std::string>& warnings) {
  const Flag* f = a.get("--cp-comm-type");
  const Flag* sizes = a.get("--hierarchical-context-parallel-sizes");
  const int cp = a.integer("--context-parallel-size", "parallel.cp").value_or(1);
  std::vector<long long> groups;  // arguments.py asserts their product is the cp size
  if (sizes) {
    long long product = 1;
    for (const auto& item : sizes->items) {
      Flag one;
      one.value = item.text;
      one.at = item.at;
      groups.push_back(detail::read_integer(Arguments::scalar(one), "--hierarchical-context-parallel-sizes", "parallel.cp"));
      product = std::min<long long>(product * groups.back(), 1LL << 40);  // (no overflow: a cp is far smaller)
    }
    if (groups.empty() || product != cp)
      detail::fail(sizes->at, "--hierarchical-context-parallel-sizes must multiply to --context-parallel-size " +
                                  itext(cp) + " (as in Megatron-LM)");
  }
  if (!f) return;
  if (f->items.empty()) detail::fail(f->at, "--cp-comm-type needs a type (p2p, all_gather, a2a or a2a+p2p)");
  for (const auto& item : f->items)  // arguments.py asserts it whatever the cp size
    if (item.text == "a2a+p2p" && !sizes)
      detail::fail(item.at, "--cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes (as in Megatron-LM)");
  if (cp <= 1) {  // TransformerEngine never sees the types
    warnings.push_back("--cp-comm-type is read with --context-parallel-size above 1 only, as Megatron-LM does: not read");
    return;
  }
  static const std::vector<std::pair<std::string, std::string>> types{
      {"p2p", "p2p"}, {"all_gather", "allgather"}, {"a2a", "a2a"}, {"a2a+p2p", "a2a_p2p"}};
  std::vector<std::string> names;
  for (const auto& t : types) names.push_back(t.first);
  const std::string list = core::joined(names);
  const std::string type = f->items.front().text;
  for (const auto& item : f->items) {
    if (!among(names, item.text)) {
      const std::string near = item.text == "allgather" ? "all_gather" : core::closest_match(item.text, names);
      detail::fail(item.at, "--cp-comm-type: unknown type \"" + core::printable(item.text) +
                                "\" (TransformerEngine's are " + list + ")" +
                                (near.empty() ? "" : ": did you mean " + near + "?"));
    }
  }
  if (f->items.size() > 1) {
    const int layers = a.integer("--num-layers", "model.layers").value_or(0);
    if (static_cast<int>(f->items.size()) != layers)
      detail::fail(f->at, "--cp-comm-type gives " + itext(static_cast<long long>(f->items.size())) +
                              " types: one, or one per layer (" + itext(layers) + "), as TransformerConfig asserts");
    for (const auto& item : f->items)
      if (item.text != type)
        detail::fail(item.at, "--cp-comm-type " + item.text + " after " + type +
                                  ": a type per layer changes the step, and mixing them is not modelled");
  }
  std::string chosen = type;
  if (type == "a2a+p2p") {
    // context_parallel.py: two groups, the all-to-all's then the ring's; a group of one leaves the other
    if (groups.size() != 2)
      detail::fail(sizes->at, "--cp-comm-type a2a+p2p takes two --hierarchical-context-parallel-sizes (the all-to-all's "
                              "and the ring's, as TransformerEngine asserts), got " + itext(static_cast<long long>(groups.size())));
    if (groups[0] == 1) chosen = "p2p";
    else if (groups[1] == 1) chosen = "a2a";
    else
      warnings.push_back("--hierarchical-context-parallel-sizes " + itext(groups[0]) + " " + itext(groups[1]) +
                         " is not read: ptdsim's a2a_p2p runs the all-to-all over the cp ranks that share a node and "
                         "the ring over the rest (docs/analytic.md \"Context parallelism\")");
  }
  for (const auto& t : types)
    if (t.first == chosen)
      lines.training.push_back({"cp_comm: " + t.second, chosen == type ? "--cp-comm-type"
                                                                       : "--cp-comm-type a2a+p2p with a group of one"});
  lines.at.emplace_back("training.cp_comm", f->items.front().at);
}

// The scenario's training keys: batch, precision, recompute, attention kernel, fusions, FP8 recipe,
// overlap, tokens.
void training_lines(const Arguments& a, bool recompute_every_layer, const RecomputeModules& modules, int layers,
                    ImportScenario& opt, detail::ScenarioLines& lines, std::vector<std::string>& warnings) {
  lines.training.push_back({"seq_len: " + itext(opt.seq_len), a.has("--seq-length") ? "--seq-length" : "--seq-len"});
  lines.training.push_back({"micro_batch: " + itext(opt.micro_batch > 0 ? opt.micro_batch : 1), "--micro-batch-size"});
  lines.training.push_back({"global_batch: " + itext(opt.global_batch), "--global-batch-size"});
  const auto precision = precision_line(a, opt);
  if (!opt.precision.empty() && precision.first != "precision: " + opt.precision)
    warnings.push_back(precision.second + " in the arguments replaces --precision " + opt.precision);
  lines.training.push_back(precision);
  lines.training.push_back(recompute_line(a, recompute_every_layer, modules));
  if (!modules.names.empty()) {
    lines.training.push_back({"recompute_modules: [" + core::joined(modules.names) + "]", "--recompute-modules"});
    lines.at.emplace_back("training.recompute_modules", a.get("--recompute-modules")->at);
  }
  attention_lines(a, lines);
  fusion_line(a, lines);
  cp_comm_line(a, lines, warnings);
  moe_line(a, lines, warnings);
  offload_modules_line(a, lines, warnings);
  if (a.has("--fp8-recipe")) {
    // Megatron's names: tensorwise is current scaling
    const std::string r = a.choice("--fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"}, "delayed");
    lines.training.push_back({"fp8_recipe: " + (r == "tensorwise" ? std::string("current") : r), "--fp8-recipe"});
  }
  // Megatron-Core's HybridDeviceOptimizer (docs/analytic.md "CPU offload"); the framework row
  // then says its gradients go to the host in step(), not beside the backward
  if (a.has("--optimizer-cpu-offload")) {
    lines.training.push_back({"offload: optimizer", "--optimizer-cpu-offload"});
    if (const auto f = a.decimal("--optimizer-offload-fraction", "training.offload_fraction"))
      lines.training.push_back({"offload_fraction: " + *f, "--optimizer-offload-fraction"});
  }
  const bool ep_overlap = moe_overlap(a, layers);
  lines.training.push_back({std::string("overlap: {tp: ") + detail::yaml_bool(a.has("--tp-comm-overlap")) +
                                ", dp: " + detail::yaml_bool(a.has("--overlap-grad-reduce") || a.has("--overlap-param-gather")) +
                                (ep_overlap ? ", ep: true" : "") + "}",
                            std::string("--tp-comm-overlap; --overlap-grad-reduce / --overlap-param-gather") +
                                (ep_overlap ? "; --overlap-moe-expert-parallel-comm" : "")});
  if (opt.tokens.empty()) {
    if (const auto iters = a.wide("--train-iters", "training.tokens")) {
      opt.tokens = a.tokens("--train-iters", *iters, static_cast<double>(opt.global_batch) * opt.seq_len);
      lines.training.push_back({"tokens: " + opt.tokens, "--train-iters x --global-batch-size x --seq-length"});
    } else if (const auto samples = a.wide("--train-samples", "training.tokens")) {
      opt.tokens = a.tokens("--train-samples", *samples, opt.seq_len);
      lines.training.push_back({"tokens: " + opt.tokens, "--train-samples x --seq-length"});
    }
  }
}

}  // namespace

Imported import_megatron(const std::string& arguments, const std::string& name, const ImportScenario& scenario) {
  constexpr const char* kSource = "megatron";  // the argument string as a one-line file in messages
  return detail::guarded(kSource, [&] {
    // A continued command line (a backslash before its newline) is one line of words; every newline
    // becomes a blank, so columns stay and the caret line is one line.
    std::string one_line = arguments;
    for (std::size_t i = 0; i + 1 < one_line.size(); ++i)
      if (one_line[i] == '\\' && (one_line[i + 1] == '\n' || one_line[i + 1] == '\r')) one_line[i] = ' ';
    std::replace(one_line.begin(), one_line.end(), '\n', ' ');
    std::replace(one_line.begin(), one_line.end(), '\r', ' ');
    const auto src = detail::make_source(kSource, ".", one_line);
    const Arguments a(one_line, src);
    Imported out;
    const bool recompute_every_layer = read_refused(a);
    check_flags(a, out);
    moe_arguments(a);  // argparse's, before the asserts of arguments.py and TransformerConfig below
    const RecomputeModules modules = read_recompute_modules(a, recompute_every_layer, out.warnings);
    // moe_module_specs.py: SequentialMLP without grouped GEMM, and always on the local backend
    const bool local = local_impl(a);
    if (a.has("--num-experts") && (!a.has("--moe-grouped-gemm") || local))
      out.warnings.push_back(std::string(local ? "under --transformer-impl local" : "without --moe-grouped-gemm") +
                             " Megatron-Core runs each local expert's GEMMs one after another (SequentialMLP); "
                             "ptdsim times them as one grouped GEMM");
    if (const Flag* w = a.get("--delay-wgrad-compute")) {  // TransformerConfig's and arguments.py's asserts
      if (local)  // arguments.py, before TransformerConfig's
        detail::fail(w->at, "--delay-wgrad-compute needs --transformer-impl transformer_engine (Megatron-LM asserts it)");
      if (!a.has("--overlap-moe-expert-parallel-comm"))
        detail::fail(w->at, "--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm (Megatron-LM asserts it)");
      out.warnings.push_back("--delay-wgrad-compute changes nothing ptdsim times: its EP overlap already hides a "
                             "paired backward pass's dispatch and combine behind the whole of that pass's compute, "
                             "the weight gradients' GEMMs included");
    }
    if (a.has("--moe-shared-expert-overlap") && a.has("--moe-shared-expert-intermediate-size"))
      out.warnings.push_back("--moe-shared-expert-overlap is not modelled: ptdsim runs the shared experts in line, "
                             "not beside the dispatch");

    detail::ModelLines model;
    core::ModelSpec m = read_model(a, scenario, src, model, out);
    {  // the training flags' refusals whether or not a scenario is written (the lines come later)
      detail::ScenarioLines unused;
      std::vector<std::string> quiet;
      cp_comm_line(a, unused, quiet);
      moe_line(a, unused, quiet);
      moe_overlap(a, m.layers);
    }
    const std::string model_name = name.empty() ? "megatron-model" : name;
    m.name = model_name;
    const std::string header =
        "# Imported by `ptdsim import megatron` from a Megatron-LM command line: each key names the flag it came\n"
        "# from, or Megatron-LM's default where no flag sets it.\n";
    const std::string source = "Megatron-LM arguments";
    if (!a.ignored().empty()) {
      out.warnings.push_back("ignored (not read by ptdsim): " + core::joined(a.ignored(), " ") +
                             " (they change neither the model nor the step's time or memory)");
    }

    if (scenario.hardware.empty()) {
      out.yaml = detail::model_file(header, model_name, source, model);
      load_model_from_string(out.yaml, "the imported model (megatron)");
      if (a.has("--tensor-model-parallel-size") || a.has("--global-batch-size"))
        out.warnings.push_back("parallel and training flags are written only into a scenario: give --hardware and "
                               "--gpus (or --nodes)");
      return out;
    }

    ImportScenario opt = scenario;
    // the command line's own value wins over ptdsim's option, said when they differ
    const auto take = [&](const char* flag, const char* key, const char* option, int& into) {
      const auto v = a.integer(flag, key);
      if (!v) return;
      if (into > 0 && into != *v)
        out.warnings.push_back(fmt::format("megatron:1:{}: {} {} in the arguments replaces {} {}", a.at(flag).column,
                                           flag, *v, option, into));
      into = *v;
    };
    take("--seq-length", "training.seq_len", "--seq-len", opt.seq_len);
    take("--global-batch-size", "training.global_batch", "--global-batch", opt.global_batch);
    take("--micro-batch-size", "training.micro_batch", "--micro-batch", opt.micro_batch);
    detail::require_scenario_inputs(opt, kSource);

    detail::ScenarioLines lines;
    parallel_lines(a, m, lines);
    training_lines(a, recompute_every_layer, modules, m.layers, opt, lines, out.warnings);
    if (opt.framework.empty()) opt.framework = "megatron-core-0.8";
    out.yaml = detail::scenario_file(header, model_name + "-" + detail::stem(opt.hardware), source, m, model, opt,
                                     std::move(lines), kSource);
    return out;
  });
}

}  // namespace ptdsim::io
