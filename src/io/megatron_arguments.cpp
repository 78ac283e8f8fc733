// The flags of a Megatron-LM command line by class, and the reading of its words into them
// (megatron_arguments.hpp).
#include "megatron_arguments.hpp"

#include <algorithm>
#include <cctype>

#include "ptdsim/io/import.hpp"

namespace ptdsim::io::megatron {

using detail::Mark;

constexpr char kNoHost[] =
    "CUDA graphs replay captured kernels without the host's launch work, and ptdsim does not model the host: "
    "it times the GPU's work as if the host always kept ahead (docs/validation.md, \"Where the biased buckets' "
    "error sits\")";

namespace {

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
    "--optimizer-offload-fraction", "--moe-expert-capacity-factor", "--moe-flex-dispatcher-backend",
    "--window-size", "--window-attn-skip-freq", "--softmax-type"};
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
    "--moe-enable-deepep", "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute", "--quick-geglu",
    "--squared-relu"};
// Flags that take a list (argparse nargs '*' or '+'): the values run to the next word that starts
// with "--" (`--recompute-modules core_attn mlp`); `--flag=value` gives one value, as in argparse.
const std::vector<std::string> kListFlags{"--recompute-modules", "--offload-modules", "--cp-comm-type",
                                          "--hierarchical-context-parallel-sizes",
                                          "--moe-router-load-balancing-type", "--moe-aux-loss-coeff"};
// Megatron-LM flags that change neither the model's shapes nor a step's time or memory (data,
// tokenizer, checkpoints, logging, learning-rate schedule, initialisation, dropout): listed in the
// "ignored" warning, nothing else. A flag in none of the lists is unknown to ptdsim: a warning names
// it (with the closest flag ptdsim reads when there is one), since it may be a misspelling. They are
// listed by argparse's kind in megatron/training/arguments.py, the same at every release that has
// them from March 2025 to August 2026 (one value; store_true or store_false, a switch; nargs '*',
// --data-path's list), so that each takes its own words and no more: a word after an ignored switch
// is a stray word.
const std::vector<std::string> kIgnoredListFlags{"--data-path", "--mrope-section"};
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
    "--mtp-loss-scaling-factor", "--cuda-graph-warmup-steps", "--yarn-original-max-position-embeddings",
    "--yarn-beta-fast", "--yarn-beta-slow", "--glu-linear-offset", "--activation-func-clamp-value"};
const std::vector<std::string> kIgnoredSwitchFlags{
    "--use-mcore-models", "--log-throughput", "--use-checkpoint-args", "--no-load-optim", "--no-load-rng",
    "--finetune", "--mock-data", "--log-params-norm", "--log-num-zeros-in-grad", "--async-save", "--manual-gc",
    "--attention-softmax-in-fp32", "--no-masked-softmax-fusion", "--eod-mask-loss",
    "--use-rotary-position-embeddings", "--no-save-optim", "--no-save-rng", "--no-check-for-nan-in-loss-and-grad",
    "--no-mmap-bin-files", "--no-create-attention-mask-in-dataloader", "--auto-detect-ckpt-format",
    "--log-timers-to-tensorboard", "--log-memory-to-tensorboard", "--log-validation-ppl-to-tensorboard",
    "--moe-router-pre-softmax", "--moe-router-enable-expert-bias", "--te-rng-tracker", "--apply-layernorm-1p",
    "--yarn-correction-range-round-to-int", "--is-hybrid-model"};

constexpr Refused kRefusedFlags[] = {
    {"--recompute-method", "recomputing some layers (block, or uniform over chunks of more than one layer) is not "
                           "modelled: ptdsim's recompute: full recomputes every layer"},
    {"--recompute-num-layers", "recomputing some layers is not modelled: ptdsim's recompute: full recomputes every layer"},
    {"--distribute-saved-activations", "splitting the recompute checkpoints over tp is not modelled", Takes::nothing},
    {"--optimizer", "ptdsim models Adam (its memory and its step); another optimizer is not modelled"},
    {"--cpu-offloading", "activation offload to the CPU is not modelled"},
    {"--pipeline-model-parallel-layout", "an explicit layer layout is not read: give parallel.stage_layers in the file"},
    {"--encoder-num-layers", "encoder-decoder models are not modelled"},
    {"--num-virtual-stages-per-pipeline-rank",
     "give the split as --num-layers-per-virtual-pipeline-stage, which the importer reads"},
    // layers other than softmax attention beside an MLP or MoE: ptdsim times every layer as one
    {"--linear-attention-type", "linear-attention layers (Gated DeltaNet: Qwen3-Next) are not modelled: ptdsim "
                                "times every layer's attention as softmax attention"},
    {"--linear-attention-freq", "linear-attention layers (Gated DeltaNet: Qwen3-Next) are not modelled: ptdsim "
                                "times every layer's attention as softmax attention"},
    {"--experimental-attention-variant", "Gated DeltaNet and DeepSeek sparse attention layers are not modelled: "
                                         "ptdsim times every layer's attention as softmax attention"},
    {"--hybrid-layer-pattern", "hybrid models (Mamba or Gated DeltaNet layers beside attention) are not modelled"},
    {"--hybrid-override-pattern", "hybrid models (Mamba or Gated DeltaNet layers beside attention) are not modelled"},
    {"--heterogeneous-layers-config-path", "heterogeneous layers (per-layer attention and FFN shapes, "
                                           "Llama-Nemotron) are not modelled"},
    {"--heterogeneous-layers-config-encoded-json", "heterogeneous layers (per-layer attention and FFN shapes, "
                                                   "Llama-Nemotron) are not modelled"},
    {"--spec", "a custom layer spec is not modelled: ptdsim builds Megatron-Core's GPT layer", Takes::list},
    {"--attention-output-gate",
     "the attention's output gate (Qwen3-Next: a second query-wide projection and its sigmoid) is not modelled",
     Takes::nothing}};

constexpr Unmodelled kUnmodelledFlags[] = {
    {"--cuda-graph-impl", Takes::value, kNoHost},
    {"--cuda-graph-scope", Takes::list, kNoHost},  // deprecated for --cuda-graph-modules
    {"--cuda-graph-modules", Takes::list, kNoHost},
    {"--enable-cuda-graph", Takes::nothing, kNoHost},
    {"--external-cuda-graph", Takes::nothing, kNoHost},
    {"--moe-permute-fusion", Takes::nothing,
     "ptdsim times permute and unpermute as one memory-bound copy of the routed rows each way (docs/analytic.md "
     "\"Expert parallelism\"), what the fused kernels do, with or without the flag"},
    {"--moe-router-fusion", Takes::nothing,
     "the router's softmax, top-k and scores are left out (docs/analytic.md \"Expert parallelism\"), fused or not"},
    {"--moe-router-dtype", Takes::value,
     "the router's GEMM (hidden x experts a token, under 1% of the experts' FLOPs in the shipped MoE models) is "
     "timed in 16 bits. Under fp32, Megatron-Core's forward is a 16-bit GEMM with fp32 output and its backward "
     "TransformerEngine's fp32 GEMM, which cuBLASLt computes in TF32 at half the 16-bit rate: what is left out "
     "is about 0.5% of the experts' time or less. Under fp64 both run as FP64 GEMMs in PyTorch, about 1/15 of "
     "the 16-bit rate on an H100: 5-10% of the experts' time is left out"},
    {"--cross-entropy-fusion-impl", Takes::value,
     "ptdsim times a fused cross entropy (--cross-entropy-loss-fusion) the same whichever implementation runs it"},
    {"--no-rope-freq", Takes::value,
     "RoPE is timed on every layer: the rotation the NoPE layers skip (a memory-bound pass over the queries and "
     "keys) is not taken off"},
    {"--qk-l2-norm", Takes::nothing,
     "the weightless L2 norm of each head's query and key (Llama 4) is not timed, nor its saved inputs counted: "
     "a memory-bound pass over the queries and keys"},
    {"--moe-shared-expert-gate", Takes::nothing,
     "the shared expert's sigmoid gate (one hidden-wide dot product a token) is not counted"}};

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

struct Token {
  std::string text;
  int column = 0;  // 1-based, in the argument string
};

// Shell-like words: blanks separate, single and double quotes group (import_megatron has made a
// continued command line's backslash-newlines blanks). Columns count in the string as given.
std::vector<Token> words(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
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

}  // namespace

bool among(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

Arguments::Arguments(const std::string& text, const detail::SourcePtr& src) : src_(src) {
  const auto ws = words(text);
  // whether word k exists and is a value (not the next flag)
  const auto value_at = [&](std::size_t k) { return k < ws.size() && ws[k].text.rfind("--", 0) != 0; };
  for (std::size_t i = 0; i < ws.size(); ++i) {
    std::string word = ws[i].text;
    const Mark at{src_, 1, ws[i].column};  // the flag
    if (word.rfind("--", 0) != 0) {
      // the program and its own arguments before the first flag; a stray word after one
      if (!flags_.empty() || !ignored_.empty() || !unknown_.empty() || !unmodelled_.empty() || !refused_.empty())
        unknown_.push_back({word, at});
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
    const auto needs_value = [&] {
      if (!inline_value && !value_at(i + 1)) detail::fail(at, word + " needs a value");
    };
    const auto takes_no_value = [&] {
      if (inline_value) detail::fail(at, word + " takes no value");
    };
    if (among(kValueFlags, word)) {
      needs_value();
      if (!inline_value) {
        value = ws[++i].text;
        value_column = ws[i].column;
      }
      if (flags_.count(word)) again(word, at);
      flags_[word] = Flag{value, Mark{src_, 1, value_column}, {}};
    } else if (among(kListFlags, word)) {
      Flag f{"", at, {}};
      if (inline_value) {
        f.items.push_back({value, Mark{src_, 1, value_column}});
      } else {
        while (value_at(i + 1)) {
          ++i;
          f.items.push_back({ws[i].text, Mark{src_, 1, ws[i].column}});
        }
      }
      if (flags_.count(word)) again(word, at);  // argparse keeps the last list alone
      flags_[word] = std::move(f);
    } else if (among(kSwitchFlags, word)) {
      takes_no_value();
      if (flags_.count(word)) again(word, at);
      flags_[word] = Flag{"", at, {}};
    } else {
      if (const Refused* r = refused(word)) {
        if (r->takes == Takes::nothing) {  // a switch: a word after it is a stray word
          takes_no_value();
          last(refused_, RefusedFlag{word, "", at, r});
          continue;
        }
        if (r->takes == Takes::list && !inline_value)  // all but the last value (taken below)
          while (value_at(i + 1) && value_at(i + 2)) value += (value.empty() ? "" : " ") + ws[++i].text;
        if (!inline_value && value_at(i + 1)) value += (value.empty() ? "" : " ") + ws[i + 1].text;
        last(refused_, RefusedFlag{word, value, at, r});
      } else if (const Unmodelled* u = unmodelled(word)) {
        if (u->takes == Takes::nothing) takes_no_value();
        if (u->takes == Takes::value) needs_value();
        if (u->takes == Takes::list && !inline_value)
          while (value_at(i + 1) && value_at(i + 2))
            value += (value.empty() ? "" : " ") + ws[++i].text;  // all but the last value
        if (!inline_value && u->takes != Takes::nothing && value_at(i + 1))
          value += (value.empty() ? "" : " ") + ws[i + 1].text;
        last(unmodelled_, UnmodelledFlag{word, value, at, u});
        if (u->takes == Takes::nothing) continue;  // a word after a switch is a stray word
      } else if (among(kIgnoredSwitchFlags, word)) {
        takes_no_value();
        ignored_.push_back(word);
        continue;  // a word after a switch is a stray word
      } else if (among(kIgnoredValueFlags, word)) {
        needs_value();
        ignored_.push_back(word);
      } else if (among(kIgnoredListFlags, word)) {
        ignored_.push_back(word);
        if (!inline_value)
          while (value_at(i + 1) && value_at(i + 2)) ++i;  // all but the last value
      } else {
        unknown_.push_back({word, at});
      }
      // its value, if it has one, is not a flag
      if (!inline_value && value_at(i + 1)) ++i;
    }
  }
}

void Arguments::again(const std::string& flag, const Mark& at) {
  repeated_.push_back({flag, at});
  earlier_[flag].push_back(flags_.at(flag));
}

template <class Entry>
void Arguments::last(std::vector<Entry>& entries, Entry entry) {
  for (auto& e : entries)
    if (e.flag == entry.flag) {
      repeated_.push_back({entry.flag, entry.at});
      e = std::move(entry);
      return;
    }
  entries.push_back(std::move(entry));
}

std::string itext(long long v) { return detail::yaml_int(v); }

std::optional<long long> python_int(const std::string& text) {
  const char* blanks = " \t\n\r\f\v";
  const std::size_t first = text.find_first_not_of(blanks);
  if (first == std::string::npos) return std::nullopt;
  const std::string t = text.substr(first, text.find_last_not_of(blanks) - first + 1);
  const auto digit = [&](std::size_t k) { return k < t.size() && std::isdigit(static_cast<unsigned char>(t[k])); };
  std::size_t k = (t[0] == '+' || t[0] == '-') ? 1 : 0;
  if (!digit(k)) return std::nullopt;
  std::string digits;
  for (; k < t.size(); ++k) {
    if (digit(k)) digits += t[k];
    else if (!(t[k] == '_' && digit(k + 1))) return std::nullopt;
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));  // int("016") is 16
  if (digits.size() > 18) return std::nullopt;
  const long long v = std::stoll(digits);
  return t[0] == '-' ? -v : v;
}

// --moe-token-dispatcher-type (arguments.py's choices; unset, Megatron-Core's allgather)
std::string dispatcher(const Arguments& a) {
  return a.choice("--moe-token-dispatcher-type", {"allgather", "alltoall", "alltoall_seq", "flex"}, "allgather");
}

// --transformer-impl local: Megatron-Core's own modules instead of TransformerEngine's
bool local_impl(const Arguments& a) {
  return a.choice("--transformer-impl", {"transformer_engine", "local"}, "transformer_engine") == "local";
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

}  // namespace ptdsim::io::megatron

namespace ptdsim::io {

const std::vector<std::string>& megatron_flags() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v = megatron::kValueFlags;
    v.insert(v.end(), megatron::kSwitchFlags.begin(), megatron::kSwitchFlags.end());
    v.insert(v.end(), megatron::kListFlags.begin(), megatron::kListFlags.end());
    std::sort(v.begin(), v.end());
    return v;
  }();
  return all;
}

}  // namespace ptdsim::io
