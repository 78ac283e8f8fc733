#pragma once
#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/core/hardware.hpp"

// The cost of scale (docs/analytic.md "The cost of scale"): a synchronous step ends when its slowest
// GPU does, so a job of N GPUs whose per-rank times spread waits, on average, for the expected
// maximum of N draws.
namespace ptdsim::analytic {

// E[max of n independent standard normal draws], by Blom's approximation Phi^-1((n - 0.375) /
// (n + 0.25)) (Blom 1958, "Statistical Estimates and Transformed Beta-Variables"; Harter 1961,
// Biometrika 48, tabulates the exact values: 1.5388 at n 10, 2.5076 at 100, 3.2414 at 1,000; Blom's
// are within 0.6% of them there). 0 for n <= 1; grows as sqrt(2 ln n), the normal's extreme-value
// limit (Cramér 1946, "Mathematical Methods of Statistics", 28.6).
double expected_max_normal(double n);

// The step's wait for its slowest rank, in seconds: z(N) * sqrt((jitter.compute * compute_s)^2 +
// (jitter.link * comm_s)^2), N the job's GPUs, compute_s the busiest stage's compute, comm_s the
// communication the step waits for (its exposed part). Each rank's time is its mean plus a spread
// of those relative standard deviations, the two independent; 0 when the hardware has no jitter.
double straggler_wait_s(const core::JitterSpec& jitter, double gpus, double compute_s, double comm_s);

// FP8 delayed scaling's amax reductions (docs/analytic.md "FP8 amax reductions"): TransformerEngine
// all-reduces (MAX) the amaxes of every FP8 tensor of an fp8_autocast region across the region's
// group, blocking (async_op=False), when the region's forward ends and when its first module's
// backward ends. Megatron-Core opens one region per transformer block call, so a stage pays one
// forward and one backward reduction per micro-batch and model chunk, over the tp*cp*dp ranks.
struct AmaxSync {
  int regions = 0;        // forward regions per step on a stage (m * v); as many backward ones
  double forward_s = 0;   // one forward reduction (3 fp32 amaxes per GEMM of the chunk)
  double backward_s = 0;  // one backward reduction (2 per GEMM)
  double step_s() const { return regions * (forward_s + backward_s); }
};
// The reductions of a stage holding `layers_per_chunk` layers of 4 GEMMs each, run m * v times a
// step over group `g`, each timed as the all-reduce NCCL's model picks (collective_time).
AmaxSync amax_sync(const core::HardwareSpec& hw, const Group& g, int m, int v, int layers_per_chunk);

}  // namespace ptdsim::analytic
