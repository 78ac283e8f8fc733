#pragma once
#include <optional>
#include <string>
#include <vector>

// The groups of ranks ptdsim-calibrate measures collectives on (host code: the tool's CUDA/NCCL part
// builds only where the toolkit is found, these rules are tested everywhere).
namespace ptdsim::calibrate {

// A group of ranks a collective runs on: the first `per_node` ranks of each of the first `nodes`
// nodes. One node is NCCL's intra-node case (NVLink/NVSwitch or PCIe), several the inter-node one
// (its rings and trees cross the network once per node: rank counts and ranks per node both matter).
struct Shape {
  int nodes = 1, per_node = 2;
  int ranks() const { return nodes * per_node; }
  bool operator==(const Shape&) const = default;
};

// "2x8": 2 nodes, 8 ranks each; nullopt for anything else (a count below 1, a sign, a space,
// trailing text).
std::optional<Shape> parse_shape(const std::string& text);

// For a run of `ranks` ranks on `nodes` nodes with `per_node` ranks each: every per-node count of
// 2, 4, ... and all of them on one node, and every node count of 2, 4, ... and all of them with all
// their ranks or one rank each. One rank alone: 1x1 (NCCL's path on one rank, checked, not fitted).
std::vector<Shape> default_shapes(int ranks, int nodes, int per_node);

}  // namespace ptdsim::calibrate
