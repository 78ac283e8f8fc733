#include "fuzz_target.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;

// A validation dataset, its scenario paths resolved against the shipped scenarios/published/.
PTDSIM_FUZZ_TARGET(dataset) {
  try {
    io::load_dataset_from_string(input, "fuzz.yaml", PTDSIM_SOURCE_DIR "/scenarios/published");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
  }
}
