#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ptdsim/sim/fast_forward.hpp"
#include "ptdsim/sim/kernel_state.hpp"
#include "ptdsim/sim/sharing.hpp"

namespace ptdsim::sim {

// The discrete-event kernel: tasks on streams of devices, dependencies between them, durations,
// and work on resources, shared as a SharingModel says (docs/simulator.md "Kernel"). It knows
// nothing of what a task stands for: devices, streams and resources are integers, and a task's
// description index is the tag its caller maps back (sim::Engine, engine.hpp, does for a step).
// Events are ordered by (time, sequence number), so a run is deterministic. Memory is linear in
// tasks + edges (docs/simulator.md "Data structures").
class Kernel : private Flows {
 public:
  // `devices` devices with `streams` streams each; stream `compute_stream` of a device is the one
  // its contending tasks slow.
  explicit Kernel(int devices = 1, int streams = 1, int compute_stream = 0);
  Kernel(Kernel&&) = default;
  Kernel& operator=(Kernel&&) = default;
  // Empties the kernel for a new graph, as Kernel(devices, ...) would, but keeps the storage of
  // its arrays: a sweep simulates thousands of steps on each worker, and arrays allocated afresh
  // for each would be page-faulted in again (2-4% of a GPT-3 step's simulation). The
  // sharing model is the default FairShare again.
  void reset(int devices);

  void reserve(std::size_t tasks, std::size_t edges);
  // A resource of `capacity` work units per second.
  std::int32_t add_resource(double capacity);
  // Tasks that differ only in what their caller tags them with share one description: add it once
  // (checked here), then its tasks by index. A task costs 4 bytes to add.
  std::int32_t add_job(const Job& job);
  TaskId add(std::int32_t job) {  // (inline: once per task the builder adds)
    if (job < 0 || job >= static_cast<std::int32_t>(jobs_.size())) no_such_job();
    job_of_.push_back(job);
    return static_cast<TaskId>(job_of_.size() - 1);
  }
  // `to` may start only after `from` finished. Both must exist; no self edges.
  void depend(TaskId from, TaskId to) {  // (inline: once per edge the builder adds)
    const auto n = static_cast<TaskId>(job_of_.size());
    if (from < 0 || to < 0 || from >= n || to >= n || from == to) bad_edge();
    edges_.push_back(Edge{from, to});
  }
  // The default model, FairShare (fair shares of links, SM contention of collectives), or `model`
  // in its place (null: the default again).
  FairShare& fair_share() { return fair_; }
  void set_sharing(std::unique_ptr<SharingModel> model) { custom_ = std::move(model); }
  const SharingModel& sharing() const { return custom_ ? *custom_ : static_cast<const SharingModel&>(fair_); }

  // Runs every task once. Throws std::logic_error if some task can never run (a cycle, or a
  // stream order that contradicts the dependencies).
  void run();
  // Whether run() may fast-forward (fast_forward.hpp): every result is the same either way; off,
  // the event loop runs alone (the tests compare the two).
  void set_fast_forward(bool on) { ff_.enable(on); }
  // after run(): the tasks the fast-forward completed
  std::size_t fast_forwarded() const { return ff_.walked(); }

  int devices() const { return devices_; }
  int streams() const { return streams_; }
  std::size_t size() const { return job_of_.size(); }
  std::size_t edges() const { return edges_.size(); }
  std::int32_t job_of(TaskId id) const { return job_of_[id]; }
  const Job& job(std::int32_t j) const { return jobs_[j]; }
  std::size_t jobs() const { return jobs_.size(); }
  // after run()
  TaskState state(TaskId id) const { return slot_[run_of_[id]].state; }
  double start(TaskId id) const { return start_[run_of_[id]]; }
  double finish(TaskId id) const { return slot_[run_of_[id]].finish; }
  double makespan() const { return makespan_; }
  // How long the task takes when nothing shares its resource.
  double alone_s(TaskId id) const {
    const Job& j = jobs_[job_of_[id]];
    return j.duration + (j.work > 0 ? j.work / capacity_[j.resource] : 0.0);
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
  std::span<const TaskId> stream_tasks(int device, int stream) const {
    const std::int32_t lane = lane_of_stream_.empty() ? -1 : lane_of_stream_[device * streams_ + stream];
    if (lane < 0) return {};
    const Lane& st = lanes_[lane];
    return {stream_tasks_.data() + st.begin, static_cast<std::size_t>(st.end - st.begin)};
  }

 private:
  friend class FastForward;
  using Slot = run_state::Slot;
  using Lane = run_state::Lane;
  using Load = run_state::Load;
  using Key = run_state::Key;
  [[noreturn]] static void no_such_job();
  [[noreturn]] static void bad_edge();
  struct Edge {
    TaskId from, to;
  };

  // Flows, for the sharing model: a flow is a task by its run-order index
  double& left(std::int32_t flow) override { return slot_[flow].amount; }
  void end_at(std::int32_t flow, double t) override { schedule(slot_[flow].lane, t); }
  bool done(std::int32_t flow) const override { return slot_[flow].state == TaskState::done; }
  // the same without a virtual call, for the default model (FairShare::start_on)
  struct Direct {
    Kernel& k;
    double& left(std::int32_t flow) { return k.slot_[flow].amount; }
    void end_at(std::int32_t flow, double t) { k.schedule(k.slot_[flow].lane, t); }
  };
  void start_flow(TaskId id, std::int32_t r, double t) {
    if (model_ == &fair_)
      fair_.start_on(Direct{*this}, id, r, t);
    else
      model_->start(*this, id, r, t);
  }
  void end_flow(TaskId id, std::int32_t r, double t) {
    if (model_ == &fair_)
      fair_.end_on(Direct{*this}, id, r, t);
    else
      model_->end(*this, id, r, t);
  }

  // The run (docs/simulator.md "Data structures"): prepare() lays out lanes, slots and successors.
  void prepare();
  void lay_out();
  void link_successors();
  void build_queue();
  // event loop
  void schedule(int lane, double t);
  void update(int lane);
  void commit();
  void try_start(int lane, double t);
  void complete(TaskId id, double t);
  void change_load(int device, int delta, double t);

  int devices_;
  int streams_;
  int compute_stream_;
  std::vector<Job> jobs_;               // the distinct descriptions
  std::vector<std::int32_t> job_of_;    // per task: its description
  std::vector<Edge> edges_;
  std::vector<double> capacity_;        // per resource
  FairShare fair_;
  std::unique_ptr<SharingModel> custom_;
  SharingModel* model_ = nullptr;       // during a run: the model in use
  bool slows_ = false;                  // during a run: the model slows compute beside contending tasks
  std::vector<double> rate_;            // during a run: compute rate with n contending tasks, n <= streams
  // run state
  std::vector<Slot> slot_;
  std::vector<double> start_;
  std::vector<std::int32_t> succ_begin_;  // CSR of successors, in the order the edges were added
  std::vector<TaskId> succ_;
  std::vector<std::int32_t> lane_of_stream_;  // device * streams + stream -> lane (-1: no tasks)
  std::vector<Lane> lanes_;
  std::vector<TaskId> stream_tasks_;  // the tasks in run order: lane by lane, each in program order
  std::vector<std::int32_t> run_of_;  // per task: its place in stream_tasks_, the index of its run state
  std::vector<Load> load_;
  // The event queue: a tournament tree over the lanes, each holding its one pending event's key,
  // tree_[n] the lane with the smallest key below node n. The next event is tree_[1], or front_
  // when the earliest event scheduled by the last one comes before all of the tree's; a new key
  // replays one leaf-to-root path (log2 of the lanes, 8 steps for 64 stages, no branch to mispredict).
  std::vector<Key> key_;
  std::vector<std::int32_t> tree_;
  int leaves_ = 1;
  std::vector<Key> pend_;                 // keys scheduled while an event is processed
  std::vector<std::uint8_t> dirty_mark_;  // per lane: in dirty_
  std::vector<std::int32_t> dirty_;       // lanes whose key changes at the next commit()
  int front_ = -1;
  Key front_key_ = 0;
  int popped_ = -1;  // the lane whose event was taken from the tree (its path is stale until commit)
  std::uint64_t seq_ = 0;
  std::size_t events_ = 0;
  double makespan_ = 0;
  int contending_ = 0;  // tasks that contend for compute running now
  double now_ = 0;      // the time of the last event processed
  FastForward ff_;
};

}  // namespace ptdsim::sim
