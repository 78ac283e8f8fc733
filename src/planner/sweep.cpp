#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/planner/near_ties.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/offload.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/analytic/to_train.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/framework.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/planner/explain.hpp"
#include "ptdsim/sim/simulate.hpp"

namespace ptdsim::planner {
namespace {

// Work sizes are constants, not functions of the thread count: which candidates get simulated
// depends on the simulation batch, and that must not change with --threads.
constexpr std::uint64_t kAnalyticChunk = 1024;  // indices per analytic work item
constexpr std::size_t kPlanChunk = 64;     // candidates per work item when plan keys are computed
constexpr std::size_t kPlanBlock = 1024;   // plan keys computed at a time (KeyOrder)
constexpr std::size_t kSimBatch = 16;           // candidates simulated between two pruning checks
// Steps KeyOrder keeps for the simulation tier: its lowest plan keys not yet taken (KeptSteps).
// The tier takes 256 places on the GPT-3 sweep and 76 on Llama 3 405B's; a bigger store only
// holds more memory (a step of a 16-stage layout is tens of kB), a smaller one builds more twice.
constexpr std::size_t kKeptSteps = 256;
constexpr std::uint64_t kRowChunk = 256;        // indices per CSV work item
// Candidates settled per round while ranking the scenario's layout: only a count comes out of them,
// so this size changes nothing but how often the workers meet.
constexpr std::uint64_t kRankBatch = 256;
// The bound is compared with a hair of slack so that rounding in a tie can never prune a
// candidate whose simulated time equals the K-th best.
constexpr double kBoundSlack = 1e-9;
// More workers than this never help a sweep (the work items are at most a few thousand at a time).
constexpr int kMaxThreads = 256;

// A feasible candidate after the analytic tier: all the sweep keeps for the un-simulated ones.
// The analytic tier fills in work_lower_bound()'s values, which KeyOrder replaces with the plan's
// (step_lower_bound()) where they are needed; each with the cost of scale's floor added
// (scale_wait_floor()), as the simulated step it is compared with has the wait.
struct Entry {
  std::uint64_t index = 0;
  double bound_s = 0;
  double peak_bytes = 0;
  // A lower bound on step_energy_j of the simulated step, the energy objective's key: the GPU
  // idles at least over the bound and runs at least the analytic engine's compute of its busiest
  // stage (the scheduler runs the same ops, only stretched by contention).
  double energy_bound_j = 0;
};

double energy_bound_j(const core::GpuSpec& gpu, double bound_s, double busiest_s) {
  const double busy = std::min(bound_s, busiest_s);
  return gpu.idle_w * bound_s + std::max(0.0, gpu.tdp_w - gpu.idle_w) * busy;
}

struct AnalyticChunk {
  std::uint64_t evaluated = 0;
  std::map<std::string, std::uint64_t> rejected;
  std::map<std::string, std::uint64_t> first;  // a reason's first rejected candidate in the chunk
  std::vector<Entry> feasible;
};

// Progress from the calling thread, about every 100 ms: tick() after each item of work.
class Ticker {
 public:
  Ticker(const char* phase, std::uint64_t total, const std::function<std::uint64_t()>& done,
         const std::function<void(const Progress&)>& on_progress)
      : phase_(phase), total_(total), done_(done), on_progress_(on_progress) {}
  void tick() {
    if (!on_progress_ || std::this_thread::get_id() != caller_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ >= std::chrono::milliseconds(100)) {
      last_ = now;
      on_progress_(Progress{phase_, done_(), total_});
    }
  }

 private:
  const char* phase_;
  std::uint64_t total_;
  const std::function<std::uint64_t()>& done_;
  const std::function<void(const Progress&)>& on_progress_;
  std::thread::id caller_ = std::this_thread::get_id();
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Runs fn(item, worker) for item in [0, n) on the sweep's oneTBB arena (worker: the arena slot,
// below its concurrency). The calling thread works in the arena too (its reserved slot: a
// one-thread arena is the caller alone) and reports progress between its items, about every 100 ms.
// oneTBB rethrows the first exception here.
template <class Fn>
void parallel_for(std::uint64_t n, tbb::task_arena& arena, const char* phase, std::uint64_t total,
                  const std::function<std::uint64_t()>& done,
                  const std::function<void(const Progress&)>& on_progress, Fn fn) {
  Ticker ticker(phase, total, done, on_progress);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, n, 1), [&](const tbb::blocked_range<std::uint64_t>& r) {
      const int worker = tbb::this_task_arena::current_thread_index();
      for (std::uint64_t i = r.begin(); i != r.end(); ++i) {
        fn(i, worker);
        ticker.tick();
      }
    });
  });
}

// The same for items of unequal cost: the workers take them one at a time, in the order of
// `first` (largest first: a batch then ends with the workers nearly together, where oneTBB's
// halving of the range leaves one worker alone with the last large item).
template <class Fn>
void parallel_claim(const std::vector<std::uint64_t>& first, tbb::task_arena& arena, const char* phase,
                    std::uint64_t total, const std::function<std::uint64_t()>& done,
                    const std::function<void(const Progress&)>& on_progress, Fn fn) {
  Ticker ticker(phase, total, done, on_progress);
  std::atomic<std::size_t> next{0};
  arena.execute([&] {
    tbb::parallel_for(0, arena.max_concurrency(), [&](int) {
      const int worker = tbb::this_task_arena::current_thread_index();
      for (std::size_t k; (k = next++) < first.size();) {
        fn(first[k], worker);
        ticker.tick();
      }
    });
  });
}

// Items [0, n) by decreasing cost, ties in index order.
std::vector<std::uint64_t> largest_first(const std::vector<double>& cost) {
  std::vector<std::uint64_t> order(cost.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return cost[a] > cost[b]; });
  return order;
}

// A simulation's cost grows with its tasks: stages x chunks x micro-batches.
double simulation_cost(const Candidate& c, const core::Scenario& base) {
  return static_cast<double>(c.pp) * c.vpp * base.training.global_batch / (static_cast<double>(c.dp) * c.micro_batch);
}

// Whether the base's own pipeline split fits a pipeline (planner::own_split_fits), kept per pp and
// vpp: within a sweep the model and the base's split fields are fixed, so nothing else changes it.
class SplitFits {
 public:
  // s: the base's split fields, the candidate's pp and vpp
  bool operator()(const core::Scenario& s) {
    const std::pair<int, int> key{s.parallel.pp, s.parallel.vpp};
    for (const auto& [k, fits] : known_)
      if (k == key) return fits;
    return known_.emplace_back(key, own_split_fits(s)).second;
  }

 private:
  std::vector<std::pair<std::pair<int, int>, bool>> known_;
};

// Writes a candidate into a worker's scratch scenario. apply() may drop an explicit pipeline split
// that does not fit the candidate; it comes back from the base so that a scratch copy's history
// (which candidates this worker saw before) can never change a result. `fits`: the worker's
// answers kept (tier 1 places a million candidates).
void place(const Candidate& c, const core::Scenario& base, core::Scenario& s, SplitFits* fits = nullptr) {
  auto& p = s.parallel;
  const auto& b = base.parallel;
  if (p.stage_layers != b.stage_layers) p.stage_layers = b.stage_layers;
  p.first_stage_layers = b.first_stage_layers;
  p.last_stage_layers = b.last_stage_layers;
  p.embedding_in_split = b.embedding_in_split;
  p.loss_in_split = b.loss_in_split;
  if (!fits) return apply(c, s);
  p.pp = c.pp;
  p.vpp = c.vpp;
  apply(c, s, (*fits)(s));
}

// The ranking of each objective; the candidate index makes every order total.
bool better(Objective o, const core::Report& x, std::uint64_t x_index, const core::Report& y,
            std::uint64_t y_index) {
  switch (o) {
    case Objective::energy: {
      const double ex = step_energy_j(x), ey = step_energy_j(y);
      if (ex != ey) return ex < ey;
      if (x.step_s != y.step_s) return x.step_s < y.step_s;
      break;
    }
    case Objective::memory:
      if (x.peak_bytes != y.peak_bytes) return x.peak_bytes < y.peak_bytes;
      if (x.step_s != y.step_s) return x.step_s < y.step_s;
      break;
    case Objective::mfu:
      if (x.mfu != y.mfu) return x.mfu > y.mfu;
      if (x.peak_bytes != y.peak_bytes) return x.peak_bytes < y.peak_bytes;
      break;
    case Objective::time:
      if (x.step_s != y.step_s) return x.step_s < y.step_s;
      if (x.peak_bytes != y.peak_bytes) return x.peak_bytes < y.peak_bytes;  // more headroom
      break;
  }
  return x_index < y_index;
}

bool better(Objective o, const Ranked& a, const Ranked& b) {
  return better(o, a.report, a.candidate.index, b.report, b.candidate.index);
}

// Tier 2 visits the feasible candidates in order of this cheap key. Memory comes from the analytic
// engine, so for the memory objective the key is exact up to the ZB-H1 caveat; for time (and MFU,
// which orders as time: the model FLOPs are the same for every layout) it is the lower bound.
double key(Objective o, const Entry& e) {
  if (o == Objective::memory) return e.peak_bytes;
  if (o == Objective::energy) return e.energy_bound_j;
  return e.bound_s;
}

// True when a candidate with key `k` cannot order before the simulated report `r`: the scheduler's
// peak is never below the analytic one, and its step never below the bound.
bool beyond(Objective o, double k, const core::Report& r) {
  if (o == Objective::memory) return k > r.peak_bytes;
  if (o == Objective::energy) return k > step_energy_j(r) * (1 + kBoundSlack);
  return k > r.step_s * (1 + kBoundSlack);
}

// The key of a candidate from its step's schedule bound (schedule_lower_bound()): tighter
// than the one it was ordered by, and asked for only before a simulation that key could not spare.
// Not for the memory objective, whose key holds no time.
struct ScheduleKey {
  double bound_s;  // the schedule bound
  double key;      // the objective's key from it
};
ScheduleKey schedule_key(Objective o, const analytic::Step& step) {
  const analytic::StepPlan& plan = step.plan;
  const double busiest = busiest_stage_compute(plan);
  const double bound = schedule_lower_bound(plan) + scale_wait_floor(*step.scenario, busiest);
  if (o == Objective::energy) return {bound, energy_bound_j(step.scenario->hardware.gpu, bound, busiest)};
  return {bound, bound};
}

bool before(Objective o, const Entry& a, const Entry& b) {
  const double ka = key(o, a), kb = key(o, b);
  return ka != kb ? ka < kb : a.index < b.index;
}

// What every tier needs: the inputs, the workers and one scratch scenario per worker.
struct Context {
  const core::Scenario& base;
  const Space& space;
  const SweepOptions& opt;
  int threads;
  std::vector<core::Scenario> scratch;
  tbb::task_arena arena;
};

// One worker's reusable state (tier 1 and every later phase): what the candidates it sees share,
// kept instead of being recomputed per candidate (docs/performance.md "Planner"), and the storage
// of the step it builds. Every value is the one the per-candidate call would compute, to the last
// bit: the split is a function of pp and vpp within a sweep (place()
// gives every candidate the base's split fields, and apply() keeps or drops them by pp and vpp
// alone), the layer costs a function of their key (analytic/layer_costs.hpp).
class Tier1Worker {
 public:
  // pipeline_split(s), kept per pp and vpp
  const core::PipelineSplit& split(const core::Scenario& s) {
    if (!have_split_ || s.parallel.pp != pp_ || s.parallel.vpp != vpp_) {
      split_ = core::pipeline_split(s);
      pp_ = s.parallel.pp;
      vpp_ = s.parallel.vpp;
      have_split_ = true;
      have_layers_ = false;
    }
    return split_;
  }
  // pipeline_layers(s); s passed core::check, so split(s) holds its pp and vpp
  const analytic::PipelineLayers& layers(const core::Scenario& s) {
    split(s);
    if (!have_layers_) {
      layers_ = analytic::pipeline_layers(s);
      have_layers_ = true;
    }
    return layers_;
  }
  // layer_costs(s), every key seen kept (up to kCosts, then the store starts again). The space's
  // pipeline digit (schedule, vpp) is above the micro-batch, recompute and sequence-parallel
  // digits the key reads, so each pipeline choice cycles through the same few dozen keys again: a
  // store of the last few lost them all between two cycles (DeepSeek-V3's sweep computed the costs
  // for one candidate in five).
  const analytic::LayerCosts& costs(const core::Scenario& s) {
    const analytic::LayerCostsKey key = analytic::layer_costs_key(s);
    if (last_costs_ && last_costs_->first == key) return last_costs_->second;
    auto it = costs_.find(key);
    if (it == costs_.end()) {
      if (costs_.size() >= kCosts) costs_.clear();  // (no reference outlives the candidate it was asked for)
      it = costs_.try_emplace(key).first;
      analytic::layer_costs(s, it->second);
    }
    last_costs_ = &*it;
    return it->second;
  }
  // The candidate's step (analytic::make_step) up to `parts`, with the kept split and layer costs
  // lent, into storage kept from the previous candidate: valid until the next call.
  const analytic::Step& step(const core::Scenario& s, analytic::StepParts parts) {
    const analytic::LayerCosts& c = costs(s);
    analytic::make_step(s, *step_, parts, analytic::StepLent{&layers(s), &c, &groups(s)});
    return *step_;
  }
  SplitFits split_fits;  // place()'s answers for this worker's candidates
  // The storage step() builds into, for KeptSteps::offer to take and give back in another.
  std::unique_ptr<analytic::Step>& step_storage() { return step_; }
  // step_groups(s), the last kGroups keys kept: the groups read the degrees, ZeRO-3 and its shard
  // group, and what a sweep holds fixed (the placement, the GPUs per node, the model's experts)
  const analytic::StepGroups& groups(const core::Scenario& s) {
    const auto& p = s.parallel;
    const GroupsKey key{p.tp, p.pp, p.dp, p.cp, p.ep, p.zero >= 3 ? p.sharding.shard_ranks : -1};
    for (const auto& [k, g] : groups_)
      if (k == key) return g;
    if (groups_.size() < kGroups) return groups_.emplace_back(key, analytic::step_groups(s)).second;
    auto& slot = groups_[next_group_];
    next_group_ = (next_group_ + 1) % kGroups;
    slot = {key, analytic::step_groups(s)};
    return slot.second;
  }

 private:
  static constexpr std::size_t kCosts = 512, kGroups = 8;
  struct CostsHash {
    std::size_t operator()(const analytic::LayerCostsKey& k) const {
      std::uint64_t h = 0;
      for (std::uint64_t v : {std::uint64_t(k.tp), std::uint64_t(k.pp), std::uint64_t(k.dp), std::uint64_t(k.cp),
                              std::uint64_t(k.ep), std::uint64_t(k.micro_batch), std::uint64_t(k.sequence_parallel),
                              std::uint64_t(k.recompute), std::uint64_t(k.etp), std::uint64_t(k.recompute_modules),
                              std::uint64_t(k.offload_modules)})
        h = (h ^ v) * 0x100000001b3ULL;  // FNV-1a's step over whole fields
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  struct GroupsKey {
    int tp, pp, dp, cp, ep, shard;  // shard: ZeRO-3's shard_ranks, -1 below ZeRO-3
    bool operator==(const GroupsKey&) const = default;
  };
  std::vector<std::pair<GroupsKey, analytic::StepGroups>> groups_;
  std::size_t next_group_ = 0;
  bool have_split_ = false, have_layers_ = false;
  int pp_ = 0, vpp_ = 0;
  core::PipelineSplit split_;
  analytic::PipelineLayers layers_;
  std::unordered_map<analytic::LayerCostsKey, analytic::LayerCosts, CostsHash> costs_;
  const std::pair<const analytic::LayerCostsKey, analytic::LayerCosts>* last_costs_ = nullptr;
  std::unique_ptr<analytic::Step> step_ = std::make_unique<analytic::Step>();
};

// Tier 1: core::check, then the analytic engine for memory and work_lower_bound() (the step plan
// is built later, by KeyOrder, for the few candidates whose place in the key order matters). Chunks
// are merged in index order, so the feasible list comes out the same for any thread count.
std::vector<Entry> analytic_tier(Context& ctx, std::vector<Tier1Worker>& workers, SweepResult& out) {
  const Space& space = ctx.space;
  const std::uint64_t chunks = (space.size() + kAnalyticChunk - 1) / kAnalyticChunk;
  std::vector<AnalyticChunk> tier1(chunks);
  std::atomic<std::uint64_t> chunks_done{0};
  parallel_for(
      chunks, ctx.arena, "analytic", space.size(),
      [&] { return chunks_done.load() * kAnalyticChunk; }, ctx.opt.on_progress,
      [&](std::uint64_t chunk, int worker) {
        auto& s = ctx.scratch[worker];
        auto& w = workers[worker];
        auto& res = tier1[chunk];
        space.for_each(chunk * kAnalyticChunk, (chunk + 1) * kAnalyticChunk, [&](const Candidate& c) {
          ++res.evaluated;
          place(c, ctx.base, s, &w.split_fits);
          if (const std::string why = core::first_problem(s, w.split(s)); !why.empty()) {
            // the first problem in check()'s order
            if (++res.rejected[why] == 1) res.first.emplace(why, c.index);
            return;
          }
          // a layout the named framework cannot be told to run (Megatron's interleaved split) is not offered
          if (!core::framework_expresses(s, w.split(s))) {
            ++res.rejected["framework"];
            return;
          }
          // the analytic engine's memory (the same as evaluate()'s) and the plan's bounds: all tier 2 needs
          const double peak = analytic::peak_memory_bytes(s, w.layers(s), w.costs(s));
          if (!fits(peak, s.hardware.gpu.memory_bytes, ctx.opt.min_free_bytes)) {
            ++res.rejected["memory"];
            return;
          }
          // CPU offload, offloaded activations: what the node's GPUs keep in host memory must fit it
          // too (assemble's test)
          if (s.training.uses_host() &&
              analytic::host_bytes_per_gpu(s, w.layers(s), w.costs(s)) * analytic::gpus_sharing_host(s) >
                  s.hardware.host.memory_bytes) {
            ++res.rejected["host memory"];
            return;
          }
          const WorkBound b = work_lower_bound(w.step(s, analytic::StepParts::work));
          const double bound = b.bound_s + scale_wait_floor(s, b.busiest_s);
          res.feasible.push_back(Entry{c.index, bound, peak, energy_bound_j(s.hardware.gpu, bound, b.busiest_s)});
        });
        ++chunks_done;
      });
  std::vector<Entry> feasible;
  std::map<std::string, std::uint64_t> first;
  for (auto& ch : tier1) {
    out.evaluated += ch.evaluated;
    for (const auto& [reason, n] : ch.rejected) out.rejected[reason] += n;
    for (const auto& [reason, i] : ch.first) first.emplace(reason, i);  // the earliest chunk's
    feasible.insert(feasible.end(), ch.feasible.begin(), ch.feasible.end());
  }
  out.feasible = feasible.size();
  // each reason's first rejected candidate, placed again for its message (once a reason, not per candidate)
  for (const auto& [reason, i] : first) {
    const auto c = space.at(i);
    if (!c) continue;
    core::Scenario s = ctx.base;
    place(*c, ctx.base, s);
    for (auto& p : core::check(s))
      if (p.reason == reason) {
        out.rejected_example.emplace(reason, std::move(p));
        break;
      }
  }
  return feasible;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / core::kGiB);
  return buf;
}

// The base scenario's layout as the sweep would see it: found in the space, through check() and
// the analytic memory test as in tier 1, then simulated as in tier 2. Ranked unless one fails.
ScenarioRank scenario_layout(Context& ctx) {
  ScenarioRank sr;
  const auto found = ctx.space.locate(ctx.base);
  if (!found.candidate) {
    sr.why_not = found.why_not;
    return sr;
  }
  sr.candidate = *found.candidate;
  auto& s = ctx.scratch.front();
  place(sr.candidate, ctx.base, s);
  if (const auto problems = core::check(s); !problems.empty()) {
    sr.why_not = "core::check: " + problems.front().message;
    return sr;
  }
  const double reserve = ctx.opt.min_free_bytes;
  const std::string with_reserve = reserve > 0 ? " with " + gib(reserve) + " left free" : "";
  const analytic::Step step(s);
  if (const core::Report a = analytic::evaluate(step); !fits(a, reserve)) {
    sr.why_not = "does not fit" + with_reserve + ": peak " + gib(a.peak_bytes) + " of " + gib(a.capacity_bytes);
    return sr;
  }
  sr.report = sim::simulate(step);
  if (!fits(sr.report, reserve)) {
    sr.why_not = "does not fit" + with_reserve + ": the scheduler's peak " + gib(sr.report.peak_bytes) + " of " +
                 gib(sr.report.capacity_bytes);
    return sr;
  }
  sr.ranked = true;
  return sr;
}

// The steps built for the plan key, kept for the candidates with the lowest plan keys not yet
// taken, at most kKeptSteps: the simulation tier takes the places in key order, so a candidate it
// simulates finds the step its key was read from instead of building it again. Which steps are
// kept changes no result: a step built again is the same to the last bit. offer() may run on
// several workers at once; find() and release() run between offers, never beside one.
//
// Most offers are not kept (on Llama 3 405B / 16,384 H100, 1,024 offers keep about 300), so an
// offer is rejected without the lock by the worst kept key, and a kept step is not copied: the
// worker's storage itself moves into the store (owning its split and costs, analytic::own_lent),
// and the worker builds its next step into the storage it gets back.
class KeptSteps {
 public:
  explicit KeptSteps(Objective o) : o_(o) {}
  // Keeps the worker's `step`, built for `e` (with its plan key), when it is among the lowest keys
  // offered and not yet released; `step` then holds other storage for the worker's next step.
  void offer(const Entry& e, std::unique_ptr<analytic::Step>& step) {
    // (while the store is full the worst kept key only falls, so a stale read only sends an offer
    // to the lock that would have been rejected there; a tie is settled by index under the lock)
    if (key(o_, e) > worst_.load(std::memory_order_relaxed)) return;
    analytic::own_lent(*step);
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t slot;
    if (heap_.size() < kKeptSteps) {
      if (free_.empty()) {
        free_.push_back(pool_.size());
        pool_.push_back(std::make_unique<analytic::Step>());
      }
      slot = free_.back();
      free_.pop_back();
    } else {
      if (!before(o_, e, heap_.front())) return;
      std::pop_heap(heap_.begin(), heap_.end(), Earlier{o_});
      slot = slot_.extract(heap_.back().index).mapped();
      heap_.pop_back();
    }
    pool_[slot].swap(step);
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Earlier{o_});
    slot_.emplace(e.index, slot);
    if (heap_.size() == kKeptSteps) worst_.store(key(o_, heap_.front()), std::memory_order_relaxed);
  }
  // The kept step of candidate `index`, pointed at `s` (the candidate placed, equal in value to
  // the scenario it was built from), or null.
  const analytic::Step* find(std::uint64_t index, const core::Scenario& s) {
    const auto it = slot_.find(index);
    if (it == slot_.end()) return nullptr;
    analytic::Step& step = *pool_[it->second];
    step.scenario = &s;
    return &step;
  }
  // Candidate `index` is taken: its slot may hold another step.
  void release(std::uint64_t index) {
    const auto it = slot_.find(index);
    if (it == slot_.end()) return;
    free_.push_back(it->second);
    slot_.erase(it);
    heap_.erase(std::find_if(heap_.begin(), heap_.end(), [&](const Entry& e) { return e.index == index; }));
    std::make_heap(heap_.begin(), heap_.end(), Earlier{o_});
    worst_.store(kNone, std::memory_order_relaxed);
  }

 private:
  struct Earlier {  // the heap's order: the latest entry on top
    Objective o;
    bool operator()(const Entry& a, const Entry& b) const { return before(o, a, b); }
  };
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  Objective o_;
  std::mutex mutex_;
  std::atomic<double> worst_{kNone};  // the key on top of a full heap_; infinite while not full
  std::vector<std::unique_ptr<analytic::Step>> pool_;
  std::vector<std::size_t> free_;                        // slots of pool_ holding no kept step
  std::vector<Entry> heap_;                              // the kept entries, a max-heap by key
  std::unordered_map<std::uint64_t, std::size_t> slot_;  // candidate index -> slot of pool_
};

// The feasible candidates in the order of their keys from the step plan ((key, index): the order
// a sort of every candidate's plan key would give), produced on demand. The analytic tier's keys
// (work_lower_bound) are never above the plan's, so once the lowest plan key computed so far is
// below the lowest work key not yet refined, no candidate can come before it any more: the order
// is final up to there. Plans are built a block at a time, lowest work key first, in parallel; the
// order does not depend on the block size or the thread count. The memory objective's key (the
// analytic peak) needs no plan: its order is the work order itself.
class KeyOrder {
 public:
  KeyOrder(Context& ctx, std::vector<Tier1Worker>& workers, std::vector<Entry> entries)
      : ctx_(ctx), workers_(workers), work_(std::move(entries)), o_(ctx.opt.objective), kept_(o_) {
    // (a total order: the parallel sort gives the one sequence a serial sort would)
    ctx.arena.execute([&] {
      tbb::parallel_sort(work_.begin(), work_.end(), [&](const Entry& a, const Entry& b) { return before(o_, a, b); });
    });
    if (o_ == Objective::memory) next_ = work_.size();
  }
  std::size_t size() const { return work_.size(); }
  // The steps built for the plan keys, kept for the first places (KeptSteps).
  KeptSteps& kept() { return kept_; }
  // The entry at place i of the order (i < size()).
  const Entry& operator[](std::size_t i) {
    if (o_ == Objective::memory) return work_[i];
    while (order_.size() <= i) {
      // (a tie with the next work key is not final: that candidate's plan key may equal it)
      if (!heap_.empty() && (next_ == work_.size() || key(o_, heap_.front()) < key(o_, work_[next_]))) {
        std::pop_heap(heap_.begin(), heap_.end(), Later{o_});
        order_.push_back(heap_.back());
        heap_.pop_back();
      } else {
        refine();
      }
    }
    return order_[i];
  }
  // For progress only: at most how many of the places from `from` on hold a candidate `can_enter`
  // accepts, as far as the keys computed so far can tell (a work key stands for its plan key).
  template <class Pred>
  std::size_t at_most(std::size_t from, Pred can_enter) const {
    if (o_ == Objective::memory)
      return static_cast<std::size_t>(std::partition_point(work_.begin() + static_cast<std::ptrdiff_t>(from),
                                                           work_.end(), can_enter) -
                                      work_.begin());
    std::size_t n = from;
    for (std::size_t i = from; i < order_.size() && can_enter(order_[i]); ++i) ++n;
    if (n < order_.size()) return n;
    for (const Entry& e : heap_) n += can_enter(e) ? 1 : 0;
    return n + static_cast<std::size_t>(std::partition_point(work_.begin() + static_cast<std::ptrdiff_t>(next_),
                                                             work_.end(), can_enter) -
                                        (work_.begin() + static_cast<std::ptrdiff_t>(next_)));
  }

 private:
  // The plan keys of the next block in work order, into the heap.
  void refine() {
    const std::size_t n = std::min(kPlanBlock, work_.size() - next_);
    if (n == 0) throw std::logic_error("planner::KeyOrder: place beyond the feasible candidates");
    parallel_for(
        (n + kPlanChunk - 1) / kPlanChunk, ctx_.arena, "analytic", 0, [] { return std::uint64_t{0}; }, {},
        [&](std::uint64_t chunk, int worker) {
          auto& s = ctx_.scratch[worker];
          auto& w = workers_[worker];
          const std::size_t hi = std::min(n, (chunk + 1) * kPlanChunk);
          for (std::size_t k = chunk * kPlanChunk; k < hi; ++k) {
            Entry& e = work_[next_ + k];
            place(*ctx_.space.at(e.index), ctx_.base, s);
            const analytic::Step& step = w.step(s, analytic::StepParts::plan);
            const double busiest = busiest_stage_compute(step.plan);
            e.bound_s = step_lower_bound(step.plan) + scale_wait_floor(s, busiest);
            e.energy_bound_j = energy_bound_j(s.hardware.gpu, e.bound_s, busiest);
            kept_.offer(e, w.step_storage());
          }
        });
    for (std::size_t k = 0; k < n; ++k) {
      heap_.push_back(work_[next_ + k]);
      std::push_heap(heap_.begin(), heap_.end(), Later{o_});
    }
    next_ += n;
  }

  Context& ctx_;
  std::vector<Tier1Worker>& workers_;
  std::vector<Entry> work_;  // every feasible candidate, in the order of its work key
  Objective o_;
  std::size_t next_ = 0;     // work_[next_...] still have their work keys
  std::vector<Entry> heap_;  // plan keys not yet placed, a min-heap
  std::vector<Entry> order_;  // the order's first places
  KeptSteps kept_;
  struct Later {  // the heap's order: the earliest entry on top
    Objective o;
    bool operator()(const Entry& a, const Entry& b) const { return before(o, b, a); }
  };
};

// Tier 2: the scheduler, in key order and fixed batches, until the key proves no remaining
// candidate can enter the top K. Before a simulation, the candidate's schedule bound may prove the
// same (it is spared). Every simulated candidate that orders before the scenario's layout is
// counted into `ahead` on the way; the spared ones that still could are left in `for_rank`. For
// CSV, the simulated reports and the schedule bounds that spared are kept.
// Returns how many of `feasible` it took (a prefix of the key order).
enum Fate : char { kSimulated, kSpared, kSparedForRank };

// One candidate of a simulation batch, placed in `s`: spared when its key, or else its schedule
// bound, puts it beyond the K-th best `kth` (null: fewer than K so far), else simulated into
// `report`. `spared_by` receives the schedule bound that spared it. Its step is the one its plan
// key was read from where KeyOrder kept it, else built once, when first needed: the schedule bound
// and the simulation read the same one.
Fate settle(Objective o, const core::Scenario& s, Tier1Worker& w, KeptSteps& kept, const Entry& e,
            const core::Report* kth, const ScenarioRank* sr, core::Report& report, double& spared_by) {
  const analytic::Step* built = nullptr;
  auto step = [&]() -> const analytic::Step& {
    if (!built && !(built = kept.find(e.index, s))) built = &w.step(s, analytic::StepParts::plan);
    return *built;
  };
  if (kth) {
    // each key only where the cheaper one cannot tell (a batch may reach past the first key
    // beyond the K-th best: no schedule bound is needed there)
    const double k0 = key(o, e);
    std::optional<ScheduleKey> sk;
    auto tighter = [&] { return (sk ? *sk : sk.emplace(schedule_key(o, step()))).key; };
    const bool by_key = beyond(o, k0, *kth);
    if (by_key || beyond(o, tighter(), *kth)) {
      const bool may_lead = sr && !beyond(o, k0, sr->report) && !beyond(o, tighter(), sr->report);
      if (!by_key) spared_by = sk->bound_s;
      return may_lead ? kSparedForRank : kSpared;
    }
  }
  report = sim::simulate(step());
  return kSimulated;
}

// The top K as the sweep keeps it: every simulated layout that fits, in order, until take() folds
// the near-ties into their rows (near_ties.hpp) and keeps K rows with theirs, so `--top 5` shows
// five different answers. A layout enters where it orders; the K-th row so far is not a safe
// threshold (a faster layout entering later can turn rows into its near-ties and bring a row from
// beyond it into the top K), but the first layout of the K-th tie class is: layouts of K classes
// are at least K rows, and that place only moves earlier as layouts enter. The memory objective
// folds nothing: its K-th layout is the threshold, and the rest are dropped as they come.
class TopRows {
 public:
  TopRows(Objective o, std::size_t top) : o_(o), top_(top) {}
  void enter(Ranked&& r) {
    const auto at = std::lower_bound(best_.begin(), best_.end(), r,
                                     [&](const Ranked& a, const Ranked& b) { return better(o_, a, b); });
    const std::size_t p = static_cast<std::size_t>(at - best_.begin());
    if (kth_ >= 0 && p > static_cast<std::size_t>(kth_) && o_ == Objective::memory) return;
    best_.insert(at, std::move(r));
    if (o_ == Objective::memory && best_.size() > top_) best_.pop_back();
    place_kth();
  }
  // the threshold (null while there are fewer than K classes): a candidate beyond it cannot enter
  const core::Report* kth() const { return kth_ >= 0 ? &best_[static_cast<std::size_t>(kth_)].report : nullptr; }
  // K rows best first, each followed by its near-ties among the layouts simulated
  std::vector<Ranked> take() {
    std::vector<int> tie_of(best_.size(), -1);
    if (o_ != Objective::memory) {
      std::vector<const Candidate*> layouts;
      std::vector<double> steps;
      for (const Ranked& x : best_) layouts.push_back(&x.candidate), steps.push_back(x.report.step_s);
      fold_near_ties(layouts, steps, tie_of);
    }
    std::vector<Ranked> out;
    std::vector<int> kept_as(best_.size(), -1);  // a kept row's place in `out`
    int rows = 0;
    for (std::size_t i = 0; i < best_.size(); ++i) {
      const int row = tie_of[i];
      if (row < 0 && rows == static_cast<int>(top_)) continue;
      if (row >= 0 && kept_as[static_cast<std::size_t>(row)] < 0) continue;  // a near-tie of a row not kept
      Ranked& x = out.emplace_back(std::move(best_[i]));
      x.near_tie_of = row < 0 ? -1 : kept_as[static_cast<std::size_t>(row)];
      x.rank = row < 0 ? ++rows : out[static_cast<std::size_t>(x.near_tie_of)].rank;
      if (row < 0) kept_as[i] = static_cast<int>(out.size()) - 1;
    }
    return out;
  }

 private:
  void place_kth() {
    kth_ = -1;
    if (o_ == Objective::memory) {
      if (best_.size() >= top_) kth_ = static_cast<std::ptrdiff_t>(top_) - 1;
      return;
    }
    classes_.clear();
    for (std::size_t i = 0; i < best_.size(); ++i)
      if (classes_.insert(tie_class(best_[i].candidate)).second && classes_.size() == top_) {
        kth_ = static_cast<std::ptrdiff_t>(i);
        return;
      }
  }

  Objective o_;
  std::size_t top_;
  std::vector<Ranked> best_;
  std::ptrdiff_t kth_ = -1;
  std::unordered_set<std::uint64_t> classes_;  // (scratch)
};

// Why `r` is slower (or, by memory, bigger) than the first of the top K.
std::string why_behind(Objective o, const core::Report& first, const core::Report& r) {
  return o == Objective::memory ? why_bigger(first, r) : why_slower(first, r);
}

std::size_t simulation_tier(Context& ctx, std::vector<Tier1Worker>& workers, KeyOrder& feasible, const ScenarioRank* sr,
                            std::uint64_t& ahead, std::vector<Entry>& for_rank,
                            std::unordered_map<std::uint64_t, core::Report>& kept_for_rows,
                            std::unordered_map<std::uint64_t, double>& spared_bounds, SweepResult& out) {
  const Objective o = ctx.opt.objective;
  const std::size_t top = static_cast<std::size_t>(std::max(1, ctx.opt.top));
  TopRows best(o, top);
  std::size_t pos = 0;
  std::size_t spared = 0;  // taken in key order, then put beyond the top K by the schedule bound
  std::atomic<std::uint64_t> done{0};
  auto cannot_enter = [&](const Entry& e) { return best.kth() && beyond(o, key(o, e), *best.kth()); };
  while (pos < feasible.size() && !cannot_enter(feasible[pos])) {
    const std::size_t n = std::min(kSimBatch, feasible.size() - pos);
    // (copies: a later place of `feasible` may move the entries it holds)
    std::vector<Entry> entry(n);
    for (std::size_t k = 0; k < n; ++k) entry[k] = feasible[pos + k];
    // what this phase will simulate in all, as far as the top K and the keys so far can tell:
    // the simulated ones and the rest whose key can still enter (a prefix of the key order)
    const std::uint64_t planned =
        ctx.opt.on_progress ? feasible.at_most(pos, [&](const Entry& e) { return !cannot_enter(e); }) : 0;
    std::vector<Ranked> batch(n);
    std::vector<double> cost(n);
    for (std::size_t k = 0; k < n; ++k) {
      batch[k].candidate = *ctx.space.at(entry[k].index);
      cost[k] = simulation_cost(batch[k].candidate, ctx.base);
    }
    // The threshold as the batch starts (TopRows::kth; it only moves earlier): a candidate whose
    // schedule bound is beyond it cannot enter and is not simulated. The same for any thread count.
    // A spared candidate whose schedule bound does not put it beyond the scenario's layout may
    // still order before it: the rank settles it (rank_scenario()).
    const core::Report* kth = o != Objective::memory ? best.kth() : nullptr;
    std::vector<char> fate(n, kSimulated);
    std::vector<double> spared_by(n, -1.0);  // the schedule bound that spared it (-1: its key did)
    parallel_claim(
        largest_first(cost), ctx.arena, "simulation", std::max<std::uint64_t>(planned, pos + n),
        [&] { return done.load(); }, ctx.opt.on_progress,
        [&](std::uint64_t k, int worker) {
          ++done;
          auto& s = ctx.scratch[worker];
          place(batch[k].candidate, ctx.base, s);
          fate[k] = settle(o, s, workers[worker], feasible.kept(), entry[k], kth, sr, batch[k].report, spared_by[k]);
        });
    // (the rank simulates the spared ones that may lead the scenario's layout: their steps stay)
    for (std::size_t k = 0; k < n; ++k)
      if (fate[k] != kSparedForRank) feasible.kept().release(entry[k].index);
    for (std::size_t k = 0; k < n; ++k) {
      if (fate[k] != kSimulated) {
        ++spared;
        if (fate[k] == kSparedForRank) for_rank.push_back(entry[k]);
        if (ctx.opt.on_row && spared_by[k] >= 0) spared_bounds.emplace(entry[k].index, spared_by[k]);
        continue;
      }
      Ranked& r = batch[k];
      if (ctx.opt.on_row) kept_for_rows.emplace(r.candidate.index, r.report);
      if (!fits(r.report, ctx.opt.min_free_bytes)) {
        // The scheduler's in-flight count can exceed the analytic one (ZB-H1, by < 1%): its
        // verdict is the one `ptdsim evaluate` prints, so such a layout is a memory rejection.
        ++out.rejected["memory"];
        --out.feasible;
        continue;
      }
      if (sr && better(o, r.report, r.candidate.index, sr->report, sr->candidate.index)) ++ahead;
      best.enter(std::move(r));
    }
    pos += n;
  }
  out.simulated = pos - spared;
  out.pruned = feasible.size() - pos + spared;
  out.results = best.take();
  for (std::size_t i = 1; i < out.results.size(); ++i)
    out.results[i].slower_because = why_behind(o, out.results.front().report, out.results[i].report);
  return pos;
}

// The rank of the scenario's layout: tier 2 has counted the simulated candidates ahead of it. Of
// the rest, only these can still be ahead: the ones tier 2 spared but could not put beyond the
// layout (`for_rank`), and the prefix of the key order after tier 2's whose key does not put them
// beyond it. They are settled in that order: by a schedule bound beyond the layout, or else by a
// simulation, up to rank_limit simulations; the first that would need one more ends the count.
// Which ones are settled, and how, depends neither on the batch size nor on the thread count.
void rank_scenario(Context& ctx, std::vector<Tier1Worker>& workers, KeyOrder& feasible, std::size_t taken, const std::vector<Entry>& for_rank,
                   std::uint64_t ahead, ScenarioRank& sr) {
  const Objective o = ctx.opt.objective;
  std::vector<Entry> open = for_rank;
  // a candidate's step: the one KeyOrder kept, else built (then twice when it is simulated: once
  // for its schedule bound, once for the simulation, on whichever workers take them)
  auto step_of = [&](const Entry& e, const core::Scenario& s, int worker) -> const analytic::Step& {
    const analytic::Step* kept = feasible.kept().find(e.index, s);
    return kept ? *kept : workers[worker].step(s, analytic::StepParts::plan);
  };
  for (std::size_t i = taken; i < feasible.size() && !beyond(o, key(o, feasible[i]), sr.report); ++i)
    open.push_back(feasible[i]);
  const std::uint64_t limit = ctx.opt.rank_limit;
  std::uint64_t simulations = 0;
  std::size_t settled = 0;
  std::atomic<std::uint64_t> done{0};
  while (settled < open.size()) {
    // (a batch about twice the simulations left: few schedule bounds past the limit go to waste)
    const std::uint64_t left = limit - simulations;
    const std::uint64_t want = left >= kRankBatch / 2 ? kRankBatch : std::max<std::uint64_t>(16, 2 * left);
    const std::size_t m = static_cast<std::size_t>(std::min<std::uint64_t>(open.size() - settled, want));
    std::vector<Candidate> c(m);
    std::vector<double> cost(m);
    for (std::size_t k = 0; k < m; ++k) {
      c[k] = *ctx.space.at(open[settled + k].index);
      cost[k] = simulation_cost(c[k], ctx.base);
    }
    // which need a simulation: the spared ones do (their schedule bound is not beyond the layout)
    std::vector<char> needs(m, 1);
    if (o != Objective::memory)
      parallel_for(
          m, ctx.arena, "rank", open.size(), [&] { return done.load(); }, ctx.opt.on_progress,
          [&](std::uint64_t k, int worker) {
            if (settled + k < for_rank.size()) return;
            auto& s = ctx.scratch[worker];
            place(c[k], ctx.base, s);
            needs[k] = !beyond(o, schedule_key(o, step_of(open[settled + k], s, worker)).key, sr.report);
          });
    // in order, as far as the limit allows
    std::size_t take = 0;
    std::uint64_t sims = 0;
    for (; take < m; ++take)
      if (needs[take]) {
        if (sims == left) break;
        ++sims;
      }
    std::vector<std::uint64_t> order;
    for (std::uint64_t k : largest_first(cost))
      if (k < take && needs[k]) order.push_back(k);
    std::vector<char> before(m, 0);
    parallel_claim(
        order, ctx.arena, "rank", open.size(), [&] { return done.load(); }, ctx.opt.on_progress,
        [&](std::uint64_t k, int worker) {
          auto& s = ctx.scratch[worker];
          place(c[k], ctx.base, s);
          const core::Report r = sim::simulate(step_of(open[settled + k], s, worker));
          before[k] = fits(r, ctx.opt.min_free_bytes) && better(o, r, open[settled + k].index, sr.report, sr.candidate.index);
        });
    for (std::size_t k = 0; k < m; ++k) feasible.kept().release(open[settled + k].index);
    done += take;
    ahead += static_cast<std::uint64_t>(std::count(before.begin(), before.end(), 1));
    simulations += sims;
    settled += take;
    if (take < m) break;
  }
  sr.rank = 1 + ahead;
  sr.simulated = simulations;
  sr.unresolved = open.size() - settled;
  sr.rank_is_lower_bound = sr.unresolved > 0;
}

// Rows for CSV: every candidate that passed core::check, in index order, computed in parallel a
// window of chunks at a time and handed out in order from this thread. Each row's bound is
// step_lower_bound() of its plan with the cost of scale's floor (scale_wait_floor()), the key tier
// 2 ordered it by where it needed one, or for a candidate its schedule bound spared, that bound.
void emit_rows(Context& ctx, std::vector<Tier1Worker>& workers, const std::unordered_map<std::uint64_t, core::Report>& kept_for_rows,
               const std::unordered_map<std::uint64_t, double>& spared_bounds) {
  const Space& space = ctx.space;
  struct RowData {
    Candidate candidate;
    const char* status;
    double bound_s;
    core::Report report;
  };
  const std::uint64_t row_chunks = (space.size() + kRowChunk - 1) / kRowChunk;
  const std::uint64_t window = 4ULL * ctx.threads;
  std::atomic<std::uint64_t> rows_done{0};
  for (std::uint64_t first = 0; first < row_chunks; first += window) {
    const std::uint64_t n = std::min(window, row_chunks - first);
    std::vector<std::vector<RowData>> rows(n);
    parallel_for(
        n, ctx.arena, "rows", space.size(), [&] { return rows_done.load(); }, ctx.opt.on_progress,
        [&](std::uint64_t k, int worker) {
          auto& s = ctx.scratch[worker];
          const std::uint64_t lo = (first + k) * kRowChunk;
          const std::uint64_t hi = std::min(space.size(), lo + kRowChunk);
          for (std::uint64_t i = lo; i < hi; ++i) {
            const auto c = space.at(i);
            if (!c) continue;
            place(*c, ctx.base, s);
            if (!core::check(s).empty()) continue;
            const double reserve = ctx.opt.min_free_bytes;
            const analytic::Step& step = workers[worker].step(s, analytic::StepParts::plan);
            const auto spared = spared_bounds.find(i);
            const double bound = spared != spared_bounds.end()
                                     ? spared->second
                                     : step_lower_bound(step.plan) +
                                           scale_wait_floor(s, busiest_stage_compute(step.plan));
            if (auto sim = kept_for_rows.find(i); sim != kept_for_rows.end()) {
              rows[k].push_back(RowData{*c, fits(sim->second, reserve) ? "simulated" : "memory", bound, sim->second});
              continue;
            }
            core::Report r = analytic::evaluate(step);
            rows[k].push_back(RowData{*c, fits(r, reserve) ? "pruned" : "memory", bound, std::move(r)});
          }
          rows_done += hi - lo;
        });
    for (const auto& chunk : rows)
      for (const auto& r : chunk) ctx.opt.on_row(Row{r.candidate, r.status, r.bound_s, r.report});
  }
}

}  // namespace

double step_energy_j(const core::Report& r) {
  return analytic::gpu_power_w(r.scenario.hardware.gpu, r.step_s, r.compute_s) * r.step_s;
}

bool fits(const core::Report& r, double min_free_bytes) {
  return r.fits && fits(r.peak_bytes, r.capacity_bytes, min_free_bytes);
}

bool fits(double peak_bytes, double capacity_bytes, double min_free_bytes) {
  return peak_bytes + min_free_bytes <= capacity_bytes;
}

namespace {

// The winner's groups against the topology and, per group kind, the first runner-up whose group
// crosses other tiers (tiers.hpp): a few step_groups() for the top K, off the per-candidate path.
void explain_tiers(SweepResult& out) {
  if (out.results.empty()) return;
  const auto& best = out.results.front().report;
  out.best_tiers = group_tiers(best.scenario);
  std::array<bool, core::kCommBucketCount> told{};
  for (std::size_t i = 1; i < out.results.size(); ++i) {
    if (out.results[i].near_tie_of >= 0) continue;  // its row's groups
    const auto& r = out.results[i].report;
    const auto t = group_tiers(r.scenario);
    for (int k = 0; k < core::kCommBucketCount; ++k) {
      if (told[k]) continue;
      auto line = tier_difference(best, out.best_tiers[k], r, t[k], k, out.results[i].rank);
      if (line.empty()) continue;
      told[k] = true;
      out.tier_notes.push_back(std::move(line));
    }
  }
}

}  // namespace

SweepResult sweep(const core::Scenario& base, const Space& space, const SweepOptions& opt) {
  // oneTBB runs at most as many workers as the machine has cores, whatever --threads asks; a worker
  // it cannot start is a worker fewer, never a failure.
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::clamp(opt.threads > 0 ? opt.threads : cores, 1, std::min(cores, kMaxThreads));
  Context ctx{base, space, opt, threads, std::vector<core::Scenario>(threads, base), tbb::task_arena(threads)};
  for (auto& s : ctx.scratch) s.gpus = space.gpus();

  SweepResult out;
  out.gpus = space.gpus();
  out.no_candidate = space.why_no_candidate();  // (read only where nothing is enumerated)
  if (opt.rank_scenario) out.scenario = scenario_layout(ctx);
  const ScenarioRank* ranked = out.scenario && out.scenario->ranked ? &*out.scenario : nullptr;

  std::vector<Tier1Worker> workers(ctx.scratch.size());
  KeyOrder feasible(ctx, workers, analytic_tier(ctx, workers, out));
  const Objective o = opt.objective;

  std::uint64_t ahead = 0;
  std::vector<Entry> for_rank;
  std::unordered_map<std::uint64_t, core::Report> kept_for_rows;
  std::unordered_map<std::uint64_t, double> spared_bounds;
  const std::size_t taken =
      simulation_tier(ctx, workers, feasible, ranked, ahead, for_rank, kept_for_rows, spared_bounds, out);
  if (ranked) {
    auto& sr = *out.scenario;
    rank_scenario(ctx, workers, feasible, taken, for_rank, ahead, sr);
    if (!out.results.empty() && out.results.front().candidate.index != sr.candidate.index)
      sr.slower_because = why_behind(o, out.results.front().report, sr.report);
  }
  if (opt.on_row) emit_rows(ctx, workers, kept_for_rows, spared_bounds);
  explain_tiers(out);
  return out;
}

}  // namespace ptdsim::planner
