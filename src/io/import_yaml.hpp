#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/model.hpp"
#include "ptdsim/io/import.hpp"
#include "yaml_tree.hpp"

// What the importers share: the YAML they write (a model with a comment per key naming where it
// came from; a scenario around it) and the check that it loads (import_yaml.cpp).
namespace ptdsim::io::detail {

// A model's keys in file order, each with the source field it came from.
class ModelLines {
 public:
  // `at`: where in the source the value came from (a config.json field, a Megatron flag), where a
  // problem of the key is reported (check_model); a default's comment says "defaulted".
  void add(const std::string& key, const std::string& value, const std::string& from, const Mark& at = {});
  // `moe:` and its keys, indented under it
  void add_moe(const std::string& key, const std::string& value, const std::string& from, const Mark& at = {});
  // a key of the model's mapping `section` (`mla`, `sliding_window`), indented under it; the
  // sections follow the top-level keys, in the order of their first key
  void add_in(const std::string& section, const std::string& key, const std::string& value, const std::string& from,
              const Mark& at = {});
  // Where the model key (`kv_heads`, `moe.top_k`) came from; `fallback` when it has no position.
  Mark mark_of(const std::string& key, const Mark& fallback) const;
  // The model's keys as YAML, each line indented by `indent` spaces.
  std::string text(int indent) const;

 private:
  struct Line {
    std::string key, value, from;
    std::string section;  // "" at the top level
    Mark at;
  };
  std::vector<Line> lines_;
};

// The scenario's own lines beside the model: keys under parallel and training, already in YAML
// ("tp: 8"), each with its comment.
struct ScenarioLines {
  std::vector<std::pair<std::string, std::string>> parallel;  // {"tp: 8", "--tensor-model-parallel-size"}
  std::vector<std::pair<std::string, std::string>> training;
  // where a key's value came from in the source ({"parallel.tp", the flag's value}): a problem the
  // scenario's load finds on that key's line is reported there
  std::vector<std::pair<std::string, Mark>> at;
};

// "8192", "true": the YAML spellings the writers use.
std::string yaml_int(long long v);
std::string yaml_bool(bool v);
// A quoted YAML string: every character as given, control characters escaped (\n, \x1b), so no
// path or name can end the line it is written on.
std::string yaml_string(const std::string& s);
// `s` as a plain scalar where it reads back as the same text (a shipped name, a path of letters,
// digits and _ . / + -), else quoted as yaml_string does.
std::string yaml_scalar(const std::string& s);

// The period of a list of per-layer marks, as ptdsim's per-layer rules count it (sliding_window's
// full_every, moe.every): N when exactly the layers with (i+1) % N == 0 are marked, 0 when none is;
// -1 when the marks are not periodic that way.
int period_of(const std::vector<bool>& marked);

// The one of `known` within two edits of `word` (a likely misspelling), or "" (a word that is simply
// another field: config.json holds dozens ptdsim does not read).
std::string near_miss(const std::string& word, const std::vector<std::string>& known);

// The model's own problems, by the rules `evaluate` applies (core::check on the model alone, one
// GPU): hidden a multiple of heads, kv_heads dividing heads, top_k at most the experts. Each is
// reported at the source position of the key it names (ModelLines::mark_of), `whole` otherwise.
void check_model(const core::ModelSpec& spec, const ModelLines& model, const Mark& whole);

// A model file: header comment lines ("# ..."), name, source, then the model's keys.
std::string model_file(const std::string& header, const std::string& name, const std::string& source,
                       const ModelLines& model);

// A scenario file with the model inline and the hardware by name (or absolute path). When the
// scenario lines give no tp and pp, a layout valid for check() is chosen (the sweep replaces it):
// the largest tp of 8, 4, 2, 1 that fits in a node and divides heads, kv heads, the FFN width and
// the GPUs, then the smallest pp that divides the layers and leaves a data-parallel size dividing
// the global batch. Loads the result (core::check included), so an importer never writes a file
// ptdsim would refuse; its problems are thrown against `source_name`.
std::string scenario_file(const std::string& header, const std::string& name, const std::string& source,
                          const core::ModelSpec& spec, const ModelLines& model, const ImportScenario& opt,
                          ScenarioLines lines, const std::string& source_name);

// Fails (ConfigError at `source_name`, no line) when writing a scenario lacks a GPU count, a
// sequence length or a global batch.
void require_scenario_inputs(const ImportScenario& opt, const std::string& source_name);

}  // namespace ptdsim::io::detail
