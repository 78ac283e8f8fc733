#include "options.hpp"

#include "ptdsim/core/error.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/io/report.hpp"

namespace ptdsim::cli {

void add_output_options(CLI::App* cmd, OutputOptions& out, const std::vector<std::string>& formats) {
  cmd->add_option("--format", out.format, "output form")
      ->check(CLI::IsMember(formats))
      ->default_str(formats.front());
  cmd->add_option("-o,--output", out.path, "write the output to FILE (whole or not at all; - is standard output)");
}

void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option("--set", sets, "override a scenario key by dotted path, e.g. parallel.tp=4")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

void check_printable(const core::Report& r, const std::string& scenario_file) {
  const std::string bad = io::report_problem(r);
  if (!bad.empty())
    throw core::ConfigError(core::SourceLocation{scenario_file, 0, 0},
                            "the result is not a finite, non-negative number (" + bad +
                                "): the inputs are beyond what the engines represent");
}

void emit(const OutputOptions& out, const std::string& text) {
  if (out.to_stdout()) {
    io::write_stdout(text);
  } else {
    io::write_output(out.path, text);
  }
}

}  // namespace ptdsim::cli
