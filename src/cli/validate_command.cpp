// Placeholder until the validate command lands; replaced by its owner.
#include <stdexcept>

#include "commands.hpp"

namespace ptdsim::cli {
void add_validate(CLI::App& app) {
  app.add_subcommand("validate", "(not built yet)")->callback([] {
    throw std::runtime_error("ptdsim validate is not available in this build");
  });
}
}  // namespace ptdsim::cli
