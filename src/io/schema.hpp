#pragma once
#include <string>
#include <string_view>
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
// Keys of one switch tier of hardware.network.tiers.
const std::vector<std::string>& tier_row_keys();

// Keys of a dataset record and of its `measured` mapping.
const std::vector<std::string>& record_keys();
const std::vector<std::string>& measured_keys();

// The valid range of a numeric key, stated once for every numeric key of every input file
// (docs/inputs.md "Valid ranges" gives each bound's reason and source). `kind` is what the value
// must be at all (its message: "must be a positive integer", "a number in (0, 1]", ...); [min, max]
// is what physics allows within it: the largest real value times a generous margin, and floors
// below which a rate or an efficiency is surely a unit mistake. Nothing accepted can make a
// derived time infinite or NaN, or make the engines allocate beyond their output.
struct Bound {
  enum class Kind { integer, positive, non_negative, fraction, at_least_one };
  Kind kind = Kind::positive;
  double min = 0;
  double max = 0;
  const char* unit = "";       // shown after a bound in messages: "at most 1000000 us (1 s)"
  bool infinity_ok = false;    // `.inf` is a value (max_bytes: "no upper end")
};

// The bound of the key at dotted `path` ("model.layers", "hardware.gpu.peak_tflops.bf16"); list
// indices are written "[]" ("parallel.stage_layers[]", "hardware.collectives.all_reduce[].ranks")
// and any "[N]" in `path` reads as "[]". Throws std::logic_error for a path with no bound: a
// numeric key must have its row (so a new key cannot skip its range).
const Bound& bound_of(std::string_view path);

// Every (path, bound) pair, in path order: for docs and tests.
std::vector<std::pair<std::string, Bound>> all_bounds();

}  // namespace ptdsim::io::detail
