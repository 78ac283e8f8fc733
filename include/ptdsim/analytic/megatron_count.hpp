#pragma once
#include "ptdsim/core/scenario.hpp"

// Megatron-LM's own count of a step's floating-point operations (megatron/training/training.py
// num_floating_point_operations): the F behind the TFLOP/s per GPU that Megatron-LM logs and
// Megatron-Bridge's tables print. What it counts, and how it was checked against those sources:
// docs/validation.md "How the comparison is made".
namespace ptdsim::analytic {

enum class MegatronCount {
  v2024,  // Megatron-Core v0.8 (0b981f9c): the full attention matrix, every layer's MLP at ffn x top_k
  v2025,  // since 8873b55d and d4f9a6f7 (2025): dense and MoE layers apart, half the causal matrix, MLA, MTP
};

// F for one global batch of the scenario, on the vocabulary padded as Megatron pads it by default
// (a multiple of 128 x tp; a model imported from Megatron's arguments holds its padded one already).
double megatron_flops_per_step(const core::Scenario& s, MegatronCount revision);

}  // namespace ptdsim::analytic
