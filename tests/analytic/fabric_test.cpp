#include <catch2/catch.hpp>

#include "ptdsim/analytic/fabric.hpp"
#include "ptdsim/analytic/groups.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

namespace {

// A DGX H100 SuperPOD compute fabric (hardware/FACTS.md section 9): rail-optimized, 8 NICs a node,
// three tiers of 64-port NDR switches, non-blocking.
core::HardwareSpec superpod() {
  core::HardwareSpec hw;
  hw.gpus_per_node = 8;
  hw.topology = core::Topology::rail_optimized;
  hw.fabric.nics_per_node = 8;
  for (const char* name : {"leaf", "spine", "core"}) {
    core::SwitchTier t;
    t.name = name;
    t.radix = 64;
    t.bandwidth_Bps = 50e9;
    hw.fabric.tiers.push_back(t);
  }
  return hw;
}

}  // namespace

TEST_CASE("analytic: the nodes one switch group of each tier reaches", "[analytic][fabric]") {
  auto hw = superpod();
  SECTION("SuperPOD: a 32-node scalable unit, 4 of them under a spine group, 8192 nodes under the core") {
    // leaf: 64 ports, 32 down (non-blocking), one per node on its rail -> 32 nodes (the RA's SU)
    // spine: 32 down to leaves; 8 rail leaves per SU -> 4 SUs = 128 nodes (the 4-SU, 127-node RA)
    // core (top): 64 down, one per spine group -> 64 x 128 = 8192 nodes (k^3/4 = 65536 NICs / 8)
    const auto r = tier_reach(hw);
    CHECK(r[0] == 32);
    CHECK(r[1] == 128);
    CHECK(r[2] == 8192);
    CHECK(tier_count(hw) == 3);
  }
  SECTION("two tiers: the spine is the top and uses all 64 ports down -> 64 leaves / 8 rails x 32 = 256 nodes") {
    hw.fabric.tiers.pop_back();  // the DGX B200 RA's 2-tier fabric: 8 SUs, 64 leaves, 32 spines
    const auto r = tier_reach(hw);
    CHECK(r[0] == 32);
    CHECK(r[1] == 256);
  }
  SECTION("not rail-optimized: all 8 NICs of a node on one leaf -> 32 / 8 = 4 nodes a leaf, 4 x 32 = 128 a spine") {
    hw.topology = core::Topology::fat_tree;
    const auto r = tier_reach(hw);
    CHECK(r[0] == 4);
    CHECK(r[1] == 128);
    CHECK(r[2] == 8192);
  }
  SECTION("an oversubscribed leaf (2:1) has 64 x 2/3 = 42 ports down") {
    hw.fabric.tiers[0].oversubscription = 2;
    CHECK(tier_reach(hw)[0] == 42);
  }
  SECTION("a tier's nodes, when given, win over its radix") {
    hw.fabric.tiers[0].nodes = 16;
    const auto r = tier_reach(hw);
    CHECK(r[0] == 16);
    CHECK(r[1] == 64);  // 16 x 32 / 8
  }
  SECTION("no tiers, or an unbounded one: one group reaches every node") {
    hw.fabric.tiers.clear();
    CHECK(tier_reach(hw)[0] == kUnboundedReach);
    CHECK(tier_count(hw) == 1);
  }
}

TEST_CASE("analytic: which tiers a group crosses under dense placement", "[analytic][fabric]") {
  const auto hw = superpod();
  SECTION("tp 8 inside a node: no switch") {
    const DimStride d{8, 1};
    const auto f = fabric_span(hw, &d, 1);
    CHECK(f.nodes == 1);
    CHECK(f.top == -1);
    CHECK_FALSE(f.crosses(0));
  }
  SECTION("dp 32 at stride 8: 32 nodes, one scalable unit -> the leaf only") {
    const DimStride d{32, 8};
    const auto f = fabric_span(hw, &d, 1);
    CHECK(f.nodes == 32);
    CHECK(f.leaves() == 1);
    CHECK(f.top == 0);
  }
  SECTION("dp 64 at stride 8: 64 nodes, 2 SUs under one spine group") {
    const DimStride d{64, 8};
    const auto f = fabric_span(hw, &d, 1);
    CHECK(f.nodes == 64);
    CHECK(f.leaves() == 2);
    CHECK(f.groups[1] == 1);
    CHECK(f.top == 1);
  }
  SECTION("Llama 3 405B on 16,384 GPUs: dp 128 at stride tp8 x cp1 x pp16 = 128 -> 16 nodes apart, 2048 nodes") {
    // ranks 0, 128, ..., 16256: nodes 0, 16, ..., 2032; SU = 32 nodes holds 2 of them -> 64 SUs;
    // a spine group (128 nodes) holds 8 -> 16 spine groups; the core reaches all
    const DimStride d{128, 128};
    const auto f = fabric_span(hw, &d, 1);
    CHECK(f.nodes == 128);
    CHECK(f.leaves() == 64);
    CHECK(f.groups[1] == 16);
    CHECK(f.groups[2] == 1);
    CHECK(f.top == 2);
  }
  SECTION("a group partly in a node: dp 16 at stride 4 -> 2 ranks a node, 8 nodes, one SU") {
    const DimStride d{16, 4};
    const auto f = fabric_span(hw, &d, 1);
    CHECK(f.nodes == 8);
    CHECK(f.top == 0);
  }
  SECTION("two dims (cp 2 at stride 8, dp 32 at stride 16): 64 nodes -> 2 SUs, the spine") {
    const DimStride d[2] = {{2, 8}, {32, 16}};
    const auto f = fabric_span(hw, d, 2);
    CHECK(f.nodes == 64);
    CHECK(f.leaves() == 2);
    CHECK(f.top == 1);
  }
}

TEST_CASE("analytic: a fragmented allocation puts every node under a leaf of its own", "[analytic][fabric]") {
  auto hw = superpod();
  hw.fabric.placement = core::NodePlacement::fragmented;
  SECTION("tp 8 inside a node: still no switch") {
    const DimStride d{8, 1};
    CHECK(fabric_span(hw, &d, 1).top == -1);
  }
  SECTION("dp 32 at stride 8: one scalable unit when dense, 32 leaves when fragmented -> the spine") {
    // 32 nodes, one a leaf: 32 leaf groups; the spine's group (128 nodes) holds them all
    const DimStride d{32, 8};
    const auto f = fabric_span(hw, &d, 1);
    CHECK(f.nodes == 32);
    CHECK(f.leaves() == 32);
    CHECK(f.groups[1] == 1);
    CHECK(f.top == 1);
  }
  SECTION("two nodes: a pipeline hop leaves its leaf too") {
    const DimStride d{2, 8};
    CHECK(fabric_span(hw, &d, 1).top == 1);
  }
  SECTION("a group that already crosses the spine crosses what it did") {
    const DimStride d{128, 128};  // Llama 3 405B's dp: the core either way
    CHECK(fabric_span(hw, &d, 1).top == 2);
  }
}

TEST_CASE("analytic: a step's groups carry their fabric span", "[analytic][fabric]") {
  auto s = testing::gpt3_1024();  // tp 8, dp 8, pp 16; 8 GPUs a node; placement tp-cp-ep-dp-pp
  s.hardware.topology = core::Topology::rail_optimized;
  s.hardware.fabric = superpod().fabric;
  const auto g = step_groups(s);
  CHECK(g.tp.span.top == -1);
  // dp: 8 ranks at stride 8 -> nodes 0..7, one SU
  CHECK(g.dp.span.nodes == 8);
  CHECK(g.dp.span.top == 0);
  // pp: 16 ranks at stride 64 -> nodes 0, 8, ..., 120: 4 SUs under one spine group
  CHECK(g.pp.span.nodes == 16);
  CHECK(g.pp.span.leaves() == 4);
  CHECK(g.pp.span.top == 1);
  // a pipeline hop crosses what the pp group crosses, between two nodes
  CHECK(g.pp_hop.span.nodes == 2);
  CHECK(g.pp_hop.span.leaves() == 2);
  CHECK(g.pp_hop.span.top == 1);
}
