#include "ptdsim/analytic/capacity.hpp"

#include <algorithm>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/core/check.hpp"

namespace ptdsim::analytic {
namespace {

bool fits(const core::Scenario& s) { return core::check(s).empty() && evaluate(s).fits; }

}  // namespace

Capacity capacity(const core::Scenario& s) {
  Capacity out;
  // micro-batch: memory grows with it, so the largest divisor that fits is the answer
  const int per_replica = s.parallel.dp > 0 ? s.training.global_batch / s.parallel.dp : 0;
  core::Scenario t = s;
  for (int b = 1; b <= per_replica; ++b) {
    if (per_replica % b != 0) continue;
    t.training.micro_batch = b;
    if (fits(t)) out.micro_batch = b;
    else if (b >= s.training.micro_batch) break;  // larger ones hold more
  }
  // sequence: memory grows with it; the longest multiple of 256 that fits, by bisection between a
  // length that fits and one that does not (doubling until one does not, up to 2^24 tokens)
  constexpr int kStep = 256, kMax = 1 << 24;
  t = s;
  auto fits_seq = [&](int n) {
    t.training.seq_len = n;
    return fits(t);
  };
  int lo = 0;  // in steps of kStep: the longest known to fit
  for (int n = std::max(1, s.training.seq_len / kStep); n * kStep <= kMax; n *= 2) {
    if (!fits_seq(n * kStep)) {
      int hi = n;
      while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (fits_seq(mid * kStep) ? lo : hi) = mid;
      }
      break;
    }
    lo = n;
  }
  out.seq_len = lo * kStep;
  // the scenario's own length when it is no multiple of 256 and nothing longer was found
  if (out.seq_len < s.training.seq_len && fits_seq(s.training.seq_len)) out.seq_len = s.training.seq_len;
  return out;
}

}  // namespace ptdsim::analytic
