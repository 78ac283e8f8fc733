#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/planner/explain.hpp"
#include "ptdsim/planner/near_ties.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/simulate.hpp"

// Where the sweep ranks the base scenario's own layout (SweepResult::scenario), against the
// exhaustive ranking of a space small enough to simulate every feasible candidate.
using namespace ptdsim;
using namespace ptdsim::planner;

namespace {

struct Simulated {
  Candidate candidate;
  core::Report report;
};

// The space every case here searches: tiny(8), micro-batches 1 and 2 (a few hundred feasible).
core::Scenario tiny8() { return test::tiny(8); }
SearchSpace bounds() {
  SearchSpace b;
  b.max_micro_batch = 2;
  return b;
}

core::Scenario scenario_of(const core::Scenario& base, const Candidate& c) {
  core::Scenario s = base;
  apply(c, s);
  return s;
}

// Every candidate that passes check() and fits by both engines, simulated: the feasible set of
// the exhaustive ranking.
const std::vector<Simulated>& all_feasible() {
  static const std::vector<Simulated> all = [] {
    const auto base = tiny8();
    const Space space(base, bounds());
    std::vector<Simulated> out;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
      const auto c = space.at(i);
      if (!c) continue;
      const auto s = scenario_of(base, *c);
      if (!core::check(s).empty() || !analytic::evaluate(s).fits) continue;
      auto r = sim::simulate(s);
      if (r.fits) out.push_back({*c, std::move(r)});
    }
    return out;
  }();
  return all;
}

// docs/planner.md's total order: the objective, then headroom (or time, for memory), then index.
bool before(Objective o, const Simulated& a, const Simulated& b) {
  const auto& x = a.report;
  const auto& y = b.report;
  const double xs[3] = {o == Objective::memory ? x.peak_bytes : o == Objective::mfu ? -x.mfu : x.step_s,
                        o == Objective::memory ? x.step_s : x.peak_bytes,
                        static_cast<double>(a.candidate.index)};
  const double ys[3] = {o == Objective::memory ? y.peak_bytes : o == Objective::mfu ? -y.mfu : y.step_s,
                        o == Objective::memory ? y.step_s : y.peak_bytes,
                        static_cast<double>(b.candidate.index)};
  return std::lexicographical_compare(xs, xs + 3, ys, ys + 3);
}

std::vector<Simulated> exhaustive(Objective o) {
  auto all = all_feasible();
  std::sort(all.begin(), all.end(), [&](const Simulated& a, const Simulated& b) { return before(o, a, b); });
  return all;
}

SweepResult sweep_from(const Candidate& c, Objective o, int threads, std::uint64_t limit, int top = 3) {
  const auto base = scenario_of(tiny8(), c);
  SweepOptions opt;
  opt.objective = o;
  opt.threads = threads;
  opt.top = top;
  opt.rank_limit = limit;
  return sweep(base, Space(base, bounds()), opt);
}

constexpr std::uint64_t kNoLimit = 1'000'000;

}  // namespace

TEST_CASE("planner: the scenario's layout gets its place in the exhaustive ranking", "[planner][rank]") {
  for (auto o : {Objective::time, Objective::memory, Objective::mfu}) {
    const auto order = exhaustive(o);
    REQUIRE(order.size() > 100);
    // the best, two in the middle, and the last
    for (std::size_t at : {std::size_t{0}, order.size() / 3, order.size() / 2, order.size() - 1}) {
      const auto& me = order[at];
      INFO("objective " << static_cast<int>(o) << " layout " << label(me.candidate) << " place " << at + 1);
      const auto r = sweep_from(me.candidate, o, 2, kNoLimit);
      REQUIRE(r.scenario);
      const auto& sr = *r.scenario;
      REQUIRE(sr.ranked);
      CHECK(sr.why_not.empty());
      CHECK(sr.candidate.index == me.candidate.index);
      CHECK(sr.rank == at + 1);
      CHECK(!sr.rank_is_lower_bound);
      CHECK(sr.unresolved == 0);
      CHECK(sr.report.step_s == me.report.step_s);
      CHECK(sr.report.peak_bytes == me.report.peak_bytes);
      CHECK(sr.report.engine == core::EngineKind::simulation);
      REQUIRE(!r.results.empty());
      if (at == 0) {
        CHECK(r.results.front().candidate.index == me.candidate.index);
        CHECK(sr.slower_because.empty());
      } else if (o == Objective::memory) {
        CHECK(sr.slower_because == why_bigger(r.results.front().report, sr.report));
      } else {
        CHECK(sr.slower_because == why_slower(r.results.front().report, sr.report));
      }
      // far below the top 3, the rank needed simulations of its own
      if (at == order.size() - 1) CHECK(sr.simulated > 0);
    }
  }
}

TEST_CASE("planner: the scenario's rank does not depend on the thread count", "[planner][rank]") {
  const auto order = exhaustive(Objective::time);
  for (std::size_t at : {order.size() / 2, order.size() - 1}) {
    for (std::uint64_t limit : {kNoLimit, std::uint64_t{5}}) {
      std::vector<std::string> seen;
      for (int threads : {1, 2, 3}) {
        const auto r = sweep_from(order[at].candidate, Objective::time, threads, limit);
        REQUIRE(r.scenario);
        const auto& sr = *r.scenario;
        seen.push_back(std::to_string(sr.rank) + " " + std::to_string(sr.rank_is_lower_bound) + " " +
                       std::to_string(sr.unresolved) + " " + std::to_string(sr.simulated) + " " +
                       std::to_string(sr.report.step_s) + " " + sr.slower_because);
      }
      INFO("place " << at + 1 << " limit " << limit);
      CHECK(seen[0] == seen[1]);
      CHECK(seen[0] == seen[2]);
    }
  }
}

TEST_CASE("planner: past rank_limit the rank is a range around the true one", "[planner][rank]") {
  const auto order = exhaustive(Objective::time);
  // the last place, and one in the middle (whose rank the top K's spared candidates decide)
  for (std::size_t at : {order.size() - 1, order.size() / 2}) {
    const auto exact = sweep_from(order[at].candidate, Objective::time, 2, kNoLimit);
    REQUIRE(exact.scenario);
    CHECK(exact.scenario->rank == at + 1);
    const std::uint64_t needed = exact.scenario->simulated;  // simulations for the exact rank
    REQUIRE(needed > 5);
    for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{5}, needed - 1}) {
      INFO("place " << at + 1 << " limit " << limit);
      const auto r = sweep_from(order[at].candidate, Objective::time, 2, limit);
      const auto& sr = *r.scenario;
      REQUIRE(sr.ranked);
      CHECK(sr.rank_is_lower_bound);
      CHECK(sr.simulated == limit);
      // each simulation still needed settles a candidate left open (a schedule bound may settle more)
      CHECK(sr.unresolved >= needed - limit);
      CHECK(sr.rank <= at + 1);
      CHECK(sr.rank + sr.unresolved >= at + 1);
    }
    const auto just_enough = sweep_from(order[at].candidate, Objective::time, 2, needed);
    CHECK(!just_enough.scenario->rank_is_lower_bound);
    CHECK(just_enough.scenario->rank == at + 1);
  }
}

TEST_CASE("planner: ranking the scenario's layout leaves the sweep's own result alone", "[planner][rank]") {
  const auto order = exhaustive(Objective::time);
  const auto base = scenario_of(tiny8(), order.back().candidate);
  const Space space(base, bounds());
  std::vector<std::string> outs;
  for (bool rank : {false, true}) {
    SweepOptions opt;
    opt.threads = 2;
    opt.top = 4;
    opt.rank_scenario = rank;
    std::string text;
    opt.on_row = [&](const Row& row) {
      text += std::to_string(row.candidate.index) + " " + row.status + " " + std::to_string(row.report.step_s) + "\n";
    };
    const auto r = sweep(base, space, opt);
    CHECK(r.scenario.has_value() == rank);
    text += std::to_string(r.feasible) + " " + std::to_string(r.simulated) + " " + std::to_string(r.pruned) + "\n";
    for (const auto& x : r.results) text += label(x.candidate) + " " + x.slower_because + "\n";
    outs.push_back(text);
  }
  CHECK(outs[0] == outs[1]);
}

TEST_CASE("planner: a layout the sweep cannot rank says why", "[planner][rank]") {
  const auto order = exhaustive(Objective::time);
  Candidate tp2 = order.front().candidate;
  for (const auto& x : order)
    if (x.candidate.tp == 2 && x.candidate.pp == 1 && x.candidate.cp == 1) tp2 = x.candidate;
  REQUIRE(tp2.tp == 2);
  auto base = scenario_of(tiny8(), tp2);
  SweepOptions opt;
  opt.threads = 2;
  auto why_not = [&](const core::Scenario& s, const SearchSpace& b) {
    const auto r = sweep(s, Space(s, b), opt);
    REQUIRE(r.scenario);
    CHECK(!r.scenario->ranked);
    CHECK(r.scenario->rank == 0);
    return r.scenario->why_not;
  };

  SECTION("outside a --max-tp bound") {
    auto b = bounds();
    b.max_tp = 1;
    CHECK(why_not(base, b) == "tp 2 is outside the space (tp 1)");
  }
  SECTION("outside a pinned dimension") {
    auto b = bounds();
    b.recompute = {tp2.recompute == core::Recompute::full ? core::Recompute::none : core::Recompute::full};
    CHECK(why_not(base, b).find("recompute") == 0);
  }
  SECTION("--gpus other than the file's") {
    base.gpus = 4;
    CHECK(why_not(base, bounds()) == "its degrees lay out 8 GPUs (tp*pp*cp*dp); the sweep lays out 4");
  }
  SECTION("pp 1 with a schedule the space does not list for it") {
    base.parallel.pp = 1;
    base.parallel.dp = 8 / (base.parallel.tp * base.parallel.cp);
    base.parallel.vpp = 1;
    base.parallel.schedule = core::Schedule::gpipe;
    CHECK(why_not(base, bounds()).find("pp 1 with the gpipe schedule") == 0);
  }
  SECTION("check() fails: 4 layers over pp 4 with vpp 2") {
    base.parallel.tp = 1;
    base.parallel.sequence_parallel = false;
    base.parallel.cp = 1;
    base.parallel.pp = 4;
    base.parallel.dp = 2;
    base.parallel.vpp = 2;
    base.parallel.schedule = core::Schedule::interleaved;
    CHECK(why_not(base, bounds()).find("core::check: ") == 0);
  }
  SECTION("does not fit") {
    // the layout with the largest peak, on GPUs just too small for it
    const auto biggest = std::max_element(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.report.peak_bytes < b.report.peak_bytes;
    });
    base = scenario_of(tiny8(), biggest->candidate);
    base.hardware.gpu.memory_bytes = analytic::evaluate(base).peak_bytes * 0.999;
    const auto w = why_not(base, bounds());
    CHECK(w.find("does not fit: peak ") == 0);
    // the sweep itself still ranks the layouts that do fit
    CHECK(!sweep(base, Space(base, bounds()), opt).results.empty());
  }
  SECTION("switched off") {
    opt.rank_scenario = false;
    CHECK(!sweep(base, Space(base, bounds()), opt).scenario);
  }
}

TEST_CASE("planner: sequence parallel with tp 1 is ranked as the layout without it", "[planner][rank]") {
  const auto order = exhaustive(Objective::time);
  Candidate tp1 = order.front().candidate;
  for (const auto& x : order)
    if (x.candidate.tp == 1) tp1 = x.candidate;
  REQUIRE(tp1.tp == 1);
  auto base = scenario_of(tiny8(), tp1);
  base.parallel.sequence_parallel = true;
  SweepOptions opt;
  opt.threads = 2;
  const auto r = sweep(base, Space(base, bounds()), opt);
  REQUIRE(r.scenario);
  CHECK(r.scenario->ranked);
  CHECK(r.scenario->candidate.index == tp1.index);
  CHECK(!r.scenario->candidate.sequence_parallel);
}

TEST_CASE("planner: the energy objective ranks as the exhaustive order by step energy", "[planner][rank][energy]") {
  // tiny(8) with H100's power figures: 700 W TDP, 140 W idle
  auto base = tiny8();
  base.hardware.gpu.tdp_w = 700;
  base.hardware.gpu.idle_w = 140;
  const Space space(base, bounds());
  std::vector<Simulated> all;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const auto c = space.at(i);
    if (!c) continue;
    const auto s = scenario_of(base, *c);
    if (!core::check(s).empty()) continue;
    const auto a = analytic::evaluate(s);
    if (!a.fits) continue;
    auto r = sim::simulate(s);
    // the key's premise: the busiest stage computes at least the analytic engine's ops
    INFO(label(*c));
    CHECK(r.compute_s >= (a.compute_s - a.contention_s) * (1 - 1e-9));
    if (r.fits) all.push_back({*c, std::move(r)});
  }
  REQUIRE(all.size() > 100);
  std::sort(all.begin(), all.end(), [](const Simulated& a, const Simulated& b) {
    const double ea = step_energy_j(a.report), eb = step_energy_j(b.report);
    if (ea != eb) return ea < eb;
    if (a.report.step_s != b.report.step_s) return a.report.step_s < b.report.step_s;
    return a.candidate.index < b.candidate.index;
  });
  SweepOptions opt;
  opt.objective = Objective::energy;
  opt.top = 5;
  opt.rank_scenario = false;
  const auto r = sweep(base, space, opt);
  // the exhaustive order's first five rows, its near-ties (near_ties.hpp) not counted
  std::vector<const Candidate*> layouts;
  std::vector<double> steps;
  for (const auto& x : all) layouts.push_back(&x.candidate), steps.push_back(x.report.step_s);
  std::vector<int> tie_of;
  fold_near_ties(layouts, steps, tie_of);
  std::vector<std::uint64_t> rows, ranked_rows;
  for (std::size_t i = 0; i < all.size() && rows.size() < 5; ++i)
    if (tie_of[i] < 0) rows.push_back(all[i].candidate.index);
  for (const auto& x : r.results)
    if (x.near_tie_of < 0) ranked_rows.push_back(x.candidate.index);
  CHECK(ranked_rows == rows);
  // and every result, near-ties too, in the exhaustive order
  std::size_t at = 0;
  for (const auto& x : r.results) {
    while (at < all.size() && all[at].candidate.index != x.candidate.index) ++at;
    CHECK(at < all.size());
  }
  CHECK(r.simulated < all.size());  // the key pruned some
}
