#include "ptdsim/core/report.hpp"

#include <algorithm>
#include <array>
#include <string>

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

namespace ptdsim::core {
namespace {
constexpr std::array<const char*, kPathCauseCount> kPathKeys{
    "compute", "fill_drain", "wait_stage", "tp", "cp", "ep", "pp", "dp_reduce", "dp_gather_wait", "optimizer", "offload",
    "straggler", "fp8_amax"};
constexpr std::array<const char*, kPathCauseCount> kPathWords{
    "compute", "pipeline fill and drain", "waiting for stage", "TP communication", "CP communication",
    "EP communication", "PP sends", "DP gradient reduction", "waiting for a DP all-gather", "optimizer step",
    "CPU offload", "waiting for the slowest GPU", "FP8 amax reductions"};
}  // namespace

std::string path_key(const PathPart& p) {
  const std::string k = kPathKeys[static_cast<std::size_t>(p.cause)];
  return p.stage >= 0 ? k + "_stage_" + std::to_string(p.stage) : k;
}

std::string path_words(const PathPart& p) {
  switch (p.cause) {
    case PathCause::compute:
      return p.stage >= 0 ? "stage " + std::to_string(p.stage) + " compute" : "compute";
    case PathCause::wait_stage:
      return p.stage >= 0 ? "waiting for stage " + std::to_string(p.stage) : "waiting for another stage";
    default: return kPathWords[static_cast<std::size_t>(p.cause)];
  }
}

std::array<double, kPathCauseCount> path_by_cause(const std::vector<PathPart>& parts) {
  std::array<double, kPathCauseCount> out{};
  for (const auto& p : parts) out[static_cast<std::size_t>(p.cause)] += p.seconds;
  return out;
}

}  // namespace ptdsim::core
