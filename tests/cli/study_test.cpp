#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "run.hpp"

// `ptdsim study` as a user runs it (docs/study.md): the same bytes on threads, over MPI ranks and
// from merged shards; a run killed halfway resumes without redoing a finished point.
using namespace cli_testing;
namespace fs = std::filesystem;

namespace {

const std::string kGrid = "tests/data/study/grid.yaml";

std::string in_scratch(const std::string& name) { return (scratch_dir() / name).string(); }

// Whole lines of a journal after its header: the points it holds.
int journal_points(const std::string& path) {
  const std::string text = slurp(path);
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines > 0 ? lines - 1 : 0;
}

}  // namespace

TEST_CASE("cli: study prints the same bytes on threads, from merged shards and over MPI ranks", "[cli][study]") {
  const std::string a = in_scratch("threads.csv"), b = in_scratch("one.csv"), c = in_scratch("merged.csv");
  REQUIRE(ptdsim("study " + kGrid + " --threads 2 --format csv -o " + a).status == 0);
  REQUIRE(ptdsim("study " + kGrid + " --threads 1 --format csv -o " + b).status == 0);
  std::string shards;
  for (int k = 1; k <= 3; ++k) {
    const std::string part = in_scratch("part" + std::to_string(k));
    const auto r = ptdsim("study " + kGrid + " --shard " + std::to_string(k) + "/3 -o " + part);
    INFO(r.err);
    REQUIRE(r.status == 0);
    shards += " " + part;
  }
  const auto merged = ptdsim("study merge" + shards + " --format csv -o " + c);
  INFO(merged.err);
  REQUIRE(merged.status == 0);
  const std::string csv = slurp(a);
  // header + 8 points x top 2
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 16);
  CHECK(csv.rfind("point,cluster.gpus,hardware.network.bandwidth_gbs,hardware.gpu.memory_gib,rank,tp,", 0) == 0);
  CHECK(slurp(b) == csv);
  CHECK(slurp(c) == csv);
  // a shard left out is named
  const auto missing = ptdsim("study merge " + in_scratch("part1") + " " + in_scratch("part2"));
  CHECK(missing.status == 2);
  CHECK(missing.err.find("shard 3/3 is missing") != std::string::npos);
  // the journal has served once the output is whole
  CHECK(!fs::exists(a + ".journal"));
#ifdef PTDSIM_MPIEXEC
  if (std::string(PTDSIM_MPIEXEC).empty()) return;
  const std::string d = in_scratch("ranks.csv");
  // OpenMPI refuses root without both variables; --oversubscribe: more ranks than cores. Under
  // AddressSanitizer, what OpenMPI's start-up keeps until exit is not ptdsim's to free: no leak check.
  const auto mpi = std::system(("ASAN_OPTIONS=detect_leaks=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                                std::string(PTDSIM_MPIEXEC) +
                                " --oversubscribe -n 2 " + PTDSIM_BIN + " study " + kGrid + " --format csv -o " + d +
                                " >/dev/null 2>&1 </dev/null")
                                   .c_str());
  REQUIRE(WIFEXITED(mpi));
  REQUIRE(WEXITSTATUS(mpi) == 0);
  CHECK(slurp(d) == csv);
#endif
}

TEST_CASE("cli: a study killed halfway resumes and redoes no finished point", "[cli][study]") {
  const std::string study = "tests/data/study/resume.yaml";
  const std::string whole = in_scratch("whole.json"), out = in_scratch("killed.json");
  REQUIRE(ptdsim("study " + study + " --threads 2 --format json -o " + whole).status == 0);
  fs::remove(out);
  fs::remove(out + ".journal");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stderr);
    ::execl(PTDSIM_BIN, PTDSIM_BIN, "study", study.c_str(), "--threads", "1", "--format", "json", "-o", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // kill it once a few points are in the journal, long before its 16
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (journal_points(out + ".journal") < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(!fs::exists(out));
  const int done = journal_points(out + ".journal");
  REQUIRE(done >= 4);
  REQUIRE(done < 16);
  const auto rerun = ptdsim("study " + study + " --threads 2 --format json -o " + out);
  INFO(rerun.err);
  REQUIRE(rerun.status == 0);
  // every point the journal held was taken from it, none run again
  CHECK(rerun.err.find("study: 16 points (" + std::to_string(done) + " resumed") != std::string::npos);
  CHECK(slurp(out) == slurp(whole));
  CHECK(!fs::exists(out + ".journal"));
}

TEST_CASE("cli: a journal of another study is refused, not mixed in", "[cli][study][errors]") {
  const std::string out = in_scratch("other.csv");
  fs::remove(out);
  REQUIRE(ptdsim("study " + kGrid + " --shard 1/2 -o " + out + " --journal " + out + ".j").status == 0);
  // a journal written for grid.yaml, offered to resume.yaml
  {
    std::FILE* f = std::fopen((out + ".j").c_str(), "w");
    std::fputs("ptdsim-study 1 hash 0123456789abcdef points 8\n", f);
    std::fclose(f);
  }
  const auto r = ptdsim("study tests/data/study/resume.yaml --journal " + out + ".j -o " + out);
  CHECK(r.status == 2);
  CHECK(r.err.find(".j:1:1: error: this journal belongs to another study") != std::string::npos);
}

TEST_CASE("cli: a study written to a device keeps no journal beside it", "[cli][study][outputs]") {
  // `-o /dev/null`: the output goes through to the device (docs/architecture.md "How outputs are
  // written"), and no /dev/null.journal is left behind
  const auto r = ptdsim("study " + kGrid + " --shard 1/4 -o /dev/null");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(!fs::exists("/dev/null.journal"));
}
