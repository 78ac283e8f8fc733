#pragma once
#include "ptdsim/core/scenario.hpp"

// torchtitan's per-operator selective activation checkpointing (training.recompute: op; its
// activation_checkpoint mode "selective" with selective_ac_option "op"): inside each transformer
// block the outputs of aten.mm, of the SDPA kernels and of the TP reduce-scatters are saved, except
// every second mm in the block's forward order, and every other operator's output is recomputed in
// the backward pass (_save_list and _custom_policy in torchtitan's parallelize_llama.py, the same at
// 9dec370 and 820504e). torchao's Float8 linears call torch.mm on their Float8Tensor operands
// (float8_linear.py), which the checkpoint's dispatch mode sees as aten.mm before the subclass
// turns it into torch._scaled_mm: they count and are saved as the bf16 ones are.
// docs/analytic.md "torchtitan's per-op checkpointing".
namespace ptdsim::analytic {

// The share of each weight GEMM operator's forward that the backward recomputes.
struct OpCheckpointShares {
  double qkv = 0, proj = 0, fc1 = 0, fc2 = 0;
};
OpCheckpointShares op_checkpoint_shares(const core::Scenario& s);

// What one layer keeps for its backward under it (one micro-batch, one GPU, bytes): the block's
// input, the saved mm outputs (16-bit, in FP8 too), the attention output with its log-sum-exp, and the
// TP reduce-scatters' outputs.
double op_checkpoint_saved_bytes(const core::Scenario& s);

}  // namespace ptdsim::analytic
