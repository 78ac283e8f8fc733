// The libFuzzer entry point of one fuzz executable: it is linked with exactly one target file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& all = ptdsim::fuzz::targets();
  if (all.size() != 1) {
    std::fprintf(stderr, "a fuzz executable must link exactly one target, has %zu\n", all.size());
    std::abort();
  }
  try {
    all.begin()->second(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ptdsim::fuzz::Finding& f) {
    std::fprintf(stderr, "fuzz finding: %s\n", f.what());
    std::abort();
  }
  return 0;
}
