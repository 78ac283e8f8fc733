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
  int per_node = 1;
  bool truncated = false;
  for (int i = 0; i < count; ++i) {
    g.ranks *= dims[i].size;
    if (truncated || dims[i].size == 1) continue;
    if (dims[i].stride >= gpn) { truncated = true; continue; }
    const int fit = std::min(dims[i].size, gpn / dims[i].stride);
    per_node *= std::max(1, fit);
    if (fit < dims[i].size) truncated = true;
  }
  g.ranks_per_node = per_node;
  g.scope = per_node >= g.ranks ? core::Scope::intra : core::Scope::inter;
  return g;
}

Group group_of(const core::Scenario& s, core::Dim dim) {
  const DimStride d{dim_size(s, dim), dim_stride(s, dim)};
  return group_from(s, &d, 1);
}

Group grad_group(const core::Scenario& s, bool expert) {
  const auto& p = s.parallel;
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

StepGroups step_groups(const core::Scenario& s) {
  StepGroups g;
  g.tp = group_of(s, core::Dim::tp);
  g.cp = group_of(s, core::Dim::cp);
  g.ep = group_of(s, core::Dim::ep);
  g.pp = group_of(s, core::Dim::pp);
  g.pp_hop = hop_of(g.pp);
  g.dp = grad_group(s, false);
  g.expert_dp = s.model.moe ? grad_group(s, true) : g.dp;
  if (s.parallel.zero >= 3) {
    g.shard = sharding_group(s, false);
    g.replica = sharding_group(s, true);
  }
  return g;
}

}  // namespace ptdsim::analytic
