#include "ptdsim/analytic/fabric.hpp"

#include <algorithm>
#include <cmath>

namespace ptdsim::analytic {

int tier_count(const core::HardwareSpec& hw) {
  return std::clamp(static_cast<int>(hw.fabric.tiers.size()), 1, core::kMaxSwitchTiers);
}

bool UplinkShares::blocking() const {
  for (int k = 0; k < count; ++k)
    if (uplink[static_cast<std::size_t>(k)] < 1.0) return true;
  return false;
}

double UplinkShares::route(int top) const {
  double b = 1.0;
  for (int k = 0; k < top && k < count; ++k) b = std::min(b, uplink[static_cast<std::size_t>(k)]);
  return b;
}

UplinkShares uplink_shares(const core::HardwareSpec& hw) {
  UplinkShares f;
  const double nic = hw.network.bandwidth_Bps;
  if (!(nic > 0)) return f;
  const auto& tiers = hw.fabric.tiers;
  const int n = std::min(static_cast<int>(tiers.size()), core::kMaxSwitchTiers);
  const double per_gpu = static_cast<double>(hw.nics_per_node()) / std::max(1, hw.gpus_per_node);
  double over = 1;
  // uplinks above every tier but the top one (nothing is above it)
  for (int k = 0; k + 1 < n; ++k) {
    const auto& t = tiers[static_cast<std::size_t>(k)];
    over *= std::max(1.0, t.oversubscription);
    const double port = tiers[static_cast<std::size_t>(k) + 1].bandwidth_Bps > 0
                            ? tiers[static_cast<std::size_t>(k) + 1].bandwidth_Bps
                            : t.bandwidth_Bps;
    const double bw = port > 0 ? port * per_gpu : nic;
    f.uplink[static_cast<std::size_t>(f.count++)] = bw / over / nic;
  }
  return f;
}

std::array<long long, core::kMaxSwitchTiers> tier_reach(const core::HardwareSpec& hw) {
  std::array<long long, core::kMaxSwitchTiers> reach{};
  reach.fill(kUnboundedReach);
  const auto& tiers = hw.fabric.tiers;
  const int n = std::min(static_cast<int>(tiers.size()), core::kMaxSwitchTiers);
  const bool rail = hw.topology == core::Topology::rail_optimized;
  // a node's NIC ports on one plane: the rails of a rail-optimized plane
  const long long nics = std::max(1LL, static_cast<long long>(hw.nics_per_node()) / std::max(1, hw.fabric.planes));
  long long below = 1;
  for (int t = 0; t < n; ++t) {
    const core::SwitchTier& s = tiers[static_cast<std::size_t>(t)];
    long long r;
    if (s.nodes > 0) {
      r = s.nodes;
    } else if (s.radix <= 0) {
      r = kUnboundedReach;
    } else {
      const double o = std::max(1.0, s.oversubscription);
      const long long down = t == n - 1 ? s.radix : static_cast<long long>(std::floor(s.radix * o / (1 + o)));
      if (t == 0) r = rail ? down : down / nics;
      else if (t == 1 && rail) r = below * (down / nics);
      else r = below * down;
      r = std::clamp(r, std::max(1LL, below), kUnboundedReach);
    }
    reach[static_cast<std::size_t>(t)] = r;
    below = r;
  }
  return reach;
}

long long ranks_below(const DimStride* dims, int count, long long unit) {
  // The dims are laid out at their strides, innermost first: a dim whose stride reaches `unit`
  // contributes nothing below it, one that straddles it contributes the ranks that fit.
  long long within = 1;
  bool truncated = false;
  for (int i = 0; i < count; ++i) {
    if (truncated || dims[i].size == 1) continue;
    if (dims[i].stride >= unit) {
      truncated = true;
      continue;
    }
    const long long fit = std::min<long long>(dims[i].size, unit / dims[i].stride);
    within *= std::max(1LL, fit);
    if (fit < dims[i].size) truncated = true;
  }
  return within;
}

FabricSpan fabric_span(const core::HardwareSpec& hw, const DimStride* dims, int count) {
  return fabric_span(hw, dims, count, ranks_below(dims, count, std::max(1, hw.gpus_per_node)));
}

FabricSpan fabric_span(const core::HardwareSpec& hw, const DimStride* dims, int count, long long per_node) {
  long long ranks = 1;
  for (int i = 0; i < count; ++i) ranks *= dims[i].size;
  auto spanned = [&](long long in) { return static_cast<int>((ranks + in - 1) / std::max(1LL, in)); };
  FabricSpan f;
  f.nodes = spanned(per_node);
  if (f.nodes <= 1) return f;
  // a fabric without bounded tiers (a file without tiers): every node under the one switch group
  const auto& tiers = hw.fabric.tiers;
  if (tiers.size() <= 1 && (tiers.empty() || (tiers[0].radix <= 0 && tiers[0].nodes <= 0))) {
    f.top = 0;
    return f;
  }
  const auto reach = tier_reach(hw);
  const int n = tier_count(hw);
  const long long gpn = std::max(1, hw.gpus_per_node);
  f.top = n - 1;
  for (int t = 0; t < n; ++t) {
    // fragmented placement: each of the job's nodes under a leaf of its own (the tiers above reach
    // what they reach: their switch groups hold the scattered nodes as they would the dense ones)
    const long long r = t == 0 && hw.fabric.placement == core::NodePlacement::fragmented
                            ? 1
                            : reach[static_cast<std::size_t>(t)];
    // a unit wider than any group: one group (and no overflow of r * gpn)
    const int g = r >= kUnboundedReach / gpn ? 1 : spanned(ranks_below(dims, count, r * gpn));
    f.groups[static_cast<std::size_t>(t)] = g;
    if (g == 1) {  // the lowest tier whose one group holds every node; the ones above hold it too
      f.top = t;
      break;
    }
  }
  return f;
}

}  // namespace ptdsim::analytic
