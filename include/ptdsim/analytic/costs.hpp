#pragma once
#include <vector>

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::analytic {

// What one GPU of one pipeline stage spends, from the closed forms: the input of the
// discrete-event scheduler (sim) and of the first-order step time. Times are seconds per
// micro-batch for the whole stage (all of its virtual chunks; one chunk is 1/vpp of it).
struct StageCosts {
  int stage = 0;
  int layers = 0;

  // compute (GEMM FLOPs at the achieved rate plus memory-bound work at HBM bandwidth)
  double forward_s = 0;          // includes the embedding (first stage) and logits + loss (last)
  double backward_input_s = 0;   // "B": gradients of the inputs
  double backward_weight_s = 0;  // "W": gradients of the weights
  double recompute_s = 0;        // forward work recomputed before the backward pass
  double forward_flops = 0;      // FLOPs behind forward_s (for traces and HFU)
  double gemm_s = 0;             // weight-GEMM time: forward, B and W (what TP comm may overlap)
  double attention_core_s = 0;   // forward attention core of the stage's layers (what CP may overlap)
  double layer_forward_s = 0;    // one layer's forward (what ZeRO-3 prefetch may overlap)
  double layer_backward_s = 0;   // one layer's backward incl. recompute

  // tensor / context / expert parallel communication per micro-batch, inside the layers
  double tp_forward_s = 0, tp_backward_s = 0;  // (backward includes a recomputed forward's)
  double tp_bytes = 0;                         // per micro-batch, sent by one GPU, fwd + bwd
  double cp_forward_s = 0, cp_backward_s = 0;
  double cp_bytes = 0;
  double ep_forward_s = 0, ep_backward_s = 0;
  double ep_bytes = 0;

  // pipeline p2p per micro-batch and boundary (activations forward, gradients backward)
  double p2p_bytes = 0;  // one direction, one micro-batch
  double p2p_s = 0;

  // data parallel, once per step: gradient all-reduce (ZeRO 0) or reduce-scatter (ZeRO 1-3),
  // and the all-gather of updated parameters (ZeRO 1-2)
  double grad_bytes = 0;  // gradient bytes this GPU holds before reduction
  double dp_reduce_s = 0;
  double dp_gather_s = 0;

  // ZeRO-3, per layer and pass: all-gather of one layer's weights, reduce-scatter of its grads
  double zero3_gather_layer_s = 0;
  double zero3_reduce_layer_s = 0;
  double zero3_layer_bytes = 0;  // one layer's weights on this GPU, bytes at 16 bits

  double optimizer_s = 0;  // the optimizer step (memory-bound)
};

struct StepCosts {
  std::vector<StageCosts> stages;  // one per pipeline rank
  int microbatches = 1;
  int vpp = 1;
  Group tp, cp, ep, dp, pp;  // the groups under the scenario's placement
};

StepCosts step_costs(const core::Scenario& s);

}  // namespace ptdsim::analytic
