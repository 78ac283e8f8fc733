#include <catch2/catch.hpp>

#include "ptdsim/io/study.hpp"
#include "ptdsim/report/study.hpp"
#include "ptdsim/study/study.hpp"

// Running a study (docs/study.md): each point is the planner's sweep of the base with the point's
// overrides, so a hardware knob moves the answer the way the hardware would; the records do not
// depend on how the points were spread over threads or shards.
using namespace ptdsim;

namespace {

const std::string kDir = PTDSIM_TEST_DATA "/study";

io::StudySpec spec_of(const std::string& text) { return io::load_study_from_string(text, "s.yaml", kDir); }

std::vector<io::StudyRecord> run(const io::StudySpec& s, int threads, int shard = 1, int count = 1) {
  study::RunOptions o;
  o.threads = threads;
  o.shard = shard;
  o.count = count;
  return study::run_study(s, o);
}

}  // namespace

TEST_CASE("study: more NIC bandwidth never slows the best layout", "[study][run]") {
  // Every candidate's step is a sum and max of transfer times that fall as the bandwidth rises,
  // the candidates and their memory are the same: the best can only get faster (or stay).
  const auto s = spec_of(
      "base: llama8b.yaml\n"
      "vary:\n"
      "  model: [llama3-8b, llama2-7b]\n"
      "  cluster.gpus: [16, 64]\n"
      "  hardware.network.bandwidth_gbs: [6.25, 12.5, 25, 50, 100]\n");
  const auto records = run(s, 2);
  REQUIRE(records.size() == 20);
  for (std::size_t i = 0; i < records.size(); i += 5)
    for (std::size_t k = i; k + 1 < i + 5; ++k) {
      INFO("points " << k << " and " << k + 1);
      REQUIRE(!records[k].layouts.empty());
      REQUIRE(!records[k + 1].layouts.empty());
      CHECK(records[k + 1].layouts[0].step_s <= records[k].layouts[0].step_s);
    }
  // and it matters somewhere: at 64 GPUs data parallelism crosses nodes
  CHECK(records[19].layouts[0].step_s < records[15].layouts[0].step_s);
}

TEST_CASE("study: more HBM never makes a fitting point unfit, nor slower", "[study][run]") {
  // More capacity keeps every layout that fitted and may admit more: the best cannot get slower.
  const auto s = spec_of(
      "base: llama8b.yaml\n"
      "vary:\n"
      "  cluster.gpus: [8, 16]\n"
      "  training.global_batch: [16, 64]\n"
      "  hardware.gpu.memory_gib: [16, 24, 40, 80, 141]\n"
      "degrees: {max_micro_batch: 4}\n");
  const auto records = run(s, 2);
  REQUIRE(records.size() == 20);
  int unfit = 0;
  for (std::size_t i = 0; i < records.size(); i += 5)
    for (std::size_t k = i; k + 1 < i + 5; ++k) {
      INFO("points " << k << " and " << k + 1 << ": " << records[k].failed);
      if (records[k].layouts.empty()) {
        ++unfit;
        continue;
      }
      REQUIRE(!records[k + 1].layouts.empty());
      CHECK(records[k + 1].layouts[0].step_s <= records[k].layouts[0].step_s);
    }
  // the smallest memory leaves some point with no layout: the test sees both sides
  CHECK(unfit > 0);
  INFO(records[0].failed);
  CHECK(records[0].failed.find("no layout fits") == 0);
}

TEST_CASE("study: the records are the same on 1 or 3 threads and over 3 shards", "[study][run]") {
  const auto s = spec_of(
      "base: llama8b.yaml\n"
      "vary:\n"
      "  cluster.gpus: 16..64 x2\n"
      "  hardware.network.bandwidth_gbs: [25, 50]\n"
      "  training.global_batch: [64, 96]\n"
      "top: 3\n");
  const auto one = run(s, 1);
  REQUIRE(one.size() == 12);
  const auto three = run(s, 3);
  CHECK(report::study_csv(s, three) == report::study_csv(s, one));
  std::vector<io::ShardFile> shards;
  std::vector<std::string> names;
  for (int k = 1; k <= 3; ++k) {
    io::ShardFile f;
    f.hash = s.hash;
    f.points = s.points();
    f.shard = k;
    f.count = 3;
    f.records = run(s, 2, k, 3);
    for (const auto& r : f.records) CHECK(io::shard_of(r.point, 3) == k);
    shards.push_back(std::move(f));
    names.push_back("shard" + std::to_string(k));
  }
  const auto merged = study::merge_shards(s, shards, names);
  CHECK(report::study_json(s, merged) == report::study_json(s, one));
  // a shard missing, or given twice, is refused by name
  shards.pop_back();
  names.pop_back();
  CHECK_THROWS_WITH(study::merge_shards(s, shards, names), Catch::Contains("shard 3/3 is missing"));
}

TEST_CASE("study: a point that cannot run is a row with its reason", "[study][run]") {
  // 8 kv heads cannot split over tp 16: the pinned tp leaves no layout
  const auto s = spec_of(
      "base: llama8b.yaml\n"
      "set: {parallel.tp: 16}\n"
      "vary: {cluster.gpus: [16]}\n");
  const auto r = run(s, 1);
  REQUIRE(r.size() == 1);
  CHECK(r[0].layouts.empty());
  CHECK(r[0].failed.find("no layout") == 0);
  // hardware the model cannot train on at this precision (A100 has no fp8 rate): the point's reason
  const auto fp8 = spec_of(
      "base: llama8b.yaml\n"
      "set: {training.precision: fp8}\n"
      "vary: {hardware: [dgx-a100-80g, dgx-h100]}\n");
  const auto f = run(fp8, 1);
  REQUIRE(f.size() == 2);
  CHECK(f[0].failed.find("fp8 has no peak rate on A100") != std::string::npos);
  CHECK(!f[1].layouts.empty());
}

TEST_CASE("study: the page is self-contained and draws every point", "[study][html]") {
  const auto s = spec_of(
      "base: llama8b.yaml\n"
      "vary:\n"
      "  cluster.gpus: [16, 32]\n"
      "  hardware.network.bandwidth_gbs: [25, 50]\n"
      "  hardware.gpu.memory_gib: [2, 80]\n");
  const auto records = run(s, 2);
  const std::string page = report::study_html(s, records, report::PageInfo{"test", "s.yaml"});
  // nothing fetched, no script (docs/report.md "Self-contained")
  CHECK(page.find("http") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  for (const char* id : {"id=\"tornado\"", "id=\"pareto\"", "id=\"heatmap\"", "id=\"points-table\""})
    CHECK(page.find(id) != std::string::npos);
  // 2 GiB fits no layout of an 8B model: those 4 points are rows with their reason, not dots
  std::size_t dots = 0;
  for (auto at = page.find("<circle"); at != std::string::npos; at = page.find("<circle", at + 1)) ++dots;
  CHECK(dots == 4);
  CHECK(page.find("no layout fits") != std::string::npos);
}
