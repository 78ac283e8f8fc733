#include "ptdsim/analytic/to_train.hpp"

#include <algorithm>

namespace ptdsim::analytic {

double gpu_power_w(const core::GpuSpec& gpu, double step_s, double busy_s) {
  if (gpu.tdp_w <= 0 || gpu.idle_w <= 0 || step_s <= 0) return 0;
  const double busy = std::clamp(busy_s / step_s, 0.0, 1.0);
  return gpu.idle_w + (gpu.tdp_w - gpu.idle_w) * busy;
}

core::ToTrain to_train(const core::Scenario& s, double step_s, double busy_s) {
  core::ToTrain t;
  const double tokens_per_step = static_cast<double>(s.training.global_batch) * s.training.seq_len;
  if (s.training.tokens <= 0 || tokens_per_step <= 0 || step_s <= 0) return t;
  t.tokens = s.training.tokens;
  // a fractional last step is charged at its share: the budget, not the step, is what is asked
  t.steps = t.tokens / tokens_per_step;
  t.seconds = t.steps * step_s;
  t.gpu_hours = t.seconds * s.gpus / 3600;
  t.gpu_power_w = gpu_power_w(s.hardware.gpu, step_s, busy_s);
  t.energy_j = t.gpu_power_w * s.gpus * t.seconds;
  t.cost = t.gpu_hours * s.cost.gpu_hour;
  return t;
}

}  // namespace ptdsim::analytic
