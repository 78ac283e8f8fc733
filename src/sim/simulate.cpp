#include "ptdsim/sim/simulate.hpp"

#include <utility>

#include "ptdsim/analytic/assemble.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "ptdsim/sim/summary.hpp"
#include "ptdsim/sim/timeline.hpp"
#include "ptdsim/sim/trace.hpp"

namespace ptdsim::sim {

core::Report simulate(const core::Scenario& s, std::string* trace_json, core::Timeline* timeline_out) {
  // into the storage this thread's previous simulation left (nothing of it is read)
  thread_local analytic::Step step;
  analytic::make_step(s, step);
  return simulate(step, trace_json, timeline_out);
}

core::Report simulate(const analytic::Step& step, std::string* trace_json, core::Timeline* timeline_out) {
  const analytic::StepPlan& plan = step.plan;
  // into the storage this thread's previous simulation left (nothing of it is read)
  thread_local StepGraph g;
  g.fabric = fabric_of(step.scenario->hardware);
  build_step(plan, g);
  g.engine.run();
  const StepSummary sum = summarize(g);

  analytic::StepTiming t;
  t.engine = core::EngineKind::simulation;
  t.step_s = sum.step_s;
  t.compute_s = sum.compute_s;
  t.contention_s = sum.contention_s;
  t.bubble_s = sum.bubble_s;
  t.optimizer_s = sum.optimizer_s;
  t.offload_s = sum.offload_s;
  t.exposed_s = sum.exposed_s;
  t.bounded_by = sum.bounded_by;
  t.critical_path = sum.critical_path;
  t.in_flight.assign(plan.stages.size(), 0.0);
  for (std::size_t i = 0; i < g.ranks.size(); ++i) t.in_flight[g.ranks[i].stage] = sum.in_flight[i];
  if (timeline_out) *timeline_out = timeline(g);
  core::Report r = analytic::assemble_report(step, std::move(t));
  if (trace_json) *trace_json = chrome_trace(g, &r.stages);
  return r;
}

}  // namespace ptdsim::sim
