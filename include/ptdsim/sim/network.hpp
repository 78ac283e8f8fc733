#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/core/hardware.hpp"

// The links a step's transfers share (docs/simulator.md "Flows across several resources"): per
// representative rank, NVLink, its NIC (rail) and the uplinks of the switch tiers above it, and for
// each group the route its traffic takes through them (analytic::FabricSpan: the tiers it crosses).
namespace ptdsim::sim {

class Engine;

// What a representative GPU has of the scale-out fabric, as capacities relative to its NIC share:
// uplink[k] is the bandwidth per GPU above tier k's switches, the tier's port bandwidth per GPU
// (bandwidth x NIC ports per node / GPUs per node) divided by the oversubscription of tier k and of
// every tier below it. A flow on tier k's uplinks stands for the same flow of every node (the
// simulator's ranks are representatives), so this per-GPU share is what it may use.
struct Fabric {
  std::vector<double> uplink;
  // Whether some uplink is narrower than the NIC: only then can routes through different tiers
  // share differently from one link per rank (FairShare), and the flow model is used.
  bool blocking() const;
};
Fabric fabric_of(const core::HardwareSpec& hw);

// The step's links on the engine: per rank, NVLink, then one route per highest tier crossed (the
// NIC alone for a group under one leaf, the NIC and tier 0's uplinks across leaves, ...). On a
// non-blocking fabric every route of a rank's inter-node traffic is its NIC (one link, as FairShare
// shares it); on a blocking one each route is a kernel resource of a FlowShare network.
class StepLinks {
 public:
  void build(const Fabric& fabric, int ranks, Engine& engine, double comm_share);
  std::int32_t link(int rank, const analytic::Group& g) const {
    if (g.scope == core::Scope::intra) return rank * per_rank_;
    const int top = g.span.top < 0 ? 0 : g.span.top;
    return rank * per_rank_ + 1 + (per_rank_ == 2 ? 0 : std::min(top, per_rank_ - 2));
  }

 private:
  int per_rank_ = 2;
};

}  // namespace ptdsim::sim
