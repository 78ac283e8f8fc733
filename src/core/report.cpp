#include "ptdsim/core/report.hpp"

#include <algorithm>

namespace ptdsim::core {

std::vector<BoundPart> largest_parts(std::vector<BoundPart> parts) {
  std::stable_sort(parts.begin(), parts.end(), [](const BoundPart& a, const BoundPart& b) { return a.share > b.share; });
  if (parts.size() > 3) parts.resize(3);
  while (parts.size() > 1 && parts.back().share < 0.02) parts.pop_back();
  return parts;
}

std::string zero3_verdict(const Report& r) {
  if (r.zero3_overlap_ratio <= 0 && r.zero3_backward_ratio <= 0) return "";
  auto part = [](const char* pass, bool prefetch, double ratio) {
    return std::string(pass) + (!prefetch ? " exposed (no prefetch)" : ratio > 1 ? " partly exposed (ratio above 1)" : " hidden");
  };
  return part("forward", r.zero3_prefetch, r.zero3_overlap_ratio) + ", " +
         part("backward", r.zero3_backward_prefetch, r.zero3_backward_ratio);
}

}  // namespace ptdsim::core
