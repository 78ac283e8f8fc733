// Reading the measured kernel tables (docs/calibration.md "Kernel tables"): comma-separated files
// (RFC 4180: a field may be quoted, holding commas, doubled quotes and line breaks; a UTF-8 byte-order
// mark is skipped) whose first record names the columns. Columns are found by name, so extra columns
// (the tables' derived TFLOP/s and GB/s, the model a shape belongs to) and any column order are fine;
// a name given twice is refused. Every value read has a documented range (kColumns), so the fits
// never see a time of 1e-300 s or a GEMM side of 2^63.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "ptdsim/core/printable.hpp"
#include "ptdsim/calibrate/kernel_tables.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/load.hpp"
namespace ptdsim::calibrate {
namespace {

using core::ConfigError;

// As for YAML inputs (src/io/yaml_tree.cpp): 4 MiB, 50x the largest shipped table (52 KB); a 64 MB
// table would take 14 s and 0.9 GB to read. Rows are capped too (a table of blank fields is short).
constexpr std::size_t kMaxTableBytes = std::size_t{4} << 20;
constexpr std::size_t kMaxRows = 100000;

// A column's valid range, inclusive (docs/calibration.md "Valid ranges of the columns"): the range of
// the scenario or hardware key the value stands for where there is one, so that a row describes a
// kernel a scenario could run. Times: 10 ns (below any kernel launch, ~2 us) to 1000 s (the longest
// kernel a hardware file's gemm.rows may hold).
struct ColumnRange {
  const char* name;
  double min, max;
  bool integer;
};
std::vector<ColumnRange> column_ranges() {
  auto key = [](const char* column, const char* schema_key, bool integer) {
    const io::ValidRange r = io::valid_range(schema_key);
    return ColumnRange{column, std::max(r.min, integer ? 1.0 : 0.0), r.max, integer};
  };
  constexpr double kMinTime = 1e-8, kMaxTime = 1000;
  return {key("m", "hardware.gpu.kernels.gemm.rows[].m", true),
          key("n", "hardware.gpu.kernels.gemm.rows[].n", true),
          key("k", "hardware.gpu.kernels.gemm.rows[].k", true),
          key("hidden", "model.hidden", true),
          key("heads", "model.heads", true),
          key("kv_heads", "model.kv_heads", true),
          ColumnRange{"head_dim", 1, 65536, true},  // 256x the widest head shipped (Gemma's 256)
          key("seq", "training.seq_len", true),
          key("batch", "training.micro_batch", true),
          key("tokens", "model.max_seq_len", true),  // tokens of one kernel: at most a micro-batch's
          key("width", "model.ffn_hidden", true),
          key("vocab", "model.vocab", true),
          key("tp", "parallel.tp", true),
          ColumnRange{"params", 1, 1e15, true},      // parameters: 1000x any model trained
          ColumnRange{"bytes_per_param_moved", 1, 1024, false},
          key("blocks", "hardware.gpu.sms", true),
          {"time_s", kMinTime, kMaxTime, false},
          {"fwd_s", kMinTime, kMaxTime, false},
          {"fwd_bwd_s", kMinTime, kMaxTime, false},
          {"gemm_alone_s", kMinTime, kMaxTime, false},
          {"gemm_with_copy_s", kMinTime, kMaxTime, false}};
}
const ColumnRange& range_of(const std::string& column) {
  static const std::vector<ColumnRange> all = column_ranges();
  for (const auto& r : all)
    if (column == r.name) return r;
  throw std::logic_error("kernel tables: no range for column " + column);
}

struct Cell {
  std::string text;
  int column = 0;  // 1-based byte column of the field's first character
};
struct Row {
  int line = 0;
  std::vector<Cell> cells;
};

// A field's text without the spaces and tabs around it (outside quotes).
std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

class Csv {
 public:
  Csv(const std::string& input, std::string file) : file_(std::move(file)) {
    if (input.size() > kMaxTableBytes)
      fail(0, 0, fmt::format("table too large: more than {} bytes (the shipped tables are under 60 KB)", kMaxTableBytes));
    std::string_view text(input);
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
    split_lines(text);
    parse(text);
    if (header_.line == 0) fail(1, 1, "empty file: expected a header line naming the columns");
    for (std::size_t i = 0; i < header_.cells.size(); ++i) {
      const Cell& c = header_.cells[i];
      if (c.text.empty()) continue;
      const auto [it, fresh] = index_.emplace(c.text, i);
      if (!fresh)
        fail(header_.line, c.column,
             fmt::format("column '{}' appears twice (first at column {}): which one holds the values?", core::printable(c.text),
                         header_.cells[it->second].column));
    }
    for (const auto& row : rows_) {
      if (row.cells.size() != header_.cells.size())
        fail(row.line, 1,
             "row has " + std::to_string(row.cells.size()) + " columns, the header (line " +
                 std::to_string(header_.line) + ") has " + std::to_string(header_.cells.size()));
    }
    if (rows_.empty()) fail(header_.line, 1, "no rows after the header");
  }

  const std::vector<Row>& rows() const { return rows_; }

  // Fails at the header unless every column named is there.
  void require(const std::vector<std::string>& names) const {
    for (const auto& n : names)
      if (!index_.count(n)) fail(header_.line, 1, "missing column '" + n + "'");
  }
  bool has(const std::string& name) const { return index_.count(name) > 0; }

  const Cell& cell(const Row& r, const std::string& name) const { return r.cells[index_.at(name)]; }

  // A positive number in the column's valid range (range_of); an integer where the column counts.
  double value(const Row& r, const std::string& name) const {
    const Cell& c = cell(r, name);
    const ColumnRange& range = range_of(name);
    double v = 0;
    auto [end, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), v);
    const bool number = !c.text.empty() && end == c.text.data() + c.text.size() &&
                        (ec == std::errc() || ec == std::errc::result_out_of_range);
    if (!number || std::isnan(v) || v <= 0)
      fail(r.line, c.column, name + " must be a positive number, got '" + core::printable(c.text) + "'");
    if (range.integer && v != std::floor(v))
      fail(r.line, c.column, name + " must be a positive integer, got '" + core::printable(c.text) + "'");
    if (ec != std::errc() || v < range.min || v > range.max)
      fail(r.line, c.column,
           fmt::format("{} must be from {:g} to {:g}, got '{}'", name, range.min, range.max, core::printable(c.text)));
    return v;
  }
  // One of `choices` (given as the spelling in the file and the value it stands for).
  template <class T>
  T choice(const Row& r, const std::string& name, const std::vector<std::pair<std::string, T>>& choices) const {
    const Cell& c = cell(r, name);
    std::string list;
    for (const auto& [text, value] : choices) {
      if (text == c.text) return value;
      list += (list.empty() ? "" : ", ") + text;
    }
    fail(r.line, c.column, name + " must be one of " + list + ", got '" + core::printable(c.text) + "'");
  }
  // `later` minus `earlier` of one row, which must be positive (a backward time from fwd_bwd - fwd).
  double difference(const Row& r, const std::string& later, const std::string& earlier) const {
    const double a = value(r, later), b = value(r, earlier);
    if (a <= b) fail(r.line, cell(r, later).column, later + " must exceed " + earlier + " (the backward is their difference)");
    return a - b;
  }

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    const std::string source = line > 0 && line <= static_cast<int>(lines_.size()) ? lines_[line - 1] : "";
    throw ConfigError({file_, line, column}, message, source);
  }

 private:
  void split_lines(std::string_view text) {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t nl = text.find('\n', start);
      std::string l(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines_.push_back(std::move(l));
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
  }

  // RFC 4180 records: fields split at commas outside quotes, records at line ends outside quotes
  // (LF or CRLF); a quoted field's "" is one quote. A record with nothing but blanks is skipped.
  void parse(std::string_view text) {
    int line = 1;
    std::size_t line_start = 0;
    std::size_t i = 0;
    Row row;
    std::string field;
    int field_column = 1;
    bool quoted = false, any_quote = false;
    auto column_of = [&](std::size_t at) { return static_cast<int>(at - line_start) + 1; };
    auto end_field = [&] {
      row.cells.push_back({any_quote ? field : trim(field), field_column});
      field.clear();
      any_quote = false;
    };
    auto end_record = [&] {
      end_field();
      const bool blank = row.cells.size() == 1 && row.cells[0].text.empty();
      if (!blank) {
        if (header_.line == 0) header_ = std::move(row);
        else if (rows_.size() >= kMaxRows) fail(row.line, 1, fmt::format("more than {} rows", kMaxRows));
        else rows_.push_back(std::move(row));
      }
      row = Row{};
    };
    row.line = 1;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '"' && !any_quote && trim(field).empty()) {
        // an opening quote: the field is what follows, to the closing quote
        const int open_line = line, open_column = column_of(i);
        field.clear();
        any_quote = true;
        quoted = true;
        field_column = open_column;
        ++i;
        while (quoted) {
          if (i >= text.size()) fail(open_line, open_column, "unclosed quote: this field has no closing '\"'");
          const char q = text[i++];
          if (q == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
            } else {
              quoted = false;
            }
          } else {
            if (q == '\n') {
              ++line;
              line_start = i;
            }
            field += q;
          }
        }
        // only blanks may follow the closing quote before the comma or the line end
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          fail(line, column_of(i), "expected ',' or the end of the line after a quoted field");
        continue;
      }
      if (c == '"') fail(line, column_of(i), "a quote inside an unquoted field: quote the whole field (\"a \"\"b\"\"\")");
      if (c == ',') {
        end_field();
        field_column = column_of(i + 1);
        ++i;
      } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
        end_record();
        i += c == '\r' ? 2 : 1;
        ++line;
        line_start = i;
        row.line = line;
        field_column = 1;
      } else {
        field += c;
        ++i;
      }
    }
    if (!field.empty() || any_quote || !row.cells.empty()) end_record();
  }

  std::string file_;
  std::vector<std::string> lines_;
  Row header_;
  std::vector<Row> rows_;
  std::map<std::string, std::size_t> index_;
};

// The file's text, or a ConfigError naming it: not a regular file (a directory, a symlink loop, a
// device), unreadable, or above the size cap (read one byte past it, no further).
std::string read_text(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec) throw ConfigError({path, 0, 0}, "cannot read the file (" + ec.message() + ")");
  if (!fs::is_regular_file(st)) throw ConfigError({path, 0, 0}, "not a regular file (a kernel table is a CSV file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({path, 0, 0}, "cannot read the file");
  std::string content(kMaxTableBytes + 1, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  if (in.bad()) throw ConfigError({path, 0, 0}, "cannot read the file");
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}

}  // namespace

std::vector<GemmMeasurement> parse_gemm_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"precision", "m", "n", "k", "time_s"});
  std::vector<GemmMeasurement> out;
  for (const auto& r : csv.rows()) {
    GemmMeasurement g;
    g.precision = csv.choice<core::Precision>(r, "precision", {{"bf16", core::Precision::bf16}, {"fp8", core::Precision::fp8}});
    g.m = csv.value(r, "m");
    g.n = csv.value(r, "n");
    g.k = csv.value(r, "k");
    g.time_s = csv.value(r, "time_s");
    if (csv.has("hidden")) g.hidden = static_cast<int>(csv.value(r, "hidden"));
    g.line = r.line;
    out.push_back(g);
  }
  return out;
}

std::array<std::vector<GemmMeasurement>, core::kFp8KernelCount> parse_gemm_fp8_csv(const std::string& text,
                                                                                  const std::string& name) {
  Csv csv(text, name);
  csv.require({"kernel", "m", "n", "k", "time_s"});
  std::array<std::vector<GemmMeasurement>, core::kFp8KernelCount> out;
  constexpr int kTensorwise = -1;  // gemm.csv's fp8 kernel, timed again beside the others
  std::vector<std::pair<std::string, int>> kernels{{"tensorwise", kTensorwise}};
  for (int i = 0; i < core::kFp8KernelCount; ++i)
    kernels.emplace_back(std::string(core::name(static_cast<core::Fp8Kernel>(i))), i);
  for (const auto& r : csv.rows()) {
    const int kernel = csv.choice<int>(r, "kernel", kernels);
    GemmMeasurement g;
    g.precision = core::Precision::fp8;
    g.m = csv.value(r, "m");
    g.n = csv.value(r, "n");
    g.k = csv.value(r, "k");
    g.time_s = csv.value(r, "time_s");
    g.line = r.line;
    if (kernel != kTensorwise) out[static_cast<std::size_t>(kernel)].push_back(g);
  }
  return out;
}

std::vector<AttentionMeasurement> parse_attention_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"heads", "kv_heads", "head_dim", "seq", "batch", "causal", "fwd_s", "fwd_bwd_s"});
  std::vector<AttentionMeasurement> out;
  for (const auto& r : csv.rows()) {
    if (csv.has("precision"))
      csv.choice<int>(r, "precision", {{"bf16", 0}});  // the attention core runs in bf16 (fp16 alike)
    AttentionMeasurement a;
    a.heads = csv.value(r, "heads");
    a.kv_heads = csv.value(r, "kv_heads");
    // grouped-query attention: each key/value head serves heads / kv_heads query heads (the `kernel`
    // command and a model's kv_heads take the same rule)
    if (std::fmod(a.heads, a.kv_heads) != 0)
      csv.fail(r.line, csv.cell(r, "kv_heads").column,
               fmt::format("kv_heads {:g} must divide heads {:g}", a.kv_heads, a.heads));
    a.head_dim = csv.value(r, "head_dim");
    a.seq = csv.value(r, "seq");
    a.batch = csv.value(r, "batch");
    a.causal = csv.choice<bool>(r, "causal", {{"True", true}, {"true", true}, {"False", false}, {"false", false}});
    a.forward_s = csv.value(r, "fwd_s");
    a.backward_s = csv.difference(r, "fwd_bwd_s", "fwd_s");
    a.line = r.line;
    out.push_back(a);
  }
  return out;
}

std::vector<ElementwiseMeasurement> parse_elementwise_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"op", "tokens", "width", "fwd_s", "fwd_bwd_s"});
  const std::vector<std::pair<std::string, core::MemoryOp>> ops{
      {"layernorm", core::MemoryOp::layernorm}, {"rmsnorm", core::MemoryOp::rmsnorm},
      {"gelu_tanh", core::MemoryOp::gelu},      {"gelu", core::MemoryOp::gelu},
      {"swiglu", core::MemoryOp::swiglu},       {"dropout", core::MemoryOp::dropout},
      {"residual_add", core::MemoryOp::residual_add}};
  std::vector<ElementwiseMeasurement> out;
  for (const auto& r : csv.rows()) {
    ElementwiseMeasurement e;
    e.op = csv.choice(r, "op", ops);
    e.elements = csv.value(r, "tokens") * csv.value(r, "width");
    e.forward_s = csv.value(r, "fwd_s");
    e.backward_s = csv.difference(r, "fwd_bwd_s", "fwd_s");
    e.line = r.line;
    out.push_back(e);
  }
  return out;
}

std::vector<CrossEntropyMeasurement> parse_cross_entropy_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"vocab", "tp", "tokens", "fwd_s", "fwd_bwd_s"});
  std::vector<CrossEntropyMeasurement> out;
  for (const auto& r : csv.rows()) {
    CrossEntropyMeasurement c;
    const double vocab = csv.value(r, "vocab"), tp = csv.value(r, "tp");
    if (tp > vocab) csv.fail(r.line, csv.cell(r, "tp").column, fmt::format("tp {:g} exceeds the vocab {:g}", tp, vocab));
    c.elements = csv.value(r, "tokens") * std::floor(vocab / tp);
    c.forward_s = csv.value(r, "fwd_s");
    c.backward_s = csv.difference(r, "fwd_bwd_s", "fwd_s");
    c.line = r.line;
    out.push_back(c);
  }
  return out;
}

std::vector<OptimizerMeasurement> parse_optimizer_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"op", "params", "time_s", "bytes_per_param_moved"});
  std::vector<OptimizerMeasurement> out;
  for (const auto& r : csv.rows()) {
    csv.choice<int>(r, "op", {{"adamw_fused_fp32", 0}});
    OptimizerMeasurement o;
    o.params = csv.value(r, "params");
    o.time_s = csv.value(r, "time_s");
    o.bytes_per_param = csv.value(r, "bytes_per_param_moved");
    o.line = r.line;
    out.push_back(o);
  }
  return out;
}

std::vector<ContentionMeasurement> parse_contention_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"m", "n", "k", "blocks", "gemm_alone_s", "gemm_with_copy_s"});
  std::vector<ContentionMeasurement> out;
  for (const auto& r : csv.rows()) {
    csv.value(r, "m");
    csv.value(r, "n");
    csv.value(r, "k");
    ContentionMeasurement c;
    c.blocks = csv.value(r, "blocks");
    c.alone_s = csv.value(r, "gemm_alone_s");
    c.with_copy_s = csv.value(r, "gemm_with_copy_s");
    c.line = r.line;
    out.push_back(c);
  }
  return out;
}

KernelMeasurements read_kernel_tables(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw ConfigError({dir, 0, 0}, "cannot read the directory (" + ec.message() + ")");
  if (!fs::is_directory(st)) throw ConfigError({dir, 0, 0}, "not a directory of kernel tables");
  KernelMeasurements m;
  m.dir = dir;
  auto take = [&](const char* file, auto parse, auto& into) {
    const std::string path = (fs::path(dir) / file).string();
    // a dangling link or a loop is there (read_text names what is wrong with it); nothing is not
    std::error_code missing;
    if (!fs::exists(fs::symlink_status(path, missing))) return;
    into = parse(read_text(path), path);
    m.files.push_back(path);
  };
  take("gemm.csv", parse_gemm_csv, m.gemm);
  take("gemm_fp8.csv", parse_gemm_fp8_csv, m.gemm_fp8);
  take("attention.csv", parse_attention_csv, m.attention);
  take("attention_flash2.csv", parse_attention_csv, m.attention_flash2);
  take("elementwise.csv", parse_elementwise_csv, m.elementwise);
  take("cross_entropy.csv", parse_cross_entropy_csv, m.cross_entropy);
  take("optimizer.csv", parse_optimizer_csv, m.optimizer);
  take("contention.csv", parse_contention_csv, m.contention);
  if (m.files.empty())
    throw ConfigError({dir, 0, 0},
                      "no kernel tables here: expected one or more of gemm.csv, gemm_fp8.csv, attention.csv, "
                      "attention_flash2.csv, elementwise.csv, cross_entropy.csv, optimizer.csv, contention.csv");
  return m;
}

}  // namespace ptdsim::calibrate
