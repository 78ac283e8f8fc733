#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ptdsim/analytic/costs.hpp"
#include "ptdsim/core/parallel.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/sim/engine.hpp"

namespace ptdsim::sim {

// One pass of one micro-batch through one virtual chunk of a pipeline rank. F forward; B the
// backward (input and weight gradients together, or only the input gradients under ZB-H1); W the
// weight gradients (ZB-H1 only).
enum class Pass : std::uint8_t { F, B, W };
struct Op {
  Pass pass = Pass::F;
  int chunk = 0;
  int microbatch = 0;
  bool operator==(const Op&) const = default;
};

// The compute order of pipeline stage `stage` of `p` under a schedule, with `v` virtual chunks per
// rank and `m` micro-batches. GPipe: all F then all B. 1F1B: p-stage-1 warm-up forwards, then
// F/B pairs, then the remaining B. Interleaved: Megatron-LM's order (Narayanan et al. 2021,
// schedules.py): micro-batches in groups of p, chunks ascending forward and descending backward,
// (p-stage-1)*2 + (v-1)*p warm-up forwards; needs m % p == 0. ZB-H1 (Qi et al. 2023): 1F1B's
// F/B order with W split off; stage s defers its W by s positions, which keeps at most p
// micro-batches' activations in flight on every stage (1F1B's peak, reached on stage 0), and in
// the cool-down each B is followed by one W, so the W fill the gaps between B.
std::vector<Op> pipeline_order(core::Schedule schedule, int p, int v, int m, int stage);

// A GPU the step simulates: its pipeline stage and data-parallel replica. simulate() uses one
// representative per stage (replicas behave alike); the builder takes any list with each stage at
// most once per replica.
struct RankRef {
  int stage = 0;
  int replica = 0;
};
std::vector<RankRef> representative_ranks(int pp);

struct ScheduleOptions {
  core::Schedule schedule = core::Schedule::one_f_one_b;
  bool overlap_tp = false;  // TP collectives on the TP stream, concurrent with the compute
  bool overlap_pp = true;   // p2p sends asynchronous (the sender does not wait for them)
  bool overlap_dp = true;   // gradient buckets reduced as soon as the last backward made them
  bool zero3_prefetch = true;
  int zero = 0;
  double comm_share = 0;  // compute a running collective takes from its GPU (Engine::set_comm_share)
  // Megatron-LM's DDP bucket: 40M parameters (max(40e6, 1e6*dp)); 4-byte fp32 main gradients.
  double dp_bucket_bytes = 40e6 * 4;
};
ScheduleOptions options_of(const core::Scenario& s);

// The task graph of one training step.
struct StepGraph {
  Engine engine;
  std::vector<RankRef> ranks;
  int microbatches = 1;
  int vpp = 1;
  // Per rank: (first task, last task) of the forward and of the pass that frees the activations
  // (B, or W under ZB-H1), one pair per chunk and micro-batch, for the in-flight count.
  std::vector<std::vector<std::pair<TaskId, TaskId>>> activations;
  std::vector<TaskId> last_pipeline_task;  // per rank, the last compute task before the optimizer
  std::vector<TaskId> optimizer_task;      // per rank
};

// Builds the step's DAG from the per-stage costs: the compute passes in schedule order, TP/CP/EP
// collectives inside the passes, p2p transfers between stages, the DP gradient reduction in
// buckets, ZeRO-3 gathers and reduce-scatters per layer, and the optimizer step. Communication
// times are those of the analytic engine; a link has capacity 1 and a transfer's work is its
// analytic time, so k transfers on a link each take k times as long.
StepGraph build_step(const analytic::StepCosts& costs, const ScheduleOptions& options,
                     std::vector<RankRef> ranks = {});

}  // namespace ptdsim::sim
