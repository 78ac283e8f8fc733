#include "ptdsim/sim/step_graph.hpp"

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

// A few tasks: those whose end means a pass is done, or that need its input.
template <class T>
struct Few {
  std::array<T, 8> id{};
  int n = 0;
  void add(T t) {
    if (n == 8) throw std::logic_error("sim::build_step: too many end tasks in one pass");
    id[n++] = t;
  }
  void clear() { n = 0; }
};
using Ids = Few<TaskId>;

// One per thread (build_step): its arrays are kept from build to build, cleared, not freed, as the
// graph's are; nothing of an earlier build is read.
class Builder {
 public:
  void build(const analytic::StepPlan& plan, std::vector<RankRef> ranks, StepGraph& out) {
    plan_ = &plan;
    g_ = &out;
    g_->ranks = std::move(ranks);
    p_ = plan.shape.p;
    v_ = std::max(1, plan.shape.v);
    m_ = std::max(1, plan.shape.m);
    g_->microbatches = m_;
    g_->vpp = v_;
    if (p_ < 1 || static_cast<int>(plan.stages.size()) != p_)
      throw std::invalid_argument("sim::build_step: the plan's stages do not match its pipeline");
    if (g_->ranks.empty()) g_->ranks = representative_ranks(p_);
    replicas_ = 0;
    for (const auto& r : g_->ranks) {
      if (r.stage < 0 || r.stage >= p_ || r.replica < 0)
        throw std::invalid_argument("sim::build_step: rank outside the pipeline");
      replicas_ = std::max(replicas_, r.replica + 1);
    }
    g_->engine.reset(static_cast<int>(g_->ranks.size()));
    g_->engine.set_comm_share(plan.comm_share);
    const std::size_t R = g_->ranks.size();
    const std::size_t slots = static_cast<std::size_t>(replicas_) * p_ * v_ * m_;
    lists_.assign(slots, {});
    list_ids_.clear();
    list_ids_.reserve(slots * 3);
    present_.assign(slots, 0);
    g_->engine.reserve(R * static_cast<std::size_t>(m_ * v_) * 7 + 64 * R,
                       R * static_cast<std::size_t>(m_ * v_) * 10 + 64 * R);
    links_.build(g_->fabric, static_cast<int>(R), g_->engine, plan.comm_share);  // NVLink, NIC, tiers
    for (auto& a : g_->activations) a.clear();
    g_->activations.resize(R);
    g_->last_pipeline_task.assign(R, -1);
    g_->optimizer_task.assign(R, -1);
    for (std::size_t r = 0; r < R; ++r) build_rank(static_cast<int>(r));
    connect_stages();
  }

 private:
  // Per slot (replica, virtual stage, micro-batch): its forward and backward passes' input tasks and
  // the tasks their neighbours wait for (a send, or the pass's end tasks), as spans of list_ids_.
  struct Span {
    std::int32_t begin = 0, n = 0;
  };
  enum List { kFwdIn, kFwdOut, kBwdIn, kBwdOut };
  std::size_t slot(int replica, int vstage, int mb) const {
    return (static_cast<std::size_t>(replica) * p_ * v_ + vstage) * m_ + mb;
  }
  int link_of(int rank, analytic::GroupId grp) const { return links_.link(rank, plan_->group(grp)); }

  // Every pass of a (chunk, pass kind) but the last gradient pass adds the same tasks in the same
  // order, micro-batch apart: the first instance adds their descriptions, the others reuse them.
  // A task that differs from the description at its place (other than in its micro-batch) gets
  // its own, so the reuse can save memory but never change a task.
  std::int32_t spec_for(const TaskSpec& t) {
    if (!reuse_) return g_->engine.add_spec(t);
    if (reuse_pos_ == reuse_->size()) reuse_->push_back(g_->engine.add_spec(t));
    const std::int32_t d = (*reuse_)[reuse_pos_++];
    if (!same_but_microbatch(g_->engine.description(d), t)) return g_->engine.add_spec(t);
    return d;
  }
  TaskId add_task(const TaskSpec& t) { return g_->engine.add(spec_for(t), t.microbatch); }
  static_assert(sizeof(TaskSpec) == 80, "a field was added to TaskSpec: compare it in same_but_microbatch");
  static bool same_but_microbatch(const TaskSpec& a, const TaskSpec& b) {
    return a.kind == b.kind && a.stream == b.stream && a.rank == b.rank && a.duration_s == b.duration_s &&
           a.work == b.work && a.link == b.link && a.bytes == b.bytes && a.flops == b.flops &&
           a.chunk == b.chunk && a.layer_first == b.layer_first && a.layer_count == b.layer_count &&
           a.folded_tp_s == b.folded_tp_s && a.folded_tp_bytes == b.folded_tp_bytes && a.pass == b.pass;
  }
  // The descriptions of the pass `op` runs (none for the step's once-only tasks).
  void reuse_for(const core::PassRef* op, bool last_grad) {
    reuse_pos_ = 0;
    reuse_ = op ? &reuse_lists_[program_list(*op, last_grad)] : nullptr;
  }

  static TaskSpec compute_spec(int rank, TaskKind kind, double seconds, const core::PassRef* op, int layer_first,
                               int layer_count, double flops, double folded_tp_s = 0, double folded_tp_bytes = 0) {
    TaskSpec t;
    t.folded_tp_s = folded_tp_s;
    t.folded_tp_bytes = folded_tp_bytes;
    t.kind = kind;
    t.stream = StreamKind::compute;
    t.rank = rank;
    t.duration_s = seconds;
    t.flops = flops;
    place(t, op, layer_first, layer_count);
    return t;
  }
  TaskId add_compute(int rank, TaskKind kind, double seconds, const core::PassRef* op, int layer_first,
                     int layer_count, double flops) {
    return add_task(compute_spec(rank, kind, seconds, op, layer_first, layer_count, flops));
  }
  // Where a task sits in the step: its pass (when it has one) and the layers it covers.
  static void place(TaskSpec& t, const core::PassRef* op, int layer_first, int layer_count) {
    if (op) {
      t.microbatch = op->microbatch;
      t.chunk = op->chunk;
      t.pass = static_cast<std::int8_t>(op->pass);
    }
    t.layer_first = layer_first;
    t.layer_count = layer_count;
  }
  TaskSpec comm_spec(int rank, const PlanComm& c, const core::PassRef* op, int layer_first, int layer_count) const {
    TaskSpec t;
    t.kind = task_kind(c.kind);
    t.stream = c.stream;
    t.rank = rank;
    t.work = c.time_s;
    t.link = link_of(rank, c.group);
    t.bytes = c.sent_bytes;
    place(t, op, layer_first, layer_count);
    return t;
  }
  TaskId add_comm(int rank, const PlanComm& c, const core::PassRef* op, int layer_first, int layer_count) {
    return add_task(comm_spec(rank, c, op, layer_first, layer_count));
  }

  // A task of a pass's program: its place among the pass's tasks (local), in the previous pass's
  // end tasks (prev_end), or on the rank's list of compute segments before the pass (recent: the
  // i-th from its end).
  struct Ref {
    enum Kind : std::uint8_t { local, prev_end, recent } kind = local;
    std::int32_t i = 0;
  };
  using Refs = Few<Ref>;
  // What a pass's tasks and edges depend on besides the plan: how many end tasks the previous pass
  // left, which of them is the rank's last compute segment, and how many compute segments came
  // before (up to the deepest prefetch's reach).
  struct Shape {
    std::int8_t prev_end = 0;
    std::uint8_t is_prev_compute = 0;  // bit i: prev_end.id[i] is the last compute segment
    std::int32_t recent = 0;
    bool operator==(const Shape&) const = default;
  };
  // The engine calls of one pass of a (chunk, pass kind, last gradient pass) for one input shape:
  // every micro-batch's pass of that shape makes the same calls, in the same order, on its own
  // task ids (each field of a task is a function of the rank, the chunk, the pass and the plan).
  // Recorded at the first such pass, replayed for the others: the engine ends up with the same
  // tasks, descriptions and edges in the same order as calls made pass by pass.
  struct PassProgram {
    Shape shape;
    std::vector<std::int32_t> specs;              // per task of the pass, its description
    std::vector<std::pair<Ref, Ref>> edges;       // in the order they are added
    Refs entry, seg_end;                          // the pass's input tasks, and its end tasks
    std::int32_t first = -1, last = -1;           // its first and last compute task
    std::int32_t prev_compute = -1;               // its last compute segment (-1: none)
    std::vector<std::int32_t> recent, dp_tail;    // its compute segments; its DP reductions
    std::int32_t send = -1;                       // the description of its p2p send (-1: none)
    // as a fresh one, its arrays' storage kept
    void reset(const Shape& s) {
      shape = s;
      specs.clear();
      edges.clear();
      entry.clear();
      seg_end.clear();
      first = last = prev_compute = send = -1;
      recent.clear();
      dp_tail.clear();
    }
  };

  // The programs (and the descriptions) of a (chunk, pass kind, last gradient pass).
  static std::size_t program_list(const core::PassRef& op, bool last_grad) {
    return (static_cast<std::size_t>(op.chunk) * 3 + static_cast<int>(op.pass)) * 2 + last_grad;
  }
  // One pass's program as it is recorded: its tasks as references among themselves (Ref), its
  // edges and its ends, made by the same rules, in the same order, as the pass's engine calls.
  struct Recording {
    Builder& b;
    PassProgram& prog;
    const Shape& shape;
    int r;
    const core::PassRef& op;
    TaskKind kind;

    Ref task(const TaskSpec& t) {
      prog.specs.push_back(b.spec_for(t));
      return Ref{Ref::local, static_cast<std::int32_t>(prog.specs.size() - 1)};
    }
    void depend(Ref from, Ref to) { prog.edges.emplace_back(from, to); }
    // the rank's last compute segment: the input's, until the pass makes its own
    bool is_prev_compute(Ref x) const {
      if (prog.prev_compute >= 0) return x.kind == Ref::local && x.i == prog.prev_compute;
      return x.kind == Ref::prev_end && ((shape.is_prev_compute >> x.i) & 1);
    }

    // One plan segment, `seg.repeat` times: `j` counts the pass's segments (repeats expanded),
    // `seg_end` holds the tasks the next segment waits for.
    void segment(const analytic::Segment& seg, const analytic::ChunkPlan& ch, int nseg, bool fold_tp, int& j,
                 Refs& seg_end) {
      const PlanComm* comms = b.plan_->comms.data() + seg.comm_begin;
      double serial_tp_s = 0, serial_tp_bytes = 0, window = 0;
      for (int q = 0; q < seg.comm_count; ++q) {
        if (comms[q].kind == core::CommKind::tp && comms[q].overlap == Overlap::serial) {
          serial_tp_s += comms[q].time_s;
          serial_tp_bytes += comms[q].sent_bytes;
        }
        if (comms[q].overlap == Overlap::window) window = comms[q].window_s;
      }
      const bool fold = fold_tp && serial_tp_s > 0;
      for (int rep = 0; rep < seg.repeat; ++rep, ++j) {
        const int l0 = ch.layer_first + (j * ch.layers) / nseg;
        const int l1 = ch.layer_first + ((j + 1) * ch.layers) / nseg;
        Refs deps = seg_end;
        gathers(comms, seg.comm_count, l0, l1, deps);
        // A window collective runs beside the last `window` seconds of the compute: the rest of
        // the segment runs first, as a task of its own.
        Ref before{Ref::local, -1};
        if (window > 0 && seg.compute_s > window) {
          before = task(compute_spec(r, kind, seg.compute_s - window, &op, l0, l1 - l0,
                                     seg.flops * (1 - window / seg.compute_s)));
          depend_on(deps, before);
        }
        const bool split_off = before.i >= 0;
        const double own_s = split_off ? window : seg.compute_s;
        const double own_flops = split_off ? seg.flops * window / seg.compute_s : seg.flops;
        const Ref c = task(compute_spec(r, kind, own_s + (fold ? serial_tp_s : 0), &op, l0, l1 - l0, own_flops,
                                        fold ? serial_tp_s : 0, fold ? serial_tp_bytes : 0));
        if (!split_off) depend_on(deps, c);
        if (j == 0) prog.entry.add(split_off ? before : c);
        if (prog.first < 0) prog.first = (split_off ? before : c).i;
        seg_end.clear();
        seg_end.add(c);
        collectives(comms, seg.comm_count, fold, c, before, deps, j == 0, l0, l1, seg_end);
        prog.recent.push_back(c.i);
        prog.prev_compute = c.i;
        prog.last = c.i;
      }
    }
    // `to` after every input but the rank's last compute segment (the compute stream orders those)
    void depend_on(const Refs& deps, Ref to) {
      for (int i = 0; i < deps.n; ++i)
        if (!is_prev_compute(deps.id[i])) depend(deps.id[i], to);
    }
    // The segment's prefetched gathers, each issued once the compute depth+1 segments back is done
    // (its buffer is free: depth gathers run ahead of the compute); the compute waits for them.
    void gathers(const PlanComm* comms, int count, int l0, int l1, Refs& deps) {
      for (int q = 0; q < count; ++q) {
        if (comms[q].overlap != Overlap::prefetch) continue;
        const Ref g = task(b.comm_spec(r, comms[q], &op, l0, l1 - l0));
        const auto back = static_cast<std::int32_t>(std::max(0, comms[q].depth)) + 1;
        const auto made = static_cast<std::int32_t>(prog.recent.size());
        if (shape.recent + made >= back)
          depend(back <= made ? Ref{Ref::local, prog.recent[made - back]} : Ref{Ref::recent, back - made}, g);
        deps.add(g);
      }
    }
    // The segment's other collectives after its compute `c`: DP reductions after it (the pass's
    // tail), a window one with the compute's last part (`before` split off), beside ones with
    // its inputs, serial ones chained after it (serial TP folded into `c` aside).
    void collectives(const PlanComm* comms, int count, bool fold, Ref c, Ref before, const Refs& deps, bool first,
                     int l0, int l1, Refs& seg_end) {
      Ref chain = c;
      for (int q = 0; q < count; ++q) {
        const PlanComm& x = comms[q];
        if (x.overlap == Overlap::prefetch) continue;
        if (x.overlap == Overlap::after) {
          const Ref a = task(b.comm_spec(r, x, &op, l0, l1 - l0));
          depend(c, a);
          prog.dp_tail.push_back(a.i);
          continue;
        }
        if (fold && x.kind == core::CommKind::tp && x.overlap == Overlap::serial) continue;
        const Ref t = task(b.comm_spec(r, x, &op, l0, l1 - l0));
        if (x.overlap == Overlap::window && before.i >= 0) {
          depend(before, t);  // starts with the last `window` of the compute
          seg_end.add(t);
        } else if (x.overlap == Overlap::window || x.overlap == Overlap::beside) {
          for (int i = 0; i < deps.n; ++i) depend(deps.id[i], t);
          if (first) prog.entry.add(t);
          seg_end.add(t);
        } else {
          depend(chain, t);
          chain = t;
          seg_end.id[0] = t;  // the serial chain ends here
        }
      }
    }
  };

  // The program of a (chunk, pass kind, last gradient pass) for this input shape: found, or
  // recorded. `send`: the plan's p2p send after the pass (-1: none).
  const PassProgram& program(int r, const core::PassRef& op, TaskKind kind, const analytic::PassPlan& pass,
                             const analytic::ChunkPlan& ch, bool last_grad, const Shape& shape, bool fold_tp,
                             int send) {
    const std::size_t at = program_list(op, last_grad);
    auto& list = programs_[at];
    std::size_t& used = programs_used_[at];
    for (std::size_t k = 0; k < used; ++k)
      if (list[k].shape == shape) return list[k];
    reuse_for(&op, last_grad);
    if (used == list.size()) list.emplace_back();
    PassProgram& prog = list[used++];
    prog.reset(shape);
    Recording rec{*this, prog, shape, r, op, kind};
    int nseg = 0;
    for (int i = pass.seg_begin; i < pass.seg_begin + pass.seg_count; ++i) nseg += plan_->segments[i].repeat;
    Refs seg_end;
    for (int i = 0; i < shape.prev_end; ++i) seg_end.add(Ref{Ref::prev_end, i});
    int j = 0;
    for (int si = pass.seg_begin; si < pass.seg_begin + pass.seg_count; ++si)
      rec.segment(plan_->segments[si], ch, nseg, fold_tp, j, seg_end);
    prog.seg_end = seg_end;
    if (send >= 0) prog.send = spec_for(comm_spec(r, plan_->comms[send], &op, -1, 0));
    return prog;
  }

  void depend_all(const Ids& from, TaskId to) {
    for (int i = 0; i < from.n; ++i) g_->engine.depend(from.id[i], to);
  }

  // Serial TP folds into the compute task when no other traffic of the stage uses its link.
  bool folds_tp(const analytic::StagePlan& st) const {
    const auto tp_scope = plan_->group(analytic::GroupId::tp).scope;
    bool tp = false;
    for (int j = st.comm_begin; j < st.comm_end; ++j) {
      const PlanComm& c = plan_->comms[j];
      if (c.kind == core::CommKind::tp) {
        if (c.overlap != Overlap::serial) return false;
        tp = true;
      } else if (c.time_s > 0 && plan_->group(c.group).scope == tp_scope) {
        return false;
      }
    }
    return tp;
  }

  // The stage's pass programs emptied (their storage kept) and the deepest prefetch of its passes:
  // how far back a gather's gate can reach.
  void begin_rank(const analytic::StagePlan& st) {
    for (auto& l : reuse_lists_) l.clear();
    reuse_lists_.resize(static_cast<std::size_t>(v_) * 3 * 2);
    if (programs_.size() < reuse_lists_.size()) programs_.resize(reuse_lists_.size());
    programs_used_.assign(reuse_lists_.size(), 0);
    last_program_.assign(reuse_lists_.size(), nullptr);
    reuse_for(nullptr, false);
    max_back_ = 0;
    for (int c = 0; c < v_; ++c) {
      const analytic::ChunkPlan& ch = plan_->chunk(st, c);
      for (const analytic::PassPlan* pp : {&ch.pass[0], &ch.pass[1], &ch.pass[2], &ch.last_grad})
        for (int i = pp->seg_begin; i < pp->seg_begin + pp->seg_count; ++i) {
          const analytic::Segment& seg = plan_->segments[i];
          for (int q = seg.comm_begin; q < seg.comm_begin + seg.comm_count; ++q)
            if (plan_->comms[q].overlap == Overlap::prefetch)
              max_back_ = std::max(max_back_, std::max(0, plan_->comms[q].depth) + 1);
        }
    }
  }

  // After the rank's last pass (`prev_end`: its end tasks, `prev_compute`: its last compute): the
  // stage's collectives once its passes are done, CPU offload's phase (the plan's closed form of
  // its host copies and CPU step), then the GPU's optimizer step, both on the compute stream once
  // the gradients are reduced, and the collectives after the optimizer.
  void end_rank(int r, const analytic::StagePlan& st, const Ids& prev_end, TaskId prev_compute) {
    std::vector<TaskId>& dp_tail = dp_tail_;  // reductions the optimizer waits for
    for (int j = st.end_begin; j < st.end_end; ++j) {
      const TaskId x = add_comm(r, plan_->comms[j], nullptr, -1, 0);
      depend_all(prev_end, x);
      if (prev_compute >= 0) g_->engine.depend(prev_compute, x);
      dp_tail.push_back(x);
    }
    const TaskId off = st.offload_s > 0 ? add_compute(r, TaskKind::offload, st.offload_s, nullptr, -1, 0, 0) : -1;
    const TaskId opt = add_compute(r, TaskKind::optimizer, st.optimizer_s, nullptr, -1, 0, 0);
    for (const TaskId first : {off, opt}) {
      if (first < 0) continue;
      for (int i = 0; i < prev_end.n; ++i)
        if (prev_end.id[i] != prev_compute) g_->engine.depend(prev_end.id[i], first);
      // the dp stream runs in order: its last reduction ends after all the others
      if (!dp_tail.empty()) g_->engine.depend(dp_tail.back(), first);
    }
    if (off >= 0) g_->engine.depend(off, opt);
    g_->optimizer_task[r] = opt;
    for (int j = st.post_begin; j < st.post_end; ++j)
      g_->engine.depend(opt, add_comm(r, plan_->comms[j], nullptr, -1, 0));
  }

  // The shape of a pass's input: its predecessor's end tasks (which of them the compute stream's
  // last task) and how many compute segments back its prefetch gates may reach.
  Shape shape_of(const Ids& prev_end, TaskId prev_compute, std::size_t recent) const {
    Shape shape;
    shape.prev_end = static_cast<std::int8_t>(prev_end.n);
    for (int i = 0; i < prev_end.n; ++i)
      if (prev_end.id[i] == prev_compute) shape.is_prev_compute |= static_cast<std::uint8_t>(1u << i);
    shape.recent = static_cast<std::int32_t>(std::min<std::size_t>(recent, max_back_));
    return shape;
  }

  // What a pass hands the neighbour virtual stage (`out`): its p2p send, issued once the pass's
  // end tasks `ends` are done (without asynchronous sends the next pass waits for it too: `ends`
  // gains it), or, with no send in the plan, those end tasks themselves.
  void hand_over(Span& out, bool sends, const PassProgram& prog, int microbatch, Ids& ends) {
    out.begin = static_cast<std::int32_t>(list_ids_.size());
    if (sends) {
      const TaskId x = g_->engine.add(prog.send, microbatch);
      depend_all(ends, x);
      list_ids_.push_back(x);
      out.n = 1;
      if (!plan_->overlap_pp) ends.add(x);
    } else {
      for (int i = 0; i < ends.n; ++i) list_ids_.push_back(ends.id[i]);
      out.n = ends.n;
    }
  }

  static TaskKind pass_kind(Pass p, bool split) {
    return p == Pass::F ? TaskKind::forward
           : p == Pass::W ? TaskKind::backward_weight
           : split        ? TaskKind::backward_input
                          : TaskKind::backward;
  }

  // The pass's program for this shape of input: its list's program last used, else the list
  // searched (or a program recorded).
  const PassProgram& program_for(int r, const core::PassRef& op, TaskKind kind, const analytic::PassPlan& pass,
                                 const analytic::ChunkPlan& ch, bool last_grad, const Shape& shape, bool fold_tp,
                                 int send) {
    const std::size_t list = program_list(op, last_grad);
    const PassProgram* const last_used = last_program_[list];
    const PassProgram& prog = last_used && last_used->shape == shape
                                  ? *last_used
                                  : program(r, op, kind, pass, ch, last_grad, shape, fold_tp, send);
    last_program_[list] = &prog;  // (a program recorded may move its list's others, never another list's)
    return prog;
  }

  // The in-flight count's spans of rank r: a forward's first and last task, then, once the pass
  // that frees its activations (B, or W when the schedule splits it) ends at `last`, the pair.
  void note_activations(int r, const core::PassRef& op, bool split, TaskId first, TaskId last) {
    if (op.pass == Pass::F) fwd_span_[op.chunk * m_ + op.microbatch] = {first, last};
    if (op.pass == Pass::W || (op.pass == Pass::B && !split)) {
      const auto& fs = fwd_span_[op.chunk * m_ + op.microbatch];
      g_->activations[r].push_back({fs.first, last});
    }
  }

  // The rank's passes in the schedule's order, each its program's tasks and edges run for its
  // micro-batch, handing its ends to the next pass and its inputs and sends to the neighbours.
  void build_rank(int r) {
    const RankRef ref = g_->ranks[r];
    const analytic::StagePlan& st = plan_->stages[ref.stage];
    const bool split = plan_->schedule->splits_weight_grad;
    plan_->schedule->order(plan_->shape, ref.stage, ops_);
    const bool fold_tp = folds_tp(st);
    begin_rank(st);

    // the previous pass's end tasks (other than the compute stream order), and the next's: two
    // buffers taking turns (a copy would read back the ids just stored one by one)
    std::array<Ids, 2> ends;
    Ids* prev_end = &ends[0];
    TaskId prev_compute = -1;
    std::vector<TaskId>& dp_tail = dp_tail_;  // reductions the optimizer waits for
    dp_tail.clear();
    std::vector<TaskId>& recent = recent_;  // this rank's compute segments so far (prefetch gates)
    recent.clear();
    Ids start;                             // issued at the step's start; the second pass waits
    for (int j = st.start_begin; j < st.start_end; ++j) start.add(add_comm(r, plan_->comms[j], nullptr, -1, 0));
    fwd_span_.assign(static_cast<std::size_t>(v_ * m_), {-1, -1});

    for (std::size_t k = 0; k < ops_.size(); ++k) {
      const core::PassRef& op = ops_[k];
      const int vs = op.chunk * p_ + ref.stage;  // virtual stage
      const analytic::ChunkPlan& ch = plan_->chunk(st, op.chunk);
      const analytic::PassPlan& pass = plan_->pass_of(st, op);
      const bool last_grad = &pass == &ch.last_grad;
      const TaskKind kind = pass_kind(op.pass, split);
      if (k == 1)
        for (int i = 0; i < start.n; ++i) prev_end->add(start.id[i]);
      // p2p to the neighbour virtual stage, after the pass
      const bool sends_fwd = op.pass == Pass::F && vs < p_ * v_ - 1;
      const bool sends_bwd = op.pass == Pass::B && vs > 0;
      const int send = sends_fwd ? ch.send_forward : sends_bwd ? ch.send_backward : -1;
      // the pass's tasks and edges: its program for this shape of input, run for this micro-batch
      const Shape shape = shape_of(*prev_end, prev_compute, recent.size());
      const PassProgram& prog = program_for(r, op, kind, pass, ch, last_grad, shape, fold_tp, send);
      const TaskId id0 = static_cast<TaskId>(g_->engine.size());
      for (std::int32_t d : prog.specs) g_->engine.add(d, op.microbatch);
      const std::size_t recent0 = recent.size();
      auto at = [&](Ref x) -> TaskId {
        switch (x.kind) {
          case Ref::local: return id0 + x.i;
          case Ref::prev_end: return prev_end->id[x.i];
          case Ref::recent: break;
        }
        return recent[recent0 - static_cast<std::size_t>(x.i)];
      };
      for (const auto& [from, to] : prog.edges) g_->engine.depend(at(from), at(to));
      const std::size_t sl = slot(ref.replica, vs, op.microbatch);
      present_[sl] = 1;
      if (op.pass == Pass::F || op.pass == Pass::B) {
        Span& entry = lists_[sl][op.pass == Pass::F ? kFwdIn : kBwdIn];
        entry = Span{static_cast<std::int32_t>(list_ids_.size()), prog.entry.n};
        for (int i = 0; i < prog.entry.n; ++i) list_ids_.push_back(at(prog.entry.id[i]));
      }
      Ids& seg_end = prev_end == &ends[0] ? ends[1] : ends[0];
      seg_end.clear();
      for (int i = 0; i < prog.seg_end.n; ++i) seg_end.add(at(prog.seg_end.id[i]));
      const TaskId first = prog.first >= 0 ? id0 + prog.first : -1;
      const TaskId last = prog.last >= 0 ? id0 + prog.last : -1;
      if (max_back_ > 0)  // (read only by prefetch gates)
        for (std::int32_t l : prog.recent) recent.push_back(id0 + l);
      for (std::int32_t l : prog.dp_tail) dp_tail.push_back(id0 + l);
      if (prog.prev_compute >= 0) prev_compute = id0 + prog.prev_compute;
      prev_end = &seg_end;

      note_activations(r, op, split, first, last);
      if (sends_fwd || sends_bwd) hand_over(lists_[sl][sends_fwd ? kFwdOut : kBwdOut], send >= 0, prog, op.microbatch, seg_end);
    }
    g_->last_pipeline_task[r] = prev_compute;
    reuse_for(nullptr, false);
    end_rank(r, st, *prev_end, prev_compute);
  }

  // Every input task of a pass waits for every task its neighbour hands it.
  void connect(Span from, Span to) {
    if (from.n == 1 && to.n == 1) {  // (most: a send and the compute it feeds)
      g_->engine.depend(list_ids_[from.begin], list_ids_[to.begin]);
      return;
    }
    for (int i = 0; i < to.n; ++i)
      for (int k = 0; k < from.n; ++k) g_->engine.depend(list_ids_[from.begin + k], list_ids_[to.begin + i]);
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
          if (vs > 0 && present_[slot(rep, vs - 1, mb)]) connect(lists_[slot(rep, vs - 1, mb)][kFwdOut], lists_[here][kFwdIn]);
          if (vs < V - 1 && present_[slot(rep, vs + 1, mb)]) connect(lists_[slot(rep, vs + 1, mb)][kBwdOut], lists_[here][kBwdIn]);
        }
  }

  const analytic::StepPlan* plan_ = nullptr;
  StepGraph* g_ = nullptr;
  StepLinks links_;
  int p_ = 1, v_ = 1, m_ = 1, replicas_ = 1;
  std::vector<core::PassRef> ops_;
  std::vector<TaskId> recent_, dp_tail_;
  std::vector<std::pair<TaskId, TaskId>> fwd_span_;
  std::vector<std::vector<std::int32_t>> reuse_lists_;  // per (chunk, pass, last gradient pass)
  std::vector<std::vector<PassProgram>> programs_;       // the same: [0, programs_used_) this rank's
  std::vector<std::size_t> programs_used_;
  std::vector<const PassProgram*> last_program_;         // per list
  int max_back_ = 0;
  std::vector<std::int32_t>* reuse_ = nullptr;
  std::size_t reuse_pos_ = 0;
  std::vector<std::array<Span, 4>> lists_;
  std::vector<TaskId> list_ids_;
  std::vector<std::uint8_t> present_;
};

}  // namespace

StepGraph build_step(const analytic::StepPlan& plan, std::vector<RankRef> ranks) {
  StepGraph g;
  build_step(plan, g, std::move(ranks));
  return g;
}

void build_step(const analytic::StepPlan& plan, StepGraph& out, std::vector<RankRef> ranks) {
  thread_local Builder builder;
  builder.build(plan, std::move(ranks), out);
}

}  // namespace ptdsim::sim
