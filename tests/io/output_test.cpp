#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ptdsim/io/output.hpp"

namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
fs::path fresh_dir() {
  fs::path d = fs::temp_directory_path() / ("ptdsim_io_test_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("io: write_file_atomically writes the whole content and leaves no temporary", "[io][output]") {
  const fs::path dir = fresh_dir();
  const fs::path target = dir / "out.json";
  ptdsim::io::write_file_atomically(target.string(), "first");
  ptdsim::io::write_file_atomically(target.string(), "second, longer content");
  CHECK(slurp(target) == "second, longer content");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("io: write_file_atomically fails cleanly and keeps the old file", "[io][output][errors]") {
  const fs::path dir = fresh_dir();
  SECTION("missing directory") {
    const std::string target = (dir / "no" / "such" / "out.json").string();
    try {
      ptdsim::io::write_file_atomically(target, "x");
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).rfind("cannot write '" + target + "': cannot create a temporary file", 0) == 0);
    }
  }
  SECTION("target is a directory: rename fails, temporary removed, old content intact") {
    const fs::path target = dir / "taken";
    fs::create_directories(target / "inside");
    CHECK_THROWS_AS(ptdsim::io::write_file_atomically(target.string(), "x"), std::runtime_error);
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);  // only the directory itself
    CHECK(fs::is_directory(target / "inside"));
  }
  fs::remove_all(dir);
}
