#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/report.hpp"

#include "ptdsim/sim/step_graph.hpp"

namespace ptdsim::sim {

// A Chrome trace-event JSON of a run step (chrome://tracing, Perfetto): metadata first, then every
// timed event in time order: one complete ("X") event per task (two for a compute task with folded
// TP: the compute, then the TP on the TP track), ts and dur in microseconds; pid = rank (named
// "stage N" by process_name metadata), tid = stream (named by thread_name metadata); the name says
// the pass (a collective's too: "TP B mb3 L12-17"), micro-batch, chunk and layers; args hold the
// pass, FLOPs or bytes. Flow events ("s"/"f") join a pipeline send to the pass that receives it and
// a collective to the task on another stream that waits for it. With `memory` (the report's stages),
// a counter ("C") per stage: memory in use over the step (docs/simulator.md "The trace").
std::string chrome_trace(const StepGraph& g, const std::vector<core::StageMemory>* memory = nullptr);

}  // namespace ptdsim::sim
