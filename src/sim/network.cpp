#include "ptdsim/sim/network.hpp"

#include <algorithm>
#include <memory>

#include "ptdsim/analytic/fabric.hpp"
#include "ptdsim/sim/engine.hpp"
#include "ptdsim/sim/flow_share.hpp"

namespace ptdsim::sim {

bool Fabric::blocking() const {
  return std::any_of(uplink.begin(), uplink.end(), [](double c) { return c < 1.0; });
}

Fabric fabric_of(const core::HardwareSpec& hw) {
  // the one rule of what a representative GPU has above its NIC (analytic::uplink_shares), which
  // the sweep's bound reads too
  const analytic::UplinkShares u = analytic::uplink_shares(hw);
  Fabric f;
  f.uplink.assign(u.uplink.begin(), u.uplink.begin() + u.count);
  return f;
}

void StepLinks::build(const Fabric& fabric, int ranks, Engine& engine, double comm_share) {
  if (!fabric.blocking()) {
    per_rank_ = 2;
    for (int r = 0; r < ranks; ++r) {
      engine.add_link(1.0);  // 2r: NVLink inside the node
      engine.add_link(1.0);  // 2r+1: the NIC share across nodes
    }
    return;
  }
  // Resources per rank: NVLink, the NIC, then the uplinks; routes per rank: NVLink, then one per
  // highest tier crossed (0: under one leaf, the NIC alone; t: the NIC and uplinks 0..t-1).
  const int tiers = static_cast<int>(fabric.uplink.size()) + 1;
  per_rank_ = 1 + tiers;
  const int resources = 2 + tiers - 1;
  std::vector<double> capacity;
  std::vector<FlowShare::Route> routes;
  for (int r = 0; r < ranks; ++r) {
    const std::int32_t base = r * resources;
    capacity.push_back(1.0);  // NVLink (its own scale: nothing else crosses it)
    capacity.push_back(1.0);  // the NIC
    for (double u : fabric.uplink) capacity.push_back(u);
    routes.push_back(FlowShare::Route{1.0, {base}});
    for (int top = 0; top < tiers; ++top) {
      FlowShare::Route route;
      route.through.push_back(base + 1);
      double bound = 1.0;
      for (int k = 0; k < top; ++k) {
        route.through.push_back(base + 2 + k);
        bound = std::min(bound, fabric.uplink[k]);
      }
      route.bound = bound;  // alone, a flow takes its route's narrowest link whole
      routes.push_back(std::move(route));
    }
  }
  for (std::size_t i = 0; i < routes.size(); ++i) engine.add_link(1.0);  // a transfer's work: seconds alone
  auto model = std::make_unique<FlowShare>();
  model->set_network(std::move(capacity), std::move(routes));
  model->set_comm_share(comm_share);
  engine.set_sharing(std::move(model));
}

}  // namespace ptdsim::sim
