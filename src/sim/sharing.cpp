#include "ptdsim/sim/sharing.hpp"

#include <algorithm>
#include <stdexcept>

namespace ptdsim::sim {

void FairShare::set_comm_share(double share) {
  if (!(share >= 0 && share < 1)) throw std::invalid_argument("sim::FairShare comm share must be in [0, 1)");
  share_ = share;
}

double FairShare::compute_rate(int n) const { return std::max(kMinComputeRate, 1.0 - n * share_); }

void FairShare::prepare(std::span<const double> capacity) {
  // (resized, not rebuilt: a sweep's worker keeps the flows' lists from step to step)
  links_.resize(capacity.size());
  for (std::size_t r = 0; r < capacity.size(); ++r) {
    links_[r].capacity = capacity[r];
    links_[r].last_t = 0;
    links_[r].active.clear();
  }
  crowded_ = 0;
}

// When a flow joins or leaves a link, every active flow's work left is brought up to now at its
// old share (capacity / k), then each end is rescheduled at the new share.
void FairShare::start(Flows& flows, std::int32_t flow, std::int32_t r, double t) {
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

void FairShare::end(Flows& flows, std::int32_t flow, std::int32_t r, double t) {
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

// A fast-forward leaves at most one flow per link (two would have overlapped before its cut): the
// one moving before it, if not done, or the one it began.
void FairShare::settle(const Flows& flows, std::span<const Begun> begun) {
  for (Link& k : links_)
    if (!k.active.empty() && flows.done(k.active.front())) k.active.clear();
  for (const Begun& b : begun) {
    Link& k = links_[b.resource];
    k.active.assign(1, b.flow);
    k.last_t = b.since;
  }
  crowded_ = 0;
}

}  // namespace ptdsim::sim
