#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/model.hpp"
#include "ptdsim/io/import.hpp"

// What the importers share: the YAML they write (a model with a comment per key naming where it
// came from; a scenario around it) and the check that it loads (import_yaml.cpp).
namespace ptdsim::io::detail {

// A model's keys in file order, each with the source field it came from.
class ModelLines {
 public:
  void add(const std::string& key, const std::string& value, const std::string& from);
  // `moe:` and its keys, indented under it
  void add_moe(const std::string& key, const std::string& value, const std::string& from);
  // The model's keys as YAML, each line indented by `indent` spaces.
  std::string text(int indent) const;

 private:
  struct Line {
    std::string key, value, from;
    bool moe = false;
  };
  std::vector<Line> lines_;
};

// The scenario's own lines beside the model: keys under parallel and training, already in YAML
// ("tp: 8"), each with its comment.
struct ScenarioLines {
  std::vector<std::pair<std::string, std::string>> parallel;  // {"tp: 8", "--tensor-model-parallel-size"}
  std::vector<std::pair<std::string, std::string>> training;
};

// "8192", "true": the YAML spellings the writers use.
std::string yaml_int(long long v);
std::string yaml_bool(bool v);
// A quoted YAML string.
std::string yaml_string(const std::string& s);

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
