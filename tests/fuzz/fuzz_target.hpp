#pragma once
#include <map>
#include <stdexcept>
#include <string>

#include "ptdsim/core/error.hpp"

// Fuzz targets, written once and run two ways: by libFuzzer (`-DPTDSIM_FUZZ=ON` with clang, one
// executable per target, tests/fuzz/README.md) and by the normal test suite over each target's seed
// corpus and its regressions in tests/data/fuzz/<target>/ (regressions_test.cpp). A target is one
// file:
//
//   PTDSIM_FUZZ_TARGET(model) {
//     try { io::load_model_from_string(input, "fuzz.yaml"); }
//     catch (const core::ConfigError& e) { fuzz::expect_clean(e, input); }
//   }
//
// Anything but a clean ConfigError (another exception, a crash, a sanitizer report, a unit that
// runs past libFuzzer's -timeout) is a finding.
namespace ptdsim::fuzz {

using Target = void (*)(const std::string& input);

// Called by PTDSIM_FUZZ_TARGET at static initialisation.
bool register_target(const char* name, Target t);
const std::map<std::string, Target>& targets();

// What a target found wrong, as an exception so that the test suite can report it; libFuzzer's
// entry point turns it into an abort (a crash with the input saved).
struct Finding : std::logic_error {
  using std::logic_error::logic_error;
};

// A rejection must read like every other: each diagnostic names a file, and no library text
// ("std::", "stoi", "bad_alloc", yaml-cpp's "bad file") reaches the user, unless `input` holds it
// (a message quotes what it refuses). Throws Finding otherwise.
void expect_clean(const core::ConfigError& e, const std::string& input);

}  // namespace ptdsim::fuzz

#define PTDSIM_FUZZ_TARGET(name)                                                                   \
  static void ptdsim_fuzz_##name(const std::string& input);                                        \
  [[maybe_unused]] static const bool ptdsim_fuzz_##name##_registered =                             \
      ::ptdsim::fuzz::register_target(#name, ptdsim_fuzz_##name);                                  \
  static void ptdsim_fuzz_##name(const std::string& input)
