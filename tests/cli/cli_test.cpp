#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

// Golden tests of the `ptdsim` executable: exit statuses, output forms and error messages as a
// user or a script sees them. Run from the source tree (ctest's working directory).
namespace fs = std::filesystem;

namespace {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Run ptdsim(const std::string& args) {
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("ptdsim_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / ("out" + std::to_string(n));
  const fs::path err = dir / ("err" + std::to_string(n++));
  const std::string cmd = std::string(PTDSIM_BIN) + " " + args + " >" + out.string() + " 2>" +
                          err.string() + " </dev/null";
  int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
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
  CHECK(gpus.err.rfind("--gpus: Value 0 not in range 1 to 16777216\n", 0) == 0);
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
