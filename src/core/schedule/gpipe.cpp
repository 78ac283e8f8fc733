#include <string>

#include "ptdsim/core/schedule.hpp"

// GPipe (Huang et al. 2019): every forward, then every backward. The stage holds all m micro-batches'
// activations; the bubble is (p-1) micro-batch slots of forward + backward.
namespace ptdsim::core {
namespace {

void order(const PipelineShape& sh, int, std::vector<PassRef>& out) {
  out.clear();
  for (int i = 0; i < sh.m; ++i) out.push_back({Pass::F, 0, i});
  for (int i = 0; i < sh.m; ++i) out.push_back({Pass::B, 0, i});
}

double in_flight(const PipelineShape& sh, int) { return sh.m; }

double bubble_s(const PipelineShape& sh, double t_f, double t_b, double t_w) {
  return (sh.p - 1) * (t_f + t_b + t_w);
}

void check(const PipelineShape& sh, std::vector<Problem>& out) {
  if (sh.v > 1) out.push_back({"parallel.schedule", "unsupported", "vpp > 1 runs the interleaved schedule, not gpipe"});
}

}  // namespace

const ScheduleRules kGpipe{Schedule::gpipe, false, false, order, in_flight, bubble_s, check};

}  // namespace ptdsim::core
