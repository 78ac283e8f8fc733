#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <random>
#include <regex>
#include <set>
#include <string>

#include "ptdsim/core/units.hpp"
#include "ptdsim/report/html.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/validation/validate.hpp"

using namespace ptdsim;

namespace {

const report::PageInfo kInfo{"0.0-test", "in.yaml"};

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The contract of every page (docs/report.md "Self-contained"): no URL scheme, nothing loaded from
// elsewhere (no src= at all, href= only to an anchor of the page), no script; every chart has its
// title and an axis label; the SVG elements are balanced.
void check_self_contained(const std::string& page) {
  const std::string l = lower(page);
  CHECK(l.find("http") == std::string::npos);
  CHECK(l.find("src=") == std::string::npos);
  CHECK(l.find("<script") == std::string::npos);
  CHECK(l.find("@import") == std::string::npos);
  const std::regex href(R"(href\s*=\s*["']?([^"'\s>]*))");
  for (auto it = std::sregex_iterator(l.begin(), l.end(), href); it != std::sregex_iterator(); ++it)
    CHECK((*it)[1].str().rfind('#', 0) == 0);
  const std::regex url(R"(url\(\s*([^)\s]*))");
  for (auto it = std::sregex_iterator(l.begin(), l.end(), url); it != std::sregex_iterator(); ++it)
    CHECK((*it)[1].str().rfind('#', 0) == 0);
  CHECK(occurrences(page, "<svg") == occurrences(page, "</svg>"));
  CHECK(occurrences(page, "<svg") == occurrences(page, "class=\"chart-title\""));
  // each chart's part of the page holds an axis label
  for (auto at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) {
    const auto end = page.find("</svg>", at);
    CHECK(page.substr(at, end - at).find("class=\"axis-label\"") != std::string::npos);
  }
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("@media print") != std::string::npos);
}

// One candidate row as the sweep streams it.
struct FakeRow {
  planner::Candidate c;
  core::Report r;
  const char* status = "pruned";
  planner::Row row() const { return planner::Row{c, status, 0.0, r}; }
};

FakeRow fake(int tp, int pp, double step_s, double peak_gib, bool fits = true, bool simulated = false) {
  FakeRow f;
  f.c.tp = tp;
  f.c.pp = pp;
  f.r.step_s = step_s;
  f.r.peak_bytes = peak_gib * core::kGiB;
  f.r.fits = fits;
  f.r.engine = simulated ? core::EngineKind::simulation : core::EngineKind::analytic;
  f.status = !fits ? "memory" : simulated ? "simulated" : "pruned";
  return f;
}

}  // namespace

TEST_CASE("io: the sweep collector keeps the best step per (tp, pp)", "[io][html]") {
  report::SweepCollector c;
  for (const auto& f : {fake(1, 2, 10.0, 50), fake(1, 2, 8.0, 70, true, true), fake(1, 2, 6.0, 90, false),
                        fake(2, 1, 5.0, 100, false), fake(2, 1, 7.0, 120, false)})
    c.add(f.row());
  REQUIRE(c.cells().size() == 2);
  const auto& a = c.cells().at({1, 2});
  CHECK(a.rows == 3);
  CHECK(a.fitting == 2);
  CHECK(a.best_step_s == 8.0);  // 6.0 is faster but does not fit
  CHECK(a.best_simulated);
  CHECK(a.best_peak_bytes == 70 * core::kGiB);
  CHECK(a.min_peak_bytes == 50 * core::kGiB);
  const auto& b = c.cells().at({2, 1});
  CHECK(b.fitting == 0);
  CHECK(b.min_peak_bytes == 100 * core::kGiB);  // what "does not fit" missed by
  CHECK(c.rows() == 5);
  CHECK(c.min_step_s() == 5.0);
  CHECK(c.max_step_s() == 10.0);
  // the front of the fitting rows: (50 GiB, 10 s) and (70 GiB, 8 s); the others do not fit
  const auto front = c.front();
  REQUIRE(front.size() == 2);
  CHECK(front[0].step_s == 10.0);
  CHECK(front[1].step_s == 8.0);
  CHECK(front[1].simulated);
  // every row lands in the cloud once: 2 fitting, 3 not
  auto total = [](const std::vector<std::uint32_t>& g) {
    std::uint64_t n = 0;
    for (auto v : g) n += v;
    return n;
  };
  CHECK(total(c.cloud(true)) == 2);
  CHECK(total(c.cloud(false)) == 3);
}

TEST_CASE("io: the sweep collector's front is the Pareto front of every fitting row", "[io][html]") {
  // rows in random order against the brute-force front: a row is on it when no other fitting row
  // has at most its memory and at most its time, one of them less (ties: the first row stays)
  std::mt19937_64 rng(19);
  std::uniform_int_distribution<int> peak(10, 80), step(1, 60), fit(0, 3);
  std::vector<FakeRow> rows;
  for (int i = 0; i < 3000; ++i) rows.push_back(fake(1, 1, step(rng) / 4.0, peak(rng), fit(rng) != 0));
  report::SweepCollector c;
  for (const auto& f : rows) c.add(f.row());
  std::vector<std::pair<double, double>> expected;  // (peak, step)
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& a = rows[i].r;
    if (!a.fits) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < rows.size() && !dominated; ++j) {
      const auto& b = rows[j].r;
      if (j == i || !b.fits) continue;
      const bool no_worse = b.peak_bytes <= a.peak_bytes && b.step_s <= a.step_s;
      const bool better = b.peak_bytes < a.peak_bytes || b.step_s < a.step_s;
      dominated = no_worse && (better || j < i);
    }
    if (!dominated) expected.emplace_back(a.peak_bytes, a.step_s);
  }
  std::sort(expected.begin(), expected.end());
  std::vector<std::pair<double, double>> got;
  for (const auto& p : c.front()) got.emplace_back(p.peak_bytes, p.step_s);
  CHECK(got == expected);
  CHECK(!got.empty());
}

TEST_CASE("io: a million rows cost the collector no more than a few", "[io][html]") {
  // memory is fixed by the grid and the (tp, pp) cells; the front holds at most one point per
  // distinct peak (here 200 values)
  report::SweepCollector c;
  const auto grid_size = c.cloud(true).size();
  FakeRow f = fake(1, 1, 1, 1);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000000; ++i) {
    f.c.tp = 1 << (i % 6);
    f.c.pp = 1 << ((i / 6) % 7);
    f.r.peak_bytes = (10 + static_cast<double>(rng() % 200)) * core::kGiB;
    f.r.step_s = 1 + static_cast<double>(rng() % 100000) / 1000;
    c.add(f.row());
  }
  CHECK(c.rows() == 1000000);
  CHECK(c.cells().size() == 6 * 7);
  CHECK(c.front().size() <= 200);
  CHECK(c.cloud(true).size() == grid_size);
}

TEST_CASE("io: the evaluate page draws the step, the memory and where the time goes", "[io][html]") {
  const core::Scenario s = io::load_scenario(PTDSIM_SOURCE_DIR "/scenarios/default.yaml");
  core::Timeline t;
  const core::Report r = sim::simulate(s, nullptr, &t);
  const std::string page = report::evaluate_html(r, t, kInfo);
  check_self_contained(page);
  for (const char* id : {"id=\"timeline\"", "id=\"memory\"", "id=\"shares\"", "id=\"inputs\"", "id=\"facts\"",
                         "id=\"communication\""})
    CHECK(page.find(id) != std::string::npos);
  // one bar per span of the timeline, in each chart it is drawn in (and within the fill's window)
  std::size_t bubbles = 0, critical = 0;
  for (const auto& sp : t.spans) {
    bubbles += sp.kind == "bubble";
    critical += sp.critical;
  }
  CHECK(occurrences(page, "class=\"span ") >= t.spans.size());
  // the critical path's bars: one path per chart, a rectangle (an "M") per critical span drawn
  std::size_t bars = 0;
  for (std::size_t at = page.find("<path d=\""); at != std::string::npos; at = page.find("<path d=\"", at + 1)) {
    const std::size_t end = page.find('"', at + 9);
    if (page.compare(end, 25, "\" class=\"critical-mark\"/>") == 0)
      bars += static_cast<std::size_t>(std::count(page.begin() + static_cast<std::ptrdiff_t>(at),
                                                  page.begin() + static_cast<std::ptrdiff_t>(end), 'M'));
  }
  CHECK(occurrences(page, "class=\"critical-mark\"") == 2);  // the whole step and the filling
  CHECK(bars >= critical);
  CHECK(occurrences(page, "class=\"span bubble\"") >= bubbles);
  // memory: one segment per non-zero part of each stage (the allocator's cache beyond the tensors
  // the last); one capacity line per chart with it
  std::size_t segments = 0;
  for (const auto& m : r.stages)
    for (double v : {m.weights, m.gradients, m.optimizer, m.activations, m.other(), m.reserved - m.allocated()})
      segments += v > 0;
  CHECK(occurrences(page, "class=\"bar seg-") == segments);
  CHECK(page.find(">capacity 80 GiB</text>") != std::string::npos);
  CHECK(page.find(">stage 0 compute</text>") != std::string::npos);
  CHECK(page.find("Sampled: the step has") != std::string::npos);  // 12k tasks: above the budget
}

TEST_CASE("io: the sweep page draws a cell per (tp, pp) and the front", "[io][html]") {
  const core::Scenario base = io::load_scenario(PTDSIM_TEST_DATA "/good/tiny.yaml");
  const planner::Space space(base, planner::SearchSpace{});
  report::SweepCollector rows;
  planner::SweepOptions opt;
  opt.threads = 1;
  opt.on_row = [&](const planner::Row& row) { rows.add(row); };
  const planner::SweepResult result = planner::sweep(base, space, opt);
  REQUIRE(!result.results.empty());
  const std::string page = report::sweep_html(base, result, rows, "time", kInfo);
  check_self_contained(page);
  std::set<int> tp, pp;
  for (const auto& [key, cell] : rows.cells()) tp.insert(key.first), pp.insert(key.second);
  CHECK(occurrences(page, "class=\"cell ") == tp.size() * pp.size());
  CHECK(occurrences(page, "class=\"cell fits best") == 1);
  CHECK(occurrences(page, "class=\"front\"") == 1);
  CHECK(occurrences(page, "class=\"front-point ") == rows.front().size());
  CHECK(occurrences(page, "class=\"ranked\"") == result.results.size());
  CHECK(occurrences(page, "<tr") == 1 + result.results.size() + 1 + 4 + result.rejected.size());
  CHECK(page.find("(best)") != std::string::npos);
}

TEST_CASE("io: the sweep page of an empty space says why it has no candidate", "[io][html]") {
  const core::Scenario base = io::load_scenario(PTDSIM_TEST_DATA "/good/tiny.yaml");
  planner::SearchSpace b;
  b.tp = planner::Choice{3};  // divides no power-of-two GPU count
  const planner::Space space(base, b);
  report::SweepCollector rows;
  planner::SweepOptions opt;
  opt.threads = 1;
  const planner::SweepResult result = planner::sweep(base, space, opt);
  REQUIRE(result.evaluated == 0);
  const std::string page = report::sweep_html(base, result, rows, "time", kInfo);
  check_self_contained(page);
  CHECK(page.find("No candidate: --tp: no value of 3 divides both the ") != std::string::npos);
  CHECK(page.find("No layout fits") == std::string::npos);
}

TEST_CASE("io: the validate page scores each record and lists those not modelled", "[io][html]") {
  const auto records = io::load_dataset_from_string(R"(
- name: small
  source: "Test A, table 1"
  split: fit
  scenario: tiny.yaml
  measured: {step_s: 1.0}
- name: small-again
  source: "Test B at https://example.org/table, row 2"
  scenario: tiny.yaml
  measured: {step_s: 0.01}
- name: headline
  source: "Test A, abstract"
  not_modelled: "no layout <given>"
  measured: {tflops_per_gpu: 100}
)",
                                                    "in.yaml", PTDSIM_TEST_DATA "/good");
  const auto summary = validation::validate(records);
  const std::string page = report::validate_html(summary, records, kInfo);
  check_self_contained(page);  // the source's URL included: its scheme is a character reference
  CHECK(occurrences(page, "class=\"point split-fit\"") == 1 + 1);  // one record, one legend marker
  CHECK(occurrences(page, "class=\"point split-holdout\"") == 1 + 1);
  CHECK(page.find("class=\"band\"") != std::string::npos);
  CHECK(page.find("class=\"identity\"") != std::string::npos);
  // per source group: Test A and Test B; per size: the tiny model is under 10 B
  CHECK(page.find(">Test A</text>") != std::string::npos);
  CHECK(page.find(">Test B at &#104;ttps://example.org/table</text>") != std::string::npos);
  CHECK(page.find(">&lt; 10 B parameters</text>") != std::string::npos);
  CHECK(page.find("<td>no layout &lt;given&gt;</td>") != std::string::npos);
}

TEST_CASE("io: names from the input cannot add markup to a page", "[io][html]") {
  core::Scenario s = io::load_scenario(PTDSIM_TEST_DATA "/good/tiny.yaml");
  s.name = "<script>alert(1)</script> \"quoted\" HTTPS://evil.example";
  core::Timeline t;
  const core::Report r = sim::simulate(s, nullptr, &t);
  const std::string page = report::evaluate_html(r, t, report::PageInfo{"1", "x\" onload=\"y"});
  check_self_contained(page);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot; &#72;TTPS://evil.example") !=
        std::string::npos);
  CHECK(page.find("onload=\"") == std::string::npos);
}
