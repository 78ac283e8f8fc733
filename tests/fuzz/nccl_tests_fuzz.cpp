#include "fuzz_target.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"

using namespace ptdsim;

// An nccl-tests log: parsed, or refused with a clean, positioned ConfigError.
PTDSIM_FUZZ_TARGET(nccl_tests) {
  try {
    calibrate::parse_nccl_tests(input, "fuzz.log");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
  }
}
