#pragma once
#include <string>

// Small inline inputs shared by the io tests (no disk).
namespace ptdsim::io::test {

// 4 layers, hidden 256, 8 heads: divisible by tp 1, 2, 4, 8.
inline const std::string kModel = R"(
  name: tiny
  layers: 4
  hidden: 256
  heads: 8
  vocab: 1000
)";

inline const std::string kHardware = R"(
  name: box
  gpu:
    name: T-1
    memory_gib: 16
    hbm_gbs: 1000
    peak_tflops: {bf16: 100, fp32: 10}
  node:
    gpus: 4
    intra: {bandwidth_gbs: 100, latency_us: 2}
  network:
    bandwidth_gbs: 10
    latency_us: 5
)";

// A scenario with inline model and hardware (indented under the keys) and the given tail.
inline std::string scenario(const std::string& tail) {
  auto indent = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      out += c;
      if (c == '\n') out += "  ";
    }
    return out;
  };
  return "name: s\nmodel:" + indent(kModel) + "\nhardware:" + indent(kHardware) + "\n" + tail;
}

}  // namespace ptdsim::io::test
