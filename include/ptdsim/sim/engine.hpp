#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
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
  offload,          // CPU offload's serial phase on the compute stream (host copies, CPU optimizer step)
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

// Discrete-event engine over a task DAG. Events are ordered by (time, sequence number), so a run
// is deterministic; the engine owns its clock and queue. Memory is linear in tasks + edges
// (docs/simulator.md "Data structures").
class Engine {
 public:
  explicit Engine(int ranks = 1);
  // Empties the engine for a new graph, as Engine(ranks) would, but keeps the storage of its
  // arrays: a sweep simulates thousands of steps on each worker, and arrays allocated afresh for
  // each were allocated and page-faulted in again (2-4% of a GPT-3 step's simulation).
  void reset(int ranks);

  void reserve(std::size_t tasks, std::size_t edges);
  // A link shared fairly among the transfers on it; capacity in work units per second.
  std::int32_t add_link(double capacity);
  // Tasks that differ only in their micro-batch (a stage's passes in the steady state) share one
  // description: add it once (checked here), then its tasks by index. A task costs 8 bytes to add.
  std::int32_t add_spec(const TaskSpec& spec);
  TaskId add(std::int32_t spec, std::int32_t microbatch) {  // (inline: once per task the builder adds)
    if (spec < 0 || spec >= static_cast<std::int32_t>(specs_.size())) no_such_spec();
    spec_of_.push_back(spec);
    microbatch_.push_back(microbatch);
    return static_cast<TaskId>(spec_of_.size() - 1);
  }
  TaskId add(const TaskSpec& spec) { return add(add_spec(spec), spec.microbatch); }
  const TaskSpec& description(std::int32_t spec) const { return specs_[spec]; }
  std::size_t descriptions() const { return specs_.size(); }
  // SM contention: while n collectives (not p2p sends) run on a rank (latency and transfer), its compute runs at
  // 1 - n * share of its speed (at least kMinComputeRate): NCCL's kernels hold SMs that the GEMMs
  // beside them lose. 0 (the default) leaves compute alone.
  void set_comm_share(double share);
  static constexpr double kMinComputeRate = 0.1;
  // `to` may start only after `from` finished. Both must exist; no self edges.
  void depend(TaskId from, TaskId to) {  // (inline: once per edge the builder adds)
    const auto n = static_cast<TaskId>(spec_of_.size());
    if (from < 0 || to < 0 || from >= n || to >= n || from == to) bad_edge();
    edges_.push_back(Edge{from, to});
  }

  // Runs every task once. Throws std::logic_error if some task can never run (a cycle, or a
  // stream order that contradicts the dependencies).
  void run();
  // Whether run() may walk (docs/simulator.md "Walks"): every result is the same either way; off,
  // the event loop runs alone (the tests compare the two).
  void set_walks(bool on) { walks_on_ = on; }
  // after run(): the tasks the walks ran
  std::size_t walked_tasks() const { return walked_; }

  int ranks() const { return ranks_; }
  std::size_t size() const { return spec_of_.size(); }
  std::size_t edges() const { return edges_.size(); }
  TaskSpec spec(TaskId id) const {
    TaskSpec s = specs_[spec_of_[id]];
    s.microbatch = microbatch_[id];
    return s;
  }
  // The fields of spec(id) that the summary reads for every task, without the copy.
  TaskKind kind(TaskId id) const { return specs_[spec_of_[id]].kind; }
  std::int32_t rank(TaskId id) const { return specs_[spec_of_[id]].rank; }
  std::int32_t microbatch(TaskId id) const { return microbatch_[id]; }
  double duration_s(TaskId id) const { return specs_[spec_of_[id]].duration_s; }
  double folded_tp_s(TaskId id) const { return specs_[spec_of_[id]].folded_tp_s; }
  // after run()
  TaskState state(TaskId id) const { return slot_[run_of_[id]].state; }
  double start(TaskId id) const { return start_[run_of_[id]]; }
  double finish(TaskId id) const { return slot_[run_of_[id]].finish; }
  double makespan() const { return makespan_; }
  // How long the task takes when nothing shares its link.
  double alone_s(TaskId id) const {
    const TaskSpec& s = specs_[spec_of_[id]];
    return s.duration_s + (s.work > 0 ? s.work / links_[s.link].capacity : 0.0);
  }
  // The constraint that started a task last: the dependency or stream predecessor that finished
  // last (-1 for a task that could start at time 0). Following it from the last task to finish
  // gives the critical path of the run, contention included.
  TaskId binding(TaskId id) const {
    const TaskId b = slot_[run_of_[id]].binding;
    return b < 0 ? -1 : stream_tasks_[b];
  }
  std::vector<TaskId> critical_path() const;  // in time order
  // Dependencies as given plus the implicit stream-order edges, for graph checks.
  void all_edges(std::vector<std::pair<TaskId, TaskId>>& out) const;
  std::size_t events_processed() const { return events_; }
  // A stream's tasks in program order (after run(): also in time order).
  std::span<const TaskId> stream_tasks(int rank, StreamKind k) const {
    const std::int32_t lane = lane_of_stream_.empty() ? -1 : lane_of_stream_[rank * kStreamKinds + static_cast<int>(k)];
    if (lane < 0) return {};
    const Lane& st = lanes_[lane];
    return {stream_tasks_.data() + st.begin, static_cast<std::size_t>(st.end - st.begin)};
  }

 private:
  [[noreturn]] static void no_such_spec();
  [[noreturn]] static void bad_edge();
  struct Edge {
    TaskId from, to;
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
  // A stream that has tasks. It runs one at a time, so it has at most one pending event: the end
  // of its running task's latency, transfer or compute (see `key_`).
  struct Lane {
    std::int32_t begin = 0, end = 0, cursor = 0;  // into stream_tasks_
    TaskId running = -1;
    std::int32_t rank = 0;
    bool compute = false;    // the rank's compute stream (SM contention slows it)
    double last_finish = 0;  // of the task before the cursor
  };
  // kCollective: a collective (not a pipeline send), which a walk does not start beside
  enum Flag : std::uint8_t { kLatency = 1, kHoldsSms = 2, kCollective = 4 };
  static bool is_collective(const TaskSpec& sp) {
    return sp.stream != StreamKind::compute && sp.kind != TaskKind::p2p;
  }
  // What the event loop touches per task in 32 bytes: a step of a 1T-parameter model has ~1.3e5
  // tasks. Start times live apart (written once).
  struct alignas(32) Slot {
    double amount = 0;  // compute: duration (left, under contention); transfer: work left
    double finish = 0;  // until the task is done: when it became ready
    TaskId binding = -1;
    std::int32_t pending = 0;
    std::uint16_t lane = 0;
    std::int16_t link = -1;  // -1: a compute task
    TaskState state = TaskState::waiting;
    std::uint8_t flags = 0;  // kLatency: a transfer whose latency phase has not run yet
  };
  static_assert(sizeof(Slot) == 32);

  // The event queue's key: (time, sequence number) in 128 bits; a non-negative double's bits
  // order as the double.
  __extension__ typedef unsigned __int128 Key;
  static constexpr Key kIdle = ~Key{0};
  static Key key_of(double t, std::uint64_t seq) {
    std::uint64_t bits;
    const double nonnegative = t + 0.0;  // -0.0 becomes +0.0, whose bits are the smallest
    std::memcpy(&bits, &nonnegative, sizeof bits);
    return (static_cast<Key>(bits) << 64) | seq;
  }
  static double time_of(Key k) {
    const auto bits = static_cast<std::uint64_t>(k >> 64);
    double t;
    std::memcpy(&t, &bits, sizeof t);
    return t;
  }

  // The run (docs/simulator.md "Data structures"): prepare() lays out lanes, slots and successors.
  void prepare();
  void build_queue();
  // event loop
  void schedule(int lane, double t);
  void update(int lane);
  void commit();
  void try_start(int lane, double t);
  void start_transfer(TaskId id, double t);
  void end_transfer(TaskId id, double t);
  void complete(TaskId id, double t);
  double compute_rate(int comm) const;
  void change_load(int rank, int delta, double t);
  // walks (docs/simulator.md "Walks")
  void prepare_walks();
  void pair_lanes();
  void walk_arena(std::size_t tasks);
  // A walk is tried while no collective runs and no link is shared (a walk from there would be cut
  // at once), with enough tasks left to pay for it, until kMaxShort walks in a row were cut short
  // (a step whose collectives run beside its compute throughout cuts every walk early).
  static constexpr int kMaxShort = 3;
  static constexpr std::size_t kMinWalkTasks = 64;
  bool walk_worth_trying(std::size_t done) const {
    return walk_short_ < kMaxShort && collectives_ == 0 && shared_links_ == 0 && walks_on_ &&
           spec_of_.size() - done >= kMinWalkTasks;
  }
  std::size_t walk(double now);
  double first_overlap(int a, int b, std::int32_t link, double cut) const;
  double transfer_begin(std::int32_t x) const;
  bool order_new_keys(double cut, double& ambiguous);
  std::size_t commit_walk(double cut);

  int ranks_;
  std::vector<TaskSpec> specs_;           // the distinct descriptions
  std::vector<std::int32_t> spec_of_;     // per task: its description
  std::vector<std::int32_t> microbatch_;  // per task
  std::vector<Edge> edges_;
  std::vector<Link> links_;
  double comm_share_ = 0;
  // run state
  std::vector<Slot> slot_;
  std::vector<double> start_;
  std::vector<std::int32_t> succ_begin_;  // CSR of successors, in the order the edges were added
  std::vector<TaskId> succ_;
  std::vector<std::int32_t> lane_of_stream_;  // rank * kStreamKinds + stream -> lane (-1: no tasks)
  std::vector<Lane> lanes_;
  std::vector<TaskId> stream_tasks_;  // the tasks in run order: lane by lane, each in program order
  std::vector<std::int32_t> run_of_;  // per task: its place in stream_tasks_, the index of its run state
  std::vector<RankLoad> load_;
  // The event queue: a tournament tree over the lanes, each holding its one pending event's key,
  // tree_[n] the lane with the smallest key below node n. The next event is tree_[1], or front_
  // when the earliest event scheduled by the last one comes before all of the tree's; a new key
  // replays one leaf-to-root path (log2 of the lanes, 8 steps for 64 stages, no branch to mispredict).
  std::vector<Key> key_;
  std::vector<std::int32_t> tree_;
  int leaves_ = 1;
  std::vector<Key> pend_;                // keys scheduled while an event is processed
  std::vector<std::uint8_t> dirty_mark_;  // per lane: in dirty_
  std::vector<std::int32_t> dirty_;       // lanes whose key changes at the next commit()
  int front_ = -1;
  Key front_key_ = 0;
  int popped_ = -1;  // the lane whose event was taken from the tree (its path is stale until commit)
  std::uint64_t seq_ = 0;
  std::size_t events_ = 0;
  double makespan_ = 0;

  // Walks: each task's times as a longest path from the loop's state, taken up to the first moment
  // where the order of events could matter (the cut), then handed back to the loop.
  // (no initializers: the slots come zeroed from calloc, gen 0 meaning never reached)
  // What the walk reads of a task it reaches from another lane (32 bytes, one cache line)...
  struct alignas(32) WalkSlot {
    double ready;          // the latest walked dependency's end (or the ready time before the walk)
    std::int32_t dep;      // that dependency: the binding unless the stream predecessor binds
    std::int32_t pending;  // dependencies not yet walked
    std::uint32_t gen;     // the walk that last set this slot
    std::uint8_t flags;    // kDepSet, kTie, kWalked
    std::uint16_t lane;    // the task's (its Slot's lane: a task reached again reads this line only)
    std::int32_t late;     // walked dependencies that end at or after the cut (commit_walk())
  };
  static_assert(sizeof(WalkSlot) == 32);
  // ...and what it writes of a task it walks (read back lane by lane)
  struct WalkEnd {
    double finish;
    double scheduled;      // when its end event was (last) scheduled; -inf: before the walk
    std::int32_t binding;
  };
  WalkSlot& reach(std::int32_t x);
  void propagate(std::int32_t x, double f);
  bool follows(std::int32_t a, std::int32_t b, double f) const;
  int completes_later(std::int32_t a, std::int32_t b, double f) const;
  void advance(int lane);
  enum WalkFlag : std::uint8_t { kDepSet = 1, kTie = 2, kWalked = 4 };
  bool walks_on_ = true;
  // Tasks beyond which the walk prefetches each lane's state ahead (walk_far_): about 120 bytes of
  // run state a task, 2 MB at this count, twice a core's L2 on the machine of docs/performance.md.
  // The GPT-3 step (12k tasks) gained nothing from the hints and paid 3-6% for them; the 1T (130k)
  // gained 20%.
  static constexpr std::size_t kCacheTasks = 16384;
  bool walk_far_ = false;
  WalkSlot* walk_ = nullptr;     // during a walk: this thread's walk state (walk_arena())
  WalkEnd* walk_out_ = nullptr;
  std::vector<std::int32_t> walk_begin_, walk_end_, walk_stack_;
  std::vector<double> walk_free_;
  std::size_t walk_lanes_ = 0;    // the lanes pair_lanes() has seen (0: not yet this run)
  double walk_horizon_ = 0;
  std::uint32_t walk_gen_ = 0;
  // the earliest instant the walk found where only the loop's order of two events decides (a tie
  // of two dependencies that binds a task)
  double walk_tie_ = 0;
  // pairs of lanes whose walked tasks could overlap where the loop would share: a link between
  // two lanes' transfers (link >= 0), or SM contention between a compute lane and a lane whose
  // collectives hold SMs (link -1, a the compute lane)
  struct LanePair {
    std::int32_t a, b, link;
  };
  std::vector<LanePair> walk_pairs_;
  struct NewKey {
    double at, scheduled;
    std::int32_t lane;
  };
  std::vector<NewKey> new_keys_;
  std::vector<std::int32_t> cut_end_;  // per lane: the end of the tasks done before the cut
  std::vector<std::int32_t> started_end_;  // per lane: the end of the tasks started before the cut
  // the tasks this walk propagated a dependency's end to, each once with its lane (walk_arena())
  struct Reached {
    std::int32_t task, lane;
  };
  Reached* walk_reached_ = nullptr;
  Reached* walk_reached_end_ = nullptr;
  int shared_links_ = 0;   // links with more than one transfer on them now
  int collectives_ = 0;    // collectives running now
  double now_ = 0;         // the time of the last event processed
  int walk_short_ = 0;     // walks in a row a cut ended before their horizon
  double walk_span_ = 0;   // how far ahead the next walk goes
  std::size_t walked_ = 0;

};

}  // namespace ptdsim::sim
