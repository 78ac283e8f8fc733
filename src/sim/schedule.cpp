#include "ptdsim/sim/schedule.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>

#include "ptdsim/analytic/comm.hpp"

namespace ptdsim::sim {

std::vector<Op> pipeline_order(core::Schedule schedule, int p, int v, int m, int stage) {
  if (p < 1 || v < 1 || m < 1 || stage < 0 || stage >= p)
    throw std::invalid_argument("sim::pipeline_order: bad p, v, m or stage");
  std::vector<Op> ops;
  ops.reserve(static_cast<std::size_t>(3 * m * v));
  using core::Schedule;
  if (schedule == Schedule::interleaved || v > 1) {
    if (m % p != 0)
      throw std::invalid_argument("sim::pipeline_order: the interleaved schedule needs m % p == 0");
    const int total = m * v;
    auto at = [&](int k, bool forward) {
      const int group = k / (p * v), within = k % (p * v);
      const int chunk = forward ? within / p : v - 1 - within / p;
      return Op{forward ? Pass::F : Pass::B, chunk, group * p + within % p};
    };
    const int warmup = m == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
    for (int k = 0; k < warmup; ++k) ops.push_back(at(k, true));
    for (int i = 0; i < total - warmup; ++i) {
      ops.push_back(at(warmup + i, true));
      ops.push_back(at(i, false));
    }
    for (int i = total - warmup; i < total; ++i) ops.push_back(at(i, false));
    return ops;
  }
  if (schedule == Schedule::gpipe) {
    for (int i = 0; i < m; ++i) ops.push_back({Pass::F, 0, i});
    for (int i = 0; i < m; ++i) ops.push_back({Pass::B, 0, i});
    return ops;
  }
  const int warmup = std::min(p - stage - 1, m);
  if (schedule == Schedule::one_f_one_b) {
    for (int i = 0; i < warmup; ++i) ops.push_back({Pass::F, 0, i});
    for (int i = 0; i < m - warmup; ++i) {
      ops.push_back({Pass::F, 0, warmup + i});
      ops.push_back({Pass::B, 0, i});
    }
    for (int i = m - warmup; i < m; ++i) ops.push_back({Pass::B, 0, i});
    return ops;
  }
  // ZB-H1: W of micro-batch i runs after B of micro-batch i + defer in the steady phase.
  const int defer = stage;
  std::deque<int> pending;  // micro-batches whose B ran and W did not
  for (int i = 0; i < warmup; ++i) ops.push_back({Pass::F, 0, i});
  for (int i = 0; i < m - warmup; ++i) {
    ops.push_back({Pass::F, 0, warmup + i});
    ops.push_back({Pass::B, 0, i});
    pending.push_back(i);
    if (static_cast<int>(pending.size()) > defer) {
      ops.push_back({Pass::W, 0, pending.front()});
      pending.pop_front();
    }
  }
  for (int i = m - warmup; i < m; ++i) {
    ops.push_back({Pass::B, 0, i});
    pending.push_back(i);
    ops.push_back({Pass::W, 0, pending.front()});
    pending.pop_front();
  }
  for (int i : pending) ops.push_back({Pass::W, 0, i});
  return ops;
}

std::vector<RankRef> representative_ranks(int pp) {
  std::vector<RankRef> r(static_cast<std::size_t>(pp));
  for (int i = 0; i < pp; ++i) r[i].stage = i;
  return r;
}

ScheduleOptions options_of(const core::Scenario& s) {
  ScheduleOptions o;
  o.schedule = s.parallel.vpp > 1 ? core::Schedule::interleaved : s.parallel.schedule;
  o.overlap_tp = analytic::tp_overlaps(s);
  o.overlap_pp = s.training.overlap.pp;
  o.overlap_dp = s.training.overlap.dp;
  o.zero3_prefetch = s.training.overlap.zero3_prefetch;
  o.zero = s.parallel.zero;
  o.comm_share = s.hardware.gpu.comm_share();
  // Megatron-LM: bucket_size = max(40M, 1M * dp) parameters
  o.dp_bucket_bytes = std::max(40e6, 1e6 * s.parallel.dp) * 4;
  return o;
}

namespace {

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
  Builder(const analytic::StepCosts& c, const ScheduleOptions& o, std::vector<RankRef> ranks)
      : c_(c), o_(o) {
    g_.ranks = std::move(ranks);
    p_ = static_cast<int>(c.stages.size());
    v_ = std::max(1, c.vpp);
    m_ = std::max(1, c.microbatches);
    g_.microbatches = m_;
    g_.vpp = v_;
    if (p_ < 1) throw std::invalid_argument("sim::build_step: no pipeline stages");
    if (g_.ranks.empty()) g_.ranks = representative_ranks(p_);
    replicas_ = 0;
    for (const auto& r : g_.ranks) {
      if (r.stage < 0 || r.stage >= p_ || r.replica < 0)
        throw std::invalid_argument("sim::build_step: rank outside the pipeline");
      replicas_ = std::max(replicas_, r.replica + 1);
    }
    g_.engine = Engine(static_cast<int>(g_.ranks.size()));
    g_.engine.set_comm_share(o.comm_share);
    split_ = o.schedule == core::Schedule::zb_h1;
    // layer offsets of the stages (the first layer of each)
    first_layer_.assign(p_ + 1, 0);
    for (int s = 0; s < p_; ++s) first_layer_[s + 1] = first_layer_[s] + c.stages[s].layers;
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
  int link_of(int rank, const analytic::Group& grp) const {
    return 2 * rank + (grp.scope == core::Scope::inter ? 1 : 0);
  }

  TaskId add(int rank, TaskKind kind, StreamKind stream, double seconds, const Op* op,
             int layer_first, int layer_count, const analytic::Group* grp = nullptr,
             double bytes = 0, double flops = 0) {
    TaskSpec t;
    t.kind = kind;
    t.stream = stream;
    t.rank = rank;
    if (grp) {
      t.work = seconds;
      t.link = link_of(rank, *grp);
    } else {
      t.duration_s = seconds;
    }
    t.bytes = bytes;
    t.flops = flops;
    if (op) {
      t.microbatch = op->microbatch;
      t.chunk = op->chunk;
    }
    t.layer_first = layer_first;
    t.layer_count = layer_count;
    return g_.engine.add(t);
  }

  void depend_all(const Ids& from, TaskId to) {
    for (int i = 0; i < from.n; ++i) g_.engine.depend(from.id[i], to);
  }

  void build_rank(int r) {
    const RankRef ref = g_.ranks[r];
    const analytic::StageCosts& sc = c_.stages[ref.stage];
    const double inv_v = 1.0 / v_;
    const int chunk_layers = std::max(1, sc.layers / v_);
    const bool zero3 = o_.zero >= 3;
    const bool buckets = !zero3 && o_.overlap_dp && sc.dp_reduce_s > 0;
    const int nb = std::clamp(
        static_cast<int>(std::ceil(sc.grad_bytes * inv_v / std::max(1.0, o_.dp_bucket_bytes))), 1,
        chunk_layers);
    const auto ops = pipeline_order(o_.schedule, p_, v_, m_, ref.stage);
    // Serial TP folds into the compute task when no other traffic of this rank uses its link.
    auto uses = [&](const analytic::Group& grp, bool traffic) {
      return traffic && grp.scope == c_.tp.scope;
    };
    const bool fold_tp =
        !o_.overlap_tp &&
        !uses(c_.cp, sc.cp_forward_s + sc.cp_backward_s > 0) &&
        !uses(c_.ep, sc.ep_forward_s + sc.ep_backward_s > 0) && !uses(c_.pp, sc.p2p_s > 0) &&
        !uses(c_.dp, sc.dp_reduce_s + sc.dp_gather_s + sc.zero3_gather_layer_s +
                             sc.zero3_reduce_layer_s > 0);

    Ids prev_end;       // the previous pass's end tasks (other than the compute stream order)
    TaskId prev_compute = -1;
    std::vector<TaskId> dp_tail;  // reductions the optimizer waits for
    std::array<TaskId, 2> recent{-1, -1};  // ZeRO-3: the last two compute segments (prefetch)
    TaskId param_gather = -1;
    if (o_.zero >= 1 && o_.zero <= 2 && o_.overlap_dp && sc.dp_gather_s > 0) {
      // Megatron's overlapped parameter all-gather of the previous step's update, hidden behind
      // the first forward passes: the second pass needs all of it.
      param_gather = add(r, TaskKind::dp_gather, StreamKind::dp_gather, sc.dp_gather_s, nullptr,
                         -1, 0, &c_.dp, sc.grad_bytes);
    }
    std::vector<std::pair<TaskId, TaskId>> fwd_span(static_cast<std::size_t>(v_ * m_), {-1, -1});

    for (std::size_t k = 0; k < ops.size(); ++k) {
      const Op& op = ops[k];
      const int vs = op.chunk * p_ + ref.stage;  // virtual stage
      const int lfirst = v_ > 1 ? vs * chunk_layers : first_layer_[ref.stage];
      double compute_s = 0, flops = 0;
      TaskKind kind = TaskKind::forward;
      double tp_s = 0, cp_s = 0, ep_s = 0;
      double attention_s = 0;  // the attention core of the pass: all that CP's exchange can hide behind
      if (op.pass == Pass::F) {
        compute_s = sc.forward_s * inv_v;
        flops = sc.forward_flops * inv_v;
        tp_s = sc.tp_forward_s * inv_v;
        cp_s = sc.cp_forward_s * inv_v;
        ep_s = sc.ep_forward_s * inv_v;
        attention_s = sc.attention_core_s * inv_v;
      } else if (op.pass == Pass::B) {
        compute_s = (sc.recompute_s + sc.backward_input_s + (split_ ? 0 : sc.backward_weight_s)) * inv_v;
        flops = sc.forward_flops * inv_v * (split_ ? 1 : 2);
        kind = split_ ? TaskKind::backward_input : TaskKind::backward;
        tp_s = sc.tp_backward_s * inv_v;
        cp_s = sc.cp_backward_s * inv_v;
        ep_s = sc.ep_backward_s * inv_v;
        attention_s = 2 * sc.attention_core_s * inv_v;  // its backward is twice the forward's
      } else {
        compute_s = sc.backward_weight_s * inv_v;
        flops = sc.forward_flops * inv_v;
        kind = TaskKind::backward_weight;
      }
      const bool makes_grads = op.pass == Pass::W || (op.pass == Pass::B && !split_);
      const bool last_grads = makes_grads && op.microbatch == m_ - 1;
      const bool needs_weights = op.pass != Pass::W;
      int nseg = 1;
      if (zero3) nseg = chunk_layers;
      else if (buckets && last_grads) nseg = nb;

      if (k == 1 && param_gather >= 0) prev_end.add(param_gather);
      Ids entry, seg_end = prev_end;
      TaskId first = -1, last = -1;
      for (int j = 0; j < nseg; ++j) {
        const int l0 = lfirst + (j * chunk_layers) / nseg;
        const int l1 = lfirst + ((j + 1) * chunk_layers) / nseg;
        Ids deps = seg_end;
        if (zero3 && needs_weights && sc.zero3_gather_layer_s > 0) {
          const TaskId g = add(r, TaskKind::zero3_gather, StreamKind::dp_gather,
                               sc.zero3_gather_layer_s * (l1 - l0), &op, l0, l1 - l0, &c_.dp);
          // prefetch one layer ahead: the gather of layer q may start when layer q-2 is done
          // (two layers' buffers); without prefetch, when layer q-1 is done
          const TaskId gate = o_.zero3_prefetch ? recent[1] : recent[0];
          if (gate >= 0) g_.engine.depend(gate, g);
          deps.add(g);
        }
        const bool fold = fold_tp && tp_s > 0;
        // Ring attention hides CP's key/value exchange behind the attention core only: the
        // projections before it produce the keys and values, the ones after need its output.
        // The pass runs as its other work, then the attention core beside the exchange.
        const double window = cp_s > 0 ? std::min(compute_s, attention_s) / nseg : 0.0;
        TaskId before_attention = -1;
        if (window > 0 && compute_s / nseg > window) {
          const double share = 1 - window * nseg / compute_s;
          before_attention = add(r, kind, StreamKind::compute, compute_s / nseg - window, &op, l0,
                                 l1 - l0, nullptr, 0, flops * share / nseg);
          for (int i = 0; i < deps.n; ++i)
            if (deps.id[i] != prev_compute) g_.engine.depend(deps.id[i], before_attention);
        }
        const double own_s = before_attention >= 0 ? window : compute_s / nseg;
        const double own_flops = before_attention >= 0 ? flops * window * nseg / compute_s / nseg
                                                       : flops / nseg;
        const TaskId c = add(r, kind, StreamKind::compute, own_s + (fold ? tp_s / nseg : 0), &op, l0,
                             l1 - l0, nullptr, 0, own_flops);
        if (fold) g_.engine.fold_tp(c, tp_s / nseg, sc.tp_bytes * inv_v * 0.5 / nseg);
        const TaskId head = before_attention >= 0 ? before_attention : c;
        if (before_attention < 0)
          for (int i = 0; i < deps.n; ++i)
            if (deps.id[i] != prev_compute) g_.engine.depend(deps.id[i], c);
        if (j == 0) entry.add(head);
        if (first < 0) first = head;
        seg_end.clear();
        seg_end.add(c);
        const std::array<std::pair<double, TaskKind>, 3> comms{
            std::pair{tp_s, TaskKind::tp}, std::pair{cp_s, TaskKind::cp}, std::pair{ep_s, TaskKind::ep}};
        const std::array<StreamKind, 3> streams{StreamKind::tp, StreamKind::cp, StreamKind::ep};
        const std::array<const analytic::Group*, 3> groups{&c_.tp, &c_.cp, &c_.ep};
        const std::array<double, 3> bytes{sc.tp_bytes, sc.cp_bytes, sc.ep_bytes};
        TaskId chain = c;
        for (int q = 0; q < 3; ++q) {
          const double t = comms[q].first;
          if (t <= 0 || (q == 0 && fold)) continue;
          // CP's ring exchange overlaps with the attention core (ring attention; above); TP
          // overlaps when asked; EP's all-to-all feeds the experts and stays serial.
          const bool overlapped = (q == 1 && window > 0) || (q == 0 && o_.overlap_tp);
          // bytes are per micro-batch, forward + backward: halve for one pass
          const TaskId x = add(r, comms[q].second, streams[q], t / nseg, &op, l0, l1 - l0,
                               groups[q], bytes[q] * inv_v * 0.5 / nseg);
          if (q == 1 && before_attention >= 0) {
            g_.engine.depend(before_attention, x);  // starts with the attention core
            seg_end.add(x);
          } else if (overlapped) {
            for (int i = 0; i < deps.n; ++i) g_.engine.depend(deps.id[i], x);
            if (j == 0) entry.add(x);
            seg_end.add(x);
          } else {
            g_.engine.depend(chain, x);
            chain = x;
            seg_end.id[0] = x;  // the serial chain ends here
          }
        }
        if (zero3 && makes_grads && sc.zero3_reduce_layer_s > 0) {
          const TaskId x = add(r, TaskKind::zero3_reduce, StreamKind::dp,
                               sc.zero3_reduce_layer_s * (l1 - l0), &op, l0, l1 - l0, &c_.dp);
          g_.engine.depend(c, x);
          dp_tail.push_back(x);
        }
        if (buckets && last_grads) {
          const TaskId x = add(r, TaskKind::dp_reduce, StreamKind::dp,
                               sc.dp_reduce_s * inv_v / nseg, &op, l0, l1 - l0, &c_.dp,
                               sc.grad_bytes * inv_v / nseg);
          g_.engine.depend(c, x);
          dp_tail.push_back(x);
        }
        recent[1] = recent[0];
        recent[0] = c;
        prev_compute = c;
        last = c;
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
      if (op.pass == Pass::W || (op.pass == Pass::B && !split_)) {
        const auto& fs = fwd_span[op.chunk * m_ + op.microbatch];
        g_.activations[r].push_back({fs.first, last});
      }
      if (sends_fwd || sends_bwd) {
        Ids& out = sends_fwd ? fwd_out_[sl] : bwd_out_[sl];
        if (sc.p2p_s > 0) {
          const TaskId x = add(r, TaskKind::p2p, StreamKind::pp_send, sc.p2p_s, &op, -1, 0,
                               &c_.pp, sc.p2p_bytes);
          depend_all(seg_end, x);
          out.clear();
          out.add(x);
          if (!o_.overlap_pp) prev_end.add(x);
        } else {
          out = seg_end;
        }
      }
    }
    g_.last_pipeline_task[r] = prev_compute;

    if (!zero3 && sc.dp_reduce_s > 0 && !buckets) {
      const TaskId x = add(r, TaskKind::dp_reduce, StreamKind::dp, sc.dp_reduce_s, nullptr, -1, 0,
                           &c_.dp, sc.grad_bytes);
      depend_all(prev_end, x);
      if (prev_compute >= 0) g_.engine.depend(prev_compute, x);
      dp_tail.push_back(x);
    }
    const TaskId opt = add(r, TaskKind::optimizer, StreamKind::compute, sc.optimizer_s, nullptr,
                           -1, 0);
    for (int i = 0; i < prev_end.n; ++i)
      if (prev_end.id[i] != prev_compute) g_.engine.depend(prev_end.id[i], opt);
    // the dp stream runs in order: its last reduction ends after all the others
    if (!dp_tail.empty()) g_.engine.depend(dp_tail.back(), opt);
    g_.optimizer_task[r] = opt;
    if (o_.zero >= 1 && o_.zero <= 2 && sc.dp_gather_s > 0 && param_gather < 0) {
      const TaskId x = add(r, TaskKind::dp_gather, StreamKind::dp_gather, sc.dp_gather_s, nullptr,
                           -1, 0, &c_.dp, sc.grad_bytes);
      g_.engine.depend(opt, x);
    }
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

  const analytic::StepCosts& c_;
  const ScheduleOptions& o_;
  StepGraph g_;
  int p_ = 1, v_ = 1, m_ = 1, replicas_ = 1;
  bool split_ = false;
  std::vector<int> first_layer_;
  std::vector<Ids> fwd_in_, fwd_out_, bwd_in_, bwd_out_;
  std::vector<std::uint8_t> present_;
};

}  // namespace

StepGraph build_step(const analytic::StepCosts& costs, const ScheduleOptions& options,
                     std::vector<RankRef> ranks) {
  return Builder(costs, options, std::move(ranks)).build();
}

}  // namespace ptdsim::sim
