#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

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

// write_output: through to what the user named (docs/architecture.md "How outputs are written").
namespace {
int count_entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}
std::string error_of(const std::string& path, const std::string& content) {
  try {
    ptdsim::io::write_output(path, content);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("io: write_output writes a regular file atomically and keeps its mode", "[io][output]") {
  const fs::path dir = fresh_dir();
  const fs::path target = dir / "out.json";
  ptdsim::io::write_output(target.string(), "old");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ptdsim::io::write_output(target.string(), "new");
  CHECK(slurp(target) == "new");
  CHECK((fs::status(target).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(count_entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("io: write_output follows symbolic links and keeps them", "[io][output][links]") {
  const fs::path dir = fresh_dir();
  fs::create_directories(dir / "real");
  SECTION("a link to a file: the target is replaced, the link stays a link") {
    ptdsim::io::write_output((dir / "real" / "t.json").string(), "old");
    fs::create_symlink("real/t.json", dir / "link.json");
    ptdsim::io::write_output((dir / "link.json").string(), "new");
    CHECK(fs::is_symlink(dir / "link.json"));
    CHECK(fs::read_symlink(dir / "link.json") == "real/t.json");
    CHECK(slurp(dir / "real" / "t.json") == "new");
    CHECK(count_entries(dir / "real") == 1);  // no temporary left beside the target
  }
  SECTION("a chain of links, one relative to its own directory") {
    fs::create_symlink("t.json", dir / "real" / "inner");
    fs::create_symlink("real/inner", dir / "outer");
    ptdsim::io::write_output((dir / "outer").string(), "chained");
    CHECK(fs::is_symlink(dir / "outer"));
    CHECK(fs::is_symlink(dir / "real" / "inner"));
    CHECK(slurp(dir / "real" / "t.json") == "chained");
  }
  SECTION("a dangling link: its target is created, as a shell's > does") {
    fs::create_symlink("real/new.json", dir / "dangling");
    ptdsim::io::write_output((dir / "dangling").string(), "made");
    CHECK(fs::is_symlink(dir / "dangling"));
    CHECK(slurp(dir / "real" / "new.json") == "made");
  }
  SECTION("a link loop is an error, nothing written") {
    fs::create_symlink("b", dir / "a");
    fs::create_symlink("a", dir / "b");
    const std::string a = (dir / "a").string();
    CHECK(error_of(a, "x") == "cannot write '" + a + "': cannot follow the symbolic link: " +
                                  std::strerror(ELOOP));
    CHECK(count_entries(dir) == 3);  // real/, a, b
  }
  fs::remove_all(dir);
}

TEST_CASE("io: write_output writes FIFOs and character devices directly", "[io][output][devices]") {
  SECTION("/dev/null stays a device") {
    ptdsim::io::write_output("/dev/null", std::string(1 << 20, 'x'));
    CHECK(fs::is_character_file("/dev/null"));
  }
  SECTION("a full device is a write error naming the reason") {
    CHECK(error_of("/dev/full", "x") ==
          std::string("cannot write '/dev/full': write failed: ") + std::strerror(ENOSPC));
  }
  SECTION("a FIFO: its reader gets the whole content, the FIFO stays") {
    const fs::path dir = fresh_dir();
    const fs::path fifo = dir / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string content(3 << 20, 'y');  // more than a pipe's buffer: the writer must wait
    std::string got;
    std::thread reader([&] { got = slurp(fifo); });
    ptdsim::io::write_output(fifo.string(), content);
    reader.join();
    CHECK(got == content);
    CHECK(fs::is_fifo(fifo));
    CHECK(count_entries(dir) == 1);
    fs::remove_all(dir);
  }
}

TEST_CASE("io: write_output refuses what it cannot write, leaving no temporary", "[io][output][errors]") {
  const fs::path dir = fresh_dir();
  SECTION("a directory") {
    fs::create_directories(dir / "d");
    const std::string d = (dir / "d").string();
    CHECK(error_of(d, "x") == "cannot write '" + d + "': cannot replace: " + std::strerror(EISDIR));
  }
  SECTION("a name too long for the file system") {
    const std::string longname = (dir / std::string(300, 'n')).string();
    CHECK(error_of(longname, "x").rfind("cannot write '" + longname + "': cannot create a temporary file: ", 0) == 0);
  }
  CHECK(count_entries(dir) <= 1);
  fs::remove_all(dir);
}
