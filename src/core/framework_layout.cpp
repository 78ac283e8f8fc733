#include <algorithm>
#include <string>

#include "ptdsim/core/framework.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/split.hpp"

namespace ptdsim::core {
namespace {

// The rows whose interleaved schedule is set by --num-layers-per-virtual-pipeline-stage alone:
// Megatron-LM before Megatron-Core, Megatron-Core r0.8.0 (with or without the distributed
// optimizer), and NeMo 24.07, which builds on it. Later Megatron-Core releases add
// --num-virtual-stages-per-pipeline-rank and uneven first and last stages, so megatron-fsdp
// (r0.12.0) is not limited here.
bool layers_per_virtual_stage_only(std::string_view framework) {
  return framework == "megatron-lm-2021" || framework == "megatron-core-0.8" ||
         framework == "megatron-core-0.8-distopt" || framework == "nemo-24.07";
}

// DeepSpeed's PipelineEngine (deepspeed/runtime/pipe): one schedule, TrainSchedule (1F1B), and
// in PipelineEngine.__init__ `assert self.zero_optimization_stage() < ZeroStageEnum.gradients,
// "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"`.
bool deepspeed(std::string_view framework) { return framework == "deepspeed" || framework == "deepspeed-0.3"; }

bool torchtitan(std::string_view framework) { return framework == "torchtitan" || framework == "torchtitan-compile"; }

enum class Limit { none, recompute, schedule, zero, split, pp };

Limit limit(const Scenario& s, const PipelineSplit& split) {
  const auto& p = s.parallel;
  const std::string& f = s.training.framework;
  if (!framework_runs_recompute(f, s.training.recompute)) return Limit::recompute;
  if (p.pp > 1 && deepspeed(f)) {
    if (p.schedule != Schedule::one_f_one_b) return Limit::schedule;
    if (p.zero >= 2) return Limit::zero;
    return Limit::none;
  }
  if (!layers_per_virtual_stage_only(f)) return Limit::none;
  // Megatron-Core r0.8 schedules.py get_forward_backward_func: 1F1B without interleaving, or the
  // interleaved 1F1B when vpp is set; no GPipe, no zero-bubble schedule.
  if (p.pp > 1 && p.schedule != Schedule::one_f_one_b && p.schedule != Schedule::interleaved)
    return Limit::schedule;
  if (p.vpp <= 1) return Limit::none;
  // Megatron-LM arguments.py (validate_args, core_r0.8.0): with
  // --num-layers-per-virtual-pipeline-stage N it asserts num_layers % pp == 0 and
  // (num_layers / pp) % N == 0, and sets vpp = num_layers / pp / N: every virtual stage holds N
  // layers, and neither the embedding nor the loss takes a layer's slot.
  const auto& l = split.layers;
  const bool uniform = !l.empty() && !split.embedding_slot && !split.loss_slot &&
                       std::all_of(l.begin(), l.end(), [&](int n) { return n == l.front(); });
  if (!uniform) return Limit::split;
  // validate_args: "When interleaved schedule is used and p2p communication overlap is disabled,
  // pipeline-model-parallel size should be greater than 2" (training.overlap.pp is
  // --overlap-p2p-communication); Megatron-LM 2021 asserted pp > 2 for every interleaved run.
  const bool p2p_overlap = s.training.overlap.pp && s.training.framework != "megatron-lm-2021";
  return s.parallel.pp > 2 || p2p_overlap ? Limit::none : Limit::pp;
}

}  // namespace

std::vector<Recompute> framework_recompute_modes(std::string_view framework) {
  using R = Recompute;
  if (torchtitan(framework)) return {R::none, R::op, R::full};
  return {R::none, R::selective, R::full};
}

bool framework_runs_recompute(std::string_view framework, Recompute r) {
  if (torchtitan(framework)) return r != Recompute::selective;
  if (r != Recompute::op) return true;
  return framework.empty() || framework == "pytorch-fsdp" || framework == "pytorch-fsdp2";
}

bool framework_expresses(const Scenario& s, const PipelineSplit& split) { return limit(s, split) == Limit::none; }

std::string framework_layout_problem(const Scenario& s, const PipelineSplit& split) {
  const auto& p = s.parallel;
  const std::string& f = s.training.framework;
  switch (limit(s, split)) {
    case Limit::none: return {};
    case Limit::recompute: {
      std::string runs;
      for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full, Recompute::op})
        if (framework_runs_recompute(f, r)) runs += (runs.empty() ? "" : ", ") + std::string(name(r));
      return f + " has no recompute " + std::string(name(s.training.recompute)) + " (it runs " + runs + ")";
    }
    case Limit::schedule:
      return f + " has no " + std::string(name(p.schedule)) + " schedule (" +
             (deepspeed(f) ? "1f1b only" : "1f1b and interleaved only") + ")";
    case Limit::zero:
      return f + " runs no ZeRO stage " + std::to_string(p.zero) + " with pipeline parallelism (ZeRO 0 or 1)";
    case Limit::split:
      return f + " sets the interleaved schedule by --num-layers-per-virtual-pipeline-stage, which needs the " +
             std::to_string(s.model.layers) + " layers split evenly over pp*vpp = " + std::to_string(p.pp) + "*" +
             std::to_string(p.vpp) + " virtual stages";
    case Limit::pp:
      return f + " runs the interleaved schedule on pp " + std::to_string(p.pp) +
             (f == "megatron-lm-2021" ? std::string(" never (it needs pp > 2)")
                                      : std::string(" only with p2p communication overlapped (training.overlap.pp)"));
  }
  return {};
}

}  // namespace ptdsim::core
