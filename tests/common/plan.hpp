#pragma once
// Readings of a step plan the analytic and sim tests share.
#include "ptdsim/analytic/plan.hpp"

namespace ptdsim::testing {

// The total time of one pass's collectives of one kind (repeated segments counted).
inline double pass_comm(const analytic::StepPlan& plan, const analytic::PassPlan& pass, core::CommKind kind) {
  double t = 0;
  for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) {
    const analytic::Segment& seg = plan.segments[i];
    for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
      if (plan.comms[j].kind == kind) t += seg.repeat * plan.comms[j].time_s;
  }
  return t;
}

}  // namespace ptdsim::testing
