#include "ptdsim/core/report.hpp"

#include <algorithm>

namespace ptdsim::core {

std::vector<BoundPart> largest_parts(std::vector<BoundPart> parts) {
  std::stable_sort(parts.begin(), parts.end(), [](const BoundPart& a, const BoundPart& b) { return a.share > b.share; });
  if (parts.size() > 3) parts.resize(3);
  while (parts.size() > 1 && parts.back().share < 0.02) parts.pop_back();
  return parts;
}

}  // namespace ptdsim::core
