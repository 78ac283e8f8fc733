// `ptdsim import megatron`: a Megatron-LM command line (pretrain_gpt.py's arguments) as a ptdsim
// model or scenario (docs/inputs.md "Importing a Megatron-LM command line"). Defaults where a flag
// is absent are Megatron-LM's own (megatron/training/arguments.py); the scenario names framework
// megatron-core-0.8, whose documented defaults fill the switches no flag sets.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "yaml_fields.hpp"
#include "import_yaml.hpp"
#include "loaders.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/io/import.hpp"

namespace ptdsim::io {
namespace {

using detail::Mark;
using detail::Node;

// Flags that take a value, and flags that are switches.
const std::vector<std::string> kValueFlags{
    "--num-layers", "--hidden-size", "--num-attention-heads", "--num-query-groups", "--ffn-hidden-size",
    "--seq-length", "--max-position-embeddings", "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
    "--context-parallel-size", "--expert-model-parallel-size", "--num-layers-per-virtual-pipeline-stage",
    "--micro-batch-size", "--global-batch-size", "--fp8-format", "--recompute-granularity", "--normalization",
    "--position-embedding-type", "--num-experts", "--moe-router-topk", "--moe-ffn-hidden-size",
    "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", "--vocab-size",
    "--make-vocab-size-divisible-by", "--train-iters", "--train-samples", "--transformer-impl", "--fp8-recipe",
    "--kv-channels", "--moe-layer-freq", "--moe-shared-expert-intermediate-size", "--moe-router-score-function",
    "--moe-router-num-groups", "--moe-router-group-topk", "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim",
    "--qk-pos-emb-head-dim", "--v-head-dim", "--mtp-num-layers",
    "--expert-tensor-parallel-size", "--moe-token-dispatcher-type",
    "--optimizer-offload-fraction", "--moe-expert-capacity-factor", "--moe-flex-dispatcher-backend"};
const std::vector<std::string> kSwitchFlags{
    "--sequence-parallel", "--use-distributed-optimizer", "--bf16", "--fp16", "--swiglu",
    "--untie-embeddings-and-output-weights", "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split", "--tp-comm-overlap", "--overlap-grad-reduce",
    "--overlap-param-gather", "--group-query-attention", "--disable-bias-linear", "--recompute-activations",
    "--use-flash-attn", "--no-rope-fusion", "--no-bias-swiglu-fusion", "--no-bias-gelu-fusion",
    "--no-bias-dropout-fusion", "--cross-entropy-loss-fusion", "--no-gradient-accumulation-fusion",
    "--multi-latent-attention", "--qk-layernorm",
    "--optimizer-cpu-offload", "--fine-grained-activation-offloading", "--moe-grouped-gemm",
    "--moe-shared-expert-overlap", "--moe-pad-expert-input-to-capacity", "--moe-router-force-load-balancing",
    "--moe-enable-deepep", "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute"};
// Flags that take a list (argparse nargs '*' or '+'): the values run to the next word that starts
// with "--" (`--recompute-modules core_attn mlp`); `--flag=value` gives one value, as in argparse.
const std::vector<std::string> kListFlags{"--recompute-modules", "--offload-modules", "--cp-comm-type",
                                          "--hierarchical-context-parallel-sizes",
                                          "--moe-router-load-balancing-type", "--moe-aux-loss-coeff"};
// Megatron-LM flags that change neither the model's shapes nor a step's time or memory (data,
// tokenizer, checkpoints, logging, learning-rate schedule, initialisation, dropout): listed in the
// "ignored" warning, nothing else. A flag in none of the lists is unknown to ptdsim: a warning names
// it (with the closest flag ptdsim reads when there is one), since it may be a misspelling. They are
// listed by argparse's kind in megatron/training/arguments.py, the same at every release from March
// 2025 to August 2026 (one value; store_true or store_false, a switch; nargs '*', --data-path's
// list), so that each takes its own words and no more: a word after an ignored switch is a stray word.
const std::vector<std::string> kIgnoredListFlags{"--data-path"};
const std::vector<std::string> kIgnoredValueFlags{
    "--save", "--load", "--lr", "--min-lr", "--lr-decay-style", "--lr-decay-iters", "--lr-decay-samples",
    "--lr-warmup-iters", "--lr-warmup-fraction", "--lr-warmup-samples", "--weight-decay", "--clip-grad",
    "--adam-beta1", "--adam-beta2", "--adam-eps", "--init-method-std", "--split", "--tokenizer-type",
    "--tokenizer-model", "--vocab-file", "--merge-file", "--log-interval", "--save-interval", "--eval-interval",
    "--eval-iters", "--seed", "--attention-dropout", "--hidden-dropout", "--distributed-backend",
    "--tensorboard-dir", "--wandb-project", "--wandb-exp-name", "--exit-interval", "--ckpt-format",
    "--timing-log-level", "--data-cache-path", "--num-workers", "--distributed-timeout-minutes", "--rotary-base",
    "--rotary-percent", "--norm-epsilon", "--tensorboard-log-interval", "--dataloader-type",
    "--exit-duration-in-mins", "--manual-gc-interval", "--lr-warmup-init", "--dist-ckpt-strictness",
    "--logging-level", "--rotary-seq-len-interpolation-factor", "--rotary-scaling-factor", "--mscale",
    "--mscale-all-dim", "--moe-router-topk-scaling-factor", "--moe-router-bias-update-rate",
    "--mtp-loss-scaling-factor", "--cuda-graph-warmup-steps"};
const std::vector<std::string> kIgnoredSwitchFlags{
    "--use-mcore-models", "--log-throughput", "--use-checkpoint-args", "--no-load-optim", "--no-load-rng",
    "--finetune", "--mock-data", "--log-params-norm", "--log-num-zeros-in-grad", "--async-save", "--manual-gc",
    "--attention-softmax-in-fp32", "--no-masked-softmax-fusion", "--eod-mask-loss",
    "--use-rotary-position-embeddings", "--no-save-optim", "--no-save-rng", "--no-check-for-nan-in-loss-and-grad",
    "--no-mmap-bin-files", "--no-create-attention-mask-in-dataloader", "--auto-detect-ckpt-format",
    "--log-timers-to-tensorboard", "--log-memory-to-tensorboard", "--log-validation-ppl-to-tensorboard",
    "--moe-router-pre-softmax", "--moe-router-enable-expert-bias", "--te-rng-tracker"};

// Flags that change the model or the step in a way ptdsim does not model: refused, with why, rather
// than written as a file that times another run. (Those it can read in one setting are read there:
// --recompute-method uniform with --recompute-num-layers 1 recomputes every layer, as
// recompute: full does.)
struct Refused {
  const char* flag;
  const char* why;
};
constexpr Refused kRefusedFlags[] = {
    {"--recompute-method", "recomputing some layers (block, or uniform over chunks of more than one layer) is not "
                           "modelled: ptdsim's recompute: full recomputes every layer"},
    {"--recompute-num-layers", "recomputing some layers is not modelled: ptdsim's recompute: full recomputes every layer"},
    {"--distribute-saved-activations", "splitting the recompute checkpoints over tp is not modelled"},
    {"--optimizer", "ptdsim models Adam (its memory and its step); another optimizer is not modelled"},
    {"--cpu-offloading", "activation offload to the CPU is not modelled"},
    {"--pipeline-model-parallel-layout", "an explicit layer layout is not read: give parallel.stage_layers in the file"},
    {"--encoder-num-layers", "encoder-decoder models are not modelled"},
    {"--num-virtual-stages-per-pipeline-rank",
     "give the split as --num-layers-per-virtual-pipeline-stage, which the importer reads"}};

// Flags that change the step in a way ptdsim does not model but that a run's time does not hinge on
// ptdsim knowing (or that it times one way whatever they say): read as the step without them, each
// with a warning saying what is left out, rather than refused: NVIDIA's own MoE recipes set them all.
struct Unmodelled {
  const char* flag;
  enum class Takes { nothing, value, list } takes;
  const char* why;
};
constexpr const char* kNoHost =
    "CUDA graphs replay captured kernels without the host's launch work, and ptdsim does not model the host: "
    "it times the GPU's work as if the host always kept ahead (docs/validation.md, \"Where the biased buckets' "
    "error sits\")";
constexpr Unmodelled kUnmodelledFlags[] = {
    {"--cuda-graph-impl", Unmodelled::Takes::value, kNoHost},
    {"--cuda-graph-scope", Unmodelled::Takes::list, kNoHost},  // deprecated for --cuda-graph-modules
    {"--cuda-graph-modules", Unmodelled::Takes::list, kNoHost},
    {"--enable-cuda-graph", Unmodelled::Takes::nothing, kNoHost},
    {"--external-cuda-graph", Unmodelled::Takes::nothing, kNoHost},
    {"--moe-permute-fusion", Unmodelled::Takes::nothing,
     "ptdsim times permute and unpermute as one memory-bound copy of the routed rows each way (docs/analytic.md "
     "\"Expert parallelism\"), what the fused kernels do, with or without the flag"},
    {"--moe-router-fusion", Unmodelled::Takes::nothing,
     "the router's softmax, top-k and scores are left out (docs/analytic.md \"Expert parallelism\"), fused or not"},
    {"--moe-router-dtype", Unmodelled::Takes::value,
     "the router's GEMM (hidden x experts a token, under 1% of the experts' FLOPs in the shipped MoE models) is "
     "timed in 16 bits: the 32- or 64-bit logits and their backward are not"},
    {"--cross-entropy-fusion-impl", Unmodelled::Takes::value,
     "ptdsim times a fused cross entropy (--cross-entropy-loss-fusion) the same whichever implementation runs it"}};

const Unmodelled* unmodelled(const std::string& flag) {
  for (const auto& u : kUnmodelledFlags)
    if (flag == u.flag) return &u;
  return nullptr;
}

const Refused* refused(const std::string& flag) {
  for (const auto& r : kRefusedFlags)
    if (flag == r.flag) return &r;
  return nullptr;
}

bool among(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

struct Token {
  std::string text;
  int column = 0;  // 1-based, in the argument string
};

// Shell-like words: blanks separate, single and double quotes group, a backslash-newline (a
// continued command line) is a blank. Columns count in the string as given.
std::vector<Token> words(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (std::isspace(static_cast<unsigned char>(s[i])) || (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n')))
      i += s[i] == '\\' ? 2 : 1;
    if (i >= s.size()) break;
    Token t;
    t.column = static_cast<int>(i) + 1;
    char quote = 0;
    while (i < s.size() && (quote || !std::isspace(static_cast<unsigned char>(s[i])))) {
      const char c = s[i++];
      if (quote) {
        if (c == quote) quote = 0; else t.text += c;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else {
        t.text += c;
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

struct Flag {
  std::string value;  // "" for a switch or a list
  Mark at;            // the value (or the flag, for a switch or a list)
  struct Item {
    std::string text;
    Mark at;
  };
  std::vector<Item> items;  // a list flag's values, each at its word
};

class Arguments {
 public:
  Arguments(const std::string& text, const detail::SourcePtr& src) : src_(src) {
    const auto ws = words(text);
    for (std::size_t i = 0; i < ws.size(); ++i) {
      std::string word = ws[i].text;
      if (word.rfind("--", 0) != 0) {
        // the program and its own arguments before the first flag; a stray word after one
        if (!flags_.empty() || !ignored_.empty() || !unknown_.empty() || !unmodelled_.empty() || !refused_.empty())
          unknown_.push_back({word, Mark{src_, 1, ws[i].column}});
        continue;
      }
      std::string value;
      int value_column = ws[i].column;
      bool inline_value = false;
      if (const auto eq = word.find('='); eq != std::string::npos) {
        value = word.substr(eq + 1);
        value_column += static_cast<int>(eq) + 1;
        word = word.substr(0, eq);
        inline_value = true;
      }
      if (among(kValueFlags, word)) {
        if (!inline_value) {
          if (i + 1 >= ws.size() || ws[i + 1].text.rfind("--", 0) == 0)
            detail::fail(Mark{src_, 1, ws[i].column}, word + " needs a value");
          value = ws[++i].text;
          value_column = ws[i].column;
        }
        flags_[word] = Flag{value, Mark{src_, 1, value_column}, {}};
      } else if (among(kListFlags, word)) {
        Flag f{"", Mark{src_, 1, ws[i].column}, {}};
        if (inline_value) {
          f.items.push_back({value, Mark{src_, 1, value_column}});
        } else {
          while (i + 1 < ws.size() && ws[i + 1].text.rfind("--", 0) != 0) {
            ++i;
            f.items.push_back({ws[i].text, Mark{src_, 1, ws[i].column}});
          }
        }
        // argparse keeps the last list alone: a second one is a slip for a longer first
        if (flags_.count(word))
          detail::fail(f.at, word + " is given twice (Megatron-LM keeps only the last list): give every value in one");
        flags_[word] = std::move(f);
      } else if (among(kSwitchFlags, word)) {
        if (inline_value) detail::fail(Mark{src_, 1, ws[i].column}, word + " takes no value");
        flags_[word] = Flag{"", Mark{src_, 1, ws[i].column}, {}};
      } else {
        const Mark at{src_, 1, ws[i].column};
        if (const Refused* r = refused(word)) {
          std::string value = inline_value ? value_of_inline(ws[i].text) : "";
          if (!inline_value && i + 1 < ws.size() && ws[i + 1].text.rfind("--", 0) != 0) value = ws[i + 1].text;
          refused_.push_back({word, value, at, r});
        } else if (const Unmodelled* u = unmodelled(word)) {
          if (inline_value && u->takes == Unmodelled::Takes::nothing) detail::fail(at, word + " takes no value");
          std::string value = inline_value ? value_of_inline(ws[i].text) : "";
          if (u->takes == Unmodelled::Takes::list && !inline_value)
            while (i + 2 < ws.size() && ws[i + 1].text.rfind("--", 0) != 0 && ws[i + 2].text.rfind("--", 0) != 0)
              value += (value.empty() ? "" : " ") + ws[++i].text;  // all but the last value
          if (!inline_value && u->takes != Unmodelled::Takes::nothing && i + 1 < ws.size() &&
              ws[i + 1].text.rfind("--", 0) != 0)
            value += (value.empty() ? "" : " ") + ws[i + 1].text;
          unmodelled_.push_back({word, value, at, u});
          if (u->takes == Unmodelled::Takes::nothing) continue;  // a word after a switch is a stray word
        } else if (among(kIgnoredSwitchFlags, word)) {
          if (inline_value) detail::fail(at, word + " takes no value");
          ignored_.push_back(word);
          continue;  // a word after a switch is a stray word
        } else if (among(kIgnoredValueFlags, word)) {
          if (!inline_value && (i + 1 >= ws.size() || ws[i + 1].text.rfind("--", 0) == 0))
            detail::fail(at, word + " needs a value");
          ignored_.push_back(word);
        } else if (among(kIgnoredListFlags, word)) {
          ignored_.push_back(word);
          if (!inline_value)
            while (i + 2 < ws.size() && ws[i + 1].text.rfind("--", 0) != 0 && ws[i + 2].text.rfind("--", 0) != 0)
              ++i;  // all but the last value
        } else {
          unknown_.push_back({word, at});
        }
        // its value, if it has one, is not a flag
        if (!inline_value && i + 1 < ws.size() && ws[i + 1].text.rfind("--", 0) != 0) ++i;
      }
    }
  }

  // A flag's value as a YAML scalar at the flag's position, for the schema's typed readers.
  static Node scalar(const Flag& f) {
    Node n;
    n.kind = Node::Kind::scalar;
    n.text = f.value;
    n.mark = f.at;
    return n;
  }
  bool has(const std::string& flag) const { return flags_.count(flag) > 0; }
  const Flag* get(const std::string& flag) const {
    auto it = flags_.find(flag);
    return it == flags_.end() ? nullptr : &it->second;
  }
  // Where the flag's value is, for an error about the key it became; nowhere when it is absent.
  Mark at(const std::string& flag) const { return get(flag) ? get(flag)->at : Mark{}; }
  // A flag's value, in the range of the ptdsim key `as` it becomes (src/io/schema.cpp).
  std::optional<long long> wide(const std::string& flag, std::string_view as) const {
    const Flag* f = get(flag);
    if (!f) return std::nullopt;
    return detail::read_integer(scalar(*f), flag, as);
  }
  // A flag's decimal value as the text it was given, in the range of the ptdsim key `as`.
  std::optional<std::string> decimal(const std::string& flag, std::string_view as) const {
    const Flag* f = get(flag);
    if (!f) return std::nullopt;
    detail::read_number(scalar(*f), std::string(as));
    return f->value;
  }
  // every `as` key read through here has a range inside int's (src/io/schema.cpp)
  std::optional<int> integer(const std::string& flag, std::string_view as) const {
    if (auto v = wide(flag, as)) return static_cast<int>(*v);
    return std::nullopt;
  }
  // The tokens `value` units of `flag`'s value, failing at the flag when they exceed training.tokens's range.
  std::string tokens(const std::string& flag, long long value, double per_unit) const {
    const double tokens = static_cast<double>(value) * per_unit;
    const double most = detail::bound_of("training.tokens").max;
    if (tokens > most)
    {
      char text[96];
      std::snprintf(text, sizeof text, " gives %.3g tokens, above training.tokens's most (%.3g)", tokens, most);
      detail::fail(get(flag)->at, flag + text);
    }
    return detail::yaml_int(static_cast<long long>(tokens));
  }
  int required(const std::string& flag, std::string_view as) const {
    if (auto v = integer(flag, as)) return *v;
    // a misspelling of it among the unknown flags: named at its place, with the fix
    for (const auto& u : unknown_)
      if (core::closest_match(u.word, {flag}) == flag)
        detail::fail(u.at, "unknown flag " + u.word + ": did you mean " + flag + "? (missing " + flag +
                               ", which a model needs)");
    detail::fail(Mark{src_, 0, 0}, "missing " + flag + " (a model needs it)");
  }
  std::string choice(const std::string& flag, const std::vector<std::string>& choices, const std::string& fallback) const {
    const Flag* f = get(flag);
    if (!f) return fallback;
    if (among(choices, f->value)) return f->value;
    detail::fail(f->at, flag + " must be one of " + core::joined(choices) + ", got \"" + f->value + "\"");
  }
  const std::vector<std::string>& ignored() const { return ignored_; }
  struct Word {
    std::string word;
    Mark at;
  };
  const std::vector<Word>& unknown() const { return unknown_; }
  struct RefusedFlag {
    std::string flag, value;
    Mark at;
    const Refused* why;
  };
  const std::vector<RefusedFlag>& refused_flags() const { return refused_; }
  struct UnmodelledFlag {
    std::string flag, value;
    Mark at;
    const Unmodelled* why;
  };
  const std::vector<UnmodelledFlag>& unmodelled_flags() const { return unmodelled_; }
  const UnmodelledFlag* unmodelled_flag(const std::string& flag) const {
    for (const auto& u : unmodelled_)
      if (u.flag == flag) return &u;
    return nullptr;
  }

 private:
  static std::string value_of_inline(const std::string& word) { return word.substr(word.find('=') + 1); }

  detail::SourcePtr src_;
  std::map<std::string, Flag> flags_;
  std::vector<std::string> ignored_;
  std::vector<Word> unknown_;
  std::vector<RefusedFlag> refused_;
  std::vector<UnmodelledFlag> unmodelled_;
};

std::string itext(long long v) { return detail::yaml_int(v); }

// --moe-token-dispatcher-type (arguments.py's choices; unset, Megatron-Core's allgather)
std::string dispatcher(const Arguments& a) {
  return a.choice("--moe-token-dispatcher-type", {"allgather", "alltoall", "alltoall_seq", "flex"}, "allgather");
}

// --transformer-impl local: Megatron-Core's own modules instead of TransformerEngine's
bool local_impl(const Arguments& a) {
  return a.choice("--transformer-impl", {"transformer_engine", "local"}, "transformer_engine") == "local";
}

// What --recompute-modules leaves to write: the modules selective recomputes, or none at all.
struct RecomputeModules {
  std::vector<std::string> names;  // training.recompute_modules, in the flag's order; empty: the key unwritten
  bool none_left = false;          // selective with an empty list: nothing recomputed (recompute: none)
};

// --moe-layer-freq's value: an integer N (layer i is MoE when i % N == 0, Megatron's
// moe_layer_pattern) or a Python list of 0/1 per layer, written out or as sums of [x]*n. Empty
// when the text is neither.
std::vector<int> layer_pattern(const std::string& text, int layers) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  while (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  std::vector<int> out;
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    if (t.size() > 6) return {};
    const int n = std::stoi(t);
    if (n < 1) return {};
    for (int i = 0; i < layers; ++i) out.push_back(i % n == 0 ? 1 : 0);
    return out;
  }
  // terms joined by '+': "[a,b,...]" or "[a,b,...]*n"
  std::size_t i = 0;
  while (i < t.size()) {
    if (t[i] != '[') return {};
    const std::size_t close = t.find(']', i);
    if (close == std::string::npos) return {};
    std::vector<int> items;
    std::size_t j = i + 1;
    while (j < close) {
      if (t[j] != '0' && t[j] != '1') return {};
      items.push_back(t[j] - '0');
      ++j;
      if (j < close && t[j++] != ',') return {};
    }
    long long times = 1;
    i = close + 1;
    if (i < t.size() && t[i] == '*') {
      std::size_t k = ++i;
      while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k])) && k - i < 6) ++k;
      if (k == i) return {};
      times = std::stoll(t.substr(i, k - i));
      i = k;
    }
    for (long long r = 0; r < times && static_cast<long long>(out.size()) <= layers; ++r)
      out.insert(out.end(), items.begin(), items.end());
    if (i < t.size() && t[i++] != '+') return {};
  }
  return out;
}

// --moe-layer-freq: dense first layers then every layer MoE, or MoE exactly where (i + 1) % every
// == 0, into `moe`; what the written key says of it.
std::string read_moe_layers(const Flag* freq, int layers, core::MoeSpec& moe) {
  if (!freq) return "every layer is an MoE layer (--moe-layer-freq 1)";
  const std::vector<int> p = layer_pattern(freq->value, layers);
  if (static_cast<int>(p.size()) != layers)
    detail::fail(freq->at, "--moe-layer-freq " + freq->value + " is not an integer or a list of " + itext(layers) +
                               " 0/1 entries (one per layer)");
  int k = 0;
  while (k < layers && p[k] == 0) ++k;
  const bool dense_first = k < layers && std::all_of(p.begin() + k, p.end(), [](int x) { return x == 1; });
  int every = 0;
  for (int n = 1; n <= layers && every == 0; ++n) {
    bool fits = true;
    for (int i = 0; i < layers && fits; ++i) fits = p[i] == ((i + 1) % n == 0 ? 1 : 0);
    if (fits) every = n;
  }
  if (dense_first) {
    moe.first_k_dense = k;
    return k == 0 ? std::string("--moe-layer-freq: every layer is an MoE layer")
                  : "--moe-layer-freq: the layers after the first " + itext(k) + " are MoE";
  }
  if (every > 0) {
    moe.every = every;
    return "--moe-layer-freq: MoE where (i + 1) % " + itext(every) + " == 0";
  }
  detail::fail(freq->at, "--moe-layer-freq " + freq->value + " is not modelled: ptdsim's MoE layers are those past "
                         "moe.first_k_dense dense ones, or those with (i + 1) % moe.every == 0");
}

// The experts (--num-experts and the router's flags), Megatron-LM's defaults where a flag is absent.
void read_moe(const Arguments& a, core::ModelSpec& m, detail::ModelLines& model) {
  const auto experts = a.integer("--num-experts", "model.moe.experts");
  if (!experts) return;
  core::MoeSpec moe;
  moe.experts = *experts;
  moe.top_k = a.integer("--moe-router-topk", "model.moe.top_k").value_or(2);  // Megatron's default top-k
  moe.ffn_hidden = a.integer("--moe-ffn-hidden-size", "model.moe.ffn_hidden").value_or(0);
  const std::string every_from = read_moe_layers(a.get("--moe-layer-freq"), m.layers, moe);
  if (const auto shared = a.integer("--moe-shared-expert-intermediate-size", "model.moe.shared_ffn_hidden")) {
    // Megatron-Core's SharedExpertMLP: the shared experts as one MLP of this width
    moe.shared_experts = 1;
    moe.shared_ffn_hidden = *shared;
  }
  const std::string score = a.choice("--moe-router-score-function", {"softmax", "sigmoid"}, "softmax");
  moe.router = score == "sigmoid" ? core::Router::sigmoid : core::Router::softmax;
  moe.router_groups = a.integer("--moe-router-num-groups", "model.moe.router_groups").value_or(0);
  moe.router_group_topk = a.integer("--moe-router-group-topk", "model.moe.router_group_topk").value_or(0);
  m.moe = moe;
  model.add_moe("experts", itext(moe.experts), "--num-experts", a.at("--num-experts"));
  model.add_moe("top_k", itext(moe.top_k), a.has("--moe-router-topk") ? "--moe-router-topk" : "Megatron's default 2",
                a.has("--moe-router-topk") ? a.at("--moe-router-topk") : a.at("--num-experts"));
  model.add_moe("every", itext(moe.every), every_from, a.at("--moe-layer-freq"));
  if (moe.ffn_hidden > 0) model.add_moe("ffn_hidden", itext(moe.ffn_hidden), "--moe-ffn-hidden-size");
  if (moe.first_k_dense > 0)
    model.add_moe("first_k_dense", itext(moe.first_k_dense), "--moe-layer-freq", a.at("--moe-layer-freq"));
  if (moe.shared_experts > 0) {
    model.add_moe("shared_experts", "1", "--moe-shared-expert-intermediate-size: one shared MLP");
    model.add_moe("shared_ffn_hidden", itext(moe.shared_ffn_hidden), "--moe-shared-expert-intermediate-size",
                  a.at("--moe-shared-expert-intermediate-size"));
  }
  if (a.has("--moe-router-score-function"))
    model.add_moe("router", score, "--moe-router-score-function", a.at("--moe-router-score-function"));
  if (moe.router_groups > 0)
    model.add_moe("router_groups", itext(moe.router_groups), "--moe-router-num-groups", a.at("--moe-router-num-groups"));
  if (moe.router_group_topk > 0)
    model.add_moe("router_group_topk", itext(moe.router_group_topk), "--moe-router-group-topk",
                  a.at("--moe-router-group-topk"));
}

// What a key written from `flag` says it came from: the flag, or its absence and the default taken.
std::string from_flag(const Arguments& a, const char* flag, const std::string& fallback) {
  return a.has(flag) ? std::string(flag) : std::string(flag) + " absent: " + fallback;
}

// Multi-latent attention (--multi-latent-attention and its widths); its widths without it are refused.
void read_mla(const Arguments& a, core::ModelSpec& m, detail::ModelLines& model) {
  if (a.has("--multi-latent-attention")) {
    // Megatron-LM's defaults (arguments.py): q_lora_rank None, kv_lora_rank 32, qk_head_dim 128 (the
    // part without rope), qk_pos_emb_head_dim 64, v_head_dim 128
    core::MlaSpec l;
    l.q_lora_rank = a.integer("--q-lora-rank", "model.mla.q_lora_rank").value_or(0);
    l.kv_lora_rank = a.integer("--kv-lora-rank", "model.mla.kv_lora_rank").value_or(32);
    l.qk_nope_head_dim = a.integer("--qk-head-dim", "model.mla.qk_nope_head_dim").value_or(128);
    l.qk_rope_head_dim = a.integer("--qk-pos-emb-head-dim", "model.mla.qk_rope_head_dim").value_or(64);
    l.v_head_dim = a.integer("--v-head-dim", "model.mla.v_head_dim").value_or(128);
    m.mla = l;
    model.add_in("mla", "q_lora_rank", itext(l.q_lora_rank), from_flag(a, "--q-lora-rank", "Megatron's default None (0)"),
                 a.at("--q-lora-rank"));
    model.add_in("mla", "kv_lora_rank", itext(l.kv_lora_rank), from_flag(a, "--kv-lora-rank", "Megatron's default 32"),
                 a.at("--kv-lora-rank"));
    model.add_in("mla", "qk_nope_head_dim", itext(l.qk_nope_head_dim), from_flag(a, "--qk-head-dim", "Megatron's default 128"),
                 a.at("--qk-head-dim"));
    model.add_in("mla", "qk_rope_head_dim", itext(l.qk_rope_head_dim),
                 from_flag(a, "--qk-pos-emb-head-dim", "Megatron's default 64"), a.at("--qk-pos-emb-head-dim"));
    model.add_in("mla", "v_head_dim", itext(l.v_head_dim), from_flag(a, "--v-head-dim", "Megatron's default 128"),
                 a.at("--v-head-dim"));
  } else {
    for (const char* flag : {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim"})
      if (a.has(flag))
        detail::fail(a.at(flag), std::string(flag) + " is read with --multi-latent-attention only (as in Megatron-LM)");
  }
}

// The MoE and MLA flags (docs/inputs.md "Importing a Megatron-LM command line"), Megatron-LM's
// defaults where a flag is absent (megatron/training/arguments.py). The parallel ones (expert
// tensor parallelism, the token dispatcher) are the scenario's.
void read_moe_and_mla(const Arguments& a, core::ModelSpec& m, detail::ModelLines& model) {
  read_moe(a, m, model);
  read_mla(a, m, model);
  if (const auto mtp = a.integer("--mtp-num-layers", "model.mtp_layers")) {
    m.mtp_layers = *mtp;
    model.add("mtp_layers", itext(m.mtp_layers), "--mtp-num-layers", a.at("--mtp-num-layers"));
  }
}


// The flags that change the model or the step: refused, but for a recompute method ptdsim models
// (uniform over one-layer chunks: every layer's input checkpointed). True for that one.
bool read_refused(const Arguments& a) {
  bool recompute_every_layer = false;
  for (const auto& r : a.refused_flags()) {
    if (r.flag == "--recompute-method" || r.flag == "--recompute-num-layers") {
      const auto* method = [&]() -> const Arguments::RefusedFlag* {
        for (const auto& x : a.refused_flags())
          if (x.flag == "--recompute-method") return &x;
        return nullptr;
      }();
      const auto* layers = [&]() -> const Arguments::RefusedFlag* {
        for (const auto& x : a.refused_flags())
          if (x.flag == "--recompute-num-layers") return &x;
        return nullptr;
      }();
      // uniform over chunks of one layer checkpoints every layer's input: recompute: full
      if (method && method->value == "uniform" && (!layers || layers->value == "1")) {
        recompute_every_layer = true;
        continue;
      }
    }
    detail::fail(r.at, r.flag + (r.value.empty() ? "" : " " + r.value) + " changes the model or the step, and " +
                           r.why->why);
  }
  if (recompute_every_layer && a.get("--recompute-granularity") && a.get("--recompute-granularity")->value != "full")
    detail::fail(a.get("--recompute-granularity")->at,
                 "--recompute-method applies to --recompute-granularity full only (as in Megatron-LM)");
  return recompute_every_layer;
}

// A warning per unknown flag (with the nearest known one), then every flag read checked whether or
// not a scenario is written.
void check_flags(const Arguments& a, Imported& out) {
  for (const auto& u : a.unknown()) {
    if (u.word.rfind("--", 0) != 0) {  // a value of an unknown flag that takes several, or a slip
      out.warnings.push_back(fmt::format("megatron:1:{}: stray word {}: not read by ptdsim (a value the flag before "
                                         "it does not take, or a slip)", u.at.column, core::printable(u.word)));
      continue;
    }
    const std::string near = core::closest_match(u.word, megatron_flags());
    out.warnings.push_back(fmt::format("megatron:1:{}: unknown flag {}{}", u.at.column, core::printable(u.word),
                                       near.empty() ? ": not read by ptdsim; if it changes the model or the step, "
                                                      "the imported file does not show it"
                                                    : ": did you mean " + near + "? (not read)"));
  }
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
  const bool swiglu = a.has("--swiglu");
  m.mlp = swiglu ? core::Mlp::swiglu : core::Mlp::gelu;
  // Megatron's default FFN width: 4h, or for SwiGLU 2/3 of it rounded down to a multiple of 64
  const int default_ffn = swiglu ? static_cast<int>((4.0 * m.hidden * 2 / 3) / 64) * 64 : 4 * m.hidden;
  m.ffn_hidden = a.integer("--ffn-hidden-size", "model.ffn_hidden").value_or(default_ffn);
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
  const std::string position = a.choice("--position-embedding-type", {"learned_absolute", "rope", "none"},
                                        "learned_absolute");
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
            a.at("--ffn-hidden-size"));
  model.add("vocab", itext(m.vocab), "--vocab-size " + itext(vocab) + " padded to a multiple of " + itext(multiple));
  model.add("mlp", swiglu ? "swiglu" : "gelu", swiglu ? "--swiglu" : "no --swiglu: GeLU");
  model.add("norm", m.norm == core::Norm::rmsnorm ? "rmsnorm" : "layernorm", "--normalization " + norm);
  model.add("position", m.position == core::Position::rope ? "rope" : "learned", "--position-embedding-type " + position);
  model.add("max_seq_len", itext(m.max_seq_len), a.has("--max-position-embeddings") ? "--max-position-embeddings"
                                                                                     : "--seq-length");
  model.add("tied_embeddings", detail::yaml_bool(m.tied_embeddings),
            m.tied_embeddings ? "no --untie-embeddings-and-output-weights" : "--untie-embeddings-and-output-weights");
  model.add("bias", detail::yaml_bool(m.bias), m.bias ? "no --disable-bias-linear" : "--disable-bias-linear");
  if (m.attention_head_dim > 0) model.add("head_dim", itext(m.attention_head_dim), "--kv-channels", a.at("--kv-channels"));
  if (m.qk_norm) model.add("qk_norm", "true", "--qk-layernorm", a.at("--qk-layernorm"));
  read_moe_and_mla(a, m, model);
  // what evaluate would refuse, at the flag that gave it
  detail::check_model(m, model, Mark{src, 0, 0});
  return m;
}

// Megatron-LM's virtual pipeline degree (arguments.py): the layers a pipeline stage holds (the
// embedding and the loss counted where the split counts them) over --num-layers-per-virtual-pipeline-stage;
// 1 without it (arguments.py then sets none, as it does for a degree of 1).
int virtual_stages(const Arguments& a, int layers) {
  const auto per = a.integer("--num-layers-per-virtual-pipeline-stage", "model.layers");
  if (!per) return 1;
  const int pp = a.integer("--pipeline-model-parallel-size", "parallel.pp").value_or(1);
  const long long counted = 1LL * layers + a.has("--account-for-embedding-in-pipeline-split") +
                            a.has("--account-for-loss-in-pipeline-split");
  if (1LL * pp * *per > counted || counted % (1LL * pp * *per) != 0)
    detail::fail(a.get("--num-layers-per-virtual-pipeline-stage")->at,
                 "--num-layers-per-virtual-pipeline-stage " + itext(*per) + " does not divide the " + itext(counted) +
                     " layers over " + itext(pp) + " pipeline stages");
  return static_cast<int>(counted / (1LL * pp * *per));
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
           {"parallel.vpp", "--num-layers-per-virtual-pipeline-stage"},
           {"parallel.stage_layers", "--decoder-first-pipeline-num-layers"},
           {"training.seq_len", "--seq-length"},
           {"training.micro_batch", "--micro-batch-size"},
           {"training.global_batch", "--global-batch-size"}})
    if (a.get(flag)) lines.at.emplace_back(key, a.get(flag)->at);
  lines.parallel.push_back({"tp: " + itext(tp), "--tensor-model-parallel-size"});
  lines.parallel.push_back({"pp: " + itext(pp), "--pipeline-model-parallel-size"});
  lines.parallel.push_back({"cp: " + itext(a.integer("--context-parallel-size", "parallel.cp").value_or(1)), "--context-parallel-size"});
  if (m.moe) lines.parallel.push_back({"ep: " + itext(a.integer("--expert-model-parallel-size", "parallel.ep").value_or(1)),
                                       "--expert-model-parallel-size"});
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
  } else if (a.has("--recompute-granularity")) {
    recompute = a.choice("--recompute-granularity", {"full", "selective"}, "full");
    recompute_from = "--recompute-granularity";
  } else if (recompute_every_layer) {
    recompute = "full";
    recompute_from = "--recompute-method uniform, one layer a chunk: every layer";
  } else if (a.has("--recompute-activations")) {
    recompute = "selective";
    recompute_from = "--recompute-activations (selective)";
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
    if (fusion.find(entry) == std::string::npos)  // (both activation switches set one key)
      fusion += (fusion.empty() ? "" : ", ") + entry;
    from += (from.empty() ? "" : "; ") + std::string(flag);
  };
  add_fusion("--no-rope-fusion", "rope: eager");
  add_fusion("--no-bias-swiglu-fusion", "activation: eager");
  add_fusion("--no-bias-gelu-fusion", "activation: eager");
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

// The MoE flags as argparse takes them, before any of TransformerConfig's rules: the capacity
// factor a number, the balancing types among its choices (one or several, their auxiliary losses
// summed), the coefficients numbers. The balancing changes no step's time; it is checked so that a
// command Megatron-LM refuses is refused here.
void moe_arguments(const Arguments& a) {
  if (const Flag* f = a.get("--moe-expert-capacity-factor"); f && !detail::parse_number(f->value))
    detail::fail(f->at, "--moe-expert-capacity-factor must be a number, got \"" + core::printable(f->value) + "\"");
  if (const Flag* f = a.get("--moe-router-load-balancing-type")) {
    static const std::vector<std::string> kinds{"aux_loss", "seq_aux_loss", "global_aux_loss",
                                                "sinkhorn", "quantile_balancing", "none"};
    const std::string list = core::joined(kinds);
    if (f->items.empty()) detail::fail(f->at, "--moe-router-load-balancing-type needs a type (" + list + ")");
    for (const auto& item : f->items)
      if (!among(kinds, item.text)) {
        const std::string near = core::closest_match(item.text, kinds);
        detail::fail(item.at, "--moe-router-load-balancing-type: unknown type \"" + core::printable(item.text) +
                                  "\" (Megatron-LM's are " + list + ")" +
                                  (near.empty() ? "" : ": did you mean " + near + "?"));
      }
  }
  if (const Flag* c = a.get("--moe-aux-loss-coeff")) {
    if (c->items.empty()) detail::fail(c->at, "--moe-aux-loss-coeff needs a coefficient");
    for (const auto& item : c->items)
      if (!detail::parse_number(item.text))
        detail::fail(item.at, "--moe-aux-loss-coeff must be a number, got \"" + core::printable(item.text) + "\"");
  }
}

// TransformerConfig's rules on them: several types need as many coefficients, and a capacity factor
// (any given: the check follows the line that makes a negative one None, in the same block) works
// with the auxiliary losses only, not with the algorithms that route by their own rule.
void balancing_rules(const Arguments& a) {
  const Flag* f = a.get("--moe-router-load-balancing-type");
  if (!f) return;
  if (f->items.size() > 1) {
    const Flag* c = a.get("--moe-aux-loss-coeff");
    if (!c || c->items.size() != f->items.size())
      detail::fail(c ? c->at : f->at, "--moe-router-load-balancing-type gives " + std::to_string(f->items.size()) +
                                          " types: --moe-aux-loss-coeff needs as many coefficients, one a type, got " +
                                          std::to_string(c ? c->items.size() : 0) + " (as in Megatron-LM)");
  }
  if (a.has("--moe-expert-capacity-factor"))
    for (const auto& item : f->items)
      if (item.text == "sinkhorn" || item.text == "quantile_balancing")
        detail::fail(item.at, "--moe-expert-capacity-factor works with aux_loss, seq_aux_loss, global_aux_loss or "
                              "none load balancing, not " + item.text + " (as in Megatron-LM)");
}

// An MoE layer's keys (training.moe) from Megatron-Core's MoE flags, with TransformerConfig's checks
// of them: the dispatcher (unset: the framework row's allgather, Megatron-Core's default; alltoall_seq
// is alltoall over a sequence-split layout, the same traffic; DeepEP's and HybridEP's fused dispatch
// and combine are ptdsim's flex), token dropping, and a force-balanced router.
void moe_line(const Arguments& a, detail::ScenarioLines& lines, std::vector<std::string>& warnings) {
  // first what argparse and TransformerConfig refuse on any model
  moe_arguments(a);
  const std::string d = dispatcher(a);
  std::string backend = a.choice("--moe-flex-dispatcher-backend", {"deepep", "hybridep", "ncclep"}, "deepep");
  if (a.has("--moe-enable-deepep")) {  // deprecated: sets the backend to deepep
    if (d != "flex")
      detail::fail(a.at("--moe-enable-deepep"), "--moe-enable-deepep needs --moe-token-dispatcher-type flex (as in Megatron-LM)");
    if (backend == "hybridep")
      detail::fail(a.at("--moe-enable-deepep"),
                   "--moe-enable-deepep and --moe-flex-dispatcher-backend hybridep name two backends (Megatron-LM takes one)");
    backend = "deepep";
  }
  if (backend == "ncclep" && d != "flex")
    detail::fail(a.at("--moe-flex-dispatcher-backend"),
                 "--moe-flex-dispatcher-backend ncclep needs --moe-token-dispatcher-type flex (as in Megatron-LM)");
  const bool pad = a.has("--moe-pad-expert-input-to-capacity");
  std::optional<double> factor;  // a capacity factor; none: dropless (absent, or negative: TransformerConfig's None)
  if (const Flag* f = a.get("--moe-expert-capacity-factor")) {
    const auto v = detail::parse_number(f->value);
    if (!v) detail::fail(f->at, "--moe-expert-capacity-factor must be a number, got \"" +
                                                      core::printable(f->value) + "\"");
    if (*v >= 0) factor = *v;  // (-0.0 too: Python's -0.0 < 0 is false)
  }
  // in TransformerConfig's order
  if (pad && d == "flex" && backend == "deepep")
    detail::fail(a.at("--moe-pad-expert-input-to-capacity"),
                 "--moe-pad-expert-input-to-capacity does not work with the flex dispatcher's deepep backend (as in Megatron-LM)");
  balancing_rules(a);
  if (pad && !factor)
    detail::fail(a.at("--moe-pad-expert-input-to-capacity"),
                 a.has("--moe-expert-capacity-factor")
                     ? "--moe-pad-expert-input-to-capacity needs a capacity factor: --moe-expert-capacity-factor " +
                           a.get("--moe-expert-capacity-factor")->value + " is none (dropless), and Megatron-LM refuses the pair"
                     : std::string("--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor (as in Megatron-LM)"));
  static const std::vector<std::string> flags{"--moe-token-dispatcher-type", "--moe-flex-dispatcher-backend",
                                              "--moe-enable-deepep", "--moe-expert-capacity-factor",
                                              "--moe-pad-expert-input-to-capacity", "--moe-router-force-load-balancing"};
  if (!a.has("--num-experts")) {  // read_model: a dense model; Megatron-Core builds no MoE layer to use them
    for (const auto& f : flags)
      if (a.has(f)) warnings.push_back(f + " changes nothing without --num-experts, as in Megatron-LM: not read");
    return;
  }
  if (a.has("--moe-flex-dispatcher-backend") && d != "flex")
    warnings.push_back("--moe-flex-dispatcher-backend is read under --moe-token-dispatcher-type flex only, as "
                       "Megatron-LM does: not read");
  if (d == "flex" && backend == "ncclep")
    detail::fail(a.at("--moe-flex-dispatcher-backend"),
                 "--moe-flex-dispatcher-backend ncclep changes the step, and NCCL's EP kernels are not modelled "
                 "(ptdsim's flex dispatcher is DeepEP's and HybridEP's fused dispatch and combine)");
  std::vector<std::string> keys, from;
  if (a.has("--moe-token-dispatcher-type")) {
    keys.push_back("dispatcher: " + (d == "alltoall_seq" ? std::string("alltoall") : d));
    from.push_back(a.has("--moe-flex-dispatcher-backend") && d == "flex" ? "--moe-token-dispatcher-type with "
                   "--moe-flex-dispatcher-backend " + backend : "--moe-token-dispatcher-type");
  }
  if (factor) {
    // a factor drops what exceeds it; only the padded experts compute the whole capacity, which is
    // what training.moe.capacity_factor times
    const Flag* f = a.get("--moe-expert-capacity-factor");
    const std::string& text = f->value;
    if (*factor == 0)
      detail::fail(f->at, "--moe-expert-capacity-factor " + text + " leaves every expert no capacity: Megatron-LM "
                          "drops every token, which is not modelled (a negative factor is dropless)");
    if (*factor > detail::bound_of("training.moe.capacity_factor").max)
      detail::fail(f->at, "--moe-expert-capacity-factor " + text + " is above training.moe.capacity_factor's most (" +
                              itext(static_cast<long long>(detail::bound_of("training.moe.capacity_factor").max)) + ")");
    if (!pad) {
      warnings.push_back("--moe-expert-capacity-factor without --moe-pad-expert-input-to-capacity: each expert "
                         "computes the tokens it keeps, at most " + text + " times the mean, which ptdsim times as "
                         "dropless (training.moe.load_imbalance, 1 unless given): capacity_factor not written");
    } else {
      // the router pads every expert's routing map to its capacity under any dispatcher
      // (moe_utils.apply_router_token_dropping), so each sends and computes the factor times the mean
      keys.push_back("capacity_factor: " + text);
      from.push_back("--moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity");
    }
  }
  if (a.has("--moe-router-force-load-balancing")) {  // every expert the mean: what the key's 1 says
    keys.push_back("load_imbalance: 1");
    from.push_back("--moe-router-force-load-balancing");
  }
  if (keys.empty()) return;
  std::string text, comment;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    text += (i ? ", " : "") + keys[i];
    comment += (i ? "; " : "") + from[i];
  }
  lines.training.push_back({"moe: {" + text + "}", comment});
  // where a refusal of the line is told: the dispatcher, else the router's flag
  lines.at.emplace_back("training.moe", a.has("--moe-token-dispatcher-type") ? a.at("--moe-token-dispatcher-type")
                                                                             : a.at("--moe-router-force-load-balancing"));
}

// --overlap-moe-expert-parallel-comm (Megatron-Core's combined 1F1B, training.overlap.ep), refused
// where TransformerConfig asserts against it.
bool moe_overlap(const Arguments& a, int layers) {
  const Flag* f = a.get("--overlap-moe-expert-parallel-comm");
  if (!f) return false;
  const auto refuse = [&](const std::string& why) {
    detail::fail(f->at, "--overlap-moe-expert-parallel-comm " + why + " (Megatron-LM asserts it)");
  };
  if (!a.has("--num-experts") || a.integer("--expert-model-parallel-size", "parallel.ep").value_or(1) <= 1)
    refuse("needs expert parallelism: --num-experts and --expert-model-parallel-size above 1");
  const std::string d = dispatcher(a);
  if (d != "alltoall" && d != "flex") refuse("needs --moe-token-dispatcher-type alltoall or flex, not " + d);
  if (a.integer("--pipeline-model-parallel-size", "parallel.pp").value_or(1) > 1 && virtual_stages(a, layers) <= 1)
    refuse("needs a virtual pipeline of more than one stage a rank under pipeline parallelism "
           "(--num-layers-per-virtual-pipeline-stage)");
  if (a.has("--recompute-granularity") &&
      a.choice("--recompute-granularity", {"full", "selective"}, "full") == "full")
    refuse("does not work with --recompute-granularity full");
  if (const Flag* m = a.get("--recompute-modules"))  // asserted whatever the granularity
    for (const auto& item : m->items)
      if (item.text == "moe") refuse("does not work with --recompute-modules moe");
  if (!a.has("--bf16") && !a.has("--fp16")) refuse("needs --bf16 or --fp16");
  if (a.has("--moe-shared-expert-overlap")) refuse("does not work with --moe-shared-expert-overlap");
  if (a.integer("--mtp-num-layers", "model.mtp_layers").value_or(0) > 1) refuse("takes at most one MTP layer");
  return true;
}

// The scenario's training keys: batch, precision, recompute, attention kernel, fusions, FP8 recipe,
// overlap, tokens.
void training_lines(const Arguments& a, bool recompute_every_layer, const RecomputeModules& modules, int layers,
                    ImportScenario& opt, detail::ScenarioLines& lines, std::vector<std::string>& warnings) {
  lines.training.push_back({"seq_len: " + itext(opt.seq_len), a.has("--seq-length") ? "--seq-length" : "--seq-len"});
  lines.training.push_back({"micro_batch: " + itext(opt.micro_batch > 0 ? opt.micro_batch : 1), "--micro-batch-size"});
  lines.training.push_back({"global_batch: " + itext(opt.global_batch), "--global-batch-size"});
  lines.training.push_back(precision_line(a, opt));
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

const std::vector<std::string>& megatron_flags() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v = kValueFlags;
    v.insert(v.end(), kSwitchFlags.begin(), kSwitchFlags.end());
    v.insert(v.end(), kListFlags.begin(), kListFlags.end());
    std::sort(v.begin(), v.end());
    return v;
  }();
  return all;
}

Imported import_megatron(const std::string& arguments, const std::string& name, const ImportScenario& scenario) {
  constexpr const char* kSource = "megatron";  // the argument string as a one-line file in messages
  return detail::guarded(kSource, [&] {
    std::string one_line = arguments;
    std::replace(one_line.begin(), one_line.end(), '\n', ' ');  // columns stay; the caret line stays one line
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
    if (const auto seq = a.integer("--seq-length", "training.seq_len")) opt.seq_len = *seq;
    if (const auto gbs = a.integer("--global-batch-size", "training.global_batch")) opt.global_batch = *gbs;
    if (const auto mbs = a.integer("--micro-batch-size", "training.micro_batch")) opt.micro_batch = *mbs;
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
