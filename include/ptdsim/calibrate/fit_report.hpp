#pragma once
#include <string>
#include <vector>

#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/core/hardware.hpp"

// What `ptdsim calibrate import-nccl-tests` prints of its fits (docs/calibration.md): each
// collective's pieces and its error at every measured size, and the warnings about applying the
// fits to a base hardware file.
namespace ptdsim::calibrate {

std::string fit_report(const std::vector<CollectiveFitResult>& fits);

// "ptdsim: warning: ..." for each fit measured on another GPU than `base`'s, or far (3x either way)
// from the time `base`'s link model gives at the largest measured size. `base_name`: the file, for
// the message.
std::vector<std::string> base_warnings(const std::vector<CollectiveFitResult>& fits, core::HardwareSpec base,
                                       const std::string& base_name);

}  // namespace ptdsim::calibrate
