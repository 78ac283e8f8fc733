#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/io/html.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/io/report.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/core/version.hpp"

namespace ptdsim::cli {
namespace {

struct EvaluateArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string trace;
  OutputOptions out;
};

std::vector<io::Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<io::Override> overrides;
  overrides.reserve(sets.size());
  for (const auto& s : sets) overrides.push_back(io::parse_override(s));
  return overrides;
}

void run(const EvaluateArgs& a) {
  const core::Scenario s = io::load_scenario(a.scenario, parse_overrides(a.sets));
  std::string trace;
  core::Timeline timeline;
  const bool html = a.out.format == "html";
  const core::Report r = sim::simulate(s, a.trace.empty() ? nullptr : &trace, html ? &timeline : nullptr);
  std::string text;
  if (html) {
    text = io::evaluate_html(r, timeline, io::PageInfo{core::kVersion, a.scenario});
  } else if (a.out.format == "json") {
    text = io::report_json(r);
  } else if (a.out.format == "csv") {
    text = io::report_csv_header() + io::report_csv_row(r);
  } else {
    text = io::report_table(r);
  }
  if (!a.trace.empty()) io::write_file_atomically(a.trace, trace);
  emit(a.out, text);
}

}  // namespace

void add_evaluate(CLI::App& app) {
  auto args = std::make_shared<EvaluateArgs>();
  auto* cmd = app.add_subcommand(
      "evaluate", "simulate one training step of a scenario: time, memory, communication");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  add_set_option(cmd, args->sets);
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace of the step to FILE");
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
