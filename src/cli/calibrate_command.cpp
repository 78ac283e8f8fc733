// `ptdsim calibrate import-nccl-tests LOG... [--base HARDWARE.yaml] [-o HARDWARE.yaml]`: fits the
// alpha-beta lines of docs/calibration.md to nccl-tests logs, prints the fit and its error at every
// size, and writes the `collectives:` section into a hardware file. Warnings go to stderr: a log
// without its footer, a log of another GPU than the base file's, a fit far from the base file's
// link model.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/gpu_name.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/hardware_writer.hpp"
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

std::string size_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:g} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:g} KiB", b / 1024.0);
  return fmt::format("{:g} B", b);
}

std::string time_text(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

std::string report(const std::vector<calibrate::CollectiveFitResult>& fits) {
  std::string out;
  for (const auto& f : fits) {
    out += fmt::format("{} {}, {} ranks: {} piece{}, worst error {:.1f}%\n", core::name(f.op),
                       core::name(f.scope), f.ranks, f.pieces.size(), f.pieces.size() == 1 ? "" : "s",
                       100 * f.max_abs_rel_error);
    out += fmt::format("  measured on {}, {}\n", f.gpu.empty() ? "an unnamed GPU" : f.gpu,
                       f.ranks_per_node > 0 ? fmt::format("{} per node", f.ranks_per_node)
                                            : std::string("GPUs per node unknown (--ranks-per-node)"));
    for (const auto& file : f.files) out += fmt::format("  from {}\n", file);
    out += fmt::format("  {:>5}  {:>21}  {:>10}  {:>10}  {:>9}\n", "piece", "fitted on sizes", "alpha_us",
                       "busbw_gbs", "max error");
    for (std::size_t i = 0; i < f.pieces.size(); ++i) {
      const auto& p = f.pieces[i];
      out += fmt::format("  {:>5}  {:>21}  {:>10.2f}  {:>10.2f}  {:>8.1f}%\n", i + 1,
                         size_text(p.first_bytes) + " .. " + size_text(p.last_bytes), p.alpha_s * 1e6,
                         p.busbw_Bps / 1e9, 100 * p.max_abs_rel_error);
    }
    out += fmt::format("  {:>10}  {:>12}  {:>12}  {:>7}  {:>5}\n", "size", "measured_us", "fitted_us", "error",
                       "piece");
    for (const auto& p : f.points) {
      out += fmt::format("  {:>10}  {:>12.2f}  {:>12.2f}  {:>+6.1f}%  {:>5}\n", size_text(p.size_bytes),
                         p.measured_s * 1e6, p.fitted_s * 1e6, 100 * p.rel_error,
                         p.dropped ? std::string("spike") : std::to_string(p.piece + 1));
    }
    for (const auto& n : f.notes) out += "  note: " + n + "\n";
    out += "\n";
  }
  return out;
}

// A fit this many times slower or faster than the base file's link model describes other links
// than the file does (a 2-GPU PCIe log on an NVLink base turned a 7 s step into 95 s).
constexpr double kLinkModelRatio = 3;

// What is wrong with applying the fits to the base hardware: another GPU, or links far from the
// ones its node/network sections describe (compared at the largest measured size).
std::vector<std::string> base_warnings(const std::vector<calibrate::CollectiveFitResult>& fits,
                                       core::HardwareSpec base, const std::string& base_name) {
  std::vector<std::string> out;
  base.collectives.clear();  // the link model alone
  for (const auto& f : fits) {
    const std::string what = fmt::format("{} {}, {} ranks", core::name(f.op), core::name(f.scope), f.ranks);
    if (!f.gpu.empty() && !core::same_gpu_part(f.gpu, base.gpu.name)) {
      out.push_back(fmt::format("ptdsim: warning: {}: measured on {}, but {}'s gpu.name is {}: the rows "
                                "describe another part",
                                what, f.gpu, base_name, base.gpu.name));
    }
    analytic::Group g;
    g.ranks = f.ranks;
    g.scope = f.scope;
    g.ranks_per_node = f.ranks_per_node > 0 ? f.ranks_per_node
                                            : f.scope == core::Scope::intra ? f.ranks : base.gpus_per_node;
    const double size = f.points.back().size_bytes;
    const double fitted = calibrate::fitted_time(f, size), link = analytic::collective_time(base, f.op, size, g);
    if (!(link > 0) || !(fitted > 0)) continue;
    const double ratio = fitted / link;
    if (ratio > kLinkModelRatio || ratio < 1 / kLinkModelRatio) {
      out.push_back(fmt::format(
          "ptdsim: warning: {}: at {} the fit takes {}, {:.1f}x {} than the {} of {}'s link model: "
          "the log was measured on {} links than the file describes{}; evaluate will use the calibrated rows",
          what, size_text(size), time_text(fitted), ratio > 1 ? ratio : 1 / ratio, ratio > 1 ? "slower" : "faster",
          time_text(link), base_name, ratio > 1 ? "slower" : "faster",
          ratio > 1 ? " (PCIe instead of NVLink, a slower network, or another GPU)" : ""));
    }
  }
  return out;
}

void run_import(const ImportArgs& a) {
  calibrate::ParseOptions parse;
  if (!a.op.empty()) {
    // nccl-tests spells it "alltoall" and "sendrecv"; accept both spellings
    std::string op = a.op == "alltoall" ? "all_to_all" : a.op == "sendrecv" ? "send_recv" : a.op;
    parse.op = core::parse<core::Collective>(op);
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
  std::cout << report(fits);
  if (!a.base.empty()) {
    for (const auto& w : base_warnings(fits, io::load_hardware(a.base), a.base)) std::cerr << w << "\n";
  }

  if (a.output.empty()) return;
  io::HardwareCalibration c;
  c.collectives = calibrate::hardware_rows(fits);
  std::string from;
  for (const auto& log : a.logs) from += (from.empty() ? "" : ", ") + log;
  c.comment = {"collectives: fitted by `ptdsim calibrate import-nccl-tests` (docs/calibration.md) from " + from,
               "time = alpha_us + size * F(n) / busbw_gbs for min_bytes <= size < max_bytes (nccl-tests' size)"};
  io::write_calibrated_hardware(a.output, a.base.empty() ? std::nullopt : std::optional<std::string>(a.base), c);
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
  imp->add_option("--op", args->op, "the collective, for logs that do not name their binary")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "alltoall", "broadcast",
                             "reduce", "send_recv", "sendrecv"}));
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
      ->check(CLI::Range(0.0, 1.0));
  imp->callback([args] { run_import(*args); });
  add_import_kernels(cmd);
}

}  // namespace ptdsim::cli
