#include "ptdsim/analytic/comm.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "ptdsim/analytic/placement.hpp"

namespace ptdsim::analytic {
namespace {
double act_width(core::Precision p) {
  return p == core::Precision::fp32 || p == core::Precision::tf32 ? 4.0 : 2.0;
}
}  // namespace

bool tp_overlaps(const core::Scenario& s) {
  return s.training.overlap.tp && group_of(s, core::Dim::tp).scope == core::Scope::intra;
}

double bytes_sent(core::Collective op, double bytes, int ranks) {
  return ranks > 1 ? bus_factor(op, ranks) * bytes : 0.0;
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

Group pp_hop_group(const core::Scenario& s) {
  const Group pp = group_of(s, core::Dim::pp);
  Group hop;
  hop.ranks = 2;
  hop.scope = pp.scope;
  hop.ranks_per_node = std::min(2, pp.ranks_per_node);
  return hop;
}

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

double p2p_bytes(const core::Scenario& s) {
  const auto& tr = s.training;
  return act_width(tr.precision) * tr.micro_batch * static_cast<double>(tr.seq_len) / s.parallel.cp *
         s.model.hidden / s.parallel.tp;
}

LayerComm layer_comm(const core::Scenario& s, bool moe_layer) {
  const auto& hw = s.hardware;
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& tr = s.training;
  const double width = act_width(tr.precision);
  const double tokens = tr.micro_batch * static_cast<double>(tr.seq_len) / p.cp;
  const bool full = tr.recompute == core::Recompute::full;
  LayerComm out;

  if (p.tp > 1) {
    // two all-reduces of the s*b*h activation forward and two backward (Shoeybi et al. 2019, fig. 3);
    // with SP each becomes an all-gather plus a reduce-scatter of the same volume (Korthikanti 2022 4.2.2)
    const Group g = group_of(s, core::Dim::tp);
    const double S = width * tokens * m.hidden;
    double one;  // one all-reduce-equivalent
    if (p.sequence_parallel)
      one = collective_time(hw, core::Collective::all_gather, S, g) +
            collective_time(hw, core::Collective::reduce_scatter, S, g);
    else
      one = collective_time(hw, core::Collective::all_reduce, S, g);
    const double per = bytes_sent(core::Collective::all_reduce, S, p.tp);
    const double bwd_count = full ? 4 : 2;
    out.tp_forward_s = 2 * one;
    out.tp_backward_s = bwd_count * one;
    out.tp_bytes_forward = 2 * per;
    out.tp_bytes_backward = bwd_count * per;
  }
  if (p.cp > 1) {
    // ring attention: the local K and V chunk travels c-1 hops forward; backward moves K, V and
    // their gradients (2x) (Liu et al. 2023, ring attention; Megatron-LM context parallel)
    const Group g = group_of(s, core::Dim::cp);
    const double kv = 2 * width * tokens * m.hidden * m.kv_heads / m.heads / p.tp;
    const double hop = collective_time(hw, core::Collective::send_recv, kv, g);
    const double fwd_count = p.cp - 1, bwd_count = 2.0 * (p.cp - 1) + (full ? p.cp - 1 : 0);
    out.cp_forward_s = fwd_count * hop;
    out.cp_backward_s = bwd_count * hop;
    out.cp_bytes_forward = fwd_count * kv;
    out.cp_bytes_backward = bwd_count * kv;
  }
  if (p.ep > 1 && moe_layer) {
    // dispatch and combine all-to-alls of the routed tokens (top_k copies), forward and backward
    const Group g = group_of(s, core::Dim::ep);
    const double sp = p.sequence_parallel ? p.tp : 1.0;
    const double S = width * tokens * m.hidden * m.moe->top_k / sp;
    const double one = collective_time(hw, core::Collective::all_to_all, S, g);
    const double per = bytes_sent(core::Collective::all_to_all, S, p.ep);
    const double bwd_count = full ? 4 : 2;
    out.ep_forward_s = 2 * one;
    out.ep_backward_s = bwd_count * one;
    out.ep_bytes_forward = 2 * per;
    out.ep_bytes_backward = bwd_count * per;
  }
  return out;
}

}  // namespace ptdsim::analytic
