#include "ptdsim/analytic/comm.hpp"

namespace ptdsim::analytic {
namespace {
double act_width(core::Precision p) {
  return p == core::Precision::fp32 || p == core::Precision::tf32 ? 4.0 : 2.0;
}
}  // namespace

bool tp_overlaps(const core::Scenario& s, const Group& tp) {
  return s.training.overlap.tp && tp.scope == core::Scope::intra;
}

double bytes_sent(core::Collective op, double bytes, int ranks) {
  return ranks > 1 ? bus_factor(op, ranks) * bytes : 0.0;
}

double p2p_bytes(const core::Scenario& s) {
  const auto& tr = s.training;
  return act_width(tr.precision) * tr.micro_batch * static_cast<double>(tr.seq_len) / s.parallel.cp *
         s.model.hidden / s.parallel.tp;
}

LayerComm layer_comm(const core::Scenario& s, bool moe_layer) { return layer_comm(s, step_groups(s), moe_layer); }

LayerComm layer_comm(const core::Scenario& s, const StepGroups& groups, bool moe_layer) {
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
    const Group& g = groups.tp;
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
    const Group& g = groups.cp;
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
    const Group& g = groups.ep;
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
