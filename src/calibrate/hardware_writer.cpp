#include "ptdsim/calibrate/hardware_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/output.hpp"

namespace ptdsim::calibrate {
namespace {

// Numbers as the shipped files write them: enough digits for the fit, no float noise.
// (snprintf, as the shipped files were written)
std::string printed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string num(double v) { return printed("%.6g", v); }
std::string bytes(double v) { return printed("%.0f", v); }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string indent(const std::string& block, std::size_t by) {
  std::string pad(by, ' ');
  std::string out;
  for (const auto& l : split_lines(block)) out += (l.empty() ? l : pad + l) + "\n";
  return out;
}

std::string comment_block(const HardwareCalibration& c) {
  std::string out;
  for (const auto& l : c.comment) out += "# " + l + "\n";
  return out;
}

std::string emit(const YAML::Emitter& e) { return std::string(e.c_str()) + "\n"; }

std::string collectives_yaml(const std::vector<core::CollectiveFit>& rows) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "collectives" << YAML::Value << YAML::BeginMap;
  for (int op = 0; op < core::kCollectiveCount; ++op) {
    bool any = std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return static_cast<int>(r.op) == op; });
    if (!any) continue;
    e << YAML::Key << std::string(core::name(static_cast<core::Collective>(op))) << YAML::Value << YAML::BeginSeq;
    for (const auto& r : rows) {
      if (static_cast<int>(r.op) != op) continue;
      e << YAML::Flow << YAML::BeginMap;
      e << YAML::Key << "scope" << YAML::Value << std::string(core::name(r.scope));
      e << YAML::Key << "ranks" << YAML::Value << r.ranks;
      if (r.ranks_per_node > 0) e << YAML::Key << "ranks_per_node" << YAML::Value << r.ranks_per_node;
      if (!r.gpu.empty()) e << YAML::Key << "gpu" << YAML::Value << YAML::DoubleQuoted << r.gpu;
      if (r.algo >= 0) e << YAML::Key << "algorithm" << YAML::Value << core::nccl_algo_names().at(static_cast<std::size_t>(r.algo));
      if (r.proto >= 0) e << YAML::Key << "protocol" << YAML::Value << core::nccl_proto_names().at(static_cast<std::size_t>(r.proto));
      e << YAML::Key << "alpha_us" << YAML::Value << num(r.alpha_s / core::kMicro);
      e << YAML::Key << "busbw_gbs" << YAML::Value << num(r.busbw_Bps / core::kGB);
      e << YAML::Key << "min_bytes" << YAML::Value << bytes(r.min_bytes);
      if (std::isfinite(r.max_bytes)) e << YAML::Key << "max_bytes" << YAML::Value << bytes(r.max_bytes);
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  e << YAML::EndMap << YAML::EndMap;
  return emit(e);
}

std::string matmul_yaml(const std::vector<core::GemmEfficiency>& rows) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "matmul_efficiency" << YAML::Value << YAML::BeginSeq;
  for (const auto& r : rows) {
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "precision" << YAML::Value << std::string(core::name(r.precision));
    e << YAML::Key << "m" << YAML::Value << bytes(r.m);
    e << YAML::Key << "n" << YAML::Value << bytes(r.n);
    e << YAML::Key << "k" << YAML::Value << bytes(r.k);
    e << YAML::Key << "efficiency" << YAML::Value << printed("%.4f", r.efficiency);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return emit(e);
}

// One fitted GEMM model as a flow mapping under `key`.
void gemm_model_yaml(YAML::Emitter& e, const std::string& key, const core::GemmModel& m) {
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "tflops" << YAML::Value << num(m.rate_flops / core::kTera);
  e << YAML::Key << "epilogue_gbs" << YAML::Value << num(m.epilogue_Bps / core::kGB);
  e << YAML::Key << "floor_us" << YAML::Value << num(m.floor_s / core::kMicro);
  e << YAML::Key << "knee" << YAML::Value << num(m.knee);
  e << YAML::Key << "tail" << YAML::Value << num(m.tail);
  e << YAML::Key << "tile_m" << YAML::Value << m.tile_m;
  e << YAML::Key << "tile_n" << YAML::Value << m.tile_n;
  e << YAML::EndMap;
}

// gpu.kernels.gemm: the fitted model per precision and per FP8 kernel (one flow mapping each), the
// measured rows one per line.
void gemm_yaml(YAML::Emitter& e, const core::KernelTables& t) {
  bool any_model = false, any_fp8 = false;
  for (const auto& m : t.gemm_model) any_model = any_model || m.valid();
  for (const auto& m : t.fp8_kernels) any_fp8 = any_fp8 || m.valid();
  if (!any_model && !any_fp8 && t.gemm_rows.empty()) return;
  e << YAML::Key << "gemm" << YAML::Value << YAML::BeginMap;
  if (any_model) {
    e << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
    for (int p = 0; p < core::kPrecisionCount; ++p) {
      const core::GemmModel& m = t.gemm_model[static_cast<std::size_t>(p)];
      if (m.valid()) gemm_model_yaml(e, std::string(core::name(static_cast<core::Precision>(p))), m);
    }
    e << YAML::EndMap;
  }
  if (any_fp8) {
    e << YAML::Key << "fp8_kernels" << YAML::Value << YAML::BeginMap;
    for (int i = 0; i < core::kFp8KernelCount; ++i) {
      const core::GemmModel& m = t.fp8_kernels[static_cast<std::size_t>(i)];
      if (m.valid()) gemm_model_yaml(e, std::string(core::name(static_cast<core::Fp8Kernel>(i))), m);
    }
    e << YAML::EndMap;
  }
  if (!t.gemm_rows.empty()) {
    e << YAML::Key << "rows" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : t.gemm_rows) {
      e << YAML::Flow << YAML::BeginMap;
      e << YAML::Key << "precision" << YAML::Value << std::string(core::name(r.precision));
      e << YAML::Key << "m" << YAML::Value << bytes(r.m);
      e << YAML::Key << "n" << YAML::Value << bytes(r.n);
      e << YAML::Key << "k" << YAML::Value << bytes(r.k);
      e << YAML::Key << "time_us" << YAML::Value << num(r.time_s / core::kMicro);
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
}

// gpu.kernels' attention cores (`attention`, `attention_flash2`: forward and backward models) and
// memory-bound rates (`memory_bound` per operator class, `cross_entropy`, `optimizer`).
void attention_and_streams_yaml(YAML::Emitter& e, const core::KernelTables& t) {
  auto attention = [&](const char* key, const core::AttentionModel& a) {
    e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "tflops" << YAML::Value << num(a.rate_flops / core::kTera);
    if (a.q_Bps > 0) e << YAML::Key << "q_gbs" << YAML::Value << num(a.q_Bps / core::kGB);
    if (a.kv_Bps > 0) e << YAML::Key << "kv_gbs" << YAML::Value << num(a.kv_Bps / core::kGB);
    e << YAML::EndMap;
  };
  if (t.attention_forward.valid() && t.attention_backward.valid()) {
    e << YAML::Key << "attention" << YAML::Value << YAML::BeginMap;
    attention("forward", t.attention_forward);
    attention("backward", t.attention_backward);
    e << YAML::EndMap;
  }
  if (t.flash2_forward.valid() && t.flash2_backward.valid()) {
    e << YAML::Key << "attention_flash2" << YAML::Value << YAML::BeginMap;
    attention("forward", t.flash2_forward);
    attention("backward", t.flash2_backward);
    e << YAML::EndMap;
  }
  auto stream = [&](const core::StreamRate& r) {
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "forward_gbs" << YAML::Value << num(r.forward_Bps / core::kGB);
    e << YAML::Key << "backward_gbs" << YAML::Value << num(r.backward_Bps / core::kGB);
    e << YAML::EndMap;
  };
  bool any_stream = false;
  for (const auto& r : t.memory_bound) any_stream = any_stream || r.valid();
  if (any_stream) {
    e << YAML::Key << "memory_bound" << YAML::Value << YAML::BeginMap;
    for (int i = 0; i < core::kMemoryOpCount; ++i) {
      const core::StreamRate& r = t.memory_bound[static_cast<std::size_t>(i)];
      if (!r.valid()) continue;
      e << YAML::Key << std::string(core::name(static_cast<core::MemoryOp>(i))) << YAML::Value;
      stream(r);
    }
    e << YAML::EndMap;
  }
  if (t.cross_entropy.valid()) {
    e << YAML::Key << "cross_entropy" << YAML::Value;
    stream(t.cross_entropy);
  }
  if (t.optimizer_Bps > 0)
    e << YAML::Key << "optimizer" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "gbs"
      << YAML::Value << num(t.optimizer_Bps / core::kGB) << YAML::EndMap;
}

// gpu.kernels in docs/inputs.md's layout: the fitted parameters as flow mappings, one measured
// GEMM per line, then the end-to-end constants fitted beside the tables (SM contention, overheads).
std::string kernels_yaml(const HardwareCalibration::Kernels& k) {
  const core::KernelTables& t = k.tables;
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "kernels" << YAML::Value << YAML::BeginMap;
  if (!t.source.empty()) e << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << t.source;
  gemm_yaml(e, t);
  attention_and_streams_yaml(e, t);
  if (k.contention_factor)
    e << YAML::Key << "contention" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "factor"
      << YAML::Value << num(*k.contention_factor) << YAML::EndMap;
  if (k.layer_overhead_s || k.memory_bound_factor) {
    e << YAML::Key << "overhead" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (k.layer_overhead_s) e << YAML::Key << "layer_us" << YAML::Value << num(*k.layer_overhead_s / core::kMicro);
    if (k.memory_bound_factor) e << YAML::Key << "memory_bound_factor" << YAML::Value << num(*k.memory_bound_factor);
    e << YAML::EndMap;
  }
  e << YAML::EndMap << YAML::EndMap;
  return emit(e);
}

std::string scalar_yaml(const std::string& key, const std::string& value) { return key + ": " + value + "\n"; }

// The sections of the gpu mapping, in the order they are written.
std::vector<std::pair<std::string, std::string>> gpu_sections(const HardwareCalibration& c) {
  std::vector<std::pair<std::string, std::string>> out;
  if (c.hbm_efficiency) out.emplace_back("hbm_efficiency", scalar_yaml("hbm_efficiency", printed("%.3f", *c.hbm_efficiency)));
  if (!c.matmul_table.empty()) out.emplace_back("matmul_efficiency", matmul_yaml(c.matmul_table));
  if (c.kernel_launch_s) out.emplace_back("kernel_launch_us", scalar_yaml("kernel_launch_us", num(*c.kernel_launch_s / core::kMicro)));
  if (c.kernels) out.emplace_back("kernels", kernels_yaml(*c.kernels));
  return out;
}

bool blank_or_comment(const std::string& line) {
  auto p = line.find_first_not_of(" \t");
  return p == std::string::npos || line[p] == '#';
}

YAML::Node load(const std::string& text, const std::string& name) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) throw core::ConfigError({name, 1, 1}, "a hardware file must be a YAML mapping");
    return root;
  } catch (const YAML::Exception& e) {
    throw core::ConfigError({name, e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
}

// The lines [first, end) that the value of `key` occupies in block-style mapping `map`, whose own
// block ends at `map_end`; trailing blank and comment lines belong to what follows.
struct Span {
  int first = -1, end = -1, column = 0;
};
Span span_of(const YAML::Node& map, const std::string& key, int map_end, const std::vector<std::string>& lines) {
  Span s;
  std::vector<std::pair<int, std::string>> keys;
  for (auto it = map.begin(); it != map.end(); ++it) keys.emplace_back(it->first.Mark().line, it->first.as<std::string>());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].second != key) continue;
    s.first = keys[i].first;
    s.end = i + 1 < keys.size() ? keys[i + 1].first : map_end;
    auto it = map.begin();
    std::advance(it, static_cast<long>(i));
    s.column = it->first.Mark().column;
  }
  while (s.end > s.first + 1 && blank_or_comment(lines[static_cast<std::size_t>(s.end - 1)])) --s.end;
  return s;
}

// Replaces (or adds at the end of `map`) the entry `key` with `block`, indented to the map's keys.
std::string splice(const std::string& text, const YAML::Node& map, int map_end, const std::string& key,
                   const std::string& block, const std::string& comment) {
  auto lines = split_lines(text);
  map_end = std::min(map_end, static_cast<int>(lines.size()));
  Span s = span_of(map, key, map_end, lines);
  std::size_t column = map.size() ? static_cast<std::size_t>(map.begin()->first.Mark().column) : 0;
  std::vector<std::string> repl = split_lines(indent(comment + block, column));
  if (s.first >= 0) {
    // the same comment written above the key by an earlier run is replaced, not repeated
    const std::vector<std::string> said = split_lines(indent(comment, column));
    const int n = static_cast<int>(said.size());
    if (n > 0 && s.first >= n && std::equal(said.begin(), said.end(), lines.begin() + (s.first - n))) s.first -= n;
    lines.erase(lines.begin() + s.first, lines.begin() + s.end);
    lines.insert(lines.begin() + s.first, repl.begin(), repl.end());
  } else {
    // trailing blank and comment lines belong to what follows, unless a comment is indented
    // deeper than the map's keys: then it continues the last entry's comment
    auto belongs_after = [&](const std::string& l) {
      const auto indent = l.find_first_not_of(" \t");
      return indent == std::string::npos || (l[indent] == '#' && indent <= column);
    };
    int at = map_end;
    while (at > 0 && belongs_after(lines[static_cast<std::size_t>(at - 1)])) --at;
    if (column == 0 && at == static_cast<int>(lines.size())) repl.insert(repl.begin(), "");
    lines.insert(lines.begin() + at, repl.begin(), repl.end());
  }
  return join_lines(lines);
}

// The line after the last line of top-level entry `key` (the next top-level key's line, or EOF).
int top_level_end(const YAML::Node& root, const std::string& key, int eof) {
  bool found = false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (found) return it->first.Mark().line;
    if (it->first.as<std::string>() == key) found = true;
  }
  return eof;
}

}  // namespace

std::string calibration_yaml(const HardwareCalibration& c) {
  std::string out;
  auto gpu = gpu_sections(c);
  if (!gpu.empty()) {
    out += "gpu:\n";
    for (const auto& [key, block] : gpu) out += indent(block, 2);
  }
  if (!c.collectives.empty()) out += collectives_yaml(c.collectives);
  return out;
}

std::string merge_calibration(const std::string& base_text, const std::string& base_name,
                              const HardwareCalibration& c) {
  std::string text = base_text;
  if (!text.empty() && text.back() != '\n') text += "\n";
  const std::string comment = comment_block(c);
  for (const auto& [key, block] : gpu_sections(c)) {
    YAML::Node root = load(text, base_name);
    YAML::Node gpu = root["gpu"];
    int eof = static_cast<int>(split_lines(text).size());
    if (!gpu || !gpu.IsMap() || gpu.Style() == YAML::EmitterStyle::Flow) {
      throw core::ConfigError({base_name, gpu ? gpu.Mark().line + 1 : 0, gpu ? gpu.Mark().column + 1 : 0},
                              "hardware.gpu must be a block mapping to take calibrated values");
    }
    const bool commented = key == "matmul_efficiency" || key == "kernels";
    text = splice(text, gpu, top_level_end(root, "gpu", eof), key, block, commented ? comment : "");
  }
  if (c.kernels) {
    // the scalar model's factor (times at hbm_efficiency) means nothing beside tables, whose own is
    // kernels.overhead.memory_bound_factor; the loader refuses the two together
    YAML::Node root = load(text, base_name);
    YAML::Node gpu = root["gpu"];
    if (gpu["memory_bound_factor"])
      text = splice(text, gpu, top_level_end(root, "gpu", static_cast<int>(split_lines(text).size())),
                    "memory_bound_factor", "", "");
  }
  if (!c.collectives.empty()) {
    YAML::Node root = load(text, base_name);
    int eof = static_cast<int>(split_lines(text).size());
    text = splice(text, root, eof, "collectives", collectives_yaml(c.collectives), comment);
  }
  load(text, base_name);  // what was spliced must still parse
  return text;
}

void write_calibrated_hardware(const std::string& out_path, const std::optional<std::string>& base_path,
                               const HardwareCalibration& c) {
  std::string text;
  if (base_path) {
    std::ifstream in(*base_path, std::ios::binary);
    if (!in) throw core::ConfigError({*base_path, 0, 0}, "cannot read the base hardware file");
    std::stringstream ss;
    ss << in.rdbuf();
    text = merge_calibration(ss.str(), *base_path, c);
    // what is written must load as a hardware file; a problem is the calibration's (the base loads),
    // and the output is not written: the message must not send the user to it
    io::load_hardware_from_string(text, "the calibrated hardware (from " + *base_path + "; " + out_path + " not written)");
  } else if (gpu_sections(c).empty()) {
    text = "# A \"collectives only\" fragment written by ptdsim calibration: it is not a loadable hardware\n"
           "# file (no gpu/node/network). Merge it into one with --base HARDWARE.yaml.\n" +
           comment_block(c) + calibration_yaml(c);
  } else {
    text = "# A fragment written by ptdsim calibration: it is not a loadable hardware file (the gpu mapping\n"
           "# holds only what was measured; no node/network). Merge it into one with --base HARDWARE.yaml.\n" +
           comment_block(c) + calibration_yaml(c);
  }
  io::write_output(out_path, text);
}

}  // namespace ptdsim::calibrate
