#include "ptdsim/sim/simulate.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;

TEST_CASE("sim: simulate() of GPT-3 175B on 1024 A100s", "[sim][simulate]") {
  const core::Scenario s = testing::gpt3_1024();
  REQUIRE(core::check(s).empty());
  std::string trace;
  const core::Report r = sim::simulate(s, &trace);
  const core::Report a = analytic::evaluate(s);
  const auto work = analytic::step_work(s);
  INFO("simulated " << r.step_s << " s, analytic " << a.step_s << " s, bounded by " << core::describe(r.bounded_by));
  CHECK(r.engine == core::EngineKind::simulation);

  // m = 1536 / (1 * 8) = 192 micro-batches; no step is shorter than the busiest stage's work
  double busiest = 0;
  for (const auto& st : work.chunks)
    busiest = std::max(busiest, st.forward_s + st.recompute_s + st.backward_input_s + st.backward_weight_s);
  CHECK(r.compute_s == Approx(192 * busiest).epsilon(1e-9));
  CHECK(r.step_s >= r.compute_s + r.bubble_s);
  // 1F1B holds p - i micro-batches on stage i (Narayanan et al. 2021), as the analytic engine says
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    CHECK(r.stages[i].in_flight == Approx(16.0 - i).epsilon(1e-12));
    CHECK(r.stages[i].activations == Approx(a.stages[i].activations).epsilon(1e-9));
  }
  // the two engines model the same schedule: they agree to within the exposed communication
  CHECK(r.step_s == Approx(a.step_s).epsilon(0.1));
  // throughput from the simulated step (interface.md)
  CHECK(r.tflops_per_gpu == Approx(r.model_flops_per_step / r.step_s / 1024 / 1e12).epsilon(1e-12));
  CHECK(r.mfu == Approx(r.tflops_per_gpu / 312).epsilon(1e-12));
  CHECK(r.tokens_per_s == Approx(1536.0 * 2048 / r.step_s).epsilon(1e-12));
  CHECK_FALSE(r.bounded_by.empty());

  const auto doc = nlohmann::json::parse(trace);
  std::size_t complete = 0;
  for (const auto& ev : doc["traceEvents"]) complete += ev["ph"] == "X";
  // F and B of every micro-batch on every stage, each with its serial TP (folded or not)
  CHECK(complete >= 4u * 192 * 16);
  std::size_t tp_events = 0;
  for (const auto& ev : doc["traceEvents"]) tp_events += ev["ph"] == "X" && ev["cat"] == "TP";
  // the serial TP folded into every F and B (192 micro-batches, 16 stages), drawn per layer: 96 / 16
  // = 6 layers a pass, so 2 * 192 * 16 * 6 = 36,864 (one per pass before the per-layer drawing)
  CHECK(tp_events == 2u * 192 * 16 * 6);

  SECTION("deterministic") {
    std::string again;
    sim::simulate(s, &again);
    CHECK(again == trace);
  }
}

TEST_CASE("sim: interleaving shortens the simulated bubble", "[sim][simulate]") {
  // Narayanan et al. 2021: the bubble shrinks by v; here v = 2 with 96 layers over 16*2 chunks.
  core::Scenario s = testing::gpt3_1024();
  const core::Report plain = sim::simulate(s);
  s.parallel.vpp = 2;
  s.parallel.schedule = core::Schedule::interleaved;
  REQUIRE(core::check(s).empty());
  const core::Report inter = sim::simulate(s);
  INFO("bubble 1F1B " << plain.bubble_s << " s, interleaved " << inter.bubble_s << " s");
  CHECK(inter.bubble_s < 0.6 * plain.bubble_s);
  CHECK(inter.step_s < plain.step_s);
}

TEST_CASE("sim: a step built into a used graph runs as one built fresh", "[sim][simulate]") {
  // simulate() builds each step into the storage of the thread's previous one (Engine::reset, and
  // the builder's own): nothing of an earlier build may show. Steps of other sizes, streams and SM
  // contention in turn.
  const core::Scenario big = testing::gpt3_cp4_contention(), small = testing::gpt3_1024();
  const core::Scenario shallow = [&] {
    core::Scenario x = small;
    x.parallel.pp = 4;
    x.parallel.dp = 32;
    return x;
  }();
  sim::StepGraph used;
  for (const core::Scenario* s : {&big, &small, &shallow, &big}) {
    INFO(s->name << " pp " << s->parallel.pp);
    REQUIRE(core::check(*s).empty());
    const analytic::StepPlan plan = analytic::plan_step(*s);
    sim::build_step(plan, used);
    used.engine.run();
    // built and run on a new thread: none of the storage a thread keeps from build to build
    sim::StepGraph fresh;
    std::thread([&] {
      fresh = sim::build_step(plan);
      fresh.engine.run();
    }).join();
    REQUIRE(used.engine.size() == fresh.engine.size());
    CHECK(used.engine.edges() == fresh.engine.edges());
    CHECK(used.engine.descriptions() == fresh.engine.descriptions());
    CHECK(used.engine.ranks() == fresh.engine.ranks());
    CHECK(used.engine.makespan() == fresh.engine.makespan());
    CHECK(used.engine.events_processed() == fresh.engine.events_processed());
    CHECK(used.engine.walked_tasks() == fresh.engine.walked_tasks());
    CHECK(used.activations == fresh.activations);
    CHECK(used.last_pipeline_task == fresh.last_pipeline_task);
    CHECK(used.optimizer_task == fresh.optimizer_task);
    std::size_t differ = 0;
    for (sim::TaskId i = 0; i < static_cast<sim::TaskId>(fresh.engine.size()); ++i)
      if (used.engine.start(i) != fresh.engine.start(i) || used.engine.finish(i) != fresh.engine.finish(i) ||
          used.engine.binding(i) != fresh.engine.binding(i) || used.engine.state(i) != fresh.engine.state(i))
        ++differ;
    CHECK(differ == 0);
  }
}

// Issue 38: the PP volume per GPU is what the trace's sends add up to. A chunk sends its activations
// forward and its input gradients back, except the first virtual stage (no gradient back) and the
// last (no activation forward): with m micro-batches and v chunks a GPU of the first or last stage
// sends (2v - 1) m transfers, one in between 2v m. pp 2 (both ends), pp 4 (ends and middles), 1F1B
// and interleaved.
TEST_CASE("sim: PP bytes per GPU equal the trace's sends, per stage", "[sim][simulate][pp]") {
  for (int pp : {2, 4})
    for (int vpp : {1, 2}) {
      core::Scenario s = testing::gpt3_1024();
      s.parallel.pp = pp;
      s.parallel.vpp = vpp;
      s.parallel.schedule = vpp > 1 ? core::Schedule::interleaved : core::Schedule::one_f_one_b;
      s.parallel.dp = s.gpus / (s.parallel.tp * pp);
      s.training.global_batch = s.parallel.dp * 8;  // m = 8
      REQUIRE(core::check(s).empty());
      INFO("pp " << pp << " vpp " << vpp);
      std::string trace;
      const core::Report r = sim::simulate(s, &trace);
      const auto doc = nlohmann::json::parse(trace);
      std::vector<double> sent(static_cast<std::size_t>(pp), 0.0);
      int sends = 0;
      for (const auto& ev : doc["traceEvents"])
        if (ev["ph"] == "X" && ev["cat"] == std::string(sim::name(sim::task_kind(core::CommKind::p2p)))) {
          sent[ev["pid"].get<std::size_t>()] += ev["args"]["bytes"].get<double>();
          ++sends;
        }
      CHECK(sends == 8 * (2 * vpp * pp - 2));  // every chunk boundary, both ways, every micro-batch
      const double busiest = *std::max_element(sent.begin(), sent.end());
      CHECK(r.of(core::CommBucket::pp).bytes == Approx(busiest).epsilon(1e-12));
      CHECK(r.pp_end_bytes == Approx(sent.front()).epsilon(1e-12));
      CHECK(r.pp_end_bytes == Approx(sent.back()).epsilon(1e-12));
      // the analytic report reads the same plan
      CHECK(analytic::evaluate(s).of(core::CommBucket::pp).bytes == Approx(busiest).epsilon(1e-12));
    }
}

// Issue 38: the Chrome trace as Perfetto's JSON importer reads it (the Trace Event Format: a
// "traceEvents" array; "M" metadata, "X" complete events with ts and dur in microseconds, flow v1
// events "s" and "f" sharing an id and a category, the "f" bound to its enclosing slice with
// "bp": "e", "C" counters with numeric args). Checked here: metadata first, then every timed event
// in time order; every flow's two ends inside a slice of their track, the start no later than the
// end; every pipeline send with its arrow; collectives named with their pass; the memory counter of
// each stage peaking at the stage's reported total.
TEST_CASE("sim: the Chrome trace is what Perfetto's JSON importer expects", "[sim][trace]") {
  core::Scenario interleaved = testing::gpt3_1024();
  interleaved.parallel.pp = 8;
  interleaved.parallel.vpp = 2;
  interleaved.parallel.schedule = core::Schedule::interleaved;
  interleaved.parallel.dp = interleaved.gpus / (interleaved.parallel.tp * 8);
  interleaved.training.global_batch = interleaved.parallel.dp * 16;
  for (const core::Scenario& s : {testing::gpt3_1024(), interleaved}) {
    REQUIRE(core::check(s).empty());
    std::string trace;
    const core::Report r = sim::simulate(s, &trace);
    const auto doc = nlohmann::json::parse(trace);
    REQUIRE(doc["traceEvents"].is_array());
    const auto& events = doc["traceEvents"];
    using Track = std::pair<int, int>;
    std::map<Track, std::vector<std::pair<double, double>>> slices;
    std::map<long long, std::vector<const nlohmann::json*>> flows;
    std::map<int, double> peak;
    bool metadata = true, sorted = true, named = true;
    double last = 0;
    int sends = 0;
    for (const auto& ev : events) {
      const std::string ph = ev["ph"];
      REQUIRE((ph == "M" || ph == "X" || ph == "s" || ph == "f" || ph == "C"));
      REQUIRE(ev["pid"].is_number_integer());
      if (ph == "M") {
        CHECK(metadata);  // before every timed event
        continue;
      }
      metadata = false;
      REQUIRE(ev["ts"].is_number());
      const double ts = ev["ts"].get<double>();
      sorted = sorted && ts >= last;
      last = ts;
      if (ph == "X") {
        REQUIRE(ev["tid"].is_number_integer());
        REQUIRE(ev["dur"].get<double>() >= 0);
        const std::string name = ev["name"];
        if (ev["cat"] == "TP") named = named && (name.rfind("TP F ", 0) == 0 || name.rfind("TP B ", 0) == 0);
        if (ev["cat"] == std::string(sim::name(sim::task_kind(core::CommKind::p2p)))) ++sends;
        slices[{ev["pid"].get<int>(), ev["tid"].get<int>()}].emplace_back(ts, ts + ev["dur"].get<double>());
      } else if (ph == "C") {
        peak[ev["pid"].get<int>()] = std::max(peak[ev["pid"].get<int>()], ev["args"]["GiB"].get<double>());
      } else {
        flows[ev["id"].get<long long>()].push_back(&ev);
      }
    }
    CHECK(sorted);
    CHECK(named);
    // A stage's serial TP drawn per layer: 96 layers over 16 virtual stages is 6 a chunk (pp 16, or
    // pp 8 x vpp 2), and tp 8 without TP overlap folds the TP into the pass. Stage 0's forward of
    // micro-batch 0 (chunk 0) is 12 slices, a layer's compute then its TP, for layers 0..5, each
    // starting where the one before ends, the TP slices alike (the send to stage 1 is not counted).
    std::vector<const nlohmann::json*> pass;
    for (const auto& ev : events)
      if (ev["ph"] == "X" && ev["pid"] == 0 && (ev["cat"] == "TP" || ev["cat"] == sim::name(sim::TaskKind::forward)) &&
          ev["args"].value("pass", "") == "forward" &&
          ev["args"].value("microbatch", -1) == 0 && ev["args"].value("chunk", 0) == 0)
        pass.push_back(&ev);
    std::sort(pass.begin(), pass.end(), [](const nlohmann::json* x, const nlohmann::json* y) { return (*x)["ts"].get<double>() < (*y)["ts"].get<double>(); });
    REQUIRE(pass.size() == 12);
    for (std::size_t j = 0; j < pass.size(); ++j) {
      const auto& ev = *pass[j];
      const int layer = static_cast<int>(j / 2);
      INFO("slice " << j << ": " << ev["name"].get<std::string>());
      CHECK(ev["cat"] == (j % 2 ? "TP" : std::string(sim::name(sim::TaskKind::forward))));
      CHECK(ev["args"]["layers"] == std::to_string(layer));
      CHECK(ev["args"]["share"] == "layer " + std::to_string(layer + 1) + " of 6");
      if (j % 2) CHECK(ev["name"] == "TP F mb0" + std::string(s.parallel.vpp > 1 ? " c0" : "") + " L" + std::to_string(layer));
      if (j % 2 && j > 1) CHECK(ev["dur"].get<double>() == Approx((*pass[1])["dur"].get<double>()).epsilon(1e-12));
      if (j > 0) {
        const auto& prev = *pass[j - 1];
        CHECK(ev["ts"].get<double>() == Approx(prev["ts"].get<double>() + prev["dur"].get<double>()).margin(1e-3));
      }
    }
    // inside a slice of its track (microseconds written as doubles: a nanosecond's slack)
    auto inside = [&](const nlohmann::json& ev) {
      const auto& v = slices[{ev["pid"].get<int>(), ev["tid"].get<int>()}];
      const double ts = ev["ts"].get<double>();
      return std::any_of(v.begin(), v.end(), [&](const auto& x) { return x.first <= ts + 1e-3 && ts <= x.second + 1e-3; });
    };
    int p2p_flows = 0;
    for (const auto& [id, ends] : flows) {
      REQUIRE(ends.size() == 2);
      const auto& s0 = *ends[0];
      const auto& f0 = *ends[1];
      CHECK(s0["ph"] == "s");
      CHECK(f0["ph"] == "f");
      CHECK(f0["bp"] == "e");
      CHECK(s0["cat"] == f0["cat"]);
      CHECK(s0["ts"].get<double>() <= f0["ts"].get<double>());
      CHECK(inside(s0));
      CHECK(inside(f0));
      p2p_flows += s0["cat"] == "p2p";
    }
    CHECK(p2p_flows == sends);  // every send hands its activations or gradients on
    CHECK(sends > 0);
    REQUIRE(peak.size() == r.stages.size());
    for (const auto& [pid, gib] : peak)
      CHECK(gib == Approx(r.stages[static_cast<std::size_t>(pid)].total() / (1024.0 * 1024 * 1024)).epsilon(1e-9));
  }
}
