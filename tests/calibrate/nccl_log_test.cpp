#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/error.hpp"

using namespace ptdsim;
using calibrate::ParseOptions;
using core::Collective;
using core::Scope;

namespace {

std::string fixture(const std::string& name) { return std::string(PTDSIM_TEST_DATA) + "/nccl-tests/" + name; }

std::string message_of(const std::string& text, const std::string& name, const ParseOptions& o = {}) {
  try {
    calibrate::fit_collectives(calibrate::parse_nccl_tests(text, name, o));
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// A minimal 2022+ table: all_reduce on two ranks of one host, 1 MiB and 2 MiB.
const std::string kHeader =
    "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  1 on node0 device  0 [0x1b] NVIDIA H100\n"
    "#  Rank  1 Group  0 Pid  1 on node0 device  1 [0x1c] NVIDIA H100\n"
    "#\n"
    "#                                                              out-of-place                       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
const std::string kRow1 =
    "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n";
const std::string kRow2 =
    "     2097152        524288     float     sum      -1    30.00   69.91   69.91      0    30.00   69.91   69.91      0\n";
const std::string kFooter = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 61.17\n#\n";

// A 2022+ all_reduce row on 2 ranks (F = 1): 10 us + size / 100 GB/s.
std::string fmt_row(double size) {
  const double t_us = 10 + size / 100e9 * 1e6;
  const double bw = size / (t_us * 1e-6) / 1e9;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%12.0f  %12.0f     float     sum      -1  %7.2f  %6.2f  %6.2f      0  %7.2f  %6.2f  %6.2f      0\n",
                size, size / 4, t_us, bw, bw, t_us, bw, bw);
  return buf;
}

ParseOptions scope_intra() {
  ParseOptions o;
  o.scope = Scope::intra;
  return o;
}

}  // namespace

TEST_CASE("calibrate: every fixture log parses to its collective, ranks and scope", "[calibrate][nccl]") {
  struct Case {
    const char* file;
    Collective op;
    int ranks;
    Scope scope;
    std::size_t rows;
  };
  // From each file's "##" block and README.md's inventory: collective, n, hosts; rows counted by hand.
  const Case cases[] = {
      {"autodl-1x2080ti-reduce-singlerank-degenerate.txt", Collective::reduce, 1, Scope::intra, 28},
      {"autodl-2x2080ti-pcie-noP2P-allgather.txt", Collective::all_gather, 2, Scope::intra, 28},
      {"autodl-2x2080ti-pcie-noP2P-allreduce.txt", Collective::all_reduce, 2, Scope::intra, 28},
      {"autodl-2x2080ti-pcie-noP2P-alltoall.txt", Collective::all_to_all, 2, Scope::intra, 28},
      {"autodl-2x2080ti-pcie-noP2P-broadcast.txt", Collective::broadcast, 2, Scope::intra, 28},
      {"autodl-2x2080ti-pcie-noP2P-reduce.txt", Collective::reduce, 2, Scope::intra, 28},
      {"oci-a100-2x8-roce-allreduce-ring-newfmt.txt", Collective::all_reduce, 16, Scope::inter, 2},
      {"oci-a100-2x8-roce-allreduce.txt", Collective::all_reduce, 16, Scope::inter, 31},
      {"oci-gb200-32x4-2racks-allreduce.txt", Collective::all_reduce, 128, Scope::inter, 33},
      {"cscs-gh200-2x1-slingshot-allreduce.txt", Collective::all_reduce, 2, Scope::inter, 8},
      {"cscs-gh200-2x4-slingshot-allreduce.txt", Collective::all_reduce, 8, Scope::inter, 25},
      {"cscs-gh200-2x4-sockets-allreduce-erratic.txt", Collective::all_reduce, 8, Scope::inter, 25},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    auto runs = calibrate::read_nccl_tests(fixture(c.file));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].op == c.op);
    CHECK(runs[0].ranks == c.ranks);
    CHECK(runs[0].scope == c.scope);
    CHECK(runs[0].rows.size() == c.rows);
  }
}

TEST_CASE("calibrate: row values are read in SI units from either half", "[calibrate][nccl]") {
  auto runs = calibrate::read_nccl_tests(fixture("autodl-2x2080ti-pcie-noP2P-broadcast.txt"));
  // The 1 MiB row: out-of-place 113.8 us, in-place 288.1 us (the fixture's outlier); root 0.
  const auto& row = runs.at(0).rows.at(17);
  CHECK(row.size_bytes == 1048576);
  CHECK(row.root == 0);
  CHECK(row.redop == "none");
  CHECK(row.out_of_place.time_s == Approx(113.8e-6).epsilon(1e-12));
  CHECK(row.in_place.time_s == Approx(288.1e-6).epsilon(1e-12));
  CHECK(row.in_place.busbw_Bps == Approx(3.64e9).epsilon(1e-12));
  CHECK(row.time_s() == Approx(113.8e-6).epsilon(1e-12));  // the faster half
  CHECK(runs[0].gpu == "NVIDIA GeForce RTX 2080 Ti");
}

TEST_CASE("calibrate: a tail-only log needs the scope, and infers the ranks from busbw/algbw", "[calibrate][nccl]") {
  const auto file = fixture("oci-gb200-2x4-mnnvl-allreduce-tailonly.txt");
  SECTION("without a scope it is refused, at its first row (line 14)") {
    CHECK_THROWS_WITH(calibrate::read_nccl_tests(file),
                      Catch::Contains(":14:1: error: cannot tell whether the 8 ranks share one host: the log "
                                      "has no complete device list (pass the scope, intra or inter, explicitly)"));
  }
  SECTION("with one it parses") {
    ParseOptions o;
    o.scope = Scope::intra;
    auto runs = calibrate::read_nccl_tests(file, o);
    REQUIRE(runs.size() == 1);
    // 32 GiB row: busbw/algbw = 847.42/484.24 = 1.75 = 2(n-1)/n -> n = 8.
    CHECK(runs[0].ranks == 8);
    CHECK(runs[0].op == Collective::all_reduce);
    CHECK(runs[0].tail_only);
    CHECK(runs[0].rows.size() == 33);
  }
  SECTION("a rank count that contradicts busbw/algbw is refused") {
    ParseOptions o;
    o.scope = Scope::intra;
    o.ranks = 4;
    CHECK_THROWS_WITH(calibrate::read_nccl_tests(file, o),
                      Catch::Contains("error: the rank count given (4) contradicts the log, whose bandwidths "
                                      "imply 8 ranks"));
  }
}

TEST_CASE("calibrate: launcher prefixes and noise lines are skipped", "[calibrate][nccl]") {
  std::string text = "Warning: Permanently added 'node1' (ED25519) to the list of known hosts.\n";
  // srun's "N: " in front of every line, NCCL's own chatter in between
  std::string body = kHeader + kRow1 + "node0:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n" +
                     kRow2 + kFooter;
  std::size_t start = 0;
  while (start < body.size()) {
    auto nl = body.find('\n', start);
    text += "0: " + body.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
  auto runs = calibrate::parse_nccl_tests(text, "srun.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].rows.size() == 2);
  CHECK(runs[0].ranks == 2);
  CHECK(runs[0].scope == Scope::intra);

  std::string mpi = "[1,0]<stdout>:" + kRow1;
  auto tagged = calibrate::parse_nccl_tests(kHeader + mpi + kRow2 + kFooter, "mpi.log");
  CHECK(tagged.at(0).rows.size() == 2);
}

TEST_CASE("calibrate: the 2019-2022 layout with its error column and the 2017 layout in ms", "[calibrate][nccl]") {
  SECTION("2019: 'error' holds a deviation, not a count") {
    const std::string text =
        "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "#  Rank  0 Pid  1 on node0 device  0 [0x1b] Tesla V100-SXM2-32GB\n"
        "#  Rank  1 Pid  1 on node0 device  1 [0x1c] Tesla V100-SXM2-32GB\n"
        "#\n"
        "#                                                     out-of-place                       in-place\n"
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        "     1048576        262144   float     sum    20.00   52.43   52.43  2e-07    20.00   52.43   52.43  2e-07\n"
        "     2097152        524288   float     sum    30.00   69.91   69.91  2e-07    30.00   69.91   69.91    N/A\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 61.17 \n";
    auto runs = calibrate::parse_nccl_tests(text, "v100.log");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].op == Collective::all_reduce);
    CHECK(runs[0].ranks == 2);
    CHECK(runs[0].rows[1].out_of_place.time_s == Approx(30e-6).epsilon(1e-12));
  }
  SECTION("2017: bytes N type op, times in ms, footers without '#'") {
    const std::string text =
        "# Using devices\n"
        "#   Rank  0 on node0 device  0 [0x1b] Tesla P100\n"
        "#   Rank  1 on node0 device  1 [0x1c] Tesla P100\n"
        "#                                          out-of-place                    in-place\n"
        "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
        "     1048576        262144   float     sum    0.020  52.43  52.43    0e+00    0.020  52.43  52.43    0e+00\n"
        "     2097152        524288   float     sum    0.030  69.91  69.91    0e+00    0.030  69.91  69.91    0e+00\n"
        " Out of bounds values : 0 OK\n"
        " Avg bus bandwidth    : 61.17 \n";
    auto runs = calibrate::parse_nccl_tests(text, "p100.log");
    REQUIRE(runs.size() == 1);
    // 0.030 ms = 30 us
    CHECK(runs[0].rows[1].out_of_place.time_s == Approx(30e-6).epsilon(1e-12));
  }
}

TEST_CASE("calibrate: two runs in one file give two runs", "[calibrate][nccl]") {
  const std::string reduce = kHeader + kRow1 + kRow2 + kFooter;
  // all_gather on 2 ranks: count = size / 4 / 2, busbw = algbw / 2
  const std::string gather =
      kHeader +
      "     1048576        131072     float    none      -1    20.00   52.43   26.21      0    20.00   52.43   26.21      0\n"
      "     2097152        262144     float    none      -1    30.00   69.91   34.95      0    30.00   69.91   34.95      0\n" +
      kFooter;
  auto runs = calibrate::parse_nccl_tests("$ ./build/all_reduce_perf -b 1M -e 2M\n" + reduce +
                                              "$ ./build/all_gather_perf -b 1M -e 2M\n" + gather,
                                          "two.log");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].binary == "all_reduce_perf");
  CHECK(runs[1].binary == "all_gather_perf");
  CHECK(runs[1].op == Collective::all_gather);
}

TEST_CASE("calibrate: error messages name file:line and say what is wrong", "[calibrate][nccl][errors]") {
  SECTION("not nccl-tests output") {
    CHECK(message_of("hello\nworld\n", "notes.txt") ==
          "notes.txt:1:1: error: not nccl-tests output: no result table (neither a '#  size  count  type ...' "
          "column header nor rows of 11 to 13 columns)\nhello\n^");
  }
  SECTION("truncated at a line boundary: sizes stop before the header's maxBytes, no footer") {
    // the header asks for 1 MiB .. 2 MiB by factor 2; the table stops at 1 MiB
    CHECK(message_of(kHeader + kRow1, "cut.log") ==
          "cut.log:8:1: error: the result table starting here stops at 1048576 bytes (line 10), short of the "
          "2097152 bytes its sweep ends at (maxBytes 2097152, line 1), and has no '# Avg bus bandwidth' footer: "
          "the log was cut short\n#       size         count      type   redop    root     time   algbw   busbw "
          "#wrong     time   algbw   busbw #wrong\n^");
  }
  SECTION("truncated inside a row") {
    CHECK(message_of(kHeader + kRow1 + "     2097152        524288     float     sum      -1    30.00", "cut.log") ==
          "cut.log:11:57: error: result row has 6 columns, the table (line 8) has 13: the log was cut short or "
          "mangled\n     2097152        524288     float     sum      -1    30.00\n" +
              std::string(56, ' ') + "^");
  }
  SECTION("#wrong > 0") {
    std::string bad = kRow2;
    bad.replace(bad.find("      0    30.00"), 16, "     17    30.00");
    CHECK(message_of(kHeader + kRow1 + bad + kFooter, "wrong.log") ==
          "wrong.log:11:83: error: nccl-tests counted 17 wrong elements in the out-of-place result at 2097152 "
          "bytes: a run that computes wrong results cannot be used for calibration\n" +
              bad.substr(0, bad.size() - 1) + "\n" + std::string(82, ' ') + "^");
  }
  SECTION("a single rank") {
    // The "# nThread" line of the fixture is its line 13.
    CHECK_THROWS_WITH(calibrate::fit_collectives(calibrate::read_nccl_tests(
                          fixture("autodl-1x2080ti-reduce-singlerank-degenerate.txt"))),
                      Catch::StartsWith(fixture("autodl-1x2080ti-reduce-singlerank-degenerate.txt") +
                                        ":13:1: error: cannot fit reduce on 1 rank: with one rank nothing "
                                        "crosses a link, so busbw is meaningless; measure with 2 or more GPUs"));
  }
  SECTION("all_gather and alltoall cannot be told apart without the binary's name") {
    std::string gather_row =
        "     1048576        131072     float    none      -1    20.00   52.43   26.21      0    20.00   52.43   26.21      0\n"
        "     2097152        262144     float    none      -1    30.00   69.91   34.95      0    30.00   69.91   34.95      0\n";
    std::string header = kHeader;
    CHECK(message_of(header + gather_row + kFooter, "ag.log").find(
              "ag.log:8:1: error: cannot tell all_gather from alltoall: the log does not name its binary") == 0);
    ParseOptions o;
    o.op = Collective::all_gather;
    auto runs = calibrate::parse_nccl_tests(header + gather_row + kFooter, "ag.log", o);
    CHECK(runs.at(0).ranks == 2);  // size / (count * 4) = 2097152 / (262144 * 4)
  }
}

TEST_CASE("calibrate: a complete table without its footer is used, with a warning", "[calibrate][nccl]") {
  SECTION("the header's maxBytes is reached") {
    auto runs = calibrate::parse_nccl_tests(kHeader + kRow1 + kRow2, "nofooter.log");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].rows.size() == 2);
    REQUIRE(runs[0].warnings.size() == 1);
    CHECK(runs[0].warnings[0] ==
          "nofooter.log:8:1: warning: the result table starting here has no '# Avg bus bandwidth' footer (it ends "
          "at the end of the file); its sizes reach 2097152 bytes, the end of the sweep (maxBytes 2097152, line 1), "
          "so it is complete and is used");
  }
  SECTION("the next run's header ends it") {
    auto runs = calibrate::parse_nccl_tests(kHeader + kRow1 + kRow2 + kHeader + kRow1 + kRow2 + kFooter, "two.log");
    REQUIRE(runs.size() == 2);
    REQUIRE(runs[0].warnings.size() == 1);
    CHECK(runs[0].warnings[0].find("(it ends at the next run's header at line 12)") != std::string::npos);
    CHECK(runs[1].warnings.empty());
  }
  SECTION("no header: the command line's -e counts, in nccl-tests' units (8M = 8 MiB)") {
    std::string rows;
    for (double s = 1048576; s <= 8388608; s *= 2) {
      rows += fmt_row(s);
    }
    const std::string prompt = "$ mpirun -np 2 ./build/all_reduce_perf -b 1M -e 8M -f 2 -g 1\n";
    auto runs = calibrate::parse_nccl_tests(prompt + rows, "tail.log", scope_intra());
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].rows.size() == 4);
    CHECK(runs[0].warnings.size() == 1);
    // the same sweep cut after 4 MiB is refused at its first row
    const std::string cut = rows.substr(0, rows.rfind(fmt_row(8388608)));
    CHECK(message_of(prompt + cut, "tail.log", scope_intra())
              .find("tail.log:2:1: error: the result table starting here stops at 4194304 bytes (line 4), short "
                    "of the 8388608 bytes its sweep ends at (maxBytes 8388608, line 1)") == 0);
  }
  SECTION("a linear sweep (-i) ends at the last step below maxBytes") {
    // 1 GiB .. 10 GiB in steps of 9 GiB: the sizes are 1 GiB and 10 GiB (the ring fixture's sweep)
    const std::string header =
        "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 10737418240 step: 9663676416(bytes) warmup iters: 1\n"
        "#  Rank  0 Group  0 Pid  1 on node0 device  0 [0x1b] NVIDIA H100\n"
        "#  Rank  1 Group  0 Pid  1 on node0 device  1 [0x1c] NVIDIA H100\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    auto runs = calibrate::parse_nccl_tests(header + fmt_row(1073741824.0) + fmt_row(10737418240.0), "lin.log");
    CHECK(runs.at(0).warnings.size() == 1);
    CHECK(message_of(header + fmt_row(1073741824.0), "lin.log").find("stops at 1073741824 bytes") !=
          std::string::npos);
  }
  SECTION("'Reducing maxBytes' lowers the end of the sweep") {
    const std::string reduced = "# Reducing maxBytes to 1048576 due to memory limitation\n";
    auto runs = calibrate::parse_nccl_tests(kHeader + reduced + kRow1, "reduced.log");
    CHECK(runs.at(0).rows.size() == 1);
    CHECK(runs.at(0).warnings.size() == 1);
  }
  SECTION("nothing states maxBytes: used as it is, with a warning that says it could not be checked") {
    auto runs = calibrate::parse_nccl_tests(fmt_row(1048576) + fmt_row(2097152), "bare.log", scope_intra());
    REQUIRE(runs.at(0).warnings.size() == 1);
    CHECK(runs[0].warnings[0] ==
          "bare.log:1:1: warning: the result table starting here has no '# Avg bus bandwidth' footer (it ends at "
          "the end of the file), and the log states no maxBytes (a '# nThread' line or an -e option) to check its "
          "sizes against: it is used as it is, up to 2097152 bytes; make sure the paste was not cut short");
  }
}

TEST_CASE("calibrate: every fixture without its footer is still read, and cut short it is refused",
          "[calibrate][nccl][fixtures]") {
  // Each complete fixture, its '# Avg bus bandwidth' line (and what follows) removed: the same rows
  // with a warning. The same fixture with its last two rows removed as well: refused, except the
  // 2-rack GB200 log, which states no maxBytes anywhere (no '# nThread' line, no command).
  const char* files[] = {
      "autodl-2x2080ti-pcie-noP2P-allgather.txt", "autodl-2x2080ti-pcie-noP2P-allreduce.txt",
      "autodl-2x2080ti-pcie-noP2P-alltoall.txt",  "autodl-2x2080ti-pcie-noP2P-broadcast.txt",
      "autodl-2x2080ti-pcie-noP2P-reduce.txt",    "oci-a100-2x8-roce-allreduce-ring-newfmt.txt",
      "oci-a100-2x8-roce-allreduce.txt",          "oci-gb200-2x4-mnnvl-allreduce-tailonly.txt",
      "oci-gb200-32x4-2racks-allreduce.txt",      "cscs-gh200-2x1-slingshot-allreduce.txt",
      "cscs-gh200-2x4-slingshot-allreduce.txt",   "cscs-gh200-2x4-sockets-allreduce-erratic.txt",
  };
  for (const char* file : files) {
    INFO(file);
    std::ifstream in(fixture(file));
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ParseOptions o;
    o.scope = Scope::intra;  // the tail-only file needs it; the others say where they ran
    const auto full = calibrate::read_nccl_tests(fixture(file), std::string(file).find("tailonly") != std::string::npos
                                                                    ? o
                                                                    : ParseOptions{});
    std::size_t footer = 0;
    while (footer < lines.size() && lines[footer].find("Avg bus bandwidth") == std::string::npos) ++footer;
    REQUIRE(footer < lines.size());
    std::size_t last_row = footer;
    while (last_row > 0 && lines[last_row - 1].find("Out of bounds") != std::string::npos) --last_row;
    std::string no_footer;
    for (std::size_t i = 0; i < last_row; ++i) no_footer += lines[i] + "\n";
    const auto& opts = std::string(file).find("tailonly") != std::string::npos ? o : ParseOptions{};
    auto runs = calibrate::parse_nccl_tests(no_footer, file, opts);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].rows.size() == full[0].rows.size());
    CHECK(runs[0].warnings.size() == 1);
    // two rows fewer (the ring fixture has only two: one fewer)
    std::size_t drop = full[0].rows.size() > 2 ? 2 : 1;
    std::string cut;
    std::size_t rows_seen = 0;
    for (std::size_t i = 0; i < last_row; ++i) {
      const bool is_row = lines[i].find_first_not_of(' ') != std::string::npos &&
                          std::isdigit(static_cast<unsigned char>(lines[i][lines[i].find_first_not_of(' ')]));
      if (is_row && lines[i].find("NCCL") == std::string::npos && ++rows_seen > full[0].rows.size() - drop) break;
      cut += lines[i] + "\n";
    }
    if (std::string(file) == "oci-gb200-32x4-2racks-allreduce.txt") {
      auto kept = calibrate::parse_nccl_tests(cut, file, opts);
      CHECK(kept.at(0).warnings.at(0).find("states no maxBytes") != std::string::npos);
    } else {
      CHECK(message_of(cut, file, opts).find("the log was cut short") != std::string::npos);
    }
  }
}

TEST_CASE("calibrate: the ranks per node and the GPU of a run", "[calibrate][nccl]") {
  SECTION("inside a node: all of them") {
    auto runs = calibrate::read_nccl_tests(fixture("autodl-2x2080ti-pcie-noP2P-allreduce.txt"));
    CHECK(runs.at(0).ranks_per_node == 2);
    CHECK(runs[0].gpu == "NVIDIA GeForce RTX 2080 Ti");
  }
  SECTION("across nodes, from a complete device list: 16 ranks on 2 hosts") {
    auto runs = calibrate::read_nccl_tests(fixture("oci-a100-2x8-roce-allreduce.txt"));
    CHECK(runs.at(0).ranks_per_node == 8);
    CHECK(runs[0].gpu == "NVIDIA A100-SXM4-40GB");
  }
  SECTION("a cut device list leaves it unknown unless given") {
    auto runs = calibrate::read_nccl_tests(fixture("oci-gb200-32x4-2racks-allreduce.txt"));
    CHECK(runs.at(0).ranks_per_node == 0);
    ParseOptions o;
    o.ranks_per_node = 4;
    CHECK(calibrate::read_nccl_tests(fixture("oci-gb200-32x4-2racks-allreduce.txt"), o).at(0).ranks_per_node == 4);
    o.ranks_per_node = 3;
    CHECK_THROWS_WITH(calibrate::read_nccl_tests(fixture("oci-gb200-32x4-2racks-allreduce.txt"), o),
                      Catch::Contains("error: the ranks per node given (3) do not fit the 128 ranks across nodes"));
  }
}

TEST_CASE("calibrate: a log pasted from a rendered page lost the '#' of its header lines", "[calibrate][nccl]") {
  // Markdown turns "# nThread ..." into a heading; what a reader copies back has no '#'. The
  // header, the device list and the column names are still recognised.
  std::string text;
  std::size_t start = 0;
  const std::string body = kHeader + kRow1 + kRow2 + kFooter;
  while (start < body.size()) {
    const auto nl = body.find('\n', start);
    std::string line = body.substr(start, nl - start);
    if (!line.empty() && line[0] == '#') line = line.substr(1);
    text += line + "\n";
    start = nl + 1;
  }
  auto runs = calibrate::parse_nccl_tests(text, "rendered.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].ranks == 2);
  CHECK(runs[0].scope == Scope::intra);  // from the device list
  CHECK(runs[0].gpu == "NVIDIA H100");
  CHECK(runs[0].rows.size() == 2);
}

TEST_CASE("calibrate: the 11-column tables of 2018-2019 (no op column) are read without a header",
          "[calibrate][nccl]") {
  // size count type, then time algbw busbw error for each half (nccl-tests issue #44's layout);
  // all_gather on 2 ranks: count = size / 4 / 2
  const std::string rows =
      "     1048576        131072   float    20.00   52.43   26.21  0e+00    20.00   52.43   26.21  0e+00\n"
      "     2097152        262144   float    30.00   69.91   34.95  0e+00    30.00   69.91   34.95  0e+00\n";
  ParseOptions o;
  o.op = Collective::all_gather;
  o.scope = Scope::intra;
  auto runs = calibrate::parse_nccl_tests(rows, "old.log", o);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].ranks == 2);
  CHECK(runs[0].rows[1].out_of_place.time_s == Approx(30e-6).epsilon(1e-12));
}

TEST_CASE("calibrate: a collective by its binary, by ptdsim's name or by nccl-tests' name", "[calibrate][nccl]") {
  CHECK(calibrate::collective_of_binary("all_reduce_perf") == Collective::all_reduce);
  CHECK(calibrate::collective_of_binary("alltoall_perf") == Collective::all_to_all);
  CHECK(calibrate::collective_of_binary("sendrecv_perf") == Collective::send_recv);
  CHECK(calibrate::collective_of_binary("hypercube_perf") == std::nullopt);
  CHECK(calibrate::collective_of_binary("all_reduce") == std::nullopt);
  CHECK(calibrate::collective_of_binary("_perf") == std::nullopt);
  CHECK(calibrate::collective_of_name("all_to_all") == Collective::all_to_all);
  CHECK(calibrate::collective_of_name("alltoall") == Collective::all_to_all);
  CHECK(calibrate::collective_of_name("send_recv") == Collective::send_recv);
  CHECK(calibrate::collective_of_name("sendrecv") == Collective::send_recv);
  CHECK(calibrate::collective_of_name("all_to_all_perf") == std::nullopt);
  // every ptdsim name, then the two nccl-tests names that differ: what `calibrate import --op` takes
  CHECK(calibrate::collective_spellings() ==
        std::vector<std::string>{"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
                                 "send_recv", "alltoall", "sendrecv"});
  // a binary ptdsim has no model for is named with the ones it has
  const std::string m = message_of("$ ./build/hypercube_perf -b 1M -e 2M\n" + kHeader + kRow1 + kRow2 + kFooter, "h.log");
  CAPTURE(m);
  CHECK(m.find("h.log:") == 0);
  CHECK(m.find("no model for hypercube_perf (supported: all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
               "alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf)") != std::string::npos);
}

TEST_CASE("calibrate: a collective given for a log must agree with its rows", "[calibrate][nccl]") {
  // issue 39: an all_reduce table (redop sum) given as --op broadcast was fitted as broadcast
  ParseOptions o;
  o.op = Collective::broadcast;
  std::string message;
  try {
    calibrate::parse_nccl_tests(kHeader + kRow1 + kRow2 + kFooter, "ar.log", o);
  } catch (const core::ConfigError& e) {
    message = e.what();
  }
  CHECK(message.rfind("ar.log:10:1: error: the collective given (broadcast) contradicts this row, which reduces with "
                      "'sum': only all_reduce, reduce and reduce_scatter do", 0) == 0);
  // the collective it is, given, is taken
  o.op = Collective::all_reduce;
  CHECK(calibrate::parse_nccl_tests(kHeader + kRow1 + kRow2 + kFooter, "ar.log", o).at(0).op == Collective::all_reduce);
}

TEST_CASE("calibrate: the algorithm and protocol a run was forced to (NCCL_ALGO, NCCL_PROTO)", "[calibrate][nccl][algo]") {
  const std::string table = kHeader + kRow1 + kRow2 + kFooter;
  auto one = [&](const std::string& before, const std::string& name = "forced.log") {
    auto runs = calibrate::parse_nccl_tests(before + table, name);
    REQUIRE(runs.size() == 1);
    return runs[0];
  };
  auto has_note = [](const calibrate::NcclRun& r, const std::string& text) {
    for (const auto& n : r.notes)
      if (n == text) return true;
    return false;
  };
  const int ring = 1, tree = 0, simple = 2;  // NCCL's order (core::nccl_algo_names, nccl_proto_names)
  SECTION("the OCI Ring fixture: its command line's -x NCCL_ALGO=Ring (the '##' block)") {
    auto runs = calibrate::read_nccl_tests(fixture("oci-a100-2x8-roce-allreduce-ring-newfmt.txt"));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].algo == ring);
    CHECK(runs[0].proto == -1);
    // line 11 of the fixture's block restates it, and the last statement names its line
    CHECK(has_note(runs[0], "algorithm ring: NCCL_ALGO=Ring (line 11)"));
    // the same lab's unforced log: NCCL's pick
    auto unforced = calibrate::read_nccl_tests(fixture("oci-a100-2x8-roce-allreduce.txt"));
    CHECK(unforced.at(0).algo == -1);
    CHECK(unforced.at(0).proto == -1);
  }
  SECTION("NCCL's own INFO line (src/graph/tuning.cc: \"NCCL_ALGO set by environment to %s\")") {
    auto r = one("node0:1:1 [0] NCCL INFO NCCL_ALGO set by environment to tree\n"
                 "node0:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n");
    CHECK(r.algo == tree);
    CHECK(r.proto == simple);
    CHECK(has_note(r, "protocol simple: NCCL_PROTO=Simple (line 2)"));
  }
  SECTION("shell and launcher spellings") {
    CHECK(one("$ NCCL_ALGO=Ring ./build/all_reduce_perf -b 1M -e 2M\n").algo == ring);
    CHECK(one("export NCCL_ALGO=\"RING\"\n").algo == ring);
    auto r = one("srun --export=ALL,NCCL_ALGO=Tree,NCCL_PROTO=Simple ./all_reduce_perf -b 1M -e 2M\n");
    CHECK(r.algo == tree);
    CHECK(r.proto == simple);
    // NCCL's per-function form: the all_reduce entry decides for an all_reduce run
    CHECK(one("export NCCL_ALGO='ring;allreduce:tree'\n").algo == tree);
    CHECK(one("export NCCL_ALGO='tree;allgather:ring'\n").algo == tree);
    // a later statement replaces an earlier one, and unset clears it
    CHECK(one("export NCCL_ALGO=Tree\nexport NCCL_ALGO=Ring\n").algo == ring);
    CHECK(one("export NCCL_ALGO=Tree\nunset NCCL_ALGO\n").algo == -1);
    // a variable whose name only ends in NCCL_ALGO is another one
    CHECK(one("export MY_NCCL_ALGO=Ring\n").algo == -1);
  }
  SECTION("ptdsim-calibrate's own lines: what NCCL's environment held, set or unset") {
    auto env = [](const char* var) -> const char* { return std::string_view(var) == "NCCL_ALGO" ? "Ring" : nullptr; };
    const std::string lines = calibrate::nccl_setting_lines(env);
    CHECK(lines == "# NCCL_ALGO=Ring\n# unset NCCL_PROTO\n");
    CHECK(one(lines).algo == ring);
    CHECK(one(lines).proto == -1);
    // a joined log: the second table's "unset" ends the first one's Ring
    auto none = [](const char*) -> const char* { return nullptr; };
    const auto runs = calibrate::parse_nccl_tests(lines + table + calibrate::nccl_setting_lines(none) + table, "joined.log");
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].algo == ring);
    CHECK(runs[1].algo == -1);
  }
  SECTION("a list, an exclusion or a value NCCL refuses is not one algorithm: NCCL's pick, with a note") {
    auto list = one("export NCCL_ALGO=Ring,Tree\n");
    CHECK(list.algo == -1);
    CHECK(has_note(list, "NCCL_ALGO=Ring,Tree (line 1) leaves all_reduce 2 to choose from (tree, ring): not one, "
                         "so the rows are fitted as NCCL's pick"));
    auto excluded = one("export NCCL_ALGO=^NVLS\n");
    CHECK(excluded.algo == -1);
    CHECK(has_note(excluded, "NCCL_ALGO=^NVLS (line 1) leaves all_reduce 6 to choose from (tree, ring, collnet_direct, "
                             "collnet_chain, nvls_tree, pat): not one, so the rows are fitted as NCCL's pick"));
    auto unknown = one("export NCCL_ALGO=Hypercube\n");
    CHECK(unknown.algo == -1);
    CHECK(has_note(unknown, "NCCL_ALGO=Hypercube (line 1) is not a value NCCL takes (it would refuse the run): "
                            "fitted as NCCL's pick"));
    CHECK(one("export NCCL_PROTO=^LL128\n").proto == -1);
  }
  SECTION("the fit keeps runs of different algorithms apart") {
    const std::string text = "export NCCL_ALGO=Ring\n" + table + "export NCCL_ALGO=Tree\n" + table + "unset NCCL_ALGO\n" +
                             table;
    auto runs = calibrate::parse_nccl_tests(text, "three.log");
    REQUIRE(runs.size() == 3);
    const auto fits = calibrate::fit_collectives(runs);
    REQUIRE(fits.size() == 3);  // one per (all_reduce, intra, 2 ranks, ..., algorithm)
    std::vector<int> algos;
    for (const auto& f : fits) algos.push_back(f.algo);
    std::sort(algos.begin(), algos.end());
    CHECK(algos == std::vector<int>{-1, tree, ring});
    // the rows carry their fit's algorithm, in the fits' order (one piece each: two sizes)
    const auto rows = calibrate::hardware_rows(fits);
    REQUIRE(rows.size() == 3);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CHECK(rows[i].algo == fits[i].algo);
      CHECK(rows[i].proto == -1);
    }
  }
}
