#pragma once
#include <string>
#include <vector>

// The scale-out fabric between nodes as the hardware file's `network:` section describes it
// (docs/inputs.md "Network topology"): NICs per node, planes, and the switch tiers from the NIC up.
// A "node" is what node.gpus counts: the NVLink domain (8 GPUs on DGX/HGX, 72 on an NVL72 rack).
namespace ptdsim::core {

// The most switch tiers a fabric may have: leaf, spine, core and one more (a super-spine or an
// inter-building tier). Real AI fabrics have 2-3 (hardware/FACTS.md section 9).
inline constexpr int kMaxSwitchTiers = 4;

// One tier of switches, counted from the NIC up (tier 0 = the leaf the NICs plug into).
struct SwitchTier {
  std::string name;             // "leaf", "spine", "core": for messages and reports
  int radix = 0;                // ports per switch; 0: one switch (group) reaches every node
  double bandwidth_Bps = 0;     // one port, one direction
  double latency_s = 0;         // one traversal of a switch of this tier
  double oversubscription = 1;  // down:up bandwidth of this tier's switches (1: non-blocking)
  int nodes = 0;                // nodes one switch group of this tier reaches without a higher tier; 0: from radix
};

// Where a job's nodes sit under the leaves (network.placement, docs/inputs.md "Network topology"):
// dense, as a scheduler allocating whole scalable units gives them (consecutive nodes fill a leaf's
// reach), or fragmented, the job's nodes scattered over the fabric one to a leaf, so every group
// that spans two nodes leaves its leaf.
enum class NodePlacement { dense, fragmented };

// The fabric. `tiers` is never empty once a hardware file is loaded (a file without tiers gets one
// unbounded tier from its network scalars, so its numbers stay as they were).
struct NetworkTopology {
  int nics_per_node = 0;  // scale-out NIC ports per node, all planes together; 0: one per GPU
  // identical, independent copies of the fabric (DeepSeek-V3's multi-plane fat tree, the twin-plane
  // DGX B300 SuperPOD); a node's ports are spread evenly over them and traffic never changes plane
  int planes = 1;
  std::vector<SwitchTier> tiers;
  NodePlacement placement = NodePlacement::dense;
};

}  // namespace ptdsim::core
