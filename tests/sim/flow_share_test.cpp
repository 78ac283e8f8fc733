// Flows across several resources at max-min fair rates (docs/simulator.md "Flows across several
// resources"): progressive filling against hand-worked cases, and through the event kernel.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "ptdsim/sim/flow_share.hpp"
#include "ptdsim/sim/kernel.hpp"

using namespace ptdsim::sim;

namespace {

// One device, four streams (0 computes), a transfer per given (stream, route, work), all ready at 0.
struct Net {
  Kernel k{1, 4, 0};
  std::vector<TaskId> ids;
  FlowShare* model = nullptr;
  Net(std::vector<double> capacity, std::vector<FlowShare::Route> routes) {
    for (std::size_t r = 0; r < routes.size(); ++r) k.add_resource(1.0);  // a route per kernel resource
    auto m = std::make_unique<FlowShare>();
    m->set_network(std::move(capacity), std::move(routes));
    model = m.get();
    k.set_sharing(std::move(m));
  }
  void flow(int stream, int route, double work) { ids.push_back(k.add(k.add_job(Job{0, stream, 0.0, work, route, true}))); }
};

}  // namespace

TEST_CASE("flow share: three flows on two resources get max-min fair rates", "[sim][sharing][flow]") {
  // Resource A of capacity 1 carries flows 1 and 2, resource B of capacity 2 flows 1 and 3.
  // Progressive filling: all three rise together until A is full at 1/2 each (A: 1/2 + 1/2 = 1;
  // B then holds 1/2 of flow 1 and 1/2 of flow 3); flows 1 and 2 freeze, flow 3 rises alone to
  // what B has left, 2 - 1/2 = 3/2. Max-min: no flow can go faster without slowing one as slow.
  FlowShare m;
  m.set_network({1.0, 2.0}, {{10.0, {0, 1}}, {10.0, {0}}, {10.0, {1}}});
  const std::vector<std::int32_t> on{0, 1, 2};
  const auto b = m.fill(on);
  REQUIRE(b.size() == 3);
  CHECK(b[0] == Approx(0.5));
  CHECK(b[1] == Approx(0.5));
  CHECK(b[2] == Approx(1.5));
  // a bound below the fair share caps the flow and frees the rest: flow 2 bounded at 0.2 leaves
  // A's 0.8 to flow 1, and B's 2 - 0.8 = 1.2 to flow 3
  FlowShare capped;
  capped.set_network({1.0, 2.0}, {{10.0, {0, 1}}, {0.2, {0}}, {10.0, {1}}});
  const auto c = capped.fill(on);
  CHECK(c[0] == Approx(0.8));
  CHECK(c[1] == Approx(0.2));
  CHECK(c[2] == Approx(1.2));
  // routes crossing a shared resource form one domain; the others their own
  CHECK(m.domain(0) == m.domain(1));
  CHECK(m.domain(0) == m.domain(2));
}

TEST_CASE("flow share: three flows on two resources through the kernel", "[sim][sharing][flow]") {
  // The same network with each flow's bound its path's narrowest resource (A 1, A 1, B 2), so
  // each moves 1 work unit per second alone; each has 1 unit. Rates together: 0.5/1, 0.5/1 and
  // 1.5/2 = 0.75 units/s: flow 3 ends at 4/3 s. Flows 1 and 2 have 1 - 2/3 = 1/3 left; A still
  // splits them 1/2 each, so they end at 4/3 + (1/3)/(1/2) = 2 s.
  for (bool ff : {false, true}) {
    Net n({1.0, 2.0}, {{1.0, {0, 1}}, {1.0, {0}}, {2.0, {1}}});
    n.k.set_fast_forward(ff);
    n.flow(1, 0, 1.0);
    n.flow(2, 1, 1.0);
    n.flow(3, 2, 1.0);
    n.k.run();
    CHECK(n.k.finish(n.ids[2]) == Approx(4.0 / 3.0));
    CHECK(n.k.finish(n.ids[0]) == Approx(2.0));
    CHECK(n.k.finish(n.ids[1]) == Approx(2.0));
    for (TaskId id : n.ids) CHECK(n.k.alone_s(id) == Approx(1.0));
  }
}

TEST_CASE("flow share: two collectives on one rail against a hand computation", "[sim][sharing][flow]") {
  // A GPU's NIC (rail) of 50 GB/s under a fat tree whose leaf-to-spine uplinks are 2:1
  // oversubscribed: the spine tier gives each representative GPU 50 / 2 = 25 GB/s (docs/
  // simulator.md "Flows across several resources"). A DP reduce-scatter crosses the spine (its
  // peers are under other leaves): alone 25 GB/s. A pipeline send goes to the next stage under the
  // same leaf: NIC only, alone 50 GB/s. Each has 1 s of work alone.
  // Together, filling: both rise to 25 GB/s; the NIC is then full (25 + 25 = 50) and the spine too
  // (25): DP keeps its alone rate (1 unit/s), the send gets 25/50 (1/2 unit/s). DP ends at 1 s;
  // the send has done 1/2 and moves the other 1/2 alone: 1.5 s. One fair link (FairShare) would
  // halve both: 2 s each.
  const double nic = 50e9, spine = 25e9;
  for (bool ff : {false, true}) {
    Net n({nic, spine}, {{spine, {0, 1}}, {nic, {0}}});
    n.k.set_fast_forward(ff);
    n.flow(1, 0, 1.0);  // DP
    n.flow(2, 1, 1.0);  // PP send
    n.k.run();
    CHECK(n.k.finish(n.ids[0]) == Approx(1.0));
    CHECK(n.k.finish(n.ids[1]) == Approx(1.5));
  }
  // the same pair on one link under FairShare
  Kernel fair(1, 4, 0);
  const auto link = fair.add_resource(1.0);
  const TaskId dp = fair.add(fair.add_job(Job{0, 1, 0.0, 1.0, link, true}));
  const TaskId pp = fair.add(fair.add_job(Job{0, 2, 0.0, 1.0, link, true}));
  fair.run();
  CHECK(fair.finish(dp) == Approx(2.0));
  CHECK(fair.finish(pp) == Approx(2.0));
  // Two collectives that cross the same resources (a rail-optimized fabric keeps both on the
  // rail: NIC only, 50 GB/s alone), DP 1 s and the send 0.5 s of work: max-min gives 25 GB/s each,
  // as a fair link does. The send ends at 0.5 / 0.5 = 1 s, DP has 1/2 left and ends at 1.5 s.
  Net same({nic}, {{nic, {0}}, {nic, {0}}});
  same.flow(1, 0, 1.0);
  same.flow(2, 1, 0.5);
  same.k.run();
  CHECK(same.k.finish(same.ids[1]) == Approx(1.0));
  CHECK(same.k.finish(same.ids[0]) == Approx(1.5));
}

TEST_CASE("flow share: a flow alone moves at its narrowest resource, and bad networks are refused", "[sim][sharing][flow]") {
  // bound 50 over a resource of 25: alone at 25/50 of its bound, 1 unit in 2 s
  Net n({25.0}, {{50.0, {0}}});
  n.flow(1, 0, 1.0);
  n.k.run();
  CHECK(n.k.finish(n.ids[0]) == Approx(2.0));
  FlowShare m;
  CHECK_THROWS_AS(m.set_network({0.0}, {}), std::invalid_argument);
  CHECK_THROWS_AS(m.set_network({1.0}, {{1.0, {1}}}), std::invalid_argument);
  CHECK_THROWS_AS(m.set_network({1.0}, {{0.0, {0}}}), std::invalid_argument);
  // the kernel's resources must be the network's routes
  Kernel k(1, 2, 0);
  k.add_resource(1.0);
  k.add_resource(1.0);
  auto wrong = std::make_unique<FlowShare>();
  wrong->set_network({1.0}, {{1.0, {0}}});
  k.set_sharing(std::move(wrong));
  k.add(k.add_job(Job{0, 1, 0.0, 1.0, 0, true}));
  CHECK_THROWS_AS(k.run(), std::invalid_argument);
}

#include "ptdsim/sim/engine.hpp"
#include "ptdsim/sim/network.hpp"

TEST_CASE("flow share: a step's links follow the fabric's tiers", "[sim][sharing][flow]") {
  // Leaf switches 2:1 oversubscribed, a spine above: per GPU, the uplinks above the leaf carry
  // port bandwidth x 8 NICs / 8 GPUs / 2 = half the NIC share.
  ptdsim::core::HardwareSpec hw;
  hw.gpus_per_node = 8;
  hw.network.bandwidth_Bps = 50e9;
  hw.fabric.nics_per_node = 8;
  hw.fabric.tiers = {{"leaf", 64, 50e9, 0.3e-6, 2.0, 0}, {"spine", 64, 50e9, 0.3e-6, 1.0, 0}};
  const Fabric f = fabric_of(hw);
  REQUIRE(f.uplink.size() == 1);
  CHECK(f.uplink[0] == Approx(0.5));
  CHECK(f.blocking());
  // non-blocking: the NIC is every inter-node route's narrowest link, one link per rank as before
  hw.fabric.tiers[0].oversubscription = 1;
  CHECK(!fabric_of(hw).blocking());
  hw.fabric.tiers[0].oversubscription = 2;

  // One rank: a DP reduce-scatter whose group spans leaves (top 1) and a pipeline send under one
  // leaf (top 0), each 1 s alone. As the hand case above: DP keeps its rate (its bottleneck, the
  // uplink, is its alone rate), the send gets the NIC's other half: DP ends at 1 s, the send at 1.5 s.
  Engine e(1);
  StepLinks links;
  links.build(f, 1, e, 0.0);
  ptdsim::analytic::Group dp, pp, tp;
  dp.scope = pp.scope = ptdsim::core::Scope::inter;
  dp.span.top = 1;
  pp.span.top = 0;
  tp.scope = ptdsim::core::Scope::intra;
  CHECK(links.link(0, tp) == 0);
  CHECK(links.link(0, pp) == 1);
  CHECK(links.link(0, dp) == 2);
  TaskSpec a, b;
  a.kind = task_kind(ptdsim::core::CommKind::dp_reduce);
  a.stream = StreamKind::dp;
  a.work = 1.0;
  a.link = links.link(0, dp);
  b.kind = task_kind(ptdsim::core::CommKind::p2p);
  b.stream = StreamKind::pp_send;
  b.work = 1.0;
  b.link = links.link(0, pp);
  const TaskId ta = e.add(a), tb = e.add(b);
  e.run();
  CHECK(e.finish(ta) == Approx(1.0));
  CHECK(e.finish(tb) == Approx(1.5));
}

#include "ptdsim/analytic/step.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "../common/scenarios.hpp"

TEST_CASE("flow share: a whole step on a blocking fabric, walked as the loop runs it", "[sim][sharing][flow][walk]") {
  // GPT-3 175B on 1024 A100s (pp 16 across nodes, dp 8) on a fabric whose leaf and spine are 2:1:
  // its DP groups cross the spine, its pipeline hops stay lower, so their transfers take routes
  // of different bounds through one NIC and the step runs under FlowShare.
  auto s = ptdsim::testing::gpt3_1024();
  s.hardware.fabric.nics_per_node = 8;
  s.hardware.fabric.tiers = {{"leaf", 40, 25e9, 0.3e-6, 2.0, 0},
                             {"spine", 40, 25e9, 0.3e-6, 2.0, 0},
                             {"core", 40, 25e9, 0.3e-6, 1.0, 0}};
  const ptdsim::analytic::Step step(s);
  StepGraph loop, walks;
  loop.fabric = walks.fabric = fabric_of(s.hardware);
  REQUIRE(loop.fabric.blocking());
  build_step(step.plan, loop);
  build_step(step.plan, walks);
  loop.engine.set_walks(false);
  loop.engine.run();
  walks.engine.run();
  REQUIRE(dynamic_cast<const FlowShare*>(&walks.engine.sharing()) != nullptr);
  CHECK(walks.engine.makespan() == loop.engine.makespan());
  CHECK(walks.engine.events_processed() == loop.engine.events_processed());
  for (TaskId t = 0; t < static_cast<TaskId>(loop.engine.size()); ++t) {
    REQUIRE(walks.engine.start(t) == loop.engine.start(t));
    REQUIRE(walks.engine.finish(t) == loop.engine.finish(t));
  }
  CHECK(walks.engine.walked_tasks() > 0);
  // a flow never moves faster shared than alone: no transfer ends before its start plus its time alone
  for (TaskId t = 0; t < static_cast<TaskId>(loop.engine.size()); ++t)
    CHECK(loop.engine.finish(t) >= loop.engine.start(t) + loop.engine.alone_s(t) * (1 - 1e-12));
}
