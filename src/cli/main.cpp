#include <cstdio>
#include <exception>
#include <iostream>
#include <new>

#include "commands.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/core/version.hpp"

namespace {

// Exit statuses of interface.md: 0 success, 2 bad usage or bad input, 1 anything else; a command
// may add its own (evaluate --require-fit: 3 when the layout does not fit).
constexpr int kBadInput = 2;
constexpr int kFailure = 1;

}  // namespace

int main(int argc, char** argv) {
  ptdsim::io::use_checked_stdout();
  CLI::App app{"ptdsim: training performance simulator and planner for large language models"};
  app.set_version_flag("--version", std::string("ptdsim ") + ptdsim::core::kVersion);
  app.require_subcommand(1);
  ptdsim::cli::add_evaluate(app);
  ptdsim::cli::add_sweep(app);
  ptdsim::cli::add_validate(app);
  ptdsim::cli::add_calibrate(app);
  ptdsim::cli::add_kernel(app);
  ptdsim::cli::add_import(app);
  ptdsim::cli::add_study(app);
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::RuntimeError&) {
      throw;  // CLI11 derives it from ParseError: a command's verdict, handled below
    } catch (const CLI::ParseError& e) {
      // --help and --version arrive as ParseErrors with exit code 0
      if (app.exit(e) != 0) return kBadInput;
    }
    // success only once what was printed has reached standard output
    ptdsim::io::close_stdout();
    return 0;
  } catch (const CLI::RuntimeError& e) {
    // a command's own verdict (evaluate --require-fit: 3), after its output was written whole
    ptdsim::io::close_stdout();
    return e.get_exit_code();
  } catch (const ptdsim::core::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "ptdsim: error: out of memory\n";
    return kFailure;
  } catch (const std::exception& e) {
    std::cerr << "ptdsim: error: " << e.what() << "\n";
    return kFailure;
  }
}
