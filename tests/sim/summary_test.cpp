#include "ptdsim/sim/summary.hpp"

#include "ptdsim/core/names.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "ptdsim/sim/graph_check.hpp"
#include "ptdsim/sim/trace.hpp"
#include "fixtures.hpp"

using namespace ptdsim;
using testing::equal_stages;
using testing::with;

namespace {

double exposed(const sim::StepSummary& s, core::CommBucket k) { return s.exposed_s[static_cast<int>(k)]; }

// Every communication and every feature on, for the graph checks.
testing::HandWork everything(int p, int m, int v) {
  auto c = equal_stages(p, m, 1.0, 1.5, 0.5, v, 4);
  for (auto& s : c.stages) {
    s.recompute_s = 0.2;
    s.tp_forward_s = 0.1, s.tp_backward_s = 0.2, s.tp_bytes = 1e8;
    s.cp_forward_s = 0.05, s.cp_backward_s = 0.1, s.cp_bytes = 1e7;
    s.ep_forward_s = 0.05, s.ep_backward_s = 0.1, s.ep_bytes = 1e7;
    s.p2p_s = 0.02, s.p2p_bytes = 1e7;
    s.grad_bytes = 1e9, s.dp_reduce_s = 0.7, s.dp_gather_s = 0.3;
    s.zero3_gather_s = 0.05, s.zero3_reduce_s = 0.05;
    s.optimizer_s = 0.1;
  }
  return c;
}

}  // namespace

TEST_CASE("sim: 1F1B summary on equal stages", "[sim][summary]") {
  // p=4, m=8, t_f=1, t_b=2: step (m+p-1)*3 = 33; the busiest stage computes m*3 = 24 and idles
  // (p-1)*3 = 9; stage s holds p-s micro-batches (Narayanan et al. 2021).
  auto g = testing::build(equal_stages(4, 8, 1.0, 2.0), with(core::Schedule::one_f_one_b));
  g.engine.run();
  const auto s = sim::summarize(g);
  CHECK(s.step_s == Approx(33.0).epsilon(1e-12));
  CHECK(s.compute_s == Approx(24.0).epsilon(1e-12));
  CHECK(s.bubble_s == Approx(9.0).epsilon(1e-12));
  for (int r = 0; r < 4; ++r) CHECK(s.in_flight[r] == Approx(4 - r).epsilon(1e-12));
  for (double x : s.exposed_s) CHECK(x == 0.0);
  CHECK(core::describe(s.bounded_by).find("compute") != std::string::npos);

  SECTION("GPipe holds all m micro-batches") {
    auto gp = testing::build(equal_stages(4, 8, 1.0, 2.0), with(core::Schedule::gpipe));
    gp.engine.run();
    CHECK(sim::summarize(gp).in_flight[0] == Approx(8).epsilon(1e-12));
  }
  SECTION("interleaved stage 0 holds min(mv, 2(p-1)+(v-1)p+1)/v micro-batches") {
    // p=4, v=2, m=8: (6 + 4 + 1)/2 = 5.5
    auto gi = testing::build(equal_stages(4, 8, 1.0, 2.0, 0, 2), with(core::Schedule::interleaved));
    gi.engine.run();
    CHECK(sim::summarize(gi).in_flight[0] == Approx(5.5).epsilon(1e-12));
  }
}

TEST_CASE("sim: DP reduction hides behind the last backward except the last bucket",
          "[sim][summary][dp]") {
  // One stage, m=2, t_f=1, t_b=2, 4 layers, 4 buckets (640 MB of gradients, 160 MB buckets).
  // The last backward runs [4,6], a bucket's gradients ready at 4.5, 5, 5.5, 6; each bucket's
  // reduction takes r/4 after its gradients and after the previous bucket.
  auto c = equal_stages(1, 2, 1.0, 2.0);
  c.stages[0].grad_bytes = 4 * 160e6;
  SECTION("overlap ratio r/t_b = 0.5: only the last bucket (r/4) is exposed") {
    c.stages[0].dp_reduce_s = 1.0;
    auto g = testing::build(c, with(core::Schedule::one_f_one_b));
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(6.25).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::dp) == Approx(0.25).epsilon(1e-12));
  }
  SECTION("overlap ratio 1.5: exposed by the difference r - t_b plus the first bucket's lead t_b/4") {
    c.stages[0].dp_reduce_s = 3.0;  // reductions [4.5,5.25] .. [6.75,7.5]
    auto g = testing::build(c, with(core::Schedule::one_f_one_b));
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(7.5).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::dp) == Approx(3.0 - 2.0 + 0.5).epsilon(1e-12));
    CHECK(core::describe(s.bounded_by).find("DP reduce") != std::string::npos);
  }
  SECTION("without overlap the whole reduction is exposed") {
    c.stages[0].dp_reduce_s = 1.0;
    auto o = with(core::Schedule::one_f_one_b);
    o.overlap_dp = false;
    auto g = testing::build(c, o);
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(7.0).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::dp) == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("sim: TP collectives are serial unless overlapped", "[sim][summary][tp]") {
  // One stage, one micro-batch: F 1 s, B 2 s; TP 0.2 s forward and 0.4 s backward.
  auto c = equal_stages(1, 1, 1.0, 2.0);
  c.stages[0].tp_forward_s = 0.2;
  c.stages[0].tp_backward_s = 0.4;
  SECTION("serial: on the critical path, 3 + 0.6") {
    auto g = testing::build(c, with(core::Schedule::one_f_one_b));
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(3.6).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::tp) == Approx(0.6).epsilon(1e-12));
    CHECK(s.bubble_s == Approx(0.0).margin(1e-12));  // TP time is not idle
  }
  SECTION("overlapped and shorter than the compute: hidden") {
    auto o = with(core::Schedule::one_f_one_b);
    o.overlap_tp = true;
    auto g = testing::build(c, o);
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(3.0).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::tp) == Approx(0.0).margin(1e-12));
  }
  SECTION("overlapped and longer than the forward: exposed by the difference, 1.5 - 1") {
    c.stages[0].tp_forward_s = 1.5;
    auto o = with(core::Schedule::one_f_one_b);
    o.overlap_tp = true;
    auto g = testing::build(c, o);
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(3.5).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::tp) == Approx(0.5).epsilon(1e-12));
  }
}

TEST_CASE("sim: CP's exchange hides behind the attention core only", "[sim][summary][cp]") {
  // One stage, one micro-batch: F 1 s with a 0.2 s attention core, B 2 s (its attention 0.4 s).
  // The exchange starts with the attention core, after the pass's other 0.8 s (F) or 1.6 s (B).
  auto c = equal_stages(1, 1, 1.0, 2.0);
  c.stages[0].attention_core_s = 0.2;
  SECTION("longer than the forward's attention: exposed by 0.5 - 0.2; shorter in backward: hidden") {
    c.stages[0].cp_forward_s = 0.5;
    c.stages[0].cp_backward_s = 0.3;
    auto g = testing::build(c, with(core::Schedule::one_f_one_b));
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(3.3).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::cp) == Approx(0.3).epsilon(1e-12));
    CHECK(s.compute_s == Approx(3.0).epsilon(1e-12));  // the split pass still computes 3 s
  }
  SECTION("the exchange holds SMs: share 0.2 slows the attention core beside it") {
    // F: attention 0.2 s at 0.8 beside the 0.5 s exchange ends at 0.8 + 0.25; the pass at 1.3.
    // B: other work [1.3, 2.9]; attention 0.4 s: 0.24 s done while the 0.3 s exchange runs, 0.16 s
    // after: ends 3.36. Slowed by 0.05 + 0.06; the forward's exchange exposed 1.3 - 1.05.
    c.stages[0].cp_forward_s = 0.5;
    c.stages[0].cp_backward_s = 0.3;
    auto o = with(core::Schedule::one_f_one_b);
    o.comm_share = 0.2;
    auto g = testing::build(c, o);
    g.engine.run();
    const auto s = sim::summarize(g);
    CHECK(s.step_s == Approx(3.36).epsilon(1e-12));
    CHECK(s.contention_s == Approx(0.11).epsilon(1e-12));
    CHECK(s.compute_s == Approx(3.11).epsilon(1e-12));
    CHECK(exposed(s, core::CommBucket::cp) == Approx(0.25).epsilon(1e-12));
  }
  SECTION("without an attention core to hide behind, the exchange is serial") {
    c.stages[0].attention_core_s = 0;
    c.stages[0].cp_forward_s = 0.5;
    c.stages[0].cp_backward_s = 0.3;
    auto g = testing::build(c, with(core::Schedule::one_f_one_b));
    g.engine.run();
    CHECK(sim::summarize(g).step_s == Approx(3.8).epsilon(1e-12));
  }
}

TEST_CASE("sim: every schedule's DAG is acyclic and every task runs once", "[sim][graph]") {
  using core::Schedule;
  for (auto [sched, v] : {std::pair{Schedule::gpipe, 1}, std::pair{Schedule::one_f_one_b, 1},
                          std::pair{Schedule::interleaved, 2}, std::pair{Schedule::zb_h1, 1}}) {
    for (int zero : {0, 1, 3}) {
      for (bool overlap : {false, true}) {
        auto o = with(sched);
        o.zero = zero;
        o.overlap_tp = o.overlap_dp = o.overlap_pp = o.zero3_prefetch = overlap;
        o.dp_bucket_bytes = 250e6;  // 4 buckets of the 1 GB
        auto g = testing::build(everything(4, 8, v), o);
        INFO("schedule " << static_cast<int>(sched) << " zero " << zero << " overlap " << overlap);
        CHECK(sim::is_acyclic(g.engine));
        g.engine.run();
        std::size_t done = 0;
        for (std::size_t t = 0; t < g.engine.size(); ++t)
          done += g.engine.state(static_cast<sim::TaskId>(t)) == sim::TaskState::done;
        CHECK(done == g.engine.size());
        // no step can beat its contention-free critical path
        CHECK(g.engine.makespan() >= sim::static_critical_path_s(g.engine) * (1 - 1e-12));
      }
    }
  }
}

TEST_CASE("sim: without shared links the run equals the static critical path", "[sim][graph]") {
  // TP on NVLink only, one transfer at a time per link: the engine's makespan is the longest
  // path of the DAG (Boost topological order).
  auto c = equal_stages(4, 8, 1.0, 2.0);
  for (auto& s : c.stages) s.tp_forward_s = 0.1, s.tp_backward_s = 0.2;
  auto g = testing::build(c, with(core::Schedule::one_f_one_b));
  g.engine.run();
  CHECK(sim::static_critical_path_s(g.engine) == Approx(g.engine.makespan()).epsilon(1e-12));
}

TEST_CASE("sim: the trace is valid JSON with one complete event per task", "[sim][trace]") {
  auto o = with(core::Schedule::interleaved);
  o.zero = 1;
  auto g = testing::build(everything(4, 8, 2), o);
  g.engine.run();
  const std::string text = sim::chrome_trace(g);
  const auto doc = nlohmann::json::parse(text);  // throws on invalid JSON
  REQUIRE(doc.contains("traceEvents"));
  std::size_t complete = 0;
  std::set<std::string> processes;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "X") {
      ++complete;
      CHECK(ev["dur"].get<double>() >= 0);
      CHECK(ev["ts"].get<double>() >= 0);
    } else if (ev["name"] == "process_name") {
      processes.insert(ev["args"]["name"].get<std::string>());
    }
  }
  CHECK(complete == g.engine.size());
  CHECK(processes == std::set<std::string>{"stage 0", "stage 1", "stage 2", "stage 3"});

  SECTION("determinism: the same input gives the same trace") {
    auto again = testing::build(everything(4, 8, 2), o);
    again.engine.run();
    CHECK(sim::chrome_trace(again) == text);
  }
}

TEST_CASE("sim: ZeRO-3's collectives on their own named tracks, stalls counted as communication",
          "[sim][trace][zero3]") {
  // 1 stage, 4 layers (a unit each), m = 1, F 1 s, B 2 s; gathers 0.2 s, reduce-scatters 0.1 s, no
  // prefetch: every gather stalls the compute.
  auto c = equal_stages(1, 1, 1.0, 2.0, 0, 1, 4);
  c.stages[0].zero3_gather_s = 0.2, c.stages[0].zero3_reduce_s = 0.1;
  auto o = with(core::Schedule::one_f_one_b);
  o.zero = 3;
  o.zero3_prefetch = false;
  auto g = testing::build(c, o);
  g.engine.run();
  const auto doc = nlohmann::json::parse(sim::chrome_trace(g));
  std::set<std::string> tracks;
  int gathers = 0, reduces = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["name"] == "thread_name") tracks.insert(ev["args"]["name"].get<std::string>());
    if (ev["ph"] == "X" && ev["cat"] == "ZeRO-3 all-gather") ++gathers;
    if (ev["ph"] == "X" && ev["cat"] == "ZeRO-3 reduce-scatter") ++reduces;
  }
  CHECK(tracks.count("dp-gather (ZeRO-3 all-gathers)") == 1);
  CHECK(tracks.count("dp (ZeRO-3 reduce-scatters)") == 1);
  CHECK(gathers == 8);  // 4 units, forward and backward
  CHECK(reduces == 4);
  // The step (5.0 s, analytic zero3_test.cpp) is 3 s of compute and 2 s of exposed ZeRO-3 traffic,
  // none of it pipeline bubble.
  const auto sum = sim::summarize(g);
  CHECK(sum.step_s == Approx(5.0).epsilon(1e-12));
  CHECK(sum.bubble_s == Approx(0).margin(1e-12));
  CHECK(sum.exposed_s[static_cast<int>(core::CommBucket::dp)] == Approx(2.0).epsilon(1e-12));
}

TEST_CASE("sim: a rank list with two replicas simulates both alike", "[sim][schedule]") {
  // the builder takes any rank list: two data-parallel replicas of a 2-stage pipeline behave as
  // one when nothing couples them
  auto c = equal_stages(2, 4, 1.0, 2.0);
  std::vector<sim::RankRef> ranks{{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  auto g = testing::build(c, with(core::Schedule::one_f_one_b), ranks);
  g.engine.run();
  CHECK(g.engine.makespan() == Approx((4 + 2 - 1) * 3.0).epsilon(1e-12));
  const auto s = sim::summarize(g);
  CHECK(s.in_flight[2] == s.in_flight[0]);
}

TEST_CASE("sim: with nothing slowed, the contention is exactly zero", "[sim][summary]") {
  // Durations no binary fraction holds: finish - start - duration rounds to +-1e-17 per task, which
  // summed into a contention the report printed as "0.0 us". Only a task that ends later than its
  // start plus its duration counts.
  auto c = equal_stages(4, 16, 0.1, 0.3, 0.07);
  for (double share : {0.0, 0.2}) {
    auto o = with(core::Schedule::one_f_one_b);
    o.comm_share = share;  // no collective runs beside compute here, so 0.2 slows nothing either
    auto g = testing::build(c, o);
    g.engine.run();
    CHECK(sim::summarize(g).contention_s == 0.0);
  }
}
