#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "ptdsim/core/units.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;

namespace {
core::Report sample() {
  core::Report r;
  r.scenario.name = "toy";
  r.scenario.model.name = "toy-model";
  r.scenario.gpus = 16;
  r.scenario.parallel.tp = 2;
  r.scenario.parallel.pp = 2;
  r.scenario.parallel.dp = 4;
  r.scenario.training.micro_batch = 2;
  r.scenario.training.global_batch = 64;  // m = 64 / (2*4) = 8
  r.params = 1.5e9;
  r.capacity_bytes = 80 * core::kGiB;
  for (int i = 0; i < 2; ++i) {
    core::StageMemory m;
    m.stage = i;
    m.layers = 4;
    m.weights = 1 * core::kGiB;
    m.gradients = 2 * core::kGiB;
    m.optimizer = 3 * core::kGiB;
    m.activations = (4 + i) * core::kGiB;
    m.context = 0.5 * core::kGiB;
    r.stages.push_back(m);
  }
  r.peak_bytes = r.stages[1].total();  // 1+2+3+5+0.5 = 11.5 GiB
  r.peak_stage = 1;
  r.step_s = 2.5;
  r.of(core::CommBucket::dp).bytes = 3e9;
  r.of(core::CommBucket::dp).time_s = 0.4;
  r.of(core::CommBucket::dp).exposed_s = 0.1;
  r.of(core::CommBucket::dp).overlap_ratio = 0.3;
  r.of(core::CommBucket::dp).overlappable = true;
  r.mfu = 0.42;
  return r;
}
}  // namespace

TEST_CASE("io: the evaluate JSON has interface.md's keys and values", "[io][report]") {
  auto j = nlohmann::json::parse(report::report_json(sample()));
  CHECK(j["scenario"] == "toy");
  CHECK(j["parallel"]["num_microbatches"] == 8);  // 64 / (2*4)
  CHECK(j["parallel"]["schedule"] == "1f1b");
  CHECK(j["model"]["params"].get<double>() == 1.5e9);
  CHECK(j["memory"]["peak_gib"].get<double>() == Approx(11.5).epsilon(1e-12));
  CHECK(j["memory"]["capacity_gib"].get<double>() == 80);
  CHECK(j["memory"]["by_stage"].size() == 2);
  CHECK(j["memory"]["by_stage"][1]["activations_gib"].get<double>() == Approx(5.0));
  CHECK(j["memory"]["by_stage"][1]["other_gib"].get<double>() == Approx(0.5));
  CHECK(j["time"]["step_s"].get<double>() == 2.5);
  CHECK(j["time"]["exposed_comm_s"]["dp"].get<double>() == 0.1);
  for (auto k : {"tp", "cp", "ep", "pp", "dp"}) {
    CHECK(j["time"]["exposed_comm_s"].contains(k));
    CHECK(j["communication"]["bytes_per_gpu"].contains(k));
  }
  for (auto k : {"tp", "cp", "ep", "pp", "dp", "zero3", "zero3_backward"})
    CHECK(j["communication"]["overlap_ratio"].contains(k));
  CHECK(j["communication"]["zero3_verdict"] == "");  // no ZeRO-3 in the sample
  for (auto k : {"tokens_per_s", "tflops_per_gpu", "mfu", "hfu"}) CHECK(j["throughput"].contains(k));
  CHECK(j["throughput"]["mfu"].get<double>() == 0.42);
}

TEST_CASE("io: ZeRO-3's per-unit overlap ratios and verdict in the table and the JSON", "[io][report]") {
  auto r = sample();
  r.scenario.parallel.zero = 3;
  r.of(core::CommBucket::cp).overlap_ratio = 0.6;
  r.zero3_overlap_ratio = 0.35;    // the unit's gather over its forward: can hide
  r.zero3_backward_ratio = 1.25;   // its collectives over its backward: cannot all hide
  r.zero3_prefetch = true;
  r.zero3_backward_prefetch = true;
  const std::string verdict = "forward hidden, backward partly exposed (ratio above 1)";
  CHECK(core::zero3_verdict(r) == verdict);
  auto j = nlohmann::json::parse(report::report_json(r));
  CHECK(j["communication"]["overlap_ratio"]["zero3"].get<double>() == 0.35);
  CHECK(j["communication"]["overlap_ratio"]["zero3_backward"].get<double>() == 1.25);
  CHECK(j["communication"]["overlap_ratio"]["cp"].get<double>() == 0.6);
  CHECK(j["communication"]["zero3_verdict"] == verdict);
  CHECK(report::report_table(r).find("  ZeRO-3 per unit: all-gather / forward 0.35, collectives / backward 1.25: " +
                                 verdict + "\n") != std::string::npos);
  r.zero3_prefetch = false;  // no prefetch: each unit waits for its gather whatever the ratio
  CHECK(core::zero3_verdict(r) == "forward exposed (no prefetch), backward partly exposed (ratio above 1)");
}

TEST_CASE("io: CSV header and row have the same columns", "[io][report]") {
  auto count = [](const std::string& line) {
    int n = 1;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  auto r = sample();
  r.scenario.name = "a,\"quoted\" name";  // must be quoted and escaped, not split
  std::string header = report::report_csv_header();
  std::string row = report::report_csv_row(r);
  CHECK(count(header) == count(row));
  CHECK(header.rfind("scenario,parallel.gpus,parallel.tp,", 0) == 0);
  CHECK(row.rfind("\"a,\"\"quoted\"\" name\",16,2,", 0) == 0);
}

TEST_CASE("io: the table shows memory against capacity and a verdict per communication kind",
          "[io][report]") {
  std::string t = report::report_table(sample());
  CHECK(t.find("peak 11.50 GiB on stage 1 of 80.0 GiB: fits, 68.50 GiB headroom") != std::string::npos);
  // dp: 0.1 s of 0.4 s exposed, overlappable -> partly exposed
  CHECK(t.find("partly exposed") != std::string::npos);
  CHECK(t.find("MFU 42.0%") != std::string::npos);
}

TEST_CASE("io: the table and the page show what the host holds, for CPU offload and offloaded activations",
          "[io][report]") {
  core::Report r = sample();
  r.host_bytes_per_gpu = 3 * core::kGiB;
  r.host_bytes_per_node = 24 * core::kGiB;  // 8 GPUs a host
  r.host_capacity_bytes = 2048 * core::kGiB;
  r.host_fits = true;
  CHECK(report::report_table(r).find("host (") == std::string::npos);  // neither: no host line
  r.scenario.training.offload_modules = 3u;
  CHECK(report::report_table(r).find("host (offloaded activations, pinned): 3.00 GiB per GPU, 24.00 GiB per node of "
                                     "2048.0 GiB: fits\n") != std::string::npos);
  r.scenario.training.offload = core::Offload::optimizer;
  r.scenario.training.offload_fraction = 0.5;
  r.host_fits = false;
  CHECK(report::report_table(r).find("host (CPU offload optimizer, fraction 0.5, and offloaded activations): 3.00 GiB "
                                     "per GPU, 24.00 GiB per node of 2048.0 GiB: DOES NOT FIT\n") != std::string::npos);
}

TEST_CASE("io: one layer's time by module: RoPE and MLA's projections with attention, every norm with the norms, the casts apart",
          "[io][report]") {
  core::Report r = sample();
  const auto op = [](core::Operator o, double total_ms) {
    core::OperatorTime t;
    t.op = o;
    t.forward_s = total_ms * 1e-3;
    return t;
  };
  r.compute.layer = {op(core::Operator::input_norm, 1),  op(core::Operator::qkv, 8),      op(core::Operator::qk_norm, 2),
                     op(core::Operator::rope, 4),        op(core::Operator::q_up, 16),    op(core::Operator::latent_norm, 32),
                     op(core::Operator::attention, 64), op(core::Operator::fc1, 128),    op(core::Operator::fp8_cast, 256)};
  // without tables the only casts are the routed experts': MLP 128 + 256 = 384 ms
  CHECK(report::report_table(r).find("attention 92.0 ms, MLP 384.0 ms, norms 35.0 ms;") != std::string::npos);
  // with tables: attention 8 + 4 + 16 + 64 = 92 ms; MLP 128 ms; norms 1 + 2 + 32 = 35 ms; the FP8
  // casts, which feed both modules' GEMMs, 256 ms on their own
  r.scenario.hardware.gpu.kernels = std::make_shared<core::KernelTables>();
  CHECK(report::report_table(r).find("by module (forward + backward): attention 92.0 ms, MLP 128.0 ms, norms 35.0 ms, "
                                     "FP8 casts 256.0 ms;") != std::string::npos);
  r.compute.layer.push_back(op(core::Operator::overhead, 0.5));
  CHECK(report::report_table(r).find("norms 35.0 ms, FP8 casts 256.0 ms, fitted overhead 500.0 us;") != std::string::npos);
}

TEST_CASE("io: the switches say what times the flash-attention core", "[io][report]") {
  auto r = sample();
  auto line = [&] {
    const std::string t = report::report_table(r);
    const auto at = t.find("flash attention ");
    REQUIRE(at != std::string::npos);
    return t.substr(at, t.find(", optimizer", at) - at);
  };
  CHECK(line() == "flash attention on (two GEMMs)");  // no kernel tables: its two GEMMs at the GEMM rate
  auto tables = std::make_shared<core::KernelTables>();
  tables->attention_forward.rate_flops = tables->attention_backward.rate_flops = 500e12;
  r.scenario.hardware.gpu.kernels = tables;
  CHECK(line() == "flash attention on (cudnn)");
  r.scenario.training.attention_kernel = core::AttentionKernel::flash2;
  CHECK(line() == "flash attention on (cudnn, no flash2 tables)");  // evaluate warns of the same
  tables->flash2_forward.rate_flops = tables->flash2_backward.rate_flops = 300e12;
  CHECK(line() == "flash attention on (flash2)");
  r.scenario.training.precision = core::Precision::fp32;  // no table measures fp32
  CHECK(line() == "flash attention on (two GEMMs)");
  r.scenario.training.flash_attention = false;
  CHECK(line() == "flash attention off");
}

TEST_CASE("io: the table and the JSON name what runs each collective", "[io][report]") {
  // GPT-3 175B on 1024 A100 without SP: the TP all-reduce inside a node is NCCL's ring Simple
  // (tests/analytic/collectives_test.cpp works it by hand), the pipeline sends point-to-point
  auto r = sample();
  r.scenario = testing::gpt3_1024();
  r.scenario.parallel.sequence_parallel = false;
  CHECK(report::report_table(r).find("  run by: tp all_reduce ring/simple; pp send_recv p2p; ") != std::string::npos);
  auto j = nlohmann::json::parse(report::report_json(r));
  const auto& rows = j["communication"]["collectives"];
  REQUIRE(rows.size() >= 2);
  CHECK(rows[0]["kind"] == "tp");
  CHECK(rows[0]["op"] == "all_reduce");
  CHECK(rows[0]["ranks"] == 8);
  CHECK(rows[0]["algorithm"] == "ring");
  CHECK(rows[0]["protocol"] == "simple");
  CHECK(rows[1]["algorithm"] == "p2p");
  CHECK_FALSE(rows[1].contains("protocol"));
}

TEST_CASE("io: the FP8 amax reductions' part of the critical path is written under delayed scaling only",
          "[io][report]") {
  // docs/interface.md: time.critical_path.fp8_amax under training.precision fp8 with
  // fp8_recipe delayed (TransformerEngine's amax all-reduces); absent otherwise, like the offload part
  auto r = sample();
  r.critical_path = {core::PathPart{core::PathCause::compute, 0, 2.4},
                     core::PathPart{core::PathCause::fp8_amax, -1, 0.1}};
  r.scenario.training.precision = core::Precision::fp8;
  r.scenario.training.fp8_recipe = core::Fp8Recipe::delayed;
  auto j = nlohmann::json::parse(report::report_json(r));
  REQUIRE(j["time"]["critical_path"].contains("fp8_amax"));
  CHECK(j["time"]["critical_path"]["fp8_amax"].get<double>() == 0.1);
  CHECK(report::report_table(r).find("FP8 amax reductions") != std::string::npos);
  r.scenario.training.fp8_recipe = core::Fp8Recipe::current;
  r.critical_path.pop_back();
  CHECK_FALSE(nlohmann::json::parse(report::report_json(r))["time"]["critical_path"].contains("fp8_amax"));
  r.scenario.training.precision = core::Precision::bf16;
  r.scenario.training.fp8_recipe = core::Fp8Recipe::delayed;
  CHECK_FALSE(nlohmann::json::parse(report::report_json(r))["time"]["critical_path"].contains("fp8_amax"));
}
