#include "ptdsim/analytic/comm.hpp"

#include "ptdsim/analytic/context_parallel.hpp"
#include "ptdsim/analytic/memory_ops.hpp"
#include "ptdsim/analytic/op_checkpoint.hpp"
#include "ptdsim/analytic/operators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptdsim::analytic {
namespace {
double act_width(core::Precision p) {
  return p == core::Precision::fp32 || p == core::Precision::tf32 ? 4.0 : 2.0;
}
// a choose b, exactly for the small counts of expert groups
double choose(int a, int b) {
  if (b < 0 || b > a) return 0;
  double c = 1;
  for (int i = 1; i <= b; ++i) c = c * (a - b + i) / i;
  return c;
}
}  // namespace

bool tp_overlaps(const core::Scenario& s, const Group& tp) {
  return s.training.overlap.tp && tp.scope == core::Scope::intra;
}

bool ep_overlaps(const core::Scenario& s) {
  const auto& p = s.parallel;
  const auto& tr = s.training;
  return tr.overlap.ep && s.model.moe && s.model.moe->experts > 0 && p.ep > 1 &&
         tr.moe.dispatcher != core::Dispatcher::allgather && tr.recompute != core::Recompute::full &&
         (p.pp == 1 || p.vpp > 1);
}

double bytes_sent(core::Collective op, double bytes, int ranks) {
  return ranks > 1 ? bus_factor(op, ranks) * bytes : 0.0;
}

double p2p_bytes(const core::Scenario& s) {
  const auto& tr = s.training;
  return act_width(tr.precision) * tr.micro_batch * static_cast<double>(tr.seq_len) / s.parallel.cp *
         s.model.hidden / s.parallel.tp;
}

double distinct_nodes(const core::MoeSpec& moe, int nodes) {
  if (nodes <= 1) return 1;
  const double n = nodes, k = moe.top_k;
  const int G = moe.router_groups, kept = moe.router_group_topk;
  if (G > 0 && kept > 0 && kept < G) {
    if (nodes % G == 0) {
      // each group on nodes/G nodes: a node is reached when its group is kept (G'/G) and one of the
      // k experts, uniform over the kept groups' experts, is among its 1/(nodes/G * G') of them
      const double share = 1.0 / (n / G * kept);
      return n * (static_cast<double>(kept) / G) * (1 - std::pow(1 - share, k));
    }
    if (G % nodes == 0) {
      // q = G/nodes whole groups a node: j of them kept with the hypergeometric probability of
      // drawing G' of G; then one of the k experts lands on the node's j of the G' kept groups
      const int q = G / nodes;
      double hit = 0;
      for (int j = 1; j <= std::min(q, kept); ++j) {
        const double p_j = choose(q, j) * choose(G - q, kept - j) / choose(G, kept);
        hit += p_j * (1 - std::pow(1 - static_cast<double>(j) / kept, k));
      }
      return n * hit;
    }
  }
  return n * (1 - std::pow(1 - 1 / n, k));
}

Dispatch dispatch(const core::Scenario& s) { return dispatch(s, step_groups(s)); }

Dispatch dispatch(const core::Scenario& s, const StepGroups& groups) {
  const auto& hw = s.hardware;
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& tr = s.training;
  Dispatch d;
  if (!m.moe) return d;
  using C = core::Collective;
  const double width = act_width(tr.precision);
  const double sp = p.sequence_parallel ? p.tp : 1.0;
  const double routed = tr.micro_batch * static_cast<double>(tr.seq_len) / p.cp / sp;  // tokens this rank routes
  const double k = m.moe->top_k, h = m.hidden, busiest = s.busiest_expert();
  // what a rank sends: the mean when dropless (only the busiest expert's rank receives more); under
  // padded dropping every expert's map holds its capacity from every rank, so every rank sends it
  const double sends = tr.moe.capacity_factor > 0 ? busiest : 1.0;
  const int etp = p.expert_tp();
  switch (tr.moe.dispatcher) {
    case core::Dispatcher::alltoall: {
      // MoEAlltoAllTokenDispatcher: the top_k copies of this rank's tokens all-to-all over ep, then
      // (with sequence parallelism) all-gathered over the expert-TP group; the combine mirrors it
      // (reduce-scatter, all-to-all). The busiest expert's rank receives `busiest` x the mean.
      if (p.ep > 1) {
        const Group& g = groups.ep;
        const double S = width * routed * h * k;
        d.time_s += 2 * busiest * collective_time(hw, C::all_to_all, S, g);
        d.sent_bytes += 2 * sends * bytes_sent(C::all_to_all, S, p.ep);
      }
      if (etp > 1 && p.sequence_parallel) {
        const Group& g = groups.expert_tp;
        const double S = width * routed * k * etp * h;  // the gathered rows of this rank's experts
        d.time_s += busiest * (collective_time(hw, C::all_gather, S, g) + collective_time(hw, C::reduce_scatter, S, g));
        d.sent_bytes += 2 * sends * bytes_sent(C::all_gather, S, etp);
      }
      break;
    }
    case core::Dispatcher::allgather: {
      // MoEAllGatherTokenDispatcher: every token of the etp*ep group all-gathered (each rank then
      // keeps those routed to its experts), the outputs reduce-scattered back: no top_k factor
      const Group& g = groups.expert_tp_ep;
      if (g.ranks > 1) {
        const double S = width * routed * h * g.ranks;
        d.time_s += collective_time(hw, C::all_gather, S, g) + collective_time(hw, C::reduce_scatter, S, g);
        d.sent_bytes += 2 * bytes_sent(C::all_gather, S, g.ranks);
      }
      break;
    }
    case core::Dispatcher::flex: {
      // DeepEP's fused dispatch and combine over the etp*ep group: a token goes to each expert-TP
      // rank of its experts; across nodes it crosses the network once per destination node and
      // fans out over NVLink there (Zhao et al. 2025, DeepEP "normal kernels"): the nodes its
      // top_k experts reach, fewer under group-limited routing (distinct_nodes).
      const Group& g = groups.expert_tp_ep;
      if (g.ranks > 1) {
        double S = width * routed * h * k * etp, S_sent = S;
        if (g.scope == core::Scope::inter) {
          // a token reaches distinct_nodes nodes, `busiest` (or `sends`) times as many on the
          // busiest rank's (any rank's) share, but never more than the nodes there are
          const int per_node = std::max(1, g.ranks_per_node);
          const int nodes = (g.ranks + per_node - 1) / per_node;
          const double reach = distinct_nodes(*m.moe, nodes);
          S *= std::min(reach, nodes / busiest) / k;
          S_sent *= std::min(reach, nodes / sends) / k;
        }
        d.time_s += 2 * busiest * collective_time(hw, C::all_to_all, S, g);
        d.sent_bytes += 2 * sends * bytes_sent(C::all_to_all, S_sent, g.ranks);
      }
      break;
    }
  }
  return d;
}

namespace {
// What of one SP collective, timed `c`, stays on the critical path where TP overlaps the GEMMs: what
// the GEMM beside it, `window` seconds of it, does not cover; where no GEMM is adjacent (`fused`
// false) the whole of it.
double exposed(double c, double window, bool fused) { return fused ? std::max(0.0, c - window) : c; }
// The GEMM's time in that pass; where the layer has no such operator (MLA's projections, no `ops`)
// the window is not known and the collective counts as hidden, as overlap assumes.
double time_of(const LayerOps* ops, core::Operator op, double core::OperatorTime::*pass) {
  const core::OperatorTime* o = ops != nullptr ? ops->find(op) : nullptr;
  return o != nullptr ? o->*pass : std::numeric_limits<double>::infinity();
}
// Where TP would overlap the GEMMs under sequence parallelism (the plan reads it where tp_overlaps): what of one layer's
// collectives, one micro-batch, stays on the critical path: each all-gather and reduce-scatter
// beside the GEMM it feeds or is fed by, less its window, or whole where the framework puts another
// kernel between (docs/analytic.md "TP overlap, one GEMM at a time"). forward_s: the forward's four
// (two in an MoE layer, whose MLP exchanges are the dispatcher's); backward_s: the backward's own;
// regather_s: one of per-op checkpointing's re-gathers.
struct TpExposure {
  double forward_s = 0, backward_s = 0, regather_s = 0;
};
TpExposure tp_exposure(const core::Scenario& s, const LayerOps* ops, bool moe_layer, double gather_s,
                       double scatter_s) {
  using O = core::Operator;
  const auto& tr = s.training;
  const int tp = s.parallel.tp;
  const bool fp8 = tr.precision == core::Precision::fp8;
  // Two framework choices put a kernel between a collective and its GEMM
  // (torch/_inductor/fx_passes/micro_pipeline_tp.py: _find_consumer_matmuls, _find_producer_matmul):
  // - a projection run as several GEMMs (training.fusion.projections eager) sums their input
  //   gradients before the backward's reduce-scatter; so does a recipe that rescales the GEMM's
  //   output after it (torchao's rowwise, fp8_rescale_bytes);
  // - a recipe that gathers 16 bits and casts after (fp8_gathers_quantized false) feeds every
  //   all-gather to the cast.
  const bool summed = tr.fusion.projections_apart() || (fp8 && fp8_rescale_bytes(tr.fp8_recipe) > 0);
  const bool gather_fused = !(fp8 && !fp8_gathers_quantized(tr.fp8_recipe));
  auto f = [&](O op) { return time_of(ops, op, &core::OperatorTime::forward_s); };
  auto b = [&](O op) { return time_of(ops, op, &core::OperatorTime::backward_input_s); };
  auto w = [&](O op) { return time_of(ops, op, &core::OperatorTime::backward_weight_s); };
  // Split into tp chunks, a GEMM exchanges each beside another chunk's GEMM; one chunk has nothing
  // beside it, so (tp - 1) / tp of the GEMM is the window (TE's ring_exchange and pipeline methods,
  // PyTorch's fused_all_gather_matmul and fused_matmul_reduce_scatter). TE runs the reduce-scatter
  // of QKV's and fc1's input gradients in bulk beside their weight-gradient GEMM, whole
  // (transformer_engine/pytorch/module/base.py initialize_ub: qkv_wgrad, fc1_wgrad "bulk").
  const double chunked = (tp - 1.0) / tp;
  const O fc1 = ops != nullptr && ops->find(O::fc1_gated) != nullptr ? O::fc1_gated : O::fc1;
  TpExposure x;
  // attention: the all-gather into QKV, the reduce-scatter out of proj; backward, the output
  // gradient's all-gather into proj's input-gradient GEMM, the reduce-scatter of QKV's
  x.forward_s = exposed(gather_s, chunked * f(O::qkv), gather_fused) + exposed(scatter_s, chunked * f(O::proj), true);
  x.backward_s = exposed(gather_s, chunked * b(O::proj), gather_fused) + exposed(scatter_s, w(O::qkv), !summed);
  // per-op checkpointing re-gathers QKV's and fc1's inputs for the mm it recomputes (the weight
  // gradient reads the gathered input as its second operand, which the fusion does not take): the
  // window is the recomputed share of that GEMM (op_checkpoint_shares; none where none reruns)
  const bool op = tr.recompute == core::Recompute::op;
  const OpCheckpointShares again = op ? op_checkpoint_shares(s) : OpCheckpointShares{};
  x.regather_s = exposed(gather_s, chunked * again.qkv * f(O::qkv), gather_fused && again.qkv > 0);
  if (!moe_layer) {  // the dense MLP's, the same around fc1 and fc2 (an MoE layer's are the dispatcher's)
    x.forward_s += exposed(gather_s, chunked * f(fc1), gather_fused) + exposed(scatter_s, chunked * f(O::fc2), true);
    x.backward_s += exposed(gather_s, chunked * b(O::fc2), gather_fused) + exposed(scatter_s, w(fc1), !summed);
    x.regather_s += exposed(gather_s, chunked * again.fc1 * f(fc1), gather_fused && again.fc1 > 0);
  }
  x.regather_s /= 2;  // per regathered all-gather (the caller counts two)
  return x;
}
}  // namespace

LayerComm layer_comm(const core::Scenario& s, bool moe_layer, const LayerOps* ops) {
  return layer_comm(s, step_groups(s), moe_layer, ops);
}

LayerComm layer_comm(const core::Scenario& s, const StepGroups& groups, bool moe_layer, const LayerOps* ops) {
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
    // In FP8 the all-gathers carry QKV's and fc1's inputs (forward) and proj's and fc2's output
    // gradients (backward) quantised where the recipe gathers them so (fp8_gathers_quantized): one
    // byte an element; the reduce-scatters stay 16-bit.
    const Group& g = groups.tp;
    const double S = width * tokens * m.hidden;
    // one all-reduce-equivalent (an all-gather and a reduce-scatter under SP), and its all-gather
    double one, gather_s = 0, gather_bytes = 0, scatter_s = 0;
    double per = bytes_sent(core::Collective::all_reduce, S, p.tp);
    const bool fp8 = tr.precision == core::Precision::fp8;
    if (p.sequence_parallel) {
      const bool quantised = fp8 && fp8_gathers_quantized(tr.fp8_recipe);
      const double gathered = quantised ? tokens * m.hidden : S;
      gather_s = collective_time(hw, core::Collective::all_gather, gathered, g);
      gather_bytes = bytes_sent(core::Collective::all_gather, gathered, p.tp);
      scatter_s = collective_time(hw, core::Collective::reduce_scatter, S, g);
      one = gather_s + scatter_s;
      per = gather_bytes + bytes_sent(core::Collective::reduce_scatter, S, p.tp);
    } else {
      one = collective_time(hw, core::Collective::all_reduce, S, g);
    }
    // The recomputed forward's: full recomputation reruns all four; torchtitan's per-op
    // checkpointing saves the reduce-scatters' outputs but not the all-gathers'
    const double again = full ? 2 : 0;
    const double regather = tr.recompute == core::Recompute::op ? 2 : 0;
    out.tp_forward_s = 2 * one;
    out.tp_backward_s = (2 + again) * one + regather * gather_s;
    out.tp_bytes_forward = 2 * per;
    out.tp_bytes_backward = (2 + again) * per + regather * gather_bytes;
    // (whether or not TP overlaps: the plan reads these only where it does, and layer costs are
    // shared between candidates that differ in the overlap switches, layer_costs_key)
    if (p.sequence_parallel) {
      const TpExposure x = tp_exposure(s, ops, moe_layer, gather_s, scatter_s);
      out.tp_serial_forward_s = x.forward_s;
      out.tp_serial_backward_s = x.backward_s + (full ? x.forward_s : 0) + regather * x.regather_s;
    }
  }
  if (p.cp > 1) {
    // the exchange of training.cp_comm beside the attention kernels it runs (context_parallel.hpp)
    const CpExchange x = cp_exchange(s, groups, cp_attention(s));
    out.cp_forward_s = x.forward_s;
    out.cp_backward_s = x.backward_s;
    out.cp_forward_window_s = x.forward_window_s;
    out.cp_backward_window_s = x.backward_window_s;
    out.cp_bytes_forward = x.forward_bytes;
    out.cp_bytes_backward = x.backward_bytes;
  }
  if (moe_layer) {
    const Dispatch d = dispatch(s, groups);
    out.ep_forward_s = d.time_s;
    // the combine's and dispatch's gradients (+ the recomputed forward: full, or the moe module)
    const bool again = full || tr.recomputes(core::RecomputeModule::moe);
    out.ep_backward_s = (again ? 2 : 1) * d.time_s;
    out.ep_bytes_forward = d.sent_bytes;
    out.ep_bytes_backward = (again ? 2 : 1) * d.sent_bytes;
    if (p.tp > 1 && p.sequence_parallel) {
      // the MLP's all-gather and reduce-scatter over tp are the dispatcher's over etp: only the
      // attention's remain on the tp group
      out.tp_forward_s /= 2;
      out.tp_backward_s /= 2;
      out.tp_bytes_forward /= 2;
      out.tp_bytes_backward /= 2;
    }
  }
  return out;
}

}  // namespace ptdsim::analytic
