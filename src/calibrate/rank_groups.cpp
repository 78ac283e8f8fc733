#include "ptdsim/calibrate/rank_groups.hpp"

#include <cstdio>

namespace ptdsim::calibrate {

std::optional<Shape> parse_shape(const std::string& text) {
  // digits and one 'x' only (sscanf alone would take " 2x8", "2x 8" and "+2x8")
  if (text.find_first_not_of("0123456789x") != std::string::npos) return std::nullopt;
  Shape s;
  char x = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &s.nodes, &x, &s.per_node, &rest) != 3 || x != 'x' || s.nodes < 1 ||
      s.per_node < 1)
    return std::nullopt;
  return s;
}

std::vector<Shape> default_shapes(int ranks, int nodes, int per_node) {
  // 2, 4, ... below `all`, then `all` itself
  auto counts = [](int all) {
    std::vector<int> out;
    for (int k = 2; k < all; k *= 2) out.push_back(k);
    out.push_back(all);
    return out;
  };
  if (ranks == 1) return {{1, 1}};
  std::vector<Shape> out;
  if (per_node >= 2)
    for (int k : counts(per_node)) out.push_back({1, k});
  if (nodes >= 2)
    for (int h : counts(nodes)) {
      out.push_back({h, per_node});
      if (per_node > 1) out.push_back({h, 1});
    }
  return out;
}

}  // namespace ptdsim::calibrate
