#pragma once
#include "ptdsim/core/hardware.hpp"

namespace ptdsim::core {

// NCCL's bus factor F(n) of a collective over n ranks: busbw = algbw * F (nccl-tests
// doc/PERFORMANCE.md), i.e. the bytes each rank moves per byte of the buffer. all_reduce 2(n-1)/n
// (a reduce-scatter then an all-gather); all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast,
// reduce, send_recv 1. The model's alpha-beta times (analytic/collectives.cpp) and the fit of
// measured logs (calibrate/fit.cpp) both read it, so a fitted busbw means the same to both.
inline double bus_factor(Collective op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Collective::all_reduce: return 2 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (n - 1) / n;
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::send_recv: return 1;
  }
  return 1;
}

// A piecewise alpha-beta line answers for a size with the piece whose sizes [min_bytes, max_bytes)
// hold it (half-open, as the fit cuts them: a boundary size belongs to the piece it starts); a size
// outside every piece (a hand-written table with gaps, or sizes below or above all of them) with
// the piece nearest in bytes. This is how far `bytes` is from a piece: -1 inside it (nearer than any
// miss), else the bytes to its range. Pick the least; on a tie the first, so a table's order
// decides between equally near pieces. The fit's report (calibrate::fitted_time) and the model's
// calibrated rows (analytic::collective_line) both pick by it.
inline double piece_miss(double min_bytes, double max_bytes, double bytes) {
  if (bytes >= min_bytes && bytes < max_bytes) return -1;
  return bytes < min_bytes ? min_bytes - bytes : bytes - max_bytes;
}

}  // namespace ptdsim::core
