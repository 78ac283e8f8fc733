#include "ptdsim/sim/simulate.hpp"

#include "ptdsim/analytic/costs.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/sim/schedule.hpp"
#include "ptdsim/sim/summary.hpp"
#include "ptdsim/sim/timeline.hpp"
#include "ptdsim/sim/trace.hpp"

namespace ptdsim::sim {
namespace {

// The simulated in-flight count replaces the analytic one; activations that scale with it
// (the transformer layers' and the embedding's) scale along. Under full recomputation the
// analytic figure also holds one layer's whole activations, which does not scale.
void apply_in_flight(const core::Scenario& s, core::StageMemory& st, double in_flight) {
  const double old = st.in_flight;
  if (old > 0) {
    const double per_mb = s.training.recompute == core::Recompute::full
                              ? analytic::activation_bytes_per_layer(s, false) * st.layers
                              : st.activations / old;
    st.activations += per_mb * (in_flight - old);
    st.embedding_activations *= in_flight / old;
  }
  st.in_flight = in_flight;
}

}  // namespace

core::Report simulate(const core::Scenario& s, std::string* trace_json, core::Timeline* timeline_out) {
  core::Report r = analytic::evaluate(s);
  const analytic::StepCosts costs = analytic::step_costs(s);
  StepGraph g = build_step(costs, options_of(s));
  g.engine.run();
  const StepSummary sum = summarize(g);

  r.engine = "simulation";
  r.step_s = sum.step_s;
  r.compute_s = sum.compute_s;
  r.contention_s = sum.contention_s;
  r.bubble_s = sum.bubble_s;
  r.optimizer_s = sum.optimizer_s;
  for (int k = 0; k < core::kCommKindCount; ++k) r.comm[k].exposed_s = sum.exposed_s[k];
  r.bounded_by = sum.bounded_by;

  r.peak_bytes = 0;
  for (std::size_t i = 0; i < g.ranks.size(); ++i) {
    const int stage = g.ranks[i].stage;
    if (stage < static_cast<int>(r.stages.size())) apply_in_flight(s, r.stages[stage], sum.in_flight[i]);
  }
  for (const auto& st : r.stages)
    if (st.total() > r.peak_bytes) {
      r.peak_bytes = st.total();
      r.peak_stage = st.stage;
    }
  r.fits = r.peak_bytes <= r.capacity_bytes;

  const double peak = s.hardware.gpu.peak_flops[core::index(s.training.precision)];
  r.tokens_per_s = r.tflops_per_gpu = r.mfu = r.hfu = 0;
  if (r.step_s > 0) {
    r.tokens_per_s = static_cast<double>(s.training.global_batch) * s.training.seq_len / r.step_s;
    r.tflops_per_gpu = r.model_flops_per_step / r.step_s / s.gpus / core::kTera;
    if (peak > 0) {
      r.mfu = r.model_flops_per_step / r.step_s / s.gpus / peak;
      r.hfu = r.hardware_flops_per_step / r.step_s / s.gpus / peak;
    }
  }
  if (trace_json) *trace_json = chrome_trace(g);
  if (timeline_out) *timeline_out = timeline(g);
  return r;
}

}  // namespace ptdsim::sim
