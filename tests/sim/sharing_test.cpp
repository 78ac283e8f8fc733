// The event kernel over integer devices, streams and resources, with its sharing model swapped:
// the loop is the same, only what a flow gets changes (docs/simulator.md "Sharing models").
#include <catch2/catch.hpp>
#include <memory>

#include "fixed_rate.hpp"
#include "ptdsim/sim/kernel.hpp"

using namespace ptdsim::sim;
using ptdsim::sim_test::FixedRate;

namespace {

// One device with three streams (0 computes); two transfers of 2 units on one resource of
// capacity 1, on streams 1 and 2, both ready at 0; a compute task of 1 s after both.
struct TwoFlows {
  Kernel k{1, 3, 0};
  TaskId a, b, c;
  TwoFlows() {
    const auto r = k.add_resource(1.0);
    a = k.add(k.add_job(Job{0, 1, 0.0, 2.0, r, true}));
    b = k.add(k.add_job(Job{0, 2, 0.0, 2.0, r, true}));
    c = k.add(k.add_job(Job{0, 0, 1.0, 0.0, -1, false}));
    k.depend(a, c);
    k.depend(b, c);
  }
};

}  // namespace

TEST_CASE("sim kernel: the default model shares a resource fairly", "[sim][kernel][sharing]") {
  TwoFlows g;
  g.k.run();
  // each flow at capacity / 2 = 0.5 units/s: 2 units take 4 s; the compute then 4 -> 5
  CHECK(g.k.finish(g.a) == Approx(4.0));
  CHECK(g.k.finish(g.b) == Approx(4.0));
  CHECK(g.k.start(g.c) == Approx(4.0));
  CHECK(g.k.makespan() == Approx(5.0));
}

TEST_CASE("sim kernel: a second sharing model runs in the same loop", "[sim][kernel][sharing]") {
  for (bool fast_forward : {false, true}) {
    INFO("fast-forward " << fast_forward);
    TwoFlows g;
    auto model = std::make_unique<FixedRate>();
    FixedRate* m = model.get();
    g.k.set_sharing(std::move(model));
    g.k.set_fast_forward(fast_forward);
    g.k.run();
    // no contention: each flow moves at the full capacity, 2 units in 2 s; the compute 2 -> 3
    CHECK(g.k.finish(g.a) == Approx(2.0));
    CHECK(g.k.finish(g.b) == Approx(2.0));
    CHECK(g.k.start(g.c) == Approx(2.0));
    CHECK(g.k.makespan() == Approx(3.0));
    // the loop told the model of each flow's start and end (too few tasks here to fast-forward)
    CHECK(m->starts == 2);
    CHECK(m->ends == 2);
    CHECK(g.k.fast_forwarded() == 0);
  }
  // and back to the default: fair shares again
  TwoFlows g;
  g.k.set_sharing(std::make_unique<FixedRate>());
  g.k.set_sharing(nullptr);
  g.k.run();
  CHECK(g.k.makespan() == Approx(5.0));
}

TEST_CASE("sim kernel: a flow waits its latency, then moves at the model's rate", "[sim][kernel][sharing]") {
  Kernel k(2, 2, 0);
  const auto r = k.add_resource(2.0);
  // latency 0.5 s, then 1 unit at 2 units/s: ends at 1.0 s under either model (it is alone)
  const TaskId x = k.add(k.add_job(Job{1, 1, 0.5, 1.0, r, false}));
  k.set_sharing(std::make_unique<FixedRate>());
  k.run();
  CHECK(k.start(x) == 0.0);
  CHECK(k.finish(x) == Approx(1.0));
  CHECK(k.alone_s(x) == Approx(1.0));
}

TEST_CASE("sim kernel: bad devices, streams and resources are rejected", "[sim][kernel]") {
  CHECK_THROWS_AS(Kernel(0, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(Kernel(1, 2, 2), std::invalid_argument);
  Kernel k(1, 2, 0);
  CHECK_THROWS_AS(k.add_resource(0.0), std::invalid_argument);
  CHECK_THROWS_AS(k.add_job(Job{1, 0, 1.0, 0.0, -1, false}), std::invalid_argument);  // no device 1
  CHECK_THROWS_AS(k.add_job(Job{0, 2, 1.0, 0.0, -1, false}), std::invalid_argument);  // no stream 2
  CHECK_THROWS_AS(k.add_job(Job{0, 1, 0.0, 1.0, 0, false}), std::invalid_argument);   // no resource 0
}
