#pragma once
#include <string>
#include <vector>

#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/hardware.hpp"

// The alpha-beta fit of measured collective times (docs/calibration.md):
//   time = alpha + size * F(n) / busbw
// with F(n) NCCL's bus factor and size nccl-tests' "size", fitted by weighted least squares with
// weight 1/t_measured (so the residuals are relative errors and an 8 B latency-bound point counts as
// much as an 8 GiB bandwidth-bound one). NCCL switches protocol (LL, LL128, Simple) and algorithm
// with size, so one line rarely holds from 8 B to GiBs: the sizes are split into at most
// `max_pieces` contiguous ranges, each with its own line, choosing the split that minimises the
// largest relative error (dynamic programming over the breakpoints: exact up to 64 distinct sizes,
// beyond that over 64 evenly spaced candidate breakpoints, so time and memory stay linear in the
// number of rows). A size whose time exceeds the next larger size's by more than 25% is a spike in
// the run and is left out (reported, with its error against the fit). Bad input throws
// core::ConfigError and nothing else.
namespace ptdsim::calibrate {

struct FitOptions {
  int max_pieces = 4;
  // Stop adding pieces once every size is within this relative error.
  double target_rel_error = 0.05;
};

struct FitPoint {
  double size_bytes = 0;
  double measured_s = 0;
  double fitted_s = 0;
  double rel_error = 0;  // (fitted - measured) / measured
  int piece = 0;      // -1 for a dropped point
  bool dropped = false;  // a spike left out of the fit (slower than the next larger size by > 25%)
  std::string file;
  int line = 0;
};

struct FitPiece {
  double alpha_s = 0;
  double busbw_Bps = 0;
  double first_bytes = 0, last_bytes = 0;  // the measured sizes it was fitted on
  // The sizes it answers for in the hardware file: [min_bytes, max_bytes), the first piece from 0,
  // the last one unbounded, each boundary at the next piece's first measured size.
  double min_bytes = 0, max_bytes = 0;
  double max_abs_rel_error = 0;
  bool alpha_clamped = false;  // the free fit gave alpha < 0: refitted with alpha = 0
  bool busbw_clamped = false;  // the free fit gave no positive slope: busbw fixed at the peak seen
};

struct CollectiveFitResult {
  core::Collective op = core::Collective::all_reduce;
  core::Scope scope = core::Scope::intra;
  int ranks = 0;
  int ranks_per_node = 0;  // as measured; 0 when the logs do not tell
  std::string gpu;         // the device list's GPU name; "" when the logs do not tell
  int algo = -1, proto = -1;  // the NCCL_ALGO / NCCL_PROTO the logs forced (NcclRun); -1: NCCL's pick
  std::vector<FitPiece> pieces;
  std::vector<FitPoint> points;  // by size
  double max_abs_rel_error = 0;
  std::vector<std::string> files;
  std::vector<std::string> notes;
};

// One fit per (collective, scope, ranks, ranks per node, GPU, algorithm, protocol) found in the runs; runs with the same
// key are pooled. Throws core::ConfigError for a run that cannot be fitted: one rank (busbw is
// meaningless), no row with a size and a time above 0, fewer than two distinct non-zero sizes.
std::vector<CollectiveFitResult> fit_collectives(const std::vector<NcclRun>& runs,
                                                 const FitOptions& options = {});

// The rows of the hardware file's `collectives:` section.
std::vector<core::CollectiveFit> hardware_rows(const std::vector<CollectiveFitResult>& fits);

// The model's time for `size_bytes` from the piece holding it.
double fitted_time(const CollectiveFitResult& fit, double size_bytes);

}  // namespace ptdsim::calibrate
