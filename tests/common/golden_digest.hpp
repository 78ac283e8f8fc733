#pragma once
// Helpers of the golden tests of the analytic engine, the simulator and the sweep (tests/analytic/
// golden_evaluate_test.cpp, tests/sim/golden_test.cpp, tests/planner/golden_sweep_test.cpp): results written to the last bit,
// digested, and compared line by line with a file under tests/data/golden/. A change meant only to
// make the code faster must leave every line as it is; an intended change of results regenerates
// the file with PTDSIM_UPDATE_GOLDEN=1 and says in the commit which results moved and why.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/version.hpp"
#include "ptdsim/report/evaluate.hpp"

namespace ptdsim::testing::golden {

// FNV-1a, 64 bits: a digest of the bytes, the same on every platform.
inline std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

inline std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// A double to the last bit (%a cannot round).
inline std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

// A double readable and still exact (17 significant digits round-trip).
inline std::string full(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The report as `evaluate --format json` writes it (nlohmann's dump: every double to the last bit),
// the tool's version left out (not a result), and the critical path's parts with their exact shares
// (the JSON has them in words).
inline std::string report_text(const core::Report& r) {
  std::string j = report::report_json(r, -1);
  const std::string v = std::string("\"version\":\"") + core::kVersion + "\"";
  if (const auto at = j.find(v); at != std::string::npos) j.replace(at, v.size(), "\"version\":\"\"");
  std::ostringstream o;
  o << j;
  for (const auto& b : r.bounded_by)
    o << '\n' << core::name(b.kind) << ' ' << b.stage << ' ' << b.beside_compute << ' ' << exact(b.share);
  return o.str();
}

inline std::string report_digest(const core::Report& r) { return hex(fnv1a(report_text(r))); }

// Every field of a step plan, doubles exact: what the scheduler and the bound read, stage by stage
// with each index followed to what it names (a stage's collectives, a chunk's sends, a pass's
// segments and their collectives) and printed relative to its stage or chunk. Where the plan keeps
// them (a repeated stage may share its segments and collectives with the stage it repeats) is
// not part of the plan's meaning, so it is not in the digest.
inline std::string plan_text(const analytic::StepPlan& p) {
  std::ostringstream o;
  o << p.shape.p << ' ' << p.shape.v << ' ' << p.shape.m << ' ' << p.schedule->splits_weight_grad << ' '
    << p.overlap_tp << p.overlap_dp << p.overlap_pp << ' ' << exact(p.comm_share) << '\n';
  for (const auto& g : p.groups) o << g.ranks << ':' << static_cast<int>(g.scope) << ':' << g.ranks_per_node << ' ';
  o << '\n';
  auto comm = [&](const analytic::PlanComm& c) {
    o << "M " << static_cast<int>(c.task) << ' ' << static_cast<int>(c.stream) << ' ' << static_cast<int>(c.overlap)
      << ' ' << static_cast<int>(c.group) << ' ' << exact(c.time_s) << ' ' << exact(c.sent_bytes) << ' '
      << exact(c.window_s) << ' ' << c.depth << '\n';
  };
  for (const auto& s : p.stages) {
    const int base = s.comm_begin;
    o << "S " << s.stage << ' ' << s.layers << ' ' << s.chunk_begin << ' ' << s.comm_end - base << ' '
      << s.start_begin - base << ' ' << s.start_end - base << ' ' << s.end_begin - base << ' ' << s.end_end - base
      << ' ' << s.post_begin - base << ' ' << s.post_end - base << ' ' << exact(s.optimizer_s) << ' '
      << exact(s.dp_bucket_count) << ' ' << exact(s.grad_bytes) << '\n';
    for (int j = s.comm_begin; j < s.comm_end; ++j) comm(p.comms[j]);
    for (int k = 0; k < p.shape.v; ++k) {
      const auto& c = p.chunks[static_cast<std::size_t>(s.chunk_begin) + k];
      auto rel = [&](int i) { return i < 0 ? -1 : i - base; };
      o << "C " << c.layer_first << ' ' << c.layers << ' ' << rel(c.send_forward) << ' ' << rel(c.send_backward) << '\n';
      auto pass = [&](const analytic::PassPlan& x) {
        o << "P " << x.seg_begin - c.pass[0].seg_begin << ',' << x.seg_count << ',' << exact(x.compute_s) << ','
          << exact(x.flops) << '\n';
        for (int i = x.seg_begin; i < x.seg_begin + x.seg_count; ++i) {
          const auto& g = p.segments[i];
          o << "G " << exact(g.compute_s) << ' ' << exact(g.flops) << ' ' << g.repeat << ' ' << g.comm_begin - base
            << ' ' << g.comm_count << '\n';
        }
      };
      for (const auto& x : c.pass) pass(x);
      pass(c.last_grad);
    }
  }
  return o.str();
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] != '#') lines.push_back(l);
  return lines;
}

// Compares `got` with the golden file line by line (the first 20 differences shown), or with
// PTDSIM_UPDATE_GOLDEN=1 rewrites the file, headed by `header` (comment lines).
inline void compare_or_update(const std::string& path, const std::string& header, const std::vector<std::string>& got) {
  if (const char* u = std::getenv("PTDSIM_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream out(path, std::ios::trunc);
    out << header;
    for (const auto& l : got) out << l << '\n';
    REQUIRE(out.good());
    WARN("wrote " << path << " (" << got.size() << " lines)");
    return;
  }
  const std::vector<std::string> want = read_lines(path);
  CHECK(want.size() == got.size());
  int differ = 0;
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    const std::string w = i < want.size() ? want[i] : "(none)", g = i < got.size() ? got[i] : "(none)";
    if (g != w && ++differ <= 20) UNSCOPED_INFO("golden: " << w << "\nnow:    " << g);
  }
  CHECK(differ == 0);
}

// The shipped scenarios' file names (scenarios/*.yaml), sorted: the golden files list them in this order.
inline std::vector<std::string> scenario_files(const std::string& root) {
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(root + "/scenarios"))
    if (f.path().extension() == ".yaml") files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

// splitmix64 (Steele et al. 2014): the same draws on every standard library, unlike
// std::uniform_int_distribution, so the sampled cases do not depend on the platform.
struct Draw {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  bool coin() { return below(2) == 1; }
  int pick(std::initializer_list<int> v) { return v.begin()[below(v.size())]; }
};

}  // namespace ptdsim::testing::golden
