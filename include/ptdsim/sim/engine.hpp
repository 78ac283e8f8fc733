#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "ptdsim/sim/kernel.hpp"
#include "ptdsim/sim/task.hpp"

namespace ptdsim::sim {

// A training step's task graph on the event kernel: ranks are the kernel's devices, a rank's
// StreamKinds its streams, links its resources, and each TaskSpec (what a task stands for, for the
// trace and the summary) has the kernel description of the same index. The kernel's queries
// (start, finish, binding, critical_path, ...) read the run.
class Engine : public Kernel {
 public:
  explicit Engine(int ranks = 1);
  // As Kernel::reset: emptied for a new graph, the storage kept.
  void reset(int ranks);
  void reserve(std::size_t tasks, std::size_t edges);

  // A link shared among the transfers on it; capacity in work units per second.
  std::int32_t add_link(double capacity) { return add_resource(capacity); }
  // Tasks that differ only in their micro-batch (a stage's passes in the steady state) share one
  // description: add it once (checked here), then its tasks by index. A task costs 8 bytes to add.
  std::int32_t add_spec(const TaskSpec& spec);
  TaskId add(std::int32_t spec, std::int32_t microbatch) {  // (inline: once per task the builder adds)
    const TaskId id = Kernel::add(spec);
    microbatch_.push_back(microbatch);
    return id;
  }
  TaskId add(const TaskSpec& spec) { return add(add_spec(spec), spec.microbatch); }
  const TaskSpec& description(std::int32_t spec) const { return specs_[spec]; }
  std::size_t descriptions() const { return specs_.size(); }
  // SM contention (FairShare's compute side): while n collectives (not p2p sends) run on a rank
  // (latency and transfer), its compute runs at 1 - n * share of its speed (at least
  // kMinComputeRate): NCCL's kernels hold SMs that the GEMMs beside them lose. 0 (the default)
  // leaves compute alone.
  void set_comm_share(double share) { fair_share().set_comm_share(share); }
  static constexpr double kMinComputeRate = FairShare::kMinComputeRate;
  void set_walks(bool on) { set_fast_forward(on); }
  std::size_t walked_tasks() const { return fast_forwarded(); }

  int ranks() const { return devices(); }
  TaskSpec spec(TaskId id) const {
    TaskSpec s = specs_[job_of(id)];
    s.microbatch = microbatch_[id];
    return s;
  }
  // The fields of spec(id) that the summary reads for every task, without the copy.
  TaskKind kind(TaskId id) const { return specs_[job_of(id)].kind; }
  std::int32_t rank(TaskId id) const { return specs_[job_of(id)].rank; }
  std::int32_t microbatch(TaskId id) const { return microbatch_[id]; }
  double duration_s(TaskId id) const { return specs_[job_of(id)].duration_s; }
  double folded_tp_s(TaskId id) const { return specs_[job_of(id)].folded_tp_s; }
  // A stream's tasks in program order (after run(): also in time order).
  std::span<const TaskId> stream_tasks(int rank, StreamKind k) const {
    return Kernel::stream_tasks(rank, static_cast<int>(k));
  }

 private:
  std::vector<TaskSpec> specs_;           // the distinct descriptions, each of the kernel's index
  std::vector<std::int32_t> microbatch_;  // per task
};

}  // namespace ptdsim::sim
