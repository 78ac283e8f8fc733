#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ptdsim/sim/kernel_state.hpp"
#include "ptdsim/sim/sharing.hpp"

// The kernel's accelerator (docs/simulator.md "Fast-forward"): between two moments where the order
// of simultaneous events matters, the event loop computes a longest path of the task graph, and a
// walk computes it without the queue, then hands the run back to the loop at the first moment the
// order could matter again (the cut). Every result is the same with it or without it.
namespace ptdsim::sim {

class Kernel;

class FastForward {
 public:
  // Whether the kernel may fast-forward (off: the event loop runs alone; the tests compare the two).
  void enable(bool on) { on_ = on; }
  // Before a run, after the kernel laid out its run state.
  void prepare(const Kernel& k);
  // A walk is tried while nothing contends for compute and no resource has two flows (a walk from
  // there would be cut at once), with enough tasks left to pay for it, until kMaxShort walks in a
  // row were cut short (a step whose collectives run beside its compute throughout cuts every walk early).
  bool worth_trying(int contending, bool quiet, std::size_t left) const {
    return short_ < kMaxShort && contending == 0 && quiet && on_ && left >= kMinWalkTasks;
  }
  // From the kernel's state after its events up to `now`, walks to the cut and commits everything
  // before it into the kernel's state as the loop would have left it. Returns the tasks it completed
  // (0: the cut came too soon, nothing changed).
  std::size_t walk(Kernel& k, double now);
  // after a run: the tasks the walks completed
  std::size_t walked() const { return walked_; }

 private:
  using Slot = run_state::Slot;
  using Lane = run_state::Lane;
  static constexpr int kMaxShort = 3;
  static constexpr std::size_t kMinWalkTasks = 64;
  // Tasks beyond which the walk prefetches each lane's state ahead (far_): about 120 bytes of run
  // state a task, 2 MB at this count, twice a core's L2 on the machine of docs/performance.md;
  // below it the lanes' state stays cached and the hints only cost.
  static constexpr std::size_t kCacheTasks = 16384;

  // What the walk reads of a task it reaches from another lane (32 bytes, one cache line)...
  // (no initializers: the slots come zeroed from calloc, gen 0 meaning never reached)
  struct alignas(32) WalkSlot {
    double ready;          // the latest walked dependency's end (or the ready time before the walk)
    std::int32_t dep;      // that dependency: the binding unless the stream predecessor binds
    std::int32_t pending;  // dependencies not yet walked
    std::uint32_t gen;     // the walk that last set this slot
    std::uint8_t flags;    // kDepSet, kTie, kWalked
    std::uint16_t lane;    // the task's (its Slot's lane: a task reached again reads this line only)
    std::int32_t late;     // walked dependencies that end at or after the cut (commit())
  };
  static_assert(sizeof(WalkSlot) == 32);
  // ...and what it writes of a task it walks (read back lane by lane)
  struct WalkEnd {
    double finish;
    double scheduled;      // when its end event was (last) scheduled; -inf: before the walk
    std::int32_t binding;
  };
  enum WalkFlag : std::uint8_t { kDepSet = 1, kTie = 2, kWalked = 4 };
  // pairs of lanes whose walked tasks could overlap where the loop would share: a sharing domain
  // between two lanes' transfers (resource >= 0: the domain, SharingModel::domain), or compute contention between a compute lane and a lane
  // whose tasks hold compute (resource -1, a the compute lane)
  struct LanePair {
    std::int32_t a, b, resource;
  };
  struct NewKey {
    double at, scheduled;
    std::int32_t lane;
  };
  // the tasks a walk propagated a dependency's end to, each once with its lane (arena())
  struct Reached {
    std::int32_t task, lane;
  };

  void bind(Kernel& k);
  void pair_lanes();
  void arena(std::size_t tasks);
  WalkSlot& reach(std::int32_t x);
  void propagate(std::int32_t x, double f);
  bool follows(std::int32_t a, std::int32_t b, double f) const;
  int completes_later(std::int32_t a, std::int32_t b, double f) const;
  void advance(int lane);
  double first_overlap(int a, int b, std::int32_t resource, double cut) const;
  double transfer_begin(std::int32_t x) const;
  bool order_new_keys(double cut, double& ambiguous);
  // everything before the cut into the kernel's state, as the loop would have left it
  std::size_t commit(double cut);
  std::size_t commit_lanes(double cut);
  void release_waiting();
  void resume_sharing();
  void requeue();

  bool on_ = true;
  bool far_ = false;
  bool slows_ = false;  // the sharing model slows compute beside contending tasks
  // the kernel's, during a walk (bind(): raw pointers, as the loop reads them)
  Kernel* k_ = nullptr;
  Slot* slot_ = nullptr;
  double* start_ = nullptr;
  const std::int32_t* succ_begin_ = nullptr;
  const TaskId* succ_ = nullptr;
  Lane* lanes_ = nullptr;
  int lanes_n_ = 0;
  double compute_rate0_ = 1;            // the sharing model's compute rate with nothing contending
  std::vector<double> alone_rate_;      // per resource: a lone flow's rate
  std::vector<std::int32_t> domain_;    // per resource: its sharing domain (SharingModel::domain)
  const Job* jobs_ = nullptr;
  const std::int32_t* job_of_ = nullptr;       // per task: its description
  const TaskId* stream_tasks_ = nullptr;       // run order -> task
  // this thread's walk state (arena())
  WalkSlot* walk_ = nullptr;
  WalkEnd* walk_out_ = nullptr;
  Reached* reached_ = nullptr;
  Reached* reached_end_ = nullptr;
  std::vector<std::int32_t> walk_begin_, walk_end_, stack_;
  std::vector<double> free_;
  std::size_t paired_lanes_ = 0;  // the lanes pair_lanes() has seen (0: not yet this run)
  double horizon_ = 0;
  std::uint32_t gen_ = 0;
  // the earliest instant the walk found where only the loop's order of two events decides (a tie
  // of two dependencies that binds a task)
  double tie_ = 0;
  std::vector<LanePair> pairs_;
  std::vector<NewKey> new_keys_;
  std::vector<SharingModel::Begun> begun_;
  std::vector<std::int32_t> cut_end_;      // per lane: the end of the tasks done before the cut
  std::vector<std::int32_t> started_end_;  // per lane: the end of the tasks started before the cut
  int short_ = 0;      // walks in a row a cut ended before their horizon
  double span_ = 0;    // how far ahead the next walk goes
  std::size_t walked_ = 0;
};

}  // namespace ptdsim::sim
