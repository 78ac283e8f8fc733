// The fast-forward's walks (docs/simulator.md "Fast-forward") must leave every result of a run as the event
// loop alone finds it: random graphs full of ties, shared links and SM contention, run both ways, compared bit for bit.
#include <algorithm>
#include <array>
#include <memory>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "fixed_rate.hpp"
#include "ptdsim/sim/flow_share.hpp"
#include "ptdsim/sim/engine.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "../common/scenarios.hpp"
#include "ptdsim/analytic/plan.hpp"

using namespace ptdsim::sim;

namespace {

struct Drawn {
  int ranks = 1;
  double share = 0;
  std::vector<double> links;
  std::vector<TaskSpec> tasks;                   // in insertion order
  std::vector<std::pair<TaskId, TaskId>> edges;  // insertion ids
};

// A graph with streams on up to three ranks, links shared by streams and by ranks,
// latencies, empty tasks, and tasks added rank by rank while dependencies run both ways between
// ranks (as the step builder adds them).
Drawn draw(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  Drawn d;
  d.ranks = 1 + pick(3);
  d.share = std::array<double, 3>{0.0, 0.15, 0.5}[static_cast<std::size_t>(pick(3))];  // 0.5: compute ends land on the grid
  // Times from a continuum (long walks), or from a few values, so that ends coincide and
  // transfers meet at an instant: in halves (sums exact) or in tenths with capacity 3 (sums round,
  // so a transfer's work left at the instant it "ends" can be a rounding above zero, and the
  // order of two events at that instant shows).
  const int grid = pick(3);  // 0: a continuum, 1: halves, 2: tenths
  std::uniform_real_distribution<double> any(0.05, 1.0);
  auto time = [&](int values) { return grid == 0 ? any(rng) : (grid == 1 ? 0.5 : 0.1) * pick(values); };
  const int nlinks = d.ranks * 2 + pick(2);
  for (int i = 0; i < nlinks; ++i) d.links.push_back(pick(2) ? 1.0 : grid == 2 ? 3.0 : 2.0);
  const StreamKind streams[] = {StreamKind::compute, StreamKind::tp, StreamKind::dp, StreamKind::pp_send,
                                StreamKind::dp_gather};
  // half the draws have collectives, the others compute and pipeline sends only (a walk starts
  // only while no collective runs)
  const int kinds = pick(2) ? 5 : 2;
  const int n = 80 + pick(220);
  // tasks in an order every dependency and stream follows (`order`), added rank by rank
  std::vector<TaskSpec> order(n);
  for (auto& t : order) {
    t.rank = pick(d.ranks);
    t.stream = kinds == 5 ? streams[pick(5)] : streams[pick(2) ? 0 : 3];
    if (t.stream == StreamKind::compute) {
      t.kind = TaskKind::forward;
      t.duration_s = time(6);
    } else {
      t.kind = task_kind(t.stream == StreamKind::pp_send ? ptdsim::core::CommKind::p2p : ptdsim::core::CommKind::dp_reduce);
      t.duration_s = pick(3) == 0 ? (grid == 1 ? 0.25 : 0.1) + time(2) : 0.0;
      t.work = pick(5) == 0 ? 0.0 : 0.5 + time(4);
      t.link = pick(4) == 0 ? nlinks - 1 : 2 * t.rank + pick(2);
      if (t.link >= nlinks) t.link = nlinks - 1;
      if (t.work == 0) t.link = -1;
    }
  }
  std::vector<int> by_rank(n);
  for (int i = 0; i < n; ++i) by_rank[i] = i;
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](int a, int b) { return order[a].rank < order[b].rank; });
  std::vector<TaskId> id(n);
  for (int k = 0; k < n; ++k) {
    id[by_rank[k]] = k;
    d.tasks.push_back(order[by_rank[k]]);
  }
  for (int to = 1; to < n; ++to) {
    const int deps = pick(3);
    for (int k = 0; k < deps; ++k) {
      const int from = std::max(0, to - 1 - pick(12));
      if (from != to) d.edges.emplace_back(id[from], id[to]);
    }
  }
  return d;
}

void build(const Drawn& d, Engine& e) {
  e = Engine(d.ranks);
  if (d.share > 0) e.set_comm_share(d.share);
  for (double c : d.links) e.add_link(c);
  for (const auto& t : d.tasks) e.add(t);
  for (const auto& [from, to] : d.edges) e.depend(from, to);
}

void same_run(const Engine& a, const Engine& b) {
  REQUIRE(a.size() == b.size());
  CHECK(a.makespan() == b.makespan());
  CHECK(a.events_processed() == b.events_processed());
  for (TaskId t = 0; t < static_cast<TaskId>(a.size()); ++t) {
    INFO("task " << t);
    REQUIRE(a.state(t) == TaskState::done);
    REQUIRE(b.state(t) == TaskState::done);
    REQUIRE(a.start(t) == b.start(t));
    REQUIRE(a.finish(t) == b.finish(t));
    REQUIRE(a.binding(t) == b.binding(t));
  }
  CHECK(a.critical_path() == b.critical_path());
}

}  // namespace

TEST_CASE("sim: walks leave every start, end and binding as the event loop alone finds them", "[sim][walk]") {
  int walked_runs = 0, cut_runs = 0;
  std::size_t walked = 0, tasks = 0;
  for (std::uint32_t seed = 1; seed <= 6000; ++seed) {
    INFO("seed " << seed);
    const Drawn d = draw(seed);
    Engine loop, walks;
    build(d, loop);
    build(d, walks);
    loop.set_walks(false);
    bool threw_loop = false, threw_walks = false;
    try {
      loop.run();
    } catch (const std::logic_error&) {
      threw_loop = true;
    }
    try {
      walks.run();
    } catch (const std::logic_error&) {
      threw_walks = true;
    }
    REQUIRE(threw_loop == threw_walks);
    if (threw_loop) continue;
    CHECK(loop.walked_tasks() == 0);
    same_run(loop, walks);
    if (seed % 10 == 0) {  // a second run of the same engine starts afresh
      walks.run();
      same_run(loop, walks);
    }
    walked += walks.walked_tasks();
    tasks += walks.size();
    if (walks.walked_tasks() > 0) ++walked_runs;
    if (walks.walked_tasks() > 0 && walks.walked_tasks() < walks.size()) ++cut_runs;
  }
  // the draws exercise both: runs the walks finish, and runs they hand back to the loop at a cut
  CHECK(walked_runs > 3000);
  CHECK(cut_runs > 1000);
  CHECK(walked > tasks / 10);
  WARN("walked " << walked << " of " << tasks << " tasks; runs walked " << walked_runs << ", cut " << cut_runs);
}

TEST_CASE("sim: under a second sharing model the walks leave every result as the loop finds it", "[sim][walk][sharing]") {
  using ptdsim::sim_test::FixedRate;
  std::size_t walked = 0;
  for (std::uint32_t seed = 1; seed <= 1000; ++seed) {
    INFO("seed " << seed);
    const Drawn d = draw(seed);
    Engine loop, walks, never;
    build(d, loop);
    build(d, walks);
    build(d, never);
    loop.set_sharing(std::make_unique<FixedRate>());
    walks.set_sharing(std::make_unique<FixedRate>());
    never.set_sharing(std::make_unique<FixedRate>(false));  // not exact: the kernel must not walk
    loop.set_walks(false);
    bool threw = false;
    try {
      loop.run();
    } catch (const std::logic_error&) {
      threw = true;
    }
    if (threw) {
      CHECK_THROWS_AS(walks.run(), std::logic_error);
      continue;
    }
    walks.run();
    never.run();
    same_run(loop, walks);
    same_run(loop, never);
    CHECK(never.walked_tasks() == 0);
    walked += walks.walked_tasks();
  }
  CHECK(walked > 0);
}

// The drawn links as routes of a network: each route crosses its own resource, and about a third
// of them also a shared "tier" (one of two), so routes of different links meet there, with bounds
// above or below the tier's capacity (docs/simulator.md "Flows across several resources").
std::unique_ptr<FlowShare> drawn_network(const Drawn& d, std::uint32_t seed) {
  std::mt19937 rng(seed * 7919u);
  std::vector<double> cap;
  std::vector<FlowShare::Route> routes;
  const double tier[2] = {1.5, 0.75};
  cap.push_back(tier[0]);
  cap.push_back(tier[1]);
  for (double c : d.links) {
    FlowShare::Route r;
    r.bound = c;
    cap.push_back(c);
    r.through.push_back(static_cast<std::int32_t>(cap.size() - 1));
    if (rng() % 3 == 0) r.through.push_back(static_cast<std::int32_t>(rng() % 2));
    routes.push_back(r);
  }
  auto m = std::make_unique<FlowShare>();
  m->set_network(std::move(cap), std::move(routes));
  if (d.share > 0) m->set_comm_share(d.share);
  return m;
}

TEST_CASE("sim: under max-min flow sharing the walks leave every result as the loop finds it", "[sim][walk][sharing][flow]") {
  std::size_t walked = 0;
  int shared_domains = 0;
  for (std::uint32_t seed = 1; seed <= 1500; ++seed) {
    INFO("seed " << seed);
    const Drawn d = draw(seed);
    Engine loop, walks;
    build(d, loop);
    build(d, walks);
    // the links' capacities stay the kernel's (each route's work units per second alone)
    loop.set_sharing(drawn_network(d, seed));
    walks.set_sharing(drawn_network(d, seed));
    const auto& m = static_cast<const FlowShare&>(walks.sharing());
    for (std::size_t r = 1; r < d.links.size(); ++r)
      if (m.domain(static_cast<std::int32_t>(r)) == m.domain(0)) ++shared_domains;
    loop.set_walks(false);
    bool threw = false;
    try {
      loop.run();
    } catch (const std::logic_error&) {
      threw = true;
    }
    if (threw) {
      CHECK_THROWS_AS(walks.run(), std::logic_error);
      continue;
    }
    walks.run();
    same_run(loop, walks);
    walked += walks.walked_tasks();
  }
  CHECK(shared_domains > 100);  // routes met on a tier in many draws
  CHECK(walked > 0);
}

TEST_CASE("sim: walks on a whole step: the same run, most of it walked", "[sim][walk]") {
  using namespace ptdsim;
  auto both_ways = [](const core::Scenario& s) {
    const auto plan = analytic::plan_step(s);
    StepGraph a = build_step(plan), b = build_step(plan);
    a.engine.set_walks(false);
    a.engine.run();
    b.engine.run();
    same_run(a.engine, b.engine);
    return static_cast<double>(b.engine.walked_tasks()) / static_cast<double>(b.engine.size());
  };
  for (bool contention : {false, true}) {
    core::Scenario s = testing::gpt3_1024();
    if (contention) {
      s.hardware.gpu.sms = 108;
      s.hardware.gpu.comm_sms = 16;
    }
    // after the step's parameter all-gather, a 1F1B step walks until its DP reductions
    CHECK(both_ways(s) > 0.8);
  }
  // a CP exchange beside every segment's compute under SM contention: the loop runs it all
  CHECK(both_ways(testing::gpt3_cp4_contention()) == 0.0);
}
