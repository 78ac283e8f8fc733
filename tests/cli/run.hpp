#pragma once
// Runs the `ptdsim` executable the way a user or a script does, for the golden tests of tests/cli.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_testing {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A folder of this test process's own under the system's temporary directory.
inline std::filesystem::path scratch_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("ptdsim_cli_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// `ptdsim ARGS` with stdin closed; ARGS is a shell string (quote what must stay one argument).
inline Run ptdsim(const std::string& args) {
  static int n = 0;
  const auto dir = scratch_dir();
  const auto out = dir / ("out" + std::to_string(n));
  const auto err = dir / ("err" + std::to_string(n++));
  const std::string cmd = std::string(PTDSIM_BIN) + " " + args + " >" + out.string() + " 2>" + err.string() +
                          " </dev/null";
  const int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace cli_testing
