// The groups of ranks ptdsim-calibrate measures: parsed from --shapes, or chosen for the run's world
// (expected lists worked out by hand from the rule in rank_groups.hpp).
#include <catch2/catch.hpp>

#include "ptdsim/calibrate/rank_groups.hpp"

using ptdsim::calibrate::default_shapes;
using ptdsim::calibrate::parse_shape;
using ptdsim::calibrate::Shape;
using Shapes = std::vector<Shape>;

TEST_CASE("calibrate: parse_shape reads NODESxPER_NODE and nothing else", "[calibrate]") {
  REQUIRE(parse_shape("2x8") == Shape{2, 8});
  REQUIRE(parse_shape("1x1") == Shape{1, 1});
  REQUIRE(parse_shape("16x4")->ranks() == 64);
  for (const char* bad : {"", "x8", "2x", "2*8", "0x8", "2x0", "-1x8", "+2x8", " 2x8", "2x 8", "2x8x", "2x8 ", "2x8x1", "two"})
    CHECK_FALSE(parse_shape(bad).has_value());
}

TEST_CASE("calibrate: default_shapes: one node, several nodes, one rank", "[calibrate]") {
  // one GPU: NCCL's one-rank path only
  CHECK(default_shapes(1, 1, 1) == Shapes{{1, 1}});
  // one node of 8: 2, 4 and all 8 ranks
  CHECK(default_shapes(8, 1, 8) == Shapes{{1, 2}, {1, 4}, {1, 8}});
  // a count that is no power of two ends with itself
  CHECK(default_shapes(6, 1, 6) == Shapes{{1, 2}, {1, 4}, {1, 6}});
  // 2 nodes of 8: the node's groups, then both nodes full and one rank on each
  CHECK(default_shapes(16, 2, 8) == Shapes{{1, 2}, {1, 4}, {1, 8}, {2, 8}, {2, 1}});
  CHECK(default_shapes(32, 4, 8) == Shapes{{1, 2}, {1, 4}, {1, 8}, {2, 8}, {2, 1}, {4, 8}, {4, 1}});
  // one rank per node: no intra-node group, and no duplicate one-rank-per-node group
  CHECK(default_shapes(4, 4, 1) == Shapes{{2, 1}, {4, 1}});
}
