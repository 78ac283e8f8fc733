#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/core/hardware.hpp"

// Writing calibration results into a hardware file (interface.md "Hardware file"). The base file's
// text is kept as it is, comments and key order included; only the calibrated sections are replaced
// (or added when absent): `collectives:`, `gpu.matmul_efficiency` (as the table of rows),
// `gpu.kernel_launch_us`, `gpu.hbm_efficiency` and `gpu.kernels` (measured kernel tables).
namespace ptdsim::calibrate {

struct HardwareCalibration {
  std::vector<core::CollectiveFit> collectives;    // replaces `collectives:` when non-empty
  std::vector<core::GemmEfficiency> matmul_table;  // replaces gpu.matmul_efficiency when non-empty
  std::optional<double> kernel_launch_s;           // gpu.kernel_launch_us
  std::optional<double> hbm_efficiency;            // gpu.hbm_efficiency
  // gpu.kernels, replaced whole: the tables and fits, the contention factor, and the end-to-end
  // overhead constants (which `ptdsim validate --fit` fits; pass the base's to keep them)
  struct Kernels {
    core::KernelTables tables;
    std::optional<double> contention_factor;
    std::optional<double> layer_overhead_s;
    std::optional<double> memory_bound_factor;
  };
  std::optional<Kernels> kernels;
  std::vector<std::string> comment;                // lines written as "# ..." above each section
};

// The YAML text of the calibrated sections alone, e.g.
//   collectives:
//     all_reduce:
//       - {scope: intra, ranks: 8, alpha_us: 20.6, busbw_gbs: 494.3, min_bytes: 0, max_bytes: 4194304}
// Bytes are nccl-tests' "size" convention; the last piece of each (op, scope, ranks) has no
// max_bytes (it extrapolates).
std::string calibration_yaml(const HardwareCalibration& c);

// `base_text` (a hardware file named `base_name` in messages) with the calibrated sections replaced
// or added. Throws core::ConfigError when the base is not a YAML mapping.
std::string merge_calibration(const std::string& base_text, const std::string& base_name,
                              const HardwareCalibration& c);

// Writes `out_path` through io::write_output (whole or not at all; through a link, FIFO or device):
// the base file merged with the calibration, or, without a base, a "collectives only" fragment that
// says so in its first lines (it lacks gpu/node/network, so it is not loadable on its own; merge it
// into a hardware file with --base).
void write_calibrated_hardware(const std::string& out_path, const std::optional<std::string>& base_path,
                               const HardwareCalibration& c);

}  // namespace ptdsim::calibrate
