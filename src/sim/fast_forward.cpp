// The fast-forward (docs/simulator.md "Fast-forward"): between two moments where the order of
// simultaneous events matters, the event loop computes a longest path, and a walk computes it
// without the queue.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>

#include "ptdsim/sim/fast_forward.hpp"
#include "ptdsim/sim/kernel.hpp"

namespace ptdsim::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
// A walk costs a pass over the tasks it reaches, so it reaches only those starting before a horizon:
// at first kFirstSpan times the running tasks' remaining time, doubled after every walk the horizon
// ended and halved after one a cut ended early (FastForward::kMaxShort in a row stop the run's walks).
constexpr double kFirstSpan = 8;

// The walk state of the tasks, per thread: kept from run to run (a sweep simulates thousands of
// steps on each worker), so its memory is zeroed once, where a walk first reaches it, and each
// walk tells its own slots from older ones by a number (0: never reached).
struct WalkArena {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char[], Free> memory;
  std::size_t size = 0;
  std::uint32_t gen = 0;
};
thread_local WalkArena walk_memory;

}  // namespace

using namespace run_state;

void FastForward::arena(std::size_t n) {
  if (walk_memory.size < n || walk_memory.gen == 0xffffffffu) {
    // zeroed pages from the system (calloc), touched only where walks go; the slots 32-byte aligned
    walk_memory.memory.reset(
        static_cast<unsigned char*>(std::calloc(n * (sizeof(WalkSlot) + sizeof(WalkEnd) + sizeof(Reached)) + 32, 1)));
    if (!walk_memory.memory) throw std::bad_alloc();
    walk_memory.size = n;
    walk_memory.gen = 0;
  }
  auto* base = walk_memory.memory.get();
  base += (32 - reinterpret_cast<std::uintptr_t>(base) % 32) % 32;
  walk_ = reinterpret_cast<WalkSlot*>(base);
  walk_out_ = reinterpret_cast<WalkEnd*>(base + walk_memory.size * sizeof(WalkSlot));
  reached_ = reached_end_ = reinterpret_cast<Reached*>(base + walk_memory.size * (sizeof(WalkSlot) + sizeof(WalkEnd)));
  gen_ = ++walk_memory.gen;
}

void FastForward::prepare(const Kernel& k) {
  short_ = 0;
  span_ = 0;
  walked_ = 0;
  paired_lanes_ = 0;
  far_ = k.job_of_.size() > kCacheTasks;
  slows_ = k.slows_;
  // A sharing model under which a lone flow's time is not its own, or flows on two resources
  // meet, has no longest path to walk.
  if (!k.model_->fast_forward_exact()) short_ = kMaxShort;
  // With compute contention, a step whose contending tasks come with its passes (context or tensor
  // parallelism's exchanges, ZeRO-3's gathers: a quarter of its compute tasks or more) has one
  // beside its compute at every turn, and each walk would be cut at once: not tried.
  if (slows_) {
    std::size_t compute = 0, contending = 0;
    for (const Lane& st : k.lanes_) {
      const std::size_t n = static_cast<std::size_t>(st.end - st.begin);
      if (st.compute)
        compute += n;
      else if (k.slot_[st.begin].flags & kContends)  // (its first task stands for the lane: a guess)
        contending += n;
    }
    if (4 * contending >= compute) short_ = kMaxShort;
  }
}

// The kernel's arrays as raw pointers, as the loop reads them (they do not move during a run).
void FastForward::bind(Kernel& k) {
  k_ = &k;
  slot_ = k.slot_.data();
  start_ = k.start_.data();
  succ_begin_ = k.succ_begin_.data();
  succ_ = k.succ_.data();
  lanes_ = k.lanes_.data();
  lanes_n_ = static_cast<int>(k.lanes_.size());
  jobs_ = k.jobs_.data();
  job_of_ = k.job_of_.data();
  stream_tasks_ = k.stream_tasks_.data();
}

// What the walks need of the graph, at the run's first walk: per lane its walk range, and the
// pairs of lanes whose walked tasks could overlap where the loop would share.
void FastForward::pair_lanes() {
  const Kernel& k = *k_;
  const auto lanes = static_cast<std::size_t>(lanes_n_);
  walk_begin_.assign(lanes, 0);
  walk_end_.assign(lanes, 0);
  free_.assign(lanes, 0.0);
  cut_end_.assign(lanes, 0);
  started_end_.assign(lanes, 0);
  // the lanes each resource carries transfers of, and the lanes whose tasks hold compute;
  // and what a lone flow moves at on each resource
  alone_rate_.resize(k.capacity_.size());
  domain_.resize(k.capacity_.size());
  for (std::size_t r = 0; r < alone_rate_.size(); ++r) {
    alone_rate_[r] = k.model_->alone_rate(static_cast<std::int32_t>(r));
    domain_[r] = k.model_->domain(static_cast<std::int32_t>(r));
  }
  compute_rate0_ = k.rate_[0];
  std::vector<std::pair<std::int32_t, std::int32_t>> link_lane;
  std::vector<std::uint8_t> holds(lanes, 0);
  for (const Job& sp : k.jobs_) {
    const std::int32_t lane = k.lane_of_stream_[sp.device * k.streams_ + sp.stream];
    if (lane < 0) continue;  // a description no task uses
    if (sp.work > 0) link_lane.emplace_back(domain_[sp.resource], lane);
    if (slows_ && sp.contends) holds[lane] = 1;
  }
  std::sort(link_lane.begin(), link_lane.end());
  link_lane.erase(std::unique(link_lane.begin(), link_lane.end()), link_lane.end());
  pairs_.clear();
  for (std::size_t i = 0; i < link_lane.size(); ++i)
    for (std::size_t j = i + 1; j < link_lane.size() && link_lane[j].first == link_lane[i].first; ++j)
      pairs_.push_back(LanePair{link_lane[i].second, link_lane[j].second, link_lane[i].first});
  if (slows_)
    for (int d = 0; d < k.devices_; ++d) {
      const std::int32_t c = k.lane_of_stream_[d * k.streams_ + k.compute_stream_];
      if (c < 0) continue;
      for (int s = 0; s < k.streams_; ++s) {
        const std::int32_t h = k.lane_of_stream_[d * k.streams_ + s];
        if (h >= 0 && h != c && holds[h]) pairs_.push_back(LanePair{c, h, -1});
      }
    }
  paired_lanes_ = lanes;
}

// A task's walk state, from its loop state the first time this walk reaches it.
[[gnu::always_inline]] inline FastForward::WalkSlot& FastForward::reach(std::int32_t x) {
  WalkSlot& w = walk_[x];
  if (w.gen != gen_) {
    const Slot& s = slot_[x];
    w.gen = gen_;
    w.flags = 0;
    w.lane = s.lane;
    w.late = 0;
    w.dep = s.binding;  // the dependency that finished last (events in time order)
    if (s.state == TaskState::ready) {
      w.pending = 0;
      w.ready = s.finish;
    } else {
      w.pending = s.pending;
      w.ready = s.binding >= 0 ? slot_[s.binding].finish : 0.0;
    }
  }
  return w;
}

// `x` ends at `f`: its successors' latest dependency. Of two walked ones ending together, the one
// the loop completes last binds (completes_later()); where only the loop knows, a tie (a cut,
// unless the stream predecessor binds instead).
// (inlined into advance(), which calls it once per walked task: a call per task showed in the run's time)
[[gnu::always_inline]] inline void FastForward::propagate(std::int32_t x, double f) {
  for (std::int32_t e = succ_begin_[x]; e < succ_begin_[x + 1]; ++e) {
    const std::int32_t y = succ_[e];
    WalkSlot& v = reach(y);
    if (!(v.flags & kDepSet) || f > v.ready) {
      if (!(v.flags & kDepSet)) *reached_end_++ = Reached{y, v.lane};  // its first walked dependency
      v.ready = f;
      v.dep = x;
      v.flags = static_cast<std::uint8_t>((v.flags & ~kTie) | kDepSet);
    } else if (f == v.ready) {
      const int later = completes_later(x, v.dep, f);
      if (later > 0)
        v.dep = x;
      else if (later == 0)
        v.flags |= kTie;
    }
    if (--v.pending == 0) {
      const int l = v.lane;
      if (walk_end_[l] == y) stack_.push_back(l);
    }
  }
}

// Whether the loop completes walked tasks a and b, both ending at instant f, in the order a then b
// (-1), b then a (+1), or in an order only it knows (0). Events at one instant run in the order they
// were scheduled, and each was scheduled while an earlier event was processed: the one scheduled
// at the earlier instant runs first; two scheduled before the walk run in the order of their
// sequence numbers; and a task that started at f inside the other's completion ends after it.
int FastForward::completes_later(std::int32_t a, std::int32_t b, double f) const {
  const double sa = walk_out_[a].scheduled, sb = walk_out_[b].scheduled;
  if (sa != sb) return sa > sb ? 1 : -1;
  if (sa == -kNever) {
    const auto seq = [&](std::int32_t x) {  // the low half of its lane's key
      const int l = slot_[x].lane;
      return static_cast<std::uint64_t>(l == k_->front_ ? k_->front_key_ : k_->key_[l]);
    };
    return seq(a) > seq(b) ? 1 : -1;
  }
  if (follows(a, b, f)) return 1;
  if (follows(b, a, f)) return -1;
  return 0;
}

// Whether walked task a started at instant f in a chain of completions beginning with b's (each task
// of it started by its binding's completion, so its end event was scheduled after that one; a CP
// exchange with nothing to exchange, say).
bool FastForward::follows(std::int32_t a, std::int32_t b, double f) const {
  for (int hops = 0; hops < 16 && a >= 0; ++hops) {
    const WalkSlot& w = walk_[a];
    if (w.gen != gen_ || !(w.flags & kWalked) || !(start_[a] == f)) return false;
    a = walk_out_[a].binding;
    if (a == b) return true;
  }
  return false;
}

// Walks lane l's tasks in program order while each is ready (its dependencies walked) and starts
// before the horizon.
[[gnu::always_inline]] inline void FastForward::advance(int l) {
  const Lane& st = lanes_[l];
  // (the lane's free time in a local: each task's start waits on the last one's end, and a reload
  // from free_, which the stores below may alias, would add a store-to-load forward to that chain)
  double free = free_[l];
  for (std::int32_t x = walk_end_[l]; x < st.end; ++x) {
    WalkSlot& w = reach(x);
    if (w.pending > 0) break;
    // the successors are on other lanes, where nothing else brings them into the cache: ask for
    // the next task's while this one is walked
    if (x + 1 < st.end)
      for (std::int32_t e = succ_begin_[x + 1]; e < succ_begin_[x + 2]; ++e) {
        __builtin_prefetch(&walk_[succ_[e]], 1);
        __builtin_prefetch(&slot_[succ_[e]]);
      }
    // and, in a step larger than the cache, this lane's own state a few tasks ahead: a walk moves
    // among hundreds of lanes (the 1T step's), each in five arrays, more streams than the hardware
    // prefetchers follow, so a task's first touch in each array misses; in a step that fits the
    // cache the hints only cost instructions (measured: docs/performance.md)
    if (far_) {
      const std::int32_t a = std::min(x + 4, st.end - 1);
      __builtin_prefetch(walk_ + a, 1);
      __builtin_prefetch(slot_ + a);
      __builtin_prefetch(walk_out_ + a, 1);
      __builtin_prefetch(start_ + a, 1);
      __builtin_prefetch(succ_begin_ + a);
    }
    // try_start(): it starts with the later of its readiness and its predecessor's end, and the
    // predecessor binds when it ended no earlier than the last dependency
    const double t = w.ready > free ? w.ready : free;
    if (t >= horizon_) break;
    const std::int32_t b = x > st.begin && (w.dep < 0 || free >= w.ready) ? x - 1 : w.dep;
    if ((w.flags & kTie) && b == w.dep) tie_ = std::min(tie_, w.ready);
    const Slot& s = slot_[x];
    WalkEnd& out = walk_out_[x];
    double f;
    out.scheduled = t;  // when its end event is scheduled
    if (s.resource < 0) {
      f = st.compute && slows_ ? t + s.amount / compute_rate0_ : t + s.amount;
    } else {
      const double tx = (s.flags & kLatency) ? t + jobs_[job_of_[stream_tasks_[x]]].duration : t;
      f = tx + s.amount / alone_rate_[s.resource];
      out.scheduled = tx;
    }
    start_[x] = t;
    out.finish = f;
    out.binding = b;
    w.flags |= kWalked;
    walk_end_[l] = x + 1;
    free_[l] = free = f;
    propagate(x, f);
  }
}

// From the loop's state after the events up to `now`: every task's start and end as the loop would
// find them if no link were shared from now on (the loop's own expressions, so bit for bit); then
// the cut, the first moment where that premise fails or the order of two simultaneous events
// could decide a result; then everything before the cut is committed as the loop would have left
// it. Called only while no collective runs. Returns the tasks it completed (0: the cut came too
// soon, nothing changed).
std::size_t FastForward::walk(Kernel& k, double now) {
  bind(k);
  if (paired_lanes_ != static_cast<std::size_t>(lanes_n_)) pair_lanes();
  arena(k.job_of_.size());
  tie_ = kNever;
  stack_.clear();
  const int lanes = lanes_n_;
  double left = 0;  // the running tasks' time left
  for (int l = 0; l < lanes; ++l) {
    const Lane& st = lanes_[l];
    walk_begin_[l] = walk_end_[l] = st.cursor;
    free_[l] = st.last_finish;
    if (st.running < 0) continue;
    const std::int32_t x = st.running;
    const Slot& s = slot_[x];
    WalkSlot& w = walk_[x];
    WalkEnd& out = walk_out_[x];
    w.gen = gen_;
    w.flags = kWalked;
    w.lane = static_cast<std::uint16_t>(l);
    w.pending = 0;
    w.dep = -1;
    w.ready = s.finish;
    out.binding = s.binding;
    const double at = time_of(l == k.front_ ? k.front_key_ : k.key_[l]);
    // its end event: scheduled before the walk, or at the end of its latency
    out.scheduled = s.resource >= 0 && (s.flags & kLatency) ? at : -kNever;
    left = std::max(left, at - now);
    // it ends at its pending event, or after its transfer once the latency is over
    out.finish = s.resource >= 0 && (s.flags & kLatency) ? at + s.amount / alone_rate_[s.resource] : at;
    walk_end_[l] = x + 1;
    free_[l] = out.finish;
  }
  if (!(span_ > 0)) span_ = left > 0 ? kFirstSpan * left : kNever;
  const double horizon = now + span_;
  horizon_ = horizon;
  for (int l = 0; l < lanes; ++l) {
    if (walk_end_[l] > walk_begin_[l]) propagate(walk_begin_[l], walk_out_[walk_begin_[l]].finish);
    stack_.push_back(l);
  }
  while (!stack_.empty()) {
    const int l = stack_.back();
    stack_.pop_back();
    advance(l);
  }

  double cut = std::min(tie_, horizon);
  for (const LanePair& p : pairs_) cut = first_overlap(p.a, p.b, p.resource, cut);
  if (cut < horizon) {
    ++short_;
    span_ /= 2;
  } else {
    short_ = 0;
    span_ *= 2;
  }
  double ambiguous = kNever;
  while (cut > now && !order_new_keys(cut, ambiguous)) cut = ambiguous;
  if (!(cut > now)) return 0;
  const std::size_t done = commit(cut);
  walked_ += done;
  return done;
}

// When walked task x's transfer begins: at its start, or when its latency is over.
double FastForward::transfer_begin(std::int32_t x) const {
  const Job& sp = jobs_[job_of_[stream_tasks_[x]]];
  return sp.work > 0 && sp.duration > 0 ? start_[x] + sp.duration : start_[x];
}

// The earliest moment before `cut` where a walked task of lane a and one of lane b overlap where the
// loop would make them share: transfers in the sharing domain `resource`, or (resource -1) a compute task of lane a
// and a task of lane b holding its compute. Intervals are closed: at a shared instant the order of the two
// events decides, unless one task started in the other's completion (its binding, and for a
// transfer no latency).
double FastForward::first_overlap(int a, int b, std::int32_t link, double cut) const {
  auto counts = [&](std::int32_t x, bool in_a) {
    const Slot& s = slot_[x];
    if (link >= 0) return s.resource >= 0 && domain_[s.resource] == link;
    return in_a ? s.resource < 0 : (s.flags & kHoldsCompute) != 0;
  };
  auto from = [&](std::int32_t x) { return link < 0 ? start_[x] : transfer_begin(x); };
  auto began_in = [&](std::int32_t x, std::int32_t by) {
    return walk_out_[x].binding == by && (link < 0 || !(jobs_[job_of_[stream_tasks_[x]]].duration > 0));
  };
  std::int32_t i = walk_begin_[a], j = walk_begin_[b];
  const std::int32_t ie = walk_end_[a], je = walk_end_[b];
  for (;;) {
    while (i < ie && !counts(i, true)) ++i;
    while (j < je && !counts(j, false)) ++j;
    if (i >= ie || j >= je) break;
    const double as = from(i), af = walk_out_[i].finish, bs = from(j), bf = walk_out_[j].finish;
    if (as >= cut || bs >= cut) break;  // every later overlap starts later
    if (af < bs) {
      ++i;
      continue;
    }
    if (bf < as) {
      ++j;
      continue;
    }
    if (!((af == bs && began_in(j, i)) || (bf == as && began_in(i, j)))) return std::max(as, bs);
    if (af <= bf)
      ++i;
    else
      ++j;
  }
  return cut;
}

// Where each lane stands at the cut, and the events the walk's tasks leave pending there, in the
// order the loop would have given them: by time, then by when they were scheduled. Two scheduled
// at the same moment for the same time are in an order only the loop knows: then false, with
// `ambiguous` set to that moment (a cut there leaves both unscheduled).
bool FastForward::order_new_keys(double cut, double& ambiguous) {
  new_keys_.clear();
  const int lanes = lanes_n_;
  for (int l = 0; l < lanes; ++l) {
    // The lane's first walked task that does not end before the cut, by bisection: along a lane the
    // walked ends do not decrease (each task starts no earlier than the one before it ends), and once
    // one is NaN so is every later one, so the tasks ending before the cut are a prefix.
    std::int32_t x = walk_begin_[l];
    for (std::int32_t hi = walk_end_[l]; x < hi;) {
      const std::int32_t mid = x + (hi - x) / 2;
      if (walk_out_[mid].finish < cut)
        x = mid + 1;
      else
        hi = mid;
    }
    cut_end_[l] = x;
    if (x >= walk_end_[l] || !(start_[x] < cut)) continue;
    const Slot& s = slot_[x];
    const bool was_running = x == lanes_[l].running;
    if (s.resource < 0) {
      if (!was_running) new_keys_.push_back(NewKey{walk_out_[x].finish, start_[x], l});
      continue;
    }
    const double tx = transfer_begin(x);
    if ((s.flags & kLatency) && !(tx < cut)) {
      if (!was_running) new_keys_.push_back(NewKey{tx, start_[x], l});
    } else if (!was_running || (s.flags & kLatency)) {
      new_keys_.push_back(NewKey{walk_out_[x].finish, tx, l});
    }
  }
  std::sort(new_keys_.begin(), new_keys_.end(), [](const NewKey& p, const NewKey& q) {
    return p.at != q.at ? p.at < q.at : p.scheduled != q.scheduled ? p.scheduled < q.scheduled : p.lane < q.lane;
  });
  for (std::size_t k = 1; k < new_keys_.size(); ++k)
    if (new_keys_[k].at == new_keys_[k - 1].at && new_keys_[k].scheduled == new_keys_[k - 1].scheduled) {
      ambiguous = new_keys_[k].scheduled;
      return false;
    }
  return true;
}

// The loop's state after every event before `cut`, from the walk (order_new_keys() has placed the
// lanes and ordered the new events).
std::size_t FastForward::commit(double cut) {
  const std::size_t done = commit_lanes(cut);
  release_waiting();
  resume_sharing();
  requeue();
  return done;
}

// Each lane's tasks done by the cut, its cursor and its running task.
std::size_t FastForward::commit_lanes(double cut) {
  Kernel& k = *k_;
  const int lanes = lanes_n_;
  // A lane's walked tasks that started before the cut are those before its cut_end_, and the one
  // at it if that one started before the cut (starts do not decrease along a lane): so whether a
  // successor the walk reached is placed by its own lane takes its walk state's line only.
  for (int l = 0; l < lanes; ++l) {
    const std::int32_t e = cut_end_[l];
    started_end_[l] = e < walk_end_[l] && start_[e] < cut ? e + 1 : e;
  }
  std::size_t done = 0;
  // (the event count and the makespan in locals: as members, which the slot stores may alias, each
  // task would store and reload them, a forward in each one's chain)
  std::size_t events = k.events_;
  double makespan = k.makespan_;
  for (int l = 0; l < lanes; ++l) {
    Lane& st = lanes_[l];
    const std::int32_t e = cut_end_[l];
    for (std::int32_t x = walk_begin_[l]; x < e; ++x) {
      Slot& s = slot_[x];
      const WalkEnd& w = walk_out_[x];
      events += (s.flags & kLatency) ? 2 : 1;  // its latency's end, if not yet processed, and its end
      s.flags &= static_cast<std::uint8_t>(~kLatency);
      s.state = TaskState::done;
      s.finish = w.finish;
      s.binding = w.binding;
      s.pending = 0;
      makespan = std::max(makespan, w.finish);
      ++done;
    }
    if (e > walk_begin_[l]) st.last_finish = walk_out_[e - 1].finish;
    st.cursor = e;
    const std::int32_t r = e < walk_end_[l] && start_[e] < cut ? e : -1;
    if (r >= 0 && r != st.running) {
      Slot& s = slot_[r];
      s.state = TaskState::running;
      s.binding = walk_out_[r].binding;
      s.finish = walk_[r].ready;
      s.pending = 0;
    }
    if (r >= 0 && slot_[r].resource >= 0 && (slot_[r].flags & kLatency) && transfer_begin(r) < cut) {
      slot_[r].flags &= static_cast<std::uint8_t>(~kLatency);
      ++events;  // its latency's end
    }
    st.running = r;
  }
  k.events_ = events;
  k.makespan_ = makespan;
  return done;
}

void FastForward::release_waiting() {
  const int lanes = lanes_n_;
  // The tasks that a walked task's end was propagated to (reached_: every successor of a task
  // done by the cut, so each one the loop's completions would have touched) and that do not start
  // before the cut wait on the loop: each keeps its dependencies not done by the cut (those not
  // walked, and those walked that end at or after the cut), and one with none left is ready,
  // released by its latest dependency. (A task still waiting keeps its binding: nothing reads it
  // before a completion or a walk sets it anew, when its last dependency is done.) The list, not a
  // pass over the successors of every task done, which would read each one's walk state again.
  for (int l = 0; l < lanes; ++l)
    for (std::int32_t x = cut_end_[l]; x < walk_end_[l]; ++x)
      for (std::int32_t e = succ_begin_[x]; e < succ_begin_[x + 1]; ++e) ++walk_[succ_[e]].late;
  for (const Reached* y = reached_; y != reached_end_; ++y) {
    if (y->task < started_end_[y->lane]) continue;  // placed by its own lane
    const WalkSlot& v = walk_[y->task];
    Slot& n = slot_[y->task];
    n.pending = v.pending + v.late;
    if (n.pending == 0) {
      n.state = TaskState::ready;
      n.finish = v.ready;
      n.binding = v.dep;
    }
  }
}

// What the sharing model and the devices' loads hold at the cut.
void FastForward::resume_sharing() {
  Kernel& k = *k_;
  const int lanes = lanes_n_;
  // the flows still moving at the cut, one per resource at most (else an overlap before it): those
  // moving before the walk that are not done, and those the walk began
  begun_.clear();
  for (const NewKey& nk : new_keys_) {
    const std::int32_t r = lanes_[nk.lane].running;
    const Slot& s = slot_[r];
    if (s.resource < 0 || (s.flags & kLatency)) continue;
    begun_.push_back(SharingModel::Begun{r, s.resource, nk.scheduled});
  }
  k.model_->settle(k, begun_);
  // the tasks contending for compute at the cut, and with compute contention each device's load
  k.contending_ = 0;
  for (int l = 0; l < lanes; ++l)
    if (lanes_[l].running >= 0 && (slot_[lanes_[l].running].flags & kContends)) ++k.contending_;
  if (slows_) {
    for (auto& ld : k.load_) ld.contending = 0;
    for (int l = 0; l < lanes; ++l) {
      const Lane& st = lanes_[l];
      Load& ld = k.load_[st.device];
      const std::int32_t r = st.running;
      if (r >= 0 && (slot_[r].flags & kHoldsCompute)) ++ld.contending;
      if (!st.compute) continue;
      if (r >= 0 && slot_[r].resource < 0) {
        if (ld.compute != r) {
          ld.compute = r;
          ld.since = start_[r];
        }
      } else {
        ld.compute = -1;
      }
    }
  }
}

void FastForward::requeue() {
  Kernel& k = *k_;
  const int lanes = lanes_n_;
  // the queue: the events still pending before the walk keep their keys; the walk's get theirs in
  // the loop's order, after every earlier one
  for (int l = 0; l < lanes; ++l) {
    const Key old = l == k.front_ ? k.front_key_ : k.key_[l];
    k.key_[l] = lanes_[l].running < 0 ? kIdle : old;
  }
  for (const NewKey& nk : new_keys_) k.key_[nk.lane] = key_of(nk.at, k.seq_++);
  for (int l = lanes; l < k.leaves_; ++l) k.key_[l] = kIdle;
  k.build_queue();
}

}  // namespace ptdsim::sim
