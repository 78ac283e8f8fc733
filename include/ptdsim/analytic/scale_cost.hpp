#pragma once
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

}  // namespace ptdsim::analytic
