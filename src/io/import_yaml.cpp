#include "import_yaml.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/io/load.hpp"

namespace ptdsim::io::detail {
namespace {

// "  key: value" padded so the comments line up, then "# from" (control characters shown as \xNN, so a
// path holding a line break cannot start a line of YAML)
std::string commented(const std::string& indent, const std::string& kv, const std::string& from) {
  std::string line = indent + kv;
  if (from.empty()) return line + "\n";
  if (line.size() < 36) line.append(36 - line.size(), ' ');
  return line + " # " + core::printable(from) + "\n";
}

struct Layout {
  int tp = 1, pp = 1;
};

// The first valid layout of the rule in scenario_file's comment; {0, 0} when there is none.
Layout choose_layout(const core::ModelSpec& m, int gpus, int gpus_per_node, int global_batch, int micro_batch) {
  for (int tp : {8, 4, 2, 1}) {
    if (tp > gpus_per_node || gpus % tp != 0 || m.heads % tp != 0 || m.kv_heads % tp != 0 ||
        m.ffn_hidden % tp != 0 || (m.moe && m.moe->shared_experts > 0 && m.moe->shared_ffn_hidden % tp != 0))
      continue;
    for (int pp = 1; pp <= m.layers && tp * pp <= gpus; ++pp) {
      if (m.layers % pp != 0 || (gpus / tp) % pp != 0) continue;
      const int dp = gpus / tp / pp;
      if (global_batch % (1LL * dp * micro_batch) == 0) return {tp, pp};
    }
  }
  return {0, 0};
}

bool has_key(const std::vector<std::pair<std::string, std::string>>& lines, const std::string& key) {
  for (const auto& [kv, from] : lines)
    if (kv.rfind(key + ":", 0) == 0) return true;
  return false;
}

}  // namespace

void ModelLines::add(const std::string& key, const std::string& value, const std::string& from, const Mark& at) {
  lines_.push_back({key, value, from, "", at});
}
void ModelLines::add_moe(const std::string& key, const std::string& value, const std::string& from, const Mark& at) {
  lines_.push_back({key, value, from, "moe", at});
}
void ModelLines::add_in(const std::string& section, const std::string& key, const std::string& value,
                        const std::string& from, const Mark& at) {
  lines_.push_back({key, value, from, section, at});
}
Mark ModelLines::mark_of(const std::string& key, const Mark& fallback) const {
  for (const auto& l : lines_)
    if ((l.section.empty() ? l.key : l.section + "." + l.key) == key && l.at.src) return l.at;
  return fallback;
}

void check_model(const core::ModelSpec& spec, const ModelLines& model, const Mark& whole) {
  core::Scenario probe;
  probe.model = spec;
  probe.gpus = 1;
  probe.training.global_batch = 1;
  probe.training.micro_batch = 1;
  // on one GPU every parallel rule holds: what is left is the model's own
  for (const auto& p : core::check(probe)) {
    if (p.key.rfind("model.", 0) != 0) continue;
    const std::string key = p.key.substr(6);
    const core::Diagnostic d = diagnostic(model.mark_of(key, whole), p.message + ": ptdsim (evaluate) refuses such a model");
    if (auto* c = Collector::current()) c->add({d});
    else throw core::ConfigError({d});
  }
}

std::string ModelLines::text(int indent) const {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string out;
  std::vector<std::string> sections;
  for (const auto& l : lines_) {
    if (l.section.empty()) {
      out += commented(pad, l.key + ": " + l.value, l.from);
    } else if (std::find(sections.begin(), sections.end(), l.section) == sections.end()) {
      sections.push_back(l.section);
    }
  }
  for (const auto& section : sections) {
    out += pad + section + ":\n";
    for (const auto& l : lines_)
      if (l.section == section) out += commented(pad + "  ", l.key + ": " + l.value, l.from);
  }
  return out;
}

std::string yaml_int(long long v) { return std::to_string(v); }
std::string yaml_bool(bool v) { return v ? "true" : "false"; }

std::string yaml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);  // YAML's double-quoted escape
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int period_of(const std::vector<bool>& marked) {
  const auto first = std::find(marked.begin(), marked.end(), true);
  if (first == marked.end()) return 0;
  const auto n = static_cast<std::size_t>(first - marked.begin()) + 1;
  for (std::size_t i = 0; i < marked.size(); ++i)
    if (marked[i] != ((i + 1) % n == 0)) return -1;
  return static_cast<int>(n);
}

std::string near_miss(const std::string& word, const std::vector<std::string>& known) {
  if (word.size() < 6) return "";
  for (const auto& k : known) {
    // Levenshtein distance, two rows
    std::vector<std::size_t> prev(k.size() + 1), cur(k.size() + 1);
    for (std::size_t j = 0; j <= k.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= k.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] == k[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    if (prev[k.size()] <= 2) return k;
  }
  return "";
}

std::string yaml_scalar(const std::string& s) {
  // letters, digits and _ . / + - starting with a letter, digit or '/': read back as the same text
  // (a path, a shipped name, "15T"), never as a key, a comment or a flow collection
  const bool plain = !s.empty() && (std::isalnum(static_cast<unsigned char>(s[0])) || s[0] == '/') &&
                     std::all_of(s.begin(), s.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
                              c == '+' || c == '-';
                     });
  return plain ? s : yaml_string(s);
}

std::string model_file(const std::string& header, const std::string& name, const std::string& source,
                       const ModelLines& model) {
  return header + "name: " + yaml_string(name) + "\nsource: " + yaml_string(source) + "\n" + model.text(0);
}

void require_scenario_inputs(const ImportScenario& opt, const std::string& source_name) {
  auto need = [&](bool ok, const char* what) {
    if (!ok)
      throw core::ConfigError(core::SourceLocation{source_name, 0, 0},
                              std::string("a scenario (--hardware) needs ") + what);
  };
  need(opt.gpus > 0 || opt.nodes > 0, "a GPU count: --gpus N or --nodes N");
  need(opt.seq_len > 0, "a sequence length: --seq-len N");
  need(opt.global_batch > 0, "a global batch: --global-batch N");
}

namespace {

// The keys the command line gives but the source did not: a starting layout (tp, pp) that fits
// the GPUs and the batch, the sequence length, the batch, the precision, the tokens and the framework.
void complete_lines(const core::ModelSpec& spec, const ImportScenario& opt, int gpus, int gpus_per_node,
                    const std::string& source_name, ScenarioLines& lines) {
  const int micro_batch = opt.micro_batch > 0 ? opt.micro_batch : 1;
  if (!has_key(lines.parallel, "tp") && !has_key(lines.parallel, "pp")) {
    const Layout l = choose_layout(spec, gpus, gpus_per_node, opt.global_batch, micro_batch);
    if (l.tp == 0)
      throw core::ConfigError(core::SourceLocation{source_name, 0, 0},
                              "no layout of " + std::to_string(gpus) + " GPUs has a data-parallel size dividing "
                              "the global batch " + std::to_string(opt.global_batch) + " (micro-batch " +
                              std::to_string(micro_batch) + "): choose another --global-batch or GPU count");
    lines.parallel.insert(lines.parallel.begin(),
                          {{"tp: " + yaml_int(l.tp), "a valid starting layout; the sweep searches every one"},
                           {"pp: " + yaml_int(l.pp), ""}});
  }
  if (!has_key(lines.training, "seq_len")) lines.training.insert(lines.training.begin(), {"seq_len: " + yaml_int(opt.seq_len), "--seq-len"});
  if (!has_key(lines.training, "global_batch"))
    lines.training.push_back({"global_batch: " + yaml_int(opt.global_batch), "--global-batch"});
  if (!has_key(lines.training, "micro_batch") && opt.micro_batch > 0)
    lines.training.push_back({"micro_batch: " + yaml_int(opt.micro_batch), "--micro-batch"});
  if (!has_key(lines.training, "precision") && !opt.precision.empty())
    lines.training.push_back({"precision: " + yaml_scalar(opt.precision), "--precision"});
  if (!has_key(lines.training, "tokens") && !opt.tokens.empty())
    lines.training.push_back({"tokens: " + yaml_scalar(opt.tokens), "--tokens"});
  if (!has_key(lines.training, "framework") && !opt.framework.empty())
    lines.training.push_back({"framework: " + yaml_scalar(opt.framework), "its documented defaults fill what is unset"});
}

// never write what ptdsim would refuse: load it, cross-field checks included. A problem on a
// line of its own (a parallel or training key) is told where that value came from: at the flag
// (lines.at), else against the source as a whole, naming the key and where it came from; the
// generated text is in no file a user could open.
void check_written(const std::string& out, const std::map<int, std::pair<std::string, std::string>>& keyed,
                   const ScenarioLines& lines, const std::string& source_name) {
  try {
    load_scenario_from_string(out, "the imported scenario (" + source_name + ")");
  } catch (const core::ConfigError& e) {
    std::vector<core::Diagnostic> told;
    for (const auto& d : e.diagnostics()) {
      const auto it = keyed.find(d.where.line);
      if (it == keyed.end()) {
        told.push_back(d);
        continue;
      }
      // (not a structured binding: clang 14 cannot capture one in the lambda below)
      const std::string& key = it->second.first;
      const std::string& from = it->second.second;
      const auto at = std::find_if(lines.at.begin(), lines.at.end(), [&](const auto& x) { return x.first == key; });
      const std::string message = d.message + " (the imported " + key + (from.empty() ? "" : ", from " + from) + ")";
      if (at != lines.at.end() && at->second.src) {
        told.push_back(diagnostic(at->second, message));
      } else {
        core::Diagnostic whole;
        whole.where.file = source_name;
        whole.message = message;
        told.push_back(std::move(whole));
      }
    }
    throw core::ConfigError(told);
  }
}

}  // namespace

std::string scenario_file(const std::string& header, const std::string& name, const std::string& source,
                          const core::ModelSpec& spec, const ModelLines& model, const ImportScenario& opt,
                          ScenarioLines lines, const std::string& source_name) {
  // a shipped name stays a name; a path is made absolute, so the file reads the same from anywhere
  const std::string hardware_path =
      is_library_name(opt.hardware) ? library_file("hardware", opt.hardware, Mark{make_source(source_name, "", ""), 0, 0})
                                    : std::filesystem::absolute(opt.hardware).lexically_normal().string();
  const std::string hardware = is_library_name(opt.hardware) ? opt.hardware : hardware_path;
  const core::HardwareSpec hw = load_hardware(hardware_path);
  const int gpus = opt.gpus > 0 ? opt.gpus : opt.nodes * hw.gpus_per_node;

  complete_lines(spec, opt, gpus, hw.gpus_per_node, source_name, lines);

  std::string out = header + "name: " + yaml_string(name) + "\nsource: " + yaml_string(source) + "\nmodel:\n";
  out += "  name: " + yaml_string(spec.name) + "\n" + model.text(2);
  out += commented("", "hardware: " + yaml_scalar(hardware), "--hardware");
  out += opt.gpus > 0 ? commented("", "cluster: {gpus: " + yaml_int(opt.gpus) + "}", "--gpus")
                      : commented("", "cluster: {nodes: " + yaml_int(opt.nodes) + "}", "--nodes");
  out += "parallel:\n";
  std::map<int, std::pair<std::string, std::string>> keyed;  // generated line -> {dotted key, comment}
  auto line_no = [&] { return static_cast<int>(std::count(out.begin(), out.end(), '\n')) + 1; };
  for (const auto& [kv, from] : lines.parallel) {
    keyed[line_no()] = {"parallel." + kv.substr(0, kv.find(':')), from};
    out += commented("  ", kv, from);
  }
  out += "training:\n";
  for (const auto& [kv, from] : lines.training) {
    keyed[line_no()] = {"training." + kv.substr(0, kv.find(':')), from};
    out += commented("  ", kv, from);
  }
  if (opt.gpu_hour > 0) {
    // the shortest text that reads back as the same number (%g kept six digits: 2.3456789 -> 2.34568)
    out += "cost:\n" + commented("  ", fmt::format("gpu_hour: {}", opt.gpu_hour), "--gpu-hour");
  }
  check_written(out, keyed, lines, source_name);
  return out;
}

}  // namespace ptdsim::io::detail
