#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "ptdsim/sim/sharing.hpp"

// Flows that cross several resources (a GPU's NIC or rail, the switch tiers above it) at a
// max-min fair rate, by progressive filling (docs/simulator.md "Sharing models", "Flows across
// several resources"). This is the flow-level model of SimGrid's LMM solver (Velho et al., "On the
// validity of flow-level TCP network models for grid and cloud simulations", ACM TOMACS 23(4), 2013)
// and of ns-3's and htsim's flow modes: every resource's capacity is split so that no flow could
// go faster without slowing one that is already as slow or slower.
namespace ptdsim::sim {

class FlowShare final : public SharingModel {
 public:
  // A route is what the kernel calls a resource: every flow on kernel resource r crosses the
  // physical resources `through` of route r. `bound` is the bandwidth such a flow moves at alone
  // (in the resources' capacity units; a flow's work is in seconds at that bandwidth, so the
  // kernel's capacity for a route is 1 work unit per second).
  struct Route {
    double bound = 1;
    std::vector<std::int32_t> through;
  };
  // The physical resources' capacities and the routes; before the run (a run with other routes
  // than the kernel's resources is refused in prepare()).
  void set_network(std::vector<double> capacity, std::vector<Route> routes);
  std::span<const Route> routes() const { return routes_; }
  std::span<const double> capacities() const { return cap_; }

  void prepare(std::span<const double> capacity) override;
  void start(Flows& flows, std::int32_t flow, std::int32_t r, double t) override;
  void end(Flows& flows, std::int32_t flow, std::int32_t r, double t) override;
  // SM contention is FairShare's, set on the same terms
  void set_comm_share(double share) { compute_.set_comm_share(share); }
  bool slows_compute() const override { return compute_.slows_compute(); }
  double compute_rate(int n) const override { return compute_.compute_rate(n); }
  // Exact for the fast-forward per domain: routes that share no physical resource, directly or
  // through other routes, never change each other's rate, and a flow alone in its domain moves
  // at its route's alone rate.
  bool fast_forward_exact() const override { return true; }
  double alone_rate(std::int32_t r) const override { return alone_[r]; }
  std::int32_t domain(std::int32_t r) const override { return domain_[r]; }
  void settle(const Flows& flows, std::span<const Begun> begun) override;

  // The max-min fair bandwidths of flows on `on` (routes), each at most its route's bound, by
  // progressive filling: raise every unfrozen flow's bandwidth together until a resource is full
  // or a flow reaches its bound, freeze those, repeat. Public for the tests' hand-worked cases.
  std::vector<double> fill(std::span<const std::int32_t> on) const;
  // the same into `b` (resized to on.size()), without allocating once its storage has grown
  void fill(std::span<const std::int32_t> on, std::vector<double>& b) const;

 private:
  struct Active {
    std::int32_t flow, route;
    double rate;  // work units per second now
  };
  struct Domain {
    double last_t = 0;  // when its flows' work left was last brought up to date
    std::vector<Active> active;
  };
  void reshare(Flows& flows, Domain& d, double t);
  void catch_up(Flows& flows, Domain& d, double t);

  std::vector<double> cap_;
  std::vector<Route> routes_;
  std::vector<double> alone_;          // per route: a lone flow's rate, work units per second
  std::vector<std::int32_t> domain_;   // per route: its domain (routes joined by a shared resource)
  std::vector<Domain> domains_;
  FairShare compute_;
  // scratch for fill()
  mutable std::vector<std::int32_t> routes_on_;
  std::vector<std::int32_t> on_;  // reshare(): the routes of a domain's flows
  std::vector<double> b_;         // reshare(): their bandwidths
  mutable std::vector<double> left_, rate_;
  mutable std::vector<int> count_;
  mutable std::vector<std::uint8_t> frozen_;
};

}  // namespace ptdsim::sim
