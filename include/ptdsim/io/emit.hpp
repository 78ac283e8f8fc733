#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/scenario.hpp"
#include "ptdsim/io/load.hpp"

// A layout the sweep found, as a scenario file `ptdsim evaluate` runs as is (`sweep --emit`).
namespace ptdsim::io {

// The scenario file at `path` with `overrides` applied (the sweep's --set), then every degree and
// switch the sweep varies set to `layout`'s (parallel.tp ... training.overlap.pp, cluster.gpus),
// and an explicit pipeline split dropped where `layout` no longer has it. A model or hardware
// given by a relative path is made absolute, so the file reads the same from any directory.
// `header` (comment lines) comes first. Loading the text gives `layout`'s scenario.
std::string scenario_yaml(const std::string& path, const std::vector<Override>& overrides,
                          const core::Scenario& layout, const std::string& header);

}  // namespace ptdsim::io
