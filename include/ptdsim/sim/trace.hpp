#pragma once
#include <string>

#include "ptdsim/sim/schedule.hpp"

namespace ptdsim::sim {

// A Chrome trace-event JSON of a run step (chrome://tracing, Perfetto): one complete ("X") event
// per task (two for a compute task with folded TP: the compute, then the TP on the TP track), ts and dur in microseconds; pid = rank (named "stage N" by process_name metadata),
// tid = stream (named by thread_name metadata); the name says the pass, micro-batch, chunk and
// layers; args hold FLOPs or bytes.
std::string chrome_trace(const StepGraph& g);

}  // namespace ptdsim::sim
