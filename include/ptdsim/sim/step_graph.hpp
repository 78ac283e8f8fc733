#pragma once
#include <utility>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/sim/engine.hpp"
#include "ptdsim/sim/network.hpp"

namespace ptdsim::sim {

// A GPU the step simulates: its pipeline stage and data-parallel replica. simulate() uses one
// representative per stage (replicas behave alike); the builder takes any list with each stage at
// most once per replica.
struct RankRef {
  int stage = 0;
  int replica = 0;
};
std::vector<RankRef> representative_ranks(int pp);

// The task graph of one training step.
struct StepGraph {
  Engine engine;
  std::vector<RankRef> ranks;
  int microbatches = 1;
  int vpp = 1;
  // Per rank: (first task, last task) of the forward and of the pass that frees the activations
  // (B, or W when the schedule splits it), one pair per chunk and micro-batch, for the in-flight count.
  std::vector<std::vector<std::pair<TaskId, TaskId>>> activations;
  std::vector<TaskId> last_pipeline_task;  // per rank, the last compute task before the optimizer
  std::vector<TaskId> optimizer_task;      // per rank
  // The scale-out fabric the links follow (network.hpp; simulate() sets the scenario's): empty,
  // every rank has NVLink and its NIC, shared fairly.
  Fabric fabric;
};

// Turns the step plan into tasks without re-deriving any rule: each rank runs its stage's passes in
// the schedule's order (core::ScheduleRules::order), each pass's segments as compute tasks, and each
// segment's collectives as the plan relates them (analytic::Overlap: serial ones chained behind the
// compute, beside and window ones on their own streams, prefetched gathers gated by the compute
// `depth`+1 segments back, after ones feeding the optimizer), p2p sends between neighbour virtual
// stages, the step's DP collectives and the optimizer. A link has capacity 1 and a transfer's work
// is its time alone, so k transfers on a link each take k times as long; on a blocking fabric
// (out.fabric) transfers through different switch tiers share as FlowShare says. Serial TP collectives fold
// into their compute task when nothing else of the rank uses their link (exact: no sharing to model).
StepGraph build_step(const analytic::StepPlan& plan, std::vector<RankRef> ranks = {});
// The same into `out`, replacing what it held but keeping its storage (simulate() builds each of a
// thread's steps into the graph of its previous one).
void build_step(const analytic::StepPlan& plan, StepGraph& out, std::vector<RankRef> ranks = {});

}  // namespace ptdsim::sim
