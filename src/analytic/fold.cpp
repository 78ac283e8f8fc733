#include "fold.hpp"

#include <algorithm>


namespace ptdsim::analytic::detail {
namespace {

constexpr int kTp = static_cast<int>(core::CommBucket::tp);
constexpr int kCp = static_cast<int>(core::CommBucket::cp);
constexpr int kEp = static_cast<int>(core::CommBucket::ep);
constexpr int kPp = static_cast<int>(core::CommBucket::pp);
constexpr int kDp = static_cast<int>(core::CommBucket::dp);

double exposed(const PlanComm& c, double after_same_group) {
  switch (c.overlap) {
    case Overlap::serial: return c.time_s;
    case Overlap::beside:
    case Overlap::window: return std::max(0.0, c.time_s - c.window_s);
    case Overlap::prefetch: return std::max(0.0, c.time_s + after_same_group - c.window_s);
    case Overlap::after: return 0;
  }
  return c.time_s;
}

void fold_pass(const StepPlan& plan, const PassPlan& pass, PassSums& out) {
  for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) {
    const Segment& seg = plan.segments[i];
    const double n = seg.repeat;
    out.compute += n * seg.compute_s;
    std::array<double, kGroupCount> after{};
    for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
      if (plan.comms[j].overlap == Overlap::after) after[static_cast<int>(plan.comms[j].group)] += plan.comms[j].time_s;
    for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j) {
      const PlanComm& c = plan.comms[j];
      const int k = static_cast<int>(core::bucket(c.kind));
      out.time[k] += n * c.time_s;
      out.window[k] += n * c.window_s;
      out.sent[k] += n * c.sent_bytes;
      out.exposed[k] += n * exposed(c, after[static_cast<int>(c.group)]);
    }
  }
}

bool same(const PassPlan& a, const PassPlan& b) { return a.seg_begin == b.seg_begin && a.seg_count == b.seg_count; }

// ZeRO-3's collectives of one segment: its gather (time, window, group) and the reduce traffic
// after it, all of it and the part on the gather's group (which the prefetch rule charges to it).
struct UnitComms {
  double gather = 0, window = 0, after = 0, after_same = 0, reduce = 0;
  int depth = 0;
};
UnitComms unit_comms(const StepPlan& plan, const PassPlan& pass) {
  UnitComms u;
  if (pass.seg_count == 0) return u;
  const Segment& seg = plan.segments[pass.seg_begin];
  const PlanComm* gather = nullptr;
  for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
    if (plan.comms[j].kind == core::CommKind::zero3_gather) gather = &plan.comms[j];
  if (gather) {
    u.gather = gather->time_s;
    u.window = gather->window_s;
    u.depth = gather->depth;
  }
  for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j) {
    const PlanComm& c = plan.comms[j];
    if (c.kind != core::CommKind::zero3_reduce) continue;
    u.reduce += c.time_s;
    if (c.overlap != Overlap::after) continue;
    u.after += c.time_s;
    if (gather && c.group == gather->group) u.after_same += c.time_s;
  }
  return u;
}

// One unit's collectives against its compute (the overlap ratios), and the step's edges. The
// per-segment rule charges a gradient segment's reduce-scatter to its own gather, as if it came
// before it; in the schedule it delays the next segment's gather instead. Over a step the two
// agree but at the ends: the step's first gather waits for no compute (the rule hid min(g, window)
// of it), the first gradient segment has no reduce-scatter before it (the rule charged it one),
// and the last reduce-scatter runs alone before the optimizer.
void zero3_unit(const StepPlan& plan, const ChunkPlan& ch, int grad, StageFold& out) {
  const UnitComms f = unit_comms(plan, ch.pass[0]);
  const UnitComms b = unit_comms(plan, ch.pass[1]);
  const UnitComms g = unit_comms(plan, ch.pass[grad]);
  if (f.gather <= 0 && g.reduce <= 0) return;
  out.unit_gather_s = f.gather;
  out.unit_forward_s = ch.pass[0].seg_count > 0 ? plan.segments[ch.pass[0].seg_begin].compute_s : 0.0;
  out.unit_backward_comm_s = b.gather + g.reduce;
  out.unit_forward_ahead = f.depth > 0;
  out.unit_backward_ahead = b.gather <= 0 || b.depth > 0;
  if (ch.pass[1].seg_count > 0) out.unit_backward_s = plan.segments[ch.pass[1].seg_begin].compute_s;
  if (grad != 1 && ch.pass[grad].seg_count > 0) out.unit_backward_s += plan.segments[ch.pass[grad].seg_begin].compute_s;
  const double first = std::min(f.gather, f.window);
  const double charged = std::max(0.0, g.gather + g.after_same - g.window) - std::max(0.0, g.gather - g.window);
  out.zero3_edges_s = std::max(0.0, first + g.after - charged);
}

}  // namespace

double ratio(double comm, double compute) { return compute > 0 ? comm / compute : (comm > 0 ? 1e9 : 0.0); }

double StageFold::busy() const { return f + b + w + per_mb.exposed[kTp] + per_mb.exposed[kCp] + per_mb.exposed[kEp]; }

void fold_stage(const StepPlan& plan, const StagePlan& st, StageFold& out) {
  const int grad = plan.schedule->splits_weight_grad ? 2 : 1;
  double bucket_time = 0, bucket_sent = 0, last_grad_compute = 0;
  for (int c = 0; c < plan.shape.v; ++c) {
    const ChunkPlan& ch = plan.chunk(st, c);
    out.f += ch.pass[0].compute_s;
    out.b += ch.pass[1].compute_s;
    out.w += ch.pass[2].compute_s;
    for (const auto& pass : ch.pass) fold_pass(plan, pass, out.per_mb);
    last_grad_compute += ch.last_grad.compute_s;
    if (!same(ch.last_grad, ch.pass[grad])) {
      // the last micro-batch's gradient pass: its DP buckets hide behind the rest of that pass
      for (int i = ch.last_grad.seg_begin; i < ch.last_grad.seg_begin + ch.last_grad.seg_count; ++i) {
        const Segment& seg = plan.segments[i];
        for (int j = seg.comm_begin; j < seg.comm_begin + seg.comm_count; ++j)
          if (plan.comms[j].kind == core::CommKind::dp_reduce) {
            bucket_time += seg.repeat * plan.comms[j].time_s;
            bucket_sent += seg.repeat * plan.comms[j].sent_bytes;
          }
      }
    }
    const int send = ch.send_forward >= 0 ? ch.send_forward : ch.send_backward;
    if (send >= 0 && out.p2p_s == 0) {
      out.p2p_s = plan.comms[send].time_s;
      out.p2p_sent = plan.comms[send].sent_bytes;
      out.p2p_window = plan.comms[send].window_s;
    }
    if (c == 0) zero3_unit(plan, ch, grad, out);
  }
  if (bucket_time > 0) {
    out.dp_step_time += bucket_time;
    out.dp_step_sent += bucket_sent;
    out.dp_step_exposed += std::max(0.0, bucket_time - last_grad_compute);
    out.dp_step_window += last_grad_compute;
  }
  // issued at the step's start, hidden behind the first forward (window); after the last pass or
  // after the optimizer, exposed whole
  for (int j = st.start_begin; j < st.start_end; ++j) {
    const PlanComm& c = plan.comms[j];
    out.dp_step_time += c.time_s;
    out.dp_step_sent += c.sent_bytes;
    out.dp_step_exposed += std::max(0.0, c.time_s - c.window_s);
    out.dp_step_window += c.window_s;
  }
  for (int j = st.end_begin; j < st.post_end; ++j) {
    const PlanComm& c = plan.comms[j];
    out.dp_step_time += c.time_s;
    out.dp_step_sent += c.sent_bytes;
    out.dp_step_exposed += c.time_s;
    out.dp_step_window += c.window_s;
  }
}

Folds fold_stages(const StepPlan& plan) {
  Folds out;
  fold_stages(plan, out);
  return out;
}

void fold_stages(const StepPlan& plan, Folds& out) {
  out.distinct.clear();
  out.of.clear();
  out.slowest = out.dp = 0;
  out.of.reserve(plan.stages.size());
  std::size_t distinct = 0;
  for (const auto& st : plan.stages) distinct += st.repeats < 0;
  out.distinct.reserve(distinct);
  for (const auto& st : plan.stages) {  // a stage that repeats another folds to the same numbers
    if (st.repeats >= 0) {
      out.of.push_back(out.of[st.repeats]);
      continue;
    }
    out.of.push_back(static_cast<int>(out.distinct.size()));
    fold_stage(plan, st, out.distinct.emplace_back());  // (in place: a fold returned and copied stalled the copy)
  }
  // a repeating stage equals an earlier one, so it is never the first of the largest: only the
  // distinct folds are compared, each as the first stage that has it
  double busiest = 0, most_dp = 0;
  for (std::size_t i = 0, next = 0; i < out.of.size(); ++i) {
    if (out.of[i] != static_cast<int>(next)) continue;  // not the first stage of its fold
    const StageFold& f = out.distinct[next++];
    if (i == 0 || f.busy() > busiest) busiest = f.busy(), out.slowest = static_cast<int>(i);
    if (i == 0 || f.dp_step_time > most_dp) most_dp = f.dp_step_time, out.dp = static_cast<int>(i);
  }
}

std::array<core::CommStats, core::kCommBucketCount> comm_stats(const StepPlan& plan, const Folds& folds) {
  std::array<core::CommStats, core::kCommBucketCount> out{};
  const StageFold& c = folds.slowest_fold();
  const double m = plan.shape.m, v = plan.shape.v;
  auto inter = [&](GroupId g) { return plan.group(g).scope == core::Scope::inter; };
  for (int k : {kTp, kCp, kEp}) {
    out[k].bytes = m * c.per_mb.sent[k];
    out[k].time_s = m * c.per_mb.time[k];
    out[k].overlap_ratio = ratio(c.per_mb.time[k], c.per_mb.window[k]);
  }
  out[kTp].overlappable = plan.overlap_tp;
  out[kTp].crosses_nodes = inter(GroupId::tp);
  // CP overlaps where its method runs beside kernels (a window); a2a's all-to-alls and an exchange
  // under training.overlap.cp false have none
  out[kCp].overlappable = c.per_mb.window[kCp] > 0;
  out[kCp].crosses_nodes = inter(GroupId::cp);
  out[kEp].overlappable = false;
  out[kEp].crosses_nodes = inter(GroupId::ep);

  // PP: activations forward and gradients backward, v times per micro-batch with interleaving, but
  // the first virtual stage sends no gradient back and the last no activation forward: a GPU of the
  // first or last stage sends 2v - 1 a micro-batch, one in between 2v. The busiest GPU's (as for
  // the other kinds); the ends' is Report::pp_end_bytes.
  if (plan.shape.p > 1) {
    const double transfers = m * (plan.shape.p > 2 ? 2 * v : 2 * v - 1);
    out[kPp].bytes = transfers * c.p2p_sent;
    out[kPp].time_s = transfers * c.p2p_s;
    out[kPp].overlap_ratio = ratio(c.p2p_s, c.p2p_window);
    out[kPp].overlappable = plan.overlap_pp;
    out[kPp].crosses_nodes = inter(GroupId::pp);
  }

  // DP: the stage whose data-parallel traffic is largest (the first: it holds the embedding)
  const StageFold* d = &folds.dp_fold();
  out[kDp].bytes = d->dp_step_sent + m * d->per_mb.sent[kDp];
  out[kDp].time_s = d->dp_step_time + m * d->per_mb.time[kDp];
  out[kDp].overlap_ratio = ratio(d->dp_step_time, d->dp_step_window);
  // under ZeRO-3 the units' collectives are the data-parallel traffic: the larger of their ratios
  if (d->unit_gather_s > 0 || d->unit_backward_comm_s > 0)
    out[kDp].overlap_ratio = std::max(ratio(d->unit_gather_s, d->unit_forward_s),
                                      ratio(d->unit_backward_comm_s, d->unit_backward_s));
  out[kDp].overlappable = plan.overlap_dp;
  out[kDp].crosses_nodes = inter(GroupId::dp);
  (void)kPp;
  return out;
}

}  // namespace ptdsim::analytic::detail
