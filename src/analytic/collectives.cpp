#include "ptdsim/analytic/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ptdsim/analytic/context_parallel.hpp"
#include "ptdsim/analytic/nccl_model.hpp"
#include "ptdsim/core/gpu_name.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::analytic {

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

// How far a calibrated row's measurement is from a group: the rank count first (in log distance;
// the larger count wins a tie), then the GPUs per node (equal before unknown before different),
// then the GPU (the hardware's part before unknown before another part), then a row forced to the
// algorithm that runs before one NCCL picked for itself (which only rows otherwise equal reach).
struct Distance {
  double ranks = INFINITY;
  int per_node = 0, gpu = 0, unforced = 0, larger = 0;
  bool operator<(const Distance& o) const {
    if (std::abs(ranks - o.ranks) > 1e-12) return ranks < o.ranks;
    if (per_node != o.per_node) return per_node < o.per_node;
    if (gpu != o.gpu) return gpu < o.gpu;
    if (unforced != o.unforced) return unforced < o.unforced;
    return larger < o.larger;
  }
};

// Whether NCCL's pick `k` runs what a forced row measured (an unforced row measured NCCL's pick).
bool runs_what_measured(const core::CollectiveFit& r, const NcclChoice& k) {
  if (!r.forced()) return true;
  return k.valid && (r.algo < 0 || r.algo == static_cast<int>(k.algo)) &&
         (r.proto < 0 || r.proto == static_cast<int>(k.proto));
}

Distance distance(const core::HardwareSpec& hw, const core::CollectiveFit& r, const Group& g) {
  Distance d;
  d.ranks = std::abs(std::log(static_cast<double>(r.ranks) / g.ranks));
  d.per_node = r.ranks_per_node == 0 ? 1 : r.ranks_per_node == g.ranks_per_node ? 0 : 2;
  d.gpu = r.gpu.empty() ? 1 : core::same_gpu_part(r.gpu, hw.gpu.name) ? 0 : 2;
  d.unforced = r.forced() ? 0 : 1;
  d.larger = -r.ranks;
  return d;
}

bool same_measurement(const core::CollectiveFit& a, const core::CollectiveFit& b) {
  return a.op == b.op && a.scope == b.scope && a.ranks == b.ranks && a.ranks_per_node == b.ranks_per_node &&
         a.gpu == b.gpu && a.algo == b.algo && a.proto == b.proto;
}

// A row of the measurement (op, scope, ranks, ranks per node, GPU, algorithm, protocol) nearest to
// the group; null when the table has none for the op and the group's scope. A row forced to an
// algorithm or protocol counts only where `pick` (NCCL's pick at the size) runs it; without a pick,
// never. `only_forced`: the nearest of the forced rows alone, whatever the pick (the rows a size
// passed over).
const core::CollectiveFit* measurement(const core::HardwareSpec& hw, core::Collective op, const Group& g,
                                       const NcclChoice* pick = nullptr, bool only_forced = false) {
  const core::CollectiveFit* best = nullptr;
  Distance best_d;
  for (const auto& r : hw.collectives) {
    if (r.op != op || r.scope != g.scope || r.ranks <= 0) continue;
    if (only_forced ? !r.forced() : r.forced() && !(pick && runs_what_measured(r, *pick))) continue;
    const Distance d = distance(hw, r, g);
    if (!best || d < best_d) {
      best = &r;
      best_d = d;
    }
  }
  return best;
}

bool any_forced(const core::HardwareSpec& hw, core::Collective op, core::Scope scope) {
  return std::any_of(hw.collectives.begin(), hw.collectives.end(),
                     [&](const core::CollectiveFit& r) { return r.op == op && r.scope == scope && r.forced(); });
}

// The measurement a collective of `bytes` over the group uses: NCCL's pick at the size decides
// whether rows forced to an algorithm or protocol count (only computed when there are such rows,
// so a table without them costs what it always did).
const core::CollectiveFit* measurement_at(const core::HardwareSpec& hw, core::Collective op, double bytes,
                                          const Group& g) {
  if (!any_forced(hw, op, g.scope)) return measurement(hw, op, g);
  const NcclChoice pick = nccl_line(hw, op, bytes, g);
  return measurement(hw, op, g, &pick);
}

// Of the nearest measurement's rows, the one whose size range holds `bytes`, else the one whose
// range is closest to it (core::piece_miss).
AlphaBeta calibrated(const core::HardwareSpec& hw, core::Collective op, double bytes, const Group& g,
                     int* found_ranks) {
  const core::CollectiveFit* m = measurement_at(hw, op, bytes, g);
  *found_ranks = m ? m->ranks : 0;
  AlphaBeta out;
  if (!m) return out;
  double best_size_dist = INFINITY;
  for (const auto& r : hw.collectives) {
    if (!same_measurement(r, *m)) continue;
    const double dist = core::piece_miss(r.min_bytes, r.max_bytes, bytes);
    if (dist < best_size_dist) {
      best_size_dist = dist;
      out = AlphaBeta{r.alpha_s, r.busbw_Bps};
    }
  }
  return out;
}

}  // namespace

NcclChoice nccl_line(const core::HardwareSpec& hw, core::Collective op, double bytes, const Group& g) {
  if (g.ranks <= 1 || !nccl_tuned(op)) return NcclChoice{};
  const NcclComm c = nccl_comm(hw, g);
  if (hw.nccl.algo >= 0 || hw.nccl.proto >= 0) {
    // a forced pair NCCL cannot run for this collective or group leaves it to NCCL's own choice
    if (const NcclChoice k = nccl_choose(c, op, bytes, hw.nccl.algo, hw.nccl.proto); k.valid) return k;
  }
  return nccl_choose(c, op, bytes);
}

const core::CollectiveFit* calibrated_row(const core::HardwareSpec& hw, core::Collective op, double bytes,
                                          const Group& g) {
  return hw.collectives.empty() || g.ranks <= 1 ? nullptr : measurement_at(hw, op, bytes, g);
}

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
  // The collectives NCCL's tuner models take the (algorithm, protocol) NCCL picks for the group,
  // as the line its time follows at this size (docs/analytic.md "NCCL's algorithms and protocols").
  if (const NcclChoice k = nccl_line(hw, op, bytes, g); k.valid) {
    return AlphaBeta{k.latency_us * 1e-6, k.bw_GBs * 1e9 * bus_factor(op, g.ranks)};
  }
  return link_line(hw, op, g);
}

AlphaBeta link_line(const core::HardwareSpec& hw, core::Collective op, const Group& g) {
  const double nvlink = hw.intra.bandwidth_Bps * hw.intra.efficiency;
  if (g.scope == core::Scope::intra) return AlphaBeta{hw.intra.latency_s, nvlink};
  // Across nodes the NIC share per GPU is the slowest link. NCCL runs one ring (channel) per NIC, so
  // a group with k ranks per node spreads its inter-node traffic over k NICs: busbw = k * NIC
  // (DGX A100: 8 x 25 GB/s -> 192 GB/s measured, hardware/FACTS.md fact 8), never above NVLink.
  // All-to-all and send/recv cannot aggregate NICs (nccl-tests #267): one NIC's share.
  const double spine = hw.topology == core::Topology::fat_tree ? std::max(1.0, hw.oversubscription) : 1.0;
  const double nic = hw.network.bandwidth_Bps * hw.network.efficiency / spine;
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


namespace {

std::string say_ranks(int n, int per_node) {
  std::string out = std::to_string(n) + (n == 1 ? " rank" : " ranks");
  if (per_node > 0) out += ", " + std::to_string(per_node) + " per node";
  return out;
}

// What a group's calibrated row does not match, or "" when it matches.
std::string mismatches(const core::HardwareSpec& hw, const core::CollectiveFit& m, const Group& g) {
  std::vector<std::string> why;
  if (m.ranks != g.ranks) {
    // collective_line: a larger group adds the hop latencies of its longer ring or deeper tree
    why.push_back("extrapolated from " + std::to_string(m.ranks) + " to " + std::to_string(g.ranks) +
                  " ranks (the " + std::to_string(m.ranks) + "-rank busbw as it is, and its alpha " +
                  (g.ranks > m.ranks ? "plus NCCL's hop latencies for the larger group)" : "as it is)"));
  }
  if (g.scope == core::Scope::inter) {
    if (m.ranks_per_node == 0) {
      why.push_back("the row does not record how many GPUs per node it was measured with");
    } else if (m.ranks_per_node != g.ranks_per_node) {
      std::string w = "measured with " + std::to_string(m.ranks_per_node) + " GPUs per node, the group has " +
                      std::to_string(g.ranks_per_node);
      if (m.ranks_per_node > g.ranks_per_node) {
        w += " (NCCL spreads a node's traffic over one NIC per GPU in the group, so the measured busbw is "
             "likely too fast for it)";
      }
      why.push_back(w);
    }
  }
  if (!m.gpu.empty() && !core::same_gpu_part(m.gpu, hw.gpu.name)) {
    why.push_back("measured on " + m.gpu + ", the hardware's GPU is " + hw.gpu.name);
  }
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

}  // namespace

std::string forced_row_warning(const core::HardwareSpec& hw, core::Collective op, double bytes, const Group& g,
                               const std::string& group) {
  if (hw.collectives.empty() || g.ranks <= 1 || bytes <= 0 || !any_forced(hw, op, g.scope)) return "";
  const NcclChoice pick = nccl_line(hw, op, bytes, g);
  const core::CollectiveFit* used = measurement(hw, op, g, &pick);
  auto measured = [](const core::CollectiveFit& m) {
    std::string out = say_ranks(m.ranks, m.ranks_per_node) + (m.gpu.empty() ? "" : ", " + m.gpu) + " with";
    if (m.algo >= 0) out += " NCCL_ALGO " + core::nccl_algo_names()[static_cast<std::size_t>(m.algo)];
    if (m.proto >= 0) out += " NCCL_PROTO " + core::nccl_proto_names()[static_cast<std::size_t>(m.proto)];
    return out;
  };
  char size[64];
  if (bytes >= 1e9) std::snprintf(size, sizeof size, "%.4g GB", bytes / 1e9);
  else if (bytes >= 1e6) std::snprintf(size, sizeof size, "%.4g MB", bytes / 1e6);
  else if (bytes >= 1e3) std::snprintf(size, sizeof size, "%.4g kB", bytes / 1e3);
  else std::snprintf(size, sizeof size, "%.4g B", bytes);
  const std::string what = std::string(core::name(op)) + " over the " + group + " group (" +
                           say_ranks(g.ranks, g.ranks_per_node) + ", " + std::string(core::name(g.scope)) + ") at " +
                           size;
  if (used && used->forced()) {
    const std::string why = mismatches(hw, *used, g);
    return why.empty() ? "" : what + " uses the calibrated rows measured on " + measured(*used) + ": " + why;
  }
  const core::CollectiveFit* passed = measurement(hw, op, g, nullptr, true);
  if (!passed) return "";
  const std::string picked = pick.valid ? std::string(name(pick.algo)) + "/" + name(pick.proto) : "no NCCL algorithm";
  return what + ": the calibrated rows measured on " + measured(*passed) + " are not used, because NCCL's model runs " +
         picked + " there, which they did not measure; " +
         (used ? "the calibrated rows of NCCL's own pick (" + say_ranks(used->ranks, used->ranks_per_node) + ") time it"
               : std::string("NCCL's model times it"));
}

std::vector<std::string> collective_warnings(const core::Scenario& s) { return collective_warnings(s, step_groups(s)); }

std::vector<std::string> collective_warnings(const core::Scenario& s, const StepGroups& groups) {
  std::vector<std::string> out;
  const auto& hw = s.hardware;
  if (hw.collectives.empty()) return out;
  const auto& p = s.parallel;
  const bool moe = s.model.moe.has_value();
  using C = core::Collective;
  struct Use {
    const char* group;
    Group g;
    std::vector<C> ops;
  };
  // The groups and collectives of docs/analytic.md "Communication": TP all-reduces (all-gather and
  // reduce-scatter under sequence parallelism), CP's collectives (cp_collectives), EP all-to-alls, the gradient
  // reduction (reduce-scatter and all-gather under ZeRO), pipeline sends between neighbours.
  const std::vector<C> grad_ops = p.zero == 0 ? std::vector<C>{C::all_reduce} : std::vector<C>{C::reduce_scatter, C::all_gather};
  std::vector<Use> uses;
  if (p.tp > 1)
    uses.push_back({"tp", groups.tp,
                    p.sequence_parallel ? std::vector<C>{C::all_gather, C::reduce_scatter} : std::vector<C>{C::all_reduce}});
  if (p.cp > 1)  // the collectives of training.cp_comm, each over its own part of the cp group
    for (const CpCollective& c : cp_collectives(s, groups)) uses.push_back({"cp", c.group, {c.op}});
  if (p.ep > 1 && moe) uses.push_back({"ep", groups.ep, {C::all_to_all}});
  if (moe && p.folded_experts() && p.expert_tp() > 1)
    uses.push_back({"expert tp", groups.expert_tp, {C::all_gather, C::reduce_scatter}});
  if (const Group& dp = groups.dp; dp.ranks > 1) uses.push_back({"dp gradient", dp, grad_ops});
  if (moe && (p.ep > 1 || p.folded_experts())) {
    if (const Group& edp = groups.expert_dp; edp.ranks > 1) uses.push_back({"expert dp gradient", edp, grad_ops});
  }
  if (p.pp > 1) uses.push_back({"pp", groups.pp_hop, {C::send_recv}});
  for (const auto& u : uses) {
    for (C op : u.ops) {
      const core::CollectiveFit* m = measurement(hw, op, u.g);
      if (!m) continue;
      const std::string why = mismatches(hw, *m, u.g);
      if (why.empty()) continue;
      std::string w = std::string(core::name(op)) + " over the " + u.group + " group (" +
                      say_ranks(u.g.ranks, u.g.ranks_per_node) + ", " + std::string(core::name(u.g.scope)) +
                      ") uses the calibrated rows measured on " + say_ranks(m->ranks, m->ranks_per_node) +
                      (m->gpu.empty() ? "" : ", " + m->gpu) + ": " + why;
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace ptdsim::analytic
