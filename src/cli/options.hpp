#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ptdsim/core/report.hpp"
#include "ptdsim/io/load.hpp"

// Options several commands share: where the output goes and in which form, and --set overrides.
namespace ptdsim::cli {

// A positive count given on the command line (degree maxima, ranks, top K), capped at 2^24 so a bad
// value is told the range it missed, not "0 to 1.8e308". --gpus takes the schema's cluster.gpus
// range (io::valid_range), as a scenario file would.
inline const CLI::Range kPositiveCount{1, 1 << 24};

// The one check of a real-valued flag: a finite decimal number (no nan, inf or hex) from `lo` to
// `hi` inclusive. CLI::Range alone lets NaN through (every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);

struct OutputOptions {
  std::string format = "table";
  std::string path;  // -o; empty or "-": stdout
  bool to_stdout() const { return path.empty() || path == "-"; }
};

void add_output_options(CLI::App* cmd, OutputOptions& out, const std::vector<std::string>& formats);
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets);
// --tokens 15T: the token budget to train on (training.tokens), checked by core::parse_count.
void add_tokens_option(CLI::App* cmd, std::string& tokens);
// --gpu-hour 2.5: the price of one GPU-hour (cost.gpu_hour), checked against that key's valid range
// so that a bad price names the flag. `price` is a string (evaluate, sweep: an override) or a number
// (import: written into the scenario).
template <typename T> void add_gpu_hour_option(CLI::App* cmd, T& price);

// What the plan options of evaluate and sweep add to a scenario: the budget and the price.
struct PlanOptions {
  std::string tokens;    // --tokens
  std::string gpu_hour;  // --gpu-hour
};
void add_plan_options(CLI::App* cmd, PlanOptions& plan);

// The scenario's overrides: every --set, then --tokens and --gpu-hour as more of them
// (`training.tokens=...`, `cost.gpu_hour=...`), so their problems read like any other override's.
std::vector<io::Override> overrides_of(const std::vector<std::string>& sets, const PlanOptions& plan);

// Each of a report's warnings on stderr, "ptdsim: warning: ...".
void print_warnings(const std::vector<std::string>& warnings);

// Refuses to print a report holding a non-finite or negative number (report::report_problem): a
// ConfigError naming the scenario file, exit 2, instead of "inf" with exit 0.
void check_printable(const core::Report& r, const std::string& scenario_file);

// Writes the command's result to -o (io::write_output: through to what it names) or stdout.
void emit(const OutputOptions& out, const std::string& text);

}  // namespace ptdsim::cli
