#include <catch2/catch.hpp>

#include "ptdsim/core/error.hpp"

using namespace ptdsim::core;

TEST_CASE("core: a diagnostic renders in gcc form with a caret", "[core][error]") {
  Diagnostic d;
  d.where = SourceLocation{"s.yaml", 3, 7};
  d.message = "parallel.tp must be a positive integer, got \"eight\"";
  d.source_line = "  tp: eight";
  // the caret sits under column 7, the 'e' of "eight"
  CHECK(d.render() ==
        "s.yaml:3:7: error: parallel.tp must be a positive integer, got \"eight\"\n"
        "  tp: eight\n"
        "      ^");
}

TEST_CASE("core: a diagnostic without a line names only the file", "[core][error]") {
  Diagnostic d;
  d.where = SourceLocation{"missing.yaml", 0, 0};
  d.message = "cannot open file";
  CHECK(d.render() == "missing.yaml: error: cannot open file");
}

TEST_CASE("core: ConfigError joins every diagnostic", "[core][error]") {
  ConfigError e({Diagnostic{{"a.yaml", 1, 1}, "first", ""}, Diagnostic{{"a.yaml", 2, 3}, "second", ""}});
  CHECK(std::string(e.what()) == "a.yaml:1:1: error: first\na.yaml:2:3: error: second");
  CHECK(e.diagnostics().size() == 2);
}

TEST_CASE("core: closest_match suggests near typos only", "[core][error]") {
  std::vector<std::string> keys{"tp", "pp", "dp", "sequence_parallel", "schedule"};
  CHECK(closest_match("sequence_paralel", keys) == "sequence_parallel");
  CHECK(closest_match("schedul", keys) == "schedule");
  CHECK(closest_match("completely_different", keys).empty());
}
