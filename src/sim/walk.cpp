// Walks (docs/simulator.md "Walks"): between two moments where the order of simultaneous events
// matters, the event loop computes a longest path, and a walk computes it without the queue.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>

#include "ptdsim/sim/engine.hpp"

namespace ptdsim::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
// A walk costs a pass over the tasks it reaches, so it reaches only those starting before a horizon:
// at first kFirstSpan times the running tasks' remaining time, doubled after every walk the horizon
// ended and halved after one a cut ended early (Engine::kMaxShort in a row stop the run's walks).
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
thread_local WalkArena arena;

}  // namespace

void Engine::walk_arena(std::size_t n) {
  if (arena.size < n || arena.gen == 0xffffffffu) {
    // zeroed pages from the system (calloc), touched only where walks go; the slots 32-byte aligned
    arena.memory.reset(
        static_cast<unsigned char*>(std::calloc(n * (sizeof(WalkSlot) + sizeof(WalkEnd) + sizeof(Reached)) + 32, 1)));
    if (!arena.memory) throw std::bad_alloc();
    arena.size = n;
    arena.gen = 0;
  }
  auto* base = arena.memory.get();
  base += (32 - reinterpret_cast<std::uintptr_t>(base) % 32) % 32;
  walk_ = reinterpret_cast<WalkSlot*>(base);
  walk_out_ = reinterpret_cast<WalkEnd*>(base + arena.size * sizeof(WalkSlot));
  walk_reached_ = walk_reached_end_ =
      reinterpret_cast<Reached*>(base + arena.size * (sizeof(WalkSlot) + sizeof(WalkEnd)));
  walk_gen_ = ++arena.gen;
}

void Engine::prepare_walks() {
  shared_links_ = 0;
  collectives_ = 0;
  now_ = 0;
  walk_short_ = 0;
  walk_span_ = 0;
  walked_ = 0;
  walk_lanes_ = 0;
  walk_far_ = spec_of_.size() > kCacheTasks;
  // With SM contention, a step whose collectives come with its passes (context or tensor
  // parallelism's exchanges, ZeRO-3's gathers: a quarter of its compute tasks or more) has one
  // beside its compute at every turn, and each walk would be cut at once: not tried.
  if (comm_share_ > 0) {
    std::size_t compute = 0, collectives = 0;
    for (const Lane& st : lanes_) {
      const std::size_t n = static_cast<std::size_t>(st.end - st.begin);
      if (st.compute)
        compute += n;
      else if (slot_[st.begin].flags & kCollective)  // (its first task stands for the lane: a guess)
        collectives += n;
    }
    if (4 * collectives >= compute) walk_short_ = kMaxShort;
  }
}

// What the walks need of the graph, at the run's first walk: per lane its walk range, and the
// pairs of lanes whose walked tasks could overlap where the loop would share.
void Engine::pair_lanes() {
  const std::size_t lanes = lanes_.size();
  walk_begin_.assign(lanes, 0);
  walk_end_.assign(lanes, 0);
  walk_free_.assign(lanes, 0.0);
  cut_end_.assign(lanes, 0);
  started_end_.assign(lanes, 0);
  // the lanes each link carries transfers of, and the lanes whose collectives hold SMs
  std::vector<std::pair<std::int32_t, std::int32_t>> link_lane;
  std::vector<std::uint8_t> holds(lanes, 0);
  for (const TaskSpec& sp : specs_) {
    const std::int32_t lane = lane_of_stream_[sp.rank * kStreamKinds + static_cast<int>(sp.stream)];
    if (lane < 0) continue;  // a description no task uses
    if (sp.work > 0) link_lane.emplace_back(sp.link, lane);
    if (comm_share_ > 0 && is_collective(sp)) holds[lane] = 1;
  }
  std::sort(link_lane.begin(), link_lane.end());
  link_lane.erase(std::unique(link_lane.begin(), link_lane.end()), link_lane.end());
  walk_pairs_.clear();
  for (std::size_t i = 0; i < link_lane.size(); ++i)
    for (std::size_t j = i + 1; j < link_lane.size() && link_lane[j].first == link_lane[i].first; ++j)
      walk_pairs_.push_back(LanePair{link_lane[i].second, link_lane[j].second, link_lane[i].first});
  if (comm_share_ > 0)
    for (int r = 0; r < ranks_; ++r) {
      const std::int32_t c = lane_of_stream_[r * kStreamKinds + static_cast<int>(StreamKind::compute)];
      if (c < 0) continue;
      for (int k = 0; k < kStreamKinds; ++k) {
        const std::int32_t h = lane_of_stream_[r * kStreamKinds + k];
        if (h >= 0 && h != c && holds[h]) walk_pairs_.push_back(LanePair{c, h, -1});
      }
    }
  walk_lanes_ = lanes;
}

// A task's walk state, from its loop state the first time this walk reaches it.
[[gnu::always_inline]] inline Engine::WalkSlot& Engine::reach(std::int32_t x) {
  WalkSlot& w = walk_[x];
  if (w.gen != walk_gen_) {
    const Slot& s = slot_[x];
    w.gen = walk_gen_;
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
// (inlined into advance(), which calls it once per walked task: the GPT-3 step's run 5% faster)
[[gnu::always_inline]] inline void Engine::propagate(std::int32_t x, double f) {
  for (std::int32_t e = succ_begin_[x]; e < succ_begin_[x + 1]; ++e) {
    const std::int32_t y = succ_[e];
    WalkSlot& v = reach(y);
    if (!(v.flags & kDepSet) || f > v.ready) {
      if (!(v.flags & kDepSet)) *walk_reached_end_++ = Reached{y, v.lane};  // its first walked dependency
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
      if (walk_end_[l] == y) walk_stack_.push_back(l);
    }
  }
}

// Whether the loop completes walked tasks a and b, both ending at instant f, in the order a then b
// (-1), b then a (+1), or in an order only it knows (0). Events at one instant run in the order they
// were scheduled, and each was scheduled while an earlier event was processed: the one scheduled
// at the earlier instant runs first; two scheduled before the walk run in the order of their
// sequence numbers; and a task that started at f inside the other's completion ends after it.
int Engine::completes_later(std::int32_t a, std::int32_t b, double f) const {
  const double sa = walk_out_[a].scheduled, sb = walk_out_[b].scheduled;
  if (sa != sb) return sa > sb ? 1 : -1;
  if (sa == -kNever) {
    const auto seq = [&](std::int32_t x) {  // the low half of its lane's key
      const int l = slot_[x].lane;
      return static_cast<std::uint64_t>(l == front_ ? front_key_ : key_[l]);
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
bool Engine::follows(std::int32_t a, std::int32_t b, double f) const {
  for (int hops = 0; hops < 16 && a >= 0; ++hops) {
    const WalkSlot& w = walk_[a];
    if (w.gen != walk_gen_ || !(w.flags & kWalked) || !(start_[a] == f)) return false;
    a = walk_out_[a].binding;
    if (a == b) return true;
  }
  return false;
}

// Walks lane l's tasks in program order while each is ready (its dependencies walked) and starts
// before the horizon.
[[gnu::always_inline]] inline void Engine::advance(int l) {
  const Lane& st = lanes_[l];
  // (the lane's free time in a local: each task's start waits on the last one's end, and a reload
  // from walk_free_, which the stores below may alias, would add a store-to-load forward to that chain)
  double free = walk_free_[l];
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
    // prefetchers follow, and a task's first touch in each array missed (the 1T step's run 20%
    // faster; in a step that fits the cache the hints only cost, GPT-3's run 3-6%)
    if (walk_far_) {
      const std::int32_t a = std::min(x + 4, st.end - 1);
      __builtin_prefetch(walk_ + a, 1);
      __builtin_prefetch(slot_.data() + a);
      __builtin_prefetch(walk_out_ + a, 1);
      __builtin_prefetch(start_.data() + a, 1);
      __builtin_prefetch(succ_begin_.data() + a);
    }
    // try_start(): it starts with the later of its readiness and its predecessor's end, and the
    // predecessor binds when it ended no earlier than the last dependency
    const double t = w.ready > free ? w.ready : free;
    if (t >= walk_horizon_) break;
    const std::int32_t b = x > st.begin && (w.dep < 0 || free >= w.ready) ? x - 1 : w.dep;
    if ((w.flags & kTie) && b == w.dep) walk_tie_ = std::min(walk_tie_, w.ready);
    const Slot& s = slot_[x];
    WalkEnd& out = walk_out_[x];
    double f;
    out.scheduled = t;  // when its end event is scheduled
    if (s.link < 0) {
      f = st.compute && comm_share_ > 0 ? t + s.amount / compute_rate(0) : t + s.amount;
    } else {
      const double tx = (s.flags & kLatency) ? t + specs_[spec_of_[stream_tasks_[x]]].duration_s : t;
      f = tx + s.amount / (links_[s.link].capacity / 1.0);
      out.scheduled = tx;
    }
    start_[x] = t;
    out.finish = f;
    out.binding = b;
    w.flags |= kWalked;
    walk_end_[l] = x + 1;
    walk_free_[l] = free = f;
    propagate(x, f);
  }
}

// From the loop's state after the events up to `now`: every task's start and end as the loop would
// find them if no link were shared from now on (the loop's own expressions, so bit for bit); then
// the cut, the first moment where that premise fails or the order of two simultaneous events
// could decide a result; then everything before the cut is committed as the loop would have left
// it. Called only while no collective runs. Returns the tasks it completed (0: the cut came too
// soon, nothing changed).
std::size_t Engine::walk(double now) {
  if (walk_lanes_ != lanes_.size()) pair_lanes();
  walk_arena(spec_of_.size());
  walk_tie_ = kNever;
  walk_stack_.clear();
  const int lanes = static_cast<int>(lanes_.size());
  double left = 0;  // the running tasks' time left
  for (int l = 0; l < lanes; ++l) {
    const Lane& st = lanes_[l];
    walk_begin_[l] = walk_end_[l] = st.cursor;
    walk_free_[l] = st.last_finish;
    if (st.running < 0) continue;
    const std::int32_t x = st.running;
    const Slot& s = slot_[x];
    WalkSlot& w = walk_[x];
    WalkEnd& out = walk_out_[x];
    w.gen = walk_gen_;
    w.flags = kWalked;
    w.lane = static_cast<std::uint16_t>(l);
    w.pending = 0;
    w.dep = -1;
    w.ready = s.finish;
    out.binding = s.binding;
    const double at = time_of(l == front_ ? front_key_ : key_[l]);
    // its end event: scheduled before the walk, or at the end of its latency
    out.scheduled = s.link >= 0 && (s.flags & kLatency) ? at : -kNever;
    left = std::max(left, at - now);
    // it ends at its pending event, or after its transfer once the latency is over
    out.finish = s.link >= 0 && (s.flags & kLatency) ? at + s.amount / (links_[s.link].capacity / 1.0) : at;
    walk_end_[l] = x + 1;
    walk_free_[l] = out.finish;
  }
  if (!(walk_span_ > 0)) walk_span_ = left > 0 ? kFirstSpan * left : kNever;
  const double horizon = now + walk_span_;
  walk_horizon_ = horizon;
  for (int l = 0; l < lanes; ++l) {
    if (walk_end_[l] > walk_begin_[l]) propagate(walk_begin_[l], walk_out_[walk_begin_[l]].finish);
    walk_stack_.push_back(l);
  }
  while (!walk_stack_.empty()) {
    const int l = walk_stack_.back();
    walk_stack_.pop_back();
    advance(l);
  }

  double cut = std::min(walk_tie_, horizon);
  for (const LanePair& p : walk_pairs_) cut = first_overlap(p.a, p.b, p.link, cut);
  if (cut < horizon) {
    ++walk_short_;
    walk_span_ /= 2;
  } else {
    walk_short_ = 0;
    walk_span_ *= 2;
  }
  double ambiguous = kNever;
  while (cut > now && !order_new_keys(cut, ambiguous)) cut = ambiguous;
  if (!(cut > now)) return 0;
  const std::size_t done = commit_walk(cut);
  walked_ += done;
  return done;
}

// When walked task x's transfer begins: at its start, or when its latency is over.
double Engine::transfer_begin(std::int32_t x) const {
  const TaskSpec& sp = specs_[spec_of_[stream_tasks_[x]]];
  return sp.work > 0 && sp.duration_s > 0 ? start_[x] + sp.duration_s : start_[x];
}

// The earliest moment before `cut` where a walked task of lane a and one of lane b overlap where the
// loop would make them share: transfers on `link`, or (link -1) a compute task of lane a and a
// collective of lane b holding SMs. Intervals are closed: at a shared instant the order of the two
// events decides, unless one task started in the other's completion (its binding, and for a
// transfer no latency).
double Engine::first_overlap(int a, int b, std::int32_t link, double cut) const {
  auto counts = [&](std::int32_t x, bool in_a) {
    const Slot& s = slot_[x];
    if (link >= 0) return s.link == link;
    return in_a ? s.link < 0 : (s.flags & kHoldsSms) != 0;
  };
  auto from = [&](std::int32_t x) { return link < 0 ? start_[x] : transfer_begin(x); };
  auto began_in = [&](std::int32_t x, std::int32_t by) {
    return walk_out_[x].binding == by && (link < 0 || !(specs_[spec_of_[stream_tasks_[x]]].duration_s > 0));
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
bool Engine::order_new_keys(double cut, double& ambiguous) {
  new_keys_.clear();
  const int lanes = static_cast<int>(lanes_.size());
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
    if (s.link < 0) {
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
std::size_t Engine::commit_walk(double cut) {
  const int lanes = static_cast<int>(lanes_.size());
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
  std::size_t events = events_;
  double makespan = makespan_;
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
    if (r >= 0 && slot_[r].link >= 0 && (slot_[r].flags & kLatency) && transfer_begin(r) < cut) {
      slot_[r].flags &= static_cast<std::uint8_t>(~kLatency);
      ++events;  // its latency's end
    }
    st.running = r;
  }
  events_ = events;
  makespan_ = makespan;
  // The tasks that a walked task's end was propagated to (walk_reached_: every successor of a task
  // done by the cut, so each one the loop's completions would have touched) and that do not start
  // before the cut wait on the loop: each keeps its dependencies not done by the cut (those not
  // walked, and those walked that end at or after the cut), and one with none left is ready,
  // released by its latest dependency. (A task still waiting keeps its binding: nothing reads it
  // before a completion or a walk sets it anew, when its last dependency is done.) This replaces a
  // pass over the successors of every task done, which read each one's walk state again.
  for (int l = 0; l < lanes; ++l)
    for (std::int32_t x = cut_end_[l]; x < walk_end_[l]; ++x)
      for (std::int32_t k = succ_begin_[x]; k < succ_begin_[x + 1]; ++k) ++walk_[succ_[k]].late;
  for (const Reached* y = walk_reached_; y != walk_reached_end_; ++y) {
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
  // links: the transfers still moving at the cut, one per link at most (else an overlap before it)
  for (Link& k : links_)
    if (!k.active.empty() && slot_[k.active.front()].state == TaskState::done) k.active.clear();
  for (const NewKey& nk : new_keys_) {
    const std::int32_t r = lanes_[nk.lane].running;
    const Slot& s = slot_[r];
    if (s.link < 0 || (s.flags & kLatency)) continue;
    Link& k = links_[s.link];
    k.active.assign(1, r);
    k.last_t = nk.scheduled;
  }
  shared_links_ = 0;
  // the collectives running at the cut, and with SM contention each rank's load
  collectives_ = 0;
  for (int l = 0; l < lanes; ++l)
    if (lanes_[l].running >= 0 && (slot_[lanes_[l].running].flags & kCollective)) ++collectives_;
  if (comm_share_ > 0) {
    for (auto& ld : load_) ld.comm = 0;
    for (int l = 0; l < lanes; ++l) {
      const Lane& st = lanes_[l];
      RankLoad& ld = load_[st.rank];
      const std::int32_t r = st.running;
      if (r >= 0 && (slot_[r].flags & kHoldsSms)) ++ld.comm;
      if (!st.compute) continue;
      if (r >= 0 && slot_[r].link < 0) {
        if (ld.compute != r) {
          ld.compute = r;
          ld.since = start_[r];
        }
      } else {
        ld.compute = -1;
      }
    }
  }
  // the queue: the events still pending before the walk keep their keys; the walk's get theirs in
  // the loop's order, after every earlier one
  for (int l = 0; l < lanes; ++l) {
    const Key old = l == front_ ? front_key_ : key_[l];
    key_[l] = lanes_[l].running < 0 ? kIdle : old;
  }
  for (const NewKey& nk : new_keys_) key_[nk.lane] = key_of(nk.at, seq_++);
  for (int l = lanes; l < leaves_; ++l) key_[l] = kIdle;
  build_queue();
  return done;
}

}  // namespace ptdsim::sim
