#pragma once
// Hand-made stage costs for the schedule and summary tests: equal stages, free communication
// unless a test sets it, so the closed forms of the pipeline schedules apply exactly.
#include "ptdsim/analytic/costs.hpp"
#include "ptdsim/sim/schedule.hpp"

namespace ptdsim::testing {

inline analytic::StepCosts equal_stages(int p, int m, double tf, double tb, double tw = 0, int v = 1,
                                        int layers = 4) {
  analytic::StepCosts c;
  c.microbatches = m;
  c.vpp = v;
  for (int s = 0; s < p; ++s) {
    analytic::StageCosts sc;
    sc.stage = s;
    sc.layers = layers;
    sc.forward_s = tf;
    sc.backward_input_s = tb;
    sc.backward_weight_s = tw;
    sc.forward_flops = 1e12;  // only the trace and HFU read it
    c.stages.push_back(sc);
  }
  c.tp.scope = c.cp.scope = c.ep.scope = core::Scope::intra;
  c.dp.scope = c.pp.scope = core::Scope::inter;
  return c;
}

inline sim::ScheduleOptions with(core::Schedule s) {
  sim::ScheduleOptions o;
  o.schedule = s;
  return o;
}

}  // namespace ptdsim::testing
