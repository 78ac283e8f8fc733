#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "run.hpp"

// Planning a run end to end (issue 16), as a user does it: a Hugging Face config.json and a GPU
// count to a ranked plan with days and cost, the verdict on memory a script can act on, outputs
// that carry their inputs, and the sweep's constraints.
using cli_testing::ptdsim;

namespace {

const std::string kLlama = "tests/data/hf/Meta-Llama-3-70B/config.json";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cli: from a config.json and a GPU count to a ranked plan with days and cost (README)", "[cli][plan]") {
  const std::string plan = (cli_testing::scratch_dir() / "llama.yaml").string();
  // the README's first command
  const auto imported = ptdsim("import hf " + kLlama + " --hardware dgx-h100 --gpus 512 --seq-len 8192 "
                               "--global-batch 1024 --tokens 15T --gpu-hour 2.5 -o " + plan);
  INFO(imported.err);
  REQUIRE(imported.status == 0);
  CHECK(imported.out.empty());  // the file went to -o
  // the README's second command, as JSON
  const auto swept = ptdsim("sweep " + plan + " --objective cost --top 3 --format json");
  INFO(swept.err);
  REQUIRE(swept.status == 0);
  const auto j = nlohmann::json::parse(swept.out);
  CHECK(j["objective"] == "cost");
  REQUIRE(j["results"].size() == 3);
  double previous = 0;
  for (const auto& r : j["results"]) {
    const auto& t = r["to_train"];
    CHECK(t["tokens"].get<double>() == 15e12);
    // 15e12 / (1024 * 8192) steps at the step time; GPU-hours over 512 GPUs; 2.5 per GPU-hour
    const double step = r["time"]["step_s"].get<double>();
    const double seconds = 15e12 / (1024.0 * 8192) * step;
    CHECK(t["days"].get<double>() == Approx(seconds / 86400).epsilon(1e-9));
    CHECK(t["gpu_hours"].get<double>() == Approx(seconds * 512 / 3600).epsilon(1e-9));
    CHECK(t["cost"].get<double>() == Approx(t["gpu_hours"].get<double>() * 2.5).epsilon(1e-12));
    CHECK(t["energy_mwh"].get<double>() > 0);  // dgx-h100 gives tdp_w and idle_w
    CHECK(t["cost"].get<double>() >= previous);  // ranked by cost
    previous = t["cost"].get<double>();
    CHECK(r["memory"]["fits"] == true);
    CHECK(r["model"]["name"] == "Meta-Llama-3-70B");
    CHECK(r["hardware"]["name"] == "dgx-h100");
  }
  SECTION("the table has the days, GPU-hours, MWh and cost columns and the fixed inputs") {
    const auto t = ptdsim("sweep " + plan + " --objective cost --top 3");
    REQUIRE(t.status == 0);
    CHECK(has(t.out, "objective cost"));
    CHECK(has(t.out, "  fixed: bf16, flash attention on"));
    CHECK(has(t.out, "  to train on 15T tokens at 2.5 per GPU-hour"));
    CHECK(has(t.out, "   days   GPU-h     MWh    cost  slower than #1 because"));
  }
}

TEST_CASE("cli: evaluate --require-fit exits 3 when the layout does not fit, after its report", "[cli][plan]") {
  // GPT-3 175B without a pipeline: 1024 GPUs as tp 8 x dp 128 hold every layer on each GPU
  const std::string big = "evaluate scenarios/default.yaml --set parallel.pp=1 --set parallel.dp=~ "
                          "--set training.global_batch=1024";
  const auto plain = ptdsim(big);
  CHECK(plain.status == 0);  // interface.md: a layout that does not fit is still reported, exit 0
  CHECK(plain.out.rfind("!!!", 0) == 0);  // the table opens with the banner
  CHECK(has(plain.out, "!! DOES NOT FIT: peak "));
  CHECK(has(plain.err, "ptdsim: warning: the layout does not fit: peak "));
  const auto required = ptdsim(big + " --require-fit --format json");
  CHECK(required.status == 3);
  const auto j = nlohmann::json::parse(required.out);  // the report is still written whole
  CHECK(j["memory"]["fits"] == false);
  CHECK(j["memory"]["headroom_gib"].get<double>() < 0);
  REQUIRE(j["warnings"].size() == 1);
  CHECK(j["warnings"][0].get<std::string>().rfind("the layout does not fit", 0) == 0);
  const auto csv = ptdsim(big + " --format csv");
  CHECK(has(csv.out, ",false,"));  // memory.fits
  CHECK(ptdsim("evaluate scenarios/default.yaml --require-fit --format json").status == 0);
}

TEST_CASE("cli: evaluate's rows carry their inputs, the version and MFU's peak", "[cli][plan]") {
  const auto r = ptdsim("evaluate scenarios/nemo-llama3-70b-h100-fp8.yaml --set training.framework=nemo-24.07 --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["version"] == ptdsim("--version").out.substr(7, ptdsim("--version").out.size() - 8));
  CHECK(j["model"]["name"] == "llama3-70b");
  CHECK(j["hardware"]["name"] == "dgx-h100");
  CHECK(j["hardware"]["gpu"] == "H100-SXM5-80GB");
  CHECK(j["training"]["precision"] == "fp8");
  CHECK(j["training"]["seq_len"] == 8192);
  CHECK(j["training"]["overlap"]["tp"] == true);  // NeMo's recipe, filled by the framework
  CHECK(j["training"]["framework"] == "nemo-24.07");
  CHECK(j["parallel"]["placement"] == "tp-cp-ep-dp-pp");
  // fp8: MFU against the fp8 peak, 1979 TFLOP/s, and beside it against bf16's 989
  CHECK(j["throughput"]["mfu_peak_tflops"].get<double>() == 1979);
  CHECK(j["throughput"]["mfu_bf16"].get<double>() ==
        Approx(j["throughput"]["mfu"].get<double>() * 1979 / 989).epsilon(1e-12));
  CHECK_FALSE(j.contains("to_train"));  // no token budget: left out, not guessed
  SECTION("CSV has the same columns, the absent ones empty") {
    const auto csv = ptdsim("evaluate scenarios/nemo-llama3-70b-h100-fp8.yaml --format csv");
    const std::string header = csv.out.substr(0, csv.out.find('\n'));
    for (auto col : {"model.name", "hardware.name", "hardware.gpu", "training.precision", "training.seq_len",
                     "training.overlap.tp", "training.framework", "throughput.mfu_peak_tflops", "to_train.days",
                     "to_train.cost", "warnings", "version"})
      CHECK(has(header, col));
  }
  SECTION("bf16: the MFU against the bf16 peak is the MFU itself (issue 38: the CSV cell was empty)") {
    const auto bf16 = nlohmann::json::parse(ptdsim("evaluate scenarios/default.yaml --format json").out);
    CHECK(bf16["throughput"]["mfu_bf16"].get<double>() == bf16["throughput"]["mfu"].get<double>());
    CHECK(bf16["throughput"]["mfu_peak_tflops"].get<double>() == 312);
  }
}

TEST_CASE("cli: --tokens and a price give days, GPU-hours, energy and cost", "[cli][plan]") {
  const auto r = ptdsim("evaluate scenarios/default.yaml --tokens 300B --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  // 300e9 / (1536 * 2048) = 95,367.4 steps
  CHECK(j["to_train"]["tokens"].get<double>() == 300e9);
  CHECK(j["to_train"]["days"].get<double>() ==
        Approx(300e9 / (1536.0 * 2048) * j["time"]["step_s"].get<double>() / 86400).epsilon(1e-9));
  CHECK(j["to_train"].contains("energy_mwh"));
  CHECK_FALSE(j["to_train"].contains("cost"));  // no cost.gpu_hour: absent
  const auto priced = nlohmann::json::parse(
      ptdsim("evaluate scenarios/default.yaml --tokens 300B --set cost.gpu_hour=1.5 --format json").out);
  CHECK(priced["to_train"]["cost"].get<double>() ==
        Approx(priced["to_train"]["gpu_hours"].get<double>() * 1.5).epsilon(1e-12));
  const auto table = ptdsim("evaluate scenarios/default.yaml --tokens 300B");
  CHECK(has(table.out, "To train: 300B tokens (95.4K steps): "));
  CHECK(has(table.out, "cost not known: give cost.gpu_hour (or --gpu-hour 2.5)"));
  // --gpu-hour is the price as --tokens is the budget: the same override, cost.gpu_hour
  const auto flag = ptdsim("evaluate scenarios/default.yaml --tokens 300B --gpu-hour 1.5 --format json");
  REQUIRE(flag.status == 0);
  CHECK(nlohmann::json::parse(flag.out) == priced);
  // and it ranks a sweep by cost: the cheapest layout's cost is its GPU-hours at that price
  const auto sweep = ptdsim("sweep scenarios/default.yaml --tp 8 --pp 8,16 --objective cost --tokens 300B "
                            "--gpu-hour 2 --top 2 --no-scenario-rank --format json");
  INFO(sweep.err);
  REQUIRE(sweep.status == 0);
  const auto best = nlohmann::json::parse(sweep.out)["results"].at(0)["to_train"];
  CHECK(best["cost"].get<double>() == Approx(best["gpu_hours"].get<double>() * 2).epsilon(1e-12));
}

TEST_CASE("cli: the sweep's lists, ranges, searched switches and free memory", "[cli][plan][sweep]") {
  const auto r = ptdsim("sweep scenarios/default.yaml --tp 4,8 --pp 8..16 --search overlap.tp --min-free-gib 20 "
                        "--top 5 --no-scenario-rank --format json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE_FALSE(j["results"].empty());
  bool overlap_seen[2] = {false, false};
  for (const auto& x : j["results"]) {
    const int tp = x["parallel"]["tp"], pp = x["parallel"]["pp"];
    CHECK((tp == 4 || tp == 8));
    CHECK((pp == 8 || pp == 16));  // the divisors of 1024 in 8..16
    CHECK(x["memory"]["headroom_gib"].get<double>() >= 20);
    overlap_seen[x["training"]["overlap"]["tp"].get<bool>()] = true;
  }
  CHECK(overlap_seen[1]);  // TP overlap helps here: the best layouts use it
  const auto table = ptdsim("sweep scenarios/default.yaml --tp 4,8 --pp 8..16 --search overlap.tp --top 3 "
                            "--no-scenario-rank");
  CHECK(has(table.out, "overlap tp searched"));
  CHECK(has(table.out, "switches"));
  CHECK(has(table.out, "ovl-tp+"));
}

TEST_CASE("cli: the new inputs' usage errors exit 2 and say what is wrong", "[cli][plan][errors]") {
  auto bad = [](const std::string& args, const std::string& message) {
    const auto r = ptdsim(args);
    INFO(args << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(has(r.err, message));
  };
  bad("sweep scenarios/default.yaml --tp 4,x", "--tp: a list of positive integers and ranges such as 4,8 or 4..16, got 4,x");
  bad("sweep scenarios/default.yaml --pp 16..4", "--pp: a list of positive integers and ranges");
  bad("sweep scenarios/default.yaml --search overlap.dpp", "--search: overlap.dpp not in");
  bad("sweep scenarios/default.yaml --objective energy", "--objective: error: energy needs a token budget: --tokens 15T or training.tokens");
  bad("sweep scenarios/default.yaml --objective cost --tokens 1T",
      "--objective: error: cost needs a price: --gpu-hour 2.5 or cost.gpu_hour");
  // the price's range is cost.gpu_hour's (above 0, at most a million), and the flag is named
  // and a decimal number as YAML reads it: no hex, no leading space or "+"
  for (const char* price : {"0", "-1", "abc", "2e6", "inf", "nan", "2.5x", "0x10", "+2"})
    bad(std::string("evaluate scenarios/default.yaml --gpu-hour ") + price,
        std::string("--gpu-hour: a price above 0 and at most 1e+06 per GPU-hour, such as 2.5, got ") + price);
  bad("sweep scenarios/default.yaml --gpu-hour 0", "--gpu-hour: a price above 0");
  bad("import hf tests/data/hf/Meta-Llama-3-70B/config.json --gpu-hour 2e6", "--gpu-hour: a price above 0");
  // the imported scenario keeps the price as given (it used to keep six digits: 2.34568)
  const auto priced = ptdsim("import hf tests/data/hf/Meta-Llama-3-70B/config.json --hardware dgx-h100 --gpus 512 "
                             "--seq-len 8192 --global-batch 512 --gpu-hour 2.3456789");
  CHECK(priced.status == 0);
  CHECK(has(priced.out, "gpu_hour: 2.3456789 "));
  bad("evaluate scenarios/default.yaml --tokens 15Q", "--tokens: a count from 1 to 1e+18, such as 15T, 300B or 2.5e12, got 15Q");
  // above training.tokens' range: the flag is named, not the --set it becomes
  bad("evaluate scenarios/default.yaml --tokens 1e30", "--tokens: a count from 1 to 1e+18, such as 15T, 300B or 2.5e12, got 1e30");
  bad("import hf tests/data/bad/hf_unsupported_architecture.json", "architecture 'FalconForCausalLM' is not supported");
  bad("import megatron", "give the Megatron-LM arguments");
}

TEST_CASE("cli: shipped files by name, and the Megatron importer's warning", "[cli][plan]") {
  const auto named = ptdsim("evaluate scenarios/default.yaml --set hardware=dgx-h100 --set model=gpt3-175b --format json");
  INFO(named.err);
  REQUIRE(named.status == 0);
  CHECK(nlohmann::json::parse(named.out)["hardware"]["name"] == "dgx-h100");
  const auto mg = ptdsim("import megatron \"--num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                         "--vocab-size 32000 --lr 3e-4 --save /ckpt\"");
  CHECK(mg.status == 0);
  CHECK(has(mg.out, "layers: 32"));
  CHECK(has(mg.err, "ptdsim: warning: ignored (not read by ptdsim): --lr --save"));
}
