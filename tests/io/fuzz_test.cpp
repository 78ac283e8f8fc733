#include <catch2/catch.hpp>

#include <random>

#include "fixtures.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/load.hpp"

// Mutation fuzzing of the loaders: random character and line edits of a good scenario must give
// either a scenario or a ConfigError that names the input, never another exception, a crash or a
// hang. Deterministic (fixed seed) so a failure reproduces.
using namespace ptdsim;

namespace {

const std::string kGood = io::test::scenario(R"(
cluster: {gpus: 8}
parallel:
  tp: 2
  pp: 2
  vpp: 2
  sequence_parallel: true
  zero: 1
  placement: tp-cp-ep-dp-pp
training:
  seq_len: 512
  micro_batch: 1
  global_batch: 8
  precision: bf16
  recompute: selective
  overlap: {dp: true, tp: false}
)");

// Characters that matter to YAML, plus digits, letters and control bytes.
const std::string kAlphabet = std::string(":-[]{},#&*!|>'\"%@`?\t \n0123456789.eE+abcxyz") + '\0' + '\x7f' + '\xff';

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string mutate(std::string s, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int edits = 1 + static_cast<int>(pick(3));
  for (int i = 0; i < edits && !s.empty(); ++i) {
    switch (pick(7)) {
      case 0: s.erase(pick(s.size()), 1); break;                          // delete a character
      case 1: { auto p = pick(s.size()); s.insert(p, 1, s[p]); break; }   // duplicate one
      case 2: s[pick(s.size())] = kAlphabet[pick(kAlphabet.size())]; break;  // replace one
      case 3: s.insert(pick(s.size()), 1, kAlphabet[pick(kAlphabet.size())]); break;
      case 4: {  // delete a line
        auto lines = split_lines(s);
        if (lines.size() > 1) lines.erase(lines.begin() + static_cast<long>(pick(lines.size())));
        s = join_lines(lines);
        break;
      }
      case 5: {  // duplicate a line
        auto lines = split_lines(s);
        auto p = pick(lines.size());
        lines.insert(lines.begin() + static_cast<long>(p), lines[p]);
        s = join_lines(lines);
        break;
      }
      case 6: s.resize(pick(s.size())); break;  // truncate
    }
  }
  return s;
}

}  // namespace

TEST_CASE("io: the good fuzz seed loads", "[io][fuzz]") {
  CHECK(io::load_scenario_from_string(kGood, "fuzz.yaml").parallel.dp == 2);  // 8 / (2*2)
}

TEST_CASE("io: mutated scenarios load or fail with a ConfigError naming the input", "[io][fuzz]") {
  std::mt19937 rng(20240607);
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = mutate(kGood, rng);
    try {
      // includes (should a mutation make a path) resolve into a directory that does not exist
      io::load_scenario_from_string(text, "fuzz.yaml", {}, "/nonexistent-ptdsim-dir");
      ++loaded;
    } catch (const core::ConfigError& e) {
      ++rejected;
      const std::string what = e.what();
      INFO("case " << i << ":\n" << text << "\n--- gave:\n" << what);
      REQUIRE(what.rfind("fuzz.yaml:", 0) == 0);
      for (const auto& d : e.diagnostics()) REQUIRE(d.where.file == "fuzz.yaml");
    } catch (const std::exception& e) {
      FAIL("case " << i << " threw a non-ConfigError: " << e.what() << "\n" << text);
    }
  }
  // both outcomes occur: the mutations are neither all harmless nor all fatal
  CHECK(loaded > 100);
  CHECK(rejected > 1000);
}

TEST_CASE("io: mutated overrides fail with a ConfigError naming --set", "[io][fuzz][overrides]") {
  std::mt19937 rng(7);
  const std::vector<std::string> seeds{"parallel.tp=4", "training.overlap={dp: false}", "model.moe={experts: 4}",
                                       "parallel.stage_layers=[2, 2]", "hardware.gpu.peak_tflops.fp8=100"};
  for (int i = 0; i < 1000; ++i) {
    const std::string text = mutate(seeds[static_cast<std::size_t>(i) % seeds.size()], rng);
    try {
      io::load_scenario_from_string(kGood, "fuzz.yaml", {io::parse_override(text)});
    } catch (const core::ConfigError& e) {
      const std::string what = e.what();
      INFO("override " << text << " gave:\n" << what);
      REQUIRE((what.rfind("--set", 0) == 0 || what.rfind("fuzz.yaml:", 0) == 0));
    } catch (const std::exception& e) {
      FAIL("override " << text << " threw a non-ConfigError: " << e.what());
    }
  }
}
