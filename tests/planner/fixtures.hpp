#pragma once
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/sim/step_graph.hpp"
#include "ptdsim/sim/summary.hpp"

// Small scenarios built in code, so the planner tests touch no disk and stay fast.
namespace ptdsim::planner::test {

// The scheduler's step for a plan, on a non-blocking fabric (what sim::build_step builds).
inline double simulated(const analytic::StepPlan& plan) {
  auto g = sim::build_step(plan);
  g.engine.run();
  return sim::summarize(g).step_s;
}

// A 4-layer, 4-head toy model on A100-like GPUs: small enough that every candidate simulates in
// microseconds, shaped so that tp, pp, cp and vpp all have several legal values.
inline core::Scenario tiny(int gpus) {
  core::Scenario s;
  s.name = "tiny";
  s.model.name = "tiny";
  s.model.layers = 4;
  s.model.hidden = 512;
  s.model.heads = 4;
  s.model.kv_heads = 4;
  s.model.ffn_hidden = 2048;
  s.model.vocab = 1024;
  s.model.max_seq_len = 1024;
  auto& g = s.hardware.gpu;
  g.name = "A100";
  g.memory_bytes = 80 * core::kGiB;
  g.hbm_Bps = 2039e9;
  g.peak_flops[core::index(core::Precision::bf16)] = 312e12;
  s.hardware.name = "dgx";
  s.hardware.gpus_per_node = 8;
  s.hardware.intra = {300e9, 5e-6, 1.0};
  s.hardware.network = {25e9, 10e-6, 1.0};
  s.gpus = gpus;
  s.parallel.dp = gpus;
  s.training.seq_len = 1024;
  s.training.micro_batch = 1;
  s.training.global_batch = 16;
  return s;
}

// tiny() on two nodes of 8 GPUs (8 layers, global batch 32), so groups cross the network, with
// SM contention (a large share, to stress it) and the overlap switches set by the bits of
// `variant` (0-7): every combination of them over the eight variants.
inline core::Scenario two_nodes(int variant) {
  core::Scenario s = tiny(16);
  s.model.layers = 8;
  s.training.global_batch = 32;
  s.hardware.gpu.sms = 100;
  s.hardware.gpu.comm_sms = variant & 4 ? 30 : 0;
  s.training.overlap.tp = variant & 1;
  s.training.overlap.dp = !(variant & 1);
  s.training.overlap.pp = !(variant & 2);
  s.training.overlap.zero3_prefetch = variant & 2;
  return s;
}

// Pins every knob but the degrees and the schedule, so the count can be worked out by hand.
inline SearchSpace degrees_only() {
  SearchSpace b;
  b.micro_batch = {1};
  b.zero = {0};
  b.recompute = {core::Recompute::selective};
  return b;
}

}  // namespace ptdsim::planner::test
