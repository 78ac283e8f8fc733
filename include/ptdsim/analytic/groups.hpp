#pragma once
#include "ptdsim/analytic/fabric.hpp"
#include "ptdsim/core/scenario.hpp"

// The communication groups of a layout under its rank placement (docs/analytic.md "Groups and
// placement"): every rule that turns parallel degrees, the placement order and the GPUs per node
// into a group's size, scope and ranks per node lives in groups.cpp. A step resolves them once
// (StepGroups, held by analytic::Step) and every reader takes them from there.
namespace ptdsim::analytic {

// A communication group of one parallel dimension (or several) under the scenario's rank placement.
struct Group {
  Group() = default;
  // the link model's view (tests and one-off callers): the span stays "no switch crossed"
  Group(int ranks_, core::Scope scope_, int ranks_per_node_) : ranks(ranks_), scope(scope_), ranks_per_node(ranks_per_node_) {}
  int ranks = 1;
  core::Scope scope = core::Scope::intra;
  int ranks_per_node = 1;  // how many of the group's ranks share a node
  FabricSpan span;         // nodes, leaf groups and switch tiers it spans (fabric_span)
};

// Size of a parallel dimension in the scenario.
int dim_size(const core::Scenario& s, core::Dim d);
// Distance between consecutive ranks of a dimension's group: the product of the sizes of the dims
// placed inside it (ep counts as 1: expert-parallel ranks are carved out of the data-parallel ones).
int dim_stride(const core::Scenario& s, core::Dim d);

// A group spanning several dims (listed innermost first), e.g. the dp*cp gradient group.
Group group_from(const core::Scenario& s, const DimStride* dims, int count);

// The group of one parallel dimension.
Group group_of(const core::Scenario& s, core::Dim dim);

// The gradient-reduction group: dp*cp ranks for dense parameters (Megatron reduces gradients over
// data and context parallel ranks), the experts' data-parallel group for expert parameters
// (tp*cp*dp / (etp*ep) ranks: dp*cp/ep when etp == tp).
Group grad_group(const core::Scenario& s, bool expert = false);

// The experts' groups (docs/analytic.md "Expert parallelism"): one expert's weights split over the
// expert-TP group (the tp group when etp == tp); the experts spread over the ep group; the
// allgather and flex dispatchers' etp*ep group. With etp == tp, ep sits where parallel.placement
// puts it; with another etp, the experts fold over the tp*cp*dp ranks (Megatron-Core's MoE
// parallel folding): etp innermost, then ep, then the experts' data parallel.
Group expert_tp_group(const core::Scenario& s);
Group ep_group(const core::Scenario& s);
Group expert_tp_ep_group(const core::Scenario& s);

// Two neighbouring pipeline ranks: a 2-rank group of the pp group's scope, which pipeline sends
// run over.
Group pp_hop_group(const core::Scenario& s);

// ZeRO-3's groups for dense parameters: the shard group its all-gathers and reduce-scatters span
// (dp*cp, or parallel.sharding.shard_ranks of them under hybrid sharding) and, with `replica`, the
// group across the shard groups' copies (one rank when nothing is replicated).
Group sharding_group(const core::Scenario& s, bool replica);

// The FP8 amax reduction group of TransformerEngine's delayed scaling: the tp*cp*dp ranks of a
// pipeline stage (Megatron-Core's get_amax_reduction_group(with_context_parallel=True), the
// tensor-, data- and context-parallel group; docs/analytic.md "FP8 amax reductions").
Group amax_group(const core::Scenario& s);
// Every group a step communicates over, resolved once from the scenario.
struct StepGroups {
  Group tp, cp, ep, pp;  // ep: the experts' all-to-all group (ep_group)
  Group expert_tp;       // one expert's weights (expert_tp_group; tp's for a dense model)
  Group expert_tp_ep;    // the allgather and flex dispatchers' group
  Group dispatch;        // where an MoE layer's dispatch runs (training.moe.dispatcher's group)
  Group pp_hop;     // two neighbouring pipeline ranks (the sends)
  Group dp;         // dense gradients: dp*cp
  Group expert_dp;  // expert gradients: tp*cp*dp/(etp*ep) for a MoE model, else `dp`
  Group shard;      // ZeRO-3's shard group (a default one-rank group below ZeRO-3)
  Group replica;    // ZeRO-3's replica group (likewise)
  Group amax;       // FP8 delayed scaling's amax reductions: tp*cp*dp (amax_group)
};
StepGroups step_groups(const core::Scenario& s);

}  // namespace ptdsim::analytic
