#include "fuzz_target.hpp"
#include "ptdsim/calibrate/kernel_tables.hpp"

using namespace ptdsim;

// A measured kernel table (calibrate import-kernels): read as each of the seven tables, each either
// read or refused with a clean, positioned ConfigError.
PTDSIM_FUZZ_TARGET(kernel_table) {
  using Parse = void (*)(const std::string&);
  const Parse parsers[] = {
      [](const std::string& t) { calibrate::parse_gemm_csv(t, "gemm.csv"); },
      [](const std::string& t) { calibrate::parse_gemm_fp8_csv(t, "gemm_fp8.csv"); },
      [](const std::string& t) { calibrate::parse_attention_csv(t, "attention.csv"); },
      [](const std::string& t) { calibrate::parse_elementwise_csv(t, "elementwise.csv"); },
      [](const std::string& t) { calibrate::parse_cross_entropy_csv(t, "cross_entropy.csv"); },
      [](const std::string& t) { calibrate::parse_optimizer_csv(t, "optimizer.csv"); },
      [](const std::string& t) { calibrate::parse_contention_csv(t, "contention.csv"); },
  };
  for (Parse parse : parsers) {
    try {
      parse(input);
    } catch (const core::ConfigError& e) {
      fuzz::expect_clean(e, input);
    }
  }
}
