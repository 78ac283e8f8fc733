#include "ptdsim/analytic/nccl_picks.hpp"

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/context_parallel.hpp"
#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/params.hpp"

namespace ptdsim::analytic {

std::vector<CollectivePick> collective_picks(const core::Scenario& s) {
  const auto& p = s.parallel;
  if (p.tp < 1 || p.cp < 1 || p.pp < 1 || p.dp < 1 || s.model.layers < 1 || s.model.hidden < 1) return {};
  return collective_picks(s, step_groups(s));
}

std::vector<CollectivePick> collective_picks(const core::Scenario& s, const StepGroups& groups) {
  std::vector<CollectivePick> out;
  const auto& hw = s.hardware;
  const auto& p = s.parallel;
  const auto& tr = s.training;
  if (p.tp < 1 || p.cp < 1 || p.pp < 1 || p.dp < 1 || s.model.layers < 1 || s.model.hidden < 1) return out;
  using C = core::Collective;
  auto add = [&](const char* kind, C op, double bytes, const Group& g) {
    if (g.ranks <= 1 || bytes <= 0) return;
    CollectivePick k{kind, op, g.ranks, bytes, "", "", ""};
    if (const core::CollectiveFit* m = calibrated_row(hw, op, bytes, g)) {
      // a row forced to an algorithm times it only where that algorithm runs: name it
      k.algorithm = m->algo >= 0 ? core::nccl_algo_names()[static_cast<std::size_t>(m->algo)] : "calibrated";
      k.protocol = "calibrated";
    } else if (const NcclChoice c = nccl_line(hw, op, bytes, g); c.valid) {
      k.algorithm = name(c.algo);
      k.protocol = name(c.proto);
    } else {
      k.algorithm = "p2p";
    }
    k.warning = forced_row_warning(hw, op, bytes, g, kind);
    out.push_back(std::move(k));
  };
  // the sizes layer_comm, dispatch and the plan time (comm.cpp, plan.cpp)
  const double width = tr.precision == core::Precision::fp32 || tr.precision == core::Precision::tf32 ? 4.0 : 2.0;
  const double tokens = tr.micro_batch * static_cast<double>(tr.seq_len) / p.cp;
  const double S = width * tokens * s.model.hidden;
  if (p.sequence_parallel) {
    add("tp", C::all_gather, S, groups.tp);
    add("tp", C::reduce_scatter, S, groups.tp);
  } else {
    add("tp", C::all_reduce, S, groups.tp);
  }
  if (s.model.heads > 0)
    for (const CpCollective& c : cp_collectives(s, groups)) add("cp", c.op, c.bytes, c.group);
  if (s.model.moe && p.ep > 1 && tr.moe.dispatcher != core::Dispatcher::allgather) {
    const double sp = p.sequence_parallel ? p.tp : 1.0;
    add("ep", C::all_to_all, width * tokens / sp * s.model.hidden * s.model.moe->top_k, groups.ep);
  }
  add("pp", C::send_recv, width * tokens * s.model.hidden / p.tp, groups.pp_hop);
  // the data-parallel collectives of the first stage's dense parameters: the whole gradient (and the
  // updated weights) as one collective; under ZeRO-3 one sharding unit's
  const double wb = weight_bytes_per_param(tr.precision), gb = gradient_bytes_per_param(tr.precision);
  if (p.zero >= 3) {
    const double unit = layer_params_per_gpu(s, false).dense * p.sharding.unit_layers;
    add("dp", C::all_gather, wb * unit, groups.shard);
    add("dp", C::reduce_scatter, p.sharding.reduce_bytes * unit, groups.shard);
  } else {
    const double params = stage_params_per_gpu(s, 0).dense;
    add("dp", p.zero == 0 ? C::all_reduce : C::reduce_scatter, gb * params, groups.dp);
    if (p.zero >= 1) add("dp", C::all_gather, wb * params, groups.dp);
  }
  return out;
}

}  // namespace ptdsim::analytic
