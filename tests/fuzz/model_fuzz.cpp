#include "fuzz_target.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;

// A model file: accepted, or refused with a clean, positioned ConfigError.
PTDSIM_FUZZ_TARGET(model) {
  try {
    io::load_model_from_string(input, "fuzz.yaml");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
  }
}
