#include <cstdio>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/version.hpp"

namespace {

// Exit statuses of interface.md: 0 success, 2 bad usage or bad input, 1 anything else; a command
// may add its own (evaluate --require-fit: 3 when the layout does not fit).
constexpr int kBadInput = 2;
constexpr int kFailure = 1;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ptdsim: training performance simulator and planner for large language models"};
  app.set_version_flag("--version", std::string("ptdsim ") + ptdsim::core::kVersion);
  app.require_subcommand(1);
  ptdsim::cli::add_evaluate(app);
  ptdsim::cli::add_sweep(app);
  ptdsim::cli::add_validate(app);
  ptdsim::cli::add_calibrate(app);
  ptdsim::cli::add_import(app);
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::RuntimeError& e) {
    // a command's own verdict (evaluate --require-fit: 3), after its output was written
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as ParseErrors with exit code 0
    const int code = app.exit(e);
    return code == 0 ? 0 : kBadInput;
  } catch (const ptdsim::core::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ptdsim: error: " << e.what() << "\n";
    return kFailure;
  }
}
