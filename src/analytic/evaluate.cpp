#include "ptdsim/analytic/evaluate.hpp"

#include <algorithm>

#include "ptdsim/analytic/breakdown.hpp"
#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/costs.hpp"
#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::analytic {
namespace {

double ratio(double comm, double compute) { return compute > 0 ? comm / compute : (comm > 0 ? 1e9 : 0.0); }

}  // namespace

core::Report evaluate(const core::Scenario& s) {
  using core::CommKind;
  const auto& par = s.parallel;
  const auto& ov = s.training.overlap;
  core::Report r;
  r.scenario = s;
  r.engine = "analytic";
  r.params = total_params(s.model);
  r.model_flops_per_step = model_flops_per_step(s);
  r.hardware_flops_per_step = hardware_flops_per_step(s);

  // memory
  r.stages = stage_memory(s);
  r.capacity_bytes = s.hardware.gpu.memory_bytes;
  for (const auto& st : r.stages)
    if (st.total() > r.peak_bytes) {
      r.peak_bytes = st.total();
      r.peak_stage = st.stage;
    }
  r.fits = r.peak_bytes <= r.capacity_bytes;

  // time: the slowest stage's compute plus the in-layer communication that cannot hide
  const StepCosts costs = step_costs(s);
  r.compute = compute_breakdown(s, costs);
  const bool tp_overlap = tp_overlaps(s);
  const double m = costs.microbatches, p = par.pp, v = par.vpp;
  int slowest = 0;
  double slowest_total = -1;
  struct Exposed { double tp, cp, ep; };
  std::vector<Exposed> exposed(costs.stages.size());
  for (std::size_t i = 0; i < costs.stages.size(); ++i) {
    const auto& c = costs.stages[i];
    const double compute = c.forward_s + c.backward_input_s + c.backward_weight_s + c.recompute_s;
    const double tp = c.tp_forward_s + c.tp_backward_s;
    // TP collectives sit between dependent GEMMs; with overlap.tp they hide behind the GEMMs
    // (chunked, as Megatron's tp-comm-overlap); ring-attention hops hide behind the attention core.
    exposed[i].tp = tp_overlap ? std::max(0.0, tp - c.gemm_s) : tp;
    exposed[i].cp = std::max(0.0, c.cp_forward_s - c.attention_core_s) +
                    std::max(0.0, c.cp_backward_s - 2 * c.attention_core_s);
    exposed[i].ep = c.ep_forward_s + c.ep_backward_s;
    const double total = compute + exposed[i].tp + exposed[i].cp + exposed[i].ep;
    if (total > slowest_total) {
      slowest_total = total;
      slowest = static_cast<int>(i);
    }
  }
  const StageCosts& c = costs.stages[slowest];
  const Exposed& x = exposed[slowest];
  const double t_f = c.forward_s;
  const double t_b = c.backward_input_s + c.recompute_s;  // B, with the recomputed forward it needs
  const double t_w = c.backward_weight_s;
  const double compute = t_f + t_b + t_w;
  r.stage_forward_s = t_f;
  r.stage_backward_s = t_b + t_w;

  // Pipeline bubble in units of one micro-batch's (forward + backward) on the slowest stage
  // (formulas.md "Pipeline schedules"; Narayanan et al. 2021 section 2.2; Qi et al. 2023).
  double bubble_slots = p - 1;
  double bubble = (p - 1) * compute;
  if (par.schedule == core::Schedule::interleaved) {
    bubble_slots = (p - 1) / v;
    bubble = bubble_slots * compute;
  } else if (par.schedule == core::Schedule::zb_h1) {
    bubble = (p - 1) * std::max(0.0, t_f + t_b - t_w);
    bubble_slots = compute > 0 ? bubble / compute : 0.0;
  }
  r.compute_s = m * compute;
  r.bubble_s = bubble;
  const double slots = m + bubble_slots;

  auto& tp = r.of(CommKind::tp);
  tp.bytes = m * c.tp_bytes;
  tp.time_s = m * (c.tp_forward_s + c.tp_backward_s);
  tp.exposed_s = slots * x.tp;
  tp.overlappable = tp_overlap;
  tp.overlap_ratio = ratio(c.tp_forward_s + c.tp_backward_s, c.gemm_s);
  tp.crosses_nodes = costs.tp.scope == core::Scope::inter;

  auto& cp = r.of(CommKind::cp);
  cp.bytes = m * c.cp_bytes;
  cp.time_s = m * (c.cp_forward_s + c.cp_backward_s);
  cp.exposed_s = slots * x.cp;
  cp.overlappable = true;
  cp.overlap_ratio = ratio(c.cp_forward_s + c.cp_backward_s, 3 * c.attention_core_s);
  cp.crosses_nodes = costs.cp.scope == core::Scope::inter;

  auto& ep = r.of(CommKind::ep);
  ep.bytes = m * c.ep_bytes;
  ep.time_s = m * (c.ep_forward_s + c.ep_backward_s);
  ep.exposed_s = slots * x.ep;
  ep.overlappable = false;
  ep.overlap_ratio = ratio(c.ep_forward_s + c.ep_backward_s, compute);
  ep.crosses_nodes = costs.ep.scope == core::Scope::inter;

  // PP: activations forward and gradients backward, v times per micro-batch with interleaving. When
  // overlapped only the fill and drain hops (2(p-1)) stay on the critical path.
  auto& pp = r.of(CommKind::pp);
  if (par.pp > 1) {
    const double transfers = 2 * m * v;
    pp.bytes = transfers * c.p2p_bytes;
    pp.time_s = transfers * c.p2p_s;
    pp.exposed_s = ov.pp ? 2 * (p - 1) * c.p2p_s : 2 * (m * v + p - 1) * c.p2p_s;
    pp.overlappable = ov.pp;
    const int next = std::min(slowest + 1, par.pp - 1);
    pp.overlap_ratio = ratio(c.p2p_s, costs.stages[next].forward_s / v);
    pp.crosses_nodes = costs.pp.scope == core::Scope::inter;
  }

  // DP: every stage reduces its gradients at the end of the step, in parallel; the step waits for the
  // slowest. Gradients are only final in the last micro-batch's backward, which is all the reduction
  // may hide behind; the ZeRO-1/2 parameter all-gather hides behind the next step's first forward.
  auto& dp = r.of(CommKind::dp);
  dp.overlappable = ov.dp;
  dp.crosses_nodes = costs.dp.scope == core::Scope::inter;
  double dp_exposed = 0, z3_exposed = 0;
  for (const auto& st : costs.stages) {
    const double bwd = st.backward_input_s + st.backward_weight_s + st.recompute_s;
    const double e = ov.dp ? std::max(0.0, st.dp_reduce_s - bwd) + std::max(0.0, st.dp_gather_s - st.forward_s)
                           : st.dp_reduce_s + st.dp_gather_s;
    dp_exposed = std::max(dp_exposed, e);
    double z3 = 0;
    if (par.zero >= 3) {
      // per micro-batch, per layer: gather forward, gather + reduce-scatter backward; prefetched
      // one layer ahead they hide behind the neighbouring layer's compute
      const double per_layer = ov.zero3_prefetch
                                   ? std::max(0.0, st.zero3_gather_layer_s - st.layer_forward_s) +
                                         std::max(0.0, st.zero3_gather_layer_s + st.zero3_reduce_layer_s -
                                                           st.layer_backward_s)
                                   : 2 * st.zero3_gather_layer_s + st.zero3_reduce_layer_s;
      z3 = m * st.layers * per_layer;
    }
    z3_exposed = std::max(z3_exposed, z3);
  }
  {
    // the stage whose data-parallel traffic is largest (the first: it holds the embedding)
    const StageCosts* d = &costs.stages[0];
    for (const auto& st : costs.stages)
      if (st.dp_reduce_s + st.dp_gather_s > d->dp_reduce_s + d->dp_gather_s) d = &st;
    const auto op = par.zero == 0 ? core::Collective::all_reduce : core::Collective::reduce_scatter;
    const double grad_per_weight = gradient_bytes_per_param(s.training.precision) /
                                   weight_bytes_per_param(s.training.precision);
    const double gather_bytes = par.zero >= 1 ? d->grad_bytes / grad_per_weight : 0.0;
    dp.bytes = bytes_sent(op, d->grad_bytes, costs.dp.ranks) +
               bytes_sent(core::Collective::all_gather, gather_bytes, costs.dp.ranks);
    dp.time_s = d->dp_reduce_s + d->dp_gather_s;
    const double bwd = d->backward_input_s + d->backward_weight_s + d->recompute_s;
    dp.overlap_ratio = ratio(dp.time_s, bwd + (par.zero >= 1 ? d->forward_s : 0.0));
    if (par.zero >= 3) {
      // 3x the weight volume per micro-batch (gather, gather, reduce-scatter)
      const double gathered = bytes_sent(core::Collective::all_gather, d->zero3_layer_bytes, costs.dp.ranks);
      const double reduced =
          bytes_sent(core::Collective::reduce_scatter, d->zero3_layer_bytes * grad_per_weight, costs.dp.ranks);
      dp.bytes = m * d->layers * (2 * gathered + reduced);
      dp.time_s += m * d->layers * (2 * d->zero3_gather_layer_s + d->zero3_reduce_layer_s);
      r.zero3_overlap_ratio = ratio(d->zero3_gather_layer_s, d->layer_forward_s);
    }
  }
  dp.exposed_s = dp_exposed + z3_exposed;

  for (const auto& st : costs.stages) r.optimizer_s = std::max(r.optimizer_s, st.optimizer_s);

  // Collectives hidden behind compute still hold SMs (one thread block per NCCL channel): the
  // compute beside them runs at 1 - share of its speed, so it takes share x the hidden time
  // longer. Pipeline sends hold one or two SMs and are left out, as in the scheduler.
  double hidden = 0;
  for (int k = 0; k < core::kCommKindCount; ++k)
    if (k != static_cast<int>(CommKind::pp)) hidden += std::max(0.0, r.comm[k].time_s - r.comm[k].exposed_s);
  r.contention_s = s.hardware.gpu.comm_share() * std::min(hidden, r.compute_s);
  r.compute_s += r.contention_s;

  double exposed_total = 0;
  for (const auto& k : r.comm) exposed_total += k.exposed_s;
  r.step_s = r.compute_s + r.bubble_s + exposed_total + r.optimizer_s;

  // what dominates the step, in a short word
  const std::pair<const char*, double> parts[] = {
      {"compute", r.compute_s}, {"bubble", r.bubble_s}, {"tp", tp.exposed_s}, {"cp", cp.exposed_s},
      {"ep", ep.exposed_s},     {"pp", pp.exposed_s},   {"dp", dp.exposed_s}, {"optimizer", r.optimizer_s}};
  const auto* top = std::max_element(std::begin(parts), std::end(parts),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  r.bounded_by = top->first;

  const double peak = s.hardware.gpu.peak_flops[core::index(s.training.precision)];
  if (r.step_s > 0) {
    r.tokens_per_s = static_cast<double>(s.training.global_batch) * s.training.seq_len / r.step_s;
    r.tflops_per_gpu = r.model_flops_per_step / r.step_s / s.gpus / core::kTera;
    if (peak > 0) {
      r.mfu = r.model_flops_per_step / r.step_s / s.gpus / peak;
      r.hfu = r.hardware_flops_per_step / r.step_s / s.gpus / peak;
    }
  }
  return r;
}

}  // namespace ptdsim::analytic
