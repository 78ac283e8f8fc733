#pragma once
#include <array>

#include "ptdsim/core/hardware.hpp"

// Where a communication group's ranks sit in the scale-out fabric under dense rank-to-node
// placement (docs/analytic.md "Groups and placement", "Topology"): how many nodes (NVLink domains)
// and switch groups of each tier it spans, and the highest switch tier its traffic crosses.
namespace ptdsim::analytic {

// One parallel dimension of a group: its size and the distance between consecutive ranks.
struct DimStride {
  int size = 1;
  int stride = 1;
};

// Nodes one switch group of tier t reaches without going higher, for t < tier_count(hw): the
// tier's `nodes` when the file gives it, else from the radices (docs/inputs.md "Network topology"):
//   down(t) = radix (the top tier), radix * o / (1 + o) below it (o: the tier's oversubscription)
//   ports = nics_per_node / planes (a node's NIC ports on one plane; the tiers describe one plane)
//   reach(0) = down(0) on a rail-optimized fabric (one port per node on each rail's leaf),
//              down(0) / ports otherwise (all of a node's ports on one leaf)
//   reach(1) = reach(0) * down(1) / ports (rail-optimized: a spine reaches every rail's leaf)
//   reach(t) = reach(t-1) * down(t) otherwise, and never below reach(t-1)
// An unbounded tier (radix 0, the default of a file without tiers) reaches kUnbounded nodes.
inline constexpr long long kUnboundedReach = 1LL << 40;
int tier_count(const core::HardwareSpec& hw);
std::array<long long, core::kMaxSwitchTiers> tier_reach(const core::HardwareSpec& hw);

// What a representative GPU has of the fabric above its NIC (docs/simulator.md "The rule for
// representative ranks"), as capacities relative to its NIC share: uplink[k] is the bandwidth per GPU
// above tier k's switches, the next tier's port bandwidth (tier k's when the next gives none) times
// NIC ports per node / GPUs per node, divided by the oversubscription of tier k and of every tier
// below it, over the NIC's bandwidth. The simulator's links (sim::fabric_of) and the sweep's bound
// (the closed form of link sharing, docs/analytic.md "Shared links") read the same numbers.
struct UplinkShares {
  std::array<double, core::kMaxSwitchTiers - 1> uplink{};
  int count = 0;  // uplinks: one fewer than the tiers (nothing is above the top)
  // some uplink narrower than the NIC: only then do a rank's flows share unevenly
  bool blocking() const;
  // The rate a flow whose traffic crosses up to tier `top` moves at alone, as a share of the NIC:
  // the narrowest of the NIC (1) and the uplinks below `top` (the route sim::StepLinks gives it).
  double route(int top) const;
};
UplinkShares uplink_shares(const core::HardwareSpec& hw);

struct FabricSpan {
  int nodes = 1;  // nodes (NVLink domains) its ranks lie on
  // switch groups of each tier its nodes lie under (groups[0]: leaf groups, the scalable units of a
  // SuperPOD); 1 for tiers it stays below
  std::array<int, core::kMaxSwitchTiers> groups{1, 1, 1, 1};
  // Highest switch tier its inter-node traffic crosses: -1 inside one node (NVLink only), 0 under
  // one leaf group, 1 across leaf groups under one spine group, 2 through the core, ... A group wider
  // than the top tier's reach still reports the top tier.
  int top = -1;
  int leaves() const { return groups[0]; }
  bool crosses(int tier) const { return top >= tier; }
};

// The span of the group holding rank 0 whose dims (innermost first, each stride a multiple of the
// previous dims' extent, as dense placement lays them) are `dims`; the other groups of a dimension
// are its translates, identical when node and tier sizes divide the strides (power-of-two layouts).
FabricSpan fabric_span(const core::HardwareSpec& hw, const DimStride* dims, int count);
// The same, given ranks_below(dims, count, node.gpus) (group_from has it already).
FabricSpan fabric_span(const core::HardwareSpec& hw, const DimStride* dims, int count, long long per_node);

// How many of such a group's ranks, from rank 0, fall below rank `unit` (unit = GPUs per node:
// its ranks per node).
long long ranks_below(const DimStride* dims, int count, long long unit);

}  // namespace ptdsim::analytic
