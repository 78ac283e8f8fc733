#include "ptdsim/analytic/collectives.hpp"

#include <algorithm>
#include <cmath>

#include "ptdsim/analytic/placement.hpp"

namespace ptdsim::analytic {

double bus_factor(core::Collective op, int ranks) {
  const double n = ranks;
  switch (op) {
    case core::Collective::all_reduce: return 2 * (n - 1) / n;
    case core::Collective::all_gather:
    case core::Collective::reduce_scatter:
    case core::Collective::all_to_all: return (n - 1) / n;
    case core::Collective::broadcast:
    case core::Collective::reduce:
    case core::Collective::send_recv: return 1;
  }
  return 1;
}

int dim_size(const core::Scenario& s, core::Dim d) {
  const auto& p = s.parallel;
  switch (d) {
    case core::Dim::tp: return p.tp;
    case core::Dim::cp: return p.cp;
    case core::Dim::ep: return p.ep;
    case core::Dim::dp: return p.dp;
    case core::Dim::pp: return p.pp;
  }
  return 1;
}

int dim_stride(const core::Scenario& s, core::Dim d) {
  // ep is carved out of the data-parallel ranks (tp*cp*dp*pp == gpus), so it takes no room in
  // the rank order: its ranks are the ep consecutive ranks of the dims placed outside it.
  int stride = 1;
  for (core::Dim inner : s.parallel.placement) {
    if (inner == d) break;
    if (inner != core::Dim::ep) stride *= dim_size(s, inner);
  }
  return stride;
}

Group group_from(const core::Scenario& s, const DimStride* dims, int count) {
  // ranks_per_node: how many of the group's ranks, starting from rank 0, fall below gpus_per_node
  // when its dims are laid out at their strides (innermost first).
  const int gpn = std::max(1, s.hardware.gpus_per_node);
  Group g;
  g.ranks = 1;
  int per_node = 1;
  bool truncated = false;
  for (int i = 0; i < count; ++i) {
    g.ranks *= dims[i].size;
    if (truncated || dims[i].size == 1) continue;
    if (dims[i].stride >= gpn) { truncated = true; continue; }
    const int fit = std::min(dims[i].size, gpn / dims[i].stride);
    per_node *= std::max(1, fit);
    if (fit < dims[i].size) truncated = true;
  }
  g.ranks_per_node = per_node;
  g.scope = per_node >= g.ranks ? core::Scope::intra : core::Scope::inter;
  return g;
}

Group group_of(const core::Scenario& s, core::Dim dim) {
  const DimStride d{dim_size(s, dim), dim_stride(s, dim)};
  return group_from(s, &d, 1);
}

namespace {

// NCCL's per-hop latencies for the Simple protocol (large messages), tuning.cc 2.18 and later
// (tests/data/nccl-tests/README.md "How the latency is put together"): a ring step
// over NVLink, and one that crosses the network (Ring and Tree alike).
constexpr double kRingHopNvlink_s = 3.4e-6;
constexpr double kHopNet_s = 14.0e-6;

// Latency a group of more than two nodes adds to the measured two-node alpha. All-gather and
// reduce-scatter run as rings: n-1 steps, one crossing the network per node, the others over
// NVLink. All-reduce across nodes runs as NCCL's tree: 2 log2(nodes) network hops. All-to-all and
// send/recv talk to peers directly.
double extra_latency(core::Collective op, const Group& g) {
  const int ppn = std::max(1, g.ranks_per_node);
  const double nodes = std::ceil(static_cast<double>(g.ranks) / ppn);
  if (nodes <= 2) return 0;
  switch (op) {
    case core::Collective::all_gather:
    case core::Collective::reduce_scatter:
      return (nodes - 2) * (kHopNet_s + (ppn - 1) * kRingHopNvlink_s);
    case core::Collective::all_reduce: return 2 * (std::log2(nodes) - 1) * kHopNet_s;
    default: return 0;
  }
}

AlphaBeta calibrated(const core::HardwareSpec& hw, core::Collective op, double bytes, const Group& g,
                     int* found_ranks) {
  // nearest rank count first (in log distance), then the row whose size range holds `bytes`, else
  // the row whose range is closest to it
  double best_rank_dist = INFINITY;
  int best_ranks = 0;
  for (const auto& r : hw.collectives) {
    if (r.op != op || r.scope != g.scope || r.ranks <= 0) continue;
    const double dist = std::abs(std::log(static_cast<double>(r.ranks) / g.ranks));
    if (dist < best_rank_dist - 1e-12 || (std::abs(dist - best_rank_dist) <= 1e-12 && r.ranks > best_ranks)) {
      best_rank_dist = dist;
      best_ranks = r.ranks;
    }
  }
  *found_ranks = best_ranks;
  AlphaBeta out;
  if (best_ranks <= 0) return out;
  double best_size_dist = INFINITY;
  for (const auto& r : hw.collectives) {
    if (r.op != op || r.scope != g.scope || r.ranks != best_ranks) continue;
    const double dist = bytes < r.min_bytes ? r.min_bytes - bytes : bytes > r.max_bytes ? bytes - r.max_bytes : 0;
    if (dist < best_size_dist) {
      best_size_dist = dist;
      out = AlphaBeta{r.alpha_s, r.busbw_Bps};
    }
  }
  return out;
}

}  // namespace

AlphaBeta collective_line(const core::HardwareSpec& hw, core::Collective op, double bytes,
                          const Group& g) {
  if (!hw.collectives.empty()) {
    int row_ranks = 0;
    AlphaBeta row = calibrated(hw, op, bytes, g, &row_ranks);
    if (row_ranks > 0) {
      // A group larger than the measured one pays the hop latencies its longer ring or deeper tree
      // adds (NCCL's model, as the link model's alpha below); its busbw is the measured one.
      if (g.ranks > row_ranks) {
        Group measured = g;
        measured.ranks = row_ranks;
        measured.ranks_per_node = std::min(g.ranks_per_node, row_ranks);
        row.alpha_s += std::max(0.0, extra_latency(op, g) - extra_latency(op, measured));
      }
      return row;
    }
  }
  const double nvlink = hw.intra.bandwidth_Bps * hw.intra.efficiency;
  if (g.scope == core::Scope::intra) return AlphaBeta{hw.intra.latency_s, nvlink};
  // Across nodes the NIC share per GPU is the slowest link. NCCL runs one ring (channel) per NIC, so
  // a group with k ranks per node spreads its inter-node traffic over k NICs: busbw = k * NIC
  // (DGX A100: 8 x 25 GB/s -> 192 GB/s measured, hardware/FACTS.md fact 8), never above NVLink.
  // All-to-all and send/recv cannot aggregate NICs (nccl-tests #267): one NIC's share.
  const double nic = hw.network.bandwidth_Bps * hw.network.efficiency / std::max(1.0, hw.oversubscription);
  const bool aggregates = op != core::Collective::all_to_all && op != core::Collective::send_recv;
  const double busbw = aggregates ? std::min(nvlink, g.ranks_per_node * nic) : nic;
  const double alpha = hw.network.latency_s + (g.ranks_per_node > 1 ? hw.intra.latency_s : 0.0) +
                       extra_latency(op, g);
  return AlphaBeta{alpha, busbw};
}

double collective_time(const core::HardwareSpec& hw, core::Collective op, double bytes,
                       const Group& g) {
  if (g.ranks <= 1 || bytes <= 0) return 0;
  const AlphaBeta line = collective_line(hw, op, bytes, g);
  if (line.busbw_Bps <= 0) return line.alpha_s;
  return line.alpha_s + bytes * bus_factor(op, g.ranks) / line.busbw_Bps;
}

}  // namespace ptdsim::analytic
