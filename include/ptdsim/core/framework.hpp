#pragma once
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace ptdsim::core
