#include "ptdsim/sim/timeline.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "../common/scenarios.hpp"
#include "fixtures.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/sim/summary.hpp"

using namespace ptdsim;
using testing::equal_stages;
using testing::with;

TEST_CASE("sim: the timeline draws every task of a small step and its bubbles", "[sim][timeline]") {
  // p=4, m=8, t_f=1, t_b=2 under 1F1B: step (m+p-1)*3 = 33; every stage computes m*3 = 24 s inside
  // the 33 s pipeline phase, so its bubbles sum to (p-1)*3 = 9 s (Narayanan et al. 2021).
  auto g = testing::build(equal_stages(4, 8, 1.0, 2.0), with(core::Schedule::one_f_one_b));
  g.engine.run();
  sim::TimelineOptions o;
  o.min_bubble_fraction = 0;  // every gap
  const core::Timeline t = sim::timeline(g, o);
  CHECK(t.step_s == Approx(33.0).epsilon(1e-12));
  CHECK(t.pipeline_end_s == Approx(33.0).epsilon(1e-12));
  CHECK(t.stages == 4);
  CHECK(t.microbatches == 8);
  CHECK(t.sampling.empty());
  CHECK(t.streams.front() == "compute");

  std::size_t tasks = 0, critical = 0;
  std::map<int, double> bubble;
  for (const auto& s : t.spans) {
    CHECK(s.kind != "summary");
    if (s.kind == "bubble") {
      bubble[s.stage] += s.dur_s;
      continue;
    }
    tasks += static_cast<std::size_t>(s.tasks);
    critical += s.critical;
  }
  CHECK(tasks == g.engine.size());  // nothing folded: communication is free here
  CHECK(critical == g.engine.critical_path().size());
  REQUIRE(bubble.size() == 4);
  for (const auto& [stage, idle] : bubble) CHECK(idle == Approx(9.0).epsilon(1e-9));
  // the busiest stage's bubbles are the summary's bubble_s
  CHECK(bubble[0] == Approx(sim::summarize(g).bubble_s).epsilon(1e-9));

  SECTION("spans come by stage, then stream, then time") {
    for (std::size_t i = 1; i < t.spans.size(); ++i) {
      const auto& a = t.spans[i - 1];
      const auto& b = t.spans[i];
      CHECK(a.stage <= b.stage);
      if (a.stage == b.stage && a.stream == b.stream) CHECK(a.start_s <= b.start_s);
    }
  }
  SECTION("gaps under the threshold are left out") {
    // 1.5 s of a 33 s step: the 1 s gaps go, the longer ones stay
    o.min_bubble_fraction = 1.5 / 33;
    for (const auto& s : sim::timeline(g, o).spans)
      if (s.kind == "bubble") CHECK(s.dur_s >= 1.5);
  }
}

TEST_CASE("sim: a big step's timeline keeps the edge micro-batches and the critical path", "[sim][timeline]") {
  // p=4, m=32: 32 F + 32 B per stage = 256 compute tasks; with a budget of 10 the timeline keeps
  // micro-batches 0, 1, 30, 31 and the critical path task by task and summarises the rest.
  auto g = testing::build(equal_stages(4, 32, 1.0, 2.0), with(core::Schedule::one_f_one_b));
  g.engine.run();
  sim::TimelineOptions o;
  o.max_tasks = 10;
  const core::Timeline t = sim::timeline(g, o);
  REQUIRE_FALSE(t.sampling.empty());
  std::set<int> critical_tasks;
  std::size_t represented = 0, summaries = 0;
  for (const auto& s : t.spans) {
    if (s.kind == "bubble") continue;
    represented += static_cast<std::size_t>(s.tasks);
    if (s.kind == "summary") {
      ++summaries;
      CHECK(s.busy_s <= s.dur_s + 1e-12);
      CHECK(s.tasks > 0);
      continue;
    }
    // a detailed task: outside the micro-batch loop (the optimizer), an edge micro-batch or on
    // the critical path
    const auto mb = s.label.find(" mb");
    if (mb == std::string::npos) {
      CHECK(s.kind == "optimizer");
      continue;
    }
    const int n = std::stoi(s.label.substr(mb + 3));
    CHECK((n < 2 || n >= 30 || s.critical));
  }
  CHECK(summaries > 0);
  CHECK(represented == g.engine.size());  // every task is drawn or summarised, once
  CHECK(t.spans.size() < g.engine.size());
}

TEST_CASE("sim: simulate hands out the timeline of the step it reports", "[sim][timeline]") {
  const core::Scenario s = testing::gpt3_1024();
  core::Timeline t;
  const core::Report r = sim::simulate(s, nullptr, &t);
  CHECK(t.step_s == r.step_s);
  CHECK(t.stages == s.parallel.pp);
  CHECK(t.microbatches == s.num_microbatches());
  CHECK_FALSE(t.spans.empty());
  bool critical = false;
  for (const auto& sp : t.spans) {
    critical = critical || sp.critical;
    if (sp.kind == "bubble") {
      CHECK(sp.dur_s >= t.min_bubble_s);
      CHECK(sp.start_s + sp.dur_s <= t.pipeline_end_s + 1e-12);
    }
  }
  CHECK(critical);
  CHECK(t.min_bubble_s == Approx(0.002 * r.step_s));  // TimelineOptions' default fraction
}
