#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/planner/near_ties.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/simulate.hpp"

using namespace ptdsim;
using namespace ptdsim::planner;
using test::degrees_only;

namespace {

// Every number of the report the sweep shows, compared exactly: the sweep must run the very
// same simulation as `ptdsim evaluate`.
void require_same(const core::Report& a, const core::Report& b) {
  CHECK(a.engine == b.engine);
  CHECK(a.step_s == b.step_s);
  CHECK(a.compute_s == b.compute_s);
  CHECK(a.bubble_s == b.bubble_s);
  CHECK(a.optimizer_s == b.optimizer_s);
  CHECK(a.peak_bytes == b.peak_bytes);
  CHECK(a.fits == b.fits);
  CHECK(a.tokens_per_s == b.tokens_per_s);
  CHECK(a.mfu == b.mfu);
  CHECK(a.hfu == b.hfu);
  CHECK(a.model_flops_per_step == b.model_flops_per_step);
  CHECK(a.hardware_flops_per_step == b.hardware_flops_per_step);
  CHECK(a.bounded_by == b.bounded_by);
  for (int k = 0; k < core::kCommBucketCount; ++k) {
    CHECK(a.comm[k].bytes == b.comm[k].bytes);
    CHECK(a.comm[k].exposed_s == b.comm[k].exposed_s);
  }
  REQUIRE(a.stages.size() == b.stages.size());
  for (std::size_t i = 0; i < a.stages.size(); ++i) CHECK(a.stages[i].total() == b.stages[i].total());
}

// What a ranking prints, as text, to compare runs.
std::string ranking(const SweepResult& r) {
  std::ostringstream o;
  o.precision(17);
  o << r.evaluated << " " << r.feasible << " " << r.simulated << " " << r.pruned << "\n";
  for (const auto& [reason, n] : r.rejected) o << reason << "=" << n << "\n";
  for (const auto& x : r.results)
    o << label(x.candidate) << " " << x.report.step_s << " " << x.report.peak_bytes << " "
      << x.slower_because << "\n";
  return o.str();
}

core::Scenario scenario_of(const core::Scenario& base, const Candidate& c) {
  core::Scenario s = base;
  apply(c, s);
  return s;
}

}  // namespace

TEST_CASE("planner: rejections are counted by core::check's first reason", "[planner][sweep]") {
  auto s = test::tiny(4);
  s.training.global_batch = 2;
  const Space space(s, degrees_only());
  SweepOptions o;
  o.threads = 2;
  // 34 candidates (space_test). divisibility: pp4 with vpp 2 or 3 is 8 or 12 virtual stages for 4
  // layers (pp2 vpp3 has 6: the embedding and the loss take the ends' slots) -> 2. batch: dp 4 does
  // not divide global batch 2 (tp1 pp1 cp1) = 1; pp2 vpp 2 or 3 with dp 2 has m = 1, not a multiple
  // of pp = 2 -> 2; 3 in all.
  SECTION("everything else fits") {
    const auto r = sweep(s, space, o);
    CHECK(r.evaluated == 34);
    CHECK(r.rejected.at("divisibility") == 2);
    CHECK(r.rejected.at("batch") == 3);
    CHECK(r.rejected.count("memory") == 0);
    // each reason's first rejected candidate in enumeration order, with check()'s key and message
    REQUIRE(r.rejected_example.size() == 2);
    CHECK(r.rejected_example.at("divisibility").key == "parallel.vpp");
    CHECK(r.rejected_example.at("batch").key == "training.global_batch");
    CHECK(r.rejected_example.at("batch").message.find("global_batch 2") != std::string::npos);
    CHECK(r.feasible == 29);
    CHECK(r.simulated + r.pruned == r.feasible);
  }
  SECTION("a GPU with no memory rejects the remaining 29 as memory") {
    s.hardware.gpu.memory_bytes = 1;
    const auto r = sweep(s, Space(s, degrees_only()), o);
    CHECK(r.rejected.at("memory") == 29);
    CHECK(r.rejected_example.count("memory") == 0);  // not check()'s: the report gives the peaks
    CHECK(r.feasible == 0);
    CHECK(r.results.empty());
  }
}

TEST_CASE("planner: layouts the named framework cannot express are not offered", "[planner][sweep]") {
  auto s = test::tiny(4);  // 4 layers, global batch 16
  const Space space(s, degrees_only());
  SweepOptions o;
  o.threads = 2;
  const auto plain = sweep(s, space, o);
  // 34 candidates (space_test); pp4 with vpp 2 or 3 -> divisibility (2); dp 4 divides 16, and every
  // interleaved m (16 or 8) is a multiple of pp 2: nothing else is rejected.
  CHECK(plain.rejected.at("divisibility") == 2);
  CHECK(plain.rejected.count("framework") == 0);
  // pp2 vpp3 splits 4 layers as 1, 1, 1, 1, 1, 1 with the embedding and the loss in the ends' slots:
  // Megatron-Core r0.8's --num-layers-per-virtual-pipeline-stage cannot say so. The pp2 layouts are
  // [pp2 dp2], [tp2 pp2] with sp off and on, [pp2 cp2]: 4 of them with vpp 3. pp2 vpp2 (1 layer per
  // virtual stage) stays, its p2p overlapped (training.overlap.pp, the fixture's default).
  // Megatron has no gpipe and no zb-h1 schedule: each of the 4 pp2 layouts and the one pp4 layout
  // (tp1 cp1 dp1) loses those 2, which all fit otherwise: 5 * 2 = 10 more.
  s.training.framework = "megatron-core-0.8";
  const auto megatron = sweep(s, space, o);
  CHECK(megatron.rejected.at("framework") == 4 + 10);
  CHECK(megatron.feasible == plain.feasible - 14);
  for (const auto& x : megatron.results) {
    CHECK_FALSE((x.candidate.pp == 2 && x.candidate.vpp == 3));
    CHECK((x.candidate.schedule == core::Schedule::one_f_one_b || x.candidate.schedule == core::Schedule::interleaved));
  }
  // without the p2p overlap, pp 2 interleaves not at all: the 4 vpp 2 layouts go too
  s.training.overlap.pp = false;
  CHECK(sweep(s, Space(s, degrees_only()), o).rejected.at("framework") == 8 + 10);  // the space reads the switch
}

TEST_CASE("planner: the ranking does not depend on the thread count", "[planner][sweep]") {
  const auto s = test::tiny(8);
  SearchSpace b;
  b.max_micro_batch = 2;
  const Space space(s, b);
  std::vector<std::string> rankings, rows;
  for (int threads : {1, 2, 3}) {
    SweepOptions o;
    o.threads = threads;
    o.top = 7;
    std::string csv;
    o.on_row = [&](const Row& r) {
      csv += std::to_string(r.candidate.index) + " " + r.status + " " + std::to_string(r.report.step_s) + "\n";
    };
    rankings.push_back(ranking(sweep(s, space, o)));
    rows.push_back(csv);
  }
  CHECK(rankings[0] == rankings[1]);
  CHECK(rankings[0] == rankings[2]);
  CHECK(rows[0] == rows[1]);
  CHECK(rows[0] == rows[2]);
  CHECK(!rows[0].empty());
}

TEST_CASE("planner: pruning by the lower bound keeps the exhaustive top K", "[planner][sweep]") {
  auto base = test::tiny(8);
  // with the cost of scale on, the keys carry its floor (scale_wait_floor) and the steps the wait
  const bool jitter = GENERATE(false, true);
  if (jitter) base.hardware.jitter = core::JitterSpec{0.05, 0.2};
  INFO("jitter " << jitter);
  SearchSpace b;
  b.max_micro_batch = 2;
  const Space space(base, b);
  // Brute force: simulate every feasible candidate, rank by (step, peak, index).
  struct Done {
    std::uint64_t index;
    double step, peak, bound;
  };
  std::vector<Done> all;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    auto c = space.at(i);
    if (!c) continue;
    const auto s = scenario_of(base, *c);
    if (!core::check(s).empty()) continue;
    const auto a = analytic::evaluate(s);
    if (!a.fits) continue;
    const auto r = sim::simulate(s);
    // The bound must hold for every candidate, or pruning could drop a winner.
    const auto plan = analytic::plan_step(s);
    const double floor = scale_wait_floor(s, busiest_stage_compute(plan));
    CHECK((floor > 0) == jitter);
    CHECK(step_lower_bound(plan) + floor <= r.step_s * (1 + 1e-12));
    CHECK(schedule_lower_bound(plan) + floor <= r.step_s * (1 + 1e-12));
    all.push_back({i, r.step_s, r.peak_bytes, step_lower_bound(plan) + floor});
  }
  std::sort(all.begin(), all.end(), [](const Done& x, const Done& y) {
    if (x.step != y.step) return x.step < y.step;
    if (x.peak != y.peak) return x.peak < y.peak;
    return x.index < y.index;
  });
  SweepOptions o;
  o.threads = 2;
  o.top = 10;
  const auto r = sweep(base, space, o);
  REQUIRE(all.size() == r.feasible);
  // the exhaustive order's first ten rows, near-ties not counted (near_ties.hpp)
  std::vector<Candidate> candidates;
  std::vector<const Candidate*> layouts;
  std::vector<double> steps;
  for (const auto& d : all) candidates.push_back(*space.at(d.index)), steps.push_back(d.step);
  for (const auto& c : candidates) layouts.push_back(&c);
  std::vector<int> tie_of;
  fold_near_ties(layouts, steps, tie_of);
  std::vector<std::uint64_t> rows, ranked_rows;
  std::size_t tenth = 0;
  for (std::size_t i = 0; i < all.size() && rows.size() < 10; ++i)
    if (tie_of[i] < 0) rows.push_back(all[i].index), tenth = i;
  for (const auto& x : r.results)
    if (x.near_tie_of < 0) ranked_rows.push_back(x.candidate.index);
  CHECK(ranked_rows == rows);
  CHECK(r.pruned > 0);  // the bound did some work on this space
  // and the schedule bound spared simulations the plan key could not
  const double kth = all[tenth].step;
  const auto keyed_in = std::count_if(all.begin(), all.end(), [&](const Done& d) { return d.bound <= kth; });
  CHECK(r.simulated < static_cast<std::uint64_t>(keyed_in));
}

TEST_CASE("planner: the cost of scale's floor on the keys, by hand", "[planner][bound]") {
  // Blom's expected maximum of 8 standard normals, Phi^-1((8 - 0.375) / 8.25) = 1.43420, times the
  // compute spread 5% of 2 s; the link spread has no exposed communication to act on
  auto s = test::tiny(8);
  CHECK(scale_wait_floor(s, 2.0) == 0.0);  // no jitter: no wait
  s.hardware.jitter = core::JitterSpec{0.05, 0.2};
  CHECK(scale_wait_floor(s, 2.0) == Approx(1.43420 * 0.05 * 2.0).epsilon(1e-5));
  s.gpus = 1;
  CHECK(scale_wait_floor(s, 2.0) == 0.0);  // one GPU waits for no other
}

TEST_CASE("planner: a ranked result is what simulate gives for that layout", "[planner][sweep]") {
  const auto base = test::tiny(8);
  SearchSpace b;
  b.max_micro_batch = 2;
  const Space space(base, b);
  SweepOptions o;
  o.threads = 2;
  o.top = 5;
  std::vector<std::pair<Candidate, core::Report>> simulated_rows;
  o.on_row = [&](const Row& r) {
    if (std::string(r.status) == "simulated") simulated_rows.emplace_back(r.candidate, r.report);
  };
  const auto res = sweep(base, space, o);
  for (const auto& x : res.results) {
    INFO(label(x.candidate));
    require_same(x.report, sim::simulate(scenario_of(base, x.candidate)));
    CHECK(x.report.scenario.parallel.tp == x.candidate.tp);
    CHECK(x.report.scenario.training.micro_batch == x.candidate.micro_batch);
  }
  // and on random simulated candidates outside the top K (seeded: the same picks every run)
  REQUIRE(!simulated_rows.empty());
  std::mt19937 rng(20240601);
  for (int k = 0; k < 8; ++k) {
    const auto& [c, report] = simulated_rows[rng() % simulated_rows.size()];
    INFO(label(c));
    require_same(report, sim::simulate(scenario_of(base, c)));
  }
}

TEST_CASE("planner: a fixed dimension holds in every result", "[planner][sweep]") {
  auto base = test::tiny(8);
  base.parallel.zero = 2;
  SearchSpace b;
  b.max_micro_batch = 1;
  pin_dimensions(base, {"parallel.zero"}, b);
  SweepOptions o;
  o.threads = 2;
  o.top = 20;
  const auto r = sweep(base, Space(base, b), o);
  REQUIRE(!r.results.empty());
  for (const auto& x : r.results) CHECK(x.report.scenario.parallel.zero == 2);
}

TEST_CASE("planner: objectives order the results", "[planner][sweep]") {
  const auto base = test::tiny(8);
  SearchSpace b;
  b.max_micro_batch = 2;
  const Space space(base, b);
  SweepOptions o;
  o.threads = 2;
  o.top = 6;
  SECTION("time: fastest first, the later ones explained") {
    const auto r = sweep(base, space, o);
    for (std::size_t i = 1; i < r.results.size(); ++i) {
      CHECK(r.results[i - 1].report.step_s <= r.results[i].report.step_s);
      if (r.results[i].report.step_s > r.results[0].report.step_s) CHECK(!r.results[i].slower_because.empty());
    }
  }
  SECTION("memory: smallest peak first, and it is the smallest of all feasible candidates") {
    o.objective = Objective::memory;
    double smallest = 1e300;
    o.on_row = [&](const Row& row) {
      if (row.report.fits) smallest = std::min(smallest, row.report.peak_bytes);
    };
    const auto r = sweep(base, space, o);
    REQUIRE(!r.results.empty());
    CHECK(r.results[0].report.peak_bytes == smallest);
    for (std::size_t i = 1; i < r.results.size(); ++i)
      CHECK(r.results[i - 1].report.peak_bytes <= r.results[i].report.peak_bytes);
  }
  SECTION("mfu ranks as time does: the model FLOPs are the same for every layout") {
    o.objective = Objective::mfu;
    const auto by_mfu = sweep(base, space, o);
    o.objective = Objective::time;
    const auto by_time = sweep(base, space, o);
    REQUIRE(by_mfu.results.size() == by_time.results.size());
    for (std::size_t i = 0; i < by_mfu.results.size(); ++i)
      CHECK(by_mfu.results[i].report.step_s == by_time.results[i].report.step_s);
  }
}

TEST_CASE("planner: the lower bound never exceeds the simulated step", "[planner][bound]") {
  // Two nodes of 8 GPUs, so groups cross the network; every overlap switch both ways, without and
  // with SM contention; then each overlap switch again under a collective that would take 95% of
  // the SMs, past the scheduler's floor on the compute rate.
  SearchSpace b;
  b.max_micro_batch = 2;
  for (int variant = 0; variant < 12; ++variant) {
    auto s0 = test::two_nodes(variant < 8 ? variant : variant - 4);
    if (variant >= 8) s0.hardware.gpu.comm_sms = 95;
    // the cost of scale on: the steps end with the wait, which the sweep's keys floor (the link's
    // spread 0 as on every shipped fabric: its wait on exposed communication is beyond the floor,
    // which the non-vacuous check below would then measure on communication-bound layouts)
    s0.hardware.jitter = core::JitterSpec{0.03, 0.0};
    const Space space(s0, b);
    int checked = 0;
    // every 7th index: a spread over all dimensions, a few hundred simulations
    for (std::uint64_t i = 0; i < space.size(); i += 7) {
      auto c = space.at(i);
      if (!c) continue;
      const auto s = scenario_of(s0, *c);
      if (!core::check(s).empty()) continue;
      const auto a = analytic::evaluate(s);
      const auto plan = analytic::plan_step(s);
      const double floor = scale_wait_floor(s, busiest_stage_compute(plan));
      REQUIRE(floor > 0);
      const double bound = step_lower_bound(plan) + floor;
      const double graph = schedule_lower_bound(plan) + floor;
      const double step = sim::simulate(s).step_s;
      INFO(label(*c) << " variant " << variant << " bound " << bound << " schedule bound " << graph
                     << " step " << step);
      CHECK(bound <= step * (1 + 1e-12));
      CHECK(bound > 0.5 * step);  // and not vacuous
      CHECK(graph >= bound);
      CHECK(graph <= step * (1 + 1e-12));
      ++checked;
    }
    CHECK(checked > 50);
  }
}

TEST_CASE("planner: explicit stage layers do not leak between candidates", "[planner][sweep]") {
  // The base splits 8 layers unevenly over pp 2; candidates with pp 2 keep that split, the others
  // drop it. A worker that saw a pp 4 candidate first must still give pp 2 the uneven split.
  auto base = test::tiny(8);
  base.model.layers = 8;
  base.parallel.pp = 2;
  base.parallel.stage_layers = {5, 3};
  SearchSpace b;
  b.max_micro_batch = 1;
  b.zero = {1};
  b.recompute = {core::Recompute::selective};
  const Space space(base, b);
  std::vector<std::string> outs;
  for (int threads : {1, 3}) {
    SweepOptions o;
    o.threads = threads;
    o.top = 40;
    std::string rows;
    o.on_row = [&](const Row& r) {
      rows += label(r.candidate) + " " + std::to_string(r.report.stages.empty() ? 0 : r.report.stages[0].layers) + "\n";
      if (r.candidate.pp == 2 && r.candidate.vpp == 1) CHECK(r.report.stages.at(0).layers == 5);
    };
    sweep(base, space, o);
    outs.push_back(rows);
  }
  CHECK(outs[0] == outs[1]);
}

TEST_CASE("planner: with CPU offload the lower bounds still never exceed the simulated step", "[planner][bound][offload]") {
  // the two-node spaces with --search offload, over a host slow enough that the offload phase
  // matters (8 GB/s link, 50 GB/s CPU memory: docs/analytic.md "CPU offload")
  SearchSpace b;
  b.max_micro_batch = 2;
  b.zero = {};
  REQUIRE(search_switches({"offload"}, b).empty());
  for (int variant : {0, 5}) {
    auto s0 = test::two_nodes(variant);
    s0.hardware.host.link_Bps = 8e9;
    s0.hardware.host.memory_bytes = 512 * core::kGiB;
    s0.hardware.host.memory_Bps = 50e9;
    s0.hardware.jitter = core::JitterSpec{0.03, 0.1};
    const Space space(s0, b);
    REQUIRE(space.offload().size() == 3);
    int checked = 0, offloaded = 0;
    for (std::uint64_t i = 0; i < space.size(); i += 11) {
      auto c = space.at(i);
      if (!c) continue;
      const auto s = scenario_of(s0, *c);
      if (!core::check(s).empty()) continue;
      const auto plan = analytic::plan_step(s);
      const double floor = scale_wait_floor(s, busiest_stage_compute(plan));
      const double bound = step_lower_bound(plan) + floor, graph = schedule_lower_bound(plan) + floor;
      const double step = sim::simulate(s).step_s;
      INFO(label(*c) << " variant " << variant << " bound " << bound << " schedule bound " << graph << " step " << step);
      CHECK(bound <= step * (1 + 1e-12));
      CHECK(graph >= bound);
      CHECK(graph <= step * (1 + 1e-12));
      const WorkBound w = work_lower_bound(analytic::Step(s));
      CHECK(w.bound_s + scale_wait_floor(s, w.busiest_s) <= bound * (1 + 1e-12));
      ++checked;
      if (c->offload != core::Offload::none) ++offloaded;
    }
    CHECK(offloaded > 20);
    CHECK(checked > offloaded);
  }
}
