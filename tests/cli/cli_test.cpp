#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run.hpp"

// Golden tests of the `ptdsim` executable: exit statuses, output forms and error messages as a
// user or a script sees them. Run from the source tree (ctest's working directory).
namespace fs = std::filesystem;

using cli_testing::ptdsim;
using cli_testing::slurp;

namespace {
// a rank as the sweep's table right-aligns it in its first column
std::string fmt_rank(int r) {
  std::string s = std::to_string(r);
  return std::string(4 - std::min<std::size_t>(4, s.size()), ' ') + s;
}
}  // namespace

TEST_CASE("cli: --version and --help", "[cli]") {
  auto v = ptdsim("--version");
  CHECK(v.status == 0);
  CHECK(v.out == "ptdsim 0.1.0\n");
  auto h = ptdsim("--help");
  CHECK(h.status == 0);
  for (auto cmd : {"evaluate", "sweep", "validate", "calibrate"}) CHECK(h.out.find(cmd) != std::string::npos);
  CHECK(ptdsim("evaluate --help").status == 0);
}

TEST_CASE("cli: bad usage exits 2", "[cli]") {
  CHECK(ptdsim("").status == 2);
  CHECK(ptdsim("frobnicate").status == 2);
  CHECK(ptdsim("evaluate").status == 2);
  CHECK(ptdsim("evaluate scenarios/default.yaml --format xml").status == 2);
  auto gpus = ptdsim("sweep scenarios/default.yaml --gpus 0");
  CHECK(gpus.status == 2);
  CHECK(gpus.err.rfind("--gpus: Value 0 not in range 1 to 4194304\n", 0) == 0);
}

TEST_CASE("cli: evaluate of the default scenario, as JSON", "[cli][evaluate]") {
  auto r = ptdsim("evaluate scenarios/default.yaml --format json");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  // GPT-3 175B: 174.6e9 parameters (formulas.md), within 0.5%
  CHECK(j["model"]["params"].get<double>() == Approx(174.6e9).epsilon(0.005));
  CHECK(j["parallel"]["gpus"] == 1024);
  CHECK(j["parallel"]["dp"] == 8);
  CHECK(j["parallel"]["num_microbatches"] == 192);  // 1536 / (1 * 8)
  CHECK(j["memory"]["by_stage"].size() == 16);
  CHECK(j["memory"]["fits"] == true);
  CHECK(j["time"]["step_s"].get<double>() > 0);
  CHECK(j["time"]["engine"] == "simulation");
}

TEST_CASE("cli: evaluate as CSV and table", "[cli][evaluate]") {
  auto csv = ptdsim("evaluate scenarios/default.yaml --format csv");
  REQUIRE(csv.status == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 2);  // header + one row
  auto table = ptdsim("evaluate scenarios/default.yaml");
  REQUIRE(table.status == 0);
  CHECK(table.out.find("Memory per GPU") != std::string::npos);
  CHECK(table.out.find("bounded by:") != std::string::npos);
}

TEST_CASE("cli: a missing scenario file exits 2 naming the file", "[cli][errors]") {
  auto r = ptdsim("evaluate does/not/exist.yaml");
  CHECK(r.status == 2);
  CHECK(r.err.rfind("does/not/exist.yaml", 0) == 0);
  CHECK(r.err.find("error:") != std::string::npos);
}

TEST_CASE("cli: every malformed input of the corpus exits 2 with file:line:col", "[cli][errors]") {
  const fs::path bad = fs::path(PTDSIM_TEST_DATA) / "bad";
  REQUIRE(fs::exists(bad));
  int files = 0;
  for (const auto& e : fs::directory_iterator(bad)) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    const std::string path = fs::relative(e.path(), PTDSIM_SOURCE_DIR).string();
    auto r = ptdsim("evaluate " + path);
    INFO(path << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    // gcc form: FILE:LINE:COL: error: (the file may be an included one)
    CHECK(r.err.find(": error: ") != std::string::npos);
    CHECK(r.err.find(".yaml:") != std::string::npos);
  }
  CHECK(files >= 30);
}

TEST_CASE("cli: output files are written whole or not at all", "[cli][errors]") {
  const fs::path out = fs::temp_directory_path() / ("ptdsim_cli_out_" + std::to_string(::getpid()) + ".json");
  fs::remove(out);
  auto bad = ptdsim("evaluate scenarios/default.yaml --set parallel.tp=eight -o " + out.string());
  CHECK(bad.status == 2);
  CHECK(bad.err.find("parallel.tp") != std::string::npos);
  CHECK(!fs::exists(out));
  auto good = ptdsim("evaluate scenarios/default.yaml --format json -o " + out.string());
  CHECK(good.status == 0);
  CHECK(good.out.empty());
  CHECK(nlohmann::json::parse(slurp(out))["scenario"].is_string());
  fs::remove(out);
}

TEST_CASE("cli: --set overrides a key by dotted path", "[cli][evaluate]") {
  // the default scenario states dp: 8; `~` makes it derived again
  auto r = ptdsim("evaluate scenarios/default.yaml --format json --set parallel.pp=8 --set parallel.dp=~ "
                  "--set training.micro_batch=2");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["parallel"]["pp"] == 8);
  CHECK(j["parallel"]["dp"] == 16);  // derived: 1024 / (8 * 8)
  CHECK(j["parallel"]["num_microbatches"] == 48);  // 1536 / (2 * 16)
  auto unknown = ptdsim("evaluate scenarios/default.yaml --set parallel.tpp=4");
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("did you mean 'parallel.tp'?") != std::string::npos);
}

TEST_CASE("cli: --trace writes a Chrome trace of the step", "[cli][evaluate]") {
  const fs::path trace = fs::temp_directory_path() / ("ptdsim_trace_" + std::to_string(::getpid()) + ".json");
  auto r = ptdsim("evaluate scenarios/default.yaml --format json --set training.global_batch=64 --trace " +
                  trace.string());
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(slurp(trace));
  REQUIRE(j.contains("traceEvents"));
  CHECK(j["traceEvents"].size() > 100);
  fs::remove(trace);
}

namespace {

// A ranked result as the scenario's layout shows it: the same JSON without the ranking's own keys.
nlohmann::json without_rank(nlohmann::json result) {
  result.erase("rank");
  result.erase("slower_because");
  result.erase("near_ties");
  return result;
}

// The default scenario's layout (tp 8, pp 16, dp 8, ZeRO-1, selective, SP, 1F1B, micro-batch 1)
// pinned in every dimension: a space of one layout.
const char* kPinnedDefault =
    " --set parallel.tp=8 --set parallel.pp=16 --set parallel.dp=8 --set parallel.cp=1 --set parallel.ep=1"
    " --set parallel.vpp=1 --set parallel.zero=1 --set parallel.sequence_parallel=true"
    " --set parallel.schedule=1f1b --set training.micro_batch=1 --set training.recompute=selective";

}  // namespace

TEST_CASE("cli: sweep says why a space is empty, and refuses a ZeRO stage that does not exist", "[cli][sweep]") {
  // tp 3 divides neither the 1024 GPUs: no candidate, and the report names the option and the rule
  // (it used to point at rejection counts it did not print)
  auto r = ptdsim("sweep scenarios/default.yaml --tp 3");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("0 candidates: 0 feasible") != std::string::npos);
  CHECK(r.out.find("no candidate: --tp: no value of 3 divides both the 1024 GPUs and the model's 96 attention heads\n") !=
        std::string::npos);
  CHECK(r.out.find("see the rejection counts") == std::string::npos);
  // ZeRO has stages 0 to 3: 5 is bad usage, exit 2, as the help says
  auto z = ptdsim("sweep scenarios/default.yaml --zero 2..5");
  CHECK(z.status == 2);
  CHECK(z.err.find("ZeRO stages are 0 to 3, got 2..5") != std::string::npos);
  CHECK(z.out.empty());
}

TEST_CASE("cli: sweep ranks the scenario's own layout, as JSON", "[cli][sweep]") {
  auto r = ptdsim("sweep scenarios/default.yaml --max-cp 1 --set parallel.zero=0 --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (auto key : {"gpus", "evaluated", "feasible", "rejected", "simulated", "pruned", "objective", "results"})
    CHECK(j.contains(key));
  const auto& results = j["results"];
  REQUIRE(!results.empty());
  const auto& sl = j["scenario_layout"];
  REQUIRE(sl["rank"].is_number_integer());
  const auto rank = sl["rank"].get<std::size_t>();
  CHECK(rank >= 1);
  CHECK(sl["of"] == j["feasible"]);
  CHECK(sl["rank_at_most"].get<std::size_t>() >= rank);
  CHECK(sl["rank_at_most"].get<std::size_t>() <= sl["of"].get<std::size_t>());
  REQUIRE(sl["rank_is_lower_bound"].is_boolean());
  CHECK(sl["rank_is_lower_bound"] == (sl["rank_at_most"] != sl["rank"]));
  CHECK(sl["slower_because"].is_string());
  // the file's layout, with the --set
  const auto& result = sl["result"];
  CHECK(result["parallel"]["tp"] == 8);
  CHECK(result["parallel"]["pp"] == 16);
  CHECK(result["parallel"]["dp"] == 8);
  CHECK(result["parallel"]["zero"] == 0);
  CHECK(result["time"]["engine"] == "simulation");
  // ranked by the same numbers as the results: never ahead of #1, and where its rank says
  const double step = result["time"]["step_s"].get<double>();
  CHECK(step >= results[0]["time"]["step_s"].get<double>());
  // listed (as a row, or a near-tie riding with one) with the same numbers, or else behind the last
  // row (the rank counts every layout, near-ties too; the rows are --top)
  bool listed = false;
  for (const auto& row : results) {
    listed = listed || without_rank(row) == result;
    for (const auto& tie : row["near_ties"]) listed = listed || without_rank(tie) == result;
  }
  CHECK((listed || step >= results.back()["time"]["step_s"].get<double>()));

  auto capped = ptdsim("sweep scenarios/default.yaml --max-cp 1 --set parallel.zero=0 --format json --rank-limit 0");
  REQUIRE(capped.status == 0);
  const auto c = nlohmann::json::parse(capped.out)["scenario_layout"];
  CHECK(c["simulated"] == 0);
  CHECK(c["rank"].get<std::size_t>() <= rank);
  CHECK(c["rank_at_most"].get<std::size_t>() >= rank);
}

TEST_CASE("cli: a scenario layout pinned in every dimension is the sweep's #1", "[cli][sweep]") {
  auto r = ptdsim(std::string("sweep scenarios/default.yaml --format json") + kPinnedDefault);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["results"].size() == 1);
  const auto& sl = j["scenario_layout"];
  CHECK(sl["rank"] == 1);
  CHECK(sl["of"] == 1);
  CHECK(sl["rank_is_lower_bound"] == false);
  CHECK(sl["slower_because"] == "");
  CHECK(sl["result"] == without_rank(j["results"][0]));
}

TEST_CASE("cli: a scenario layout outside the sweep is not ranked, and says why", "[cli][sweep]") {
  const std::string small = "sweep scenarios/default.yaml --max-cp 1 --max-micro-batch 2 --format json";
  auto other_gpus = ptdsim(small + " --gpus 512");
  REQUIRE(other_gpus.status == 0);
  const auto g = nlohmann::json::parse(other_gpus.out)["scenario_layout"];
  CHECK(g["rank"].is_null());
  CHECK(g["reason"] == "its degrees lay out 1024 GPUs (tp*pp*cp*dp); the sweep lays out 512");
  auto bounded = ptdsim(small + " --max-tp 4");
  REQUIRE(bounded.status == 0);
  const auto t = nlohmann::json::parse(bounded.out)["scenario_layout"];
  CHECK(t["rank"].is_null());
  CHECK(t["reason"] == "tp 8 is outside the space (tp 1 2 4)");
  auto off = ptdsim(small + " --no-scenario-rank");
  REQUIRE(off.status == 0);
  const auto o = nlohmann::json::parse(off.out)["scenario_layout"];
  CHECK(o["rank"].is_null());
  CHECK(o["reason"].get<std::string>().find("--no-scenario-rank") != std::string::npos);
}

TEST_CASE("cli: the scenario layout's line in the table and on CSV's stderr", "[cli][sweep]") {
  const std::string small = "sweep scenarios/default.yaml --max-cp 1 --max-micro-batch 2";
  auto table = ptdsim(small);
  REQUIRE(table.status == 0);
  CHECK(table.out.find("\nscenario's layout: tp8 pp16 dp8 cp1 vpp1 mb1 zero1 selective sp 1f1b: rank ") !=
        std::string::npos);
  auto off = ptdsim(small + " --no-scenario-rank");
  REQUIRE(off.status == 0);
  CHECK(off.out.find("scenario's layout") == std::string::npos);
  auto pinned = ptdsim(std::string("sweep scenarios/default.yaml") + kPinnedDefault);
  REQUIRE(pinned.status == 0);
  CHECK(pinned.out.find("rank 1 of 1 feasible (the best)\n") != std::string::npos);
  auto csv = ptdsim(small + " --format csv");
  REQUIRE(csv.status == 0);
  CHECK(csv.out.find("scenario's layout") == std::string::npos);
  CHECK(csv.err.find("\nscenario's layout: tp8 pp16") != std::string::npos);
}

TEST_CASE("cli: validate reports every record's outcome in table, JSON and CSV", "[cli][validate]") {
  // tests/data/good/dataset_outcomes.yaml: fits (predicted), too-big (GPT-3 175B on 8 GPUs of
  // 16 GiB: predicted, does not fit), bad-layout (pp 3 over 8 GPUs, two stage sizes for three
  // stages: not modelled, with the positions of both problems), declared (not modelled by the
  // dataset's own word)
  const std::string data = "tests/data/good/dataset_outcomes.yaml";
  auto table = ptdsim("validate " + data);
  REQUIRE(table.status == 0);  // the file loads: exit 0 whatever the records' outcomes
  CHECK(table.out.find("does not fit: ") != std::string::npos);
  CHECK(table.out.find("bad-layout                                   holdout not modelled: " + data +
                       ":23:5: tp*cp*pp = 1*1*3 = 3 does not divide the 8 GPUs; " + data +
                       ":23:23: stage_layers has 2 entries but pp is 3\n") != std::string::npos);
  CHECK(table.out.find("declared                                     holdout not modelled: layout not stated\n") !=
        std::string::npos);
  CHECK(table.out.find("\n4 records: 2 predicted (1 does not fit in memory), 2 not modelled\n") != std::string::npos);

  auto json = ptdsim("validate " + data + " --format json");
  REQUIRE(json.status == 0);
  auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["records"].size() == 4);
  CHECK(j["records"][0]["status"] == "predicted");
  CHECK(j["records"][0]["memory"]["fits"] == true);
  CHECK(j["records"][1]["memory"]["fits"] == false);
  CHECK(j["records"][1]["flag"].get<std::string>().rfind("does not fit: ", 0) == 0);
  CHECK(j["records"][2]["status"] == "not modelled");
  CHECK(j["records"][2]["not_modelled"].get<std::string>().find(":23:23: stage_layers has 2 entries") != std::string::npos);
  CHECK(j["records"][3]["not_modelled"] == "layout not stated");
  CHECK(j["counts"] == nlohmann::json{{"records", 4}, {"predicted", 2}, {"not_modelled", 2}, {"does_not_fit", 1}});

  auto csv = ptdsim("validate " + data + " --format csv");
  REQUIRE(csv.status == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 5);  // header + one row per record
  CHECK(csv.out.find("\ndeclared,test fixture,holdout,not modelled,layout not stated,") != std::string::npos);
  CHECK(csv.out.find(",false,does not fit: ") != std::string::npos);
  CHECK(csv.err == "4 records: 2 predicted (1 does not fit in memory), 2 not modelled\n");
}

TEST_CASE("cli: validate --strict exits 2 at the first record that is not predicted", "[cli][validate]") {
  auto r = ptdsim("validate tests/data/good/dataset_outcomes.yaml --strict");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "tests/data/good/dataset_outcomes.yaml:23:5: error: tp*cp*pp = 1*1*3 = 3 does not divide the 8 GPUs\n"
                 "    parallel: {pp: 3, stage_layers: [2, 1]}\n"
                 "    ^\n"
                 "tests/data/good/dataset_outcomes.yaml:23:23: error: stage_layers has 2 entries but pp is 3\n"
                 "    parallel: {pp: 3, stage_layers: [2, 1]}\n"
                 "                      ^\n");
  // the shipped dataset keeps 11 records it cannot model, so it does not pass --strict
  CHECK(ptdsim("validate --strict").status == 2);
}

TEST_CASE("cli: evaluate says which switches came from the framework", "[cli][evaluate]") {
  auto t = ptdsim("evaluate scenarios/nemo-llama3-70b-h100-fp8.yaml --set training.framework=nemo-24.07");
  REQUIRE(t.status == 0);
  CHECK(t.out.find("\n  framework nemo-24.07: its defaults set ") != std::string::npos);
  auto j = ptdsim("evaluate scenarios/default.yaml --format json --set training.framework=megatron-core-0.8");
  REQUIRE(j.status == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["training"]["framework"] == "megatron-core-0.8");
  // default.yaml sets sequence parallel, ZeRO, recompute, FlashAttention and every overlap itself;
  // Megatron-Core's fusions fill the rest
  const auto fusions = nlohmann::json::array({"training.fusion.norm", "training.fusion.activation",
                                              "training.fusion.dropout_add", "training.fusion.rope",
                                              "training.fusion.cross_entropy",
                                              "training.fusion.wgrad_accumulation"});
  CHECK(doc["training"]["resolved_from_framework"] == fusions);
  // without its overlap mapping, Megatron-Core's defaults fill it (no TP or DP overlap, PP overlap)
  auto bare = ptdsim("evaluate scenarios/default.yaml --format json --set training.framework=megatron-core-0.8 "
                     "--set training.overlap={}");
  REQUIRE(bare.status == 0);
  CHECK(nlohmann::json::parse(bare.out)["training"]["resolved_from_framework"] ==
        nlohmann::json::array({"training.overlap.tp", "training.overlap.dp", "training.overlap.pp",
                               "training.fusion.norm", "training.fusion.activation", "training.fusion.dropout_add",
                               "training.fusion.rope", "training.fusion.cross_entropy",
                               "training.fusion.wgrad_accumulation"}));
  auto plain = nlohmann::json::parse(ptdsim("evaluate scenarios/default.yaml --format json").out);
  CHECK(plain["training"]["framework"] == "");
  CHECK(plain["training"]["resolved_from_framework"].empty());
}

TEST_CASE("cli: kernel prints one GEMM's or attention core's time and where it came from", "[cli][kernels]") {
  SECTION("a measured row: 4096 x 6144 x 2048 in bf16 took 137.939 us on the H100 (gemm.csv)") {
    auto r = ptdsim("kernel hardware/dgx-h100.yaml gemm --m 4096 --n 6144 --k 2048 --format json");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"launch_floor", "source", "tflops", "time_s"});  // exactly these (json sorts them)
    CHECK(j["source"] == "measured");
    CHECK(j["time_s"].get<double>() == Approx(137.939e-6).epsilon(1e-6));
    // 2 x 4096 x 6144 x 2048 / 137.939 us = 747.3 TFLOP/s
    CHECK(j["tflops"].get<double>() == Approx(2.0 * 4096 * 6144 * 2048 / 137.939e-6 / 1e12).epsilon(1e-6));
  }
  SECTION("a shape between rows: the model; the table form names it") {
    auto r = ptdsim("kernel hardware/dgx-h100.yaml gemm --m 5000 --n 6144 --k 2048");
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("gemm bf16 5000 x 6144 x 2048 on H100-SXM5-80GB: ", 0) == 0);
    CHECK(r.out.find("(model)") != std::string::npos);
  }
  SECTION("attention: forward and backward, GQA, defaults head_dim 128, batch 1, causal") {
    auto r = ptdsim("kernel hardware/dgx-h100.yaml attention --seq 4096 --heads 32 --kv-heads 8 --format json");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"bwd_s", "fwd_s", "launch_floor", "source"});
    CHECK(j["source"] == "model");
    CHECK(j["fwd_s"].get<double>() > 0);
    CHECK(j["bwd_s"].get<double>() > j["fwd_s"].get<double>());
    // not causal: twice the score FLOPs, so more time
    auto full = nlohmann::json::parse(
        ptdsim("kernel hardware/dgx-h100.yaml attention --seq 4096 --heads 32 --kv-heads 8 --no-causal --format json").out);
    CHECK(full["fwd_s"].get<double>() > j["fwd_s"].get<double>());
    // FlashAttention-2's table: about half cuDNN's rate on the H100 (327.6 against 617.0 TFLOP/s forward)
    auto fa2 = nlohmann::json::parse(
        ptdsim("kernel hardware/dgx-h100.yaml attention --seq 4096 --heads 32 --kv-heads 8 --kernel flash2 --format json").out);
    CHECK(fa2["fwd_s"].get<double>() / j["fwd_s"].get<double>() > 1.5);
    CHECK(fa2["fwd_s"].get<double>() / j["fwd_s"].get<double>() < 2.2);
  }
  SECTION("a kernel shorter than the H100's measured launch (1.35 us) takes the launch, as in a step") {
    auto r = ptdsim("kernel hardware/dgx-h100.yaml attention --seq 1 --heads 1 --format json");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["fwd_s"].get<double>() == Approx(1.35e-6).epsilon(1e-12));  // the model alone: 0.2 ns
    CHECK(j["bwd_s"].get<double>() == Approx(1.35e-6).epsilon(1e-12));
    CHECK(j["launch_floor"] == true);
    CHECK(ptdsim("kernel hardware/dgx-h100.yaml attention --seq 1 --heads 1").out.find(
              "(model; at least one launch: gpu.kernel_launch_us)") != std::string::npos);
    // a GEMM the tables time is above it (their model's own floor is 19 us): not raised
    const auto g = nlohmann::json::parse(ptdsim("kernel hardware/dgx-h100.yaml gemm --m 8 --n 8 --k 8 --format json").out);
    CHECK(g["launch_floor"] == false);
    CHECK(g["time_s"].get<double>() > 19e-6);
    // fp32 is timed by the scalar efficiency, which takes no floor: 2 x 8^3 FLOPs in nanoseconds
    const auto w = nlohmann::json::parse(
        ptdsim("kernel hardware/dgx-h100.yaml gemm --m 8 --n 8 --k 8 --precision fp32 --format json").out);
    CHECK(w["source"] == "scalar-efficiency");
    CHECK(w["launch_floor"] == false);
    CHECK(w["time_s"].get<double>() < 1e-6);
  }
  SECTION("hardware without kernel tables: the scalar efficiency") {
    auto r = ptdsim("kernel hardware/dgx-a100-80g.yaml gemm --m 4096 --n 4096 --k 4096 --format json");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["source"] == "scalar-efficiency");
    // 2 x 4096^3 / (312 TFLOP/s x 0.705) = 624.8 us
    CHECK(j["time_s"].get<double>() == Approx(2.0 * 4096 * 4096 * 4096 / (312e12 * 0.705)).epsilon(1e-9));
  }
  SECTION("bad usage exits 2") {
    CHECK(ptdsim("kernel hardware/dgx-h100.yaml gemm --m 0 --n 1 --k 1").status == 2);
    CHECK(ptdsim("kernel hardware/dgx-h100.yaml gemm --m 1 --n 1").status == 2);
    CHECK(ptdsim("kernel hardware/dgx-h100.yaml attention --seq 1024 --heads 8 --precision fp4").status == 2);
    CHECK(ptdsim("kernel hardware/dgx-h100.yaml attention --seq 1024 --heads 8 --kernel flash3").status == 2);
    // key/value heads that do not divide the query heads (as a model file's kv_heads must)
    auto gqa = ptdsim("kernel hardware/dgx-h100.yaml attention --seq 1024 --heads 7 --kv-heads 3");
    CHECK(gqa.status == 2);
    CHECK(gqa.err.find("--kv-heads: 3 does not divide --heads 7") != std::string::npos);
    CHECK(gqa.out.empty());
    CHECK(ptdsim("kernel hardware/dgx-h100.yaml attention --seq 1024 --heads 8 --kv-heads 16").status == 2);
    // a precision the hardware file gives no peak rate at (the A100 has no FP8): refused as a scenario's
    // training.precision is, where it used to print 0 us and 0 TFLOP/s
    auto fp8 = ptdsim("kernel hardware/dgx-a100-80g.yaml gemm --m 1024 --n 1024 --k 1024 --precision fp8");
    CHECK(fp8.status == 2);
    CHECK(fp8.err.find("--precision: fp8 has no peak rate on A100-SXM4-80GB (hardware/dgx-a100-80g.yaml)") !=
          std::string::npos);
    CHECK(fp8.out.empty());
    CHECK(ptdsim("kernel hardware/dgx-a100-80g.yaml attention --seq 1024 --heads 8 --precision fp8").status == 2);
    // fp4: a peak rate only, on a GPU that has one too (B200: 9,000 TFLOP/s)
    auto fp4 = ptdsim("kernel hardware/dgx-b200.yaml gemm --m 8192 --n 8192 --k 8192 --precision fp4");
    CHECK(fp4.status == 2);
    CHECK(fp4.err.find("--precision: fp4 is a peak rate only") != std::string::npos);
  }
  SECTION("every precision the tables spell is a choice; the A100's tf32 is timed") {
    auto r = ptdsim("kernel hardware/dgx-a100-80g.yaml gemm --m 4096 --n 4096 --k 4096 --precision tf32 --format json");
    REQUIRE(r.status == 0);
    // 2 x 4096^3 / (156 TFLOP/s x 0.8): the file's tf32 peak; its efficiencies name bf16 and fp16
    // only, so tf32 takes gpu.matmul_efficiency's default (docs/inputs.md)
    CHECK(nlohmann::json::parse(r.out)["time_s"].get<double>() ==
          Approx(2.0 * 4096 * 4096 * 4096 / (156e12 * 0.8)).epsilon(1e-9));
  }
}

TEST_CASE("cli: import-kernels rebuilds the shipped H100 hardware file byte for byte", "[cli][kernels]") {
  const fs::path out = fs::temp_directory_path() / ("ptdsim_import_kernels_" + std::to_string(::getpid()) + ".yaml");
  auto r = ptdsim("calibrate import-kernels calibrate/data/h100 --base hardware/dgx-h100.yaml -o " + out.string());
  REQUIRE(r.status == 0);
  CHECK(r.out.find("gemm bf16: ") != std::string::npos);
  CHECK(r.out.find("contention: share = 1.658 x blocks / 132 SMs") != std::string::npos);
  CHECK(slurp(out) == slurp("hardware/dgx-h100.yaml"));
  fs::remove(out);
}

TEST_CASE("cli: import-kernels refuses a malformed table at its file:line:col with exit 2", "[cli][kernels]") {
  const fs::path dir = fs::temp_directory_path() / ("ptdsim_bad_tables_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file("tests/data/bad/csv_gemm__not_a_number.csv", dir / "gemm.csv", fs::copy_options::overwrite_existing);
  auto r = ptdsim("calibrate import-kernels " + dir.string() + " --sms 132 -o " + (dir / "out.yaml").string());
  CHECK(r.status == 2);
  CHECK(r.err.find((dir / "gemm.csv").string() + ":3:20: error: time_s must be a positive number, got 'fast'") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.yaml"));  // nothing half-written
  // a directory without tables
  fs::remove(dir / "gemm.csv");
  auto empty = ptdsim("calibrate import-kernels " + dir.string() + " --sms 132");
  CHECK(empty.status == 2);
  CHECK(empty.err.find("no kernel tables here") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cli: evaluate's JSON says where the compute goes", "[cli][kernels]") {
  auto r = ptdsim("evaluate scenarios/nemo-gpt3-175b-h100-fp8.yaml --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& layer = j["compute"]["layer"];
  REQUIRE(layer.is_array());
  CHECK(layer[1]["name"] == "qkv");
  CHECK(layer[1]["kind"] == "gemm");
  // 2048 tokens x 2 micro-batch, (12288 + 2 x 12288) / tp 4, 12288
  CHECK(layer[1]["shape"]["m"] == 4096);
  CHECK(layer[1]["shape"]["n"] == 9216);
  CHECK(layer[1]["shape"]["k"] == 12288);
  for (const auto& o : layer) {
    CHECK(o["forward_s"].get<double>() >= 0);
    CHECK(o.contains("backward_s"));
    CHECK(o.contains("source"));
  }
  double total = 0;
  for (const auto& [k, v] : j["compute"]["share"].items()) total += v.get<double>();
  CHECK(total == Approx(1.0).epsilon(1e-9));
  auto t = ptdsim("evaluate scenarios/nemo-gpt3-175b-h100-fp8.yaml");
  CHECK(t.out.find("Compute by kind (whole model, one step, recomputation included)\n  gemm ") != std::string::npos);
}

TEST_CASE("cli: the OCI Ring log imports as rows with algorithm: ring, used only where ring runs", "[cli][calibrate][algo]") {
  const fs::path out = fs::temp_directory_path() / ("ptdsim_ring_" + std::to_string(::getpid()) + ".yaml");
  auto r = ptdsim("calibrate import-nccl-tests tests/data/nccl-tests/oci-a100-2x8-roce-allreduce-ring-newfmt.txt "
                  "--base hardware/dgx-a100-80g.yaml -o " + out.string());
  REQUIRE(r.status == 0);
  CHECK(r.out.find("forced to algorithm ring (used only where NCCL's model picks it)") != std::string::npos);
  // one piece through the fixture's two sizes (docs/calibration.md's table: 269.3 us, 191.7 GB/s)
  CHECK(slurp(out).find("    - {scope: inter, ranks: 16, gpu: \"NVIDIA A100-SXM4-40GB\", algorithm: ring, alpha_us: 269.333, "
                        "busbw_gbs: 191.711, min_bytes: 0}\n") != std::string::npos);
  // the default scenario with ZeRO 0 all-reduces its gradients over dp 8 (one GPU a node); NCCL's
  // model runs the ring there, so the row times it (its report names the ring, protocol
  // "calibrated"); forced to tree as NCCL_ALGO=Tree would, the row is passed over, with a warning
  const std::string run = "evaluate scenarios/default.yaml --format json --set parallel.zero=0 --set hardware=" + out.string();
  auto dp_pick = [](const std::string& json) {
    const auto j = nlohmann::json::parse(json);
    for (const auto& c : j["communication"]["collectives"])
      if (c["kind"] == "dp") return c["algorithm"].get<std::string>() + "/" + c["protocol"].get<std::string>();
    return std::string("none");
  };
  auto ring = ptdsim(run);
  REQUIRE(ring.status == 0);
  CHECK(dp_pick(ring.out) == "ring/calibrated");
  CHECK(ring.err.find("are not used") == std::string::npos);
  auto tree = ptdsim(run + " --set training.nccl.algo=tree");
  REQUIRE(tree.status == 0);
  CHECK(dp_pick(tree.out) == "tree/simple");
  CHECK(tree.err.find("all_reduce over the dp group (8 ranks, 1 per node, inter) at 5.853 GB: the calibrated rows "
                      "measured on 16 ranks, NVIDIA A100-SXM4-40GB with NCCL_ALGO ring are not used, because NCCL's "
                      "model runs tree/simple there, which they did not measure; NCCL's model times it") !=
        std::string::npos);
  fs::remove(out);
}

TEST_CASE("cli: the choices of import --precision and calibrate import-nccl-tests --op come from one table each",
          "[cli]") {
  // fp4 is a peak rate only: no scenario trains at it, so import does not write one
  const std::string hf = "import hf tests/data/hf/Meta-Llama-3-70B/config.json --hardware dgx-h100 --gpus 512 "
                         "--seq-len 8192 --global-batch 512 --precision ";
  auto fp4 = ptdsim(hf + "fp4");
  CHECK(fp4.status == 2);
  CHECK(fp4.err.find("--precision: fp4 not in {bf16,fp16,fp8,fp32,tf32}") != std::string::npos);
  CHECK(fp4.out.empty());
  CHECK(ptdsim(hf + "fp8").status == 0);
  // nccl-tests' own names ("alltoall") and ptdsim's ("all_to_all") name the same collective
  const std::string log = "calibrate import-nccl-tests tests/data/nccl-tests/autodl-2x2080ti-pcie-noP2P-alltoall.txt --op ";
  auto nccl = ptdsim(log + "alltoall");
  CHECK(nccl.status == 0);
  CHECK(nccl.out.find("all_to_all intra, 2 ranks") != std::string::npos);
  CHECK(ptdsim(log + "all_to_all").out == nccl.out);
  auto wrong = ptdsim(log + "all_reduce");
  CHECK(wrong.status == 2);
  CHECK(wrong.err.find("the collective given (all_reduce) contradicts the log, which ran alltoall_perf") !=
        std::string::npos);
  auto unknown = ptdsim(log + "allreduce_perf");
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("not in {all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,send_recv,"
                         "alltoall,sendrecv}") != std::string::npos);
}

// Issue 38: the sweep's answer ready to run. `--emit` writes rank N as a scenario; `evaluate` on it
// gives the ranked step time to the last bit (JSON writes every double exactly); the model and
// hardware paths are made absolute. A --set given to the sweep is carried into the file. `--format csv --top 5` has a header and 5 ranked rows, rank first.
TEST_CASE("cli: sweep --emit writes a scenario evaluate reproduces exactly, and CSV honours --top", "[cli][sweep][emit]") {
  const auto dir = cli_testing::scratch_dir();
  const std::string small = "sweep scenarios/default.yaml --max-cp 1 --max-micro-batch 1 --top 5 "
                            "--set training.recompute=full";
  const auto json = ptdsim(small + " --format json");
  REQUIRE(json.status == 0);
  const auto ranked = nlohmann::json::parse(json.out)["results"];
  REQUIRE(ranked.size() == 5);
  for (int rank : {1, 3}) {
    const std::string file = (dir / ("emit" + std::to_string(rank) + ".yaml")).string();
    const auto e = ptdsim(small + " --emit " + file + " --emit-rank " + std::to_string(rank) + " --format csv");
    REQUIRE(e.status == 0);
    // the CSV: a header and the top 5, rank 1 to 5, each row's near-ties after it under its rank
    // (docs/planner.md, `--top`): here rows 1 and 5 have two each (vpp 12 and 14 beside 24)
    std::istringstream rows(e.out);
    std::vector<std::string> lines;
    for (std::string l; std::getline(rows, l);) lines.push_back(l);
    REQUIRE(lines.size() == 10);
    CHECK(lines[0].rfind("rank,index,status,", 0) == 0);
    int rows_ranked = 0;
    std::string rank_of_row;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const std::string rank = lines[i].substr(0, lines[i].find(','));
      if (lines[i].find(",ranked,") != std::string::npos) {
        CHECK(rank == std::to_string(++rows_ranked));
        rank_of_row = rank;
      } else {
        CHECK(lines[i].find(",near_tie,") != std::string::npos);
        CHECK(rank == rank_of_row);
      }
    }
    CHECK(rows_ranked == 5);
    const auto ev = ptdsim("evaluate " + file + " --format json");
    REQUIRE(ev.status == 0);
    const auto j = nlohmann::json::parse(ev.out);
    const auto& want = ranked[static_cast<std::size_t>(rank - 1)];
    CHECK(j["time"]["step_s"].get<double>() == want["time"]["step_s"].get<double>());
    CHECK(j["parallel"]["tp"] == want["parallel"]["tp"]);
    CHECK(j["parallel"]["vpp"] == want["parallel"]["vpp"]);
    CHECK(j["parallel"]["recompute"] == want["parallel"]["recompute"]);
    // the model and hardware by absolute path: the file reads the same from any directory
    const std::string text = slurp(file);
    CHECK(text.find("\nmodel: /") != std::string::npos);
    CHECK(text.find("\nhardware: /") != std::string::npos);
    CHECK(text.find("recompute: full") != std::string::npos);
  }
  // a rank the sweep did not rank: exit 2 naming the option, no file
  const std::string none = (dir / "none.yaml").string();
  const auto bad = ptdsim(small + " --emit " + none + " --emit-rank 6");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--emit-rank") != std::string::npos);
  CHECK_FALSE(fs::exists(none));
}

// Issue 38 item 7: CPU offload in the sweep's space. With the memory objective the smallest peak is
// ZeRO-Infinity's (the parameter shard on the host); --emit writes the mode and evaluate reproduces
// the ranked step exactly. Hardware without a host refuses the search.
TEST_CASE("cli: sweep --search offload ranks offloaded layouts and --emit writes the mode", "[cli][sweep][offload]") {
  const auto dir = cli_testing::scratch_dir();
  const std::string file = (dir / "offload.yaml").string();
  // (without the scenario layout's rank, whose 64 simulations were most of this test's time under
  // the sanitizers and which it does not read)
  const std::string sweep = "sweep scenarios/default.yaml --max-cp 1 --max-micro-batch 1 --top 3 --search offload "
                            "--objective memory --no-scenario-rank";
  const auto json = ptdsim(sweep + " --format json --emit " + file);
  REQUIRE(json.status == 0);
  const auto best = nlohmann::json::parse(json.out)["results"][0];
  CHECK(best["training"]["offload"] == "optimizer_params");
  CHECK(best["parallel"]["zero"] == 3);
  CHECK(best["memory"]["host_fits"] == true);
  CHECK(slurp(file).find("offload: optimizer_params") != std::string::npos);
  const auto ev = ptdsim("evaluate " + file + " --format json");
  REQUIRE(ev.status == 0);
  const auto j = nlohmann::json::parse(ev.out);
  CHECK(j["time"]["step_s"].get<double>() == best["time"]["step_s"].get<double>());
  CHECK(j["time"]["critical_path"]["offload"].get<double>() == best["time"]["critical_path"]["offload"].get<double>());
  const auto table = ptdsim(sweep);
  CHECK(table.out.find("offload-optimizer_params") != std::string::npos);
  const auto no_host = ptdsim(sweep + " --set hardware=hgx-h800");
  CHECK(no_host.status == 2);
  CHECK(no_host.err.find("offload needs the hardware's host") != std::string::npos);
}

// Issue 38: a model or hardware file where a scenario goes says so in one message (it gave an
// "unknown key" per key of the model: 13 for GPT-3), exit 2.
TEST_CASE("cli: evaluate on a model or hardware file names what the file is", "[cli][evaluate]") {
  const auto m = ptdsim("evaluate models/gpt3-175b.yaml");
  CHECK(m.status == 2);
  CHECK(m.err == "models/gpt3-175b.yaml: error: this is a model file, not a scenario: a scenario "
                 "names it (model: models/gpt3-175b.yaml) beside hardware, cluster, parallel and training "
                 "(docs/inputs.md \"Scenario file\"); `ptdsim import` can write one\n");
  const auto h = ptdsim("sweep hardware/dgx-h100.yaml");
  CHECK(h.status == 2);
  CHECK(h.err.find("this is a hardware file, not a scenario") != std::string::npos);
  CHECK(h.err.find("unknown key") == std::string::npos);
}

// Near-ties in the sweep: layouts that differ from a row above in vpp or micro-batch alone, within
// 0.5% of its step, ride with that row ("also vpp 16 (+0.14%)") and do not count toward --top, so
// --top 8 gives eight rows. Checked against the JSON of the same sweep, where each row carries them.
TEST_CASE("cli: sweep folds near-ties that differ only in vpp or micro-batch", "[cli][sweep]") {
  const std::string small = "sweep scenarios/default.yaml --max-cp 1 --max-micro-batch 2 --top 8";
  const auto table = ptdsim(small);
  const auto json = ptdsim(small + " --format json");
  REQUIRE(table.status == 0);
  REQUIRE(json.status == 0);
  const auto results = nlohmann::json::parse(json.out)["results"];
  REQUIRE(results.size() == 8);
  int folded = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& row = results[i];
    CHECK(row["rank"] == static_cast<int>(i + 1));
    std::string line = "\n";
    line += fmt_rank(static_cast<int>(i + 1));
    line += " ";
    CHECK(table.out.find(line) != std::string::npos);  // its row
    const auto& b = row["parallel"];
    const double dj = row["time"]["step_s"].get<double>();
    for (const auto& tie : row["near_ties"]) {
      ++folded;
      const auto& a = tie["parallel"];
      const double ds = tie["time"]["step_s"].get<double>();
      CHECK(tie["rank"] == row["rank"]);
      CHECK((a["tp"] == b["tp"] && a["pp"] == b["pp"] && a["cp"] == b["cp"] && a["zero"] == b["zero"] &&
             a["recompute"] == b["recompute"] && (a["vpp"] != b["vpp"]) != (a["micro_batch"] != b["micro_batch"]) &&
             std::abs(ds - dj) <= 0.005 * dj));
      const bool vpp = a["vpp"] != b["vpp"];
      CHECK(table.out.find(std::string(vpp ? "vpp " : "mb ") +
                           std::to_string((vpp ? a["vpp"] : a["micro_batch"]).get<int>()) + " (") != std::string::npos);
    }
  }
  CHECK(folded > 0);  // this space has some
  std::string note = "(";
  note += std::to_string(folded);
  note += " near-tie";
  CHECK(table.out.find(note) != std::string::npos);
}

TEST_CASE("cli: the sweep says which tiers the best layout's groups cross, and what a tier costs", "[cli][sweep][topology]") {
  // GPT-3 175B (96 heads: tp 16 divides them) on 576 GPUs, tp 8 or 16, pp 4 (dp 18 or 9; batch 1152
  // divides by both). On DGX H100 (8 GPUs a node) tp 16 spans two nodes, so every tp-16 layout's TP
  // all-reduces cross the NVLink domain and the sweep must say so against the best (tp 8); on a GB200
  // NVL72 rack (72 GPUs a node) tp 16 fits the domain and no TP sentence appears.
  const std::string space =
      " --gpus 576 --set training.global_batch=1152 --tp 8,16 --pp 4 --cp 1 --micro-batch 1 --zero 1 --max-vpp 1"
      " --top 40";
  auto dgx = ptdsim("sweep scenarios/default.yaml --set hardware=dgx-h100" + space);
  REQUIRE(dgx.status == 0);
  CHECK(dgx.out.find("best's groups: tp 8 inside one NVLink domain;") != std::string::npos);
  const auto at = dgx.out.find("'s tp 16 crosses the NVLink domain where #1's tp 8 does not: +");
  REQUIRE(at != std::string::npos);
  CHECK(dgx.out.find(" ms of exposed TP comm per step (+", at) != std::string::npos);
  auto nvl = ptdsim("sweep scenarios/default.yaml --set hardware=gb200-nvl72" + space);
  REQUIRE(nvl.status == 0);
  CHECK(nvl.out.find("best's groups: tp") != std::string::npos);
  CHECK(nvl.out.find("tp 16 crosses") == std::string::npos);

  // JSON: the same, per group, with the tier names of the hardware file (dgx-h100: leaf, spine, core)
  auto js = ptdsim("sweep scenarios/default.yaml --set hardware=dgx-h100 --format json" + space);
  REQUIRE(js.status == 0);
  const auto j = nlohmann::json::parse(js.out);
  const auto& groups = j.at("topology").at("groups");
  REQUIRE(groups.size() == 5);
  CHECK(groups[0].at("group") == "tp");
  CHECK(groups[0].at("crosses").empty());
  // dp 18 of tp 8: 18 nodes, all under one 32-node leaf group (the SuperPOD's scalable unit)
  CHECK(groups[4].at("group") == "dp");
  CHECK(groups[4].at("nodes") == 18);
  CHECK(groups[4].at("crosses") == nlohmann::json::array({"NVLink domain", "leaf"}));
  bool tp_line = false;
  for (const auto& d : j.at("topology").at("differences"))
    tp_line = tp_line || d.get<std::string>().find("tp 16 crosses the NVLink domain") != std::string::npos;
  CHECK(tp_line);
}

TEST_CASE("cli: gemm_fp8.csv goes through import-kernels into the file, and kernel --fp8-kernel reads it",
          "[cli][kernels][fp8]") {
  // the H100's fp8 rows (gemm.csv) and, as measure_kernels.py writes them, the same shapes on a
  // fast-accumulation kernel 1.15 times faster
  const fs::path dir = cli_testing::scratch_dir() / "fp8-kernels";
  fs::create_directories(dir);
  std::ifstream in(std::string(PTDSIM_SOURCE_DIR) + "/calibrate/data/h100/gemm.csv");
  std::ofstream gemm(dir / "gemm.csv"), fp8(dir / "gemm_fp8.csv");
  fp8 << "kernel,m,n,k,time_s,tflops,gpu\n";
  std::string line;
  std::getline(in, line);
  gemm << line << "\n";
  const auto cols = [](const std::string& l) {
    std::vector<std::string> v;
    std::stringstream ss(l);
    for (std::string c; std::getline(ss, c, ',');) v.push_back(c);
    return v;
  };
  while (std::getline(in, line)) {
    gemm << line << "\n";
    const auto c = cols(line);  // precision,hidden,ffn,heads,kv_heads,tp,op,m,n,k,time_s,...
    if (c[0] == "fp8")
      fp8 << "fast_accum," << c[7] << "," << c[8] << "," << c[9] << "," << std::stod(c[10]) / 1.15 << ",0,H\n";
  }
  gemm.close();
  fp8.close();
  const std::string hw = (dir / "hw.yaml").string();
  auto imp = ptdsim("calibrate import-kernels " + dir.string() + " --base hardware/dgx-h100.yaml -o " + hw);
  REQUIRE(imp.status == 0);
  CHECK(imp.out.find("gemm fp8 fast_accum: ") != std::string::npos);
  const auto fast = nlohmann::json::parse(
      ptdsim("kernel " + hw + " gemm --m 8192 --n 8192 --k 8192 --precision fp8 --fp8-kernel fast_accum --format json").out);
  const auto split = nlohmann::json::parse(
      ptdsim("kernel " + hw + " gemm --m 8192 --n 8192 --k 8192 --precision fp8 --format json").out);
  CHECK(fast["source"] == "model");
  CHECK(split["time_s"].get<double>() / fast["time_s"].get<double>() == Approx(1.15).epsilon(0.05));
  // a kernel the file does not model: the tensorwise time, and a warning that says so
  auto row = ptdsim("kernel " + hw + " gemm --m 8192 --n 8192 --k 8192 --precision fp8 --fp8-kernel rowwise --format json");
  REQUIRE(row.status == 0);
  CHECK(nlohmann::json::parse(row.out)["time_s"] == split["time_s"]);
  CHECK(row.err.find("no gpu.kernels.gemm.fp8_kernels.rowwise: timed as the tensorwise kernel") != std::string::npos);
  // an FP8 kernel needs --precision fp8, and an unknown one is refused
  CHECK(ptdsim("kernel " + hw + " gemm --m 8 --n 8 --k 8 --fp8-kernel fast_accum").status == 2);
  CHECK(ptdsim("kernel " + hw + " gemm --m 8 --n 8 --k 8 --precision fp8 --fp8-kernel fastaccum").status == 2);
}
