#pragma once
#include <string>
#include <vector>

// The keys each mapping of a scenario may hold, as data: the loaders check files against it and
// `--set` checks its dotted paths against it, so the two can never disagree. docs/inputs.md
// describes every key listed here.
namespace ptdsim::io::detail {

// The keys of the mapping at dotted path `section` of a scenario ("" is the root; "model",
// "hardware.gpu", "training.overlap", ...). Empty for a path that is not a mapping.
const std::vector<std::string>& section_keys(const std::string& section);

// Every dotted path a `--set` may name: the sections and their keys.
const std::vector<std::string>& all_paths();

// Keys of one row of hardware.gpu.matmul_efficiency and of hardware.collectives.<op>.
const std::vector<std::string>& matmul_row_keys();
// Keys of one measured row of hardware.gpu.kernels.gemm.rows.
const std::vector<std::string>& gemm_row_keys();
const std::vector<std::string>& collective_row_keys();

// Keys of a dataset record and of its `measured` mapping.
const std::vector<std::string>& record_keys();
const std::vector<std::string>& measured_keys();

}  // namespace ptdsim::io::detail
