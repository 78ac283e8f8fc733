#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <fstream>
#include <sstream>
#include <string>

#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/hardware_writer.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;
using core::Collective;
using core::Scope;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

calibrate::HardwareCalibration two_pieces() {
  calibrate::HardwareCalibration c;
  core::CollectiveFit a;
  a.op = Collective::all_reduce;
  a.scope = Scope::inter;
  a.ranks = 16;
  a.alpha_s = 36.92e-6;
  a.busbw_Bps = 1.38e9;
  a.min_bytes = 0;
  a.max_bytes = 16384;
  core::CollectiveFit b = a;
  b.alpha_s = 708.06e-6;
  b.busbw_Bps = 240.18e9;
  b.min_bytes = 16384;
  b.max_bytes = std::numeric_limits<double>::infinity();
  c.collectives = {a, b};
  c.comment = {"fitted by a test"};
  return c;
}

}  // namespace

TEST_CASE("calibrate: the collectives section is merged into a hardware file, the rest kept", "[calibrate][writer]") {
  const std::string base = read(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-a100-40g.yaml");
  const std::string merged = calibrate::merge_calibration(base, "dgx-a100-40g.yaml", two_pieces());
  // everything the base said is still there, comments included
  CHECK(merged.find("# DGX A100 (40 GB): 8 x A100-SXM4-40GB on NVSwitch") != std::string::npos);
  CHECK(merged.find("matmul_efficiency: {bf16: 0.705, fp16: 0.705}") != std::string::npos);
  CHECK(merged.find("# fitted by a test\ncollectives:\n  all_reduce:\n"
                    "    - {scope: inter, ranks: 16, alpha_us: 36.92, busbw_gbs: 1.38, min_bytes: 0, max_bytes: 16384}\n"
                    "    - {scope: inter, ranks: 16, alpha_us: 708.06, busbw_gbs: 240.18, min_bytes: 16384}\n") !=
        std::string::npos);
  auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  CHECK(hw.name == "dgx-a100-40g");
  CHECK(hw.gpu.scalar_matmul_efficiency(core::Precision::bf16) == Approx(0.705).epsilon(1e-12));
  REQUIRE(hw.collectives.size() == 2);
  CHECK(hw.collectives[0].alpha_s == Approx(36.92e-6).epsilon(1e-9));
  CHECK(hw.collectives[0].max_bytes == 16384);
  CHECK(hw.collectives[1].busbw_Bps == Approx(240.18e9).epsilon(1e-9));
  CHECK(std::isinf(hw.collectives[1].max_bytes));

  SECTION("merging again replaces the section instead of adding a second one") {
    auto c = two_pieces();
    c.collectives.pop_back();
    c.collectives[0].max_bytes = std::numeric_limits<double>::infinity();
    const std::string again = calibrate::merge_calibration(merged, "merged.yaml", c);
    auto hw2 = io::load_hardware_from_string(again, "again.yaml");
    CHECK(hw2.collectives.size() == 1);
    CHECK(again.find("collectives:") == again.rfind("collectives:"));
  }
}

TEST_CASE("calibrate: a GEMM table, launch overhead and copy efficiency go under gpu", "[calibrate][writer]") {
  const std::string base = read(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-h100.yaml");
  calibrate::HardwareCalibration c;
  core::GemmEfficiency g;
  g.precision = core::Precision::bf16;
  g.m = 8192;
  g.n = 3 * 8192;
  g.k = 8192;
  g.efficiency = 0.7512;
  c.matmul_table = {g};
  c.kernel_launch_s = 2.5e-6;
  c.hbm_efficiency = 0.912;
  const std::string merged = calibrate::merge_calibration(base, "dgx-h100.yaml", c);
  auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  REQUIRE(hw.gpu.matmul_table.size() == 1);
  CHECK(hw.gpu.matmul_table[0].n == 24576);
  CHECK(hw.gpu.matmul_table[0].efficiency == Approx(0.7512).epsilon(1e-12));
  CHECK(hw.gpu.kernel_launch_s == Approx(2.5e-6).epsilon(1e-12));
  CHECK(hw.gpu.hbm_efficiency == Approx(0.912).epsilon(1e-12));
  CHECK(hw.intra.bandwidth_Bps > 0);  // node and network untouched
}

TEST_CASE("calibrate: without a base the file is a marked collectives-only fragment", "[calibrate][writer]") {
  const std::string yaml = calibrate::calibration_yaml(two_pieces());
  CHECK(yaml.rfind("collectives:\n  all_reduce:\n", 0) == 0);
  // a fragment is no hardware file: loading it names the missing gpu section
  CHECK_THROWS(io::load_hardware_from_string(yaml, "fragment.yaml"));
}

TEST_CASE("calibrate: a row records the GPU and ranks per node it was measured with, and loads back",
          "[calibrate][writer]") {
  auto c = two_pieces();
  for (auto& r : c.collectives) {
    r.ranks_per_node = 8;
    r.gpu = "NVIDIA A100-SXM4-40GB";
  }
  const std::string base = read(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-a100-40g.yaml");
  const std::string merged = calibrate::merge_calibration(base, "dgx-a100-40g.yaml", c);
  CHECK(merged.find("    - {scope: inter, ranks: 16, ranks_per_node: 8, gpu: \"NVIDIA A100-SXM4-40GB\", alpha_us: 36.92, "
                    "busbw_gbs: 1.38, min_bytes: 0, max_bytes: 16384}\n") != std::string::npos);
  auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  REQUIRE(hw.collectives.size() == 2);
  CHECK(hw.collectives[1].ranks_per_node == 8);
  CHECK(hw.collectives[1].gpu == "NVIDIA A100-SXM4-40GB");
  // rows without them (older files) load with 0 and "": unknown
  const auto old = io::load_hardware_from_string(calibrate::merge_calibration(base, "dgx-a100-40g.yaml", two_pieces()), "old.yaml");
  CHECK(old.collectives[0].ranks_per_node == 0);
  CHECK(old.collectives[0].gpu.empty());
}

TEST_CASE("calibrate: gpu.kernels is merged into a hardware file, reloads to the same tables, and a rerun changes nothing",
          "[calibrate][writer][kernels]") {
  const std::string base = read(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-a100-80g.yaml");
  calibrate::HardwareCalibration c;
  calibrate::HardwareCalibration::Kernels k;
  k.tables.source = "a test";
  auto& bf16 = k.tables.gemm_model[core::index(core::Precision::bf16)];
  bf16.rate_flops = 271.5e12;
  bf16.epilogue_Bps = 1.5e12;
  bf16.floor_s = 12.25e-6;
  bf16.knee = 2.5;
  bf16.tail = 0.25;
  k.tables.gemm_rows = {{core::Precision::bf16, 1024, 2048, 4096, 31.5e-6}};
  k.tables.attention_forward = {200e12, 1e12, 2e12};
  k.tables.attention_backward = {150e12, 0, 0.5e12};
  k.tables.memory_bound[static_cast<std::size_t>(core::MemoryOp::gelu)] = {1.5e12, 0.75e12};
  k.tables.cross_entropy = {1.25e12, 0.5e12};
  k.tables.optimizer_Bps = 1.75e12;
  k.contention_factor = 1.5;
  k.layer_overhead_s = 12.5e-6;
  k.memory_bound_factor = 1.25;
  c.kernels = k;
  c.comment = {"kernels: written by a test"};
  const std::string merged = calibrate::merge_calibration(base, "dgx-a100-80g.yaml", c);
  CHECK(merged.find("# DGX A100 (80 GB)") != std::string::npos);  // the base's text is kept
  CHECK(merged.find("  # kernels: written by a test\n  kernels:\n    source: \"a test\"\n    gemm:\n      model:\n"
                    "        bf16: {tflops: 271.5, epilogue_gbs: 1500, floor_us: 12.25, knee: 2.5, tail: 0.25, tile_m: "
                    "128, tile_n: 128}\n      rows:\n        - {precision: bf16, m: 1024, n: 2048, k: 4096, time_us: 31.5}\n") !=
        std::string::npos);
  const auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  REQUIRE(hw.gpu.kernels);
  const auto& t = *hw.gpu.kernels;
  CHECK(t.source == "a test");
  CHECK(t.gemm_model[core::index(core::Precision::bf16)].rate_flops == Approx(271.5e12).epsilon(1e-12));
  CHECK(t.gemm_model[core::index(core::Precision::bf16)].floor_s == Approx(12.25e-6).epsilon(1e-12));
  CHECK_FALSE(t.gemm_model[core::index(core::Precision::fp8)].valid());
  REQUIRE(t.gemm_rows.size() == 1);
  CHECK(t.gemm_rows[0].time_s == Approx(31.5e-6).epsilon(1e-12));
  CHECK(t.attention_backward.q_Bps == 0);  // a zero term is not written, and reads as absent
  CHECK(t.attention_backward.kv_Bps == Approx(0.5e12).epsilon(1e-12));
  CHECK(t.memory_bound[static_cast<std::size_t>(core::MemoryOp::gelu)].backward_Bps == Approx(0.75e12).epsilon(1e-12));
  CHECK_FALSE(t.memory_bound[static_cast<std::size_t>(core::MemoryOp::layernorm)].valid());
  CHECK(t.optimizer_Bps == Approx(1.75e12).epsilon(1e-12));
  CHECK(hw.gpu.contention_factor == 1.5);
  CHECK(hw.gpu.layer_overhead_s == Approx(12.5e-6).epsilon(1e-12));
  CHECK(hw.gpu.memory_bound_factor == 1.25);
  // merging the same calibration again replaces the section and its comment: the text is unchanged
  CHECK(calibrate::merge_calibration(merged, "merged.yaml", c) == merged);
}

TEST_CASE("calibrate: a row's forced algorithm and protocol are written and read back", "[calibrate][writer][algo]") {
  const std::string base = read(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-a100-40g.yaml");
  auto c = two_pieces();
  c.collectives[0].algo = 1;   // ring (core::nccl_algo_names)
  c.collectives[1].algo = 1;
  c.collectives[1].proto = 2;  // simple (core::nccl_proto_names)
  const std::string merged = calibrate::merge_calibration(base, "dgx-a100-40g.yaml", c);
  CHECK(merged.find("    - {scope: inter, ranks: 16, algorithm: ring, alpha_us: 36.92, busbw_gbs: 1.38, min_bytes: 0, "
                    "max_bytes: 16384}\n"
                    "    - {scope: inter, ranks: 16, algorithm: ring, protocol: simple, alpha_us: 708.06, "
                    "busbw_gbs: 240.18, min_bytes: 16384}\n") != std::string::npos);
  const auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  REQUIRE(hw.collectives.size() == 2);
  CHECK(hw.collectives[0].algo == 1);
  CHECK(hw.collectives[0].proto == -1);
  CHECK(hw.collectives[1].algo == 1);
  CHECK(hw.collectives[1].proto == 2);
}

TEST_CASE("calibrate: tables merged into a file without them drop its scalar memory-bound factor",
          "[calibrate][writer]") {
  // dgx-b200.yaml times memory-bound work at hbm_efficiency times gpu.memory_bound_factor; with
  // tables the factor is kernels.overhead's, and the loader refuses the two together
  const std::string base = read(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-b200.yaml");
  REQUIRE(base.find("\n  memory_bound_factor:") != std::string::npos);
  const auto h100 = io::load_hardware(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-h100.yaml");
  REQUIRE(h100.gpu.kernels);
  calibrate::HardwareCalibration c;
  calibrate::HardwareCalibration::Kernels k;
  k.tables = *h100.gpu.kernels;
  k.memory_bound_factor = 1.75;
  c.kernels = k;
  const std::string merged = calibrate::merge_calibration(base, "dgx-b200.yaml", c);
  CHECK(merged.find("\n  memory_bound_factor:") == std::string::npos);
  const auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  REQUIRE(hw.gpu.kernels);
  CHECK(hw.gpu.memory_bound_factor == Approx(1.75).epsilon(1e-12));
  CHECK(hw.gpu.name == io::load_hardware_from_string(base, "dgx-b200.yaml").gpu.name);
}

TEST_CASE("calibrate: the dropped scalar factor may be the gpu mapping's last key", "[calibrate][writer]") {
  const std::string base =
      "gpu:\n"
      "  name: G\n"
      "  memory_gib: 80\n"
      "  hbm_gbs: 3350\n"
      "  peak_tflops: {bf16: 989}\n"
      "  sms: 132\n"
      "  memory_bound_factor: 2.0  # the scalar model's\n"
      "\n"
      "node: {gpus: 8, intra: {bandwidth_gbs: 450, latency_us: 5}}\n"
      "network: {bandwidth_gbs: 50, latency_us: 10}\n";
  const auto h100 = io::load_hardware(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-h100.yaml");
  calibrate::HardwareCalibration c;
  calibrate::HardwareCalibration::Kernels k;
  k.tables = *h100.gpu.kernels;
  c.kernels = k;
  const std::string merged = calibrate::merge_calibration(base, "g.yaml", c);
  CHECK(merged.find("memory_bound_factor: 2.0") == std::string::npos);
  CHECK(merged.find("node: {gpus: 8") != std::string::npos);
  const auto hw = io::load_hardware_from_string(merged, "merged.yaml");
  CHECK(hw.gpu.kernels);
  CHECK(hw.gpu.memory_bound_factor == 1.0);  // kernels.overhead's default: the scalar one does not carry over
  CHECK(hw.intra.bandwidth_Bps == Approx(450e9).epsilon(1e-12));
}
