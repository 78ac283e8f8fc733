#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/error.hpp"

// The hostile corpus of the nccl-tests importer (issue 17): files in tests/data/nccl-tests/hostile/,
// each pinned to its whole first message line, and generated cases (size, garbage, mutations).
// Every case ends in a result or a core::ConfigError at file:line:col; nothing else may escape.
using namespace ptdsim;

namespace {

std::string hostile(const std::string& name) {
  return std::string(PTDSIM_TEST_DATA) + "/nccl-tests/hostile/" + name;
}

// The first line of the message parsing and fitting the file gives, "{file}" for its path.
std::string first_line_of_error(const std::string& path) {
  try {
    calibrate::fit_collectives(calibrate::read_nccl_tests(path));
  } catch (const core::ConfigError& e) {
    std::string m = e.what();
    m = m.substr(0, m.find('\n'));
    if (m.rfind(path, 0) == 0) m = "{file}" + m.substr(path.size());
    return m;
  }
  return "no error";
}

}  // namespace

TEST_CASE("calibrate: hostile logs are refused at file:line:col, never with stoi or bad_alloc",
          "[calibrate][nccl][hostile]") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      // a root beyond int: std::stoi threw out_of_range ("ptdsim: error: stoi", exit 1)
      {"root_overflow.txt",
       "{file}:7:46: error: root rank 2147483648 is out of range (-1 for none, else 0 to 16777215)"},
      {"root_negative.txt", "{file}:7:51: error: root rank -7 is out of range (-1 for none, else 0 to 16777215)"},
      // INT_MAX as a rank: rank + 1 overflowed (UBSan: signed overflow)
      {"rank_int_max.txt", "{file}:3:9: error: rank 2147483647 is out of range: a log names ranks 0 to 16777215"},
      {"rank_beyond_long.txt",
       "{file}:3:9: error: rank 99999999999999999999999 is out of range: a log names ranks 0 to 16777215"},
      // every time 0: the fit was empty without a word
      {"all_zero_times.txt",
       "{file}:1:1: error: no row of this table has both a size and a time above 0 (2 rows with a time of 0): "
       "there is nothing to fit, and a time of 0 cannot be a measurement"},
      {"time_huge.txt",
       "{file}:7:56: error: 1e300 is out of range for a time in us: a measurement stays below 10000000000"},
      {"busbw_huge.txt",
       "{file}:7:73: error: 1e300 is out of range for a bandwidth in GB/s: a measurement stays below 1000000000"},
      {"size_huge.txt",
       "{file}:7:1: error: 99999999999999999999 is out of range for a size in bytes: a measurement stays below "
       "1125899906842624"},
      {"time_nan.txt", "{file}:7:59: error: expected a non-negative number, got 'nan'"},
      // a size that is no byte count: the row was dropped as noise and the rest fitted (issue 39)
      {"size_not_a_number.txt", "{file}:7:10: error: the size of a result row must be a byte count, got 'abc'"},
      {"size_negative.txt", "{file}:7:11: error: the size of a result row must be a byte count, got '-8'"},
      {"count_mangled_ranks.txt",
       "{file}:8:1: error: size 1099511627776 over count x type size implies a rank count outside 1 to 16777216: "
       "the row is mangled"},
      {"header_without_rows.txt", "{file}:4:1: error: the result table starting here has no rows before its footer at line 7"},
      {"empty.txt",
       "{file}:1:1: error: not nccl-tests output: no result table (neither a '#  size  count  type ...' column header "
       "nor rows of 11 to 13 columns)"},
      // a step factor below 1 is no geometric sweep: the one row short of maxBytes is a cut table
      {"factor_below_one.txt",
       "{file}:4:1: error: the result table starting here stops at 1048576 bytes (line 6), short of the 2097152 bytes "
       "its sweep ends at (maxBytes 2097152, line 1), and has no '# Avg bus bandwidth' footer: the log was cut short"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    CHECK(first_line_of_error(hostile(c.file)) == c.message);
  }
}

TEST_CASE("calibrate: a log of 100,000 distinct sizes parses and fits in linear time and memory",
          "[calibrate][nccl][hostile]") {
  // Issue 17: the fit's cost matrix was m x m (a 100 MB log of ~800k sizes died in bad_alloc) and
  // its search cubic. 100,000 sizes in 8-byte steps, alpha 10 us, busbw 100 GB/s on 2 ranks.
  std::string text = "# nThread 1 nGpus 2 minBytes 8 maxBytes 800000 step: 8(bytes) warmup iters: 5 iters: 20\n"
                     "#  Rank  0 Group  0 Pid  1 on node0 device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
                     "#  Rank  1 Group  0 Pid  1 on node0 device  1 [0x1c] NVIDIA H100 80GB HBM3\n"
                     "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                     "algbw   busbw #wrong\n";
  char row[256];
  for (int i = 1; i <= 100000; ++i) {
    const double size = 8.0 * i, t_us = 10 + size / 100e3, bw = size / t_us / 1e3;
    std::snprintf(row, sizeof row, "%12.0f %12.0f float sum -1 %7.2f %6.2f %6.2f 0 %7.2f %6.2f %6.2f 0\n", size,
                  size / 4, t_us, bw, bw, t_us, bw, bw);
    text += row;
  }
  text += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1\n";
  auto fits = calibrate::fit_collectives(calibrate::parse_nccl_tests(text, "big.log"));
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].points.size() == 100000);
  // times printed to 0.01 us: one line holds within print rounding (<= 0.005 / 10 = 0.05%)
  CHECK(fits[0].pieces.size() == 1);
  CHECK(fits[0].pieces[0].busbw_Bps == Approx(100e9).epsilon(1e-3));
  CHECK(fits[0].max_abs_rel_error < 1e-3);
}

TEST_CASE("calibrate: garbage and mutated logs end in a result or a positioned error, nothing else",
          "[calibrate][nccl][hostile]") {
  std::mt19937 rng(20261123);
  auto parse = [](const std::string& text) {
    try {
      calibrate::fit_collectives(calibrate::parse_nccl_tests(text, "mutant.log"));
    } catch (const core::ConfigError& e) {
      // a positioned message: "mutant.log:LINE:COL: error: "
      const std::string m = e.what();
      INFO(m);
      CHECK(m.rfind("mutant.log:", 0) == 0);
      CHECK(m.find(": error: ") != std::string::npos);
    }
    // any other exception escapes and fails the test
  };
  SECTION("bytes of every value, NULs and invalid UTF-8 included") {
    for (int n = 0; n < 200; ++n) {
      std::string junk(static_cast<std::size_t>(rng() % 2000), '\0');
      for (auto& c : junk) c = static_cast<char>(rng() % 256);
      parse(junk);
    }
  }
  SECTION("a fixture with characters deleted, duplicated or replaced") {
    std::ifstream in(std::string(PTDSIM_TEST_DATA) + "/nccl-tests/oci-a100-2x8-roce-allreduce.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string base = ss.str();
    const std::string alphabet = "0123456789 .-#\n\tabcdefxyzNA/:e+";
    for (int n = 0; n < 2000; ++n) {
      std::string t = base;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits && !t.empty(); ++e) {
        const std::size_t at = rng() % t.size();
        switch (rng() % 3) {
          case 0: t.erase(at, 1 + rng() % 20); break;
          case 1: t.insert(at, t.substr(at, rng() % 200)); break;
          default: t[at] = alphabet[rng() % alphabet.size()];
        }
      }
      parse(t);
    }
  }
  SECTION("one line of 10 MB") { parse(std::string(10u << 20, '7')); }
}
