#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ptdsim/core/parallel.hpp"

// Training frameworks as presets: what a framework does by default for the switches a scenario
// leaves unset (`training.framework`). One row per framework, one entry per switch; the loader
// fills a key from the row only when the scenario file and every --set leave it unset, so an
// explicit value always wins. Each default is cited in docs/inputs.md ("Framework defaults").
namespace ptdsim::core {

// One documented default: the scenario key it fills, by its dotted path as written in a scenario
// file, and its value as YAML text (read by the same code that reads the scenario's own values).
struct FrameworkDefault {
  std::string_view key;
  std::string_view value;
  // Filled only when this scenario key is set to something other than "none" (a default of a
  // feature the scenario turns on: CPU offload's overlap); "": always
  std::string_view when = {};
};

struct Framework {
  std::string_view name;     // the value of training.framework
  std::string_view version;  // the release whose defaults the row holds
  std::vector<FrameworkDefault> defaults;
};

// Every framework, in the documented order.
const std::vector<Framework>& frameworks();
// nullptr when no framework has that name.
const Framework* find_framework(std::string_view name);
std::vector<std::string> framework_names();

// The recompute modes the sweep offers under the named framework, in its order: torchtitan's rows
// none, op (its per-op selective checkpointing) and full, its activation_checkpoint modes; every
// other row and no framework none, selective and full.
std::vector<Recompute> framework_recompute_modes(std::string_view framework);
// Whether the named framework runs recompute mode r: torchtitan's rows have no attention-core-only
// recompute (selective); op is torchtitan's policy on PyTorch's selective checkpointing API, which
// the PyTorch FSDP rows and no framework may run too, and the Megatron and DeepSpeed rows do not.
bool framework_runs_recompute(std::string_view framework, Recompute r);

struct Scenario;
struct PipelineSplit;
// Why the framework named by s.training.framework cannot run s's layout as the scenario lays it
// out ("" when it can, or when no framework is named or the framework has no such limit); `split`
// is pipeline_split(s). The sweep offers no layout with a problem here (rejection `framework`);
// `evaluate` still runs one, since the scenario asked for it. docs/planner.md "Rejections".
std::string framework_layout_problem(const Scenario& s, const PipelineSplit& split);
// framework_layout_problem(s, split).empty(), building no message: what the sweep asks per candidate.
bool framework_expresses(const Scenario& s, const PipelineSplit& split);

}  // namespace ptdsim::core
