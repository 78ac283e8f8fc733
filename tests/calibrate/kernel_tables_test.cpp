#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "ptdsim/calibrate/kernel_tables.hpp"
#include "ptdsim/core/error.hpp"

// The kernel-table reader (src/calibrate/kernel_tables.cpp) on what real CSV writers produce (a
// byte-order mark, RFC 4180 quoting, CRLF) and on what a hostile table holds; the positioned
// messages of single bad values are pinned in the bad-input corpus (tests/data/bad/csv_*).
using namespace ptdsim;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// A scratch directory of its own under the build tree, emptied first.
std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("ptdsim_kernel_tables_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("calibrate: kernel tables read as RFC 4180 writers write them", "[calibrate][kernels][csv]") {
  // a spreadsheet's export: byte-order mark, CRLF, every field quoted, a comma inside the GPU name
  const std::string text =
      "\xEF\xBB\xBF\"precision\",\"m\",\"n\",\"k\",\"time_s\",\"gpu\"\r\n"
      "\"bf16\",\"1024\",\"2048\",\"4096\",\"2.5e-05\",\"NVIDIA H100, \"\"SXM\"\"\"\r\n"
      "bf16, 8192 ,8192,8192,0.00162,plain\r\n";
  const auto rows = calibrate::parse_gemm_csv(text, "gemm.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].m == 1024);
  CHECK(rows[0].k == 4096);
  CHECK(rows[0].time_s == 2.5e-05);
  CHECK(rows[0].line == 2);
  CHECK(rows[1].m == 8192);
  CHECK(rows[1].line == 3);
}

TEST_CASE("calibrate: a multi-line quoted field keeps later positions right", "[calibrate][kernels][csv]") {
  CHECK(error_of([] {
          calibrate::parse_gemm_csv("precision,m,n,k,time_s,gpu\nbf16,1,1,1,1e-05,\"two\nlines\"\nbf16,2,2,2,x,g\n",
                                    "gemm.csv");
        }) == "gemm.csv:4:12: error: time_s must be a positive number, got 'x'\nbf16,2,2,2,x,g\n           ^");
}

TEST_CASE("calibrate: kernel tables that are not files, or too large", "[calibrate][kernels][csv]") {
  const auto dir = scratch("paths");
  SECTION("a directory where a table should be") {
    std::filesystem::create_directories(dir / "gemm.csv");
    CHECK(error_of([&] { calibrate::read_kernel_tables(dir.string()); }) ==
          (dir / "gemm.csv").string() + ": error: not a regular file (a kernel table is a CSV file)");
  }
  SECTION("a symbolic-link loop: named, no library text") {
    std::filesystem::create_symlink(dir / "optimizer.csv", dir / "optimizer.csv.tmp");
    std::filesystem::rename(dir / "optimizer.csv.tmp", dir / "optimizer.csv");  // a link to itself
    const std::string e = error_of([&] { calibrate::read_kernel_tables(dir.string()); });
    CHECK(e.rfind((dir / "optimizer.csv").string() + ": error: cannot read the file (", 0) == 0);
    CHECK(e.find("filesystem error") == std::string::npos);
  }
  SECTION("a table over the 4 MiB cap") {
    std::string big = "op,params,time_s,bytes_per_param_moved\n";
    while (big.size() <= (std::size_t{4} << 20)) big += "adamw_fused_fp32,100000000,0.00110985,28\n";
    write(dir / "optimizer.csv", big);
    CHECK(error_of([&] { calibrate::read_kernel_tables(dir.string()); }) ==
          (dir / "optimizer.csv").string() +
              ": error: table too large: more than 4194304 bytes (the shipped tables are under 60 KB)");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibrate: a fit outside its key's range names the rows, not the output", "[calibrate][kernels][csv]") {
  // each value is in its column's range, but 1e12 params x 16 bytes in 1 us is 1.6e10 GB/s, above
  // optimizer.gbs' 1e8 GB/s (hardware schema): before, written as gbs: 1.6e+10 or inf, or (with
  // --base) refused against the output file, which was never written
  const auto dir = scratch("fit");
  write(dir / "optimizer.csv",
        "op,params,time_s,bytes_per_param_moved\n"
        "adamw_fused_fp32,1000000000000,1e-06,16\n"
        "adamw_fused_fp32,1000000000000,1e-06,16\n"
        "adamw_fused_fp32,100000000,0.00110985,28\n");
  const auto m = calibrate::read_kernel_tables(dir.string());
  CHECK(error_of([&] { calibrate::fit_kernels(m, 132, 0, "test"); }) ==
        (dir / "optimizer.csv").string() +
            ":2:1: error: the fitted optimizer bandwidth (GB/s) is 1.6e+10, outside 0.001 to 1e+08: the rows at lines 2, 3 "
            "give such values on their own");
  std::filesystem::remove_all(dir);
}
