// Reading the measured kernel tables (docs/calibration.md "Kernel tables"): plain comma-separated
// files whose first line names the columns. Columns are found by name, so extra columns (the
// tables' derived TFLOP/s and GB/s, the model a shape belongs to) and any column order are fine.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ptdsim/calibrate/kernels.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate {
namespace {

using core::ConfigError;

struct Cell {
  std::string text;
  int column = 0;  // 1-based
};
struct Row {
  int line = 0;
  std::vector<Cell> cells;
};

class Csv {
 public:
  Csv(const std::string& text, std::string file) : file_(std::move(file)) {
    std::stringstream ss(text);
    int n = 0;
    for (std::string l; std::getline(ss, l);) {
      ++n;
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines_.push_back(l);
      if (l.find_first_not_of(" \t") == std::string::npos) continue;
      Row r;
      r.line = n;
      std::size_t start = 0;
      for (;;) {
        const std::size_t comma = l.find(',', start);
        r.cells.push_back({trim(l.substr(start, comma == std::string::npos ? std::string::npos : comma - start)),
                           static_cast<int>(start) + 1});
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      (header_.line == 0 ? header_ : rows_.emplace_back()) = std::move(r);
    }
    if (header_.line == 0) fail(1, 1, "empty file: expected a header line naming the columns");
    for (std::size_t i = 0; i < header_.cells.size(); ++i) index_[header_.cells[i].text] = i;
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

  double positive(const Row& r, const std::string& name) const {
    const Cell& c = cell(r, name);
    double v = 0;
    auto [end, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), v);
    if (c.text.empty() || ec != std::errc() || end != c.text.data() + c.text.size() || !std::isfinite(v) || v <= 0)
      fail(r.line, c.column, name + " must be a positive number, got '" + c.text + "'");
    return v;
  }
  double positive_integer(const Row& r, const std::string& name) const {
    const double v = positive(r, name);
    if (v != std::floor(v))
      fail(r.line, cell(r, name).column, name + " must be a positive integer, got '" + cell(r, name).text + "'");
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
    fail(r.line, c.column, name + " must be one of " + list + ", got '" + c.text + "'");
  }
  // `later` minus `earlier` of one row, which must be positive (a backward time from fwd_bwd - fwd).
  double difference(const Row& r, const std::string& later, const std::string& earlier) const {
    const double a = positive(r, later), b = positive(r, earlier);
    if (a <= b) fail(r.line, cell(r, later).column, later + " must exceed " + earlier + " (the backward is their difference)");
    return a - b;
  }

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    const std::string source = line > 0 && line <= static_cast<int>(lines_.size()) ? lines_[line - 1] : "";
    throw ConfigError({file_, line, column}, message, source);
  }

 private:
  static std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t") - a + 1);
  }

  std::string file_;
  std::vector<std::string> lines_;
  Row header_;
  std::vector<Row> rows_;
  std::map<std::string, std::size_t> index_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({path, 0, 0}, "cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<GemmMeasurement> parse_gemm_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"precision", "m", "n", "k", "time_s"});
  std::vector<GemmMeasurement> out;
  for (const auto& r : csv.rows()) {
    GemmMeasurement g;
    g.precision = csv.choice<core::Precision>(r, "precision", {{"bf16", core::Precision::bf16}, {"fp8", core::Precision::fp8}});
    g.m = csv.positive_integer(r, "m");
    g.n = csv.positive_integer(r, "n");
    g.k = csv.positive_integer(r, "k");
    g.time_s = csv.positive(r, "time_s");
    if (csv.has("hidden")) g.hidden = static_cast<int>(csv.positive_integer(r, "hidden"));
    out.push_back(g);
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
    a.heads = csv.positive_integer(r, "heads");
    a.kv_heads = csv.positive_integer(r, "kv_heads");
    a.head_dim = csv.positive_integer(r, "head_dim");
    a.seq = csv.positive_integer(r, "seq");
    a.batch = csv.positive_integer(r, "batch");
    a.causal = csv.choice<bool>(r, "causal", {{"True", true}, {"true", true}, {"False", false}, {"false", false}});
    a.forward_s = csv.positive(r, "fwd_s");
    a.backward_s = csv.difference(r, "fwd_bwd_s", "fwd_s");
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
    e.elements = csv.positive_integer(r, "tokens") * csv.positive_integer(r, "width");
    e.forward_s = csv.positive(r, "fwd_s");
    e.backward_s = csv.difference(r, "fwd_bwd_s", "fwd_s");
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
    c.elements = csv.positive_integer(r, "tokens") *
                 std::floor(csv.positive_integer(r, "vocab") / csv.positive_integer(r, "tp"));
    c.forward_s = csv.positive(r, "fwd_s");
    c.backward_s = csv.difference(r, "fwd_bwd_s", "fwd_s");
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
    o.params = csv.positive_integer(r, "params");
    o.time_s = csv.positive(r, "time_s");
    o.bytes_per_param = csv.positive(r, "bytes_per_param_moved");
    out.push_back(o);
  }
  return out;
}

std::vector<ContentionMeasurement> parse_contention_csv(const std::string& text, const std::string& name) {
  Csv csv(text, name);
  csv.require({"m", "n", "k", "blocks", "gemm_alone_s", "gemm_with_copy_s"});
  std::vector<ContentionMeasurement> out;
  for (const auto& r : csv.rows()) {
    csv.positive_integer(r, "m");
    csv.positive_integer(r, "n");
    csv.positive_integer(r, "k");
    ContentionMeasurement c;
    c.blocks = csv.positive_integer(r, "blocks");
    c.alone_s = csv.positive(r, "gemm_alone_s");
    c.with_copy_s = csv.positive(r, "gemm_with_copy_s");
    out.push_back(c);
  }
  return out;
}

KernelMeasurements read_kernel_tables(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw ConfigError({dir, 0, 0}, "not a directory of kernel tables");
  KernelMeasurements m;
  auto take = [&](const char* file, auto parse, auto& into) {
    const std::string path = (fs::path(dir) / file).string();
    if (!fs::exists(path)) return;
    into = parse(read_text(path), path);
    m.files.push_back(path);
  };
  take("gemm.csv", parse_gemm_csv, m.gemm);
  take("attention.csv", parse_attention_csv, m.attention);
  take("attention_flash2.csv", parse_attention_csv, m.attention_flash2);
  take("elementwise.csv", parse_elementwise_csv, m.elementwise);
  take("cross_entropy.csv", parse_cross_entropy_csv, m.cross_entropy);
  take("optimizer.csv", parse_optimizer_csv, m.optimizer);
  take("contention.csv", parse_contention_csv, m.contention);
  if (m.files.empty())
    throw ConfigError({dir, 0, 0},
                      "no kernel tables here: expected one or more of gemm.csv, attention.csv, attention_flash2.csv, "
                      "elementwise.csv, cross_entropy.csv, optimizer.csv, contention.csv");
  return m;
}

}  // namespace ptdsim::calibrate
