#include "ptdsim/core/report.hpp"

#include <algorithm>

namespace ptdsim::core {

std::vector<BoundPart> largest_parts(std::vector<BoundPart> parts) {
  // largest first, ties in the given order: a stable insertion sort (a handful of parts; std::stable_sort
  // would allocate a buffer for them on every evaluation)
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const BoundPart x = parts[i];
    std::size_t j = i;
    for (; j > 0 && x.share > parts[j - 1].share; --j) parts[j] = parts[j - 1];
    parts[j] = x;
  }
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
