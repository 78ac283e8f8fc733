#pragma once
#include <cstdint>
#include <string_view>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/comm_kind.hpp"

// The simulator's domain side: what a task of a training step stands for. The event kernel
// (kernel.hpp) knows none of this; sim::Engine (engine.hpp) maps it onto the kernel's ids.
namespace ptdsim::sim {

// Streams of one GPU (one representative rank), as the step plan names them. A stream runs its
// tasks one at a time, in the order they were added (CUDA stream semantics): the schedule
// builder's insertion order is the program order.
using StreamKind = analytic::Stream;
inline constexpr int kStreamKinds = analytic::kStreamCount;
std::string_view name(StreamKind);

// What a task stands for; used by the trace, the critical-path summary and the exposed-time
// accounting of simulate(). The compute kinds come first; a communication task's kind follows them,
// one per core::CommKind in its order (task_kind), so the collective kinds are listed only there.
enum class TaskKind : std::uint8_t {
  forward,
  backward,         // B and W together (GPipe, 1F1B, interleaved)
  backward_input,   // ZB-H1's B
  backward_weight,  // ZB-H1's W
  optimizer,
  offload,          // CPU offload's serial phase on the compute stream (host copies, CPU optimizer step)
};
inline constexpr int kComputeTaskKinds = 6;
inline constexpr int kTaskKinds = kComputeTaskKinds + core::kCommKindCount;
constexpr TaskKind task_kind(core::CommKind c) {
  return static_cast<TaskKind>(kComputeTaskKinds + static_cast<int>(c));
}
constexpr bool is_compute(TaskKind k) { return static_cast<int>(k) < kComputeTaskKinds; }
// The communication a task does (a communication task only).
constexpr core::CommKind comm_kind(TaskKind k) {
  return static_cast<core::CommKind>(static_cast<int>(k) - kComputeTaskKinds);
}
std::string_view name(TaskKind);
// A collective (any communication but a pipeline send): it holds SMs of its rank while it runs
// (docs/simulator.md "SM contention"; core::holds_sms).
inline bool is_collective(StreamKind stream, TaskKind kind) {
  return stream != StreamKind::compute && core::holds_sms(comm_kind(kind));
}

// What the builder says about a task. A compute task lasts `duration_s`. A communication task
// first waits `duration_s` (its latency, alpha) and then moves `work` units over `link`, sharing
// the link with the other transfers on it at the same time (as the engine's sharing model says:
// fairly, capacity / k each, by default).
struct TaskSpec {
  TaskKind kind = TaskKind::forward;
  StreamKind stream = StreamKind::compute;
  std::int8_t pass = -1;  // for the trace: the pass a task serves, 0 forward, 1 backward (B), 2 W; -1 none
  std::int32_t rank = 0;
  double duration_s = 0;
  double work = 0;        // in the link's capacity units (bytes for a bytes/s link)
  std::int32_t link = -1;
  // for the trace only
  double bytes = 0;
  double flops = 0;
  std::int32_t microbatch = -1;
  std::int32_t chunk = 0;
  std::int32_t layer_first = -1;
  std::int32_t layer_count = 0;
  // A compute task may carry its pass's serial TP collectives at its end (duration_s includes
  // them): the builder folds them in when they run on the critical path anyway and share their
  // link with nothing, which saves a task per pass. Trace and summary split them out again.
  double folded_tp_s = 0;
  double folded_tp_bytes = 0;
};

}  // namespace ptdsim::sim
