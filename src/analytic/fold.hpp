#pragma once
#include <array>
#include <vector>

#include "ptdsim/analytic/assemble.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/report.hpp"

// The closed-form reading of a step plan (docs/analytic.md "Folding the plan"), shared by the
// analytic engine (evaluate.cpp) and the report assembly (report.cpp). One rule per overlap kind:
//   serial          exposed whole
//   beside, window  exposed by what outlasts the compute it hides behind: max(0, t - window)
//   prefetch        the same, counting the segment's `after` traffic on the same group, which
//                   shares the gather's link: max(0, t + after - window)
//   after           hidden in the pass (the optimizer waits for it; see the step's comms)
// and once per step ZeRO-3's edges: the step's first gather exposed whole, its last reduce-scatter
// exposed whole (StageFold::zero3_edges_s).
namespace ptdsim::analytic::detail {

struct PassSums {
  double compute = 0;
  std::array<double, core::kCommKindCount> time{}, exposed{}, window{}, sent{};
};

// One pipeline stage per micro-batch (all its chunks' passes) and once per step.
struct StageFold {
  double f = 0, b = 0, w = 0;  // forward, backward (B, recomputation included), weight-gradient pass
  PassSums per_mb;             // every pass of one micro-batch through every chunk
  // data-parallel collectives of the step (gradient reduction, ZeRO-1/2 parameter all-gather)
  double dp_step_time = 0, dp_step_exposed = 0, dp_step_sent = 0, dp_step_window = 0;
  double p2p_s = 0, p2p_sent = 0, p2p_window = 0;  // one send and what it may hide behind
  // ZeRO-3, one unit of the stage's first chunk: its forward gather and forward compute, its
  // backward collectives (gathers, reduce-scatter, replica all-reduce) and backward compute
  double unit_gather_s = 0, unit_forward_s = 0, unit_backward_comm_s = 0, unit_backward_s = 0;
  bool unit_forward_ahead = false, unit_backward_ahead = false;  // gathers issued ahead (or none needed)
  // ZeRO-3 once per step: the first unit's gather, which nothing before it hides, and the last
  // unit's reduce-scatter, which the optimizer waits for (beyond what the per-unit rule counts)
  double zero3_edges_s = 0;
  // per micro-batch compute plus the in-pass TP/CP/EP it cannot hide: what sets a stage's pace
  double busy() const;
};

// t_comm / t_compute, the report's overlap ratio (1e9 for communication with no compute beside it).
double ratio(double comm, double compute);

// Stage st's fold, added into `out` (a fresh StageFold).
void fold_stage(const StepPlan& plan, const StagePlan& st, StageFold& out);

// Every stage folded, with the two stages the report reads: the slowest (the most compute plus
// unhidden in-pass communication per micro-batch; the first of equals) and the one with the most
// data-parallel traffic (the first of equals: it holds the embedding). A stage that repeats an
// earlier one (StagePlan::repeats) folds to that stage's numbers: `distinct` holds the folds of
// the others only, in stage order, and `of[stage]` says which is a stage's (no copies of a
// 300-byte fold per stage).
struct Folds {
  std::vector<StageFold> distinct;
  std::vector<int> of;  // per stage, its fold in `distinct`
  int slowest = 0;      // stage indices
  int dp = 0;
  const StageFold& stage(int i) const { return distinct[of[i]]; }
  const StageFold& slowest_fold() const { return stage(slowest); }
  const StageFold& dp_fold() const { return stage(dp); }
};
Folds fold_stages(const StepPlan& plan);
// The same into `out`, whose storage is reused (nothing of what it held is read).
void fold_stages(const StepPlan& plan, Folds& out);

// Volume, time alone, overlap ratio, overlappable and crosses_nodes per kind (exposed_s left 0):
// in-pass kinds from the slowest stage over m micro-batches; pp every send of the step; dp the
// stage with the most data-parallel traffic.
std::array<core::CommStats, core::kCommKindCount> comm_stats(const StepPlan& plan, const Folds& folds);

// The analytic engine's timing of a plan (evaluate.cpp), with its comm_stats.
StepTiming fold_timing(const StepPlan& plan, const Folds& folds,
                       const std::array<core::CommStats, core::kCommKindCount>& comm);

// assemble_report with the folds and their comm_stats already computed (the analytic engine has
// them).
core::Report assemble(const Step& step, const Folds& folds,
                      const std::array<core::CommStats, core::kCommKindCount>& comm, StepTiming t);

}  // namespace ptdsim::analytic::detail
