#include <algorithm>
#include <string>

#include "ptdsim/core/schedule.hpp"

// 1F1B (PipeDream-Flush; Narayanan et al. 2021 section 2.2.1): stage s runs p-s-1 warm-up forwards,
// then one forward and one backward in turn, then the remaining backwards. It holds min(p-s, m)
// micro-batches' activations; the bubble is (p-1) slots of forward + backward, as GPipe's.
namespace ptdsim::core {
namespace {

void order(const PipelineShape& sh, int stage, std::vector<PassRef>& out) {
  out.clear();
  const int m = sh.m, warmup = std::min(sh.p - stage - 1, m);
  for (int i = 0; i < warmup; ++i) out.push_back({Pass::F, 0, i});
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back({Pass::F, 0, warmup + i});
    out.push_back({Pass::B, 0, i});
  }
  for (int i = m - warmup; i < m; ++i) out.push_back({Pass::B, 0, i});
}

double in_flight(const PipelineShape& sh, int stage) { return std::min(sh.p - stage, sh.m); }

double bubble_s(const PipelineShape& sh, double t_f, double t_b, double t_w) {
  return (sh.p - 1) * (t_f + t_b + t_w);
}

void check(const PipelineShape& sh, std::vector<Problem>& out) {
  if (sh.v > 1) out.push_back({"parallel.schedule", "unsupported", "vpp > 1 runs the interleaved schedule, not 1f1b"});
}

}  // namespace

const ScheduleRules kOneFOneB{Schedule::one_f_one_b, false, false, order, in_flight, bubble_s, check};

}  // namespace ptdsim::core
