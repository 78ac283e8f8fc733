#pragma once
#include <span>
#include <vector>

#include "ptdsim/sim/sharing.hpp"

namespace ptdsim::sim_test {

using namespace ptdsim::sim;

// A second sharing model, for the tests of the interface: every flow moves at its resource's full
// capacity however many flows it shares it with (a network without contention), and compute is
// never slowed. It counts the kernel's calls.
class FixedRate final : public SharingModel {
 public:
  explicit FixedRate(bool exact = true) : exact_(exact) {}
  int starts = 0, ends = 0;

  void prepare(std::span<const double> capacity) override {
    capacity_.assign(capacity.begin(), capacity.end());
    starts = ends = 0;
  }
  void start(Flows& flows, std::int32_t flow, std::int32_t r, double t) override {
    ++starts;
    flows.end_at(flow, t + flows.left(flow) / capacity_[r]);
  }
  void end(Flows& flows, std::int32_t flow, std::int32_t, double) override {
    ++ends;
    flows.left(flow) = 0;
  }
  bool slows_compute() const override { return false; }
  double compute_rate(int) const override { return 1.0; }
  // exact = false: claims flows may meet across resources, so the kernel must not fast-forward
  bool fast_forward_exact() const override { return exact_; }
  double alone_rate(std::int32_t r) const override { return capacity_[r]; }
  void settle(const Flows&, std::span<const Begun>) override {}  // nothing kept per flow

 private:
  bool exact_;
  std::vector<double> capacity_;
};

}  // namespace ptdsim::sim_test
