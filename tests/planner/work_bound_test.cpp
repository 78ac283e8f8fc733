// work_lower_bound() (the sweep's first key, read off the step's work) never exceeds the plan's
// step_lower_bound() and busiest_stage_compute(): the sweep builds plans only for the candidates
// whose work key says they can still matter (docs/planner.md "Lower bound"), so a work key above
// its plan key would silently drop a layout that could win. Checked on every candidate of small
// spaces that take each schedule, ZeRO stage, recompute and ZeRO-3/FSDP variant, and on candidates
// drawn from the shipped scenarios' full spaces; and it must not be vacuous there.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "../common/golden_digest.hpp"
#include "fixtures.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"

using namespace ptdsim;

namespace {

const std::string kRoot = PTDSIM_SOURCE_DIR;

struct Tally {
  int checked = 0;
  std::vector<double> ratios;  // work key / plan key
};

// Checks one candidate; false when core::check rejects it.
bool check_one(const core::Scenario& base, const planner::Space& space, std::uint64_t i, Tally& t) {
  const auto c = space.at(i);
  if (!c) return false;
  core::Scenario s = base;
  s.gpus = space.gpus();
  planner::apply(*c, s);
  if (!core::check(s).empty()) return false;
  const analytic::Step step(s);
  const analytic::StepPlan& plan = step.plan;
  const double bound = planner::step_lower_bound(plan);
  const double busiest = planner::busiest_stage_compute(plan);
  const planner::WorkBound w = planner::work_lower_bound(step);
  INFO(planner::label(*c) << " work " << w.bound_s << " plan " << bound << " busiest " << w.busiest_s << " "
                          << busiest);
  CHECK(w.bound_s <= bound);
  CHECK(w.busiest_s <= busiest);
  CHECK(w.bound_s > 0);
  ++t.checked;
  t.ratios.push_back(w.bound_s / bound);
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

TEST_CASE("planner: the work bound never exceeds the plan's, on every candidate of small spaces",
          "[planner][bound]") {
  // Two nodes of 8 GPUs, every combination of the overlap switches, SM contention, and every way of
  // running ZeRO-3 (a sharding unit per layer or per quarter layer, no prefetch, a live
  // parameter cap, kept gathered between the passes, gathered again to recompute, hybrid shards).
  planner::SearchSpace b;
  b.max_micro_batch = 2;
  b.recompute = {core::Recompute::none, core::Recompute::selective, core::Recompute::full};
  for (int variant = 0; variant < 8; ++variant) {
    auto s0 = planner::test::two_nodes(variant);
    auto& sh = s0.parallel.sharding;
    sh.unit_layers = variant & 1 ? 0.25 : 1;
    sh.reshard_after_forward = variant != 3;
    sh.regather_on_recompute = variant & 2;
    sh.max_live_params = variant == 5 ? 1e3 : 0;
    sh.sync = variant == 6;
    sh.overhead_per_rank_s = variant & 4 ? 1e-5 : 0;
    const planner::Space space(s0, b);
    Tally t;
    for (std::uint64_t i = 0; i < space.size(); ++i) check_one(s0, space, i, t);
    INFO("variant " << variant);
    CHECK(t.checked > 200);
    CHECK(median(t.ratios) > 0.5);  // not vacuous
  }
}

TEST_CASE("planner: the work bound never exceeds the plan's, on the shipped scenarios' spaces", "[planner][bound]") {
  auto load = [](const std::string& file) { return io::load_scenario(kRoot + "/scenarios/" + file); };
  core::Scenario mixtral = load("default.yaml");
  mixtral.model = io::load_model(kRoot + "/models/mixtral-8x7b.yaml");
  mixtral.hardware = io::load_hardware(kRoot + "/hardware/dgx-h100.yaml");
  mixtral.gpus = 64;
  mixtral.training.global_batch = 256;
  const std::vector<std::pair<std::string, core::Scenario>> cases = {
      {"gpt3-175b/1024", load("default.yaml")},
      {"llama3-405b/16384", load("meta-llama3-405b-16k-h100.yaml")},
      {"llama3-70b-fp8/64", load("nemo-llama3-70b-h100-fp8.yaml")},
      {"mixtral-8x7b/64", mixtral},
      {"1t/3072", load("narayanan-1t.yaml")}};
  ptdsim::testing::golden::Draw d{20261127};
  for (const auto& [name, base] : cases) {
    const planner::Space space(base, planner::SearchSpace{});
    Tally t;
    for (int trial = 0; trial < 100000 && t.checked < 300; ++trial) check_one(base, space, d.below(space.size()), t);
    INFO(name);
    CHECK(t.checked == 300);
    CHECK(median(t.ratios) > 0.8);  // not vacuous: most keys come within 20% of the plan's
  }
}
