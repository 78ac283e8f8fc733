#include "ptdsim/analytic/groups.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ptdsim::analytic {

int dim_size(const core::Scenario& s, core::Dim d) {
  const auto& p = s.parallel;
  switch (d) {
    case core::Dim::tp: return p.tp;
    case core::Dim::cp: return p.cp;
    case core::Dim::ep: return p.ep;
    case core::Dim::dp: return p.dp;
    case core::Dim::pp: return p.pp;
  }
  return 1;
}

int dim_stride(const core::Scenario& s, core::Dim d) {
  // ep is carved out of the data-parallel ranks (tp*cp*dp*pp == gpus), so it takes no room in
  // the rank order: its ranks are the ep consecutive ranks of the dims placed outside it.
  int stride = 1;
  for (core::Dim inner : s.parallel.placement) {
    if (inner == d) break;
    if (inner != core::Dim::ep) stride *= dim_size(s, inner);
  }
  return stride;
}

Group group_from(const core::Scenario& s, const DimStride* dims, int count) {
  // ranks_per_node: how many of the group's ranks, starting from rank 0, fall below gpus_per_node
  // when its dims are laid out at their strides (innermost first).
  const int gpn = std::max(1, s.hardware.gpus_per_node);
  Group g;
  g.ranks = 1;
  for (int i = 0; i < count; ++i) g.ranks *= dims[i].size;
  g.ranks_per_node = static_cast<int>(ranks_below(dims, count, gpn));
  g.scope = g.ranks_per_node >= g.ranks ? core::Scope::intra : core::Scope::inter;
  g.span = fabric_span(s.hardware, dims, count, g.ranks_per_node);
  return g;
}

Group group_of(const core::Scenario& s, core::Dim dim) {
  const DimStride d{dim_size(s, dim), dim_stride(s, dim)};
  return group_from(s, &d, 1);
}

namespace {

// A group of the experts' layout under MoE parallel folding (Megatron-Core >= 0.10: the expert
// RankGenerator lays etp, ep and expert dp, innermost first, over the ranks of the attention's
// tp*cp*dp, cp counted as 1): `take` ranks `skip` apart in that block, the block's ranks in the
// order of their dims' strides. Each dim is split by gcd, exact for the power-of-two degrees
// frameworks run.
Group folded_group(const core::Scenario& s, int skip, int take) {
  const auto& p = s.parallel;
  DimStride dims[3] = {{p.tp, dim_stride(s, core::Dim::tp)},
                       {p.cp, dim_stride(s, core::Dim::cp)},
                       {p.dp, dim_stride(s, core::Dim::dp)}};
  std::sort(dims, dims + 3, [](const DimStride& a, const DimStride& b) { return a.stride < b.stride; });
  DimStride out[3];
  int n = 0, left = take;
  for (const DimStride& d : dims) {
    if (left == 1) break;
    const int g = std::gcd(d.size, skip);
    skip /= g;
    const int avail = d.size / g;
    if (skip > 1) continue;  // this dim lies inside one step of the group
    const int here = std::gcd(avail, left);
    if (here > 1) out[n++] = {here, d.stride * g};
    left /= here;
    skip = avail / here;  // the rest of this dim lies between the group's next ranks
  }
  return group_from(s, out, n);
}

}  // namespace

Group expert_tp_group(const core::Scenario& s) {
  const auto& p = s.parallel;
  return p.folded_experts() ? folded_group(s, 1, p.expert_tp()) : group_of(s, core::Dim::tp);
}

Group ep_group(const core::Scenario& s) {
  const auto& p = s.parallel;
  return p.folded_experts() ? folded_group(s, p.expert_tp(), p.ep) : group_of(s, core::Dim::ep);
}

Group expert_tp_ep_group(const core::Scenario& s) {
  const auto& p = s.parallel;
  if (p.folded_experts()) return folded_group(s, 1, p.expert_tp() * p.ep);
  DimStride dims[2] = {{p.tp, dim_stride(s, core::Dim::tp)}, {p.ep, dim_stride(s, core::Dim::ep)}};
  if (dims[1].stride < dims[0].stride) std::swap(dims[0], dims[1]);
  return group_from(s, dims, 2);
}

Group grad_group(const core::Scenario& s, bool expert) {
  const auto& p = s.parallel;
  if (expert && p.folded_experts()) return folded_group(s, p.expert_tp() * p.ep, p.expert_dp());
  DimStride cp{p.cp, dim_stride(s, core::Dim::cp)};
  DimStride dp{p.dp, dim_stride(s, core::Dim::dp)};
  if (expert && p.ep > 1) {
    if (p.dp % p.ep == 0) {  // the expert-parallel ranks are the innermost ep of the dp ranks
      dp.size = p.dp / p.ep;
      dp.stride *= p.ep;
    } else {
      dp.size = p.dp * p.cp / p.ep;
      cp.size = 1;
    }
  }
  DimStride dims[2] = {cp, dp};
  if (dims[1].stride < dims[0].stride) std::swap(dims[0], dims[1]);
  return group_from(s, dims, 2);
}

namespace {
// Two neighbours of a pipeline group: its scope, at most two ranks on a node.
Group hop_of(const Group& pp) {
  Group hop;
  hop.ranks = 2;
  hop.scope = pp.scope;
  hop.ranks_per_node = std::min(2, pp.ranks_per_node);
  // the hop that crosses the pp group's highest tier: two nodes, two groups of every tier it spans
  hop.span = pp.span;
  hop.span.nodes = std::min(2, pp.span.nodes);
  for (int& n : hop.span.groups) n = std::min(2, n);
  return hop;
}
}  // namespace

Group pp_hop_group(const core::Scenario& s) { return hop_of(group_of(s, core::Dim::pp)); }

Group sharding_group(const core::Scenario& s, bool replica) {
  const auto& p = s.parallel;
  DimStride dims[2] = {{p.cp, dim_stride(s, core::Dim::cp)}, {p.dp, dim_stride(s, core::Dim::dp)}};
  if (dims[1].stride < dims[0].stride) std::swap(dims[0], dims[1]);
  const int all = p.dp * p.cp;
  const int want = p.zero >= 3 && p.sharding.shard_ranks > 0 ? std::min(all, p.sharding.shard_ranks) : all;
  // The shard group takes the innermost `want` ranks of the dp*cp group (a node's, when that is
  // its size); the replica group steps over whole shard groups.
  DimStride inner[2], outer[2];
  int left = want;
  for (int i = 0; i < 2; ++i) {
    const int take = std::gcd(dims[i].size, left);
    inner[i] = {take, dims[i].stride};
    outer[i] = {dims[i].size / take, dims[i].stride * take};
    left /= take;
  }
  return replica ? group_from(s, outer, 2) : group_from(s, inner, 2);
}

Group amax_group(const core::Scenario& s) {
  const auto& p = s.parallel;
  DimStride dims[3] = {{p.tp, dim_stride(s, core::Dim::tp)},
                       {p.cp, dim_stride(s, core::Dim::cp)},
                       {p.dp, dim_stride(s, core::Dim::dp)}};
  // innermost first, as group_from reads them
  std::sort(dims, dims + 3, [](const DimStride& a, const DimStride& b) { return a.stride < b.stride; });
  return group_from(s, dims, 3);
}

StepGroups step_groups(const core::Scenario& s) {
  StepGroups g;
  g.tp = group_of(s, core::Dim::tp);
  g.cp = group_of(s, core::Dim::cp);
  g.ep = ep_group(s);
  if (s.model.moe) {
    g.expert_tp = expert_tp_group(s);
    g.expert_tp_ep = expert_tp_ep_group(s);
    // the all-to-all's ep group (etp's gather rides on it; etp's alone without ep), etp*ep for
    // the others; a dense model keeps the (one-rank) ep group
    const bool a2a = s.training.moe.dispatcher == core::Dispatcher::alltoall;
    g.dispatch = !a2a ? g.expert_tp_ep : s.parallel.ep > 1 ? g.ep : g.expert_tp;
  } else {
    g.expert_tp = g.tp;
    g.expert_tp_ep = g.ep;
    g.dispatch = g.ep;
  }
  g.pp = group_of(s, core::Dim::pp);
  g.pp_hop = hop_of(g.pp);
  g.dp = grad_group(s, false);
  g.expert_dp = s.model.moe ? grad_group(s, true) : g.dp;
  if (s.parallel.zero >= 3) {
    g.shard = sharding_group(s, false);
    g.replica = sharding_group(s, true);
  }
  g.amax = amax_group(s);
  return g;
}

}  // namespace ptdsim::analytic
