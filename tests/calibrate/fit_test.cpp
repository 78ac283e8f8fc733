#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"

using namespace ptdsim;
using core::Collective;
using core::Scope;

namespace {

std::string fixture(const std::string& name) { return std::string(PTDSIM_TEST_DATA) + "/nccl-tests/" + name; }

// The busbw nccl-tests printed for a size: that of the faster half, the one the fit uses.
double printed_busbw(const calibrate::NcclRow& r) {
  return r.out_of_place.time_s <= r.in_place.time_s ? r.out_of_place.busbw_Bps : r.in_place.busbw_Bps;
}

double median_of_four_largest(const calibrate::NcclRun& run) {
  std::vector<calibrate::NcclRow> rows = run.rows;
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.size_bytes < b.size_bytes; });
  std::vector<double> bw;
  for (std::size_t i = rows.size() >= 4 ? rows.size() - 4 : 0; i < rows.size(); ++i) bw.push_back(printed_busbw(rows[i]));
  std::sort(bw.begin(), bw.end());
  std::size_t n = bw.size();
  return n % 2 ? bw[n / 2] : (bw[n / 2 - 1] + bw[n / 2]) / 2;
}

// A synthetic all_reduce run on `ranks` ranks whose times follow alpha + S*F/busbw exactly.
calibrate::NcclRun synthetic(int ranks, double alpha_s, double busbw_Bps, double from, double to) {
  calibrate::NcclRun run;
  run.file = "synthetic";
  run.line = 1;
  run.op = Collective::all_reduce;
  run.ranks = ranks;
  for (double s = from; s <= to; s *= 2) {
    calibrate::NcclRow r;
    r.size_bytes = s;
    r.line = 1;
    r.out_of_place.time_s = r.in_place.time_s = alpha_s + s * core::bus_factor(run.op, ranks) / busbw_Bps;
    run.rows.push_back(r);
  }
  return run;
}

}  // namespace

TEST_CASE("calibrate: bus factors are NCCL's", "[calibrate][fit]") {
  // nccl-tests doc/PERFORMANCE.md: all_reduce 2(n-1)/n, all_gather (n-1)/n, broadcast 1.
  CHECK(core::bus_factor(Collective::all_reduce, 8) == Approx(1.75).epsilon(1e-15));
  CHECK(core::bus_factor(Collective::all_gather, 8) == Approx(0.875).epsilon(1e-15));
  CHECK(core::bus_factor(Collective::reduce_scatter, 2) == Approx(0.5).epsilon(1e-15));
  CHECK(core::bus_factor(Collective::all_to_all, 4) == Approx(0.75).epsilon(1e-15));
  CHECK(core::bus_factor(Collective::broadcast, 8) == 1);
  CHECK(core::bus_factor(Collective::send_recv, 2) == 1);
}

TEST_CASE("calibrate: an exact alpha-beta line is recovered in one piece", "[calibrate][fit]") {
  // 8 ranks, alpha 20 us, busbw 200 GB/s, 8 B .. 1 GiB: a straight line, so one piece, no error.
  auto fits = calibrate::fit_collectives({synthetic(8, 20e-6, 200e9, 8, 1073741824.0)});
  REQUIRE(fits.size() == 1);
  REQUIRE(fits[0].pieces.size() == 1);
  CHECK(fits[0].pieces[0].alpha_s == Approx(20e-6).epsilon(1e-9));
  CHECK(fits[0].pieces[0].busbw_Bps == Approx(200e9).epsilon(1e-9));
  CHECK(fits[0].max_abs_rel_error < 1e-9);
  CHECK(fits[0].notes.empty());
}

TEST_CASE("calibrate: two regimes are split where the protocol changes", "[calibrate][fit]") {
  // Below 1 MiB: alpha 10 us, busbw 20 GB/s (LL-like); from 1 MiB: alpha 50 us, busbw 200 GB/s.
  auto low = synthetic(2, 10e-6, 20e9, 8, 524288);
  auto high = synthetic(2, 50e-6, 200e9, 1048576, 1073741824.0);
  low.rows.insert(low.rows.end(), high.rows.begin(), high.rows.end());
  auto fits = calibrate::fit_collectives({low});
  REQUIRE(fits.size() == 1);
  const auto& f = fits[0];
  REQUIRE(f.pieces.size() == 2);
  CHECK(f.pieces[0].first_bytes == 8);
  CHECK(f.pieces[0].last_bytes == 524288);
  CHECK(f.pieces[1].first_bytes == 1048576);
  CHECK(f.pieces[1].alpha_s == Approx(50e-6).epsilon(1e-9));
  CHECK(f.pieces[1].busbw_Bps == Approx(200e9).epsilon(1e-9));
  // hardware rows tile the sizes: [0, 1 MiB) and [1 MiB, inf)
  auto rows = calibrate::hardware_rows(fits);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].min_bytes == 0);
  CHECK(rows[0].max_bytes == 1048576);
  CHECK(rows[1].min_bytes == 1048576);
  CHECK(std::isinf(rows[1].max_bytes));
  CHECK(rows[1].ranks == 2);
  // the model answers with the piece that holds the size: 1 MiB at 200 GB/s + 50 us
  CHECK(calibrate::fitted_time(f, 1048576) == Approx(50e-6 + 1048576.0 / 200e9).epsilon(1e-9));
  // and the first piece just below it: the pieces are half-open, [min_bytes, max_bytes)
  CHECK(calibrate::fitted_time(f, 1048575) ==
        Approx(f.pieces[0].alpha_s + 1048575.0 / f.pieces[0].busbw_Bps).epsilon(1e-9));
  // the one rule of core::piece_miss: inside (-1) before any miss, a miss by its bytes
  CHECK(core::piece_miss(0, 1048576, 1048576) == 1048576 - 1048576);
  CHECK(core::piece_miss(1048576, INFINITY, 1048576) == -1);
  CHECK(core::piece_miss(1000, 2000, 400) == 600);
}

TEST_CASE("calibrate: relative weighting keeps small sizes accurate", "[calibrate][fit]") {
  // Times 10 us + S/10 GB/s with +-2% alternating noise: an unweighted fit would let the 1 GiB
  // point (0.1 s) swamp the 8 B ones (10 us); the relative fit keeps every point within ~2%.
  auto run = synthetic(2, 10e-6, 10e9, 8, 1073741824.0);
  for (std::size_t i = 0; i < run.rows.size(); ++i) {
    double k = i % 2 ? 1.02 : 0.98;
    run.rows[i].out_of_place.time_s *= k;
    run.rows[i].in_place.time_s *= k;
  }
  auto fits = calibrate::fit_collectives({run});
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].pieces.size() == 1);
  CHECK(fits[0].max_abs_rel_error < 0.025);
  CHECK(fits[0].pieces[0].alpha_s == Approx(10e-6).epsilon(0.03));
  CHECK(fits[0].pieces[0].busbw_Bps == Approx(10e9).epsilon(0.03));
}

TEST_CASE("calibrate: every fixture log fits within the accuracy targets", "[calibrate][fit][fixtures]") {
  // Targets: the last piece's busbw within 5% of the median busbw of the four largest sizes, and
  // every size from 1 MiB up within 15% of the measured time. The tail-only GB200 log has no device
  // list: its 8 ranks sit in one NVL72 NVLink domain, which the shipped gb200-nvl72 file calls one
  // node, hence intra.
  const char* files[] = {
      "autodl-2x2080ti-pcie-noP2P-allgather.txt", "autodl-2x2080ti-pcie-noP2P-allreduce.txt",
      "autodl-2x2080ti-pcie-noP2P-alltoall.txt",  "autodl-2x2080ti-pcie-noP2P-broadcast.txt",
      "autodl-2x2080ti-pcie-noP2P-reduce.txt",    "oci-a100-2x8-roce-allreduce-ring-newfmt.txt",
      "oci-a100-2x8-roce-allreduce.txt",          "oci-gb200-2x4-mnnvl-allreduce-tailonly.txt",
      "oci-gb200-32x4-2racks-allreduce.txt",
  };
  for (const char* file : files) {
    INFO(file);
    calibrate::ParseOptions o;
    if (std::string(file).find("tailonly") != std::string::npos) o.scope = Scope::intra;
    auto runs = calibrate::read_nccl_tests(fixture(file), o);
    auto fits = calibrate::fit_collectives(runs);
    REQUIRE(fits.size() == 1);
    const auto& f = fits[0];
    CHECK(f.pieces.size() <= 4);
    CHECK(f.pieces.back().busbw_Bps == Approx(median_of_four_largest(runs[0])).epsilon(0.05));
    for (const auto& row : runs[0].rows) {
      if (row.size_bytes < 1048576) continue;
      INFO("size " << row.size_bytes);
      CHECK(calibrate::fitted_time(f, row.size_bytes) == Approx(row.time_s()).epsilon(0.15));
    }
  }
}

TEST_CASE("calibrate: the 2 x 2080 Ti all_reduce fit, by hand", "[calibrate][fit][fixtures]") {
  // From 64 KiB up the log is a straight line: 1 GiB in 268461 us (in-place) and 512 MiB in
  // 134072 us give a slope of 134389 us per 512 MiB, busbw = 536870912 * F(2)=1 / 134389 us
  // = 3.995 GB/s; the fit over 64 KiB..1 GiB lands within 1% of it, and of the printed 4.00.
  auto fits = calibrate::fit_collectives(
      calibrate::read_nccl_tests(fixture("autodl-2x2080ti-pcie-noP2P-allreduce.txt")));
  REQUIRE(fits.size() == 1);
  const auto& last = fits[0].pieces.back();
  CHECK(last.busbw_Bps == Approx(3.995e9).epsilon(0.01));
  CHECK(last.last_bytes == 1073741824.0);
  // alpha: the small-size plateau of the log is 11.6-12.9 us; the first piece's alpha sits in it
  CHECK(fits[0].pieces.front().alpha_s == Approx(12e-6).epsilon(0.05));
}

TEST_CASE("calibrate: from 1 MiB up, every fixture's median time error is within 5% and its worst within 15%",
          "[calibrate][fit][fixtures]") {
  // The acceptance figures, per log: |fitted - measured| / measured over the sizes >= 1 MiB
  // (the faster half of each row). Measured (docs/calibration.md): median 0.0-2.8%, worst 0.0-7.9%. The erratic CSCS
  // sockets log is left out: its own times disagree by 60% between neighbouring sizes.
  const char* files[] = {
      "autodl-2x2080ti-pcie-noP2P-allgather.txt", "autodl-2x2080ti-pcie-noP2P-allreduce.txt",
      "autodl-2x2080ti-pcie-noP2P-alltoall.txt",  "autodl-2x2080ti-pcie-noP2P-broadcast.txt",
      "autodl-2x2080ti-pcie-noP2P-reduce.txt",    "oci-a100-2x8-roce-allreduce-ring-newfmt.txt",
      "oci-a100-2x8-roce-allreduce.txt",          "oci-gb200-2x4-mnnvl-allreduce-tailonly.txt",
      "oci-gb200-32x4-2racks-allreduce.txt",      "cscs-gh200-2x1-slingshot-allreduce.txt",
      "cscs-gh200-2x4-slingshot-allreduce.txt",
  };
  for (const char* file : files) {
    INFO(file);
    calibrate::ParseOptions o;
    if (std::string(file).find("tailonly") != std::string::npos) o.scope = Scope::intra;
    auto fits = calibrate::fit_collectives(calibrate::read_nccl_tests(fixture(file), o));
    REQUIRE(fits.size() == 1);
    std::vector<double> errors;
    for (const auto& p : fits[0].points) {
      if (p.size_bytes >= 1048576) errors.push_back(std::abs(p.rel_error));
    }
    REQUIRE(!errors.empty());
    std::sort(errors.begin(), errors.end());
    const std::size_t n = errors.size();
    const double median = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
    CHECK(median <= 0.05);
    CHECK(errors.back() <= 0.15);
  }
}

TEST_CASE("calibrate: a spike (a size slower than the next larger one) is left out of the fit",
          "[calibrate][fit][fixtures]") {
  // The CSCS sockets log: 512 B takes 163.2 us against 59.31 us at 1 KiB, 1 MiB 1478.9 us against
  // 899.8 us at 2 MiB. Both are dropped and reported; the fit uses the other 23 sizes.
  auto fits = calibrate::fit_collectives(
      calibrate::read_nccl_tests(fixture("cscs-gh200-2x4-sockets-allreduce-erratic.txt")));
  REQUIRE(fits.size() == 1);
  std::vector<double> dropped;
  for (const auto& p : fits[0].points) {
    if (p.dropped) dropped.push_back(p.size_bytes);
  }
  CHECK(dropped == std::vector<double>{512, 1048576});
  CHECK(fits[0].points.size() == 25);
  CHECK(std::any_of(fits[0].notes.begin(), fits[0].notes.end(), [](const std::string& n) {
    return n == "left out of the fit: 512 B (163.20 us), 1 MiB (1478.90 us), slower by more than 25% than the next "
                "larger size (a spike in the run, not the link)";
  }));
  // no clean fixture has a spike: nothing is dropped there
  auto clean = calibrate::fit_collectives(calibrate::read_nccl_tests(fixture("oci-a100-2x8-roce-allreduce.txt")));
  CHECK(std::none_of(clean[0].points.begin(), clean[0].points.end(), [](const auto& p) { return p.dropped; }));
}

TEST_CASE("calibrate: thousands of distinct sizes fit in linear time, exactly where the data is a line",
          "[calibrate][fit][hostile]") {
  // Issue 17: 1,000 sizes took 2.7 s, 4,000 over 60 s. Two exact regimes over 4,000 linearly spaced
  // sizes (64 KiB steps): breakpoints are searched among 64 candidates, and the regime change lies
  // on one of them (size index 2000 = 125 x 16), so the fit is exact.
  calibrate::NcclRun run;
  run.file = "many.log";
  run.line = 1;
  run.op = Collective::all_reduce;
  run.ranks = 2;
  for (int i = 1; i <= 4000; ++i) {
    calibrate::NcclRow r;
    r.size_bytes = 65536.0 * i;
    r.line = i;
    r.out_of_place.time_s = r.in_place.time_s =
        i <= 2000 ? 10e-6 + r.size_bytes / 20e9 : 50e-6 + r.size_bytes / 200e9;
    run.rows.push_back(r);
  }
  auto fits = calibrate::fit_collectives({run});
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].points.size() == 4000);
  CHECK(fits[0].pieces.size() == 2);
  CHECK(fits[0].max_abs_rel_error < 1e-9);
  CHECK(fits[0].pieces[1].busbw_Bps == Approx(200e9).epsilon(1e-9));
}
