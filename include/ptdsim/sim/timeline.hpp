#pragma once
#include <cstddef>

#include "ptdsim/core/timeline.hpp"
#include "ptdsim/sim/step_graph.hpp"

namespace ptdsim::sim {

struct TimelineOptions {
  // A step with more tasks than this is sampled: every task of the first and last
  // `edge_microbatches` micro-batches, every task on the critical path and every task outside the
  // micro-batch loop (optimizer, parameter all-gathers) is kept; each run of the other tasks on a
  // stream becomes one "summary" bar. 6000 bars keep an evaluate page near 1 MB.
  std::size_t max_tasks = 6000;
  int edge_microbatches = 2;
  // Idle gaps shorter than this fraction of the step are not drawn as bubbles: at the page's
  // 1000-pixel time axis, 0.2% is 2 px, the narrowest bar one can see.
  double min_bubble_fraction = 0.002;
};

// The spans of a step graph whose engine has run, read through Engine's public API (spec, start,
// finish, critical_path, stream_tasks). Folded serial TP is split out onto the TP stream, as in
// the Chrome trace. Bubbles are the gaps of a stage's compute, TP, CP and EP work before the
// pipeline phase ends (StepSummary::bubble_s's definition).
core::Timeline timeline(const StepGraph& g, const TimelineOptions& options = {});

}  // namespace ptdsim::sim
