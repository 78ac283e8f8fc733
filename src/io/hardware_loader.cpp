#include <algorithm>
#include <cmath>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/units.hpp"
#include "schema.hpp"

namespace ptdsim::io::detail {
namespace {

core::Link convert_link(const Fields& f) {
  core::Link l;
  l.bandwidth_Bps = f.required_number("bandwidth_gbs") * core::kGB;
  l.latency_s = f.required_number("latency_us") * core::kMicro;
  l.efficiency = f.number("efficiency", 1.0);
  return l;
}

const Node& expect_list(const Entry& e, const std::string& what) {
  const Node& n = *e.value;
  if (n.kind != Node::Kind::list)
    fail(n.mark.line > 0 ? n.mark : e.key_mark, what + " must be a list, got " + describe(n));
  return n;
}

std::vector<core::GemmEfficiency> convert_matmul_table(const Entry& e) {
  std::vector<core::GemmEfficiency> rows;
  const Node& list = *e.value;
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const std::string at = "hardware.gpu.matmul_efficiency[" + std::to_string(i) + "]";
    Fields r(*list.items[i], list.items[i]->mark, at, at, matmul_row_keys());
    core::GemmEfficiency g;
    g.precision = r.required_enumeration<core::Precision>("precision", core::kPrecisionCount);
    g.m = static_cast<double>(r.required_integer("m"));
    g.n = static_cast<double>(r.required_integer("n"));
    g.k = static_cast<double>(r.required_integer("k"));
    g.efficiency = r.required_number("efficiency");
    rows.push_back(g);
  }
  if (rows.empty()) fail(e.key_mark, "hardware.gpu.matmul_efficiency must not be an empty list");
  return rows;
}

std::vector<core::CollectiveFit> convert_collectives(const Fields& f) {
  std::vector<core::CollectiveFit> out;
  for (int c = 0; c < core::kCollectiveCount; ++c) {
    const auto op = static_cast<core::Collective>(c);
    const std::string key(core::name(op));
    const Entry* e = f.get(key);
    if (!e) continue;
    const Node& list = expect_list(*e, f.path(key));
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const std::string at = f.path(key) + "[" + std::to_string(i) + "]";
      Fields r(*list.items[i], list.items[i]->mark, at, at, collective_row_keys());
      core::CollectiveFit fit;
      fit.op = op;
      fit.scope = r.required_enumeration<core::Scope>("scope", 2);
      fit.ranks = static_cast<int>(r.required_integer("ranks"));
      // what the row was measured on (docs/inputs.md "Collectives"): GPUs per node and the part
      fit.ranks_per_node = static_cast<int>(r.integer("ranks_per_node", 0));
      if (fit.ranks_per_node > 0 &&
          (fit.ranks % fit.ranks_per_node != 0 || (fit.scope == core::Scope::intra && fit.ranks_per_node != fit.ranks)))
        fail(r.get("ranks_per_node")->value->mark,
             r.path("ranks_per_node") + (fit.scope == core::Scope::intra ? " must equal ranks (" : " must divide ranks (") +
                 std::to_string(fit.ranks) + ")" + (fit.scope == core::Scope::intra ? " for scope intra" : ""));
      fit.gpu = r.string("gpu").value_or("");
      // the NCCL algorithm and protocol the log forced (docs/calibration.md "Rows per algorithm")
      fit.algo = r.choice_index("algorithm", core::nccl_algo_names());
      fit.proto = r.choice_index("protocol", core::nccl_proto_names());
      for (const char* key : {"algorithm", "protocol"}) {
        const Entry* k = r.get(key);
        if (k && (op == core::Collective::all_to_all || op == core::Collective::send_recv))
          fail(k->value->mark, r.path(key) + " names an NCCL " + key + ", but " + std::string(core::name(op)) +
                                   " runs point-to-point, outside NCCL's algorithms and protocols");
      }
      fit.alpha_s = r.required_number("alpha_us") * core::kMicro;
      fit.busbw_Bps = r.required_number("busbw_gbs") * core::kGB;
      fit.min_bytes = r.number("min_bytes", 0.0);
      if (auto max = r.number("max_bytes")) {
        if (*max <= fit.min_bytes)
          fail(r.get("max_bytes")->value->mark,
               r.path("max_bytes") + " must be larger than min_bytes " +
                   std::to_string(static_cast<long long>(fit.min_bytes)));
        fit.max_bytes = *max;
      }
      out.push_back(fit);
    }
  }
  return out;
}

// network.tiers (docs/inputs.md "Network topology"): the switch tiers from the NIC up. Only the top
// tier may be unbounded (no radix, no nodes); a tier's `nodes` must hold whole groups of the tier below.
std::vector<core::SwitchTier> convert_tiers(const Entry& e) {
  const Node& list = expect_list(e, "hardware.network.tiers");
  if (list.items.empty() || list.items.size() > static_cast<std::size_t>(core::kMaxSwitchTiers))
    fail(e.key_mark, "hardware.network.tiers must list 1 to " + std::to_string(core::kMaxSwitchTiers) +
                         " switch tiers, got " + std::to_string(list.items.size()));
  std::vector<core::SwitchTier> out;
  long long below = 1;  // nodes below one group of the previous tier, when it gives them
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const std::string at = "hardware.network.tiers[" + std::to_string(i) + "]";
    Fields r(*list.items[i], list.items[i]->mark, at, at, tier_row_keys());
    core::SwitchTier t;
    t.name = r.required_string("name");
    // (a missing name is already collected by required_string: only a present, empty one is checked here)
    if (const Entry* name = r.get("name"); name && t.name.empty())
      fail(name->value->mark, r.path("name") + " must not be empty");
    t.radix = static_cast<int>(r.integer("radix", 0));
    t.bandwidth_Bps = r.required_number("bandwidth_gbs") * core::kGB;
    t.latency_s = r.required_number("latency_us") * core::kMicro;
    t.oversubscription = r.number("oversubscription", 1.0);
    t.nodes = static_cast<int>(r.integer("nodes", 0));
    if (t.nodes > 0) {
      if (t.nodes < below || t.nodes % below != 0)
        fail(r.get("nodes")->value->mark, r.path("nodes") + " must be a multiple of the tier below's " +
                                              std::to_string(below) + " nodes");
      below = t.nodes;
    }
    if (t.radix == 0 && t.nodes == 0 && i + 1 < list.items.size())
      fail(list.items[i]->mark, at + " needs radix or nodes: only the top tier may reach every node");
    out.push_back(std::move(t));
  }
  return out;
}

// hardware.gpu.peak_tflops: at least one precision's peak.
void read_peaks(const Fields& gpu, core::GpuSpec& g) {
  const Entry& peak_entry = gpu.require("peak_tflops");
  Fields peak(*peak_entry.value, peak_entry.key_mark, "hardware.gpu.peak_tflops",
              "hardware.gpu.peak_tflops", section_keys("hardware.gpu.peak_tflops"));
  bool any_peak = false;
  for (int p = 0; p < core::kPrecisionCount; ++p) {
    const std::string key(core::name(static_cast<core::Precision>(p)));
    if (peak.get(key)) any_peak = true;  // given, even when its value is the problem (collected)
    if (auto v = peak.number(key)) g.peak_flops[static_cast<std::size_t>(p)] = *v * core::kTera;
  }
  if (!any_peak && !peak.has_unknown())
    fail(peak_entry.key_mark, "hardware.gpu.peak_tflops must give at least one precision");
}

// hardware.gpu.matmul_efficiency: a table of GEMM shapes, one efficiency per precision, or one number.
void read_matmul_efficiency(const Fields& gpu, core::GpuSpec& g) {
  if (const Entry* e = gpu.get("matmul_efficiency")) {
    if (e->value->kind == Node::Kind::list) {
      g.matmul_table = convert_matmul_table(*e);
    } else if (e->value->kind == Node::Kind::map) {
      // one efficiency per precision; precisions not named keep the 0.8 default
      Fields per(*e->value, e->key_mark, "hardware.gpu.matmul_efficiency",
                 "hardware.gpu.matmul_efficiency", section_keys("hardware.gpu.matmul_efficiency"));
      for (int p = 0; p < core::kPrecisionCount; ++p) {
        const std::string key(core::name(static_cast<core::Precision>(p)));
        if (auto v = per.number(key))
          g.matmul_efficiency_by_precision[static_cast<std::size_t>(p)] = *v;
      }
    } else {
      g.matmul_efficiency = read_number(*e->value, gpu.path("matmul_efficiency"));
    }
  }
}

// hardware.gpu: memory, peaks, efficiencies, SMs, kernel tables and power.
core::GpuSpec read_gpu(const Fields& f) {
  core::GpuSpec g;
  const Entry& gpu_entry = f.require("gpu");
  Fields gpu(*gpu_entry.value, where_of(gpu_entry), "hardware.gpu", "hardware.gpu",
             section_keys("hardware.gpu"));
  g.name = gpu.required_string("name");
  g.memory_bytes = gpu.required_number("memory_gib") * core::kGiB;
  g.hbm_Bps = gpu.required_number("hbm_gbs") * core::kGB;
  g.hbm_efficiency = gpu.number("hbm_efficiency", 0.85);
  read_peaks(gpu, g);
  read_matmul_efficiency(gpu, g);
  g.kernel_launch_s = gpu.number("kernel_launch_us", 0.0) * core::kMicro;
  g.sms = static_cast<int>(gpu.integer("sms", 0));
  g.comm_sms = static_cast<int>(gpu.integer("comm_sms", 0));
  if (g.comm_sms > 0 && g.comm_sms >= std::max(1, g.sms)) {
    const Entry* e = gpu.get("comm_sms");
    fail(e->value->mark, g.sms > 0 ? "hardware.gpu.comm_sms must be below hardware.gpu.sms (" +
                                             std::to_string(g.sms) + ")"
                                       : std::string("hardware.gpu.comm_sms needs hardware.gpu.sms"));
  }
  if (const Entry* e = gpu.get("kernels")) convert_kernels(*e, g);
  g.sustained_clock = gpu.number("sustained_clock", 1.0);
  // without tables; with them gpu.kernels.overhead.memory_bound_factor (convert_kernels) stands,
  // and a factor on the scalar model's times would be silently unused
  if (const Entry* e = gpu.get("memory_bound_factor")) {
    if (g.kernels)
      fail(e->value->mark, "hardware.gpu.memory_bound_factor applies only without kernel tables; with "
                           "hardware.gpu.kernels set hardware.gpu.kernels.overhead.memory_bound_factor");
    g.memory_bound_factor = gpu.number("memory_bound_factor", 1.0);
  }
  g.tables_hbm_Bps = gpu.number("tables_hbm_gbs", 0.0) * core::kGB;

  g.tdp_w = gpu.number("tdp_w", 0.0);
  g.idle_w = gpu.number("idle_w", 0.0);
  if (g.tdp_w > 0 && g.idle_w >= g.tdp_w)
    fail(gpu.get("idle_w")->value->mark, "hardware.gpu.idle_w must be below hardware.gpu.tdp_w (" +
                                             std::to_string(static_cast<long long>(g.tdp_w)) + ")");
  return g;
}

// hardware.network: the NIC link, the topology, the NICs and planes of a node and the switch tiers.
void read_network(const Fields& f, core::HardwareSpec& h) {
  const Entry& net_entry = f.require("network");
  Fields net(*net_entry.value, where_of(net_entry), "hardware.network", "hardware.network",
             section_keys("hardware.network"));
  h.network = convert_link(net);
  h.topology = net.enumeration<core::Topology>("topology", 2).value_or(core::Topology::fat_tree);
  h.oversubscription = net.number("oversubscription", 1.0);
  h.fabric.nics_per_node = static_cast<int>(net.integer("nics_per_node", 0));
  if (const int nics = h.fabric.nics_per_node;
      nics > 0 && h.gpus_per_node > 0 && h.gpus_per_node % nics != 0 && nics % h.gpus_per_node != 0)
    fail(net.get("nics_per_node")->value->mark,
         "hardware.network.nics_per_node must divide or be a multiple of hardware.node.gpus (" +
             std::to_string(h.gpus_per_node) + ")");
  h.fabric.planes = static_cast<int>(net.integer("planes", 1));
  h.fabric.placement = net.enumeration<core::NodePlacement>("placement", 2).value_or(core::NodePlacement::dense);
  if (h.fabric.planes > 1 && h.nics_per_node() % h.fabric.planes != 0)
    fail(net.get("planes")->value->mark, "hardware.network.planes must divide the " +
                                             std::to_string(h.nics_per_node()) + " NIC ports of a node (nics_per_node)");
  if (const Entry* e = net.get("tiers")) {
    h.fabric.tiers = convert_tiers(*e);
  } else {
    // A file without tiers: one switch (group) reaching every node, its port the NIC the scalars
    // describe and no latency beyond network.latency_us, so its numbers stay as they were.
    core::SwitchTier t;
    t.name = "leaf";
    t.bandwidth_Bps = h.network.bandwidth_Bps * h.gpus_per_node / std::max(1, h.nics_per_node());
    t.oversubscription = h.oversubscription;
    h.fabric.tiers.push_back(t);
  }
}

}  // namespace

core::HardwareSpec convert_hardware(const Node& n, const Mark& where, const std::string& default_name) {
  Fields f(n, where, "hardware", "hardware", section_keys("hardware"));
  core::HardwareSpec h;
  h.name = f.string("name").value_or(default_name);
  f.string("source");

  h.gpu = read_gpu(f);

  const Entry& node_entry = f.require("node");
  Fields node(*node_entry.value, where_of(node_entry), "hardware.node", "hardware.node",
              section_keys("hardware.node"));
  h.gpus_per_node = static_cast<int>(node.required_integer("gpus"));
  const Entry& intra_entry = node.require("intra");
  h.intra = convert_link(Fields(*intra_entry.value, intra_entry.key_mark, "hardware.node.intra",
                                "hardware.node.intra", section_keys("hardware.node.intra")));

  read_network(f, h);

  if (const Entry* e = f.get("jitter")) {
    Fields j(*e->value, e->key_mark, "hardware.jitter", "hardware.jitter", section_keys("hardware.jitter"));
    h.jitter.compute = j.number("compute", 0.0);
    h.jitter.link = j.number("link", 0.0);
  }
  if (const Entry* e = f.get("host")) {
    Fields host(*e->value, e->key_mark, "hardware.host", "hardware.host", section_keys("hardware.host"));
    h.host.link_Bps = host.number("link_gbs", 0.0) * core::kGB;
    h.host.memory_bytes = host.number("memory_gib", 0.0) * core::kGiB;
    h.host.memory_Bps = host.number("memory_gbs", 0.0) * core::kGB;
    h.host.adam_params_per_s = host.number("adam_gparams", 0.0) * 1e9;
  }
  if (const Entry* e = f.get("collectives")) {
    h.collectives = convert_collectives(Fields(*e->value, e->key_mark, "hardware.collectives",
                                               "hardware.collectives",
                                               section_keys("hardware.collectives")));
  }
  return h;
}

}  // namespace ptdsim::io::detail
