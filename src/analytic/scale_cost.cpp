#include "ptdsim/analytic/scale_cost.hpp"

#include "ptdsim/analytic/collectives.hpp"

#include <cmath>
#include <numbers>

namespace ptdsim::analytic {

namespace {

// The standard normal's upper quantile: x with P(Z > x) = q, for q in (0, 1/2], by Newton's method
// on the tail 0.5 erfc(x / sqrt 2) - q (its derivative is minus the density), from the tail's
// asymptote sqrt(-2 ln q). Converges to double precision in a few steps for every q a job's size
// gives (q >= 1e-8 at 10^7 GPUs).
double upper_quantile(double q) {
  const double s2 = std::sqrt(2.0);
  double x = q >= 0.5 ? 0.0 : std::sqrt(-2.0 * std::log(q));
  for (int i = 0; i < 50; ++i) {
    const double f = 0.5 * std::erfc(x / s2) - q;
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    const double step = f / density;
    x += step;
    if (std::abs(step) < 1e-13 * (1.0 + std::abs(x))) break;
  }
  return x;
}

}  // namespace

double expected_max_normal(double n) {
  if (!(n > 1)) return 0.0;
  // Blom: Phi^-1((n - 0.375) / (n + 0.25)) = the upper quantile of 1 - that = 0.625 / (n + 0.25)
  thread_local double last_n = 0, last_z = 0;  // (a sweep asks for one job size over and over)
  if (n != last_n) {
    last_z = upper_quantile(0.625 / (n + 0.25));
    last_n = n;
  }
  return last_z;
}

double straggler_wait_s(const core::JitterSpec& jitter, double gpus, double compute_s, double comm_s) {
  if (!jitter.any() || !(gpus > 1)) return 0.0;
  return expected_max_normal(gpus) * std::hypot(jitter.compute * compute_s, jitter.link * comm_s);
}

AmaxSync amax_sync(const core::HardwareSpec& hw, const Group& g, int m, int v, int layers_per_chunk) {
  AmaxSync a;
  if (g.ranks <= 1 || m < 1 || v < 1 || layers_per_chunk < 1) return a;
  // the amax buffer TransformerEngine concatenates: fp32, per GEMM three forward tensors (input,
  // weight, output: fp8_meta["scaling_fwd"]) and two backward ones (output gradient, input
  // gradient: "scaling_bwd"); a transformer layer's GEMMs are QKV, projection, fc1 and fc2
  constexpr double kGemmsPerLayer = 4, kFp32 = 4;
  const double gemms = kGemmsPerLayer * layers_per_chunk;
  a.regions = m * v;
  a.forward_s = collective_time(hw, core::Collective::all_reduce, 3 * kFp32 * gemms, g);
  a.backward_s = collective_time(hw, core::Collective::all_reduce, 2 * kFp32 * gemms, g);
  return a;
}

}  // namespace ptdsim::analytic
