#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_target.hpp"

// Every fuzz target, in the normal suite (no clang needed): over its seed corpus and over the
// inputs fuzzing once found (tests/data/fuzz/<target>/, kept as regressions). An input that makes
// a target throw Finding or anything but a clean ConfigError fails here with its file name.
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run_dir(const fs::path& dir, ptdsim::fuzz::Target target) {
  int n = 0;
  if (!fs::is_directory(dir)) return n;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    ++n;
    INFO(e.path().string());
    try {
      target(slurp(e.path()));
    } catch (const ptdsim::fuzz::Finding& f) {
      FAIL("finding: " << f.what());
    } catch (const std::exception& x) {
      FAIL("escaped as a non-ConfigError: " << x.what());
    }
  }
  return n;
}

}  // namespace

TEST_CASE("fuzz: every target passes over its seeds and its regressions", "[fuzz]") {
  const auto& targets = ptdsim::fuzz::targets();
  REQUIRE(targets.size() >= 5);  // model, hardware, scenario, dataset, nccl_tests, and any added since
  for (const auto& [name, target] : targets) {
    DYNAMIC_SECTION(name) {
      const int seeds = run_dir(fs::path(PTDSIM_FUZZ_SEEDS) / name, target);
      CHECK(seeds >= 3);
      run_dir(fs::path(PTDSIM_TEST_DATA) / "fuzz" / name, target);
    }
  }
}

TEST_CASE("fuzz: expect_clean refuses library text the input did not hold, and a message without a file", "[fuzz]") {
  using ptdsim::core::ConfigError;
  using ptdsim::fuzz::expect_clean;
  using ptdsim::fuzz::Finding;
  CHECK_NOTHROW(expect_clean(ConfigError({"a.yaml", 1, 2}, "layers must be a positive integer"), "layers: x"));
  CHECK_THROWS_AS(expect_clean(ConfigError({"a.yaml", 0, 0}, "cannot load: std::bad_alloc"), "layers: 1"), Finding);
  CHECK_THROWS_AS(expect_clean(ConfigError({"a.log", 3, 1}, "stoi"), "# Rank 0"), Finding);
  CHECK_THROWS_AS(expect_clean(ConfigError({"", 0, 0}, "something"), "x"), Finding);
  // quoting the input is not a leak
  CHECK_NOTHROW(expect_clean(ConfigError({"a.yaml", 1, 9}, "layers must be a positive integer, got \"std::x\""),
                             "layers: std::x"));
  // nor is quoting a word a shell split out of it (the Megatron importer's quotes removed)
  CHECK_NOTHROW(expect_clean(ConfigError({"megatron", 1, 40}, "--pipeline-model-parallel-size must be a positive "
                                                              "integer, got \"4std:: --lr\""),
                             "--pipeline-model-parallel-size 4std':: --lr'"));
  CHECK_THROWS_AS(expect_clean(ConfigError({"megatron", 1, 1}, "std::invalid_argument"), "--lr 'x'"), Finding);
}
