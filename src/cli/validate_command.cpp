#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/io/html.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/validate_report.hpp"
#include "ptdsim/validation/validate.hpp"
#include "ptdsim/core/version.hpp"

namespace ptdsim::cli {
namespace {

// The dataset shipped in the repository, used when no file is named.
#ifndef PTDSIM_DEFAULT_DATASET
#define PTDSIM_DEFAULT_DATASET "scenarios/published/dataset.yaml"
#endif

struct ValidateArgs {
  std::string dataset = PTDSIM_DEFAULT_DATASET;
  std::string split = "all";
  bool fit = false;
  bool strict = false;
  OutputOptions out;
};

void run(const ValidateArgs& a) {
  auto records = io::load_dataset(a.dataset);
  if (a.fit) {
    emit(a.out, io::validate_fit_tables(validation::fit_matmul_efficiency(records),
                                        validation::fit_overheads(records)));
    return;
  }
  if (a.split != "all") {
    std::erase_if(records, [&](const io::Record& r) {
      return (r.split.empty() ? std::string("holdout") : r.split) != a.split;
    });
  }
  if (a.strict) io::require_all_modelled(records);
  const auto summary = validation::validate(records);
  if (a.strict) validation::require_all_predicted(records, summary);
  if (a.out.format == "json") {
    emit(a.out, io::validate_json(summary));
  } else if (a.out.format == "csv") {
    emit(a.out, io::validate_csv(summary));
    std::cerr << io::validate_counts_line(summary);
  } else if (a.out.format == "html") {
    emit(a.out, io::validate_html(summary, records, io::PageInfo{core::kVersion, a.dataset}));
  } else {
    emit(a.out, io::validate_table(summary, a.dataset));
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
