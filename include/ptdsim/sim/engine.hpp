#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ptdsim/analytic/plan.hpp"

namespace ptdsim::sim {

// Streams of one GPU (one representative rank), as the step plan names them. A stream runs its
// tasks one at a time, in the order they were added (CUDA stream semantics): the schedule
// builder's insertion order is the program order.
using StreamKind = analytic::Stream;
inline constexpr int kStreamKinds = analytic::kStreamCount;
std::string_view name(StreamKind);

// What a task stands for; used by the trace, the critical-path summary and the exposed-time
// accounting of simulate().
enum class TaskKind : std::uint8_t {
  forward,
  backward,         // B and W together (GPipe, 1F1B, interleaved)
  backward_input,   // ZB-H1's B
  backward_weight,  // ZB-H1's W
  optimizer,
  tp,
  cp,
  ep,
  p2p,
  dp_reduce,
  dp_gather,
  zero3_gather,
  zero3_reduce,
};
std::string_view name(TaskKind);
bool is_compute(TaskKind);

enum class TaskState : std::uint8_t { waiting, ready, running, done };

using TaskId = std::int32_t;

// What the builder says about a task. A compute task lasts `duration_s`. A communication task
// first waits `duration_s` (its latency, alpha) and then moves `work` units over `link`, sharing
// the link fairly with the other transfers on it at the same time (capacity / k each).
struct TaskSpec {
  TaskKind kind = TaskKind::forward;
  StreamKind stream = StreamKind::compute;
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

// Discrete-event engine over a task DAG. Typed events ordered by (time, sequence number), so a
// run is deterministic; the engine owns its clock and queue. Memory is linear in tasks + edges.
class Engine {
 public:
  explicit Engine(int ranks = 1);

  void reserve(std::size_t tasks, std::size_t edges);
  // A link shared fairly among the transfers on it; capacity in work units per second.
  std::int32_t add_link(double capacity);
  TaskId add(const TaskSpec& spec);
  // Marks the last `seconds` of compute task `id` (already in its duration) as serial TP.
  void fold_tp(TaskId id, double seconds, double bytes) {
    spec_[id].folded_tp_s = seconds;
    spec_[id].folded_tp_bytes = bytes;
  }
  // SM contention: while n collectives (not p2p sends) run on a rank (latency and transfer), its compute runs at
  // 1 - n * share of its speed (at least kMinComputeRate): NCCL's kernels hold SMs that the GEMMs
  // beside them lose. 0 (the default) leaves compute alone.
  void set_comm_share(double share);
  static constexpr double kMinComputeRate = 0.1;
  // `to` may start only after `from` finished. Both must exist; no self edges.
  void depend(TaskId from, TaskId to);

  // Runs every task once. Throws std::logic_error if some task can never run (a cycle, or a
  // stream order that contradicts the dependencies).
  void run();

  int ranks() const { return ranks_; }
  std::size_t size() const { return spec_.size(); }
  std::size_t edges() const { return edge_from_.size(); }
  const TaskSpec& spec(TaskId id) const { return spec_[id]; }
  TaskState state(TaskId id) const { return slot_[id].state; }
  double start(TaskId id) const { return start_[id]; }
  double finish(TaskId id) const { return slot_[id].finish; }
  double makespan() const { return makespan_; }
  // How long the task takes when nothing shares its link.
  double alone_s(TaskId id) const {
    const TaskSpec& s = spec_[id];
    return s.duration_s + (s.work > 0 ? s.work / links_[s.link].capacity : 0.0);
  }
  // The constraint that started a task last: the dependency or stream predecessor that finished
  // last (-1 for a task that could start at time 0). Following it from the last task to finish
  // gives the critical path of the run, contention included.
  TaskId binding(TaskId id) const { return slot_[id].binding; }
  std::vector<TaskId> critical_path() const;  // in time order
  // Dependencies as given plus the implicit stream-order edges, for graph checks.
  void all_edges(std::vector<std::pair<TaskId, TaskId>>& out) const;
  std::size_t events_processed() const { return events_; }
  // A stream's tasks in program order (after run(): also in time order).
  std::span<const TaskId> stream_tasks(int rank, StreamKind k) const {
    const Stream& st = streams_[rank * kStreamKinds + static_cast<int>(k)];
    return {stream_tasks_.data() + st.begin, static_cast<std::size_t>(st.end - st.begin)};
  }

 private:
  struct Event {
    double t;
    std::uint64_t seq;
    TaskId task;
    std::uint32_t version;  // flow events: stale when the task's version moved on
    std::uint8_t type;      // 0: timer (compute end or latency end), 1: transfer end,
                            // 2: compute end under contention (versioned like 1)
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.t != b.t ? a.t > b.t : a.seq > b.seq;
    }
  };
  struct Link {
    double capacity = 1;
    double last_t = 0;
    std::vector<TaskId> active;
  };
  struct RankLoad {
    std::int32_t comm = 0;      // collectives running on the rank
    TaskId compute = -1;        // its running compute task
    double since = 0;           // when that task's remaining work was last brought up to date
  };
  struct Stream {
    std::int32_t begin = 0, end = 0, cursor = 0;  // into stream_tasks_
    bool busy = false;
    double last_finish = 0;  // of the task before the cursor
  };
  // What the run touches per task in 32 bytes: a step of a 1T-parameter model has ~1.3e5 tasks
  // and the run is bound by memory latency, not arithmetic. Start times live apart (written once).
  struct alignas(32) Slot {
    double amount = 0;  // compute: duration (left, under contention); transfer: work left
    double finish = 0;  // until the task is done: when it became ready
    TaskId binding = -1;
    std::uint32_t version = 0;
    std::uint16_t stream = 0;
    std::int16_t pending = 0;
    std::int16_t link = -1;  // -1: a compute task
    TaskState state = TaskState::waiting;
    std::uint8_t latency = 0;  // a transfer whose latency phase has not run yet
  };
  static_assert(sizeof(Slot) == 32);

  int stream_of(TaskId id) const {
    return spec_[id].rank * kStreamKinds + static_cast<int>(spec_[id].stream);
  }
  void push(double t, TaskId id, std::uint8_t type, std::uint32_t version = 0);
  void try_start(int stream, double t);
  void start_transfer(TaskId id, double t);
  void end_transfer(TaskId id, double t);
  void complete(TaskId id, double t);
  bool holds_sms(TaskId id) const;
  double compute_rate(int comm) const;
  void change_load(int rank, int delta, double t);

  int ranks_;
  std::vector<TaskSpec> spec_;
  std::vector<Slot> slot_;
  std::vector<double> start_;
  std::vector<TaskId> edge_from_, edge_to_;
  std::vector<std::int32_t> succ_begin_;  // CSR of successors, built by run()
  std::vector<TaskId> succ_;
  std::vector<Stream> streams_;
  std::vector<TaskId> stream_tasks_;
  std::vector<Link> links_;
  double comm_share_ = 0;
  std::vector<RankLoad> load_;
  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
  std::size_t events_ = 0;
  double makespan_ = 0;
};

}  // namespace ptdsim::sim
