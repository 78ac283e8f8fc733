#pragma once
#include "ptdsim/core/scenario.hpp"

// Megatron-LM's own count of a step's floating-point operations, the F behind the "TFLOP/s per
// GPU" that Megatron-LM logs (--log-throughput), that Megatron-Bridge's performance tables and
// NVIDIA's MoE model zoo print, and that dgxc-benchmarking reports (docs/validation.md "How the
// comparison is made"). It is not ptdsim's model FLOP count (flops.hpp): it counts a causal
// attention matrix by half, MLA and MTP by their own closed forms, and the logits on the padded
// vocabulary, and leaves the router out. Two revisions of megatron/training/training.py
// num_floating_point_operations:
namespace ptdsim::analytic {

enum class MegatronCount {
  // 2024 (0b981f9c, Megatron-Core v0.8): 12 B s L h^2 ((1 + g/a + s/h) q/h + (f/h) top_k (3/2
  // gated) + V/(2 L h)): the full attention matrix, every layer's MLP at --ffn-hidden-size times
  // top_k, no MTP or MLA terms.
  v2024,
  // Since 8873b55d (2025-03) and d4f9a6f7 (2025-04; unchanged for these models at d98e8a64,
  // 2026-08): dense and MoE layers apart (routed experts times top_k plus the shared experts),
  // half the causal attention matrix, MLA's projections and the MTP modules (each one more layer
  // of the last layer's kind, its 2h -> h projection, three norms and its logits).
  v2025,
};

// F for one global batch of the scenario (global_batch sequences of seq_len tokens), the vocabulary
// padded as Megatron pads it (--make-vocab-size-divisible-by 128, times tp).
double megatron_flops_per_step(const core::Scenario& s, MegatronCount revision);

}  // namespace ptdsim::analytic
