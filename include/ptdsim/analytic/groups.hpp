#pragma once
#include "ptdsim/core/scenario.hpp"

// The communication groups of a layout under its rank placement (docs/analytic.md "Groups and
// placement"): every rule that turns parallel degrees, the placement order and the GPUs per node
// into a group's size, scope and ranks per node lives in groups.cpp. A step resolves them once
// (StepGroups, held by analytic::Step) and every reader takes them from there.
namespace ptdsim::analytic {

// A communication group of one parallel dimension (or several) under the scenario's rank placement.
struct Group {
  int ranks = 1;
  core::Scope scope = core::Scope::intra;
  int ranks_per_node = 1;  // how many of the group's ranks share a node
};

// Size of a parallel dimension in the scenario.
int dim_size(const core::Scenario& s, core::Dim d);
// Distance between consecutive ranks of a dimension's group: the product of the sizes of the dims
// placed inside it (ep counts as 1: expert-parallel ranks are carved out of the data-parallel ones).
int dim_stride(const core::Scenario& s, core::Dim d);

struct DimStride {
  int size = 1;
  int stride = 1;
};
// A group spanning several dims (listed innermost first), e.g. the dp*cp gradient group.
Group group_from(const core::Scenario& s, const DimStride* dims, int count);

// The group of one parallel dimension.
Group group_of(const core::Scenario& s, core::Dim dim);

// The gradient-reduction group: dp*cp ranks for dense parameters (Megatron reduces gradients over
// data and context parallel ranks), dp*cp/ep for expert parameters.
Group grad_group(const core::Scenario& s, bool expert = false);

// Two neighbouring pipeline ranks: a 2-rank group of the pp group's scope, which pipeline sends
// run over.
Group pp_hop_group(const core::Scenario& s);

// ZeRO-3's groups for dense parameters: the shard group its all-gathers and reduce-scatters span
// (dp*cp, or parallel.sharding.shard_ranks of them under hybrid sharding) and, with `replica`, the
// group across the shard groups' copies (one rank when nothing is replicated).
Group sharding_group(const core::Scenario& s, bool replica);

// Every group a step communicates over, resolved once from the scenario.
struct StepGroups {
  Group tp, cp, ep, pp;
  Group pp_hop;     // two neighbouring pipeline ranks (the sends)
  Group dp;         // dense gradients: dp*cp
  Group expert_dp;  // expert gradients: dp*cp/ep for a MoE model, else `dp`
  Group shard;      // ZeRO-3's shard group (a default one-rank group below ZeRO-3)
  Group replica;    // ZeRO-3's replica group (likewise)
};
StepGroups step_groups(const core::Scenario& s);

}  // namespace ptdsim::analytic
