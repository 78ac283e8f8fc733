// Placeholder until the calibrate command lands; replaced by its owner.
#include <stdexcept>

#include "commands.hpp"

namespace ptdsim::cli {
void add_calibrate(CLI::App& app) {
  app.add_subcommand("calibrate", "(not built yet)")->callback([] {
    throw std::runtime_error("ptdsim calibrate is not available in this build");
  });
}
}  // namespace ptdsim::cli
