// `ptdsim import megatron`'s mixture-of-experts and attention-variant flags: MLA, sliding windows,
// sinks (import_megatron_moe.hpp).
#include "import_megatron_moe.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "ptdsim/core/printable.hpp"

namespace ptdsim::io::megatron {
namespace {

// --moe-layer-freq's value as Megatron-LM's moe_freq_type reads it: without '[' a Python int() N (layer
// i is MoE when i % N == 0, Megatron's moe_layer_pattern); with one, a Python expression of lists,
// integers, '+', '*' and parentheses, the only characters its _eval_pattern allows, such as
// "([0]*3+[1])*4". Not read: what else Python evaluates there (unary +, **, subscripts, integers past
// 10^12). `parsed`: Python would take the text (argparse's check of every occurrence); `why`, set
// when the pattern does not give `layers` entries of 0 or 1 (TransformerConfig's, of the last).
struct LayerPattern {
  bool parsed = false;
  std::vector<int> layers;
  std::string why;
};

class PatternParser {
 public:
  PatternParser(const std::string& text, std::size_t cap) : t_(text), cap_(cap) {}
  // The whole text as a list of integers (at most `cap` of them kept), or nothing.
  std::optional<std::vector<long long>> list() {
    auto v = expr();
    if (!v || i_ != t_.size() || !v->is_list) return std::nullopt;
    return v->items;
  }

 private:
  struct Value {
    bool is_list = false;
    long long number = 0;
    std::vector<long long> items;
  };
  std::optional<Value> expr() {
    auto left = term();
    while (left && peek('+')) {
      ++i_;
      auto right = term();
      if (!right || right->is_list != left->is_list) return std::nullopt;  // list + int: a TypeError
      if (left->is_list) {
        for (long long x : right->items)
          if (left->items.size() < cap_) left->items.push_back(x);
      } else {
        left->number += right->number;  // each at most 10^12: no overflow
        if (left->number > kMost) return std::nullopt;
      }
    }
    return left;
  }
  std::optional<Value> term() {
    auto left = factor();
    while (left && peek('*')) {
      ++i_;
      auto right = factor();
      if (!right || (left->is_list && right->is_list)) return std::nullopt;  // list * list: a TypeError
      if (!left->is_list && !right->is_list) {
        // each at most 10^12: the product is bounded in long double before it is kept
        const long double product = static_cast<long double>(left->number) * right->number;
        if (product > kMost || product < -kMost) return std::nullopt;
        left->number = static_cast<long long>(product);
      } else {  // a list repeated, on either side (Python: none at all for a count below 1)
        const std::vector<long long>& items = left->is_list ? left->items : right->items;
        const long long n = left->is_list ? right->number : left->number;
        Value repeated;
        repeated.is_list = true;
        for (long long r = 0; r < n && repeated.items.size() < cap_ && !items.empty(); ++r)
          for (long long x : items)
            if (repeated.items.size() < cap_) repeated.items.push_back(x);
        left = std::move(repeated);
      }
    }
    return left;
  }
  std::optional<Value> factor() {
    if ((peek('(') || peek('[')) && ++depth_ > kDeepest) return std::nullopt;  // Python's parser stops too
    if (peek('(')) {
      ++i_;
      auto v = expr();
      if (!v || !peek(')')) return std::nullopt;
      ++i_;
      --depth_;
      return v;
    }
    if (peek('[')) {
      ++i_;
      Value v;
      v.is_list = true;
      while (!peek(']')) {
        auto item = expr();
        if (!item || item->is_list) return std::nullopt;  // a list in a list: not a layer pattern
        if (v.items.size() < cap_) v.items.push_back(item->number);
        if (peek(',')) ++i_;
        else if (!peek(']')) return std::nullopt;
      }
      ++i_;
      --depth_;
      return v;
    }
    std::size_t k = i_;
    while (k < t_.size() && std::isdigit(static_cast<unsigned char>(t_[k]))) ++k;
    const std::string digits = t_.substr(i_, k - i_);
    // Python 3 refuses a leading zero in a literal (01) but for zero itself (00)
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos))
      return std::nullopt;
    const std::string significant = digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    if (significant.size() > 13) return std::nullopt;
    Value v;
    v.number = std::stoll(significant);
    if (v.number > kMost) return std::nullopt;
    i_ = k;
    return v;
  }
  bool peek(char c) const { return i_ < t_.size() && t_[i_] == c; }

  static constexpr long long kMost = 1'000'000'000'000LL;
  static constexpr int kDeepest = 200;
  const std::string& t_;
  std::size_t cap_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

LayerPattern layer_pattern(const std::string& text, int layers) {
  LayerPattern out;
  if (text.find('[') == std::string::npos) {  // Python's int()
    const auto n = python_int(text);
    if (!n) {
      out.why = "is not an integer or a list";
      return out;
    }
    out.parsed = true;
    if (*n == 0) {  // i % 0: Megatron divides by zero
      out.why = "must not be 0 (one MoE layer every N layers)";
      return out;
    }
    // Python's i % N == 0 holds for -N as for N
    const long long every = std::min(*n < 0 ? -*n : *n, 1'000'000'000LL);
    for (int l = 0; l < layers; ++l) out.layers.push_back(l % every == 0 ? 1 : 0);
    return out;
  }
  if (text.find_first_not_of("0123456789,[]()+*") != std::string::npos) {
    out.why = "is not a pattern Megatron-LM reads (digits, commas, brackets, parentheses, + and * only, no blanks)";
    return out;
  }
  PatternParser parse(text, static_cast<std::size_t>(layers) + 1);
  const auto items = parse.list();
  if (!items) {
    out.why = "is not a list as a Python expression ptdsim reads (lists, integers, + and *)";
    return out;
  }
  out.parsed = true;
  if (static_cast<int>(items->size()) != layers)
    out.why = "gives " + (static_cast<int>(items->size()) > layers ? std::string("more than ")
                                                                   : std::to_string(items->size()) + " of ") +
              std::to_string(layers) + " entries (one per layer)";
  else if (std::any_of(items->begin(), items->end(), [](long long x) { return x != 0 && x != 1; }))
    out.why = "has entries other than 0 and 1 (dense and MoE layers)";
  else
    out.layers.assign(items->begin(), items->end());
  return out;
}

// --moe-layer-freq: dense first layers then every layer MoE, or MoE exactly where (i + 1) % every
// == 0, into `moe`; what the written key says of it.
std::string read_moe_layers(const Arguments& a, int layers, core::MoeSpec& moe) {
  const Flag* freq = a.get("--moe-layer-freq");
  if (!freq) return "every layer is an MoE layer (--moe-layer-freq 1)";
  for (const Flag& e : a.earlier("--moe-layer-freq"))  // argparse's type: what Python evaluates
    if (const LayerPattern l = layer_pattern(e.value, layers); !l.parsed)
      detail::fail(e.at, "--moe-layer-freq " + e.value + " " + l.why);
  const LayerPattern pattern = layer_pattern(freq->value, layers);
  if (!pattern.why.empty()) detail::fail(freq->at, "--moe-layer-freq " + freq->value + " " + pattern.why);
  const std::vector<int>& p = pattern.layers;
  int k = 0;
  while (k < layers && p[k] == 0) ++k;
  const bool dense_first = k < layers && std::all_of(p.begin() + k, p.end(), [](int x) { return x == 1; });
  const int every = detail::period_of(std::vector<bool>(p.begin(), p.end()));
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
  const std::string every_from = read_moe_layers(a, m.layers, moe);
  if (const auto shared = a.integer("--moe-shared-expert-intermediate-size", "model.moe.shared_ffn_hidden")) {
    // Megatron-Core's SharedExpertMLP: the shared experts as one MLP of this width
    moe.shared_experts = 1;
    moe.shared_ffn_hidden = *shared;
  }
  const std::string score = a.choice("--moe-router-score-function", {"softmax", "sigmoid"}, "softmax");
  moe.router = score == "sigmoid" ? core::Router::sigmoid : core::Router::softmax;
  // Megatron-Core routes by groups when a group top-k is given (moe_utils.topk_routing_with_score_function);
  // the groups without it are not read (check_flags says so), the top-k without them refused
  moe.router_group_topk = a.integer("--moe-router-group-topk", "model.moe.router_group_topk").value_or(0);
  if (moe.router_group_topk > 0 && a.integer("--moe-router-num-groups", "model.moe.router_groups").value_or(0) == 0)
    detail::fail(a.at("--moe-router-group-topk"), "--moe-router-group-topk needs --moe-router-num-groups (as in "
                                                  "Megatron-LM: group-limited routing divides the experts in groups)");
  const int groups = a.integer("--moe-router-num-groups", "model.moe.router_groups").value_or(0);
  moe.router_groups = moe.router_group_topk > 0 ? groups : 0;
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
    if (!a.has("--disable-bias-linear"))  // ptdsim's MLA models have no linear biases (model.bias false)
      detail::fail(a.at("--multi-latent-attention"),
                   "--multi-latent-attention without --disable-bias-linear gives the attention's output projection "
                   "and the MLPs biases (add_bias_linear), which ptdsim does not model beside MLA (DeepSeek-V2/V3 "
                   "have none): give --disable-bias-linear");
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

}  // namespace

namespace {

// Sliding-window attention (--window-size, --window-attn-skip-freq) and attention sinks
// (--softmax-type), as Megatron-Core reads them (transformer/utils.py is_layer_window_attention,
// with layer_number counted from 1): a layer is windowed when layer_number % N != 0, so the full
// layers are those with (i + 1) % N == 0, ptdsim's full_every; a list marks each layer 1 windowed
// and 0 full.
void read_attention_variants(const Arguments& a, core::ModelSpec& m, detail::ModelLines& model,
                             std::vector<std::string>& warnings) {
  const std::string softmax = a.choice("--softmax-type", {"vanilla", "off-by-one", "learnable"}, "vanilla");
  if (softmax == "learnable") {
    m.attention_sinks = true;
    model.add("attention_sinks", "true", "--softmax-type learnable: a learned sink logit per head", a.at("--softmax-type"));
  }
  const Flag* size = a.get("--window-size");
  const Flag* skip = a.get("--window-attn-skip-freq");
  for (const Flag* f : a.every("--window-attn-skip-freq"))  // argparse's type: what Python evaluates
    if (const LayerPattern l = layer_pattern(f->value, m.layers); !l.parsed)
      detail::fail(f->at, "--window-attn-skip-freq " + f->value + " " + l.why);
  // tuple_type: int() of each comma-separated part once the parentheses are stripped
  std::vector<long long> sides;
  for (const Flag* f : a.every("--window-size")) {
    std::string t = f->value;
    const auto first = t.find_first_not_of("()"), last = t.find_last_not_of("()");
    t = first == std::string::npos ? "" : t.substr(first, last - first + 1);
    sides.clear();
    for (std::size_t at = 0;;) {
      const std::size_t comma = t.find(',', at);
      const auto side = python_int(t.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (!side)
        detail::fail(f->at, "--window-size must be integers separated by commas, as \"128,0\", got \"" +
                                core::printable(f->value) + "\"");
      sides.push_back(*side);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  if (!size) {
    if (skip) warnings.push_back("--window-attn-skip-freq has no effect without --window-size, as in Megatron-Core");
    return;
  }
  if (sides.size() != 2)
    detail::fail(size->at, "--window-size must give a left and a right size, as \"128,0\", got \"" +
                               core::printable(size->value) + "\"");
  if (sides[1] != 0 || sides[0] < -1)
    detail::fail(size->at, "--window-size " + size->value + " is not modelled: ptdsim's sliding window looks back "
                           "(a left size of 0 or more, or -1: unbounded) and not ahead (a right size of 0)");
  if (sides[0] == -1) {  // an unbounded left side: full causal attention (TransformerEngine's -1)
    if (skip) warnings.push_back("--window-attn-skip-freq has no effect with an unbounded --window-size");
    return;
  }
  core::SlidingWindow w;
  // the left size: GPT-OSS's (128, 0) is its config.json's sliding_window 128 (TransformerEngine
  // also lets a query see itself, one key more, which ptdsim does not count); 0, the query alone, 1
  w.window = static_cast<int>(std::min<long long>(std::max<long long>(sides[0], 1),
                                                  detail::bound_of("model.sliding_window.window").max));
  const std::string window_from =
      "--window-size " + size->value + (sides[0] == 0 ? ": the query alone" : ": its left size");
  std::string pattern_from = "--window-attn-skip-freq absent: every layer windowed";
  if (skip && skip->value.find('[') == std::string::npos) {
    const long long n = std::llabs(*python_int(skip->value));
    if (n == 0)
      detail::fail(skip->at, "--window-attn-skip-freq must not be 0 (Megatron-Core takes each layer's number modulo it)");
    w.full_every = n > m.layers ? 0 : static_cast<int>(n);
    pattern_from = n > m.layers ? "--window-attn-skip-freq " + itext(n) + " passes the last layer: none attends fully"
                                : "--window-attn-skip-freq: the layers with (i + 1) % " + itext(n) + " == 0 attend fully";
  } else if (skip) {
    // Megatron-Core indexes the list by layer and takes each entry's truth: a longer list's tail is
    // never read, a shorter one is an IndexError
    std::vector<long long> items;
    PatternParser parse(skip->value, static_cast<std::size_t>(m.layers));
    if (const auto list = parse.list()) items = *list;
    if (static_cast<long long>(items.size()) < m.layers)
      detail::fail(skip->at, "--window-attn-skip-freq " + skip->value + " gives " + itext(static_cast<long long>(items.size())) +
                                 " of " + itext(m.layers) + " entries (Megatron-Core reads one per layer)");
    std::vector<bool> full;
    for (int i = 0; i < m.layers; ++i) full.push_back(items[static_cast<std::size_t>(i)] == 0);
    w.full_every = detail::period_of(full);
    if (w.full_every < 0)
      detail::fail(skip->at, "--window-attn-skip-freq " + skip->value + " is not modelled: ptdsim's full-attention "
                             "layers are those with (i + 1) % sliding_window.full_every == 0, the rest windowed");
    pattern_from = "--window-attn-skip-freq: an entry of 0 marks a full layer";
  }
  m.sliding_window = w;
  model.add_in("sliding_window", "window", itext(w.window), window_from, size->at);
  model.add_in("sliding_window", "full_every", itext(w.full_every), pattern_from, skip ? skip->at : size->at);
}

}  // namespace

// The MoE and MLA flags (docs/inputs.md "Importing a Megatron-LM command line"), Megatron-LM's
// defaults where a flag is absent (megatron/training/arguments.py). The parallel ones (expert
// tensor parallelism, the token dispatcher) are the scenario's.
void read_moe_and_mla(const Arguments& a, core::ModelSpec& m, detail::ModelLines& model,
                      std::vector<std::string>& warnings) {
  read_moe(a, m, model);
  read_mla(a, m, model);
  read_attention_variants(a, m, model, warnings);
  if (const auto mtp = a.integer("--mtp-num-layers", "model.mtp_layers")) {
    m.mtp_layers = *mtp;
    model.add("mtp_layers", itext(m.mtp_layers), "--mtp-num-layers", a.at("--mtp-num-layers"));
  }
}

// The MoE flags as argparse takes them, before any of TransformerConfig's rules: the capacity
// factor a number, the balancing types among its choices (one or several, their auxiliary losses
// summed), the coefficients numbers. The balancing changes no step's time; it is checked so that a
// command Megatron-LM refuses is refused here.
void moe_arguments(const Arguments& a) {
  for (const Flag* f : a.every("--moe-expert-capacity-factor"))
    if (!detail::parse_number(f->value))
      detail::fail(f->at, "--moe-expert-capacity-factor must be a number, got \"" + core::printable(f->value) + "\"");
  for (const Flag* f : a.every("--moe-router-load-balancing-type")) {
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
  for (const Flag* c : a.every("--moe-aux-loss-coeff")) {
    if (c->items.empty()) detail::fail(c->at, "--moe-aux-loss-coeff needs a coefficient");
    for (const auto& item : c->items)
      if (!detail::parse_number(item.text))
        detail::fail(item.at, "--moe-aux-loss-coeff must be a number, got \"" + core::printable(item.text) + "\"");
  }
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

}  // namespace ptdsim::io::megatron
