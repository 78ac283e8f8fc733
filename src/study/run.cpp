#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/study/study.hpp"

namespace ptdsim::study {
namespace {

// The reason a point's scenario does not load: its problems' messages, without the study file's
// positions (the file was checked; what fails is the combination).
std::string reason_of(const core::ConfigError& e) {
  std::string out;
  for (const auto& d : e.diagnostics()) out += (out.empty() ? "" : "; ") + d.message;
  return out;
}

// What an objective needs that the point may not give (sweep's check_objective, as a reason).
std::string objective_problem(const std::string& objective, const core::Scenario& s) {
  const bool budget = objective == "days" || objective == "gpu_hours" || objective == "cost" || objective == "energy";
  if (budget && !(s.training.tokens > 0)) return objective + " needs a token budget: training.tokens";
  if (objective == "cost" && !(s.cost.gpu_hour > 0)) return "cost needs a price: cost.gpu_hour";
  if (objective == "energy" && !(s.hardware.gpu.tdp_w > 0 && s.hardware.gpu.idle_w > 0))
    return "energy needs the GPU's power: hardware.gpu.tdp_w and hardware.gpu.idle_w";
  return "";
}

planner::Choice choice_of(const io::StudySpec& spec, const char* key) {
  const auto it = spec.degrees.find(key);
  if (it == spec.degrees.end()) return {};
  const auto c = planner::parse_choice(it->second);
  return c ? *c : planner::Choice{};  // the loader checked the text
}

int max_of(const io::StudySpec& spec, const char* key, int fallback) {
  const auto it = spec.degrees.find(key);
  return it == spec.degrees.end() ? fallback : std::stoi(it->second);
}

io::StudyLayout layout_of(const planner::Ranked& x) {
  const auto& c = x.candidate;
  const auto& r = x.report;
  io::StudyLayout l;
  l.tp = c.tp;
  l.pp = c.pp;
  l.dp = c.dp;
  l.cp = c.cp;
  l.ep = c.ep;
  l.vpp = c.vpp;
  l.micro_batch = c.micro_batch;
  l.zero = c.zero;
  l.recompute = std::string(core::name(c.recompute));
  l.sequence_parallel = c.sequence_parallel;
  l.schedule = std::string(core::name(c.schedule));
  l.step_s = r.step_s;
  l.mfu = r.mfu;
  l.tokens_per_s = r.tokens_per_s;
  if (r.to_train.known()) {
    l.days = r.to_train.days();
    l.gpu_hours = r.to_train.gpu_hours;
    l.energy_mwh = r.to_train.energy_j / 3.6e9;  // 1 MWh = 3.6e9 J
    l.cost = r.to_train.cost;
  }
  l.peak_gib = r.peak_bytes / core::kGiB;
  l.capacity_gib = r.capacity_bytes / core::kGiB;
  l.bounded_by = r.bounded_by.empty() ? std::string("-") : core::describe(r.bounded_by);
  return l;
}

// "no layout fits: rejected memory 1200, divisibility 40"
std::string no_layout(const planner::SweepResult& r) {
  if (r.evaluated == 0) return "no layout: " + r.no_candidate;  // (set whether or not it applies)
  std::string out = fmt::format("no layout fits ({} candidates)", r.evaluated);
  std::string rejected;
  for (const auto& [why, n] : r.rejected) rejected += fmt::format("{}{} {}", rejected.empty() ? "" : ", ", why, n);
  return rejected.empty() ? out : out + ": rejected " + rejected;
}

}  // namespace

io::StudyRecord run_point(const io::StudySpec& spec, std::uint64_t index, int threads) {
  io::StudyRecord record;
  record.point = index;
  const auto p = spec.point(index);
  const auto overrides = spec.overrides(p);
  core::Scenario base;
  try {
    // the sweep lays the point out anew: the base file's own degrees need not suit it
    base = io::load_scenario(spec.bases[p.base], overrides, io::Checks::except_layout);
  } catch (const core::ConfigError& e) {
    record.failed = reason_of(e);
    return record;
  }
  if (auto why = objective_problem(spec.objective, base); !why.empty()) {
    record.failed = why;
    return record;
  }
  planner::SearchSpace bounds;
  bounds.tp = choice_of(spec, "tp");
  bounds.pp = choice_of(spec, "pp");
  bounds.cp = choice_of(spec, "cp");
  bounds.ep = choice_of(spec, "ep");
  bounds.dp = choice_of(spec, "dp");
  bounds.vpp = choice_of(spec, "vpp");
  bounds.micro_batch = choice_of(spec, "micro_batch");
  bounds.zero = choice_of(spec, "zero");
  bounds.max_tp = max_of(spec, "max_tp", 0);
  bounds.max_pp = max_of(spec, "max_pp", 0);
  bounds.max_cp = max_of(spec, "max_cp", 0);
  bounds.max_ep = max_of(spec, "max_ep", 0);
  bounds.max_vpp = max_of(spec, "max_vpp", 0);
  bounds.max_micro_batch = max_of(spec, "max_micro_batch", bounds.max_micro_batch);
  std::vector<std::string> keys;
  for (const auto& o : overrides) keys.push_back(o.key);
  // as sweep --set: a layout key the study sets or varies pins that dimension
  planner::pin_dimensions(base, keys, bounds);
  planner::search_switches(spec.search, bounds);
  const planner::Space space(base, bounds);

  planner::SweepOptions opt;
  opt.top = spec.top;
  opt.threads = threads;
  opt.rank_scenario = false;
  opt.min_free_bytes = spec.min_free_gib * core::kGiB;
  const auto& o = spec.objective;
  opt.objective = o == "memory" ? planner::Objective::memory
                  : o == "mfu"  ? planner::Objective::mfu
                  : o == "energy" ? planner::Objective::energy
                                  : planner::Objective::time;
  const planner::SweepResult result = planner::sweep(base, space, opt);
  for (const auto& x : result.results) {
    if (x.near_tie_of >= 0) continue;  // a study point keeps the rows (planner/near_ties.hpp)
    if (auto problem = report::report_problem(x.report); !problem.empty()) {
      record.layouts.clear();
      record.failed = problem;
      return record;
    }
    record.layouts.push_back(layout_of(x));
  }
  if (record.layouts.empty()) record.failed = no_layout(result);
  return record;
}

namespace {

// This shard's points: those the journal holds already, and those still to run.
struct ShardPoints {
  std::vector<io::StudyRecord> resumed;
  std::vector<std::uint64_t> pending;
  std::uint64_t total = 0;
};
ShardPoints shard_points(const io::StudySpec& spec, const RunOptions& options,
                         const std::optional<io::StudyJournal>& journal) {
  const std::uint64_t points = spec.points();
  ShardPoints out;
  std::vector<bool> done(points, false);
  if (journal) {
    for (const auto& r : journal->done()) {
      if (io::shard_of(r.point, options.count) != options.shard) continue;
      done[r.point] = true;
      out.resumed.push_back(r);
    }
  }
  for (std::uint64_t i = 0; i < points; ++i) {
    if (io::shard_of(i, options.count) != options.shard) continue;
    ++out.total;
    if (!done[i]) out.pending.push_back(i);
  }
  return out;
}

// Runs the `pending` points on `threads` workers, handing each batch of finished records to
// `finished` on the calling thread (which writes the journal), and `tick` about every second. The
// first worker's exception stops the others and is thrown here.
template <class Finished, class Tick>
void run_pending(const io::StudySpec& spec, const std::vector<std::uint64_t>& pending, int threads,
                 Finished&& on_finished, Tick&& tick) {
  std::mutex m;
  std::condition_variable cv;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::vector<io::StudyRecord> finished;
  int running = threads;
  auto work = [&] {
    try {
      for (;;) {
        if (stop.load()) break;
        const std::size_t k = next.fetch_add(1);
        if (k >= pending.size()) break;
        io::StudyRecord r = run_point(spec, pending[k], 1);
        std::lock_guard lock(m);
        finished.push_back(std::move(r));
        cv.notify_one();
      }
    } catch (...) {
      std::lock_guard lock(m);
      if (!error) error = std::current_exception();
      stop = true;
    }
    std::lock_guard lock(m);
    --running;
    cv.notify_one();
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);

  try {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait_for(lock, std::chrono::seconds(1), [&] { return !finished.empty() || running == 0; });
      std::vector<io::StudyRecord> batch;
      batch.swap(finished);
      const bool over = running == 0;
      lock.unlock();
      on_finished(batch);
      tick();
      lock.lock();
      if (over && finished.empty()) break;
    }
  } catch (...) {
    stop = true;
    for (auto& t : pool) t.join();
    throw;
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

std::vector<io::StudyRecord> run_study(const io::StudySpec& spec, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<io::StudyJournal> journal;
  if (!options.journal.empty()) journal.emplace(options.journal, spec);

  ShardPoints shard = shard_points(spec, options, journal);
  std::vector<io::StudyRecord> records = std::move(shard.resumed);
  Progress progress;
  progress.total = shard.total;
  progress.resumed = records.size();
  progress.done = records.size();

  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  threads = static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), std::max<std::uint64_t>(shard.pending.size(), 1)));
  run_pending(
      spec, shard.pending, threads,
      [&](std::vector<io::StudyRecord>& batch) {
        for (auto& r : batch) {
          if (journal) journal->append(r);
          records.push_back(std::move(r));
          ++progress.done;
        }
      },
      [&] {
        progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (options.on_progress) options.on_progress(progress);
      });
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.point < b.point; });
  return records;
}

bool parse_shard(const std::string& text, int& shard, int& count) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return false;
  try {
    std::size_t a = 0, b = 0;
    const std::string i = text.substr(0, slash), n = text.substr(slash + 1);
    if (i.empty() || n.empty() || !std::all_of(i.begin(), i.end(), ::isdigit) || !std::all_of(n.begin(), n.end(), ::isdigit))
      return false;
    shard = std::stoi(i, &a);
    count = std::stoi(n, &b);
  } catch (const std::exception&) {
    return false;
  }
  return count >= 1 && count <= (1 << 20) && shard >= 1 && shard <= count;
}

std::vector<io::StudyRecord> merge_shards(const io::StudySpec& spec, const std::vector<io::ShardFile>& shards,
                                          const std::vector<std::string>& paths) {
  auto bad = [](const std::string& path, const std::string& message) {
    throw core::ConfigError(core::SourceLocation{path, 1, 1}, message);
  };
  const std::uint64_t points = spec.points();
  const int count = shards.empty() ? 0 : shards.front().count;
  std::vector<const io::ShardFile*> by_shard(static_cast<std::size_t>(count) + 1, nullptr);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto& s = shards[i];
    if (s.hash != spec.hash || s.points != points)
      bad(paths[i], "a shard of another study (or of another version of " + spec.file + "): hash " + s.hash + ", this study's " + spec.hash);
    if (s.count != count) bad(paths[i], fmt::format("a shard of {} where the first is of {}", s.count, count));
    if (by_shard[static_cast<std::size_t>(s.shard)])
      bad(paths[i], fmt::format("shard {}/{} is given twice", s.shard, s.count));
    by_shard[static_cast<std::size_t>(s.shard)] = &s;
  }
  for (int k = 1; k <= count; ++k)
    if (!by_shard[static_cast<std::size_t>(k)])
      throw core::ConfigError(core::SourceLocation{"study merge", 0, 0}, fmt::format("shard {}/{} is missing", k, count));
  std::vector<io::StudyRecord> out;
  out.reserve(static_cast<std::size_t>(points));
  std::vector<std::size_t> at(static_cast<std::size_t>(count) + 1, 0);
  for (std::uint64_t p = 0; p < points; ++p) {
    const int k = io::shard_of(p, count);
    const auto& s = *by_shard[static_cast<std::size_t>(k)];
    auto& i = at[static_cast<std::size_t>(k)];
    if (i >= s.records.size() || s.records[i].point != p) {
      bad(paths[static_cast<std::size_t>(&s - shards.data())], fmt::format("point {} is missing: the shard did not finish", p));
    }
    out.push_back(s.records[i++]);
  }
  return out;
}

}  // namespace ptdsim::study
