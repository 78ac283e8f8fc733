#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/core/error.hpp"
#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/model.hpp"
#include "ptdsim/core/scenario.hpp"

// YAML in: models, hardware, scenarios and validation datasets (interface.md). Every key is checked
// for type and range, unknown keys are errors with a suggestion, cross-field problems
// (core::check) are collected and reported together at their keys' positions. All failures throw
// core::ConfigError with file:line:col.
namespace ptdsim::io {

// `--set KEY=VALUE`: a dotted path into the scenario and a YAML scalar or flow value.
struct Override {
  std::string key;
  std::string value;
  // Where the override was written when a file holds it (a study's `vary` and `set`): its value's
  // line and column, that line's text and the file's directory (relative paths resolve against
  // it). Absent: a --set, positioned as line N of the virtual file "--set".
  struct Origin {
    std::string file, dir, source_line;
    int line = 0, column = 0;
  };
  std::optional<Origin> origin = std::nullopt;
};
Override parse_override(const std::string& text);  // "parallel.tp=4"; throws ConfigError

// The valid range of a numeric input key, as the loaders check it (docs/inputs.md "Valid ranges"):
// valid_range("cluster.gpus") is {1, 4194304}. Throws std::logic_error for a key with none.
struct ValidRange {
  double min = 0;
  double max = 0;
};
ValidRange valid_range(const std::string& key);

core::Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});
// Which cross-field checks (core::check) a load applies: all of them; all but the parallel layout's
// (parallel.*, training.micro_batch, training.global_batch), for a base the sweep lays out anew and
// checks per candidate (`ptdsim study`); or none, the keys' types and ranges only.
enum class Checks { all, except_layout, none };
core::Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides, Checks checks);
// `name` is used in messages as the file name; relative paths inside resolve against `base_dir`.
core::Scenario load_scenario_from_string(const std::string& text, const std::string& name,
                                         const std::vector<Override>& overrides = {},
                                         const std::string& base_dir = ".");

// The shipped libraries (docs/inputs.md "Models and hardware by name"): the names of the models
// (`kind` "model") or hardware ("hardware") a scenario may name, sorted; and the path of a shipped
// file ("scenarios/default.yaml") in the first library folder that has it ($PTDSIM_DATA, the
// install's share/ptdsim, the source tree), "" when none has it.
std::vector<std::string> shipped_names(const std::string& kind);
std::string shipped_file(const std::string& relative);

core::ModelSpec load_model(const std::string& path);
core::ModelSpec load_model_from_string(const std::string& text, const std::string& name);
core::HardwareSpec load_hardware(const std::string& path);
core::HardwareSpec load_hardware_from_string(const std::string& text, const std::string& name);

// One record of a validation dataset (interface.md "Validation dataset").
struct Measured {
  std::optional<double> step_s;
  std::optional<double> tflops_per_gpu;
  std::optional<double> peak_memory_bytes;
  // the caching allocator's peak reserve (torch.cuda.max_memory_reserved; measured.peak_reserved_gib),
  // which a record gives instead of the device's peak (nvidia-smi, peak_memory_gib)
  std::optional<double> peak_reserved_bytes;
  std::optional<double> tokens_per_s;  // optional extra, where the source gives it
};
struct Record {
  std::string name;
  std::string source;
  // How the source counts the FLOPs behind tflops_per_gpu: "megatron96" (Narayanan et al. Eq. 3,
  // recomputation counted), "megatron72" (model FLOPs, Korthikanti et al.), "megatron" and
  // "megatron-2024" (Megatron-LM's own count since 2025 and at v0.8), "model" (the tool's own model
  // FLOPs), or "" (unstated).
  std::string flops_convention;
  std::string split;                   // "fit" or "holdout" (the loader writes "holdout" when absent)
  std::string notes;                   // free text
  std::optional<core::Scenario> scenario;  // empty when not modelled
  // Why the record is not modelled: the dataset's own `not_modelled` reason, or the problems that
  // kept its scenario from loading or passing core::check, on one line with their positions.
  std::string not_modelled;
  Measured measured;
  // Where the record starts (its name), for messages about the record as a whole.
  core::Diagnostic where;
  // When not modelled, the same reason as positioned diagnostics: the scenario's own load and
  // check problems, or the `not_modelled` key. `validate --strict` reports these.
  std::vector<core::Diagnostic> problems;
};
// Scenario paths in records resolve against the dataset file's directory (`base_dir` for strings).
// A malformed dataset (bad YAML, a record without name, source or measurements, a bad split or
// measured value, a duplicate name) throws ConfigError; a record whose scenario cannot be loaded or
// fails the cross-field checks is kept, not modelled, with its problems (Record::problems).
std::vector<Record> load_dataset(const std::string& path);
std::vector<Record> load_dataset_from_string(const std::string& text, const std::string& name,
                                             const std::string& base_dir = ".");

// `validate --strict`: throws the problems of the first record that is not modelled (a ConfigError
// naming their positions), so a dataset in CI must have every record modelled.
void require_all_modelled(const std::vector<Record>& records);

}  // namespace ptdsim::io
