#include <algorithm>
#include <array>
#include <vector>

#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/scale_cost.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/schedule.hpp"
#include "ptdsim/planner/sweep.hpp"

namespace ptdsim::planner {
namespace {

using analytic::Overlap;
using analytic::PlanComm;

// What a collective takes of its GPU's compute, as the scheduler applies it: at most down to the
// floor rate GpuSpec::kMinComputeRate, whatever the plan says (GpuSpec::comm_share() caps a
// hardware file's share so; a plan written by hand may not).
double held_share(double share) { return std::min(share, 1 - core::GpuSpec::kMinComputeRate); }

// C seconds of compute beside collectives that run X seconds and hold `share` of the SMs while they
// run (compute progresses at most 1 - share then): with a seconds of compute alone, b of both and c
// of collectives alone, a + (1 - share)·b >= C and b + c >= X, so a + b + c >= C + share·X while
// X·(1 - share) <= C, and >= X beyond.
double beside_compute(double compute, double x, double share) {
  return x * (1 - share) <= compute ? compute + share * x : x;
}

// The least a pass can last when its first `window` (L) seconds run beside a collective holding
// SMs, its compute (c seconds alone) progressing at most 1 - share there: with n >= s seconds of it
// not computing (its chained collectives, s, and any wait), c <= (T - n) - share·max(0, min(L, T) - n),
// so T >= n + c / (1 - share) when the window covers the pass and T >= c + n + share·max(0, L - n)
// otherwise, both least at n = s. Its slope in L is at most share < 1, so a later start never ends
// the pass earlier: the graph's lower times give a lower end.
double slowed_pass(double c, double s, double window, double share) {
  const double rate = std::max(core::GpuSpec::kMinComputeRate, 1 - share);
  return c + s + (1 - rate) * std::min(std::max(0.0, window - s), c / rate);
}

// The DP reductions a pass issues in `repeat` runs of one segment: one batch of `work` seconds
// (alone) after each run's compute, the first no earlier than `first` seconds into the pass and
// each next one no earlier than `step` after the one before.
struct Buckets {
  double first = 0, step = 0, work = 0;
  int repeat = 0;
};

// What a pass adds to a DP stream that is free from `free` on, the pass starting no earlier than
// `start`: the stream runs its reductions in order, each once its segment's compute is done
// (sim/step_graph.cpp `collectives`), so the k-th of a batch ends no earlier than
// max(start + first + (k - 1)·step, the previous end) + work; over k = 1..repeat the latest of
// these chains starts at the first of the batch or at the last.
double dp_stream_end(double free, double start, const Buckets& b) {
  const double r = b.repeat, issue = start + b.first;
  return std::max({free + r * b.work, issue + r * b.work, issue + (r - 1) * b.step + b.work});
}

// A pass's own DP reductions (the last micro-batch's buckets, ZeRO-3's reduce-scatter): each is
// issued when its segment's compute ends (sim/step_graph.cpp `collectives`) and holds SMs for at
// least its time alone, so what the rank does next, the segment's chained collectives and the next
// compute, lasts at least slowed_pass() of it. The segments run one after another, so the sum of
// their compute, chained collectives and those slowdowns bounds the pass, and its prefix each
// batch's issue (`batches`, when given, gets them in order).
double own_reductions(const analytic::StepPlan& plan, const analytic::PassPlan& pass, double share,
                      std::vector<Buckets>* batches) {
  double elapsed = 0, issued = 0, issued_chained = 0;  // the last batch's work and the chained before it
  for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) {
    const analytic::Segment& seg = plan.segments[i];
    if (seg.repeat <= 0) continue;  // (a segment that never runs: none from the planner)
    double chained = 0, reduced = 0;
    for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j) {
      const PlanComm& c = plan.comms[j];
      if (c.overlap == Overlap::serial) chained += c.time_s;
      if (c.overlap == Overlap::after && c.stream == analytic::Stream::dp && core::holds_sms(c.kind))
        reduced += c.time_s;
    }
    // each run's compute after a batch, with the chained collectives before it in the same window
    const double e = seg.compute_s;
    const double first = issued > 0 ? slowed_pass(e, issued_chained, issued, share) - issued_chained : e;
    const double next = reduced > 0 ? slowed_pass(e, chained, reduced, share) : e + chained;
    if (reduced > 0 && batches) batches->push_back({elapsed + first, next, reduced, seg.repeat});
    elapsed += first + (seg.repeat - 1) * next + chained;
    issued = reduced, issued_chained = chained;
  }
  return elapsed;
}

// The shortest a pass can take: each segment lasts at least its serial chain (the compute, slowed
// by share x the window collectives beside it, then the serial collectives, or a gather it cannot
// prefetch when that is longer: it waits only for the previous compute, so it may run beside the
// previous segment's serial collectives) and at least its overlapped collectives (beside ones
// alone; window ones after the compute before their window), and the next segment waits for both.
// The pass's first gather is left out: it may run while the pass waits for its input. And the
// collectives on one link wait for each other (below).
double pass_bound(const analytic::StepPlan& plan, const analytic::PassPlan& pass) {
  double total = 0;
  const bool blocking = plan.fabric.blocking();
  const double share = held_share(plan.comm_share);
  bool reduces = false;  // some segment issues DP reductions
  for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) {
    const analytic::Segment& seg = plan.segments[i];
    double serial = seg.compute_s, chained = 0, overlapped = 0, gather = 0, contended = 0;
    // Per link (NVLink, the NIC when no uplink is narrower than it: one resource each, shared
    // fairly): the work of the collectives that start no earlier than the segment (beside), the
    // start of its window (window) and the end of its compute (serial). The link moves one second of work a
    // second, so the segment lasts at least from any of those starts until it has moved the work
    // of every collective starting there or later.
    std::array<double, 2> beside{}, windowed{}, after{}, window_start{seg.compute_s, seg.compute_s};
    for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j) {
      const PlanComm& c = plan.comms[j];
      const bool inter = plan.group(c.group).scope == core::Scope::inter;
      const bool shared = !(inter && blocking);
      const std::size_t l = inter ? 1 : 0;
      switch (c.overlap) {
        case Overlap::serial:
          chained += c.time_s;
          if (shared) after[l] += c.time_s;
          break;
        case Overlap::beside:
          if (shared) beside[l] += c.time_s;
          overlapped = std::max(overlapped, c.time_s);
          // It starts no earlier than the compute (both wait for the segment's inputs) and holds
          // SMs while it runs: started d seconds in, the compute ends no earlier than
          // C + share·min(T, end - d) and the segment no earlier than d + T, least at d = 0
          if (core::holds_sms(c.kind)) contended = std::max(contended, beside_compute(seg.compute_s, c.time_s, share));
          // EP beside the pass starts with its compute (both wait for the pass's inputs; the EP
          // stream holds nothing else), so the compute runs slowed by share x at least the shorter
          // of the two, as under a window
          if (c.kind == core::CommKind::ep) serial += share * std::min(c.time_s, seg.compute_s);
          break;
        case Overlap::window: {
          const double window = std::min(seg.compute_s, c.window_s);
          serial += share * std::min(c.time_s, window);
          overlapped = std::max(overlapped, seg.compute_s - window + c.time_s);
          if (shared) {
            windowed[l] += c.time_s;
            window_start[l] = std::min(window_start[l], seg.compute_s - window);
          }
          break;
        }
        case Overlap::prefetch:
          // without prefetch (depth 0) the gather waits for the previous compute and this compute
          // for the gather: a chain; ahead of it, another stream (the stream totals below)
          if (c.depth == 0) gather += c.time_s;
          break;
        case Overlap::after:  // another stream: the stream totals below, and own_reductions()
          reduces = reduces || c.stream == analytic::Stream::dp;
          break;
      }
    }
    for (std::size_t l = 0; l < 2; ++l) {
      if (beside[l] > 0) overlapped = std::max(overlapped, beside[l] + windowed[l] + after[l]);
      if (windowed[l] > 0) overlapped = std::max(overlapped, window_start[l] + windowed[l] + after[l]);
    }
    overlapped = std::max(overlapped, contended);
    // the next segment's gather may run beside this one's serial collectives: the longer counts
    total += seg.repeat * std::max(serial + std::max(chained, gather), overlapped);
    if (i == pass.seg_begin)
      total -= std::max(serial + std::max(chained, gather), overlapped) - std::max(serial + chained, overlapped);
  }
  // (without reductions, or without their SMs, own_reductions() sums what `total` sums at least)
  return reduces && share > 0 ? std::max(total, own_reductions(plan, pass, share, nullptr)) : total;
}

// Work of every collective of a pass, added to the per-stream and per-link totals.
// On a blocking fabric (some uplink narrower than the NIC) a transfer's work is counted on the NIC
// and on each uplink it crosses at its route's share b, the rate it moves at alone: the closed form
// of the simulator's max-min sharing (docs/analytic.md "Shared links"). A flow of w seconds alone
// takes w·b of its route's resources' capacity-seconds whatever its share over time, and a resource
// of capacity c serves at most c a second, so it is busy at least Σ w·b / c. With b = 1 everywhere
// (a non-blocking fabric, FairShare) the NIC's term is the plain sum of the work.
struct Totals {
  std::array<double, 2> link{};  // NVLink inside the node, the NIC share across nodes
  std::array<double, 2> held{};  // the same without pipeline sends, which hold no SMs to speak of
  double gathers = 0;            // the dp_gather stream
  double reduces = 0;            // the dp stream
  double serial = 0;             // collectives chained after a compute (its stream waits for them)
  std::array<double, core::kMaxSwitchTiers - 1> up{};  // w·b through each uplink (blocking fabrics)
  bool blocking = false;                               // plan.fabric.blocking()
  void add(const analytic::StepPlan& plan, const PlanComm& c, double times) {
    // (each sum in the same order as ever; branches, not a variable index, so the compiler keeps
    // the two links apart instead of chaining every sum through one load and store)
    const double t = times * c.time_s;
    const bool held_sms = core::holds_sms(c.kind);
    const analytic::Group& g = plan.group(c.group);
    if (g.scope == core::Scope::inter && blocking) {
      // the route sim::StepLinks gives the group: the NIC, then the uplinks below its top tier
      const int top = std::min(std::max(0, g.span.top), plan.fabric.count);
      const double wb = t * plan.fabric.route(top);
      link[1] += wb;
      if (held_sms) held[1] += wb;
      for (int k = 0; k < top; ++k) up[static_cast<std::size_t>(k)] += wb;
    } else if (g.scope == core::Scope::inter) {
      link[1] += t;
      if (held_sms) held[1] += t;
    } else {
      link[0] += t;
      if (held_sms) held[0] += t;
    }
    if (c.stream == analytic::Stream::dp_gather) gathers += t;
    if (c.stream == analytic::Stream::dp) reduces += t;
    if (c.overlap == Overlap::serial) serial += t;
  }
  void add(const analytic::StepPlan& plan, const analytic::PassPlan& pass, double times) {
    for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) {
      const analytic::Segment& seg = plan.segments[i];
      for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
        add(plan, plan.comms[j], times * seg.repeat);
    }
  }
};

// Per stage: one chunk's pass bounds (chunk 0; chunks differ only by the ends), and the step's.
struct StageBound {
  double f = 0, b = 0, w = 0;  // chunk 0's forward, backward and weight-gradient pass
  double p2p = 0;              // one send to a neighbour stage
  double busy = 0;             // the whole step's chain of passes on this stage
  double compute = 0;          // the step's compute
  double last_op = 0;          // the last pass of the step, and its DP buckets
  double last_buckets = 0;
  double first_compute = 0;    // at least the stage's first pass's compute (a forward's, the longest)
  double first_serial = 0;     // and at least its chained collectives
  Totals totals;
};

StageBound stage_bound(const analytic::StepPlan& plan, const analytic::StagePlan& st) {
  StageBound o;
  o.totals.blocking = plan.fabric.blocking();
  const double m = plan.shape.m;
  const int grad = plan.schedule->splits_weight_grad ? 2 : 1;
  for (int c = 0; c < plan.shape.v; ++c) {
    const analytic::ChunkPlan& ch = plan.chunk(st, c);
    std::array<double, 3> b{};
    for (int k = 0; k < 3; ++k) {
      b[k] = pass_bound(plan, ch.pass[k]);
      o.compute += m * ch.pass[k].compute_s;
      o.totals.add(plan, ch.pass[k], k == grad ? m - 1 : m);
    }
    const double last = pass_bound(plan, ch.last_grad);
    o.first_compute = std::max(o.first_compute, ch.pass[0].compute_s);
    double serial = 0;
    for (int i = ch.pass[0].seg_begin; i < ch.pass[0].seg_begin + ch.pass[0].seg_count; ++i) {
      const analytic::Segment& seg = plan.segments[i];
      for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
        if (plan.comms[j].overlap == Overlap::serial) serial += seg.repeat * plan.comms[j].time_s;
    }
    o.first_serial = std::max(o.first_serial, serial);
    o.busy += m * (b[0] + b[1] + b[2]) - b[grad] + last;
    o.totals.add(plan, ch.last_grad, 1);
    if (c == 0) {
      o.f = b[0], o.b = b[1], o.w = b[2];
      o.last_op = last;
      for (int i = ch.last_grad.seg_begin; i < ch.last_grad.seg_begin + ch.last_grad.seg_count; ++i) {
        const analytic::Segment& seg = plan.segments[i];
        for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
          if (plan.comms[j].kind == core::CommKind::dp_reduce) o.last_buckets += seg.repeat * plan.comms[j].time_s;
      }
    }
    for (int send : {ch.send_forward, ch.send_backward}) {
      if (send < 0) continue;
      o.p2p = plan.comms[send].time_s;
      o.totals.add(plan, plan.comms[send], m);
      // a send not overlapped holds the next pass
      if (!plan.overlap_pp) o.busy += m * plan.comms[send].time_s;
    }
  }
  for (int j = st.start_begin; j < st.post_end; ++j) o.totals.add(plan, plan.comms[j], 1);
  return o;
}

}  // namespace

double busiest_stage_compute(const analytic::StepPlan& plan) {
  double busiest = 0;
  for (const auto& st : plan.stages) {
    double c = 0;
    for (int k = 0; k < plan.shape.v; ++k)
      for (const auto& pass : plan.chunk(st, k).pass) c += pass.compute_s;
    busiest = std::max(busiest, plan.shape.m * c);
  }
  return busiest;
}

double scale_wait_floor(const core::Scenario& s, double busiest_s) {
  return analytic::straggler_wait_s(s.hardware.jitter, s.gpus, busiest_s, 0.0);
}

namespace {

double sum_time(const analytic::StepPlan& plan, int begin, int end) {
  double t = 0;
  for (int j = begin; j < end; ++j) t += plan.comms[j].time_s;
  return t;
}

// Per stage, what the pass graph proves: the end of its last pass, the start of chunk 0's last
// gradient pass, and the end of its DP stream's reductions.
struct GraphEnds {
  double own = 0;
  double grad_start = 0;
  double dp_end = 0;
};

// The pass graph's weights: per stage and chunk the F, B, W and last gradient pass's (4 a chunk; a
// stage that repeats another has its numbers), and per virtual stage its forward and backward
// send's time.
struct PassWeight {
  double bound = 0;    // pass_bound()
  double compute = 0;  // its compute alone
  double chained = 0;  // its chained (serial) collectives
  int buckets_begin = 0, buckets_end = 0;  // the DP reductions it issues: PassDurations::buckets
};
struct PassDurations {
  std::vector<PassWeight> pass;
  std::vector<Buckets> buckets;
  std::vector<double> send_f, send_b;
};
PassDurations pass_durations(const analytic::StepPlan& plan) {
  const int p = plan.shape.p, v = std::max(1, plan.shape.v);
  const int vstages = p * v;
  PassDurations out;
  out.pass.resize(static_cast<std::size_t>(p) * v * 4);
  out.send_f.assign(static_cast<std::size_t>(vstages), 0.0);
  out.send_b.assign(static_cast<std::size_t>(vstages), 0.0);
  // a pass's bound, compute, chained collectives and DP reductions, in its segments' order
  const auto weigh = [&](const analytic::PassPlan& pass) {
    PassWeight w;
    w.bound = pass_bound(plan, pass);
    w.buckets_begin = static_cast<int>(out.buckets.size());
    own_reductions(plan, pass, held_share(plan.comm_share), &out.buckets);
    w.buckets_end = static_cast<int>(out.buckets.size());
    w.compute = pass.compute_s;
    for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) {
      const analytic::Segment& seg = plan.segments[i];
      for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
        if (plan.comms[j].overlap == Overlap::serial) w.chained += seg.repeat * plan.comms[j].time_s;
    }
    return w;
  };
  for (int j = 0; j < p; ++j) {
    const analytic::StagePlan& st = plan.stages[j];
    for (int c = 0; c < v; ++c) {
      const analytic::ChunkPlan& ch = plan.chunk(st, c);
      PassWeight* w = &out.pass[(static_cast<std::size_t>(j) * v + c) * 4];
      if (st.repeats >= 0) {
        std::copy_n(&out.pass[(static_cast<std::size_t>(st.repeats) * v + c) * 4], 4, w);
      } else {
        for (int k = 0; k < 3; ++k) w[k] = weigh(ch.pass[k]);
        w[3] = weigh(ch.last_grad);
      }
      const int vs = c * p + j;
      if (ch.send_forward >= 0) out.send_f[vs] = plan.comms[ch.send_forward].time_s;
      if (ch.send_backward >= 0) out.send_b[vs] = plan.comms[ch.send_backward].time_s;
    }
  }
  return out;
}

// The pass graph (docs/planner.md "Schedule bound"): every pass of every stage in the schedule's
// order (core::ScheduleRules::order), each lasting at least its pass_bound(). A pass starts no
// earlier than the previous pass of its stage (and, with `overlap.pp` off, that pass's send), the
// stage's second pass no earlier than the collectives of the step's start, and a forward (backward)
// no earlier than the same micro-batch's forward (backward) on the previous (next) virtual stage
// plus its send: the builder's edges (sim/step_graph.cpp), with the waits on links and for SMs
// left out but those pass_bound() counts within a pass and the SMs the stage's DP reductions hold
// beside the passes after them. Its longest path gives each stage's end: the busy chain, fill and drain at once, and the
// waits of the ring of virtual stages that an interleaved schedule's warm-up and cool-down
// pay on top. False when the orders contradict each other (the scheduler throws on such a plan).
bool pass_graph(const analytic::StepPlan& plan, std::vector<GraphEnds>& out) {
  const int p = plan.shape.p, v = std::max(1, plan.shape.v), m = std::max(1, plan.shape.m);
  const int vstages = p * v;
  const PassDurations durations = pass_durations(plan);
  const std::vector<PassWeight>& weights = durations.pass;
  const std::vector<double>& send_f = durations.send_f;
  const std::vector<double>& send_b = durations.send_b;
  std::vector<std::vector<core::PassRef>> order(static_cast<std::size_t>(p));
  std::size_t left = 0;
  for (int j = 0; j < p; ++j) {
    plan.schedule->order(plan.shape, j, order[j]);
    left += order[j].size();
  }
  // the end of each (virtual stage, micro-batch)'s forward and backward; -1 until reached
  std::vector<double> end_f(static_cast<std::size_t>(vstages) * m, -1.0), end_b(end_f.size(), -1.0);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0.0);  // when the stage's next pass may start
  const double share = held_share(plan.comm_share);
  out.assign(static_cast<std::size_t>(p), GraphEnds{});
  // Each stage runs as far as its inputs allow, the stages in turn, until every pass is placed or
  // none can move (a stage's pass waits for a pass of another stage that never comes).
  for (bool moved = true; left > 0 && moved;) {
    moved = false;
    for (int j = 0; j < p; ++j) {
      const analytic::StagePlan& st = plan.stages[j];
      const std::vector<core::PassRef>& ops = order[j];
      std::size_t k = next[j];
      double t = free_at[j];
      double dp_free = out[j].dp_end;  // no earlier than this the stage's DP stream is idle
      for (; k < ops.size(); ++k) {
        const core::PassRef op = ops[k];
        const int vs = op.chunk * p + j;
        double ready = t;
        if (k == 1 && st.start_end > st.start_begin) ready = std::max(ready, sum_time(plan, st.start_begin, st.start_end));
        if (op.pass == core::Pass::F && vs > 0) {
          const double e = end_f[static_cast<std::size_t>(vs - 1) * m + op.microbatch];
          if (e < 0) break;
          ready = std::max(ready, e + send_f[vs - 1]);
        } else if (op.pass == core::Pass::B && vs < vstages - 1) {
          const double e = end_b[static_cast<std::size_t>(vs + 1) * m + op.microbatch];
          if (e < 0) break;
          ready = std::max(ready, e + send_b[vs + 1]);
        }
        const bool last_grad = op.microbatch == m - 1 && plan.grad_pass(op.pass);
        const PassWeight& w =
            weights[(static_cast<std::size_t>(j) * v + op.chunk) * 4 + (last_grad ? 3 : static_cast<int>(op.pass))];
        double d = w.bound;
        // The DP stream runs without a break from a reduction's issue until dp_free, no earlier
        // than this pass's start, and its collectives hold SMs: the pass's compute runs at most
        // 1 - share for the first dp_free - ready seconds of it (docs/planner.md "Schedule bound").
        if (dp_free > ready && share > 0) d = std::max(d, slowed_pass(w.compute, w.chained, dp_free - ready, share));
        for (int q = w.buckets_begin; q < w.buckets_end; ++q)
          dp_free = dp_stream_end(dp_free, ready, durations.buckets[static_cast<std::size_t>(q)]);
        const double end = ready + d;
        if (last_grad && op.chunk == 0) out[j].grad_start = ready;
        t = end;
        if (op.pass == core::Pass::F) {
          end_f[static_cast<std::size_t>(vs) * m + op.microbatch] = end;
          if (!plan.overlap_pp) t += send_f[vs];
        } else if (op.pass == core::Pass::B) {
          end_b[static_cast<std::size_t>(vs) * m + op.microbatch] = end;
          if (!plan.overlap_pp) t += send_b[vs];
        }
      }
      if (k != next[j]) {
        moved = true;
        left -= k - next[j];
        next[j] = k;
        free_at[j] = t;
        out[j].own = t;
        out[j].dp_end = dp_free;
      }
    }
  }
  return left == 0;
}

// The chains of step_lower_bound(); with `graph`, each stage's end and its last gradient pass's
// start are also at least the pass graph's (schedule_lower_bound()).
double chains_bound(const analytic::StepPlan& plan, const std::vector<GraphEnds>* graph) {
  const int p = plan.shape.p;
  if (p == 0 || plan.stages.empty()) return 0;
  const double m = std::max(1, plan.shape.m);
  const bool split = plan.schedule->splits_weight_grad;
  const double share = held_share(plan.comm_share);

  std::vector<StageBound> ops;
  ops.reserve(p);
  for (const auto& st : plan.stages)  // a stage that repeats another has the same bounds
    ops.push_back(st.repeats >= 0 ? ops[st.repeats] : stage_bound(plan, st));

  double bound = 0;
  double fill = 0;  // micro-batch 0's first chunk through every earlier stage
  for (int j = 0; j < p; ++j) {
    const analytic::StagePlan& st = plan.stages[j];
    const StageBound& o = ops[j];
    double own = fill + o.busy;  // end of stage j's last pass
    // the second pass waits for what the step's start issues (the overlapped parameter all-gather)
    if (st.start_end > st.start_begin) own = std::max(own, sum_time(plan, st.start_begin, st.start_end) + o.busy - o.f);
    const double chain_own = own;  // the drain below starts from the chain's end
    double last_start = own - o.last_op;  // the last gradient pass's start
    double dp_end = 0;  // the DP stream's reductions in the pass graph
    if (graph) {
      own = std::max(own, (*graph)[j].own);
      last_start = std::max(last_start, (*graph)[j].grad_start);
      dp_end = (*graph)[j].dp_end;
    }
    // Gradients reach the optimizer through the DP stream: the last pass's buckets start no earlier
    // than that pass; an unbucketed reduction waits for all of it; and the stream cannot finish
    // before it has moved all of its work, nor before the graph's reductions in order.
    double grads = std::max(own, dp_end);
    if (o.last_buckets > 0) grads = std::max(dp_end, last_start + o.last_buckets);
    grads = std::max(grads, own + sum_time(plan, st.end_begin, st.end_end));
    grads = std::max(grads, o.totals.reduces);
    bound = std::max(bound, o.totals.gathers);  // the gathers' own stream
    // (CPU offload's serial phase, when any, comes before the optimizer step)
    const double end = std::max(own, grads) + st.offload_s + st.optimizer_s + sum_time(plan, st.post_begin, st.post_end);
    bound = std::max(bound, end);

    // The last micro-batch's backward from stage j down to stage 0, then stage 0's optimizer.
    if (j > 0) {
      // with a split W the last B may be followed by up to j+1 deferred W passes on stage j
      double t = split ? chain_own - std::min(m, j + 1.0) * o.w : chain_own;
      // (a send not overlapped is already in stage j's chain, `own`)
      for (int i = j; i >= 1; --i) t += (i == j && !plan.overlap_pp ? 0 : ops[i].p2p) + ops[i - 1].b;
      t += (split ? ops[0].w : 0) + plan.stages[0].offload_s + plan.stages[0].optimizer_s;
      bound = std::max(bound, t);
    }

    // Every transfer of a rank goes over one of its two links, which the scheduler shares fairly at
    // a capacity of one second of work per second: neither link can finish before its whole
    // step's work has gone through.
    bound = std::max({bound, o.totals.link[0], o.totals.link[1]});
    // On a blocking fabric the NIC's sum is of work x route share (Totals), and each uplink, of
    // capacity u_k, serves at most u_k a second: it is busy at least its w·b over u_k.
    for (int k = 0; o.totals.blocking && k < plan.fabric.count; ++k)
      bound = std::max(bound, o.totals.up[static_cast<std::size_t>(k)] / plan.fabric.uplink[static_cast<std::size_t>(k)]);

    // SM contention (sim::Engine::set_comm_share): the step's compute beside its collectives,
    // which run at least as long as the busier link's work (pipeline sends left out).
    if (share > 0) {
      const double compute = o.compute + st.optimizer_s;
      const double x = std::max(o.totals.held[0], o.totals.held[1]);
      bound = std::max(bound, beside_compute(compute, x, share));
      // The same with the time the compute stream cannot compute (docs/planner.md "SM contention
      // beside the waits"): the step's start collectives (g, before the second pass; a link moves
      // at most g of its work by then, so collectives run at least x - g after) and the chained
      // collectives after it (s). With n such seconds, collectives beside compute run at least
      // b = x - g - n, beside the rest of the compute, C' (beside_compute): least at the fewest n, s.
      const double g = sum_time(plan, st.start_begin, st.start_end);
      const double c = g > 0 ? compute - o.first_compute : compute;
      const double s = std::max(0.0, g > 0 ? o.totals.serial - o.first_serial : o.totals.serial);
      const double b = std::max(0.0, x - g - s);
      bound = std::max(bound, g + s + beside_compute(c, b, share));
    }

    fill += o.f + o.p2p;
  }
  return bound;
}

}  // namespace

// A lower bound on the discrete-event scheduler's step time, from the same step plan the scheduler
// is built from. Each term is a chain of tasks the scheduler's graph orders one after another, so
// the simulated makespan can only be longer (contention on shared links and every wait the bound
// ignores add to it). docs/planner.md "Lower bound" walks through the chains; tests/planner check
// bound <= simulated time on every candidate of a space.
double step_lower_bound(const analytic::StepPlan& plan) { return chains_bound(plan, nullptr); }

double schedule_lower_bound(const analytic::StepPlan& plan) {
  if (plan.shape.p == 0 || plan.stages.empty()) return 0;
  std::vector<GraphEnds> graph;
  if (!pass_graph(plan, graph)) return chains_bound(plan, nullptr);
  return chains_bound(plan, &graph);
}

namespace {

// What pass_bound() never goes below for a pass of `units` equal segments: each segment at least
// its compute and chained collectives, with a gather it cannot prefetch (`gather`) in place of the
// chained ones when longer (not in the first segment), at least CP's exchange beyond its window
// and at least an overlapped TP collective; the compute slowed by `contention` (SMs an EP collective
// beside it holds). Every argument is the whole pass's.
double pass_floor(double units, double compute, double chained, double gather, double cp, double window,
                  double beside, double contention) {
  const double c = compute / units, ch = chained / units, slowed = c + contention / units;
  const double others = std::max(window > 0 ? c - std::min(c, window / units) + cp / units : 0.0, beside / units);
  const double first = std::max(slowed + ch, others);
  const double rest = std::max(slowed + std::max(ch, gather / units), others);
  return (units - 1) * rest + first;
}

// One pass's floor from its makeup (analytic::chunk_passes: what it computes, what its
// collectives may hide behind, whether a ZeRO-3 gather is prefetched): the chained collectives
// are TP (beside the GEMMs, only what no GEMM hides: tp_serial_s), EP, and CP without a window; a gather waits for the previous
// unit's compute when it is not prefetched (depth 0). `ep_hidden_last` and `ep_hidden_first`: EP
// overlap's paired share on the stages that pair the most and the fewest passes.
double floor_of(const analytic::PassMakeup& mk, const analytic::ChunkWork& c, const analytic::PlanOptions& o,
                double ep_hidden_last, double ep_hidden_first) {
  const bool zero3 = o.zero >= 3;
  const double units = mk.units;
  const double gather = zero3 && c.zero3_units > 0 && c.zero3_gather_s > 0 && mk.zero3.gathers > 0 &&
                                mk.zero3.depth == 0
                            ? units * mk.zero3.gathers * c.zero3_gather_s
                            : 0.0;
  const double window = mk.cp_window_s;
  // EP partly beside the compute: chained, at least the share the stage that pairs the most
  // passes leaves serial, and beside, at least the whole of it, which runs on one stream
  const double ep_chained = mk.ep_beside ? (1 - ep_hidden_last) * mk.ep_s : mk.ep_s;
  const double chained = (mk.tp_beside ? mk.tp_serial_s : mk.tp_s) + ep_chained + (window > 0 ? 0.0 : mk.cp_s);
  const double beside = std::max(mk.tp_beside ? mk.tp_s - mk.tp_serial_s : 0.0, mk.ep_beside ? mk.ep_s : 0.0);
  // the compute slowed by the EP beside it (pass_bound's rule), at least the share the stage
  // that pairs the fewest passes hides (the first)
  const double contention =
      mk.ep_beside ? held_share(o.comm_share) * std::min(mk.compute_s, ep_hidden_first * mk.ep_s) : 0.0;
  return pass_floor(units, mk.compute_s, chained, gather, mk.cp_s, window, beside, contention);
}

// Whether two chunks agree in every field floors() reads (the middle chunks of a stage, and the
// middle stages, repeat them).
bool same_floors(const analytic::ChunkWork& a, const analytic::ChunkWork& b) {
  return a.forward_s == b.forward_s && a.backward_input_s == b.backward_input_s &&
         a.backward_weight_s == b.backward_weight_s && a.recompute_s == b.recompute_s &&
         a.cp_forward_window_s == b.cp_forward_window_s &&
         a.cp_backward_window_s == b.cp_backward_window_s && a.tp_forward_s == b.tp_forward_s &&
         a.tp_backward_s == b.tp_backward_s && a.tp_serial_forward_s == b.tp_serial_forward_s &&
         a.tp_serial_backward_s == b.tp_serial_backward_s && a.cp_forward_s == b.cp_forward_s &&
         a.cp_backward_s == b.cp_backward_s && a.ep_forward_s == b.ep_forward_s &&
         a.ep_backward_s == b.ep_backward_s && a.zero3_units == b.zero3_units &&
         a.zero3_unit_params == b.zero3_unit_params && a.zero3_gather_s == b.zero3_gather_s;
}

}  // namespace

// step_lower_bound()'s chains with every pass bound replaced by pass_floor() (every term of a
// segment it leaves out only adds), and of the stream totals ZeRO-3's gathers and reduce-scatters.
// The sends, the fill's p2p, the links, contention and the other DP collectives are left out, and
// so is the drain of a schedule that splits W (its term subtracts W passes). The sums here are not
// the plan's sums in the plan's order, so the result is lowered by a relative margin far above
// their rounding (a few hundred additions of positive terms, ~1e-13).
WorkBound work_lower_bound(const analytic::Step& step) {
  constexpr double kMargin = 1 - 1e-9;
  WorkBound out;
  const analytic::StepWork& work = step.work;
  const analytic::PlanOptions& o = step.options;
  const auto p = static_cast<int>(work.stages.size());
  if (p == 0) return out;
  const int v = static_cast<int>(work.chunks.size()) / p;
  const bool split = core::schedule_rules(o.schedule).splits_weight_grad;
  const double m = o.microbatches;
  const bool zero3 = o.zero >= 3;
  // EP overlap's paired share on the stages that pair the most and the fewest passes (the last
  // rank runs the shortest warm-up, the first the longest)
  const double ep_hidden_last = analytic::ep_hidden_share(o, p, p - 1);
  const double ep_hidden_first = analytic::ep_hidden_share(o, p, 0);
  // a chunk's forward and backward floors; the backward includes W unless the schedule splits it;
  // and a unit's gathers per micro-batch (W gathers none)
  int unit_gathers = 0;
  auto floors = [&](const analytic::ChunkWork& c) {
    const std::array<analytic::PassMakeup, 3> mk = analytic::chunk_passes(c, o);
    unit_gathers = mk[0].zero3.gathers + mk[1].zero3.gathers;
    const auto floor = [&](const analytic::PassMakeup& pass) {
      return floor_of(pass, c, o, ep_hidden_last, ep_hidden_first);
    };
    return std::array<double, 3>{floor(mk[0]), floor(mk[1]), split ? floor(mk[2]) : 0.0};
  };
  const analytic::ChunkWork* last = nullptr;  // the chunk whose floors `fl` holds
  std::array<double, 3> fl{};
  double bound = 0, busiest = 0, fill = 0;
  double drain = 0;  // the floors of chunk 0's backward on the stages before j
  for (int j = 0; j < p; ++j) {
    double busy = 0, compute = 0, gathers = 0, reduces = 0;
    std::array<double, 3> first{};
    for (int k = 0; k < v; ++k) {
      const analytic::ChunkWork& c = work.chunks[static_cast<std::size_t>(k) * p + j];
      if (!last || !same_floors(c, *last)) fl = floors(c);
      last = &c;
      if (k == 0) first = fl;
      busy += fl[0] + fl[1] + fl[2];
      compute += c.forward_s + c.recompute_s + c.backward_input_s + c.backward_weight_s;
      if (zero3 && c.zero3_units > 0) {  // the dp_gather and dp streams' totals
        gathers += c.zero3_units * unit_gathers * c.zero3_gather_s;
        reduces += c.zero3_units * (c.zero3_reduce_s + c.zero3_replica_s);
      }
    }
    busiest = std::max(busiest, m * compute);
    const double own = fill + m * busy;
    // with CPU offload its CPU step and upload are serial before it (the gradients' copy may hide)
    const double optimizer = work.stages[j].optimizer_s + work.stages[j].offload_cpu_s + work.stages[j].offload_up_s;
    bound = std::max({bound, own + optimizer, m * gathers, m * reduces + optimizer});
    // the last backward down to stage 0, then its optimizer
    if (j > 0 && !split)
      bound = std::max(bound, own + drain + work.stages[0].optimizer_s + work.stages[0].offload_cpu_s +
                                  work.stages[0].offload_up_s);
    fill += first[0];
    drain += first[1];
  }
  out.bound_s = bound * kMargin;
  out.busiest_s = busiest * kMargin;
  return out;
}

}  // namespace ptdsim::planner
