// `ptdsim calibrate import-kernels DIR [--base HARDWARE.yaml] [--sms N] -o HARDWARE.yaml`: reads the
// measured kernel tables in DIR (docs/calibration.md "Kernel tables"), fits the GEMM, attention,
// memory-bound and contention models, prints each fit and its error, and writes gpu.kernels into a
// hardware file.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/calibrate/kernel_tables.hpp"
#include "ptdsim/calibrate/hardware_writer.hpp"
#include "ptdsim/io/load.hpp"

namespace ptdsim::cli {
namespace {

struct ImportKernelsArgs {
  std::string dir;
  std::string base;
  std::string output;
  int sms = 0;
};

// What the tables were measured on: the first heading of DIR/README.md, else the directory.
std::string source_of(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / "README.md");
  for (std::string line; std::getline(in, line);) {
    const auto text = line.find_first_not_of("# \t");
    if (text == std::string::npos) continue;
    std::string s = line.substr(text);
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
  }
  return "measured kernel tables in " + dir;
}

void run(const ImportKernelsArgs& a) {
  const calibrate::KernelMeasurements m = calibrate::read_kernel_tables(a.dir);
  std::optional<core::HardwareSpec> base;
  if (!a.base.empty()) base = io::load_hardware(a.base);
  const int sms = a.sms > 0 ? a.sms : base ? base->gpu.sms : 0;
  const int comm_sms = base ? base->gpu.comm_sms : 0;
  const calibrate::KernelFit fit = calibrate::fit_kernels(m, sms, comm_sms, source_of(a.dir));
  for (const auto& f : m.files) std::cout << "read " << f << "\n";
  for (const auto& line : fit.report) std::cout << line << "\n";
  if (a.output.empty()) return;

  calibrate::HardwareCalibration c;
  calibrate::HardwareCalibration::Kernels k;
  k.tables = fit.tables;
  k.contention_factor = fit.contention_factor;
  if (base && base->gpu.kernels) {
    // the end-to-end constants are fitted by `ptdsim validate --fit`, not here: keep the base's
    k.layer_overhead_s = base->gpu.layer_overhead_s;
    k.memory_bound_factor = base->gpu.memory_bound_factor;
  }
  c.kernels = k;
  c.comment = {"kernels: measured kernel tables and the models fitted to them by `ptdsim calibrate import-kernels " +
                   a.dir + "` (docs/calibration.md \"Kernel tables\");",
               "overhead: fitted by `ptdsim validate --fit` on the dataset's fit split (docs/validation.md)"};
  calibrate::write_calibrated_hardware(a.output, base ? std::optional<std::string>(a.base) : std::nullopt, c);
  std::cerr << "wrote " << a.output
            << (a.base.empty() ? " (a fragment: pass --base to merge into a hardware file)" : "") << "\n";
}

}  // namespace

void add_import_kernels(CLI::App* calibrate) {
  auto args = std::make_shared<ImportKernelsArgs>();
  auto* cmd = calibrate->add_subcommand(
      "import-kernels",
      "fit GEMM, attention, memory-bound and contention models to measured kernel tables and write them to a "
      "hardware file's gpu.kernels section");
  cmd->add_option("DIR", args->dir,
                  "directory of gemm.csv, attention.csv, attention_flash2.csv, elementwise.csv, cross_entropy.csv, "
                  "optimizer.csv, contention.csv (any subset)")
      ->required();
  cmd->add_option("--base", args->base, "hardware file to copy; its gpu.kernels section is replaced")
      ->check(CLI::ExistingFile);
  cmd->add_option("--sms", args->sms, "SMs of the measuring GPU (default: the base's gpu.sms)")->check(kPositiveCount);
  cmd->add_option("-o,--output", args->output,
                  "write the hardware file here (whole or not at all); without --base a gpu.kernels fragment");
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
