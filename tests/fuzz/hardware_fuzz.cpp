#include "fuzz_target.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;

// A hardware file: accepted, or refused with a clean, positioned ConfigError.
PTDSIM_FUZZ_TARGET(hardware) {
  try {
    io::load_hardware_from_string(input, "fuzz.yaml");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
  }
}
