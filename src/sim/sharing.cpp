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
