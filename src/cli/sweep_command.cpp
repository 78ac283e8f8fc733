// Placeholder until the sweep command lands; replaced by its owner.
#include <stdexcept>

#include "commands.hpp"

namespace ptdsim::cli {
void add_sweep(CLI::App& app) {
  app.add_subcommand("sweep", "(not built yet)")->callback([] {
    throw std::runtime_error("ptdsim sweep is not available in this build");
  });
}
}  // namespace ptdsim::cli
