#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ptdsim/core/error.hpp"
#include "ptdsim/io/study.hpp"

// The study file (docs/study.md "The study file"): values, ranges, zip, the grid's order, the
// positions of its errors; the records and the journal a run resumes from.
using namespace ptdsim;

namespace {

const std::string kDir = PTDSIM_TEST_DATA "/study";

io::StudySpec study(const std::string& vary_and_more) {
  return io::load_study_from_string("base: llama8b.yaml\n" + vary_and_more, "s.yaml", kDir);
}

std::vector<std::string> values(const io::StudyKnob& k) {
  std::vector<std::string> out;
  for (const auto& v : k.values) out.push_back(v.value);
  return out;
}

std::string message(const std::string& text) {
  try {
    (void)io::load_study_from_string(text, "s.yaml", kDir);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("study: lists and ranges expand to the values written", "[study][file]") {
  const auto s = study(
      "vary:\n"
      "  cluster.gpus: 1024..16384 x2\n"          // 1024 * 2^k up to 16384: 5 values
      "  hardware.network.bandwidth_gbs: [12.5, 25..50 +12.5]\n"  // 12.5, then 25, 37.5, 50
      "  training.seq_len: 4096\n");
  REQUIRE(s.vary.size() == 3);
  CHECK(values(s.vary[0]) == std::vector<std::string>{"1024", "2048", "4096", "8192", "16384"});
  CHECK(values(s.vary[1]) == std::vector<std::string>{"12.5", "25", "37.5", "50"});
  CHECK(values(s.vary[2]) == std::vector<std::string>{"4096"});
  CHECK(s.points() == 5 * 4 * 1);
  CHECK(s.objective == "time");
  CHECK(s.top == 1);
  // a value from a range carries the range's position
  REQUIRE(s.vary[0].values[3].origin);
  CHECK(s.vary[0].values[3].origin->line == 3);
  CHECK(s.vary[0].values[3].origin->column == 17);
}

TEST_CASE("study: the grid runs the last key fastest, zipped keys together", "[study][file]") {
  const auto s = study(
      "vary:\n"
      "  cluster.gpus: [16, 32, 64]\n"
      "  hardware.network.bandwidth_gbs: [25, 50]\n"
      "  hardware.gpu.memory_gib: [40, 80, 141]\n"
      "zip: [cluster.gpus, hardware.gpu.memory_gib]\n");
  // two dimensions: (gpus, memory) zipped, 3 values; bandwidth, 2
  CHECK(s.points() == 6);
  CHECK(s.heatmap.empty());
  const auto p = s.point(3);  // 3 = 1*2 + 1: the second (gpus, memory), the second bandwidth
  CHECK(p.value == std::vector<std::size_t>{1, 1, 1});
  const auto o = s.overrides(s.point(4));  // 4 = 2*2 + 0
  REQUIRE(o.size() == 3);
  CHECK(o[0].value == "64");
  CHECK(o[1].value == "25");
  CHECK(o[2].value == "141");
}

TEST_CASE("study: several bases are the grid's first dimension", "[study][file]") {
  const auto s = io::load_study_from_string(
      "base: [llama8b.yaml, llama8b.yaml]\nvary: {cluster.gpus: [16, 32]}\n", "s.yaml", kDir);
  CHECK(s.points() == 4);
  CHECK(s.point(2).base == 1);
  CHECK(s.point(2).value == std::vector<std::size_t>{0});
}

TEST_CASE("study: a bad key or value is an error at its line and column", "[study][file][errors]") {
  CHECK(message("base: llama8b.yaml\nvary:\n  cluster.gpu: [16]\n") ==
        "s.yaml:3:3: error: vary: unknown key 'cluster.gpu'; did you mean 'cluster.gpus'?\n  cluster.gpu: [16]\n  ^");
  // a value as --set would read it, but at the study file's position
  CHECK(message("base: llama8b.yaml\nvary:\n  cluster.gpus: [16, sixteen]\n") ==
        "s.yaml:3:22: error: cluster.gpus must be a positive integer, got \"sixteen\"\n"
        "  cluster.gpus: [16, sixteen]\n                     ^");
  CHECK(message("base: llama8b.yaml\nvary:\n  cluster.gpus: 64..16\n").find(
            "s.yaml:3:17: error: vary.cluster.gpus: a range's last value 16 is below its first 64") == 0);
  CHECK(message("base: llama8b.yaml\nvary: {cluster.gpus: [16, 32], training.seq_len: [2048]}\nzip: [cluster.gpus, training.seq_len]\n")
            .find("s.yaml:3:21: error: zip: 'training.seq_len' has 1 values and 'cluster.gpus' 2") == 0);
  CHECK(message("base: missing.yaml\nvary: {cluster.gpus: [16]}\n").find("s.yaml:1:7: error: cannot open file") == 0);
  CHECK(message("vary: {cluster.gpus: [16]}\nobjectiv: time\n").find(
            "s.yaml:2:1: error: unknown key 'objectiv' in a study; did you mean 'objective'?") == 0);
  CHECK(message("base: llama8b.yaml\nvary: {cluster.gpus: 1..100000000}\n").find("more than 65536 values") !=
        std::string::npos);
  CHECK(message("base: llama8b.yaml\nvary: {cluster.gpus: [16, 32]}\nheatmap: [cluster.gpus, nope]\n")
            .find("s.yaml:3:25: error: heatmap: \"nope\" is not a key of vary") == 0);
}

TEST_CASE("study: the hash names the study's content", "[study][file]") {
  const auto a = study("vary: {cluster.gpus: [16, 32]}\n");
  const auto b = study("vary: {cluster.gpus: [16, 32]}\n");
  const auto c = study("vary: {cluster.gpus: [16, 32]}\ntop: 2\n");
  CHECK(a.hash.size() == 16);
  CHECK(a.hash == b.hash);
  CHECK(a.hash != c.hash);
}

TEST_CASE("study: a record survives its line", "[study][records]") {
  io::StudyRecord r;
  r.point = 7;
  io::StudyLayout l;
  l.tp = 8;
  l.pp = 4;
  l.dp = 2;
  l.recompute = "selective";
  l.schedule = "1f1b";
  l.step_s = 0.1 + 0.2;  // not a short decimal: the line must keep every bit
  l.mfu = 1.0 / 3.0;
  l.bounded_by = "stage 0 compute (99%)";
  r.layouts.push_back(l);
  const auto back = io::decode_record(io::encode_record(r));
  REQUIRE(back);
  CHECK(back->point == 7);
  REQUIRE(back->layouts.size() == 1);
  CHECK(back->layouts[0].step_s == l.step_s);
  CHECK(back->layouts[0].mfu == l.mfu);
  CHECK(io::encode_record(*back) == io::encode_record(r));
  io::StudyRecord failed;
  failed.point = 3;
  failed.failed = "no layout fits (12 candidates): rejected memory 12";
  CHECK(io::decode_record(io::encode_record(failed))->failed == failed.failed);
  CHECK(!io::decode_record("{\"point\": 1"));
}

TEST_CASE("study: the journal keeps whole lines and refuses another study's", "[study][records]") {
  const auto dir = std::filesystem::temp_directory_path() / ("ptdsim_study_journal_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "j").string();
  std::filesystem::remove(path);
  const auto s = study("vary: {cluster.gpus: [16, 32, 64]}\n");
  {
    io::StudyJournal j(path, s);
    CHECK(j.done().empty());
    io::StudyRecord r;
    r.point = 2;
    r.failed = "x";
    j.append(r);
  }
  // a kill in the middle of a line: half of a record, no newline
  {
    std::ofstream out(path, std::ios::app);
    out << "0123abcd {\"point\":";
  }
  {
    io::StudyJournal j(path, s);
    REQUIRE(j.done().size() == 1);
    CHECK(j.done()[0].point == 2);
    io::StudyRecord r;
    r.point = 0;
    r.failed = "y";
    j.append(r);
  }
  {
    io::StudyJournal j(path, s);
    CHECK(j.done().size() == 2);  // the short line was cut off, the new one starts its own
  }
  const auto other = study("vary: {cluster.gpus: [16, 32, 64]}\ntop: 3\n");
  CHECK_THROWS_WITH(io::StudyJournal(path, other), Catch::Contains("belongs to another study"));
  std::filesystem::remove_all(dir);
}
