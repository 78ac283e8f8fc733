#include "ptdsim/analytic/evaluate.hpp"

#include <algorithm>

#include "fold.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/analytic/step.hpp"

namespace ptdsim::analytic {

namespace {

constexpr int k_of(core::CommBucket k) { return static_cast<int>(k); }

// The closed form is already a sum of parts that do not overlap: the slowest stage's compute (stage
// `slowest`), its bubble (fill and drain), the exposed communication, the optimizer step.
void critical_path(StepTiming& t, int slowest) {
  using core::CommBucket;
  using core::PathCause;
  t.critical_path.reserve(9);  // one allocation: the sweep evaluates every candidate
  auto part = [&](PathCause c, double s, int stage = -1) {
    if (s > 0) t.critical_path.push_back(core::PathPart{c, stage, s});
  };
  part(PathCause::compute, t.compute_s, slowest);
  part(PathCause::fill_drain, t.bubble_s);
  part(PathCause::tp, t.exposed_s[k_of(CommBucket::tp)]);
  part(PathCause::cp, t.exposed_s[k_of(CommBucket::cp)]);
  part(PathCause::ep, t.exposed_s[k_of(CommBucket::ep)]);
  part(PathCause::pp, t.exposed_s[k_of(CommBucket::pp)]);
  part(PathCause::dp_reduce, t.exposed_s[k_of(CommBucket::dp)]);
  part(PathCause::optimizer, t.optimizer_s);
  part(PathCause::offload, t.offload_s);
}

// What dominates the step (t.step_s > 0).
void bounded_by(StepTiming& t, int slowest) {
  using core::CommBucket;
  std::vector<core::BoundPart> parts;
  parts.reserve(8);
  auto part = [&](core::BoundKind kind, double seconds, int stage = core::BoundPart::kAllStages,
                  core::CommKind comm = core::CommKind::tp) {
    core::BoundPart b;
    b.kind = kind;
    b.comm = comm;
    b.stage = stage;
    b.share = seconds / t.step_s;
    parts.push_back(b);
  };
  auto comm_part = [&](core::CommKind k) {
    part(core::BoundKind::comm, t.exposed_s[k_of(core::bucket(k))], core::BoundPart::kAllStages, k);
  };
  part(core::BoundKind::compute, t.compute_s, slowest);
  part(core::BoundKind::bubble, t.bubble_s);
  comm_part(core::CommKind::tp);
  comm_part(core::CommKind::cp);
  comm_part(core::CommKind::ep);
  comm_part(core::CommKind::p2p);
  part(core::BoundKind::dp, t.exposed_s[k_of(CommBucket::dp)]);
  part(core::BoundKind::optimizer, t.optimizer_s);
  if (t.offload_s > 0) part(core::BoundKind::offload, t.offload_s);
  t.bounded_by = core::largest_parts(std::move(parts));
}

}  // namespace

namespace detail {

StepTiming fold_timing(const StepPlan& plan, const Folds& folds,
                       const std::array<core::CommStats, core::kCommBucketCount>& comm) {
  using core::CommBucket;
  const StageFold& c = folds.slowest_fold();
  const double m = plan.shape.m, p = plan.shape.p, v = plan.shape.v;

  // The slowest stage's compute, m times, plus its pipeline bubble: the schedule's closed form in
  // units of that stage's micro-batch (formulas.md "Pipeline schedules"; Narayanan et al. 2021
  // section 2.2; Qi et al. 2023).
  StepTiming t;
  t.engine = core::EngineKind::analytic;
  const double compute = c.f + c.b + c.w;
  t.compute_s = m * compute;
  t.bubble_s = plan.schedule->bubble_s(plan.shape, c.f, c.b, c.w);
  const double slots = m + (compute > 0 ? t.bubble_s / compute : 0.0);

  // In-pass communication that cannot hide, in every slot of the pipeline (micro-batches and bubble)
  for (CommBucket k : {CommBucket::tp, CommBucket::cp, CommBucket::ep})
    t.exposed_s[k_of(k)] = slots * c.per_mb.exposed[k_of(k)];
  // PP: when overlapped only the fill and drain hops (2(p-1)) stay on the critical path
  if (p > 1)
    t.exposed_s[k_of(CommBucket::pp)] =
        plan.overlap_pp ? 2 * (p - 1) * c.p2p_s : 2 * (m * v + p - 1) * c.p2p_s;
  // DP: every stage reduces its gradients at the end of the step, in parallel; the step waits for
  // the slowest. ZeRO-3's per-unit collectives add what each micro-batch cannot hide, and the
  // step's first gather and last reduce-scatter, which nothing hides.
  double dp_step = 0, dp_units = 0;
  for (const auto& f : folds.distinct) {  // (a stage that repeats another has its numbers)
    dp_step = std::max(dp_step, f.dp_step_exposed);
    dp_units = std::max(dp_units, m * f.per_mb.exposed[k_of(CommBucket::dp)] + f.zero3_edges_s);
  }
  t.exposed_s[k_of(CommBucket::dp)] = dp_step + dp_units;
  for (const auto& st : plan.stages) t.optimizer_s = std::max(t.optimizer_s, st.optimizer_s);
  // CPU offload's serial phase before it (every stage's in parallel, the step waits for the longest)
  for (const auto& st : plan.stages) t.offload_s = std::max(t.offload_s, st.offload_s);

  // Collectives hidden behind compute still hold SMs (one thread block per NCCL channel): the
  // compute beside them runs at 1 - share of its speed, so it takes share x the hidden time
  // longer. Pipeline sends hold one or two SMs and are left out, as in the scheduler.
  double hidden = 0;
  for (int k = 0; k < core::kCommBucketCount; ++k)
    if (k != k_of(CommBucket::pp)) hidden += std::max(0.0, comm[k].time_s - t.exposed_s[k]);
  t.contention_s = plan.comm_share * std::min(hidden, t.compute_s);
  t.compute_s += t.contention_s;

  double exposed_total = 0;
  for (double e : t.exposed_s) exposed_total += e;
  t.step_s = t.compute_s + t.bubble_s + exposed_total + t.optimizer_s;
  if (t.offload_s > 0) t.step_s += t.offload_s;  // (no term at all without offload: the sum stays bit for bit)
  critical_path(t, folds.slowest);
  if (t.step_s > 0) bounded_by(t, folds.slowest);
  return t;
}

}  // namespace detail

StepTiming analytic_timing(const StepPlan& plan) {
  const auto folds = detail::fold_stages(plan);
  return detail::fold_timing(plan, folds, detail::comm_stats(plan, folds));
}

core::Report evaluate(const Step& step) {
  thread_local detail::Folds folds;  // (kept storage: no allocation per call once it has grown)
  detail::fold_stages(step.plan, folds);
  const auto comm = detail::comm_stats(step.plan, folds);
  return detail::assemble(step, folds, comm, detail::fold_timing(step.plan, folds, comm));
}

core::Report evaluate(const core::Scenario& s) {
  // into the storage this thread's previous evaluation left (cleared, not freed: no allocation per
  // call once it has grown; nothing of the previous call is read)
  thread_local Step step;
  make_step(s, step);
  return evaluate(step);
}

}  // namespace ptdsim::analytic
