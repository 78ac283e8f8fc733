#pragma once
#include <compare>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/scenario.hpp"

// The closed forms of one layer and of the ends of the model, per GPU and micro-batch, that depend
// on the layout's degrees and micro-batch but not on how its step is scheduled, sharded or split:
// what step_work() sums over the virtual stages and the memory model over the pipeline stages. A
// sweep computes them once for all the candidates that share their key (docs/performance.md
// "Planner"): the same numbers, to the last bit, as computing them per candidate.
namespace ptdsim::analytic {

struct LayerCosts {
  LayerTimes dense, moe;             // compute (compute.hpp); moe is zero for a dense model
  LayerComm dense_comm, moe_comm;    // TP, CP and EP collectives (comm.hpp)
  EndTimes embedding, logits;        // the first and the last virtual stage's extra work
  GpuParams dense_params, moe_params;  // one layer's parameters on one GPU
  double activation_dense = 0, activation_moe = 0;  // activation_bytes_per_layer
  // under full recomputation, the whole activations of the layer being recomputed (memory.cpp)
  double recomputed_dense = 0, recomputed_moe = 0;
  double p2p_bytes = 0, p2p_s = 0;  // one pipeline send (0 s without a pipeline)
  // the operators the times sum (operators.hpp), which the report's compute breakdown lists
  LayerOps dense_ops, moe_ops;
  EndOps ends;
};
LayerCosts layer_costs(const core::Scenario& s);
// The same into `out`, whose storage is reused: every field is written.
void layer_costs(const core::Scenario& s, LayerCosts& out);
// The same with the layout's groups already resolved (step_groups(s)).
void layer_costs(const core::Scenario& s, const StepGroups& groups, LayerCosts& out);

// What layer_costs() reads of the fields a sweep candidate sets (planner::apply): candidates of one
// sweep (one model, hardware, sequence length, precision, placement, GPU count) with equal keys have
// equal costs. The rest of what a candidate sets (vpp, schedule, ZeRO stage, shard group, overlap
// switches, the split) it does not read.
struct LayerCostsKey {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, micro_batch = 1;  // pp and dp: the groups' placement
  bool sequence_parallel = false;
  core::Recompute recompute = core::Recompute::none;
  int etp = 0;  // parallel.etp (the sweep's --etp)
  unsigned recompute_modules = 0;  // training.recompute_modules (the base scenario's, read under selective)
  unsigned offload_modules = 0;    // training.offload_modules (the base scenario's)
  bool operator==(const LayerCostsKey&) const = default;
};
LayerCostsKey layer_costs_key(const core::Scenario& s);

}  // namespace ptdsim::analytic
