#include "ptdsim/sim/schedule.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace ptdsim::sim {

std::vector<RankRef> representative_ranks(int pp) {
  std::vector<RankRef> r(static_cast<std::size_t>(pp));
  for (int i = 0; i < pp; ++i) r[i].stage = i;
  return r;
}

namespace {

using analytic::Overlap;
using analytic::PlanComm;
using core::Pass;

TaskKind task_kind(analytic::CommTask t) {
  switch (t) {
    case analytic::CommTask::tp: return TaskKind::tp;
    case analytic::CommTask::cp: return TaskKind::cp;
    case analytic::CommTask::ep: return TaskKind::ep;
    case analytic::CommTask::p2p: return TaskKind::p2p;
    case analytic::CommTask::dp_reduce: return TaskKind::dp_reduce;
    case analytic::CommTask::dp_gather: return TaskKind::dp_gather;
    case analytic::CommTask::zero3_gather: return TaskKind::zero3_gather;
    case analytic::CommTask::zero3_reduce: return TaskKind::zero3_reduce;
  }
  return TaskKind::tp;
}

// A few task ids: the tasks whose end means a pass is done, or that need its input.
struct Ids {
  std::array<TaskId, 8> id{};
  int n = 0;
  void add(TaskId t) {
    if (n == 8) throw std::logic_error("sim::build_step: too many end tasks in one pass");
    id[n++] = t;
  }
  void clear() { n = 0; }
};

class Builder {
 public:
  Builder(const analytic::StepPlan& plan, std::vector<RankRef> ranks) : plan_(plan) {
    g_.ranks = std::move(ranks);
    p_ = plan.shape.p;
    v_ = std::max(1, plan.shape.v);
    m_ = std::max(1, plan.shape.m);
    g_.microbatches = m_;
    g_.vpp = v_;
    if (p_ < 1 || static_cast<int>(plan.stages.size()) != p_)
      throw std::invalid_argument("sim::build_step: the plan's stages do not match its pipeline");
    if (g_.ranks.empty()) g_.ranks = representative_ranks(p_);
    replicas_ = 0;
    for (const auto& r : g_.ranks) {
      if (r.stage < 0 || r.stage >= p_ || r.replica < 0)
        throw std::invalid_argument("sim::build_step: rank outside the pipeline");
      replicas_ = std::max(replicas_, r.replica + 1);
    }
    g_.engine = Engine(static_cast<int>(g_.ranks.size()));
    g_.engine.set_comm_share(plan.comm_share);
  }

  StepGraph build() {
    const std::size_t R = g_.ranks.size();
    const std::size_t slots = static_cast<std::size_t>(replicas_) * p_ * v_ * m_;
    fwd_in_.assign(slots, {});
    fwd_out_.assign(slots, {});
    bwd_in_.assign(slots, {});
    bwd_out_.assign(slots, {});
    present_.assign(slots, 0);
    g_.engine.reserve(R * static_cast<std::size_t>(m_ * v_) * 7 + 64 * R,
                      R * static_cast<std::size_t>(m_ * v_) * 10 + 64 * R);
    for (std::size_t r = 0; r < R; ++r) {
      g_.engine.add_link(1.0);  // 2r: NVLink inside the node
      g_.engine.add_link(1.0);  // 2r+1: the NIC share across nodes
    }
    g_.activations.resize(R);
    g_.last_pipeline_task.assign(R, -1);
    g_.optimizer_task.assign(R, -1);
    for (std::size_t r = 0; r < R; ++r) build_rank(static_cast<int>(r));
    connect_stages();
    return std::move(g_);
  }

 private:
  std::size_t slot(int replica, int vstage, int mb) const {
    return (static_cast<std::size_t>(replica) * p_ * v_ + vstage) * m_ + mb;
  }
  int link_of(int rank, analytic::GroupId grp) const {
    return 2 * rank + (plan_.group(grp).scope == core::Scope::inter ? 1 : 0);
  }

  // Every pass of a (chunk, pass kind) but the last gradient pass adds the same tasks in the same
  // order, micro-batch apart: the first instance adds their descriptions, the others reuse them.
  // A task that differs from the description at its place (other than in its micro-batch) gets
  // its own, so the reuse can save memory but never change a task.
  TaskId add_task(const TaskSpec& t) {
    if (!reuse_) return g_.engine.add(t);
    if (reuse_pos_ == reuse_->size()) reuse_->push_back(g_.engine.add_spec(t));
    const std::int32_t d = (*reuse_)[reuse_pos_++];
    if (!same_but_microbatch(g_.engine.description(d), t)) return g_.engine.add(t);
    return g_.engine.add(d, t.microbatch);
  }
  static_assert(sizeof(TaskSpec) == 80, "a field was added to TaskSpec: compare it in same_but_microbatch");
  static bool same_but_microbatch(const TaskSpec& a, const TaskSpec& b) {
    return a.kind == b.kind && a.stream == b.stream && a.rank == b.rank && a.duration_s == b.duration_s &&
           a.work == b.work && a.link == b.link && a.bytes == b.bytes && a.flops == b.flops &&
           a.chunk == b.chunk && a.layer_first == b.layer_first && a.layer_count == b.layer_count &&
           a.folded_tp_s == b.folded_tp_s && a.folded_tp_bytes == b.folded_tp_bytes;
  }
  // The descriptions of the pass `op` runs (none for the step's once-only tasks).
  void reuse_for(const core::PassRef* op, bool last_grad) {
    reuse_pos_ = 0;
    reuse_ = op ? &reuse_lists_[(static_cast<std::size_t>(op->chunk) * 3 + static_cast<int>(op->pass)) * 2 + last_grad]
                : nullptr;
  }

  TaskId add_compute(int rank, TaskKind kind, double seconds, const core::PassRef* op, int layer_first,
                     int layer_count, double flops, double folded_tp_s = 0, double folded_tp_bytes = 0) {
    TaskSpec t;
    t.folded_tp_s = folded_tp_s;
    t.folded_tp_bytes = folded_tp_bytes;
    t.kind = kind;
    t.stream = StreamKind::compute;
    t.rank = rank;
    t.duration_s = seconds;
    t.flops = flops;
    if (op) {
      t.microbatch = op->microbatch;
      t.chunk = op->chunk;
    }
    t.layer_first = layer_first;
    t.layer_count = layer_count;
    return add_task(t);
  }
  TaskId add_comm(int rank, const PlanComm& c, const core::PassRef* op, int layer_first, int layer_count) {
    TaskSpec t;
    t.kind = task_kind(c.task);
    t.stream = c.stream;
    t.rank = rank;
    t.work = c.time_s;
    t.link = link_of(rank, c.group);
    t.bytes = c.sent_bytes;
    if (op) {
      t.microbatch = op->microbatch;
      t.chunk = op->chunk;
    }
    t.layer_first = layer_first;
    t.layer_count = layer_count;
    return add_task(t);
  }

  void depend_all(const Ids& from, TaskId to) {
    for (int i = 0; i < from.n; ++i) g_.engine.depend(from.id[i], to);
  }

  // Serial TP folds into the compute task when no other traffic of the stage uses its link.
  bool folds_tp(const analytic::StagePlan& st) const {
    const auto tp_scope = plan_.group(analytic::GroupId::tp).scope;
    bool tp = false;
    for (int j = st.comm_begin; j < st.comm_end; ++j) {
      const PlanComm& c = plan_.comms[j];
      if (c.task == analytic::CommTask::tp) {
        if (c.overlap != Overlap::serial) return false;
        tp = true;
      } else if (c.time_s > 0 && plan_.group(c.group).scope == tp_scope) {
        return false;
      }
    }
    return tp;
  }

  void build_rank(int r) {
    const RankRef ref = g_.ranks[r];
    const analytic::StagePlan& st = plan_.stages[ref.stage];
    const bool split = plan_.schedule->splits_weight_grad;
    plan_.schedule->order(plan_.shape, ref.stage, ops_);
    const bool fold_tp = folds_tp(st);
    reuse_lists_.assign(static_cast<std::size_t>(v_) * 3 * 2, {});
    reuse_for(nullptr, false);

    Ids prev_end;  // the previous pass's end tasks (other than the compute stream order)
    TaskId prev_compute = -1;
    std::vector<TaskId> dp_tail;           // reductions the optimizer waits for
    std::vector<TaskId>& recent = recent_;  // this rank's compute segments so far (prefetch gates)
    recent.clear();
    Ids start;                             // issued at the step's start; the second pass waits
    for (int j = st.start_begin; j < st.start_end; ++j) start.add(add_comm(r, plan_.comms[j], nullptr, -1, 0));
    std::vector<std::pair<TaskId, TaskId>> fwd_span(static_cast<std::size_t>(v_ * m_), {-1, -1});

    for (std::size_t k = 0; k < ops_.size(); ++k) {
      const core::PassRef& op = ops_[k];
      const int vs = op.chunk * p_ + ref.stage;  // virtual stage
      const analytic::ChunkPlan& ch = plan_.chunk(st, op.chunk);
      const analytic::PassPlan& pass = plan_.pass_of(st, op);
      reuse_for(&op, &pass == &ch.last_grad);
      const TaskKind kind = op.pass == Pass::F   ? TaskKind::forward
                            : op.pass == Pass::W ? TaskKind::backward_weight
                            : split              ? TaskKind::backward_input
                                                 : TaskKind::backward;
      int nseg = 0;
      for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) nseg += plan_.segments[i].repeat;

      if (k == 1)
        for (int i = 0; i < start.n; ++i) prev_end.add(start.id[i]);
      Ids entry, seg_end = prev_end;
      TaskId first = -1, last = -1;
      int j = 0;  // segment index within the pass, repeats expanded
      for (int si = pass.seg_begin; si < pass.seg_begin + pass.seg_count; ++si) {
        const analytic::Segment& seg = plan_.segments[si];
        const PlanComm* comms = plan_.comms.data() + seg.comm_begin;
        double serial_tp_s = 0, serial_tp_bytes = 0, window = 0;
        for (int q = 0; q < seg.comm_count; ++q) {
          if (comms[q].task == analytic::CommTask::tp && comms[q].overlap == Overlap::serial) {
            serial_tp_s += comms[q].time_s;
            serial_tp_bytes += comms[q].sent_bytes;
          }
          if (comms[q].overlap == Overlap::window) window = comms[q].window_s;
        }
        const bool fold = fold_tp && serial_tp_s > 0;
        for (int rep = 0; rep < seg.repeat; ++rep, ++j) {
          const int l0 = ch.layer_first + (j * ch.layers) / nseg;
          const int l1 = ch.layer_first + ((j + 1) * ch.layers) / nseg;
          Ids deps = seg_end;
          for (int q = 0; q < seg.comm_count; ++q) {
            if (comms[q].overlap != Overlap::prefetch) continue;
            const TaskId g = add_comm(r, comms[q], &op, l0, l1 - l0);
            // issued once the compute depth+1 segments back is done (its buffer is free): depth
            // gathers run ahead of the compute
            const std::size_t back = static_cast<std::size_t>(std::max(0, comms[q].depth)) + 1;
            if (recent.size() >= back) g_.engine.depend(recent[recent.size() - back], g);
            deps.add(g);
          }
          // A window collective runs beside the last `window` seconds of the compute: the rest of
          // the segment runs first, as a task of its own.
          TaskId before = -1;
          if (window > 0 && seg.compute_s > window) {
            before = add_compute(r, kind, seg.compute_s - window, &op, l0, l1 - l0,
                                 seg.flops * (1 - window / seg.compute_s));
            for (int i = 0; i < deps.n; ++i)
              if (deps.id[i] != prev_compute) g_.engine.depend(deps.id[i], before);
          }
          const double own_s = before >= 0 ? window : seg.compute_s;
          const double own_flops = before >= 0 ? seg.flops * window / seg.compute_s : seg.flops;
          const TaskId c = add_compute(r, kind, own_s + (fold ? serial_tp_s : 0), &op, l0, l1 - l0, own_flops,
                                       fold ? serial_tp_s : 0, fold ? serial_tp_bytes : 0);
          const TaskId head = before >= 0 ? before : c;
          if (before < 0)
            for (int i = 0; i < deps.n; ++i)
              if (deps.id[i] != prev_compute) g_.engine.depend(deps.id[i], c);
          if (j == 0) entry.add(head);
          if (first < 0) first = head;
          seg_end.clear();
          seg_end.add(c);
          TaskId chain = c;
          for (int q = 0; q < seg.comm_count; ++q) {
            const PlanComm& x = comms[q];
            if (x.overlap == Overlap::prefetch) continue;
            if (x.overlap == Overlap::after) {
              const TaskId a = add_comm(r, x, &op, l0, l1 - l0);
              g_.engine.depend(c, a);
              dp_tail.push_back(a);
              continue;
            }
            if (fold && x.task == analytic::CommTask::tp && x.overlap == Overlap::serial) continue;
            const TaskId t = add_comm(r, x, &op, l0, l1 - l0);
            if (x.overlap == Overlap::window && before >= 0) {
              g_.engine.depend(before, t);  // starts with the last `window` of the compute
              seg_end.add(t);
            } else if (x.overlap == Overlap::window || x.overlap == Overlap::beside) {
              for (int i = 0; i < deps.n; ++i) g_.engine.depend(deps.id[i], t);
              if (j == 0) entry.add(t);
              seg_end.add(t);
            } else {
              g_.engine.depend(chain, t);
              chain = t;
              seg_end.id[0] = t;  // the serial chain ends here
            }
          }
          recent.push_back(c);
          prev_compute = c;
          last = c;
        }
      }
      prev_end = seg_end;

      // p2p to the neighbour virtual stage
      const std::size_t sl = slot(ref.replica, vs, op.microbatch);
      present_[sl] = 1;
      const bool sends_fwd = op.pass == Pass::F && vs < p_ * v_ - 1;
      const bool sends_bwd = op.pass == Pass::B && vs > 0;
      if (op.pass == Pass::F) {
        fwd_in_[sl] = entry;
        fwd_span[op.chunk * m_ + op.microbatch] = {first, last};
      } else if (op.pass == Pass::B) {
        bwd_in_[sl] = entry;
      }
      if (op.pass == Pass::W || (op.pass == Pass::B && !split)) {
        const auto& fs = fwd_span[op.chunk * m_ + op.microbatch];
        g_.activations[r].push_back({fs.first, last});
      }
      if (sends_fwd || sends_bwd) {
        Ids& out = sends_fwd ? fwd_out_[sl] : bwd_out_[sl];
        const int send = sends_fwd ? ch.send_forward : ch.send_backward;
        if (send >= 0) {
          const TaskId x = add_comm(r, plan_.comms[send], &op, -1, 0);
          depend_all(seg_end, x);
          out.clear();
          out.add(x);
          if (!plan_.overlap_pp) prev_end.add(x);
        } else {
          out = seg_end;
        }
      }
    }
    g_.last_pipeline_task[r] = prev_compute;
    reuse_for(nullptr, false);

    for (int j = st.end_begin; j < st.end_end; ++j) {
      const TaskId x = add_comm(r, plan_.comms[j], nullptr, -1, 0);
      depend_all(prev_end, x);
      if (prev_compute >= 0) g_.engine.depend(prev_compute, x);
      dp_tail.push_back(x);
    }
    const TaskId opt = add_compute(r, TaskKind::optimizer, st.optimizer_s, nullptr, -1, 0, 0);
    for (int i = 0; i < prev_end.n; ++i)
      if (prev_end.id[i] != prev_compute) g_.engine.depend(prev_end.id[i], opt);
    // the dp stream runs in order: its last reduction ends after all the others
    if (!dp_tail.empty()) g_.engine.depend(dp_tail.back(), opt);
    g_.optimizer_task[r] = opt;
    for (int j = st.post_begin; j < st.post_end; ++j)
      g_.engine.depend(opt, add_comm(r, plan_.comms[j], nullptr, -1, 0));
  }

  // Each pass of virtual stage vs waits for its input from vs-1 (forward) or vs+1 (backward),
  // when that neighbour is among the simulated ranks.
  void connect_stages() {
    const int V = p_ * v_;
    for (int rep = 0; rep < replicas_; ++rep)
      for (int vs = 0; vs < V; ++vs)
        for (int mb = 0; mb < m_; ++mb) {
          const std::size_t here = slot(rep, vs, mb);
          if (!present_[here]) continue;
          if (vs > 0 && present_[slot(rep, vs - 1, mb)]) {
            const Ids& from = fwd_out_[slot(rep, vs - 1, mb)];
            for (int i = 0; i < fwd_in_[here].n; ++i) depend_all(from, fwd_in_[here].id[i]);
          }
          if (vs < V - 1 && present_[slot(rep, vs + 1, mb)]) {
            const Ids& from = bwd_out_[slot(rep, vs + 1, mb)];
            for (int i = 0; i < bwd_in_[here].n; ++i) depend_all(from, bwd_in_[here].id[i]);
          }
        }
  }

  const analytic::StepPlan& plan_;
  StepGraph g_;
  int p_ = 1, v_ = 1, m_ = 1, replicas_ = 1;
  std::vector<core::PassRef> ops_;
  std::vector<TaskId> recent_;
  std::vector<std::vector<std::int32_t>> reuse_lists_;  // per (chunk, pass, last gradient pass)
  std::vector<std::int32_t>* reuse_ = nullptr;
  std::size_t reuse_pos_ = 0;
  std::vector<Ids> fwd_in_, fwd_out_, bwd_in_, bwd_out_;
  std::vector<std::uint8_t> present_;
};

}  // namespace

StepGraph build_step(const analytic::StepPlan& plan, std::vector<RankRef> ranks) {
  return Builder(plan, std::move(ranks)).build();
}

}  // namespace ptdsim::sim
