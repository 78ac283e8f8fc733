#pragma once
#include <cstdint>
#include <cstring>

// The event kernel's run state per task and per stream, shared by the event loop (kernel.hpp) and
// the fast-forward (fast_forward.hpp). Domain-free: devices, streams and resources are integers.
namespace ptdsim::sim {

using TaskId = std::int32_t;

enum class TaskState : std::uint8_t { waiting, ready, running, done };

// What the kernel is told about a task (a description that tasks share by index; the index is the
// tag a caller maps back to what the task stands for). A task runs on one stream of one device,
// one at a time in the order added. It lasts `duration`; or, with work > 0, it waits `duration`
// (a latency) and then moves `work` over `resource`, at the rate the sharing model gives it.
struct Job {
  std::int32_t device = 0;
  std::int32_t stream = 0;  // of the device's streams
  double duration = 0;
  double work = 0;          // in the resource's capacity units
  std::int32_t resource = -1;
  // Holds part of its device's compute while it runs (a collective's SMs): the sharing model
  // slows the device's compute stream beside it.
  bool contends = false;
};

namespace run_state {

// flags of a Slot
// kLatency: a transfer whose latency phase has not run yet; kHoldsCompute: contends, and the sharing
// model slows compute; kContends: Job::contends (no fast-forward starts beside it)
enum Flag : std::uint8_t { kLatency = 1, kHoldsCompute = 2, kContends = 4 };

// What the event loop touches per task in 32 bytes: a step of a 1T-parameter model has ~1.3e5
// tasks. Start times live apart (written once).
struct alignas(32) Slot {
  double amount = 0;  // compute: duration (left, under contention); transfer: work left
  double finish = 0;  // until the task is done: when it became ready
  TaskId binding = -1;
  std::int32_t pending = 0;
  std::uint16_t lane = 0;
  std::int16_t resource = -1;  // -1: not a transfer
  TaskState state = TaskState::waiting;
  std::uint8_t flags = 0;
};
static_assert(sizeof(Slot) == 32);

// A stream that has tasks. It runs one at a time, so it has at most one pending event: the end of
// its running task's latency, transfer or compute.
struct Lane {
  std::int32_t begin = 0, end = 0, cursor = 0;  // into the run order
  TaskId running = -1;
  std::int32_t device = 0;
  bool compute = false;    // the device's compute stream (contending tasks slow it)
  double last_finish = 0;  // of the task before the cursor
};

// A device's compute load: the contending tasks running on it and its running compute task.
struct Load {
  std::int32_t contending = 0;
  TaskId compute = -1;
  double since = 0;  // when that task's remaining work was last brought up to date
};

// The event queue's key: (time, sequence number) in 128 bits; a non-negative double's bits order
// as the double.
__extension__ typedef unsigned __int128 Key;
inline constexpr Key kIdle = ~Key{0};
inline Key key_of(double t, std::uint64_t seq) {
  std::uint64_t bits;
  const double nonnegative = t + 0.0;  // -0.0 becomes +0.0, whose bits are the smallest
  std::memcpy(&bits, &nonnegative, sizeof bits);
  return (static_cast<Key>(bits) << 64) | seq;
}
inline double time_of(Key k) {
  const auto bits = static_cast<std::uint64_t>(k >> 64);
  double t;
  std::memcpy(&t, &bits, sizeof t);
  return t;
}

}  // namespace run_state
}  // namespace ptdsim::sim
