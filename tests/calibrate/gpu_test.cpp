#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

// [gpu] tests: they need a CUDA device and ptdsim-calibrate, and are left out of ctest (run them
// with `ptdsim_calibrate_tests "[gpu]"` on a GPU node). docs/calibration.md says what they showed.

namespace {

[[maybe_unused]] std::vector<std::vector<std::string>> csv(const std::string& path) {  // used only with CUDA
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("calibrate: ptdsim-calibrate's self-check passes on this machine's GPUs", "[gpu]") {
#ifdef PTDSIM_CALIBRATE_BIN
  // the collectives' check passes and catches one corrupted element; GEMMs match a host reference
  CHECK(std::system(PTDSIM_CALIBRATE_BIN " --self-check --precisions bf16 fp16 tf32 fp8") == 0);
#else
  WARN("ptdsim-calibrate was not built here (no CUDA toolkit with nvcc, cuRAND and NCCL)");
#endif
}

TEST_CASE("calibrate: on an H100, GEMM rates lie within 5% of the H100 kernel table", "[gpu]") {
#ifdef PTDSIM_CALIBRATE_BIN
  // The 24 distinct (m, n, k) of calibrate/data/h100/gemm_random_vs_constant.csv (hidden 4096 and
  // 8192, tp 1-8, 4096 tokens), bf16, against the rows of calibrate/data/h100/gemm.csv with the same
  // (m, n, k) (13 of them): the median ratio within 5% and every shape within 25% (three runs on the
  // H100 of 2026-11-27 gave medians 1.009-1.022 and single shapes 0.84-1.22: short batches see the
  // clock where the power limit has it at that moment, in the reference too). The reference is
  // gemm.csv, timed at the clocks a sustained run holds, not the CSV's torch_random_tflops: those are
  // 13-point bursts at the 1980 MHz boost clock, about 10% above what the same GEMMs sustain once the
  // 700 W limit pulls the clock to 1.3-1.5 GHz (docs/calibration.md "What ran on an H100").
  const std::string dir = "ptdsim-calibrate-gpu-test";
  const std::string cmd = std::string(PTDSIM_CALIBRATE_BIN) +
                          " --skip-collectives --skip-contention --hidden 4096 8192 --tp 1 2 4 8 --tokens 4096"
                          " --precisions bf16 --tables " + dir + " > " + dir + ".log";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto measured = csv(dir + "/gemm.csv");
  REQUIRE(measured.size() == 25);  // the header and 24 rows
  if (measured[1].back().find("H100") == std::string::npos) {
    WARN("not an H100 (" + measured[1].back() + "): the reference figures do not apply");
    return;
  }
  std::map<std::tuple<long long, long long, long long>, double> reference;
  for (const auto& r : csv(std::string(PTDSIM_SOURCE_DIR) + "/calibrate/data/h100/gemm.csv")) {
    if (r.size() < 12 || r[0] != "bf16") continue;  // precision,hidden,ffn,heads,kv_heads,tp,op,m,n,k,time_s,tflops
    reference[{std::stoll(r[7]), std::stoll(r[8]), std::stoll(r[9])}] = std::stod(r[11]);
  }
  std::vector<double> ratios;
  for (std::size_t i = 1; i < measured.size(); ++i) {
    const auto& r = measured[i];  // precision,hidden,ffn,heads,kv_heads,tp,op,m,n,k,time_s,tflops,gpu
    const auto key = std::make_tuple(std::stoll(r[7]), std::stoll(r[8]), std::stoll(r[9]));
    if (reference.count(key) == 0) continue;
    ratios.push_back(std::stod(r[11]) / reference[key]);
    INFO(r[6] << " " << r[7] << "x" << r[8] << "x" << r[9] << ": " << r[11] << " TFLOP/s vs " << reference[key]);
    CHECK(std::abs(ratios.back() - 1) < 0.25);
  }
  REQUIRE(ratios.size() == 13);
  std::sort(ratios.begin(), ratios.end());
  CHECK(std::abs(ratios[ratios.size() / 2] - 1) < 0.05);
#else
  WARN("ptdsim-calibrate was not built here (no CUDA toolkit with nvcc, cuRAND and NCCL)");
#endif
}
