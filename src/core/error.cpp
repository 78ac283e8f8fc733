#include "ptdsim/core/error.hpp"

#include <algorithm>
#include <numeric>

namespace ptdsim::core {
namespace {

// The cells a terminal draws a character in: 2 for the main blocks of Unicode's EastAsianWidth.txt
// classes W and F (CJK, Hangul, fullwidth forms; the ranges Markus Kuhn's wcwidth lists) and for the
// emoji blocks, 0 for the combining diacritical blocks, Hangul's medial and final jamo, zero-width
// spaces and joiners, the byte-order mark and the variation selectors, else 1. An approximation: a
// terminal's own table may differ at the edges (other scripts' combining marks count 1 here).
int cells(char32_t c) {
  struct Range {
    char32_t first, last;
  };
  static constexpr Range kZero[] = {{0x0300, 0x036F}, {0x1160, 0x11FF}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
                                    {0x200B, 0x200F}, {0x2060, 0x2063}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
                                    {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF}};
  static constexpr Range kWide[] = {{0x1100, 0x115F},   {0x2329, 0x232A},   {0x2E80, 0x303E},   {0x3040, 0xA4CF},
                                    {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
                                    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF},
                                    {0x1F900, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};
  for (const Range& r : kZero)
    if (c >= r.first && c <= r.last) return 0;
  for (const Range& r : kWide)
    if (c >= r.first && c <= r.last) return 2;
  return 1;
}

// The character of `line` at byte i, whose bytes end before `end`: its length in bytes and the cells
// a terminal draws it in. A byte that does not start a whole, shortest-form UTF-8 sequence within
// `end` (a stray continuation, a cut or overlong sequence, a surrogate) is one byte and one cell,
// as a terminal draws a replacement mark per byte.
struct Drawn {
  std::size_t bytes;
  int cells;
};
Drawn drawn_at(const std::string& line, std::size_t i, std::size_t end) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(line[k]); };
  const unsigned char lead = byte(i);
  const std::size_t n = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xC2 && lead <= 0xDF ? 2 : 1;
  if (n == 1 || i + n > end) return {1, 1};
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return {1, 1};
  const unsigned char second = byte(i + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0) || (lead == 0xF0 && second < 0x90) ||
      (lead == 0xF4 && second >= 0x90))
    return {1, 1};
  char32_t c = lead & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) c = (c << 6) | (byte(i + k) & 0x3F);
  return {n, cells(c)};
}

}  // namespace

std::string Diagnostic::render() const {
  // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on chained temporaries here
  std::string out = where.file;
  if (where.line > 0) {
    out.append(":").append(std::to_string(where.line));
    out.append(":").append(std::to_string(where.column));
  }
  out.append(": error: ").append(message);
  if (!source_line.empty() && where.line > 0) {
    out.append("\n").append(source_line).append("\n");
    // columns count bytes; the caret goes under the cells the characters before it are drawn in,
    // tabs kept so a terminal expands them alike
    const std::size_t end = std::min(static_cast<std::size_t>(std::max(where.column - 1, 0)), source_line.size());
    for (std::size_t i = 0; i < end;) {
      const Drawn d = drawn_at(source_line, i, end);
      if (source_line[i] == '\t')
        out.push_back('\t');
      else
        out.append(static_cast<std::size_t>(d.cells), ' ');
      i += d.bytes;
    }
    out.push_back('^');
  }
  return out;
}

static std::string render_all(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    if (!out.empty()) out += "\n";
    out += d.render();
  }
  return out;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(render_all(diagnostics)), diagnostics_(std::move(diagnostics)) {}

ConfigError::ConfigError(SourceLocation where, std::string message, std::string source_line)
    : ConfigError(std::vector<Diagnostic>{
          Diagnostic{std::move(where), std::move(message), std::move(source_line)}}) {}

static std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Within a third of the word's length (at least 2 edits): close enough to be a typo.
  std::size_t best = std::max<std::size_t>(2, word.size() / 3) + 1;
  std::string match;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best) {
      best = d;
      match = c;
    }
  }
  return match;
}

}  // namespace ptdsim::core
