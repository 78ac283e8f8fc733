#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

// Options several commands share: where the output goes and in which form, and --set overrides.
namespace ptdsim::cli {

// A positive count given on the command line (GPUs, degrees, ranks, top K), capped like the YAML
// loader's degrees (2^24) so a bad value is told the range it missed, not "0 to 1.8e308".
inline const CLI::Range kPositiveCount{1, 1 << 24};

struct OutputOptions {
  std::string format = "table";
  std::string path;  // -o; empty or "-": stdout
  bool to_stdout() const { return path.empty() || path == "-"; }
};

void add_output_options(CLI::App* cmd, OutputOptions& out, const std::vector<std::string>& formats);
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets);

// Writes the command's result to -o (io::write_output: through to what it names) or stdout.
void emit(const OutputOptions& out, const std::string& text);

}  // namespace ptdsim::cli
