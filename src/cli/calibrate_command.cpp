// `ptdsim calibrate import-nccl-tests LOG... [--base HARDWARE.yaml] [-o HARDWARE.yaml]`: fits the
// alpha-beta lines of docs/calibration.md to nccl-tests logs, prints the fit and its error at every
// size, and writes the `collectives:` section into a hardware file. Warnings go to stderr: a log
// without its footer, a log of another GPU than the base file's, a fit far from the base file's
// link model.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/fit_report.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/calibrate/hardware_writer.hpp"
#include "ptdsim/io/load.hpp"

namespace ptdsim::cli {
namespace {

struct ImportArgs {
  std::vector<std::string> logs;
  std::string base;
  std::string output;
  std::string op;
  std::string scope;
  int ranks = 0;
  int ranks_per_node = 0;
  int max_pieces = 4;
  double target_error = 0.05;
};

void run_import(const ImportArgs& a) {
  calibrate::ParseOptions parse;
  if (!a.op.empty()) {
    parse.op = calibrate::collective_of_name(a.op);
    if (!parse.op) throw core::ConfigError({"--op", 0, 0}, "unknown collective '" + a.op + "'");
  }
  if (!a.scope.empty()) parse.scope = core::parse<core::Scope>(a.scope);
  if (a.ranks > 0) parse.ranks = a.ranks;
  if (a.ranks_per_node > 0) parse.ranks_per_node = a.ranks_per_node;

  std::vector<calibrate::NcclRun> runs;
  for (const auto& log : a.logs) {
    auto r = calibrate::read_nccl_tests(log, parse);
    runs.insert(runs.end(), r.begin(), r.end());
  }
  calibrate::FitOptions fit;
  fit.max_pieces = a.max_pieces;
  fit.target_rel_error = a.target_error;
  auto fits = calibrate::fit_collectives(runs, fit);
  for (const auto& run : runs)
    for (const auto& w : run.warnings) std::cerr << w << "\n";
  // a base that does not load is refused before anything is printed
  std::optional<core::HardwareSpec> base;
  if (!a.base.empty()) base = io::load_hardware(a.base);
  std::cout << calibrate::fit_report(fits);
  if (base) {
    for (const auto& w : calibrate::base_warnings(fits, *base, a.base)) std::cerr << w << "\n";
  }

  if (a.output.empty()) return;
  calibrate::HardwareCalibration c;
  c.collectives = calibrate::hardware_rows(fits);
  const std::string from = core::joined(a.logs);
  c.comment = {"collectives: fitted by `ptdsim calibrate import-nccl-tests` (docs/calibration.md) from " + from,
               "time = alpha_us + size * F(n) / busbw_gbs for min_bytes <= size < max_bytes (nccl-tests' size)"};
  calibrate::write_calibrated_hardware(a.output, a.base.empty() ? std::nullopt : std::optional<std::string>(a.base), c);
  std::cerr << "wrote " << a.output
            << (a.base.empty() ? " (a collectives-only fragment: pass --base to merge into a hardware file)" : "")
            << "\n";
}

}  // namespace

void add_calibrate(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate", "fit a cluster's collective and GEMM rates from measurements");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ImportArgs>();
  auto* imp = cmd->add_subcommand("import-nccl-tests",
                                  "fit alpha and busbw per collective from nccl-tests logs and write them to "
                                  "a hardware file's collectives: section");
  imp->add_option("LOG", args->logs, "nccl-tests output files (all_reduce_perf, all_gather_perf, ...)")
      ->required()
      ->check(CLI::ExistingFile);
  imp->add_option("--base", args->base, "hardware file to copy; its collectives: section is replaced")
      ->check(CLI::ExistingFile);
  imp->add_option("-o,--output", args->output,
                  "write the hardware file here (whole or not at all); without --base a collectives-only "
                  "fragment");
  const auto ops = calibrate::collective_spellings();
  imp->add_option("--op", args->op, "the collective, for logs that do not name their binary (ptdsim's or nccl-tests' name)")
      ->check(CLI::IsMember(ops));
  imp->add_option("--scope", args->scope, "intra or inter: overrides the log's device list (needed for tail-only logs)")
      ->check(CLI::IsMember({"intra", "inter"}));
  imp->add_option("--ranks", args->ranks, "rank count, for logs whose bandwidths and device list do not fix it")
      ->check(kPositiveCount);
  imp->add_option("--ranks-per-node", args->ranks_per_node,
                  "GPUs per node the log ran with, for inter-node logs without a complete device list")
      ->check(kPositiveCount);
  imp->add_option("--max-pieces", args->max_pieces, "most size ranges per collective (piecewise fit)")
      ->capture_default_str()
      ->check(CLI::Range(1, 8));
  imp->add_option("--target-error", args->target_error,
                  "stop adding pieces once every size is within this relative error")
      ->capture_default_str()
      ->check(finite_range(0.0, 1.0));
  imp->callback([args] { run_import(*args); });
  add_import_kernels(cmd);
}

}  // namespace ptdsim::cli
