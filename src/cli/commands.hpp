#pragma once
#include <CLI/CLI.hpp>

// The table of commands: each file adds one subcommand to the app and sets its callback. The
// callback throws core::ConfigError for bad input; main() is the only place that catches and exits.
namespace ptdsim::cli {

void add_evaluate(CLI::App& app);
void add_sweep(CLI::App& app);
void add_validate(CLI::App& app);
void add_calibrate(CLI::App& app);
void add_kernel(CLI::App& app);
// `calibrate import-kernels`, a subcommand of `calibrate` (import_kernels_command.cpp).
void add_import_kernels(CLI::App* calibrate);
void add_import(CLI::App& app);
void add_study(CLI::App& app);

}  // namespace ptdsim::cli
