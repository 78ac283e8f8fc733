#include "ptdsim/sim/flow_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ptdsim::sim {

namespace {

// A resource counts as full, and a flow as at its bound, within this share of it: progressive
// filling subtracts each step's increment from what is left, so an exact zero is not reached.
constexpr double kFull = 1e-12;

}  // namespace

void FlowShare::set_network(std::vector<double> capacity, std::vector<Route> routes) {
  for (double c : capacity)
    if (!(c > 0) || !std::isfinite(c)) throw std::invalid_argument("sim::FlowShare: a resource's capacity must be > 0");
  for (const Route& r : routes) {
    if (!(r.bound > 0) || !std::isfinite(r.bound)) throw std::invalid_argument("sim::FlowShare: a route's bound must be > 0");
    for (std::int32_t p : r.through)
      if (p < 0 || p >= static_cast<std::int32_t>(capacity.size()))
        throw std::invalid_argument("sim::FlowShare: a route crosses no such resource " + std::to_string(p));
  }
  cap_ = std::move(capacity);
  routes_ = std::move(routes);
  // domains: routes joined through the resources they cross (union-find over resources, each
  // route then taking its first resource's root; a route that crosses nothing is its own)
  std::vector<std::int32_t> parent(cap_.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](std::int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const Route& r : routes_)
    for (std::size_t i = 1; i < r.through.size(); ++i) parent[root(r.through[i])] = root(r.through[0]);
  domain_.assign(routes_.size(), -1);
  std::vector<std::int32_t> number(cap_.size(), -1);
  std::int32_t n = 0;
  for (std::size_t r = 0; r < routes_.size(); ++r) {
    if (routes_[r].through.empty()) {
      domain_[r] = n++;
      continue;
    }
    std::int32_t& d = number[root(routes_[r].through[0])];
    if (d < 0) d = n++;
    domain_[r] = d;
  }
  domains_.assign(static_cast<std::size_t>(n), Domain{});
  left_.assign(cap_.size(), 0.0);
  count_.assign(cap_.size(), 0);
}

void FlowShare::prepare(std::span<const double> capacity) {
  if (capacity.size() != routes_.size())
    throw std::invalid_argument("sim::FlowShare: the kernel has " + std::to_string(capacity.size()) +
                                " resources, the network " + std::to_string(routes_.size()) + " routes");
  // alone, a flow moves at its bound unless a resource it crosses is narrower
  alone_.resize(routes_.size());
  for (std::size_t r = 0; r < routes_.size(); ++r) {
    double b = routes_[r].bound;
    for (std::int32_t p : routes_[r].through) b = std::min(b, cap_[p]);
    alone_[r] = capacity[r] * (b / routes_[r].bound);
  }
  for (Domain& d : domains_) {
    d.last_t = 0;
    d.active.clear();
  }
  crowded_ = 0;
}

std::vector<double> FlowShare::fill(std::span<const std::int32_t> on) const {
  std::vector<double> b;
  fill(on, b);
  return b;
}

void FlowShare::fill(std::span<const std::int32_t> on, std::vector<double>& b) const {
  const std::size_t n = on.size();
  b.assign(n, 0.0);
  // (count_ is all zero between calls: every flow freezes, and takes itself off its resources' counts)
  frozen_.assign(n, 0);
  routes_on_.clear();  // the resources the flows cross, once each
  for (std::int32_t r : on)
    for (std::int32_t p : routes_[r].through) {
      if (count_[p]++ == 0) {
        routes_on_.push_back(p);
        left_[p] = cap_[p];
      }
    }
  std::size_t unfrozen = n;
  while (unfrozen > 0) {
    // the largest common increment before a flow reaches its bound or a resource is full
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      if (!frozen_[i]) step = std::min(step, routes_[on[i]].bound - b[i]);
    for (std::int32_t p : routes_on_)
      if (count_[p] > 0) step = std::min(step, left_[p] / count_[p]);
    step = std::max(0.0, step);
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen_[i]) continue;
      b[i] += step;
      for (std::int32_t p : routes_[on[i]].through) left_[p] -= step;
    }
    // freeze the flows at their bound and those crossing a full resource
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen_[i]) continue;
      const Route& r = routes_[on[i]];
      bool stop = b[i] >= r.bound * (1 - kFull);
      for (std::int32_t p : r.through) stop = stop || left_[p] <= cap_[p] * kFull;
      if (!stop) continue;
      frozen_[i] = 1;
      --unfrozen;
      for (std::int32_t p : r.through) --count_[p];
    }
  }
}

void FlowShare::catch_up(Flows& flows, Domain& d, double t) {
  for (const Active& a : d.active) {
    double& left = flows.left(a.flow);
    left = std::max(0.0, left - (t - d.last_t) * a.rate);
  }
  d.last_t = t;
}

// Every flow of the domain gets its max-min fair rate and its end at it.
void FlowShare::reshare(Flows& flows, Domain& d, double t) {
  if (d.active.size() == 1) {
    Active& a = d.active.front();
    a.rate = alone_[a.route];
    flows.end_at(a.flow, t + flows.left(a.flow) / a.rate);
    return;
  }
  on_.clear();
  for (const Active& a : d.active) on_.push_back(a.route);
  fill(on_, b_);
  const std::vector<double>& b = b_;
  for (std::size_t i = 0; i < d.active.size(); ++i) {
    Active& a = d.active[i];
    const Route& r = routes_[a.route];
    // work units per second: the kernel's capacity for the route (alone_ over its alone share)
    // times the share of the bound the flow gets
    double full = r.bound;
    for (std::int32_t p : r.through) full = std::min(full, cap_[p]);
    a.rate = alone_[a.route] * (b[i] / full);
    flows.end_at(a.flow, t + flows.left(a.flow) / a.rate);
  }
}

void FlowShare::start(Flows& flows, std::int32_t flow, std::int32_t r, double t) {
  Domain& d = domains_[domain_[r]];
  catch_up(flows, d, t);
  d.active.push_back(Active{flow, r, 0.0});
  if (d.active.size() == 2) ++crowded_;
  reshare(flows, d, t);
}

void FlowShare::end(Flows& flows, std::int32_t flow, std::int32_t r, double t) {
  Domain& d = domains_[domain_[r]];
  catch_up(flows, d, t);
  if (d.active.size() == 2) --crowded_;
  d.active.erase(std::find_if(d.active.begin(), d.active.end(), [&](const Active& a) { return a.flow == flow; }));
  flows.left(flow) = 0;
  if (!d.active.empty()) reshare(flows, d, t);
}

// A fast-forward leaves at most one flow per domain (two would have overlapped before its cut):
// the one moving before it, if not done, or the one it began, alone.
void FlowShare::settle(const Flows& flows, std::span<const Begun> begun) {
  for (Domain& d : domains_)
    if (!d.active.empty() && flows.done(d.active.front().flow)) d.active.clear();
  for (const Begun& b : begun) {
    Domain& d = domains_[domain_[b.resource]];
    d.active.assign(1, Active{b.flow, b.resource, alone_[b.resource]});
    d.last_t = b.since;
  }
  crowded_ = 0;
}

}  // namespace ptdsim::sim
