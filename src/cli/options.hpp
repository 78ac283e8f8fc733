#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ptdsim/io/load.hpp"

// Options several commands share: where the output goes and in which form, and --set overrides.
namespace ptdsim::cli {

// A positive count given on the command line (GPUs, degrees, ranks, top K), capped like the YAML
// loader's degrees (2^24) so a bad value is told the range it missed, not "0 to 1.8e308".
inline const CLI::Range kPositiveCount{1, 1 << 24};

struct OutputOptions {
  std::string format = "table";
  std::string path;  // -o; empty: stdout
};

void add_output_options(CLI::App* cmd, OutputOptions& out, const std::vector<std::string>& formats);
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets);
// --tokens 15T: the token budget to train on (training.tokens), checked by core::parse_count.
void add_tokens_option(CLI::App* cmd, std::string& tokens);

// The scenario's overrides: every --set, then --tokens as one more (`training.tokens=...`), so its
// problems read like any other override's.
std::vector<io::Override> overrides_of(const std::vector<std::string>& sets, const std::string& tokens);

// Each of a report's warnings on stderr, "ptdsim: warning: ...".
void print_warnings(const std::vector<std::string>& warnings);

// Writes the command's result to -o (atomically) or stdout.
void emit(const OutputOptions& out, const std::string& text);

}  // namespace ptdsim::cli
