#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run.hpp"

// Issue 39 against the executable: numeric flags and degree lists, unknown commands and options,
// YAML syntax before schema, names in text output, formula-leading CSV cells and a run's outputs
// written all or none. Each case failed before the commits.
using cli_testing::ptdsim;
using cli_testing::Run;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

fs::path fresh(const std::string& name) {
  const fs::path d = cli_testing::scratch_dir() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string numbers(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) {
    if (i > 1) out += ',';
    out += std::to_string(i);
  }
  return out;
}

}  // namespace

TEST_CASE("cli: degree lists and numeric flags are checked", "[cli][guard][numbers]") {
  SECTION("a degree of 0 is refused (before: 0 candidates, exit 0)") {
    for (const std::string flag : {"--tp", "--pp", "--cp", "--ep", "--dp", "--vpp", "--micro-batch"}) {
      const Run r = ptdsim("sweep scenarios/default.yaml " + flag + " 0");
      CHECK(r.status == 2);
      CHECK(has(r.err, flag + ": a list of positive integers and ranges"));
    }
    // ZeRO stage 0 is a stage
    CHECK(ptdsim("sweep scenarios/default.yaml --zero 0 --max-cp 1 --max-micro-batch 1 --top 1").status == 0);
  }
  SECTION("NaN and infinity fail the range checks (before: accepted)") {
    for (const std::string v : {"nan", "inf", "-inf", "1e999"}) {
      const Run a = ptdsim("sweep scenarios/default.yaml --min-free-gib " + v);
      CHECK(a.status == 2);
      CHECK(has(a.err, "--min-free-gib: a number from 0 to 1e+06, got " + v));
      const Run b = ptdsim("calibrate import-nccl-tests tests/data/nccl-tests/autodl-2x2080ti-pcie-noP2P-allreduce.txt -o /dev/null --target-error " + v);
      CHECK(b.status == 2);
      CHECK(has(b.err, "--target-error: a number from 0 to 1, got " + v));
    }
  }
  SECTION("a 20,000-value list costs what its distinct admitted values cost") {
    // --micro-batch 1..20000 as a list: before, 20,000 values each multiplied the space (1.4 ms a
    // value, over 60 s); now the batch's divisors it admits, the same space as the range
    const std::string base = "sweep scenarios/default.yaml --max-cp 1 --top 3 --no-scenario-rank --format json ";
    const Run list = ptdsim(base + "--micro-batch " + numbers(20000));
    const Run range = ptdsim(base + "--micro-batch 1..20000");
    REQUIRE(list.status == 0);
    REQUIRE(range.status == 0);
    CHECK(nlohmann::json::parse(list.out)["evaluated"] == nlohmann::json::parse(range.out)["evaluated"]);
    // the dp filter too (a binary search per candidate, not a scan of 20,000 values)
    const auto t0 = std::chrono::steady_clock::now();
    const Run dp = ptdsim(base + "--dp " + numbers(20000));
    const double dp_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto t1 = std::chrono::steady_clock::now();
    const Run plain = ptdsim(base);
    const double plain_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    REQUIRE(dp.status == 0);
    CHECK(nlohmann::json::parse(dp.out)["evaluated"] == nlohmann::json::parse(plain.out)["evaluated"]);
    // before: 36 s against 1.5 s on a loaded 2-core machine; a generous bound for noise
    CHECK(dp_s < 3 * plain_s + 1);
  }
}

TEST_CASE("cli: unknown commands and options are named with a did-you-mean", "[cli][guard][commands]") {
  // before: "A subcommand is required" for all three
  CHECK(ptdsim("evalute scenarios/default.yaml").err.rfind(
            "ptdsim: error: unknown command 'evalute': did you mean 'evaluate'?", 0) == 0);
  CHECK(ptdsim("frobnicate").err.rfind("ptdsim: error: unknown command 'frobnicate' (commands: evaluate, sweep", 0) == 0);
  CHECK(ptdsim("--frob").err.rfind("ptdsim: error: unknown option '--frob'", 0) == 0);
  CHECK(ptdsim("import hff x.json").err.rfind("ptdsim import: error: unknown command 'hff': did you mean 'hf'?", 0) == 0);
  // before: "The following arguments were not expected: json --frmat"
  const Run r = ptdsim("evaluate scenarios/default.yaml --frmat json");
  CHECK(r.status == 2);
  CHECK(r.err.rfind("ptdsim evaluate: error: unknown option '--frmat': did you mean '--format'?", 0) == 0);
  CHECK(ptdsim("--version").status == 0);
  // a word that would drive the terminal is shown escaped
  const Run esc = ptdsim("$(printf 'x\\033]0;pwned\\007')");
  CHECK(esc.status == 2);
  CHECK(has(esc.err, "unknown command 'x\\x1b]0;pwned\\x07'"));
  CHECK_FALSE(has(esc.err, "\x1b"));
}

TEST_CASE("cli: a YAML syntax error comes before schema errors", "[cli][guard][yaml]") {
  const fs::path d = fresh("yaml_syntax");
  std::ofstream(d / "m.yaml") << "name: \"gpt3\nlayers: 96\nhidden: 12288\nheads: 96\nvocab: 50257\n";
  const Run r = ptdsim("evaluate scenarios/default.yaml --set model=" + (d / "m.yaml").string());
  CHECK(r.status == 2);
  // before: four "missing required key" errors that never mention the quote
  CHECK(r.err.rfind((d / "m.yaml").string() + ":1:7: error: invalid YAML: unclosed quote", 0) == 0);
  CHECK_FALSE(has(r.err, "missing required key"));
}

TEST_CASE("cli: names with control characters are printed escaped, and CSV guards formulas", "[cli][guard][escape]") {
  const fs::path d = fresh("escape");
  // a model whose name would retitle the terminal (ESC ] 0 ; ... BEL) and start with '=' in CSV
  std::ofstream(d / "m.yaml") << "name: \"=HYPERLINK(1)\\e]0;pwned\\a\"\nlayers: 32\nhidden: 512\nheads: 8\nffn_hidden: 2048\n"
                                 "vocab: 32000\n";
  const std::string set = " --set model=" + (d / "m.yaml").string();
  const Run table = ptdsim("evaluate scenarios/default.yaml" + set);
  REQUIRE(table.status == 0);
  CHECK_FALSE(has(table.out, "\x1b"));
  CHECK_FALSE(has(table.out, "\a"));
  CHECK(has(table.out, "=HYPERLINK(1)\\x1b]0;pwned\\x07"));
  const Run csv = ptdsim("evaluate scenarios/default.yaml --format csv" + set);
  REQUIRE(csv.status == 0);
  // OWASP: a leading apostrophe makes the cell text
  CHECK(has(csv.out, ",'=HYPERLINK(1)"));
  CHECK_FALSE(has(csv.out, ",=HYPERLINK"));
}

TEST_CASE("cli: a run's outputs are written all or none", "[cli][guard][outputs]") {
  const fs::path d = fresh("outputs");
  const fs::path trace = d / "t.json";
  // before: the trace was written, then the report failed
  const Run r = ptdsim("evaluate scenarios/default.yaml --trace " + trace.string() + " -o " + (d / "missing" / "x.json").string());
  CHECK(r.status == 1);
  CHECK(has(r.err, "cannot create a temporary file"));
  CHECK_FALSE(fs::exists(trace));
  const Run ok = ptdsim("evaluate scenarios/default.yaml --format json --trace " + trace.string() + " -o " + (d / "x.json").string());
  CHECK(ok.status == 0);
  CHECK(fs::exists(trace));
  CHECK(fs::exists(d / "x.json"));
}
