// The plan key and the schedule bound (step_lower_bound(), schedule_lower_bound()) with the cost
// of scale's floor never exceed the simulated step: the sweep spares every candidate whose bound is
// beyond the K-th best, so a bound above its step would silently drop a layout that could win
// (docs/planner.md "Lower bound"). tests/planner/sweep_test.cpp checks every candidate of a tiny
// space; this draws candidates from the shipped scenarios' full spaces (dense and MoE, SM
// contention, ZeRO-3, context parallelism, interleaving, the parameter gather at the step's start)
// and simulates each.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "../common/golden_digest.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/simulate.hpp"

using namespace ptdsim;

namespace {

const std::string kRoot = PTDSIM_SOURCE_DIR;

core::Scenario load(const std::string& file) { return io::load_scenario(kRoot + "/scenarios/" + file); }

struct Case {
  std::string name;
  core::Scenario base;
  planner::SearchSpace bounds;
};

std::vector<Case> cases() {
  core::Scenario mixtral = load("default.yaml");
  mixtral.model = io::load_model(kRoot + "/models/mixtral-8x7b.yaml");
  mixtral.hardware = io::load_hardware(kRoot + "/hardware/dgx-h100.yaml");
  mixtral.gpus = 64;
  mixtral.training.global_batch = 256;
  // DeepSeek-V3 also with the overlap switches and CPU offload searched: the start's gather, the
  // unbucketed reduction at the end, EP chained and offload together under SM contention
  planner::SearchSpace switches;
  planner::search_switches({"overlap.dp", "overlap.tp", "offload"}, switches);
  return {{"gpt3-175b/1024", load("default.yaml"), {}},
          {"llama3-70b-fp8/64", load("nemo-llama3-70b-h100-fp8.yaml"), {}},
          {"llama2-70b-fp8", load("nemo-llama2-70b-h100-fp8.yaml"), {}},
          {"deepseek-v3/1024", load("dgxc-deepseek-v3-h100.yaml"), {}},
          {"deepseek-v3/1024 switches", load("dgxc-deepseek-v3-h100.yaml"), switches},
          {"mixtral-8x7b/64", mixtral, {}},
          {"bloom-176b/384", load("bloom-176b-384.yaml"), {}}};
}

// 40 candidates drawn from each case's full space, one stream of draws over the cases in order;
// case `which` simulates its own and checks them (the cases before it are drawn again, without
// simulating, so each case is a test of its own and checks the same candidates as one long run).
void check_case(std::size_t which) {
  const std::vector<Case> all = cases();
  ptdsim::testing::golden::Draw d{20261201};
  for (std::size_t k = 0; k <= which; ++k) {
    const auto& [name, base, bounds] = all[k];
    const planner::Space space(base, bounds);
    int checked = 0;
    std::vector<double> ratios;  // schedule bound / simulated step
    for (int trial = 0; trial < 100000 && checked < 40; ++trial) {
      const auto c = space.at(d.below(space.size()));
      if (!c) continue;
      core::Scenario s = base;
      s.gpus = space.gpus();
      planner::apply(*c, s);
      if (!core::check(s).empty()) continue;
      ++checked;
      if (k != which) continue;
      const analytic::Step step(s);
      const double floor = planner::scale_wait_floor(s, planner::busiest_stage_compute(step.plan));
      const double sim = sim::simulate(step).step_s;
      const double plan_key = planner::step_lower_bound(step.plan) + floor;
      const double schedule = planner::schedule_lower_bound(step.plan) + floor;
      INFO(name << " " << planner::label(*c) << " plan key " << plan_key << " schedule " << schedule << " sim " << sim);
      CHECK(plan_key <= sim * (1 + 1e-9));
      CHECK(schedule <= sim * (1 + 1e-9));
      ratios.push_back(schedule / sim);
    }
    if (k != which) continue;
    INFO(name);
    CHECK(checked == 40);
    std::sort(ratios.begin(), ratios.end());
    CHECK(ratios[ratios.size() / 2] > 0.8);  // not vacuous
  }
}

}  // namespace

// One test a space, so that none runs long under the sanitizers.
TEST_CASE("planner: the bounds stay under the simulated step on GPT-3 175B / 1024 A100's space", "[planner][bound]") {
  check_case(0);
}
TEST_CASE("planner: the bounds stay under the simulated step on NeMo Llama 3 70B FP8's space", "[planner][bound]") {
  check_case(1);
}
TEST_CASE("planner: the bounds stay under the simulated step on NeMo Llama 2 70B FP8's space", "[planner][bound]") {
  check_case(2);
}
TEST_CASE("planner: the bounds stay under the simulated step on DeepSeek-V3 / 1024 H100's space", "[planner][bound]") {
  check_case(3);
}
TEST_CASE("planner: the bounds stay under the simulated step on DeepSeek-V3 with overlap and offload searched",
          "[planner][bound]") {
  check_case(4);
}
TEST_CASE("planner: the bounds stay under the simulated step on Mixtral 8x7B / 64 H100's space", "[planner][bound]") {
  check_case(5);
}
TEST_CASE("planner: the bounds stay under the simulated step on BLOOM 176B / 384 A100's space", "[planner][bound]") {
  check_case(6);
}
