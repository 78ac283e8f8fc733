#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/api.hpp"
#include "ptdsim/report/html.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/report/validate.hpp"
#include "ptdsim/validation/validate.hpp"
#include "ptdsim/core/version.hpp"

namespace ptdsim::cli {
namespace {

struct ValidateArgs {
  std::string dataset = api::default_dataset();  // the shipped one, used when no file is named
  std::string split = "all";
  bool fit = false;
  bool strict = false;
  OutputOptions out;
};

void run(const ValidateArgs& a) {
  if (a.fit) {
    const auto records = io::load_dataset(a.dataset);
    emit(a.out, report::validate_fit_tables(validation::fit_matmul_efficiency(records),
                                        validation::fit_overheads(records),
                                        validation::fit_jitter(records)));
    return;
  }
  const api::Validation v = api::validate(a.dataset, a.split, a.strict);
  const auto& records = v.records;
  const auto& summary = v.summary;
  if (a.out.format == "json") {
    emit(a.out, api::validate_json(v));
  } else if (a.out.format == "csv") {
    emit(a.out, report::validate_csv(summary));
    std::cerr << report::validate_counts_line(summary);
  } else if (a.out.format == "html") {
    emit(a.out, report::validate_html(summary, records, report::PageInfo{core::kVersion, a.dataset}));
  } else {
    emit(a.out, report::validate_table(summary, a.dataset));
  }
}

}  // namespace

void add_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand("validate", "compare predictions with published training runs");
  cmd->add_option("dataset", args->dataset, "validation dataset YAML (default: the shipped one)");
  cmd->add_option("--split", args->split, "score only the records of this split")
      ->check(CLI::IsMember({"all", "fit", "holdout"}));
  cmd->add_flag_callback("--holdout", [args] { args->split = "holdout"; },
                         "same as --split holdout: the error the efficiency fit did not see");
  cmd->add_flag("--fit", args->fit,
                "fit one matmul efficiency per GPU type on the 'fit' records and score it on the rest");
  cmd->add_flag("--strict", args->strict,
                "fail (exit 2) at the first record that is not predicted, with its reason and position");
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
