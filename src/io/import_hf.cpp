// `ptdsim import hf`: a Hugging Face transformers config.json as a ptdsim model or scenario
// (docs/inputs.md "Importing a Hugging Face config.json"). The field names and their defaults are
// those of transformers' configuration classes (LlamaConfig, MistralConfig, Qwen2Config,
// MixtralConfig, GPTNeoXConfig; the MoE and MLA ones in import_hf_moe.cpp).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "import_hf_moe.hpp"
#include "yaml_fields.hpp"
#include "import_yaml.hpp"
#include "loaders.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/io/import.hpp"

namespace ptdsim::io {
namespace {

using detail::Entry;
using detail::Fields;
using detail::Mark;
using detail::Node;

enum class Family { llama, qwen2, qwen3, mixtral, neox, deepseek, qwen2_moe, qwen3_moe, gpt_oss, llama4, glm4_moe };

struct Architecture {
  const char* name;
  Family family;
};
constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", Family::llama},     {"MistralForCausalLM", Family::llama},
    {"Qwen2ForCausalLM", Family::qwen2},     {"MixtralForCausalLM", Family::mixtral},
    {"GPTNeoXForCausalLM", Family::neox},    {"DeepseekV3ForCausalLM", Family::deepseek},
    {"DeepseekV2ForCausalLM", Family::deepseek}, {"Qwen3MoeForCausalLM", Family::qwen3_moe},
    {"GptOssForCausalLM", Family::gpt_oss},  {"Llama4ForConditionalGeneration", Family::llama4},
    {"Llama4ForCausalLM", Family::llama4},   {"Qwen3ForCausalLM", Family::qwen3},
    {"Qwen2MoeForCausalLM", Family::qwen2_moe}, {"Glm4MoeForCausalLM", Family::glm4_moe},
};

// Every config.json field the importer reads (a key near one of these is taken for a misspelling).
const std::vector<std::string> kReadKeys{
    "architectures",      "num_hidden_layers", "hidden_size",     "num_attention_heads", "num_key_value_heads",
    "intermediate_size",  "vocab_size",        "max_position_embeddings", "tie_word_embeddings", "head_dim",
    "hidden_act",         "use_parallel_residual", "attention_bias", "mlp_bias",          "use_sliding_window",
    "sliding_window",     "num_local_experts", "num_experts_per_tok"};

// The line and column of a byte of the text, for an error there.
[[noreturn]] void json_error_at(std::size_t byte, const std::string& reason, const std::string& text,
                                const detail::SourcePtr& src) {
  byte = std::min(byte, text.size());
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < byte; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  detail::fail(Mark{src, line, static_cast<int>(byte - line_start) + 1}, "invalid JSON: " + reason);
}

// nlohmann's parse errors carry a byte offset: the line and column of that byte, and the reason
// without the library's prefix ("[json.exception.parse_error.101] parse error at line 3, column 5: ").
[[noreturn]] void json_syntax_error(const nlohmann::json::parse_error& e, const std::string& text,
                                    const detail::SourcePtr& src) {
  std::string reason = e.what();
  if (const auto at = reason.find(": "); at != std::string::npos && reason.find("parse error") != std::string::npos)
    reason = reason.substr(at + 2);
  json_error_at(e.byte > 0 ? e.byte - 1 : 0, reason, text, src);
}

// A number beyond a double's range ("[json.exception.out_of_range.406] number overflow parsing
// '1e999'") carries no offset: the first place the literal stands in the text.
[[noreturn]] void json_range_error(const nlohmann::json::out_of_range& e, const std::string& text,
                                   const detail::SourcePtr& src) {
  std::string reason = e.what();
  if (const auto at = reason.find("] "); at != std::string::npos) reason = reason.substr(at + 2);
  std::size_t byte = 0;
  if (const auto open = reason.find('\''), close = reason.rfind('\''); open != std::string::npos && close > open)
    if (const auto found = text.find(reason.substr(open + 1, close - open - 1)); found != std::string::npos) byte = found;
  json_error_at(byte, reason, text, src);
}

std::vector<std::string> keys_of(const Node& n) {
  std::vector<std::string> out;
  for (const auto& e : n.entries) out.push_back(e.key);
  return out;
}

std::string int_text(long long v) { return detail::yaml_int(v); }

// The config's top object: its JSON syntax checked first (nlohmann gives the position of a syntax
// error), then read as YAML, which keeps every value's line and column for the errors that follow.
struct Config {
  detail::NodePtr root;
  Mark whole;  // the whole file, for what no one value holds
};
// JSON's \uD83D\uDE00 (how Python's json writes a character past the basic plane, save_pretrained's
// way) is one character to JSON and two unpaired surrogates to yaml-cpp, which refuses them: in the
// text YAML reads, each surrogate escape becomes \u003f ('?', the same width) inside the strings
// ptdsim does not read as numbers or names anyway.
std::string without_surrogates(std::string text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!in_string) {
      in_string = text[i] == '"';
    } else if (text[i] == '"') {
      in_string = false;
    } else if (text[i] == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == 'u' && i + 5 < text.size() && (text[i + 2] == 'd' || text[i + 2] == 'D') &&
          std::string("89abcdefABCDEF").find(text[i + 3]) != std::string::npos)
        text.replace(i + 2, 4, "003f");
      ++i;  // the escaped character
    }
  }
  return text;
}

Config parse_config(const std::string& text, const detail::SourcePtr& src) {
  // what nlohmann skips or stops at but Python's json (transformers' reader) refuses
  if (text.rfind("\xEF\xBB\xBF", 0) == 0)
    detail::fail(Mark{src, 1, 1}, "invalid JSON: the file starts with a UTF-8 byte-order mark, which Python's json "
                                  "refuses (transformers could not read it): save it without one");
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    json_error_at(nul, "a NUL byte, which JSON does not allow outside a string's escapes", text, src);
  try {
    const auto checked = nlohmann::json::parse(text);  // syntax only: the values are read below, with positions
    (void)checked;
  } catch (const nlohmann::json::parse_error& e) {
    json_syntax_error(e, text, src);
  } catch (const nlohmann::json::out_of_range& e) {
    json_range_error(e, text, src);
  }
  // JSON's whitespace may hold tabs, which YAML's indentation refuses: a tab outside a string is
  // whitespace (JSON strings cannot hold a raw one), so a space in its place keeps every column
  // and a carriage return, JSON's whitespace too, is a line break to YAML that a flow mapping loses
  // keys across: a blank as well (a CR LF file keeps its lines)
  std::string spaced = without_surrogates(text);
  std::replace(spaced.begin(), spaced.end(), '\t', ' ');
  std::replace(spaced.begin(), spaced.end(), '\r', ' ');
  Config c{detail::parse_yaml(spaced, src), {}};
  c.whole = c.root->document ? *c.root->document : Mark{src, 0, 0};
  if (c.root->kind != Node::Kind::map)
    detail::fail(c.root->kind == Node::Kind::null ? c.whole : c.root->mark,
                 "a config.json must be a JSON object, got " + detail::describe(*c.root));
  return c;
}

// The first class of `architectures`, one of kArchitectures.
const Architecture& read_architecture(const Fields& top) {
  const Entry& arch_entry = top.require("architectures");
  const Node& arch_list = *arch_entry.value;
  if (arch_list.kind != Node::Kind::list || arch_list.items.empty() || arch_list.items[0]->kind != Node::Kind::scalar)
    detail::fail(arch_list.mark.line > 0 ? arch_list.mark : arch_entry.key_mark,
                 "architectures must be a list of class names, got " + detail::describe(arch_list));
  const Node& arch_node = *arch_list.items[0];
  const std::string arch = arch_node.text;
  const auto* known = std::find_if(std::begin(kArchitectures), std::end(kArchitectures),
                                   [&](const Architecture& a) { return arch == a.name; });
  if (known == std::end(kArchitectures))
    detail::fail(arch_node.mark, "architecture '" + arch + "' is not supported (supported: " + core::joined(hf_architectures()) + ")");
  return *known;
}

// The object that holds the decoder's fields: the top one, or Llama 4's multimodal config's
// text_config.
const Node& decoder_fields(const Fields& top, const Node& root, Family family, std::vector<std::string>& warnings) {
  if (const Entry* text_config = top.get("text_config"); text_config && family == Family::llama4) {
    detail::expect_map(*text_config->value, text_config->key_mark, "text_config");
    if (top.get("vision_config"))
      warnings.push_back("the vision encoder (vision_config) is not modelled: the text decoder only");
    return *text_config->value;
  }
  return root;
}

// Each field is read in the range of the model key it becomes (src/io/schema.cpp).
int positive(const Fields& f, const char* key, const char* as) { return static_cast<int>(f.required_integer_as(key, as)); }
int optional_positive(const Fields& f, const char* key, const char* as, int fallback) {
  return static_cast<int>(f.integer_as(key, as).value_or(fallback));
}
// Where a field was, for check_model's errors; an absent one says "defaulted" in the file.
Mark mark_of(const Fields& f, const char* key) {
  const Entry* e = f.get(key);
  return e ? e->value->mark : Mark{};
}
bool given(const Fields& f, const char* key) { return f.get(key) != nullptr; }

// The dense shape: layers, widths, heads and vocabulary, each with the line that says its field.
void read_shape(const Fields& f, Family family, core::ModelSpec& m, detail::ModelLines& lines) {
  m.layers = positive(f, "num_hidden_layers", "model.layers");
  m.hidden = positive(f, "hidden_size", "model.hidden");
  m.heads = positive(f, "num_attention_heads", "model.heads");
  m.kv_heads =
      family == Family::neox ? m.heads : optional_positive(f, "num_key_value_heads", "model.kv_heads", m.heads);
  // Llama 4's dense layers are intermediate_size_mlp wide, its experts intermediate_size
  const bool dense_mlp_field = family == Family::llama4 && f.get("intermediate_size_mlp");
  const char* ffn_field = dense_mlp_field ? "intermediate_size_mlp" : "intermediate_size";
  m.ffn_hidden = positive(f, ffn_field, "model.ffn_hidden");
  m.vocab = positive(f, "vocab_size", "model.vocab");
  m.max_seq_len = optional_positive(f, "max_position_embeddings", "model.max_seq_len", 2048);
  m.tied_embeddings = f.boolean("tie_word_embeddings", false);  // the classes' default
  m.position = core::Position::rope;
  // (DeepSeek's head_dim, where a config has it, is its rope width: MLA sets the heads' widths)
  long long head_dim = 0;
  if (const Entry* e = f.get("head_dim"); e && family != Family::deepseek) {
    head_dim = detail::read_json_integer(*e->value, "head_dim", "model.head_dim");
  } else if (family == Family::qwen3 || family == Family::qwen3_moe) {
    head_dim = 128;  // Qwen3Config's and Qwen3MoeConfig's default, not hidden / heads
  }
  if (head_dim > 0 && head_dim * m.heads != m.hidden) m.attention_head_dim = static_cast<int>(head_dim);

  lines.add("layers", int_text(m.layers), "num_hidden_layers", mark_of(f, "num_hidden_layers"));
  lines.add("hidden", int_text(m.hidden), "hidden_size", mark_of(f, "hidden_size"));
  lines.add("heads", int_text(m.heads), "num_attention_heads", mark_of(f, "num_attention_heads"));
  lines.add("kv_heads", int_text(m.kv_heads),
            family == Family::neox                ? "GPT-NeoX has no grouped-query attention"
            : given(f, "num_key_value_heads") ? "num_key_value_heads"
                                                  : "num_key_value_heads absent: defaulted to num_attention_heads",
            mark_of(f, "num_key_value_heads"));
  lines.add("ffn_hidden", int_text(m.ffn_hidden), ffn_field, mark_of(f, ffn_field));
  if (m.attention_head_dim > 0)
    lines.add("head_dim", int_text(m.attention_head_dim),
              given(f, "head_dim") ? "head_dim (not hidden_size / num_attention_heads)"
                                   : "head_dim absent: Qwen3's default 128 (not hidden_size / num_attention_heads)",
              mark_of(f, "head_dim"));
  lines.add("vocab", int_text(m.vocab), "vocab_size", mark_of(f, "vocab_size"));
}

// The block: GPT-NeoX's GELU MLP, LayerNorm and biases, or the Llama family's SwiGLU and RMSNorm
// with the biases each class has; what ptdsim does not model is a warning.
void read_block(const Fields& f, Family family, const std::string& arch, core::ModelSpec& m, detail::ModelLines& lines,
                std::vector<std::string>& warnings) {
  const std::string max_seq_from = given(f, "max_position_embeddings")
                                       ? "max_position_embeddings"
                                       : "max_position_embeddings absent: defaulted to 2048";
  const std::string tied_from =
      given(f, "tie_word_embeddings") ? "tie_word_embeddings" : "tie_word_embeddings absent: defaulted to false";

  const std::string act = f.string("hidden_act").value_or(family == Family::neox ? "gelu" : "silu");
  const std::string act_from = "hidden_act " + act + (given(f, "hidden_act") ? "" : " (absent: defaulted)");
  if (family == Family::neox) {
    m.mlp = core::Mlp::gelu;
    m.norm = core::Norm::layernorm;
    m.bias = true;
    lines.add("mlp", "gelu", act_from + ": two FFN matrices");
    lines.add("norm", "layernorm", "GPT-NeoX LayerNorm");
    lines.add("position", "rope", "rotary embeddings (rotary_pct of each head)");
    lines.add("max_seq_len", int_text(m.max_seq_len), max_seq_from, mark_of(f, "max_position_embeddings"));
    lines.add("tied_embeddings", detail::yaml_bool(m.tied_embeddings), tied_from);
    lines.add("bias", "true", "GPT-NeoX linear and LayerNorm biases");
    if (f.boolean("use_parallel_residual", true))
      warnings.push_back("use_parallel_residual: attention and MLP read the same input; FLOPs and memory are "
                         "counted as for the sequential block");
    return;
  }
  m.mlp = core::Mlp::swiglu;
  m.norm = core::Norm::rmsnorm;
  if (act != "silu") warnings.push_back("hidden_act " + act + " taken as swiglu's SiLU gate (same shapes and FLOPs)");
  lines.add("mlp", "swiglu", act_from + ": gate, up and down projections");
  lines.add("norm", "rmsnorm", "RMSNorm");
  lines.add("position", "rope", "rotary embeddings");
  lines.add("max_seq_len", int_text(m.max_seq_len), max_seq_from, mark_of(f, "max_position_embeddings"));
  lines.add("tied_embeddings", detail::yaml_bool(m.tied_embeddings), tied_from);
  // Llama's attention_bias/mlp_bias (false by default); Qwen2 biases Q, K and V only (Qwen2-MoE
  // unless qkv_bias is false), and so does GLM-4-MoE's attention_bias (o_proj has none); GPT-OSS's
  // experts always have biases
  const bool glm = family == Family::glm4_moe;
  m.bias = (!glm && f.boolean("attention_bias", false)) || f.boolean("mlp_bias", false) || family == Family::gpt_oss;
  const bool qkv_bias = family == Family::qwen2 || (family == Family::qwen2_moe && f.boolean("qkv_bias", true)) ||
                        (glm && f.boolean("attention_bias", false));
  lines.add("bias", detail::yaml_bool(m.bias),
            qkv_bias                    ? (glm ? "attention_bias: GLM biases Q, K and V only: not counted"
                                                   : "Qwen2 biases Q, K and V only: not counted")
            : family == Family::qwen2_moe ? "qkv_bias false: no biases"
            : family == Family::gpt_oss ? "GPT-OSS: attention and expert biases"
            : given(f, "attention_bias") || given(f, "mlp_bias")
                ? "attention_bias / mlp_bias"
                : "attention_bias and mlp_bias absent: defaulted to false");
  // Qwen3 (dense and MoE): an RMSNorm over each head's query and key before RoPE (Qwen3 Technical
  // Report, section 2; transformers' Qwen3Attention q_norm and k_norm)
  if (family == Family::qwen3 || family == Family::qwen3_moe) {
    m.qk_norm = true;
    lines.add("qk_norm", "true", "Qwen3Attention's q_norm and k_norm (RMSNorm over each head)");
  }
  if (qkv_bias)
    warnings.push_back(std::string(glm ? "GLM-4-MoE's" : "Qwen2's") + " Q, K and V biases (" +
                       int_text(static_cast<long long>((m.heads + 2LL * m.kv_heads) * m.head_dim())) +
                       " parameters per layer) are not counted: ptdsim's bias switch covers every linear layer");
  if (family != Family::gpt_oss &&
      (f.boolean("use_sliding_window", false) ||
       ((arch == "MistralForCausalLM" || arch == "MixtralForCausalLM") && f.get("sliding_window"))))
    warnings.push_back("sliding-window attention is timed as full attention over the sequence");
}

// The experts: Mixtral's here, the MoE and MLA classes' in import_hf_moe.cpp.
void read_experts(const Fields& f, Family family, const std::string& arch, core::ModelSpec& m,
                  detail::ModelLines& lines, std::vector<std::string>& warnings) {
  if (family == Family::mixtral) {
    core::MoeSpec moe;
    moe.experts = positive(f, "num_local_experts", "model.moe.experts");
    moe.top_k = positive(f, "num_experts_per_tok", "model.moe.top_k");
    m.moe = moe;
    lines.add_moe("experts", int_text(moe.experts), "num_local_experts", mark_of(f, "num_local_experts"));
    lines.add_moe("top_k", int_text(moe.top_k), "num_experts_per_tok", mark_of(f, "num_experts_per_tok"));
    lines.add_moe("every", "1", "every layer is sparse");
  }
  switch (family) {
    case Family::deepseek: detail::read_hf_deepseek(f, arch == "DeepseekV2ForCausalLM", m, lines, warnings); break;
    case Family::qwen2_moe: detail::read_hf_qwen_moe(f, true, m, lines, warnings); break;
    case Family::qwen3_moe: detail::read_hf_qwen_moe(f, false, m, lines, warnings); break;
    case Family::glm4_moe: detail::read_hf_glm4_moe(f, m, lines, warnings); break;
    case Family::gpt_oss: detail::read_hf_gpt_oss(f, m, lines, warnings); break;
    case Family::llama4: detail::read_hf_llama4(f, m, lines, warnings); break;
    case Family::llama:
    case Family::qwen2:
    case Family::qwen3:
    case Family::mixtral:
    case Family::neox: break;
  }
}

// A key not read that is one edit or two from one that is: a misspelt field, whose default would
// otherwise be taken in silence.
void warn_misspelt(const Node& body, const Fields& f, const std::string& file, std::vector<std::string>& warnings) {
  std::vector<std::string> read = kReadKeys;
  read.insert(read.end(), detail::hf_moe_read_keys().begin(), detail::hf_moe_read_keys().end());
  for (const auto& e : body.entries) {
    if (std::find(read.begin(), read.end(), e.key) != read.end()) continue;
    const std::string near = detail::near_miss(e.key, read);
    if (!near.empty() && !f.get(near))
      warnings.push_back(fmt::format("{}:{}:{}: config.json key '{}' is not read: did you mean '{}'? (its default "
                                     "was taken)",
                                     file, e.key_mark.line, e.key_mark.column, core::printable(e.key), near));
  }
}

// The model file, or with a hardware the scenario file, each line naming its config.json field.
std::string imported_yaml(core::ModelSpec& m, const detail::ModelLines& lines, const std::string& arch,
                          const std::string& file, const std::string& name, const ImportScenario& scenario) {
  std::string model_name = name;
  if (model_name.empty()) {
    const auto dir = std::filesystem::path(file).parent_path().filename().string();
    model_name = dir.empty() || dir == "." ? "hf-model" : dir;
  }
  m.name = model_name;
  const std::string header = "# Imported by `ptdsim import hf` from " + core::printable(file) + " (" +
                             core::printable(arch) + "): each key names the config.json field it came from.\n";
  const std::string source = "Hugging Face config.json (" + arch + "), " + file;
  if (scenario.hardware.empty()) {
    std::string yaml = detail::model_file(header, model_name, source, lines);
    // what is written must load: the model loader's own checks
    load_model_from_string(yaml, "the imported model (" + file + ")");
    return yaml;
  }
  detail::require_scenario_inputs(scenario, file);
  return detail::scenario_file(header, model_name + "-" + detail::stem(scenario.hardware), source, m, lines, scenario,
                               {}, file);
}

Imported convert_hf(const std::string& text, const std::string& file, const std::string& name,
                    const ImportScenario& scenario) {
  const Config config = parse_config(text, detail::make_source(file, ".", text));
  Fields top(*config.root, config.whole, "", "config.json", keys_of(*config.root));
  top.json_types();
  const Architecture& known = read_architecture(top);
  const std::string arch = known.name;
  Imported out;
  const Node& body = decoder_fields(top, *config.root, known.family, out.warnings);
  Fields f(body, config.whole, "", "config.json", keys_of(body));
  f.json_types();

  core::ModelSpec m;
  detail::ModelLines lines;
  read_shape(f, known.family, m, lines);
  read_block(f, known.family, arch, m, lines, out.warnings);
  read_experts(f, known.family, arch, m, lines, out.warnings);

  // the fields are read: with a bad or missing one, what follows would only repeat it
  if (const auto* c = detail::Collector::current()) c->throw_if_any();
  // what evaluate would refuse, at the field that holds it
  detail::check_model(m, lines, config.whole);
  if (const auto* c = detail::Collector::current()) c->throw_if_any();
  warn_misspelt(body, f, file, out.warnings);
  out.yaml = imported_yaml(m, lines, arch, file, name, scenario);
  return out;
}

}  // namespace

Imported import_hf_text(const std::string& text, const std::string& file, const std::string& name,
                        const ImportScenario& scenario) {
  // every bad or missing field of the file in one error (detail::Collector)
  detail::Collector collector;
  return collector.run([&] { return convert_hf(text, file, name, scenario); });
}

std::vector<std::string> hf_architectures() {
  std::vector<std::string> names;
  for (const auto& a : kArchitectures) names.push_back(a.name);
  return names;
}

Imported import_hf(const std::string& config_path, const std::string& name, const ImportScenario& scenario) {
  return detail::guarded(config_path, [&] {
    const std::string text = detail::read_file(config_path, Mark{});
    return import_hf_text(text, config_path, name, scenario);
  });
}

}  // namespace ptdsim::io
