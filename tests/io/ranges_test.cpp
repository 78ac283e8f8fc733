#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../../src/io/schema.hpp"
#include "fixtures.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/load.hpp"

// The valid ranges of src/io/schema.cpp: one row per numeric key, the same in docs/inputs.md, and
// enforced at load with the key's position.
using namespace ptdsim;
using io::detail::Bound;

namespace {

// The documentation's name of a bound's path: precisions and collectives collapse to <precision>
// and <op>.
std::string doc_name(std::string path) {
  auto collapse = [&](const std::string& prefix, const std::string& name, const std::string& as) {
    const std::string from = prefix + name;
    if (path.rfind(from, 0) == 0) path = prefix + as + path.substr(from.size());
  };
  for (int p = 0; p < core::kPrecisionCount; ++p) {
    const std::string name(core::name(static_cast<core::Precision>(p)));
    collapse("hardware.gpu.peak_tflops.", name, "<precision>");
    collapse("hardware.gpu.matmul_efficiency.", name, "<precision>");
  }
  for (int c = 0; c < core::kCollectiveCount; ++c)
    collapse("hardware.collectives.", std::string(core::name(static_cast<core::Collective>(c))), "<op>");
  return path;
}

// As the docs write a bound: whole numbers in full, the rest as %g; "> 0" for an open zero.
std::string text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 0x1p53) return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
std::string min_text(const Bound& b) {
  const bool open = b.kind == Bound::Kind::positive || b.kind == Bound::Kind::fraction;
  return open && b.min == 0 ? "> 0" : text(b.min);
}

// "| `key` | min | max | unit | why |" rows of the "Valid ranges" section: key -> cells.
std::map<std::string, std::vector<std::string>> documented() {
  std::ifstream in(PTDSIM_SOURCE_DIR "/docs/inputs.md");
  std::map<std::string, std::vector<std::string>> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) inside = line == "## Valid ranges";
    if (!inside || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) {
      const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    rows[cells[0].substr(1, cells[0].size() - 2)] = cells;
  }
  return rows;
}

// The first line of the error a --set KEY=VALUE on a small valid scenario gives.
std::string set_error(const std::string& key, const std::string& value) {
  const std::string base = io::test::scenario("cluster: {gpus: 4}\ntraining: {seq_len: 512, global_batch: 8}\n");
  try {
    io::load_scenario_from_string(base, "r.yaml", {io::Override{key, value}});
  } catch (const core::ConfigError& e) {
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("io: every bound of the schema is in docs/inputs.md with the same range", "[io][ranges]") {
  const auto docs = documented();
  REQUIRE(docs.size() >= 50);
  std::map<std::string, bool> used;
  for (const auto& [path, b] : io::detail::all_bounds()) {
    const std::string name = doc_name(path);
    INFO(path << " (docs: " << name << ")");
    auto it = docs.find(name);
    REQUIRE(it != docs.end());
    REQUIRE(it->second.size() >= 4);
    CHECK(it->second[1] == min_text(b));
    CHECK(it->second[2] == text(b.max));
    CHECK(it->second[3] == b.unit);
    used[name] = true;
  }
  for (const auto& [name, cells] : docs) {
    INFO("documented but not in the schema: " << name);
    CHECK(used.count(name) == 1);
  }
}

TEST_CASE("io: a numeric key without a bound is a programming error, not a silent pass", "[io][ranges]") {
  CHECK_THROWS_AS(io::detail::bound_of("model.no_such_key"), std::logic_error);
  // list indices read as []
  CHECK(io::detail::bound_of("parallel.stage_layers[17]").max == 8192);
  CHECK(io::detail::bound_of("hardware.collectives.all_reduce[3].alpha_us").max == 1e6);
}

TEST_CASE("io: a value outside its physical range is refused at its position", "[io][ranges]") {
  // the issue's cases: each once printed inf, -nan or a negative time with exit 0, or ran out of memory
  CHECK(set_error("hardware.network.bandwidth_gbs", "5e-324") ==
        "--set:1:32: error: hardware.network.bandwidth_gbs must be at least 0.001 GB/s, got \"5e-324\"");
  CHECK(set_error("hardware.gpu.peak_tflops.bf16", "5e-324") ==
        "--set:1:31: error: hardware.gpu.peak_tflops.bf16 must be at least 0.001 TFLOP/s, got \"5e-324\"");
  CHECK(set_error("hardware.node.intra.latency_us", "1e308") ==
        "--set:1:32: error: hardware.node.intra.latency_us must be at most 1000000 us, got \"1e308\"");
  CHECK(set_error("model.layers", "268435456") ==
        "--set:1:14: error: model.layers must be at most 8192, got \"268435456\"");
  CHECK(set_error("training.global_batch", "1073741824") ==
        "--set:1:23: error: training.global_batch must be at most 1048576, got \"1073741824\"");
  CHECK(set_error("hardware.gpu.memory_gib", "8e10") ==
        "--set:1:25: error: hardware.gpu.memory_gib must be at most 65536 GiB, got \"8e10\"");
  CHECK(set_error("hardware.gpu.matmul_efficiency", "80") ==
        "--set:1:32: error: hardware.gpu.matmul_efficiency must be a number in (0, 1], got \"80\"");
  CHECK(set_error("hardware.gpu.matmul_efficiency", "0.008") ==
        "--set:1:32: error: hardware.gpu.matmul_efficiency must be at least 0.01, got \"0.008\"");
  // the kind still comes first: a negative rate is not "below the floor"
  CHECK(set_error("hardware.gpu.hbm_gbs", "-1") ==
        "--set:1:22: error: hardware.gpu.hbm_gbs must be a positive number, got \"-1\"");
  // the ends of a range are valid
  CHECK(set_error("hardware.network.latency_us", "1000000") == "(no error)");
  CHECK(set_error("hardware.network.bandwidth_gbs", "0.001") == "(no error)");
}

TEST_CASE("io: pipeline passes beyond what the simulator takes are refused at global_batch", "[io][ranges]") {
  // 4 GPUs, dp 4 (derived): 1048576 / 4 = 262144 micro-batches x pp 1 = 262144 passes: the limit itself
  CHECK(set_error("training.global_batch", "1048576") == "(no error)");
  // pp 2 (dp 2): 524288 micro-batches x 2 chunks = 1048576 passes
  const std::string base = io::test::scenario("cluster: {gpus: 4}\nparallel: {pp: 2}\ntraining: {seq_len: 512, global_batch: 1048576}\n");
  try {
    io::load_scenario_from_string(base, "r.yaml");
    FAIL("no error");
  } catch (const core::ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.substr(0, what.find('\n')) ==
          "r.yaml:25:26: error: 524288 micro-batches x 2 pipeline chunks (pp*vpp) = 1048576 pipeline passes "
          "per step, more than the 262144 the simulator takes");
  }
}

TEST_CASE("io: every numeric key has its bound: inputs writing all of them load", "[io][ranges]") {
  // bound_of throws std::logic_error (caught by the loader's guard as "cannot load") for a numeric
  // key without a row; these inputs write every numeric key the loaders read
  const std::string model = R"(
  layers: 4
  hidden: 256
  heads: 8
  kv_heads: 4
  ffn_hidden: 1024
  vocab: 1000
  max_seq_len: 2048
  moe: {experts: 4, top_k: 2, every: 2, ffn_hidden: 512})";
  const std::string hardware = R"(
  gpu:
    name: T-1
    memory_gib: 16
    hbm_gbs: 1000
    hbm_efficiency: 0.8
    peak_tflops: {bf16: 100, fp16: 100, fp8: 200, fp32: 10, tf32: 50}
    kernel_launch_us: 4
    sms: 100
    comm_sms: 10
    matmul_efficiency:
      - {precision: bf16, m: 1024, n: 1024, k: 1024, efficiency: 0.7}
  node: {gpus: 4, intra: {bandwidth_gbs: 100, latency_us: 2, efficiency: 0.9}}
  network: {bandwidth_gbs: 10, latency_us: 5, efficiency: 0.9, oversubscription: 2}
  collectives:
    all_reduce:
      - {scope: intra, ranks: 4, alpha_us: 10, busbw_gbs: 80, min_bytes: 0, max_bytes: 1048576}
      - {scope: intra, ranks: 4, alpha_us: 20, busbw_gbs: 90, min_bytes: 1048576, max_bytes: .inf})";
  const std::string text = "name: s\nmodel:" + model + "\nhardware:" + hardware + R"(
cluster: {nodes: 1}
parallel: {tp: 2, pp: 2, dp: 1, cp: 1, ep: 1, vpp: 1, zero: 1, stage_layers: [2, 2]}
training: {seq_len: 512, micro_batch: 1, global_batch: 8}
)";
  const auto s = io::load_scenario_from_string(text, "all.yaml");
  CHECK(s.hardware.gpu.comm_sms == 10);
  CHECK(s.hardware.collectives.size() == 2);
  CHECK(s.parallel.stage_layers == std::vector<int>{2, 2});
  // the per-precision form of matmul_efficiency, and a dataset record's measured values
  CHECK(io::load_hardware_from_string(
            "gpu: {name: g, memory_gib: 8, hbm_gbs: 100, peak_tflops: {bf16: 10}, matmul_efficiency: {bf16: 0.5}}\n"
            "node: {gpus: 1, intra: {bandwidth_gbs: 1, latency_us: 1}}\n"
            "network: {bandwidth_gbs: 1, latency_us: 1}\n",
            "hw.yaml")
            .gpu.matmul_efficiency_by_precision[core::index(core::Precision::bf16)] == 0.5);
  const auto records = io::load_dataset_from_string(
      "- name: r\n  source: x\n  not_modelled: \"no\"\n"
      "  measured: {step_s: 1, tflops_per_gpu: 100, peak_memory_gib: 40, tokens_per_s: 1000}\n",
      "d.yaml");
  CHECK(records.front().measured.tokens_per_s == 1000);
}
