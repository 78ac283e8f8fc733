#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/api.hpp"
#include "ptdsim/report/html.hpp"
#include "ptdsim/analytic/capacity.hpp"
#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/core/version.hpp"

namespace ptdsim::cli {
namespace {

struct EvaluateArgs {
  std::string scenario;
  std::vector<std::string> sets;
  PlanOptions plan;  // --tokens, --gpu-hour
  std::string trace;
  bool require_fit = false;
  OutputOptions out;
};

// `--require-fit` and a layout that does not fit: exit 3 (docs/inputs.md, README), after the
// report is written, so a script gets both the numbers and the verdict.
constexpr int kDoesNotFit = 3;

int run(const EvaluateArgs& a) {
  const core::Scenario s = io::load_scenario(a.scenario, overrides_of(a.sets, a.plan));
  std::string trace;
  core::Timeline timeline;
  const bool html = a.out.format == "html";
  const core::Report r = api::evaluate(s, a.trace.empty() ? nullptr : &trace, html ? &timeline : nullptr);
  std::string text;
  if (html) {
    text = report::evaluate_html(r, timeline, report::PageInfo{core::kVersion, a.scenario});
  } else if (a.out.format == "json") {
    text = report::report_json(r);
  } else if (a.out.format == "csv") {
    text = report::report_csv_header() + report::report_csv_row(r);
  } else {
    text = report::report_table(r);
  }
  // the trace and the report together or not at all (io::write_outputs)
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!a.trace.empty()) outputs.emplace_back(a.trace, trace);
  outputs.emplace_back(a.out.to_stdout() ? std::string("-") : a.out.path, text);
  io::write_outputs(outputs);
  print_warnings(r.warnings);
  return a.require_fit && !r.fits ? kDoesNotFit : 0;
}

}  // namespace

void add_evaluate(CLI::App& app) {
  auto args = std::make_shared<EvaluateArgs>();
  auto* cmd = app.add_subcommand(
      "evaluate", "simulate one training step of a scenario: time, memory, communication");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  add_set_option(cmd, args->sets);
  add_plan_options(cmd, args->plan);
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace of the step to FILE");
  cmd->add_flag("--require-fit", args->require_fit,
                "exit with status 3 when the layout does not fit in GPU memory (the report is still written)");
  cmd->callback([args] {
    if (const int status = run(*args); status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace ptdsim::cli
