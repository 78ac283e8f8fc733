// hardware.gpu.kernels: measured kernel tables and the parameters fitted to them (docs/inputs.md
// "Kernel tables"). Units converted once here: _us to seconds, _gbs to bytes/s, _tflops to FLOP/s.
#include <algorithm>
#include <memory>
#include <tuple>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/units.hpp"
#include "schema.hpp"

namespace ptdsim::io::detail {
namespace {

constexpr const char* kPrefix = "hardware.gpu.kernels";

Fields section(const Fields& parent, const Entry& e) {
  const std::string path = parent.path(e.key);
  return Fields(*e.value, e.key_mark, path, path, section_keys(path));
}

core::GemmModel convert_gemm_model(const Fields& f) {
  core::GemmModel m;
  m.rate_flops = f.required_number("tflops") * core::kTera;
  m.epilogue_Bps = f.required_number("epilogue_gbs") * core::kGB;
  m.floor_s = f.required_number("floor_us") * core::kMicro;
  m.knee = f.required_number("knee");
  m.tail = f.required_number("tail");
  m.tile_m = static_cast<int>(f.required_integer("tile_m"));
  m.tile_n = static_cast<int>(f.required_integer("tile_n"));
  return m;
}

std::vector<core::GemmTime> convert_gemm_rows(const Entry& e, const std::string& path) {
  const Node& list = *e.value;
  if (list.kind != Node::Kind::list)
    fail(list.mark.line > 0 ? list.mark : e.key_mark, path + " must be a list, got " + describe(list));
  if (list.items.empty()) fail(e.key_mark, path + " must not be an empty list");
  std::vector<core::GemmTime> rows;
  std::vector<const Node*> nodes;
  rows.reserve(list.items.size());
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    Fields r(*list.items[i], list.items[i]->mark, at, at, gemm_row_keys());
    core::GemmTime g;
    g.precision = core::parse<core::Precision>(r.required_choice("precision", {"bf16", "fp8"})).value();
    g.m = static_cast<double>(r.required_integer("m"));
    g.n = static_cast<double>(r.required_integer("n"));
    g.k = static_cast<double>(r.required_integer("k"));
    g.time_s = r.required_number("time_us") * core::kMicro;
    rows.push_back(g);
    nodes.push_back(list.items[i].get());
  }
  // sorted for the binary search of analytic::find_gemm_row; a shape measured twice is refused
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](std::size_t i) {
    const auto& r = rows[i];
    return std::make_tuple(static_cast<int>(r.precision), r.m, r.n, r.k, i);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<core::GemmTime> sorted;
  sorted.reserve(rows.size());
  for (std::size_t j = 0; j < order.size(); ++j) {
    if (j > 0) {
      const auto& a = rows[order[j - 1]];
      const auto& b = rows[order[j]];
      if (a.precision == b.precision && a.m == b.m && a.n == b.n && a.k == b.k)
        fail(nodes[order[j]]->mark, path + "[" + std::to_string(order[j]) + "] measures the same shape as " +
                                        path + "[" + std::to_string(order[j - 1]) + "]");
    }
    sorted.push_back(rows[order[j]]);
  }
  return sorted;
}

core::AttentionModel convert_attention(const Fields& f) {
  core::AttentionModel a;
  a.rate_flops = f.required_number("tflops") * core::kTera;
  a.q_Bps = f.number("q_gbs", 0.0) * core::kGB;
  a.kv_Bps = f.number("kv_gbs", 0.0) * core::kGB;
  return a;
}

core::StreamRate convert_stream(const Fields& f) {
  core::StreamRate r;
  r.forward_Bps = f.required_number("forward_gbs") * core::kGB;
  r.backward_Bps = f.required_number("backward_gbs") * core::kGB;
  return r;
}

}  // namespace

void convert_kernels(const Entry& e, core::GpuSpec& gpu) {
  Fields k(*e.value, e.key_mark, kPrefix, kPrefix, section_keys(kPrefix));
  auto t = std::make_shared<core::KernelTables>();
  t->source = k.string("source").value_or("");

  if (const Entry* g = k.get("gemm")) {
    Fields gemm = section(k, *g);
    if (const Entry* m = gemm.get("model")) {
      Fields models = section(gemm, *m);
      for (auto p : {core::Precision::bf16, core::Precision::fp8}) {
        if (const Entry* one = models.get(core::name(p)))
          t->gemm_model[static_cast<std::size_t>(core::index(p))] = convert_gemm_model(section(models, *one));
      }
      if (gpu.sms <= 0)
        fail(m->key_mark, gemm.path("model") + " needs hardware.gpu.sms: the model counts waves of tiles over the SMs");
    }
    if (const Entry* rows = gemm.get("rows")) t->gemm_rows = convert_gemm_rows(*rows, gemm.path("rows"));
    if (const Entry* f = gemm.get("fp8_kernels")) {
      Fields kernels = section(gemm, *f);
      for (int i = 0; i < core::kFp8KernelCount; ++i) {
        if (const Entry* one = kernels.get(core::name(static_cast<core::Fp8Kernel>(i))))
          t->fp8_kernels[static_cast<std::size_t>(i)] = convert_gemm_model(section(kernels, *one));
      }
      if (gpu.sms <= 0)
        fail(f->key_mark,
             gemm.path("fp8_kernels") + " needs hardware.gpu.sms: the model counts waves of tiles over the SMs");
    }
  }
  if (const Entry* a = k.get("attention")) {
    Fields att = section(k, *a);
    t->attention_forward = convert_attention(section(att, att.require("forward")));
    t->attention_backward = convert_attention(section(att, att.require("backward")));
  }
  if (const Entry* a = k.get("attention_flash2")) {
    Fields att = section(k, *a);
    t->flash2_forward = convert_attention(section(att, att.require("forward")));
    t->flash2_backward = convert_attention(section(att, att.require("backward")));
  }
  if (const Entry* m = k.get("memory_bound")) {
    Fields mb = section(k, *m);
    for (int i = 0; i < core::kMemoryOpCount; ++i) {
      if (const Entry* one = mb.get(core::name(static_cast<core::MemoryOp>(i))))
        t->memory_bound[static_cast<std::size_t>(i)] = convert_stream(section(mb, *one));
    }
  }
  if (const Entry* c = k.get("cross_entropy")) t->cross_entropy = convert_stream(section(k, *c));
  if (const Entry* o = k.get("optimizer"))
    t->optimizer_Bps = section(k, *o).required_number("gbs") * core::kGB;

  if (const Entry* c = k.get("contention")) {
    Fields con = section(k, *c);
    gpu.contention_factor = con.required_number("factor");
    if (gpu.sm_share() >= 1)
      fail(con.get("factor")->value->mark,
           con.path("factor") + " times hardware.gpu.comm_sms / hardware.gpu.sms must stay below 1, got " +
               std::to_string(gpu.sm_share()));
  }
  if (const Entry* o = k.get("overhead")) {
    Fields over = section(k, *o);
    gpu.layer_overhead_s = over.number("layer_us", 0.0) * core::kMicro;
    gpu.memory_bound_factor = over.number("memory_bound_factor", 1.0);
  }
  gpu.kernels = std::move(t);
}

}  // namespace ptdsim::io::detail
