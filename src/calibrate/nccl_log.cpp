#include "ptdsim/calibrate/nccl_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"

namespace ptdsim::calibrate {
namespace {

using core::Collective;
using core::ConfigError;
using core::Scope;

// The largest number of GPUs one host carries in shipping systems (DGX-2/HGX-2: 16). A paste that
// lost most of its device list but names more ranks than this on one host must span hosts.
constexpr int kMaxGpusPerHost = 16;

// Bounds beyond which a number in a result row is a mangled paste or a hostile file, never a
// measurement (docs/calibration.md "Refusals"): nccl-tests sweeps stop at tens of GiB, one
// collective takes well under an hour, and no link moves 10^9 GB/s (the one-rank fixture's no-op
// prints 5.7e6).
constexpr double kMaxSizeBytes = 1125899906842624.0;  // 2^50 bytes = 1 PiB
constexpr double kMaxTimeS = 1e4;
constexpr double kMaxBandwidthGBs = 1e9;

struct Token {
  std::string_view text;
  int column = 0;  // 1-based, in the raw line
};

// Blanks as the C locale's isspace sees them, without its per-character call (a 100 MB log is
// mostly blanks).
constexpr bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::vector<Token> split(std::string_view line, std::size_t from) {
  std::vector<Token> out;
  std::size_t i = from;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

bool is_unsigned(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool is_integer(std::string_view s) {
  return is_unsigned(s.size() > 1 && s[0] == '-' ? s.substr(1) : s);
}

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// An integer, or nothing when it is not one or does not fit a long long (no std::stoi: its
// out_of_range would reach the user as "stoi").
std::optional<long long> to_integer(std::string_view s) {
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// nccl-tests' parsesize (src/common.cu): the number times 1024, 1024^2 or 1024^3 when the text
// holds a K, M or G ("-e 8G"). Lower case is taken as well.
std::optional<double> to_size(std::string_view s) {
  std::size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) ++end;
  auto v = to_double(s.substr(0, end));
  if (!v) return std::nullopt;
  double unit = 1;
  for (char c : s.substr(end)) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (u == 'K' || u == 'M' || u == 'G') {
      unit = u == 'K' ? 1024.0 : u == 'M' ? 1024.0 * 1024 : core::kGiB;
      break;
    }
  }
  const double bytes = *v * unit;
  if (bytes > kMaxSizeBytes) return std::nullopt;
  return bytes;
}

// Whole numbers in full (sizes of 8589934592 bytes), others in the shortest form.
std::string number_text(double v) { return fmt::format("{}", v); }

// Element sizes of nccl-tests' type names (src/common.cu test_typenames).
std::optional<int> type_size(std::string_view t) {
  static const std::map<std::string_view, int> sizes{
      {"int8", 1},  {"uint8", 1},  {"int32", 4}, {"uint32", 4},   {"int64", 8},  {"uint64", 8},
      {"half", 2},  {"float", 4},  {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  auto it = sizes.find(t);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

// Removes what launchers glue in front of each line: srun's "N: " and Open MPI's
// "[1,0]<stdout>:". Returns the offset of the remaining text.
std::size_t prefix_length(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t d = i;
  while (d < line.size() && std::isdigit(static_cast<unsigned char>(line[d]))) ++d;
  if (d > i && d + 1 < line.size() && line[d] == ':' && line[d + 1] == ' ') return d + 2;
  if (line.substr(i, 1) == "[") {
    auto close = line.find(']', i);
    if (close != std::string_view::npos) {
      for (std::string_view tag : {"<stdout>:", "<stderr>:"}) {
        if (line.substr(close + 1, tag.size()) == tag) return close + 1 + tag.size();
      }
    }
  }
  return 0;
}

// The first "<name>_perf" in a line (a shell prompt, an EXEC_CMD echo, an mpirun line) and the
// offset just past it, where its options start.
std::pair<std::string, std::size_t> binary_in(std::string_view line) {
  auto pos = line.find("_perf");
  while (pos != std::string_view::npos) {
    std::size_t end = pos + 5;
    bool ends_word = end == line.size() || !(std::isalnum(static_cast<unsigned char>(line[end])) ||
                                             line[end] == '_');
    std::size_t start = pos;
    while (start > 0 && (std::islower(static_cast<unsigned char>(line[start - 1])) ||
                         line[start - 1] == '_' || std::isdigit(static_cast<unsigned char>(line[start - 1])))) {
      --start;
    }
    if (ends_word && start < pos) return {std::string(line.substr(start, end - start)), end};
    pos = line.find("_perf", pos + 1);
  }
  return {};
}

// The sizes a run sweeps: `for (size = minBytes; size <= maxBytes; size = stepFactor > 1 ?
// size * stepFactor : size + stepBytes)` (nccl-tests src/common.cu TimeTest). 0 = not stated.
struct Sweep {
  double min_bytes = 0, max_bytes = 0;
  double factor = 0, step_bytes = 0;
  int line = 0;  // where max_bytes was stated
  bool any() const { return min_bytes > 0 || max_bytes > 0 || factor > 0 || step_bytes > 0; }
};

// `over`'s stated values replace `base`'s.
Sweep merged(Sweep base, const Sweep& over) {
  if (over.min_bytes > 0) base.min_bytes = over.min_bytes;
  if (over.max_bytes > 0) {
    base.max_bytes = over.max_bytes;
    base.line = over.line;
  }
  if (over.factor > 0 || over.step_bytes > 0) {
    base.factor = over.factor;
    base.step_bytes = over.step_bytes;
  }
  return base;
}

// Column positions of one result table.
struct Columns {
  int count_total = 0;
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  struct Half {
    int time = -1, algbw = -1, busbw = -1, check = -1;
  } half[2];
  double time_unit_s = core::kMicro;
};

struct Device {
  int rank = 0;
  std::string host;
  std::string gpu;
};

// The latest command that launched a test: its binary and the sweep its options ask for.
struct Command {
  std::string binary;
  Sweep sweep;
};

// What the lines before a table said about the run.
struct Header {
  int line = 0;
  std::vector<Device> devices;
  Sweep sweep;  // "# nThread ... minBytes B maxBytes E step: F(factor)" and "Reducing maxBytes"
};

// An NCCL_ALGO or NCCL_PROTO value a line of the log stated, as NCCL reads it; line 0: none.
struct Setting {
  std::string value;
  int line = 0;
};

struct Table {
  Columns columns;
  Header header;
  Command command;
  Setting algo, proto;  // NCCL_ALGO, NCCL_PROTO as stated before the table (or inside it)
  int line = 0;  // the column header, or the first row when tail-only
  bool tail_only = false;
  std::vector<NcclRow> rows;
  std::string concluded;  // "# Collective test concluded: X"
  std::vector<std::string> warnings;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& file) : file_(file) {
    std::string_view all(text);
    std::size_t start = 0;
    while (start <= all.size()) {
      auto nl = all.find('\n', start);
      std::string_view line = all.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines_.push_back(line);
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
  }

  std::vector<Table> tables() {
    for (std::size_t i = 0; i < lines_.size(); ++i) take(static_cast<int>(i) + 1, lines_[i]);
    if (open_) end_without_footer("the end of the file");
    if (done_.empty()) {
      fail(1, 1,
           "not nccl-tests output: no result table (neither a '#  size  count  type ...' column header "
           "nor rows of 11 to 13 columns)");
    }
    return std::move(done_);
  }

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    std::string source = line > 0 && line <= static_cast<int>(lines_.size()) ? std::string(lines_[line - 1]) : "";
    throw ConfigError({file_, line, column}, message, source);
  }

  std::string warning(int line, int column, const std::string& message) const {
    return file_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": warning: " + message;
  }

 private:
  void take(int n, std::string_view line) {
    std::size_t from = prefix_length(line);
    auto tokens = split(line, from);
    if (tokens.empty()) return;
    std::string_view first = tokens[0].text;
    if (line.find("NCCL_") != std::string_view::npos) nccl_setting(n, line);
    if (first.substr(0, 2) == "##") return metadata_line(n, line);  // fixture metadata, markdown headings
    // Markdown renders "# ..." as a heading, so logs copied from a rendered page (a GitHub issue, a
    // wiki) lose the '#' of their header lines: those are still header lines.
    bool comment = first[0] == '#' || unmarked_header(tokens);
    if (first[0] == '#') {
      // "#" may be glued to the first word ("#wrong") or stand alone.
      if (first.size() == 1) {
        tokens.erase(tokens.begin());
      } else {
        tokens[0].text.remove_prefix(1);
        tokens[0].column += 1;
      }
    }
    if (!comment && open_ && is_unsigned(first)) return row(n, tokens);  // the common case, first
    std::string joined;
    for (const auto& t : tokens) joined.append(t.text).append(" ");
    // Footers: with "#" since 2019, without in the 2017 layout.
    if (joined.rfind("Out of bounds values", 0) == 0) return out_of_bounds(n, tokens);
    if (joined.rfind("Avg bus bandwidth", 0) == 0) return close_table(n);
    if (comment) return header_line(n, tokens, joined);
    if (open_ ? !is_unsigned(first) : !looks_like_row(tokens)) {
      // inside a table, a line shaped as a result row (11 to 13 columns, an element count and a
      // data type after the first) whose size is not a byte count ('abc', '-8') is a mangled row,
      // not noise: dropping it would fit the rest in silence
      if (open_ && tokens.size() >= 11 && tokens.size() <= 13 && is_unsigned(tokens[1].text) &&
          type_size(tokens[2].text).has_value())
        fail(n, tokens[0].column,
             "the size of a result row must be a byte count, got '" + std::string(first) + "'");
      // a shell prompt, an mpirun or EXEC_CMD echo, or noise ("NCCL INFO", "NCCL version", ssh)
      return command_line(n, line, false);
    }
    if (!open_) open_tail_only(n, tokens.size());
    row(n, tokens);
  }

  bool unmarked_header(const std::vector<Token>& t) const {
    auto has = [&](std::string_view w) {
      return std::any_of(t.begin(), t.end(), [&](const Token& x) { return x.text == w; });
    };
    const std::string_view first = t[0].text;
    if (first == "nThread") return has("maxBytes");
    if (first == "Rank") return t.size() > 3 && is_unsigned(t[1].text) && has("on");
    if (first == "size" || first == "bytes") return has("algbw") && has("busbw");
    if (first == "(B)") return open_.has_value() && open_->rows.empty();
    if (first == "Collective" || first == "Reducing") return t.size() > 2 && (t[1].text == "test" || t[1].text == "maxBytes");
    return false;
  }

  // A line that names a test binary: the binary (unless the line is "##" metadata, which may
  // mention a binary in prose) and the sweep its -b/-e/-f/-i options ask for.
  void command_line(int n, std::string_view line, bool metadata) {
    auto [binary, end] = binary_in(line);
    if (binary.empty()) return;
    Sweep s;
    auto tokens = split(line, end);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string_view t = tokens[i].text;
      char option = 0;
      std::string_view value;
      if (t.size() >= 2 && t[0] == '-' && t[1] != '-') {
        option = t[1];
        value = t.substr(2);
      } else if (t.substr(0, 2) == "--") {
        std::string_view name = t.substr(2, t.find('=') == std::string_view::npos ? std::string_view::npos : t.find('=') - 2);
        static const std::map<std::string_view, char> longs{
            {"minbytes", 'b'}, {"maxbytes", 'e'}, {"stepbytes", 'i'}, {"stepfactor", 'f'}};
        auto it = longs.find(name);
        if (it == longs.end()) continue;
        option = it->second;
        if (t.find('=') != std::string_view::npos) value = t.substr(t.find('=') + 1);
      }
      if (option != 'b' && option != 'e' && option != 'f' && option != 'i') continue;
      if (value.empty() && i + 1 < tokens.size()) value = tokens[++i].text;
      auto v = to_size(value);
      if (!v) continue;
      if (option == 'b') s.min_bytes = *v;
      if (option == 'e') {
        s.max_bytes = *v;
        s.line = n;
      }
      if (option == 'f') s.factor = std::floor(*v);  // strtol in nccl-tests: a whole factor
      if (option == 'i') s.step_bytes = *v;
    }
    if (metadata) {
      if (s.any()) command_.sweep = s;
      return;
    }
    command_.binary = binary;
    command_.sweep = s;  // a new launch: the previous one's options no longer apply
  }

  void metadata_line(int n, std::string_view line) { command_line(n, line, true); }

  // NCCL_ALGO / NCCL_PROTO as a line states them: NCCL's own INFO line ("NCCL_ALGO set by
  // environment to Ring", src/graph/tuning.cc ncclTopoTuneModel), an assignment on a command line
  // or in an export ("-x NCCL_ALGO=Ring", "NCCL_ALGO=Ring ./all_reduce_perf", "--export=ALL,NCCL_ALGO=Ring",
  // the fixtures' "##" command), or "unset NCCL_ALGO". The value holds for the tables after it
  // (and the open one) until the log states another.
  void nccl_setting(int n, std::string_view line) {
    for (auto [var, setting] : {std::pair<std::string_view, Setting*>{"NCCL_ALGO", &algo_}, {"NCCL_PROTO", &proto_}}) {
      const std::string info = std::string(var) + " set by environment to ";
      std::optional<std::string> value;
      if (auto at = line.find(info); at != std::string_view::npos) {
        auto rest = split(line.substr(at + info.size()), 0);
        value = rest.empty() ? std::string() : std::string(rest[0].text);
      }
      const std::string assign = std::string(var) + "=";
      for (auto at = line.find(assign); !value && at != std::string_view::npos; at = line.find(assign, at + 1)) {
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) continue;
        std::size_t end = at + assign.size();
        while (end < line.size() && !blank(line[end]) && line[end] != ')') ++end;
        std::string v(line.substr(at + assign.size(), end - at - assign.size()));
        v.erase(std::remove(v.begin(), v.end(), '"'), v.end());
        v.erase(std::remove(v.begin(), v.end(), '\''), v.end());
        // srun's --export=ALL,NCCL_ALGO=Ring,NCCL_PROTO=Simple: the next variable ends the value
        for (std::size_t comma = v.find(','); comma != std::string::npos; comma = v.find(',', comma + 1)) {
          const std::size_t next = v.find_first_of(",=", comma + 1);
          if (next != std::string::npos && v[next] == '=') {
            v.resize(comma);
            break;
          }
        }
        value = v;
      }
      if (!value && line.find("unset") != std::string_view::npos) {
        auto t = split(line, 0);
        for (std::size_t i = 0; i + 1 < t.size(); ++i)
          if (t[i].text == "unset" && t[i + 1].text == var) value = std::string();
      }
      if (!value) continue;
      *setting = Setting{*value, value->empty() ? 0 : n};
      if (open_) (var == "NCCL_ALGO" ? open_->algo : open_->proto) = *setting;
    }
  }

  void header_line(int n, const std::vector<Token>& tokens, const std::string& joined) {
    if (tokens.empty()) return;
    std::string_view first = tokens[0].text;
    if (first == "nThread") {
      if (open_) end_without_footer("the next run's header at line " + std::to_string(n));
      header_ = Header{};
      header_.line = n;
      header_.sweep = run_sweep(n, tokens);
      return;
    }
    if (joined.rfind("Collective test starting:", 0) == 0 && tokens.size() >= 4) {
      command_.binary = std::string(tokens[3].text);
      return;
    }
    if (joined.rfind("Collective test concluded:", 0) == 0 && tokens.size() >= 4) {
      if (open_) {
        open_->concluded = tokens[3].text;
        end_without_footer("'Collective test concluded' at line " + std::to_string(n));
      } else if (!done_.empty() && done_.back().concluded.empty()) {
        done_.back().concluded = tokens[3].text;
      }
      return;
    }
    if (joined.rfind("Reducing maxBytes to", 0) == 0 && tokens.size() >= 4) {
      // "# Reducing maxBytes to N due to memory limitation": the sweep stops at N instead
      if (auto v = to_size(tokens[3].text)) {
        for (Header* h : {&header_, open_ ? &open_->header : nullptr}) {
          if (!h) continue;
          h->sweep.max_bytes = *v;
          h->sweep.line = n;
        }
      }
      return;
    }
    if (first == "Rank") return device_line(n, tokens);
    if ((first == "size" || first == "bytes") && tokens.size() > 4) return column_header(n, tokens);
    if (first == "(B)" && open_) {
      for (const auto& t : tokens) {
        if (t.text == "(ms)") open_->columns.time_unit_s = 1e-3;
        if (t.text == "(us)") open_->columns.time_unit_s = core::kMicro;
      }
    }
  }

  // "nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 ..."
  static Sweep run_sweep(int n, const std::vector<Token>& tokens) {
    Sweep s;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      std::string_view key = tokens[i].text, value = tokens[i + 1].text;
      if (key == "minBytes") s.min_bytes = to_size(value).value_or(0);
      if (key == "maxBytes") {
        s.max_bytes = to_size(value).value_or(0);
        s.line = n;
      }
      if (key == "step:") {
        auto paren = value.find('(');
        auto v = to_size(value.substr(0, paren));
        if (!v || paren == std::string_view::npos) continue;
        if (value.substr(paren) == "(factor)") s.factor = std::floor(*v);
        if (value.substr(paren) == "(bytes)") s.step_bytes = *v;
      }
    }
    return s;
  }

  // "#  Rank  0 Group  0 Pid  31816 on HOST device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti"
  void device_line(int n, const std::vector<Token>& tokens) {
    if (tokens.size() < 2 || !is_unsigned(tokens[1].text)) return;
    auto rank = to_integer(tokens[1].text);
    if (!rank || *rank >= kMaxRanks) {
      fail(n, tokens[1].column, "rank " + std::string(tokens[1].text) + " is out of range: a log names ranks 0 to " +
                                    std::to_string(kMaxRanks - 1));
    }
    Device d;
    d.rank = static_cast<int>(*rank);
    for (std::size_t i = 2; i + 1 < tokens.size(); ++i) {
      if (tokens[i].text == "on" && d.host.empty()) d.host = tokens[i + 1].text;
      if (tokens[i].text[0] == '[' && d.gpu.empty() && i > 2) {
        for (std::size_t j = i + 1; j < tokens.size(); ++j) {
          if (!d.gpu.empty()) d.gpu += " ";
          d.gpu += tokens[j].text;
        }
      }
    }
    if (d.host.empty()) return;
    if (header_.line == 0) header_.line = n;
    header_.devices.push_back(d);
  }

  void column_header(int n, const std::vector<Token>& tokens) {
    if (open_) end_without_footer("the next table's header at line " + std::to_string(n));
    Columns c;
    c.count_total = static_cast<int>(tokens.size());
    std::vector<int> times;
    for (int i = 0; i < c.count_total; ++i) {
      std::string_view t = tokens[static_cast<std::size_t>(i)].text;
      if (t == "time" || t == "cputime") times.push_back(i);
      if (!times.empty()) continue;
      if (t == "size" || t == "bytes") c.size = i;
      if (t == "count" || t == "N") c.count = i;
      if (t == "type") c.type = i;
      if (t == "redop" || t == "op") c.redop = i;
      if (t == "root") c.root = i;
    }
    if (tokens[0].text == "bytes") c.time_unit_s = 1e-3;  // the 2017 layout printed milliseconds
    if (times.size() != 2 || c.size < 0 || c.count < 0 || c.type < 0) {
      fail(n, tokens[0].column,
           "unrecognised nccl-tests column header: expected 'size count type ... time algbw busbw' "
           "for the out-of-place and the in-place half");
    }
    for (int h = 0; h < 2; ++h) {
      int end = h == 0 ? times[1] : c.count_total;
      auto& half = c.half[h];
      half.time = times[static_cast<std::size_t>(h)];
      for (int i = half.time; i < end; ++i) {
        std::string_view t = tokens[static_cast<std::size_t>(i)].text;
        if (t == "algbw") half.algbw = i;
        if (t == "busbw") half.busbw = i;
        if (t == "wrong" || t == "#wrong" || t == "error" || t == "res") half.check = i;
      }
      if (half.algbw < 0 || half.busbw < 0) {
        fail(n, tokens[0].column, "unrecognised nccl-tests column header: no algbw/busbw columns");
      }
    }
    open(n, c, false);
  }

  void open(int n, const Columns& c, bool tail_only) {
    open_ = Table{};
    open_->columns = c;
    open_->header = header_;
    open_->command = command_;
    open_->algo = algo_;
    open_->proto = proto_;
    open_->line = n;
    open_->tail_only = tail_only;
  }

  static bool looks_like_row(const std::vector<Token>& t) {
    return t.size() >= 11 && t.size() <= 13 && is_unsigned(t[0].text) && is_unsigned(t[1].text) &&
           type_size(t[2].text).has_value();
  }

  // No column header: 13 columns are the 2022+ layout (size count type redop root, then time
  // algbw busbw #wrong twice) or the 2019 reduce table (same order); 12 are the 2019-2022 layout
  // with either redop or root in the fourth column; 11 the 2018-2019 tables without an op column
  // (size count type, then the halves).
  void open_tail_only(int n, std::size_t width) {
    Columns c;
    c.count_total = static_cast<int>(width);
    c.size = 0;
    c.count = 1;
    c.type = 2;
    c.redop = width >= 12 ? 3 : -1;
    int first_half = width >= 12 ? 4 : 3;
    if (width == 13) {
      c.root = 4;
      first_half = 5;
    }
    for (int h = 0; h < 2; ++h) {
      int b = first_half + 4 * h;
      c.half[h] = {b, b + 1, b + 2, b + 3};
    }
    open(n, c, true);
  }

  void row(int n, const std::vector<Token>& tokens) {
    const Columns& c = open_->columns;
    if (static_cast<int>(tokens.size()) != c.count_total) {
      fail(n, tokens.back().column,
           "result row has " + std::to_string(tokens.size()) + " columns, the table (line " +
               std::to_string(open_->line) + ") has " + std::to_string(c.count_total) +
               ": the log was cut short or mangled");
    }
    auto tok = [&](int i) { return tokens[static_cast<std::size_t>(i)]; };
    auto number = [&](int i, double limit, const std::string& what) {
      auto v = to_double(tok(i).text);
      if (!v || *v < 0) fail(n, tok(i).column, "expected a non-negative number, got '" +
                                                   std::string(tok(i).text) + "'");
      if (*v > limit) {
        fail(n, tok(i).column, std::string(tok(i).text) + " is out of range for " + what + ": a measurement " +
                                   "stays below " + number_text(limit));
      }
      return *v;
    };
    auto rank = [&](int i) {
      auto v = to_integer(tok(i).text);
      if (!v || *v < -1 || *v >= kMaxRanks) {
        fail(n, tok(i).column, "root rank " + std::string(tok(i).text) + " is out of range (-1 for none, else 0 to " +
                                   std::to_string(kMaxRanks - 1) + ")");
      }
      return static_cast<int>(*v);
    };
    NcclRow r;
    r.line = n;
    r.size_bytes = number(c.size, kMaxSizeBytes, "a size in bytes");
    r.count = number(c.count, kMaxSizeBytes, "an element count");
    r.type = tok(c.type).text;
    r.redop = "none";
    if (c.redop >= 0) {
      // the 2019-2022 broadcast table has "root" where the others have "redop"
      if (is_integer(tok(c.redop).text)) {
        r.root = rank(c.redop);
      } else {
        r.redop = tok(c.redop).text;
      }
    }
    if (c.root >= 0) {
      if (!is_integer(tok(c.root).text)) fail(n, tok(c.root).column, "expected the root rank, got '" +
                                                                          std::string(tok(c.root).text) + "'");
      r.root = rank(c.root);
    }
    const double max_time = kMaxTimeS / c.time_unit_s;
    for (int h = 0; h < 2; ++h) {
      const auto& half = c.half[h];
      NcclMeasure& m = h == 0 ? r.out_of_place : r.in_place;
      m.time_s = number(half.time, max_time, c.time_unit_s == 1e-3 ? "a time in ms" : "a time in us") * c.time_unit_s;
      m.algbw_Bps = number(half.algbw, kMaxBandwidthGBs, "a bandwidth in GB/s") * core::kGB;
      m.busbw_Bps = number(half.busbw, kMaxBandwidthGBs, "a bandwidth in GB/s") * core::kGB;
      // "#wrong" counts wrong elements (2022+); the older "error" column is a deviation such as
      // 2e-07 and "N/A" means unchecked: only an integer count is a verdict.
      const std::string_view check = half.check >= 0 ? tok(half.check).text : std::string_view();
      if (is_unsigned(check) && check.find_first_not_of('0') != std::string_view::npos) {
        fail(n, tok(half.check).column,
             "nccl-tests counted " + std::string(check) + " wrong elements in the " +
                 (h == 0 ? "out-of-place" : "in-place") + " result at " + std::string(tok(c.size).text) +
                 " bytes: a run that computes wrong results cannot be used for calibration");
      }
    }
    open_->rows.push_back(r);
  }

  void out_of_bounds(int n, const std::vector<Token>& tokens) {
    // "Out of bounds values : N OK|FAILED"
    bool failed = false;
    int column = tokens.empty() ? 1 : tokens[0].column;
    for (const auto& t : tokens) {
      if (t.text == "FAILED") failed = true;
      if (is_unsigned(t.text) && t.text.find_first_not_of('0') != std::string_view::npos) failed = true;
    }
    if (failed) {
      fail(n, column,
           "nccl-tests reports out-of-bounds values (a FAILED check): a run that computes wrong "
           "results cannot be used for calibration");
    }
  }

  void close_table(int n) {
    if (!open_) return;  // a footer without a table: a run that printed nothing
    if (open_->rows.empty()) fail(open_->line, 1, "the result table starting here has no rows before its "
                                                   "footer at line " + std::to_string(n));
    done_.push_back(std::move(*open_));
    open_.reset();
  }

  // The table ends at `where` without its "# Avg bus bandwidth" footer. Pastes often drop it, so a
  // table whose sizes reach the end of the sweep its run asked for is complete and is kept, with a
  // warning; one whose sizes stop short of it was cut and is refused. Without a stated maxBytes
  // the table is kept as it is, and the warning says that it could not be checked.
  void end_without_footer(const std::string& where) {
    Table& t = *open_;
    if (t.rows.empty()) fail(t.line, 1, "the result table starting here has no rows before " + where);
    const Sweep s = merged(t.command.sweep, t.header.sweep);
    const NcclRow& last = t.rows.back();
    const std::string head = "the result table starting here has no '# Avg bus bandwidth' footer (it ends at " +
                             where + ")";
    if (s.max_bytes <= 0) {
      t.warnings.push_back(warning(
          t.line, 1,
          head + ", and the log states no maxBytes (a '# nThread' line or an -e option) to check its sizes "
                 "against: it is used as it is, up to " + number_text(last.size_bytes) +
              " bytes; make sure the paste was not cut short"));
    } else {
      // The sweep's last size L and the one before it; the table is complete when its last row
      // lies beyond the one before L (printed sizes are rounded down to whole elements per rank).
      double first = s.min_bytes > 0 ? s.min_bytes : t.rows.front().size_bytes;
      double factor = s.factor, step = s.step_bytes;
      if (factor < 2 && step <= 0 && t.rows.size() >= 2) {
        // options not stated: the step the rows show
        const double a = t.rows[t.rows.size() - 2].size_bytes, b = last.size_bytes;
        if (a > 0 && b / a >= 1.5) factor = std::round(b / a);
        else if (b > a) step = b - a;
      }
      double end = first, before = 0;
      if (factor >= 2 && first > 0) {  // at most 50 steps: sizes stay below 2^50
        while (end * factor <= s.max_bytes) end *= factor;
        before = end / factor;
      } else if (step > 0 && s.max_bytes >= first) {
        end = first + std::floor((s.max_bytes - first) / step) * step;
        before = end - step;
      } else {
        end = s.max_bytes;
        before = end - 1;
      }
      if (!(last.size_bytes > before)) {
        fail(t.line, 1,
             "the result table starting here stops at " + number_text(last.size_bytes) + " bytes (line " +
                 std::to_string(last.line) + "), short of the " + number_text(end) +
                 " bytes its sweep ends at (maxBytes " + number_text(s.max_bytes) + ", line " +
                 std::to_string(s.line) + "), and has no '# Avg bus bandwidth' footer: the log was cut short");
      }
      t.warnings.push_back(warning(t.line, 1,
                                   head + "; its sizes reach " + number_text(last.size_bytes) +
                                       " bytes, the end of the sweep (maxBytes " + number_text(s.max_bytes) +
                                       ", line " + std::to_string(s.line) + "), so it is complete and is used"));
    }
    done_.push_back(std::move(t));
    open_.reset();
  }

  std::string file_;
  std::vector<std::string_view> lines_;
  Header header_;
  Command command_;
  Setting algo_, proto_;
  std::optional<Table> open_;
  std::vector<Table> done_;
};

// The range of rank counts n consistent with busbw = algbw * F(n) at print precision (two decimals
// in GB/s): the row with the largest algbw pins it best.
std::optional<std::pair<int, int>> ranks_from_factor(Collective op, const std::vector<NcclRow>& rows) {
  if (op == Collective::broadcast || op == Collective::reduce || op == Collective::send_recv) return {};
  const NcclMeasure* best = nullptr;
  for (const auto& r : rows) {
    for (const NcclMeasure* m : {&r.out_of_place, &r.in_place}) {
      if (!best || m->algbw_Bps > best->algbw_Bps) best = m;
    }
  }
  if (!best || best->algbw_Bps < 1 * core::kGB) return {};
  const double half_ulp = 0.005 * core::kGB;
  double r_lo = (best->busbw_Bps - half_ulp) / (best->algbw_Bps + half_ulp);
  double r_hi = (best->busbw_Bps + half_ulp) / (best->algbw_Bps - half_ulp);
  // F is increasing in n: all_reduce F = 2 - 2/n, the others F = 1 - 1/n.
  double top = op == Collective::all_reduce ? 2.0 : 1.0;
  const double cap = kMaxRanks;
  auto n_of = [&](double r) { return r >= top ? cap : std::min(cap, top / (top - r)); };
  int lo = static_cast<int>(std::ceil(n_of(std::max(0.0, r_lo)) - 1e-9));
  int hi = static_cast<int>(std::floor(n_of(r_hi) + 1e-9));
  if (lo > hi) return {};
  return std::make_pair(std::max(lo, 1), hi);
}

const NcclRow& largest(const std::vector<NcclRow>& rows) {
  return *std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.size_bytes < b.size_bytes;
  });
}

std::optional<Collective> op_from_rows(const Parser& p, const std::vector<NcclRow>& rows, int table_line) {
  const NcclRow& big = largest(rows);
  if (big.root >= 0) return big.redop == "none" ? Collective::broadcast : Collective::reduce;
  auto ts = type_size(big.type);
  if (!ts || big.count <= 0) {
    p.fail(big.line, 1, "cannot tell which collective this table measures: the log does not name its "
                        "binary (pass the collective explicitly)");
  }
  double q = big.size_bytes / (big.count * *ts);
  bool per_rank = std::abs(q - 1) < 1e-9;
  if (big.redop != "none") return per_rank ? Collective::all_reduce : Collective::reduce_scatter;
  if (per_rank) return Collective::send_recv;
  p.fail(table_line, 1,
         "cannot tell all_gather from alltoall: the log does not name its binary (pass the collective "
         "explicitly)");
}

std::string ranks_text(int n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); }

// The collective: the binary's name, else the options, else the rows' shape.
void find_collective(const Parser& p, const Table& t, const ParseOptions& o, NcclRun& run) {
  if (!run.binary.empty()) {
    auto op = collective_of_binary(run.binary);
    if (!op) {
      std::string supported;
      for (const auto& n : nccl_tests_names()) supported.append(supported.empty() ? "" : ", ").append(n + "_perf");
      p.fail(run.line, 1, "ptdsim has no model for " + run.binary + " (supported: " + supported + ")");
    }
    if (o.op && *o.op != *op) {
      p.fail(run.line, 1, "the collective given (" + std::string(core::name(*o.op)) +
                              ") contradicts the log, which ran " + run.binary);
    }
    run.op = *op;
  } else if (o.op) {
    // what the rows say of themselves must not contradict it: a reduction operator ("sum") is
    // written by the reducing collectives only, a root rank by the rooted ones only (an all_reduce
    // log given as --op broadcast was fitted as broadcast)
    const bool reducing = *o.op == Collective::all_reduce || *o.op == Collective::reduce ||
                          *o.op == Collective::reduce_scatter;
    const bool rooted = *o.op == Collective::broadcast || *o.op == Collective::reduce;
    for (const auto& r : run.rows) {
      if (r.redop != "none" && !reducing)
        p.fail(r.line, 1, "the collective given (" + std::string(core::name(*o.op)) + ") contradicts this row, which "
                          "reduces with '" + r.redop + "': only all_reduce, reduce and reduce_scatter do");
      if (r.root >= 0 && !rooted)
        p.fail(r.line, 1, "the collective given (" + std::string(core::name(*o.op)) + ") contradicts this row, which "
                          "has root rank " + std::to_string(r.root) + ": only broadcast and reduce have a root");
    }
    run.op = *o.op;
    run.notes.push_back("collective " + std::string(core::name(*o.op)) + " as given (the log does not name it)");
  } else {
    run.op = *op_from_rows(p, run.rows, t.line);
    run.notes.push_back("collective " + std::string(core::name(run.op)) +
                        " inferred from the redop/root columns and count x type size vs size");
  }
}

// The rank count: the count column or the busbw/algbw ratio fix it; the device list (whose highest
// rank is `listed_max` - 1) bounds it.
void find_ranks(const Parser& p, const ParseOptions& o, int listed_max, NcclRun& run) {
  auto range = ranks_from_factor(run.op, run.rows);
  if (run.op == Collective::all_gather || run.op == Collective::reduce_scatter ||
      run.op == Collective::all_to_all) {
    const NcclRow& big = largest(run.rows);
    auto ts = type_size(big.type);
    if (ts && big.count > 0) {
      const double q = big.size_bytes / (big.count * *ts);
      if (!(q >= 0.5 && q < kMaxRanks + 0.5)) {
        p.fail(big.line, 1, "size " + std::to_string(static_cast<long long>(big.size_bytes)) + " over count x type size " +
                                "implies a rank count outside 1 to " + std::to_string(kMaxRanks) +
                                ": the row is mangled");
      }
      int n = static_cast<int>(std::lround(q));
      range = std::make_pair(n, n);
    }
  }
  if (range && range->first == range->second) {
    run.ranks = range->first;
    if (listed_max > run.ranks) {
      p.fail(run.line, 1, "the device list names rank " + std::to_string(listed_max - 1) +
                              " but the bandwidths imply " + ranks_text(run.ranks));
    }
    if (o.ranks && *o.ranks != run.ranks) {
      p.fail(run.line, 1, "the rank count given (" + std::to_string(*o.ranks) +
                              ") contradicts the log, whose bandwidths imply " + ranks_text(run.ranks));
    }
    if (listed_max == 0) run.notes.push_back(ranks_text(run.ranks) + " inferred from busbw/algbw (or count) = F(n)");
  } else {
    int n = o.ranks ? *o.ranks : listed_max;
    if (n == 0) {
      p.fail(run.line, 1, "cannot tell how many ranks ran this table: the log has no device list "
                          "(pass the rank count explicitly)");
    }
    if (range && (n < range->first || n > range->second)) {
      p.fail(run.line, 1, "the rank count " + std::to_string(n) + " contradicts busbw/algbw, which allows " +
                              std::to_string(range->first) + " to " + std::to_string(range->second));
    }
    if (n < listed_max) {
      p.fail(run.line, 1, "the rank count given (" + std::to_string(n) + ") is below the device list's rank " +
                              std::to_string(listed_max - 1));
    }
    run.ranks = n;
    if (o.ranks) {
      run.notes.push_back(ranks_text(n) + " as given");
    } else if (run.listed_ranks < n) {
      run.notes.push_back(ranks_text(n) + " from the device list's highest rank");
    }
  }
}

// The scope: one host is intra-node, several are inter-node.
void find_scope(const Parser& p, const ParseOptions& o, NcclRun& run) {
  std::optional<Scope> scope;
  std::string why;
  const bool complete_list = run.listed_ranks >= run.ranks;
  if (run.hosts >= 2) {
    scope = Scope::inter;
    why = std::to_string(run.hosts) + " hosts in the device list";
  } else if (run.hosts == 1 && complete_list) {
    scope = Scope::intra;
    why = "one host in the device list";
  } else if (run.hosts == 1 && run.ranks > kMaxGpusPerHost) {
    scope = Scope::inter;
    why = "the device list is cut, and " + ranks_text(run.ranks) + " exceed the " +
          std::to_string(kMaxGpusPerHost) + " GPUs one host can carry";
    run.notes.push_back("scope inter: " + why);
  }
  if (o.scope) {
    if (scope && *scope != *o.scope) {
      run.notes.push_back("scope " + std::string(core::name(*o.scope)) + " as given (the log says " +
                          std::string(core::name(*scope)) + ": " + why + ")");
    } else if (!scope) {
      run.notes.push_back("scope " + std::string(core::name(*o.scope)) + " as given");
    }
    scope = o.scope;
  }
  if (!scope) {
    p.fail(run.line, 1, "cannot tell whether the " + ranks_text(run.ranks) +
                            " share one host: the log has no complete device list (pass the scope, "
                            "intra or inter, explicitly)");
  }
  run.scope = *scope;
}

  // GPUs per node: all of them inside one node; across nodes, the device list's count per host
  // when the list is complete (a cut list or none leaves it unknown unless given).
void find_ranks_per_node(const Parser& p, const ParseOptions& o, const std::map<std::string, int>& per_host,
                         NcclRun& run) {
  const bool complete_list = run.listed_ranks >= run.ranks;
  if (o.ranks_per_node) {
    const int k = *o.ranks_per_node;
    if (k > run.ranks || run.ranks % k != 0 || (run.scope == Scope::intra && k != run.ranks)) {
      p.fail(run.line, 1, "the ranks per node given (" + std::to_string(k) + ") do not fit the " +
                              ranks_text(run.ranks) + (run.scope == Scope::intra ? " of one node" : " across nodes"));
    }
    run.ranks_per_node = k;
  } else if (run.scope == Scope::intra) {
    run.ranks_per_node = run.ranks;
  } else if (run.hosts >= 2 && complete_list) {
    for (const auto& [host, k] : per_host) run.ranks_per_node = std::max(run.ranks_per_node, k);
  }
}

bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string_view> split_on(std::string_view s, char c) {
  std::vector<std::string_view> out;
  for (std::size_t from = 0;;) {
    const auto at = s.find(c, from);
    out.push_back(s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return out;
    from = at + 1;
  }
}

// NCCL's names (src/init.cc ncclFuncStr, ncclAlgoStr, ncclProtoStr at 5067397), in NCCL's order,
// which is core::nccl_algo_names' and nccl_proto_names'.
const std::vector<std::string_view> kNcclAlgoStr{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
const std::vector<std::string_view> kNcclProtoStr{"LL", "LL128", "Simple"};
std::string_view nccl_func_str(Collective op) {
  switch (op) {
    case Collective::all_reduce: return "AllReduce";
    case Collective::all_gather: return "AllGather";
    case Collective::reduce_scatter: return "ReduceScatter";
    case Collective::broadcast: return "Broadcast";
    case Collective::reduce: return "Reduce";
    default: return "";
  }
}

// What NCCL enables for `func` from an NCCL_ALGO / NCCL_PROTO value, read as its parseList does
// (src/graph/tuning.cc): entries split on ';', the first optionally without a "func:" prefix;
// each sets its functions' list to the names it gives, or to all but them after a '^'; names and
// prefixes are compared case-insensitively. Empty when NCCL would refuse the value.
std::optional<std::vector<bool>> nccl_enabled(std::string_view value, std::string_view func,
                                              const std::vector<std::string_view>& elems) {
  static const std::vector<std::string_view> funcs{"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  std::vector<bool> on(elems.size(), true);
  const auto entries = split_on(value, ';');
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto parts = split_on(entries[i], ':');
    if (parts.size() > 2) return std::nullopt;
    std::string_view prefix = parts.size() == 2 ? parts[0] : std::string_view(), list = parts.back();
    if (parts.size() == 1 && i > 0) return std::nullopt;  // only the first entry may lack a prefix
    if (!prefix.empty() &&
        std::none_of(funcs.begin(), funcs.end(), [&](std::string_view f) { return same_text(f, prefix); }))
      return std::nullopt;
    const bool set = list.empty() || list[0] != '^';
    if (!set) list.remove_prefix(1);
    std::vector<bool> next(elems.size(), !set);
    for (std::string_view e : split_on(list, ',')) {
      auto it = std::find_if(elems.begin(), elems.end(), [&](std::string_view x) { return same_text(x, e); });
      if (it == elems.end()) return std::nullopt;
      next[static_cast<std::size_t>(it - elems.begin())] = set;
    }
    if (prefix.empty() || same_text(prefix, func)) on = next;
  }
  return on;
}

// The one algorithm (or protocol) a stated NCCL_ALGO (NCCL_PROTO) leaves the run's collective,
// else -1 with a note saying why the run counts as NCCL's pick.
int forced(const Setting& s, const char* var, const std::vector<std::string_view>& elems,
           const std::vector<std::string>& ours, NcclRun& run) {
  if (s.line == 0) return -1;
  const std::string said = std::string(var) + "=" + s.value + " (line " + std::to_string(s.line) + ")";
  const std::string_view func = nccl_func_str(run.op);
  if (func.empty()) {
    run.notes.push_back(said + " does not apply to " + std::string(core::name(run.op)) +
                        ": NCCL runs it point-to-point, outside its algorithms and protocols");
    return -1;
  }
  const auto on = nccl_enabled(s.value, func, elems);
  if (!on) {
    run.notes.push_back(said + " is not a value NCCL takes (it would refuse the run): fitted as NCCL's pick");
    return -1;
  }
  std::string left;
  int count = 0, which = -1;
  for (std::size_t i = 0; i < on->size(); ++i) {
    if (!(*on)[i]) continue;
    ++count;
    which = static_cast<int>(i);
    left += (left.empty() ? "" : ", ") + ours[i];
  }
  if (count == 1) {
    run.notes.push_back(std::string(std::string_view(var).substr(5) == "ALGO" ? "algorithm " : "protocol ") +
                        ours[static_cast<std::size_t>(which)] + ": " + said);
    return which;
  }
  run.notes.push_back(said + " leaves " + std::string(core::name(run.op)) + " " +
                      (count == 0 ? std::string("nothing") : std::to_string(count) + " to choose from (" + left + ")") +
                      ": not one, so the rows are fitted as NCCL's pick");
  return -1;
}

NcclRun finish(const Parser& p, Table& t, const std::string& file, const ParseOptions& o) {
  NcclRun run;
  run.file = file;
  run.rows = std::move(t.rows);  // `t.rows` is not read below: the rows are `run.rows` from here
  run.tail_only = t.tail_only;
  run.warnings = t.warnings;
  run.line = t.header.line > 0 ? t.header.line : t.line;
  run.binary = !t.command.binary.empty() ? t.command.binary : t.concluded;

  find_collective(p, t, o, run);

  // The device list: its highest rank, its hosts, its GPU.
  int listed_max = 0;
  std::map<std::string, int> per_host;
  for (const auto& d : t.header.devices) {
    listed_max = std::max(listed_max, d.rank + 1);
    ++per_host[d.host];
    if (run.gpu.empty()) run.gpu = d.gpu;
  }
  run.listed_ranks = static_cast<int>(t.header.devices.size());
  run.hosts = static_cast<int>(per_host.size());
  find_ranks(p, o, listed_max, run);

  find_scope(p, o, run);
  find_ranks_per_node(p, o, per_host, run);
  run.algo = forced(t.algo, "NCCL_ALGO", kNcclAlgoStr, core::nccl_algo_names(), run);
  run.proto = forced(t.proto, "NCCL_PROTO", kNcclProtoStr, core::nccl_proto_names(), run);
  if (run.tail_only) run.notes.insert(run.notes.begin(), "tail-only log: columns inferred from the row width");
  return run;
}

}  // namespace

double NcclRow::time_s() const {
  // a half printed as 0 measured nothing (below the print resolution): the other one counts
  if (out_of_place.time_s <= 0 || in_place.time_s <= 0) return std::max(out_of_place.time_s, in_place.time_s);
  return std::min(out_of_place.time_s, in_place.time_s);
}

const std::vector<std::string>& nccl_tests_names() {
  static const std::vector<std::string> names{"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                              "broadcast",  "reduce",     "sendrecv"};
  static_assert(core::kCollectiveCount == 7);
  return names;
}

namespace {
// "alltoall" -> all_to_all: nccl-tests' own name of a collective; empty when it has none such
std::optional<Collective> of_nccl_tests_name(std::string_view name) {
  const auto& names = nccl_tests_names();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<Collective>(it - names.begin());
}
}  // namespace

std::optional<Collective> collective_of_name(const std::string& name) {
  if (auto op = core::parse<Collective>(name)) return op;
  return of_nccl_tests_name(name);
}

std::vector<std::string> collective_spellings() {
  std::vector<std::string> out;
  for (int i = 0; i < core::kCollectiveCount; ++i) out.emplace_back(core::name(static_cast<Collective>(i)));
  for (const auto& n : nccl_tests_names())
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

std::optional<Collective> collective_of_binary(const std::string& binary) {
  constexpr std::string_view suffix = "_perf";
  const std::string_view b = binary;
  if (b.size() <= suffix.size() || b.substr(b.size() - suffix.size()) != suffix) return std::nullopt;
  return of_nccl_tests_name(b.substr(0, b.size() - suffix.size()));
}

std::vector<NcclRun> parse_nccl_tests(const std::string& text, const std::string& file,
                                      const ParseOptions& options) {
  auto in_range = [](const std::optional<int>& v) { return !v || (*v >= 1 && *v <= kMaxRanks); };
  if (!in_range(options.ranks) || !in_range(options.ranks_per_node)) {
    throw ConfigError({file, 0, 0}, "a rank count given must be 1 to " + std::to_string(kMaxRanks));
  }
  Parser p(text, file);
  std::vector<NcclRun> runs;
  for (auto& t : p.tables()) runs.push_back(finish(p, t, file, options));
  return runs;
}

std::string nccl_setting_lines(const char* (*env)(const char*)) {
  std::string out;
  for (const char* var : {"NCCL_ALGO", "NCCL_PROTO"}) {
    const char* value = env(var);
    out += value && *value ? "# " + std::string(var) + "=" + value + "\n" : "# unset " + std::string(var) + "\n";
  }
  return out;
}

std::vector<NcclRun> read_nccl_tests(const std::string& path, const ParseOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({path, 0, 0}, "cannot read the nccl-tests log");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_nccl_tests(ss.str(), path, options);
}

}  // namespace ptdsim::calibrate
