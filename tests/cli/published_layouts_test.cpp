// The sweep against published practice (issue "ptdsim sweep", item 6; docs/planner.md "Against
// published practice"). For every shipped scenario the sweep searches the PTD degrees (tp, pp, dp,
// vpp, micro-batch) with the features the published run used pinned (ZeRO stage, recomputation,
// sequence parallel, schedule family, cp): the published degrees must rank near the top of that
// search, and the best found can only be at least as fast. Which features to use is a separate
// question the full space answers; this test guards the choice of degrees.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/core/units.hpp"

namespace fs = std::filesystem;
using namespace ptdsim;

namespace {
constexpr int kTop = 20;          // "near the top": among the 20 best of its search
constexpr double kMaxGap = 0.10;  // and within 10% of the best step time

// Published layouts the memory model puts over the GPU's capacity, each with the most it may be over
// (docs/validation.md "Memory"): Llama 3 405B as Meta ran it is 1.7 GiB (2%) over 80 GiB, the
// process overhead counted at its upper end (a CUDA 11 context without lazy module loading, NCCL
// buffers of every channel) where Meta's 2024 stack loaded kernels lazily. Not ranked: a layout that
// does not fit is no candidate.
struct KnownOver {
  const char* file;
  double most_over_gib;
};
constexpr KnownOver kKnownOver[] = {{"meta-llama3-405b-16k-h100.yaml", 2.0}};
}  // namespace

TEST_CASE("published layouts rank near the top of the sweep over their degrees", "[planner][published]") {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(PTDSIM_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 11);
  for (const auto& f : files) {
    INFO(f);
    const core::Scenario base = io::load_scenario(f);
    const auto known = std::find_if(std::begin(kKnownOver), std::end(kKnownOver),
                                    [&](const KnownOver& k) { return fs::path(f).filename() == k.file; });
    if (known != std::end(kKnownOver)) {
      const core::Report r = sim::simulate(base);
      CHECK_FALSE(r.fits);  // when it fits again, it belongs with the others
      CHECK((r.peak_bytes - r.capacity_bytes) / core::kGiB <= known->most_over_gib);
      continue;
    }
    const auto& p = base.parallel;
    planner::SearchSpace b;
    b.zero = {p.zero};
    b.recompute = {base.training.recompute};
    b.sequence_parallel = {p.sequence_parallel};
    b.schedule = {p.schedule};
    b.cp = {p.cp};
    b.ep = {p.ep};
    planner::SweepOptions o;
    o.top = 1;
    o.rank_limit = 1 << 20;  // these searches are small: the exact rank, never a range
    const auto r = planner::sweep(base, planner::Space(base, b), o);
    REQUIRE(!r.results.empty());
    REQUIRE(r.scenario);
    const auto& sr = *r.scenario;
    INFO(sr.why_not);
    REQUIRE(sr.ranked);  // the published layout is in the space, legal and fits
    REQUIRE_FALSE(sr.rank_is_lower_bound);
    const double published = sr.report.step_s;
    const double best = r.results.front().report.step_s;
    INFO("published rank " << sr.rank << " of " << r.feasible << ", " << published << " s; best " << best
                           << " s (" << planner::label(r.results.front().candidate) << ")");
    CHECK(best <= published * (1 + 1e-12));
    CHECK(sr.rank <= static_cast<std::uint64_t>(kTop));
    CHECK(published <= best * (1 + kMaxGap));
  }
}
