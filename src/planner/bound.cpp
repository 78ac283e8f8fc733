#include <algorithm>
#include <vector>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/costs.hpp"
#include "ptdsim/planner/sweep.hpp"

namespace ptdsim::planner {

// A lower bound on the discrete-event scheduler's step time, from the same per-stage costs the
// scheduler is built from (analytic::step_costs). Each term is a chain of tasks the scheduler's
// graph orders one after another, so the simulated makespan can only be longer (contention on
// shared links and every wait the bound ignores add to it). docs/planner.md "Lower bound" walks
// through the chains; tests/planner check bound <= simulated time on every candidate of a space.
double step_lower_bound(const core::Scenario& s, const core::Report& analytic) {
  (void)analytic;
  const analytic::StepCosts costs = analytic::step_costs(s);
  const auto& ov = s.training.overlap;
  const int p = static_cast<int>(costs.stages.size());
  if (p == 0) return 0;
  const double m = std::max(1, costs.microbatches);
  const double v = std::max(1, costs.vpp);
  const bool split = s.parallel.vpp == 1 && s.parallel.schedule == core::Schedule::zb_h1;
  const bool zero3 = s.parallel.zero >= 3;
  const double share = s.hardware.gpu.comm_share();
  const bool tp_overlap = analytic::tp_overlaps(s);

  // One pass (op) of one chunk of one micro-batch on a stage: its compute followed by the
  // communication chained behind it (TP when not overlapped, EP always), or, when longer, the
  // overlapped communication (CP, TP when overlapped) that the next op also waits for.
  struct Ops {
    double f = 0, b = 0, w = 0;  // forward, backward (B, with W unless split), W (split only)
    double p2p = 0;              // one send to a neighbour stage
    double busy = 0;             // the whole step's chain of ops on this stage
  };
  std::vector<Ops> ops(p);
  for (int i = 0; i < p; ++i) {
    const auto& c = costs.stages[i];
    // CP's exchange starts with the attention core (`window`), after the rest of the pass, and
    // slows it: by share x the exchange, or by share x the attention when the exchange outlasts it.
    auto op = [&](double compute, double tp, double cp, double ep, double window) {
      window = std::min(compute, window);
      const double slowed = cp > 0 ? share * std::min(cp, window) : 0.0;
      const double serial = compute + slowed + (tp_overlap ? 0 : tp) + ep;
      const double ring = cp > 0 ? compute - window + cp : 0.0;
      const double overlapped = std::max(ring, tp_overlap ? tp : 0.0);  // own streams, side by side
      return std::max(serial, overlapped) / v;
    };
    Ops& o = ops[i];
    o.f = op(c.forward_s, c.tp_forward_s, c.cp_forward_s, c.ep_forward_s, c.attention_core_s);
    o.b = op(c.recompute_s + c.backward_input_s + (split ? 0 : c.backward_weight_s), c.tp_backward_s,
             c.cp_backward_s, c.ep_backward_s, 2 * c.attention_core_s);
    o.w = split ? c.backward_weight_s / v : 0;
    o.p2p = c.p2p_s;
    o.busy = m * v * (o.f + o.b + o.w);
    if (!ov.pp && c.p2p_s > 0) {
      // a send not overlapped holds the next op: every chunk sends forward except the very last
      // virtual stage's, and backward except the very first's
      const double sends = (v - (i == p - 1)) + (v - (i == 0));
      o.busy += m * sends * c.p2p_s;
    }
  }

  double bound = 0;
  double fill = 0;  // micro-batch 0's first chunk through every earlier stage
  for (int j = 0; j < p; ++j) {
    const auto& c = costs.stages[j];
    const Ops& o = ops[j];
    double own = fill + o.busy;  // end of stage j's last op
    if (s.parallel.zero >= 1 && s.parallel.zero <= 2 && ov.dp && c.dp_gather_s > 0)
      own = std::max(own, c.dp_gather_s + o.busy - o.f);  // the second op waits for the overlapped
                                                          // all-gather of the updated parameters
    const double last_op = split ? o.w : o.b;
    // Gradients reach the optimizer through the DP stream: with buckets (overlap) the last op's
    // share (1/v of the stage's reduction) starts no earlier than that op; without, all of it
    // waits for the last op. ZeRO-3's per-layer reductions are left out.
    double grads = own;
    if (!zero3 && c.dp_reduce_s > 0)
      grads = ov.dp ? own - last_op + c.dp_reduce_s / v : own + c.dp_reduce_s;
    if (zero3) {
      // ZeRO-3 gathers every layer's weights before each forward and backward op on one stream,
      // and reduces every layer's gradients once per micro-batch on another: neither stream can
      // finish before it has moved all of it.
      const double layers = std::max(1, c.layers / static_cast<int>(v)) * v;
      const double gathers = 2 * m * layers * c.zero3_gather_layer_s;
      const double reduces = m * layers * c.zero3_reduce_layer_s;
      bound = std::max(bound, gathers);
      grads = std::max(grads, reduces);
    }
    double end = std::max(own, grads) + c.optimizer_s;
    const bool gather_after = s.parallel.zero >= 1 && s.parallel.zero <= 2 && !ov.dp && c.dp_gather_s > 0;
    if (gather_after) end += c.dp_gather_s;
    bound = std::max(bound, end);

    // The last micro-batch's backward from stage j down to stage 0, then stage 0's optimizer.
    if (j > 0) {
      // with ZB-H1 the last B may be followed by up to j+1 deferred W ops on stage j
      double t = split ? own - std::min(m, j + 1.0) * o.w : own;
      // (a send not overlapped is already in stage j's chain, `own`)
      for (int i = j; i >= 1; --i) t += (i == j && !ov.pp ? 0 : ops[i].p2p) + ops[i - 1].b;
      t += (split ? ops[0].w : 0) + costs.stages[0].optimizer_s;
      bound = std::max(bound, t);
    }

    // Every transfer of a rank goes over one of its two links (NVLink inside the node, the NIC
    // share across nodes), which the scheduler shares fairly at a capacity of one second of work
    // per second: neither link can finish before its whole step's work has gone through.
    double link[2] = {0, 0};
    double held[2] = {0, 0};  // the same without pipeline sends, which hold no SMs to speak of
    auto on = [&](const analytic::Group& g, double work, bool holds_sms = true) {
      link[g.scope == core::Scope::inter ? 1 : 0] += work;
      if (holds_sms) held[g.scope == core::Scope::inter ? 1 : 0] += work;
    };
    on(costs.tp, m * (c.tp_forward_s + c.tp_backward_s));
    on(costs.cp, m * (c.cp_forward_s + c.cp_backward_s));
    on(costs.ep, m * (c.ep_forward_s + c.ep_backward_s));
    on(costs.pp, m * ((v - (j == p - 1)) + (v - (j == 0))) * c.p2p_s, false);
    if (zero3) {
      const double layers = std::max(1, c.layers / static_cast<int>(v)) * v;
      on(costs.dp, m * layers * (2 * c.zero3_gather_layer_s + c.zero3_reduce_layer_s));
    } else {
      on(costs.dp, c.dp_reduce_s + (s.parallel.zero >= 1 ? c.dp_gather_s : 0));
    }
    bound = std::max({bound, link[0], link[1]});

    // SM contention (sim::Engine::set_comm_share): while any collective runs, compute progresses
    // at most 1 - share. With C seconds of compute and collectives running at least X seconds
    // (the busier link, pipeline sends left out), the step holds compute alone (a), both (b) and collectives alone (c):
    // a + (1 - share) b >= C and b + c >= X, so a + b + c >= C + share X while X <= C / (1 - share),
    // and >= X beyond.
    if (share > 0) {
      const double compute = m * (c.forward_s + c.backward_input_s + c.backward_weight_s + c.recompute_s) +
                             c.optimizer_s;
      const double x = std::max(held[0], held[1]);
      bound = std::max(bound, x <= compute / (1 - share) ? compute + share * x : x);
    }

    fill += o.f + o.p2p;
  }
  return bound;
}

}  // namespace ptdsim::planner
