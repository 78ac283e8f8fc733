#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "ptdsim/core/hardware.hpp"

// How concurrent work shares what it runs on (docs/simulator.md "Sharing models"). The event kernel
// (kernel.hpp) asks one SharingModel what a flow gets when flows start and end on a resource, and
// how fast a device's compute runs beside its contending tasks; it knows nothing else of sharing,
// so a flow-level network model (NIC rails, switch tiers) is a second implementation of this
// interface, with the loop unchanged.
namespace ptdsim::sim {

// What a sharing model may read and change of the flows it is told about; the kernel implements it.
// A flow is a task's transfer phase, named by the kernel's id for the task during a run.
class Flows {
 public:
  // the flow's work left, in its resource's capacity units (the model brings it up to date)
  virtual double& left(std::int32_t flow) = 0;
  // the flow now ends at t (its pending end, if any, is replaced)
  virtual void end_at(std::int32_t flow, double t) = 0;
  virtual bool done(std::int32_t flow) const = 0;

 protected:
  ~Flows() = default;
};

class SharingModel {
 public:
  virtual ~SharingModel() = default;

  // --- resources (links; for a network model NIC rails, switch tiers): flows
  // Before each run: the resources' capacities (work units per second), every flow gone.
  virtual void prepare(std::span<const double> capacity) = 0;
  // A flow joins (its latency is over) or leaves (its end came) resource r at time t. The model
  // sets the end of every flow whose rate this changes, the joining one included, by end_at().
  virtual void start(Flows& flows, std::int32_t flow, std::int32_t r, double t) = 0;
  virtual void end(Flows& flows, std::int32_t flow, std::int32_t r, double t) = 0;

  // --- a device's compute (SM contention)
  // Whether tasks that contend for a device's compute slow its compute stream at all.
  virtual bool slows_compute() const = 0;
  // The speed of a device's compute task, as a fraction of its speed alone, while n contending
  // tasks run on the device.
  virtual double compute_rate(int n) const = 0;

  // --- what the fast-forward (fast_forward.hpp) may assume
  // Whether flows on different resources never change each other's rate, and a flow alone on its
  // resource moves at alone_rate(r) from start to end: then a stretch of the run where no resource
  // has two flows and no contending task runs is a longest path, which the fast-forward computes
  // without the event queue. A model for which this is false runs with the event loop alone.
  virtual bool fast_forward_exact() const = 0;
  virtual double alone_rate(std::int32_t r) const = 0;
  // The resources whose flows may change each other's rate carry one domain number: the
  // fast-forward pairs lanes whose transfers share a domain, not only a resource (a model whose
  // flows cross several resources joins the resources they cross; one resource each: itself).
  virtual std::int32_t domain(std::int32_t r) const { return r; }
  // After a fast-forward to `cut`: the flows it ended are done (flows.done()), those it began move
  // alone on their resources, each since `since`.
  struct Begun {
    std::int32_t flow, resource;
    double since;
  };
  virtual void settle(const Flows& flows, std::span<const Begun> begun) = 0;

  // Whether no domain has two flows now (read by the kernel before each event, so a member).
  bool quiet() const { return crowded_ == 0; }

 protected:
  int crowded_ = 0;  // domains with two flows or more now
};

// Today's model: progress-based fair sharing (as SimGrid's) on each link, each of the k flows on
// it moving at capacity / k; and SM contention, n collectives on a GPU leaving its compute
// 1 - n * share of its speed (at least kMinComputeRate).
class FairShare final : public SharingModel {
 public:
  explicit FairShare(double comm_share = 0) { set_comm_share(comm_share); }
  static constexpr double kMinComputeRate = core::GpuSpec::kMinComputeRate;
  // share in [0, 1): what one collective takes of its GPU's compute (0 leaves compute alone)
  void set_comm_share(double share);
  double comm_share() const { return share_; }

  void prepare(std::span<const double> capacity) override;
  void start(Flows& flows, std::int32_t flow, std::int32_t r, double t) override { start_on(flows, flow, r, t); }
  void end(Flows& flows, std::int32_t flow, std::int32_t r, double t) override { end_on(flows, flow, r, t); }
  // The same over any type with Flows' left() and end_at(): the kernel calls these with its own
  // accessors when this is its model, so the default model costs the loop no virtual call per flow.
  template <class F>
  void start_on(F&& flows, std::int32_t flow, std::int32_t r, double t);
  template <class F>
  void end_on(F&& flows, std::int32_t flow, std::int32_t r, double t);
  bool slows_compute() const override { return share_ > 0; }
  double compute_rate(int n) const override;
  bool fast_forward_exact() const override { return true; }
  double alone_rate(std::int32_t r) const override { return links_[r].capacity / 1.0; }
  void settle(const Flows& flows, std::span<const Begun> begun) override;

 private:
  struct Link {
    double capacity = 1;
    double last_t = 0;  // when the active flows' work left was last brought up to date
    std::vector<std::int32_t> active;
  };
  std::vector<Link> links_;
  double share_ = 0;
};

// When a flow joins or leaves a link, every active flow's work left is brought up to now at its
// old share (capacity / k), then each end is rescheduled at the new share.
template <class F>
void FairShare::start_on(F&& flows, std::int32_t flow, std::int32_t r, double t) {
  Link& link = links_[r];
  const double k = static_cast<double>(link.active.size());
  if (k > 0) {
    const double done = (t - link.last_t) * link.capacity / k;
    for (std::int32_t a : link.active) flows.left(a) = std::max(0.0, flows.left(a) - done);
  }
  link.last_t = t;
  link.active.push_back(flow);
  if (link.active.size() == 2) ++crowded_;
  const double rate = link.capacity / static_cast<double>(link.active.size());
  for (std::int32_t a : link.active) flows.end_at(a, t + flows.left(a) / rate);
}

template <class F>
void FairShare::end_on(F&& flows, std::int32_t flow, std::int32_t r, double t) {
  Link& link = links_[r];
  const double k = static_cast<double>(link.active.size());
  const double done = (t - link.last_t) * link.capacity / k;
  link.last_t = t;
  if (link.active.size() == 2) --crowded_;
  link.active.erase(std::find(link.active.begin(), link.active.end(), flow));
  flows.left(flow) = 0;
  if (link.active.empty()) return;
  const double rate = link.capacity / static_cast<double>(link.active.size());
  for (std::int32_t a : link.active) {
    double& left = flows.left(a);
    left = std::max(0.0, left - done);
    flows.end_at(a, t + left / rate);
  }
}

}  // namespace ptdsim::sim
