// The sweep's results pinned bit for bit (issue 18: "results identical"; `ptdsim sweep` output for
// the same inputs must not change): the ranked layouts with every number of their reports, the
// counts by rejection reason, the simulated and pruned counts and the scenario layout's rank, for the
// full spaces of scenarios/default.yaml and scenarios/meta-llama3-405b-16k-h100.yaml and four smaller
// sweeps that take the other objectives, --min-free-gib, --search and --tokens; for three of them
// every CSV row (index, status, lower bound, the analytic or simulated numbers). And the sweep's
// keys, step_lower_bound(), schedule_lower_bound() and peak_memory_bytes(), with
// busiest_stage_compute(), on candidates drawn from seven spaces. Files: tests/data/golden/planner_sweep_full.txt,
// planner_sweep.txt and planner_bound.txt.
//
// Regenerate (only for an intended change of results, and say which in the commit):
//   PTDSIM_UPDATE_GOLDEN=1 ./build/bin/ptdsim_planner_golden_tests
#include <algorithm>
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "../common/golden_digest.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"

using namespace ptdsim;
namespace golden = ptdsim::testing::golden;

namespace {

const std::string kRoot = PTDSIM_SOURCE_DIR;
const std::string kData = std::string(PTDSIM_TEST_DATA) + "/golden/";

core::Scenario scenario(const std::string& file, const char* model = nullptr, const char* hardware = nullptr,
                        int gpus = 0) {
  core::Scenario s = io::load_scenario(kRoot + "/scenarios/" + file);
  if (model) s.model = io::load_model(kRoot + "/models/" + model + ".yaml");
  if (hardware) s.hardware = io::load_hardware(kRoot + "/hardware/" + hardware + ".yaml");
  if (gpus > 0) s.gpus = gpus;
  return s;
}

struct SweepCase {
  std::string name;
  core::Scenario base;
  planner::SearchSpace bounds;
  planner::SweepOptions options;
  bool rows = false;  // pin every CSV row too
};

// Every number the sweep prints, in the order it prints them.
void digest(const SweepCase& c, std::vector<std::string>& out) {
  planner::SweepOptions o = c.options;
  std::ostringstream rows;
  std::uint64_t row_count = 0;
  if (c.rows)
    o.on_row = [&](const planner::Row& r) {
      ++row_count;
      rows << r.candidate.index << ' ' << r.status << ' ' << golden::exact(r.lower_bound_s) << ' '
           << golden::exact(r.report.step_s) << ' ' << golden::exact(r.report.peak_bytes) << ' '
           << golden::exact(r.report.compute_s) << ' ' << golden::exact(r.report.mfu) << '\n';
    };
  const planner::Space space(c.base, c.bounds);
  const planner::SweepResult r = planner::sweep(c.base, space, o);
  const std::string head = "sweep " + c.name + "\t";
  std::ostringstream counts;
  counts << "gpus=" << r.gpus << " evaluated=" << r.evaluated << " feasible=" << r.feasible
         << " simulated=" << r.simulated << " pruned=" << r.pruned << " rejected=";
  for (const auto& [reason, n] : r.rejected) counts << reason << ':' << n << ',';
  out.push_back(head + counts.str());
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const auto& x = r.results[i];
    const std::string tie = x.near_tie_of >= 0 ? " (tie)" : "";
    out.push_back(head + "#" + std::to_string(x.rank) + tie + " " + std::to_string(x.candidate.index) + " " +
                  planner::label(x.candidate) + " step_s=" + golden::full(x.report.step_s) +
                  " report=" + golden::report_digest(x.report) + " because=" + x.slower_because);
  }
  if (r.scenario) {
    const auto& sr = *r.scenario;
    if (!sr.ranked) {
      out.push_back(head + "scenario not ranked: " + sr.why_not);
    } else {
      std::ostringstream l;
      l << "scenario " << sr.candidate.index << " " << planner::label(sr.candidate) << " rank=" << sr.rank
        << " lower_bound=" << sr.rank_is_lower_bound << " unresolved=" << sr.unresolved
        << " simulated=" << sr.simulated << " step_s=" << golden::full(sr.report.step_s)
        << " report=" << golden::report_digest(sr.report) << " because=" << sr.slower_because;
      out.push_back(head + l.str());
    }
  }
  if (c.rows)
    out.push_back(head + "rows=" + std::to_string(row_count) + " digest=" + golden::hex(golden::fnv1a(rows.str())));
}

// `ptdsim sweep scenarios/default.yaml` and the 405B sweep of the issue: the full spaces.
std::vector<SweepCase> full_sweeps() {
  return {{"default.yaml", scenario("default.yaml"), {}, {}, false},
          {"meta-llama3-405b-16k-h100.yaml", scenario("meta-llama3-405b-16k-h100.yaml"), {}, {}, false}};
}

std::vector<SweepCase> modest_sweeps() {
  std::vector<SweepCase> out;
  {
    // a modest full space, every CSV row
    SweepCase c{"korthikanti-175b-seqsel.yaml", scenario("korthikanti-175b-seqsel.yaml"), {}, {}, true};
    out.push_back(c);
  }
  {
    // --objective memory --min-free-gib 10 --top 5 on H100 with kernel tables and FP8
    SweepCase c{"nemo-llama3-70b-h100-fp8.yaml memory", scenario("nemo-llama3-70b-h100-fp8.yaml"), {}, {}, true};
    c.options.objective = planner::Objective::memory;
    c.options.min_free_bytes = 10 * core::kGiB;
    c.options.top = 5;
    out.push_back(c);
  }
  {
    // an MoE model: --objective energy --search overlap.tp,overlap.dp --max-cp 2 --max-pp 4
    // --max-micro-batch 2 --top 5
    SweepCase c{"mixtral-8x7b 64 h100 energy", scenario("default.yaml", "mixtral-8x7b", "dgx-h100", 64), {}, {}, true};
    c.base.training.global_batch = 256;
    planner::search_switches({"overlap.tp", "overlap.dp"}, c.bounds);
    c.bounds.max_cp = 2;
    c.bounds.max_pp = 4;
    c.bounds.max_micro_batch = 2;
    c.options.objective = planner::Objective::energy;
    c.options.top = 5;
    out.push_back(c);
  }
  {
    // --objective mfu --tokens 1T --max-micro-batch 1 --max-cp 2 --tp 4,8 --rank-limit 400 on 2304 H100
    SweepCase c{"mcore-gpt-177b-h100.yaml mfu", scenario("mcore-gpt-177b-h100.yaml"), {}, {}, false};
    c.base.training.tokens = 1e12;
    c.bounds.max_micro_batch = 1;
    c.bounds.max_cp = 2;
    c.bounds.tp = {4, 8};
    c.options.objective = planner::Objective::mfu;
    c.options.rank_limit = 400;
    out.push_back(c);
  }
  return out;
}

// The sweep's analytic keys of candidates drawn from a space, as tier 1 computes them.
void keys(const std::string& name, const core::Scenario& base, int count, golden::Draw& d, std::vector<std::string>& out) {
  const planner::Space space(base, planner::SearchSpace{});
  int found = 0;
  for (int trial = 0; trial < 200000 && found < count; ++trial) {
    const auto c = space.at(d.below(space.size()));
    if (!c) continue;
    core::Scenario s = base;
    s.gpus = space.gpus();
    planner::apply(*c, s);
    if (!core::check(s).empty()) continue;  // the sweep's counts pin the rejections
    ++found;
    const std::string head = name + " " + planner::label(*c) + "\t";
    const double peak = analytic::peak_memory_bytes(s);
    const analytic::StepPlan plan = analytic::plan_step(s);
    out.push_back(head + "peak=" + golden::exact(peak) + " bound=" + golden::full(planner::step_lower_bound(plan)) +
                  " schedule=" + golden::full(planner::schedule_lower_bound(plan)) +
                  " busiest=" + golden::exact(planner::busiest_stage_compute(plan)));
  }
}

}  // namespace

TEST_CASE("planner: the full sweeps of GPT-3 175B and Llama 3 405B equal the golden file bit for bit",
          "[planner][golden]") {
  std::vector<std::string> got;
  for (const auto& c : full_sweeps()) digest(c, got);
  // per sweep: the counts, the top 10 rows with their near-ties, the scenario's layout
  REQUIRE(std::count_if(got.begin(), got.end(), [](const std::string& l) {
            return l.find("\t#") != std::string::npos && l.find("(tie)") == std::string::npos;
          }) == 20);
  golden::compare_or_update(kData + "planner_sweep_full.txt",
                            "# planner::sweep() results: tests/planner/golden_sweep_test.cpp, regenerated by\n"
                            "# PTDSIM_UPDATE_GOLDEN=1 ./build/bin/ptdsim_planner_golden_tests (docs/performance.md)\n",
                            got);
}

TEST_CASE("planner: sweep results and rows equal the golden file bit for bit", "[planner][golden]") {
  std::vector<std::string> got;
  for (const auto& c : modest_sweeps()) digest(c, got);
  REQUIRE(got.size() >= 30);
  golden::compare_or_update(kData + "planner_sweep.txt",
                            "# planner::sweep() results: tests/planner/golden_sweep_test.cpp, regenerated by\n"
                            "# PTDSIM_UPDATE_GOLDEN=1 ./build/bin/ptdsim_planner_golden_tests (docs/performance.md)\n",
                            got);
}

TEST_CASE("planner: lower bounds and peaks of sampled candidates equal the golden file bit for bit",
          "[planner][golden]") {
  golden::Draw d{20261125};
  std::vector<std::string> got;
  core::Scenario mixtral = scenario("default.yaml", "mixtral-8x7b", "dgx-h100", 64);
  mixtral.training.global_batch = 256;
  keys("gpt3-175b/1024", scenario("default.yaml"), 80, d, got);
  keys("llama3-405b/16384", scenario("meta-llama3-405b-16k-h100.yaml"), 80, d, got);
  keys("llama3-70b-fp8/64", scenario("nemo-llama3-70b-h100-fp8.yaml"), 80, d, got);
  keys("mixtral-8x7b/64", mixtral, 80, d, got);
  keys("llama2-13b/144 gb200", scenario("default.yaml", "llama2-13b", "gb200-nvl72", 144), 80, d, got);
  keys("bloom-176b/384", scenario("bloom-176b-384.yaml"), 80, d, got);
  keys("1t/3072", scenario("narayanan-1t.yaml"), 80, d, got);
  REQUIRE(got.size() == 560);
  golden::compare_or_update(kData + "planner_bound.txt",
                            "# step_lower_bound(), schedule_lower_bound(), peak_memory_bytes(), busiest_stage_compute():\n"
                            "# tests/planner/golden_sweep_test.cpp, regenerated by PTDSIM_UPDATE_GOLDEN=1\n"
                            "# ./build/bin/ptdsim_planner_golden_tests\n",
                            got);
}
