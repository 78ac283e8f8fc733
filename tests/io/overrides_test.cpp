#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;
using io::test::scenario;

namespace {
const std::string kBase = scenario("cluster: {gpus: 8}\nparallel: {tp: 2}\ntraining: {seq_len: 512, global_batch: 8}\n");

core::Scenario load(std::vector<std::string> sets) {
  std::vector<io::Override> ov;
  for (const auto& s : sets) ov.push_back(io::parse_override(s));
  return io::load_scenario_from_string(kBase, "in.yaml", ov);
}
std::string error_of(std::vector<std::string> sets) {
  try {
    load(std::move(sets));
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("io: parse_override splits at the first '='", "[io][overrides]") {
  auto o = io::parse_override("training.overlap={dp: false, tp: true}");
  CHECK(o.key == "training.overlap");
  CHECK(o.value == "{dp: false, tp: true}");
  CHECK(io::parse_override("name=a=b").value == "a=b");
  CHECK(io::parse_override("name=").value == "");
}

TEST_CASE("io: parse_override rejects text without a key", "[io][overrides][errors]") {
  for (const char* bad : {"parallel.tp", "=4", ""}) {
    try {
      io::parse_override(bad);
      FAIL("no error for " << bad);
    } catch (const core::ConfigError& e) {
      CHECK(std::string(e.what()) ==
            "--set: error: expected KEY=VALUE (e.g. parallel.tp=4), got \"" + std::string(bad) + "\"");
    }
  }
}

TEST_CASE("io: overrides replace, add and create keys", "[io][overrides]") {
  SECTION("replace a scalar") { CHECK(load({"parallel.tp=4"}).parallel.tp == 4); }
  SECTION("later overrides win") { CHECK(load({"parallel.tp=4", "parallel.tp=8"}).parallel.tp == 8); }
  SECTION("add a key absent from the file") {
    auto s = load({"parallel.pp=2"});
    CHECK(s.parallel.pp == 2);
    CHECK(s.parallel.dp == 2);  // derived again: 8 / (2*2)
  }
  SECTION("create a missing section") { CHECK(load({"training.overlap.tp=true"}).training.overlap.tp); }
  SECTION("a flow mapping replaces a whole section") {
    auto s = load({"training.overlap={tp: true}"});
    CHECK(s.training.overlap.tp);
    CHECK(s.training.overlap.dp);  // default again: the old mapping is gone
  }
  SECTION("a flow list") {
    auto s = load({"parallel.pp=2", "parallel.stage_layers=[3, 1]"});
    CHECK(s.parallel.stage_layers == std::vector<int>{3, 1});
  }
  SECTION("null removes a key: dp derived again") { CHECK(load({"parallel.dp=8", "parallel.dp=~"}).parallel.dp == 4); }
  SECTION("inside the inline model and hardware") {
    auto s = load({"model.layers=8", "hardware.gpu.memory_gib=32", "model.moe={experts: 4}"});
    CHECK(s.model.layers == 8);
    CHECK(s.hardware.gpu.memory_bytes == Approx(32.0 * 1024 * 1024 * 1024).epsilon(1e-12));
    REQUIRE(s.model.moe.has_value());
    CHECK(s.model.moe->experts == 4);
  }
}

TEST_CASE("io: overrides reach into included files", "[io][overrides][files]") {
  const std::string file = PTDSIM_TEST_DATA "/good/tiny.yaml";
  auto s = io::load_scenario(file, {io::parse_override("model.layers=8"),
                                    io::parse_override("hardware.node.gpus=2")});
  CHECK(s.model.layers == 8);
  CHECK(s.model.name == "tiny");  // the rest of the included file is kept
  CHECK(s.hardware.gpus_per_node == 2);
  CHECK(s.gpus == 4);  // nodes 2 * 2 GPUs
}

TEST_CASE("io: an override may replace the model by a path", "[io][overrides][files]") {
  // a relative path in a --set is relative to the working directory; absolute here so the test is not
  auto s = load({"model=" PTDSIM_TEST_DATA "/good/tiny-model.yaml", "model.layers=2"});
  CHECK(s.model.name == "tiny");
  CHECK(s.model.layers == 2);
  CHECK(error_of({"model=" PTDSIM_TEST_DATA "/good/none.yaml"}) ==
        "--set:1:7: error: cannot open file '" PTDSIM_TEST_DATA "/good/none.yaml'\n"
        "model=" PTDSIM_TEST_DATA "/good/none.yaml\n      ^");
}

TEST_CASE("io: override errors point at the --set", "[io][overrides][errors]") {
  CHECK(error_of({"parallel.tpp=4"}) ==
        "--set:1:1: error: unknown key 'parallel.tpp'; did you mean 'parallel.tp'?\nparallel.tpp=4\n^");
  CHECK(error_of({"parallel.tp=2", "traning.seq_len=64"}) ==
        "--set:2:1: error: unknown key 'traning.seq_len'; did you mean 'training.seq_len'?\n"
        "traning.seq_len=64\n^");
  CHECK(error_of({"nonsense.entirely.x=1"}) ==
        "--set:1:1: error: unknown key 'nonsense.entirely.x'\nnonsense.entirely.x=1\n^");
  CHECK(error_of({"parallel.tp=eight"}) ==
        "--set:1:13: error: parallel.tp must be a positive integer, got \"eight\"\nparallel.tp=eight\n"
        "            ^");
  CHECK(error_of({"parallel.tp=[1, 2"}) ==
        "--set:1:13: error: invalid YAML: end of sequence flow not found\nparallel.tp=[1, 2\n            ^");
  // tp 3 divides neither the 8 GPUs nor the 8 heads nor ffn 1024; the cross-field problems move
  // to the --set that made them
  CHECK(error_of({"parallel.tp=3"}) ==
        "--set:1:1: error: tp*cp*pp = 3*1*1 = 3 does not divide the 8 GPUs\nparallel.tp=3\n^\n"
        "--set:1:1: error: tp 3 does not divide heads 8\nparallel.tp=3\n^\n"
        "--set:1:1: error: tp 3 does not divide ffn_hidden 1024\nparallel.tp=3\n^");
  CHECK(error_of({"parallel.tp.x=1"}) ==
        "--set:1:1: error: unknown key 'parallel.tp.x'; did you mean 'parallel.tp'?\nparallel.tp.x=1\n^");
  CHECK(error_of({"name.x=1"}) == "--set:1:1: error: unknown key 'name.x'; did you mean 'name'?\nname.x=1\n^");
}

TEST_CASE("io: an override through a scalar section is a type error", "[io][overrides][errors]") {
  auto s = scenario("cluster: 8\ntraining: {seq_len: 512, global_batch: 8}\n");
  try {
    io::load_scenario_from_string(s, "in.yaml", {io::parse_override("cluster.gpus=8")});
    FAIL("no error");
  } catch (const core::ConfigError& e) {
    CHECK(std::string(e.what()) == "in.yaml:23:10: error: cluster must be a mapping, got \"8\"\ncluster: 8\n         ^");
  }
}
