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

TEST_CASE("core: the caret counts a narrow UTF-8 character as one cell, a stray byte as one", "[core][error]") {
  Diagnostic d;
  d.message = "m";
  // "é: x" puts x at byte 5 (é is two bytes): one cell for é, then ": "
  d.where = SourceLocation{"s.yaml", 1, 5};
  d.source_line = "\xc3\xa9: x";
  CHECK(d.render() == "s.yaml:1:5: error: m\n\xc3\xa9: x\n   ^");
  // a lead byte without its continuation is one cell of its own
  d.where = SourceLocation{"s.yaml", 1, 4};
  d.source_line = "\xc3: x";
  CHECK(d.render() == "s.yaml:1:4: error: m\n\xc3: x\n   ^");
  // an overlong form (E0 80 80) is three stray bytes, three cells
  d.where = SourceLocation{"s.yaml", 1, 6};
  d.source_line = "\xe0\x80\x80: x";
  CHECK(d.render() == "s.yaml:1:6: error: m\n\xe0\x80\x80: x\n     ^");
}

TEST_CASE("core: the caret counts a wide East Asian character as two cells, a combining mark as none", "[core][error]") {
  Diagnostic d;
  d.message = "m";
  // "名: x" (U+540D, three bytes, two cells) puts x at byte 6: two cells, then ": "
  d.where = SourceLocation{"s.yaml", 1, 6};
  d.source_line = "\xe5\x90\x8d: x";
  CHECK(d.render() == "s.yaml:1:6: error: m\n\xe5\x90\x8d: x\n    ^");
  // a fullwidth letter (U+FF41) and an emoji (U+1F600, four bytes) take two cells each
  d.where = SourceLocation{"s.yaml", 1, 10};
  d.source_line = "\xef\xbd\x81\xf0\x9f\x98\x80: x";
  CHECK(d.render() == "s.yaml:1:10: error: m\n\xef\xbd\x81\xf0\x9f\x98\x80: x\n      ^");
  // "e" then a combining acute (U+0301, two bytes): one cell for both
  d.where = SourceLocation{"s.yaml", 1, 6};
  d.source_line = "e\xcc\x81: x";
  CHECK(d.render() == "s.yaml:1:6: error: m\ne\xcc\x81: x\n   ^");
  // the Hangul syllable U+AC00 is wide, the Greek alpha U+03B1 one cell: x at byte 8 under cell 6
  d.where = SourceLocation{"s.yaml", 1, 8};
  d.source_line = "\xea\xb0\x80\xce\xb1: x";
  CHECK(d.render() == "s.yaml:1:8: error: m\n\xea\xb0\x80\xce\xb1: x\n     ^");
  // the rocket U+1F680 (four bytes) and a zero-width joiner U+200D (three): two cells and none
  d.where = SourceLocation{"s.yaml", 1, 10};
  d.source_line = "\xf0\x9f\x9a\x80\xe2\x80\x8d: x";
  CHECK(d.render() == "s.yaml:1:10: error: m\n\xf0\x9f\x9a\x80\xe2\x80\x8d: x\n    ^");
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
