#include <algorithm>
#include <string>

#include "ptdsim/core/schedule.hpp"

// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021 section 2.2.2; schedules.py): each rank holds
// v chunks; micro-batches go in groups of p, chunks ascending forward and descending backward, after
// (p-s-1)*2 + (v-1)*p warm-up forwards (all of them when m == p). The bubble shrinks v-fold:
// (p-1)/v slots. Megatron needs the micro-batch count to be a multiple of p.
namespace ptdsim::core {
namespace {

void order(const PipelineShape& sh, int stage, std::vector<PassRef>& out) {
  out.clear();
  const int p = sh.p, v = sh.v, m = sh.m, total = m * v;
  auto at = [&](int k, bool forward) {
    const int group = k / (p * v), within = k % (p * v);
    const int chunk = forward ? within / p : v - 1 - within / p;
    return PassRef{forward ? Pass::F : Pass::B, chunk, group * p + within % p};
  };
  const int warmup = m == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  for (int k = 0; k < warmup; ++k) out.push_back(at(k, true));
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back(at(warmup + i, true));
    out.push_back(at(i, false));
  }
  for (int i = total - warmup; i < total; ++i) out.push_back(at(i, false));
}

// Megatron's warm-up count min(m*v, 2(p-s-1) + (v-1)p + 1) chunks, each 1/v of a micro-batch.
double in_flight(const PipelineShape& sh, int stage) {
  const int chunks = std::min(sh.m * sh.v, 2 * (sh.p - stage - 1) + (sh.v - 1) * sh.p + 1);
  return static_cast<double>(chunks) / sh.v;
}

double bubble_s(const PipelineShape& sh, double t_f, double t_b, double t_w) {
  return (sh.p - 1) / static_cast<double>(sh.v) * (t_f + t_b + t_w);
}

void check(const PipelineShape& sh, std::vector<Problem>& out) {
  if (sh.v == 1) out.push_back({"parallel.schedule", "unsupported", "the interleaved schedule needs vpp > 1"});
  if (sh.m > 0 && sh.m % sh.p != 0)
    out.push_back({"training.global_batch", "batch",
                   "the interleaved schedule needs the micro-batch count " + std::to_string(sh.m) +
                       " to be a multiple of pp " + std::to_string(sh.p)});
}

}  // namespace

const ScheduleRules kInterleaved{Schedule::interleaved, false, true, order, in_flight, bubble_s, check};

}  // namespace ptdsim::core
