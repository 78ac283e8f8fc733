#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

// The hostile corpus (issue 17): inputs and environments chosen to break the executable, by
// category: outputs, bounds, work, parsers, nonsense. Every case must end in exit 0 with sane
// output (finite, non-negative numbers) or exit 2 with a positioned message (`file:line:col:
// error:`, or `file: error:` for a whole file) -- or, for an output that cannot be written, exit 1
// naming the reason -- and never in a crash, a hang, a replaced device or link, or a leftover
// temporary. Run from the source tree (ctest's working directory).
namespace fs = std::filesystem;

namespace {

// A hang is a run past 10 s (the issue's criterion, on a release build); sanitizer and unoptimized
// builds run the same cases several times slower (the 1T trace below takes 7 s alone in a clang -O0
// build on a 2-core VM, and over 10 s beside another test).
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
constexpr double kHangSeconds = 60;
#else
constexpr double kHangSeconds = 10;
#endif

struct Run {
  int status = -1;   // exit status, or -1 when killed
  int signal = 0;    // the signal that ended it
  bool hung = false;
  double seconds = 0;
  std::string out, err;
};

struct Options {
  std::string stdout_path;   // default: a capture file
  bool without_override = false;  // root without the capabilities that let it ignore permissions
  bool close_stdout = false; // start with descriptor 1 closed (`>&-`)
  // called once the child runs, with its pid; returns when done interfering
  std::function<void(pid_t)> meanwhile;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// This process's directory for files the cases write; removed at exit (the traces are 33 MB).
const fs::path& scratch() {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("ptdsim_hostile_" + std::to_string(::getpid()));
    Dir() {
      fs::remove_all(path);
      fs::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

// Runs ptdsim with `args` (no shell), stdin from /dev/null, with a watchdog.
Run ptdsim(const std::vector<std::string>& args, const Options& o = {}) {
  static int n = 0;
  const fs::path out = scratch() / ("out" + std::to_string(n));
  const fs::path err = scratch() / ("err" + std::to_string(n++));
  const std::string out_path = o.stdout_path.empty() ? out.string() : o.stdout_path;
  std::vector<std::string> argv{PTDSIM_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int in_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE((out_fd >= 0 && err_fd >= 0 && in_fd >= 0));
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (o.close_stdout) ::close(1);
    if (o.without_override && ::geteuid() == 0) {
      // Permissions do not stop root: drop the capabilities that override them from the bounding set,
      // so the exec'd ptdsim has none of them and root's own mode bits apply. Still root, so it reads
      // the binary and the scenario wherever the checkout lies (a 0700 directory stops `nobody`).
      for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER})
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) ::_exit(125);
    }
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  ::close(in_fd);
  if (o.meanwhile) o.meanwhile(pid);

  Run r;
  int raw = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &raw, WNOHANG);
    if (done == pid) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > kHangSeconds) {
      r.hung = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &raw, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) r.signal = WTERMSIG(raw);
  if (o.stdout_path.empty()) r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// "file:line:col: error: " or "file: error: " at the start of the message.
bool positioned(const std::string& err) {
  static const std::regex form(R"(^[^\n:]+(:[0-9]+:[0-9]+)?: error: [^\n]+)");
  return std::regex_search(err, form);
}

// Every number of a JSON document is finite and not negative, and no number became null (how
// nlohmann writes inf and NaN); `where` collects the first offender.
bool sane(const nlohmann::json& j, std::string& where, const std::string& path = "") {
  // the one null the interface has: a sweep's scenario_layout.rank when it was not ranked
  if (j.is_null() && path == ".scenario_layout.rank") return true;
  // the one signed number: the memory a layout that does not fit lacks
  if (j.is_number() && path == ".memory.headroom_gib") return std::isfinite(j.get<double>());
  if (j.is_null()) {
    where = path + " is null";
    return false;
  }
  if (j.is_number()) {
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < 0) {
      where = path + " = " + std::to_string(v);
      return false;
    }
    return true;
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!sane(it.value(), where, path + "." + it.key())) return false;
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (!sane(j[i], where, path + "[" + std::to_string(i) + "]")) return false;
  }
  return true;
}

// The verdict every case shares: no crash, no hang, and the exit status it should have.
void no_crash_no_hang(const Run& r) {
  INFO("stderr: " << r.err.substr(0, 2000));
  CHECK_FALSE(r.hung);
  CHECK(r.signal == 0);
  CHECK(r.err.find("std::") == std::string::npos);
  CHECK(r.err.find("stoi") == std::string::npos);
  CHECK(r.err.find("bad_alloc") == std::string::npos);
}

void expect_refused(const Run& r) {
  no_crash_no_hang(r);
  INFO("stderr: " << r.err.substr(0, 2000));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(positioned(r.err));
}

void expect_sane_json(const Run& r) {
  no_crash_no_hang(r);
  INFO("stderr: " << r.err.substr(0, 2000));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::string where;
  const bool ok = sane(j, where);
  INFO("nonsense: " << where);
  CHECK(ok);
}

std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
  return out;
}

fs::path fresh(const std::string& name) {
  const fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A literal's bytes, NULs included (without the terminating one).
template <std::size_t N>
std::string bytes(const char (&s)[N]) {
  return std::string(s, N - 1);
}

const std::string kScenario = "scenarios/default.yaml";
const std::string kBig = "scenarios/korthikanti-1t-seqsel.yaml";  // a 33 MB trace
const std::string kData = "tests/data/hostile/";

}  // namespace

TEST_CASE("cli: hostile outputs: written through to what the user named, every write checked", "[cli][hostile][outputs]") {
  SECTION("-o /dev/full: exit 1 with the reason, nothing left behind") {
    auto r = ptdsim({"evaluate", kScenario, "--format", "json", "-o", "/dev/full"});
    no_crash_no_hang(r);
    CHECK(r.status == 1);
    CHECK(r.err == "ptdsim: error: cannot write '/dev/full': write failed: No space left on device\n");
    CHECK(fs::is_character_file("/dev/full"));
  }
  SECTION("standard output on a full device: exit 1, not truncated JSON with exit 0") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"evaluate", kScenario, "--format", "json"},
          {"sweep", kScenario, "--max-cp", "1", "--max-micro-batch", "1", "--format", "json"},
          {"sweep", kScenario, "--max-cp", "1", "--max-micro-batch", "1", "--format", "csv"},
          {"--version"}}) {
      auto r = ptdsim(args, Options{"/dev/full", false, false, {}});
      no_crash_no_hang(r);
      CHECK(r.status == 1);
      CHECK(r.err.find("ptdsim: error: cannot write standard output: No space left on device\n") !=
            std::string::npos);
    }
  }
  SECTION("standard output closed: exit 1 with the reason") {
    auto r = ptdsim({"evaluate", kScenario, "--format", "json"}, Options{"", false, true, {}});
    no_crash_no_hang(r);
    CHECK(r.status == 1);
    CHECK(r.err == "ptdsim: error: cannot write standard output: Bad file descriptor\n");
  }
  SECTION("-o /dev/null stays a device") {
    auto r = ptdsim({"evaluate", kScenario, "-o", "/dev/null", "--trace", "/dev/null"});
    no_crash_no_hang(r);
    CHECK(r.status == 0);
    CHECK(fs::is_character_file("/dev/null"));
  }
  SECTION("-o - is standard output") {
    auto r = ptdsim({"evaluate", kScenario, "--format", "json", "-o", "-"});
    expect_sane_json(r);
  }
  SECTION("a symbolic link: its target is written, the link kept") {
    const fs::path d = fresh("link");
    { std::ofstream(d / "target.json") << "old"; }
    fs::create_symlink("target.json", d / "link.json");
    fs::create_symlink("trace-target.json", d / "trace-link.json");  // dangling: created
    auto r = ptdsim({"evaluate", kScenario, "--format", "json", "-o", (d / "link.json").string(), "--trace",
                     (d / "trace-link.json").string()});
    no_crash_no_hang(r);
    CHECK(r.status == 0);
    CHECK(fs::is_symlink(d / "link.json"));
    CHECK(fs::is_symlink(d / "trace-link.json"));
    CHECK(nlohmann::json::parse(slurp(d / "target.json"))["parallel"]["gpus"] == 1024);
    CHECK(nlohmann::json::parse(slurp(d / "trace-target.json")).contains("traceEvents"));
    CHECK(temporaries(d).empty());
  }
  SECTION("a FIFO: written directly, not replaced by a file") {
    const fs::path d = fresh("fifo");
    const fs::path fifo = d / "out.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    std::string got;
    std::thread reader([&] { got = slurp(fifo); });
    auto r = ptdsim({"evaluate", kScenario, "--format", "json", "-o", fifo.string()});
    reader.join();
    no_crash_no_hang(r);
    CHECK(r.status == 0);
    CHECK(fs::is_fifo(fifo));
    CHECK(nlohmann::json::parse(got)["parallel"]["gpus"] == 1024);
    CHECK(temporaries(d).empty());
  }
  SECTION("a read-only directory: exit 1, the old file intact, no temporary") {
    const fs::path d = fresh("readonly");
    { std::ofstream(d / "out.json") << "old"; }
    fs::permissions(d, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
    auto r = ptdsim({"evaluate", kScenario, "-o", (d / "out.json").string()}, Options{"", true, false, {}});
    fs::permissions(d, fs::perms::owner_all, fs::perm_options::add);
    no_crash_no_hang(r);
    CHECK(r.status == 1);
    CHECK(r.err == "ptdsim: error: cannot write '" + (d / "out.json").string() +
                       "': cannot create a temporary file: Permission denied\n");
    CHECK(slurp(d / "out.json") == "old");
    CHECK(temporaries(d).empty());
  }
  SECTION("a directory as -o or --trace: exit 1, nothing replaced") {
    const fs::path d = fresh("dir");
    fs::create_directories(d / "taken");
    auto r = ptdsim({"evaluate", kScenario, "--trace", (d / "taken").string()});
    no_crash_no_hang(r);
    CHECK(r.status == 1);
    CHECK(fs::is_directory(d / "taken"));
    CHECK(temporaries(d).empty());
  }
  SECTION("a failed run never touches an existing output") {
    const fs::path d = fresh("keep");
    { std::ofstream(d / "out.json") << "old"; }
    auto r = ptdsim({"evaluate", kScenario, "--set", "parallel.tp=3", "-o", (d / "out.json").string()});
    expect_refused(r);
    CHECK(slurp(d / "out.json") == "old");
  }
  SECTION("an existing file's permission bits are kept") {
    const fs::path d = fresh("mode");
    { std::ofstream(d / "out.json") << "old"; }
    fs::permissions(d / "out.json", fs::perms::owner_read | fs::perms::owner_write);
    auto r = ptdsim({"evaluate", kScenario, "-o", (d / "out.json").string()});
    CHECK(r.status == 0);
    CHECK((fs::status(d / "out.json").permissions() & fs::perms::all) ==
          (fs::perms::owner_read | fs::perms::owner_write));
  }
}

TEST_CASE("cli: hostile outputs: a signal during the final write leaves no temporary", "[cli][hostile][outputs][signals]") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    DYNAMIC_SECTION("signal " << sig) {
      // a signal this process ignores (a child inherits that) is ignored by ptdsim too, which then
      // finishes; otherwise ptdsim dies of the signal it was sent, re-raised after the cleanup
      struct sigaction here {};
      ::sigaction(sig, nullptr, &here);
      const bool ignored = here.sa_handler == SIG_IGN;
      // The signal can arrive after the last rename when the machine is loaded (the watcher saw the
      // temporary, then was descheduled): that run finished whole, which is fine, and is tried again
      // until one is really interrupted.
      bool interrupted = false;
      for (int attempt = 0; attempt < 5 && !interrupted; ++attempt) {
        const fs::path d = fresh("signal" + std::to_string(sig) + "-" + std::to_string(attempt));
        const fs::path trace = d / "trace.json";
        bool seen = false;
        // the 1T step's trace is ~33 MB: the temporary lives long enough to be seen and signalled
        auto r = ptdsim({"evaluate", kBig, "--trace", trace.string(), "-o", (d / "out.txt").string()},
                        Options{"", false, false, [&](pid_t pid) {
                                  // the trace takes ~1 s to build, ~25 s under ASan
                                  const auto until = std::chrono::steady_clock::now() +
                                                     std::chrono::duration<double>(kHangSeconds);
                                  while (!seen && std::chrono::steady_clock::now() < until) {
                                    seen = !temporaries(d).empty();
                                    if (!seen) std::this_thread::yield();
                                  }
                                  ::kill(pid, sig);
                                }});
        INFO("attempt " << attempt << ", stderr: " << r.err);
        CHECK_FALSE(r.hung);
        CHECK(seen);
        if (ignored) {
          CHECK(r.status == 0);
          interrupted = true;  // nothing to interrupt: the run must finish whole
        } else {
          CHECK((r.signal == sig || r.status == 0));  // killed, or done before the signal came
          interrupted = r.signal == sig;
        }
        CHECK(temporaries(d).empty());
        if (fs::exists(trace)) CHECK(nlohmann::json::parse(slurp(trace)).contains("traceEvents"));
      }
      CHECK(interrupted);
    }
  }
}

TEST_CASE("cli: hostile bounds: values outside physics are refused at their key", "[cli][hostile][bounds]") {
  // each printed inf, -nan or a negative time with exit 0, or died in std::bad_alloc, before the
  // valid ranges (docs/inputs.md)
  const char* sets[] = {
      "hardware.gpu.peak_tflops.bf16=5e-324", "hardware.network.latency_us=1e308",
      "hardware.network.bandwidth_gbs=5e-324", "hardware.node.intra.bandwidth_gbs=5e-324",
      "hardware.gpu.hbm_gbs=5e-324",          "hardware.gpu.matmul_efficiency=5e-324",
      "hardware.gpu.hbm_efficiency=1e-300",   "hardware.node.intra.efficiency=1e-300",
      "hardware.gpu.memory_gib=1e308",        "hardware.gpu.kernel_launch_us=1e308",
      "hardware.network.oversubscription=1e300", "training.global_batch=1073741824",
      "model.layers=268435456",               "model.vocab=268435456",
      "model.hidden=1e30",                    "model.ffn_hidden=2147483648",
      "training.seq_len=.inf",                "hardware.gpu.memory_gib=.nan",
      "parallel.tp=-1",                       "cluster.gpus=0",
      "cluster.gpus=9223372036854775807",     "parallel.vpp=1000",
      "hardware.gpu.sms=2147483648",          "training.micro_batch=1e300",
      "training.global_batch=262144",  // 32768 micro-batches x 16 stages: past the simulator's passes
      "model.mtp_layers=1e30",                "model.head_dim=2147483648",
      // CPU offload's keys (docs/analytic.md "CPU offload")
      "hardware.host.link_gbs=5e-324",        "hardware.host.memory_gbs=5e-324",
      "hardware.host.memory_gib=1e308",       "hardware.host.adam_gparams=1e300",
      "training.offload_fraction=1.5",        "training.offload_fraction=-0.1",
      "training.offload=nvme",                "training.overlap.offload=maybe",
  };
  for (const char* set : sets) {
    DYNAMIC_SECTION(set) {
      auto r = ptdsim({"evaluate", kScenario, "--set", set, "--format", "json"});
      expect_refused(r);
      CHECK(r.err.rfind("--set:1:", 0) == 0);
    }
  }
}

TEST_CASE("cli: hostile bounds: values at the ends of their ranges give sane numbers", "[cli][hostile][bounds][nonsense]") {
  const std::vector<std::vector<std::string>> cases = {
      {"evaluate", kData + "extremes.yaml", "--format", "json"},
      {"evaluate", kData + "fastest.yaml", "--format", "json"},
      {"evaluate", kScenario, "--set", "hardware.network.latency_us=1000000", "--format", "json"},
      {"evaluate", kScenario, "--set", "hardware.node.intra.bandwidth_gbs=0.001", "--format", "json"},
      {"evaluate", kScenario, "--set", "hardware.gpu.peak_tflops.bf16=0.001", "--format", "json"},
      {"evaluate", kScenario, "--set", "hardware.gpu.matmul_efficiency=0.01", "--format", "json"},
      {"evaluate", kScenario, "--set", "hardware.gpu.memory_gib=1", "--format", "json"},
      {"evaluate", kScenario, "--set", "parallel.zero=3", "--format", "json"},
      // CPU offload at the ends of the host's ranges: a 1 MB/s link, a host of 1 GiB (does not fit), nothing offloaded
      {"evaluate", kScenario, "--set", "training.offload=optimizer", "--set", "hardware.host.link_gbs=0.001",
       "--format", "json"},
      {"evaluate", kScenario, "--set", "training.offload=optimizer", "--set", "hardware.host.memory_gib=1",
       "--set", "hardware.host.memory_gbs=0.001", "--set", "hardware.host.adam_gparams=1e-9", "--format", "json"},
      {"evaluate", kScenario, "--set", "training.offload=optimizer", "--set", "training.offload_fraction=0",
       "--format", "json"},
      {"evaluate", kScenario, "--set", "training.offload=optimizer_params", "--set", "parallel.zero=3",
       "--format", "json"},
      // 16384 micro-batches x 16 stages = 262144 pipeline passes: the limit itself
      {"evaluate", kScenario, "--set", "training.global_batch=131072", "--format", "json"},
  };
  for (const auto& args : cases) {
    std::string label;
    for (const auto& a : args) label += a + " ";
    DYNAMIC_SECTION(label) { expect_sane_json(ptdsim(args)); }
  }
}

TEST_CASE("cli: hostile work: bounded by the question, not by the flags", "[cli][hostile][work]") {
  SECTION("--max-micro-batch 1000000 lists the batch's divisors, as --max-micro-batch 1536 does") {
    const std::vector<std::string> base{"sweep", kScenario, "--max-tp", "8", "--max-pp", "4", "--max-cp", "1",
                                        "--max-vpp", "1", "--top", "3", "--no-scenario-rank", "--format", "json"};
    auto huge = base, batch = base;
    huge.insert(huge.end(), {"--max-micro-batch", "1000000"});
    batch.insert(batch.end(), {"--max-micro-batch", "1536"});
    const auto a = ptdsim(huge);
    const auto b = ptdsim(batch);
    expect_sane_json(a);
    expect_sane_json(b);
    CHECK(nlohmann::json::parse(a.out)["evaluated"] == nlohmann::json::parse(b.out)["evaluated"]);
  }
  SECTION("a cluster of 4194304 GPUs, the largest accepted") {
    auto r = ptdsim({"sweep", kScenario, "--gpus", "4194304", "--max-cp", "1", "--max-micro-batch", "1",
                     "--top", "3", "--no-scenario-rank", "--format", "json"});
    expect_sane_json(r);
  }
  SECTION("100k keys: the duplicate check is linear") {
    const fs::path f = scratch() / "keys.yaml";
    {
      std::ofstream out(f);
      for (int i = 0; i < 99990; ++i) out << "k" << i << ": 1\n";
      out << "k5: 2\n";
    }
    auto r = ptdsim({"evaluate", f.string()});
    expect_refused(r);
    CHECK(r.err.find(":99991:1: error: duplicate key 'k5' (first at line 6)") != std::string::npos);
    CHECK(r.seconds < kHangSeconds / 2);
  }
  SECTION("nesting past the limit says so") {
    const fs::path f = scratch() / "deep.yaml";
    { std::ofstream(f) << "a: " << std::string(600, '[') << std::string(600, ']') << "\n"; }
    auto r = ptdsim({"evaluate", f.string()});
    expect_refused(r);
    CHECK(r.err.find("error: nesting deeper than 64 levels") != std::string::npos);
  }
  SECTION("an alias bomb stops at the node limit") {
    auto r = ptdsim({"evaluate", kData + "alias_bomb.yaml"});
    expect_refused(r);
    CHECK(r.err.find("document too large (more than 200000 nodes after aliases)") != std::string::npos);
  }
  SECTION("an input past 4 MiB is refused before it is parsed, /dev/zero too") {
    const fs::path f = scratch() / "huge.yaml";
    {
      std::ofstream out(f);
      for (int i = 0; i < 80000; ++i) out << "- {precision: bf16, m: " << i << ", n: 1024, k: 1024, efficiency: 0.5}\n";
    }
    for (const std::string& input : {f.string(), std::string("/dev/zero"), kData + "include_dev_zero.yaml"}) {
      auto r = ptdsim({"evaluate", input});
      expect_refused(r);
      CHECK(r.err.find("input too large: more than 4194304 bytes") != std::string::npos);
    }
  }
}

TEST_CASE("cli: hostile parsers: every refusal is a positioned error", "[cli][hostile][parsers]") {
  const fs::path d = fresh("parsers");
  auto file = [&](const std::string& name, const std::string& content) {
    std::ofstream(d / name, std::ios::binary) << content;
    return (d / name).string();
  };
  const std::vector<std::vector<std::string>> cases = {
      {"evaluate", file("empty.yaml", "")},
      {"evaluate", file("binary.yaml", bytes("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe"))},
      {"evaluate", file("comma.yaml", ",\t,\n")},  // yaml-cpp 0.7 looped forever
      {"evaluate", file("nul.yaml", bytes("name: a\0b\nmodel: x\n"))},
      {"evaluate", file("unclosed.yaml", "model: [1, 2\n")},
      {"evaluate", file("tabs.yaml", "parallel:\n\ttp: 2\n")},
      {"evaluate", file("docs.yaml", "a: 1\n---\nb: 2\n")},
      {"evaluate", file("cycle.yaml", "name: &x [*x]\n")},
      {"evaluate", file("key.yaml", "[a, b]: 1\n")},
      {"evaluate", file("utf16.yaml", bytes("\xff\xfe" "n\0a\0m\0e\0"))},
      {"evaluate", d.string()},  // a directory
      {"evaluate", "does/not/exist.yaml"},
      {"evaluate", kScenario, "--set", "parallel.tp=[1,"},
      {"evaluate", kScenario, "--set", "parallel.tp=,"},
      {"evaluate", kScenario, "--set", "model.layers=&a [*a]"},
      {"evaluate", kScenario, "--set", "=4"},
      {"sweep", file("sweep.yaml", "name: s\nmodel: {layers: 1}\n")},
      {"validate", file("dataset.yaml", "- {name: r, source: x, split: train, not_modelled: n/a}\n")},
      {"validate", file("dataset2.yaml", "{not: a list}\n")},
      {"calibrate", "import-nccl-tests", kData + "nccl_garbage.txt"},
      // a base hardware file whose calibrated row names an algorithm NCCL does not have
      {"calibrate", "import-nccl-tests", "tests/data/nccl-tests/oci-a100-2x8-roce-allreduce-ring-newfmt.txt", "--base",
       "tests/data/bad/hardware_collective_unknown_algorithm.yaml", "-o", (d / "calibrated.yaml").string()},
      {"evaluate", kScenario, "--set", "hardware=tests/data/bad/hardware_collective_algorithm_p2p.yaml"},
      // a study file (docs/study.md): its own errors, and what it hands the scenario loader
      {"study", file("study_empty.yaml", "")},
      {"study", file("study_binary.yaml", bytes("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe"))},
      {"study", file("study_list.yaml", "- base: x\n")},
      {"study", d.string()},  // a directory
      {"study", file("study_base.yaml", "base: {a: 1}\nvary: {cluster.gpus: [8]}\n")},
      {"study", file("study_cycle.yaml", "base: &x [*x]\nvary: {cluster.gpus: [8]}\n")},
      {"study", file("study_range.yaml", "base: " + fs::absolute(kScenario).string() + "\nvary: {cluster.gpus: 1..1e300}\n")},
      {"study", file("study_grid.yaml", "base: " + fs::absolute(kScenario).string() +
                                            "\nvary: {cluster.gpus: 1..60000, training.seq_len: 1..60000}\n")},
      {"study", file("study_value.yaml", "base: " + fs::absolute(kScenario).string() +
                                             "\nvary: {parallel.tp: [&a [*a]]}\n")},
      {"study", "merge", file("not_a_shard", "point,tp\n0,8\n")},
      {"study", "merge", file("bad_shard", "ptdsim-study 1 hash 0 points 4 shard 9/2 study x.yaml\n")},
  };
  for (const auto& args : cases) {
    std::string label;
    for (const auto& a : args) label += a + " ";
    DYNAMIC_SECTION(label) { expect_refused(ptdsim(args)); }
  }
}
