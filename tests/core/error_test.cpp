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

namespace {
// The caret line render() draws under `line` for an error at `column` of it.
std::string caret(const std::string& line, int column) {
  const std::string r = Diagnostic{SourceLocation{"s.yaml", 1, column}, "m", line}.render();
  return r.substr(r.rfind('\n') + 1);
}
}  // namespace

TEST_CASE("core: the caret counts a narrow UTF-8 character as one cell, a stray byte as one", "[core][error]") {
  // "é: x" puts x at byte 5 (é is two bytes): one cell for é, then ": "
  CHECK(caret("\xc3\xa9: x", 5) == "   ^");
  // a lead byte without its continuation is one cell of its own
  CHECK(caret("\xc3: x", 4) == "   ^");
  // an overlong form (E0 80 80) is three stray bytes, three cells
  CHECK(caret("\xe0\x80\x80: x", 6) == "     ^");
  // the whole rendering keeps the line above the caret
  CHECK(Diagnostic{SourceLocation{"s.yaml", 1, 5}, "m", "\xc3\xa9: x"}.render() == "s.yaml:1:5: error: m\n\xc3\xa9: x\n   ^");
}

TEST_CASE("core: the caret counts a wide East Asian character as two cells, a combining mark as none", "[core][error]") {
  // "名: x" (U+540D, three bytes, two cells) puts x at byte 6: two cells, then ": "
  CHECK(caret("\xe5\x90\x8d: x", 6) == "    ^");
  // a fullwidth letter (U+FF41) and an emoji (U+1F600, four bytes) take two cells each
  CHECK(caret("\xef\xbd\x81\xf0\x9f\x98\x80: x", 10) == "      ^");
  // "e" then a combining acute (U+0301, two bytes): one cell for both
  CHECK(caret("e\xcc\x81: x", 6) == "   ^");
  // the Hangul syllable U+AC00 is wide, the Greek alpha U+03B1 one cell: x at byte 8 under cell 6
  CHECK(caret("\xea\xb0\x80\xce\xb1: x", 8) == "     ^");
  // the rocket U+1F680 (four bytes) and a zero-width joiner U+200D (three): two cells and none
  CHECK(caret("\xf0\x9f\x9a\x80\xe2\x80\x8d: x", 10) == "    ^");
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
