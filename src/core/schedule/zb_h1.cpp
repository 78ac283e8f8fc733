#include <algorithm>
#include <deque>
#include <string>

#include "ptdsim/core/schedule.hpp"

// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", section 3): 1F1B's F/B order with the
// weight gradients (W) split off; stage s defers its W by s positions, which keeps at most p
// micro-batches' activations in flight on every stage (1F1B's peak, reached on stage 0), and in the
// cool-down each B is followed by one W, so the W fill the gaps between B. The bubble shrinks to
// (p-1)(t_f + t_b - t_w).
namespace ptdsim::core {
namespace {

void order(const PipelineShape& sh, int stage, std::vector<PassRef>& out) {
  out.clear();
  const int m = sh.m, warmup = std::min(sh.p - stage - 1, m), defer = stage;
  std::deque<int> pending;  // micro-batches whose B ran and W did not
  for (int i = 0; i < warmup; ++i) out.push_back({Pass::F, 0, i});
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back({Pass::F, 0, warmup + i});
    out.push_back({Pass::B, 0, i});
    pending.push_back(i);
    if (static_cast<int>(pending.size()) > defer) {
      out.push_back({Pass::W, 0, pending.front()});
      pending.pop_front();
    }
  }
  for (int i = m - warmup; i < m; ++i) {
    out.push_back({Pass::B, 0, i});
    pending.push_back(i);
    out.push_back({Pass::W, 0, pending.front()});
    pending.pop_front();
  }
  for (int i : pending) out.push_back({Pass::W, 0, i});
}

double in_flight(const PipelineShape& sh, int stage) { return std::min(sh.p - stage, sh.m); }

double bubble_s(const PipelineShape& sh, double t_f, double t_b, double t_w) {
  return (sh.p - 1) * std::max(0.0, t_f + t_b - t_w);
}

void check(const PipelineShape& sh, std::vector<Problem>& out) {
  if (sh.v > 1) out.push_back({"parallel.schedule", "unsupported", "vpp > 1 runs the interleaved schedule, not zb-h1"});
}

}  // namespace

const ScheduleRules kZbH1{Schedule::zb_h1, true, false, order, in_flight, bubble_s, check};

}  // namespace ptdsim::core
