// The analytic engine's results pinned bit for bit (issue 18: "outputs unchanged (tests prove it)"):
// every shipped scenario, every modelled record of the validation dataset and 360 layouts drawn from
// the sweep's spaces are evaluated, and each line of tests/data/golden/analytic_evaluate.txt holds
// the step time and peak memory at full precision with digests of the report (its JSON, every
// number to the last bit) and of the step plan (every segment and collective), and
// peak_memory_bytes() exactly. A change to the engine's data structures or speed must leave every
// line as it is.
//
// Regenerate (only for an intended change of results, and say which in the commit):
//   PTDSIM_UPDATE_GOLDEN=1 ./build/bin/ptdsim_analytic_golden_tests
//
// The layouts are points of planner::Space (what the sweep evaluates), drawn with splitmix64, with
// the switches the space does not vary drawn on top: ZeRO-3's framework knobs, uneven pipeline
// splits, FP8, flash attention, SM contention, the rank placement. Bases: GPT-3 175B on A100 (the
// scalar model), Llama 3 405B and Llama 3 70B FP8 on H100 (measured kernel tables), Mixtral 8x7B
// (MoE, expert parallel) on H100, Llama 2 13B on GB200 NVL72 (72 GPUs a node) and BLOOM 176B.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../common/golden_digest.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"

using namespace ptdsim;
namespace golden = ptdsim::testing::golden;

namespace {

const std::string kRoot = PTDSIM_SOURCE_DIR;
const std::string kGolden = std::string(PTDSIM_TEST_DATA) + "/golden/analytic_evaluate.txt";

struct Case {
  std::string name;
  core::Scenario scenario;
};

std::string digest(const Case& c) {
  const analytic::StepPlan plan = analytic::plan_step(c.scenario);
  const core::Report r = analytic::evaluate(c.scenario);
  return c.name + "\tstep_s=" + golden::full(r.step_s) + " peak=" + golden::full(r.peak_bytes) +
         " peak_memory_bytes=" + golden::exact(analytic::peak_memory_bytes(c.scenario)) +
         " report=" + golden::report_digest(r) + " plan=" + golden::hex(golden::fnv1a(golden::plan_text(plan)));
}

core::Scenario with(const std::string& scenario, const char* model, const char* hardware, int gpus) {
  core::Scenario s = io::load_scenario(kRoot + "/scenarios/" + scenario);
  if (model) s.model = io::load_model(kRoot + "/models/" + model + ".yaml");
  if (hardware) s.hardware = io::load_hardware(kRoot + "/hardware/" + hardware + ".yaml");
  if (gpus > 0) s.gpus = gpus;
  return s;
}

// What the space does not vary, drawn on top of a candidate.
void draw_switches(golden::Draw& d, core::Scenario& s) {
  auto& p = s.parallel;
  auto& t = s.training;
  if (p.zero == 3 && d.coin()) {
    auto& z = p.sharding;
    const double units[] = {1, 1, 2, 0.25};
    z.unit_layers = units[d.below(4)];
    z.reshard_after_forward = d.coin();
    z.regather_on_recompute = d.coin();
    z.reduce_bytes = d.coin() ? 2 : 4;
    z.prefetch_units = static_cast<int>(d.below(4));
    z.backward_prefetch = d.coin();
    z.max_live_params = d.coin() ? 0.0 : 2e8;
    z.sync = d.below(4) == 0;
    z.overhead_s = d.coin() ? 1e-4 : 0.0;
    z.overhead_per_rank_s = d.coin() ? 1e-5 : 0.0;
  }
  switch (d.below(6)) {  // uneven pipeline splits
    case 0:
      if (p.pp > 2) {
        p.first_stage_layers = 1 + static_cast<int>(d.below(3));
        p.last_stage_layers = 1 + static_cast<int>(d.below(3));
      }
      break;
    case 1:
      p.embedding_in_split = d.coin();
      p.loss_in_split = !p.embedding_in_split || d.coin();
      break;
    case 2: {
      const int chunks = p.pp * p.vpp;
      if (chunks > 1 && s.model.layers > chunks) {
        std::vector<int> layers(static_cast<std::size_t>(chunks), 1);
        for (int left = s.model.layers - chunks; left > 0; --left) ++layers[d.below(static_cast<std::uint64_t>(chunks))];
        p.stage_layers = layers;
      }
      break;
    }
    default: break;
  }
  if (d.below(4) == 0) t.flash_attention = false;
  if (d.below(4) == 0 && s.hardware.gpu.peak_flops[core::index(core::Precision::fp8)] > 0)
    t.precision = core::Precision::fp8;
  if (d.below(4) == 0) s.hardware.gpu.comm_sms = 0;
  if (d.below(6) == 0) p.placement = {core::Dim::tp, core::Dim::dp, core::Dim::cp, core::Dim::ep, core::Dim::pp};
  t.overlap.zero3_prefetch = d.below(5) != 0;
}

std::vector<Case> sampled(int per_base) {
  struct Base {
    const char* label;
    core::Scenario s;
  };
  std::vector<Base> bases;
  bases.push_back({"gpt3-175b/1024 a100", with("default.yaml", nullptr, nullptr, 0)});
  bases.push_back({"llama3-405b/16384 h100", with("meta-llama3-405b-16k-h100.yaml", nullptr, nullptr, 0)});
  bases.push_back({"llama3-70b fp8/64 h100", with("nemo-llama3-70b-h100-fp8.yaml", nullptr, nullptr, 0)});
  bases.push_back({"mixtral-8x7b/64 h100", with("default.yaml", "mixtral-8x7b", "dgx-h100", 64)});
  bases.push_back({"llama2-13b/144 gb200", with("default.yaml", "llama2-13b", "gb200-nvl72", 144)});
  bases.push_back({"bloom-176b/384 a100", with("bloom-176b-384.yaml", nullptr, nullptr, 0)});
  golden::Draw d{20261124};
  std::vector<Case> out;
  for (auto& b : bases) {
    if (b.s.model.moe) b.s.training.global_batch = 256;
    const planner::Space space(b.s, planner::SearchSpace{});
    int found = 0;
    for (int trial = 0; trial < 200000 && found < per_base; ++trial) {
      const auto c = space.at(d.below(space.size()));
      if (!c) continue;
      core::Scenario s = b.s;
      planner::apply(*c, s);
      draw_switches(d, s);
      if (!core::check(s).empty()) continue;
      std::ostringstream name;
      const auto& p = s.parallel;
      const auto& z = p.sharding;
      name << "sample " << out.size() << ": " << b.label << " " << planner::label(*c) << " "
           << core::name(s.training.precision) << (s.training.flash_attention ? "" : " no-flash") << " comm_sms "
           << s.hardware.gpu.comm_sms << " prefetch " << s.training.overlap.zero3_prefetch << " split "
           << core::name(core::pipeline_split(s).method) << " placement " << core::name(p.placement[1]);
      if (p.zero == 3)
        name << " unit " << z.unit_layers << " reshard " << z.reshard_after_forward << " regather "
             << z.regather_on_recompute << " reduce " << z.reduce_bytes << " prefetch " << z.prefetch_units
             << z.backward_prefetch << " live " << z.max_live_params << " sync " << z.sync << " overhead "
             << z.overhead_s << "+" << z.overhead_per_rank_s;
      out.push_back(Case{name.str(), std::move(s)});
      ++found;
    }
  }
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& f : golden::scenario_files(kRoot)) cases.push_back(Case{"scenario " + f, io::load_scenario(kRoot + "/scenarios/" + f)});
  for (auto& rec : io::load_dataset(kRoot + "/scenarios/published/dataset.yaml"))
    if (rec.scenario) cases.push_back(Case{"record " + rec.name, std::move(*rec.scenario)});
  for (auto& c : sampled(60)) cases.push_back(std::move(c));
  return cases;
}

}  // namespace

TEST_CASE("analytic: every report, plan and peak equals the golden file bit for bit", "[analytic][golden]") {
  const std::vector<Case> cases = all_cases();
  // 12 shipped scenarios, 57 modelled records, 6 bases x 60 layouts: a sampler that lost its
  // layouts would pin next to nothing
  REQUIRE(cases.size() >= 420);
  std::vector<std::string> got;
  got.reserve(cases.size());
  for (const auto& c : cases) got.push_back(digest(c));
  golden::compare_or_update(kGolden,
                            "# analytic::evaluate() digests: tests/analytic/golden_evaluate_test.cpp, regenerated by\n"
                            "# PTDSIM_UPDATE_GOLDEN=1 ./build/bin/ptdsim_analytic_golden_tests (docs/performance.md)\n",
                            got);
}

// step_work() says which stages it copied from the stage before (StepWork::copied_previous), and the
// planner shares those stages' plans without comparing their work. A stage marked that is not a copy
// would share another stage's segments: the plan would differ from the one built by comparing.
TEST_CASE("analytic: the plan is the same whether the planner trusts step_work's copies or compares",
          "[analytic][plan][golden]") {
  const std::vector<Case> cases = all_cases();
  REQUIRE(cases.size() >= 420);
  int copied = 0;
  for (const auto& c : cases) {
    INFO(c.name);
    analytic::StepWork work = analytic::step_work(c.scenario);
    const analytic::PlanOptions options = analytic::plan_options(c.scenario);
    REQUIRE(work.copied_previous.size() == work.stages.size());
    for (auto x : work.copied_previous) copied += x;
    const std::string trusted = golden::plan_text(analytic::plan_from_work(work, options));
    work.copied_previous.clear();
    CHECK(golden::plan_text(analytic::plan_from_work(work, options)) == trusted);
  }
  CHECK(copied > 1000);  // (the cases have copies to trust)
}

// make_step() builds a Step into storage another scenario used (the sweep's workers, the threads'
// kept steps), with the split and layer costs computed or lent. Each of its parts must be what the
// functions it calls give on their own for this scenario: the groups one by one, the work, the plan
// (every segment and collective) and the analytic report (its JSON, to the last bit). A part left
// over from the previous scenario, or a lent split or cost read in place of the step's own, shows
// as a different plan or report on one of the 420 cases.
TEST_CASE("analytic: a Step built into used storage, with its split and costs lent or not, holds what each part's function gives",
          "[analytic][step][golden]") {
  const std::vector<Case> cases = all_cases();
  REQUIRE(cases.size() >= 420);
  auto same_group = [](const analytic::Group& a, const analytic::Group& b) {
    return a.ranks == b.ranks && a.scope == b.scope && a.ranks_per_node == b.ranks_per_node;
  };
  analytic::Step reused, lent;  // built case after case
  for (const auto& c : cases) {
    INFO(c.name);
    const core::Scenario& s = c.scenario;
    analytic::make_step(s, reused);
    const analytic::PipelineLayers split = analytic::pipeline_layers(s);
    const analytic::LayerCosts costs = analytic::layer_costs(s);
    analytic::make_step(s, lent, analytic::StepParts::plan, analytic::StepLent{&split, &costs});
    CHECK(lent.split == &split);
    CHECK(lent.costs == &costs);

    const analytic::StepGroups& g = reused.groups;
    CHECK(same_group(g.tp, analytic::group_of(s, core::Dim::tp)));
    CHECK(same_group(g.cp, analytic::group_of(s, core::Dim::cp)));
    CHECK(same_group(g.ep, analytic::group_of(s, core::Dim::ep)));
    CHECK(same_group(g.pp, analytic::group_of(s, core::Dim::pp)));
    CHECK(same_group(g.pp_hop, analytic::pp_hop_group(s)));
    CHECK(same_group(g.dp, analytic::grad_group(s, false)));
    CHECK(same_group(g.expert_dp, s.model.moe ? analytic::grad_group(s, true) : g.dp));
    if (s.parallel.zero >= 3) {
      CHECK(same_group(g.shard, analytic::sharding_group(s, false)));
      CHECK(same_group(g.replica, analytic::sharding_group(s, true)));
    }

    const std::string plan = golden::plan_text(analytic::plan_from_work(analytic::step_work(s), analytic::plan_options(s)));
    CHECK(golden::plan_text(reused.plan) == plan);
    CHECK(golden::plan_text(lent.plan) == plan);
    const std::string report = golden::report_digest(analytic::evaluate(s));
    CHECK(golden::report_digest(analytic::evaluate(reused)) == report);
    CHECK(golden::report_digest(analytic::evaluate(lent)) == report);
  }
}
