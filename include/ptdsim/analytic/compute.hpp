#pragma once
#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/report.hpp"

// Compute time (docs/analytic.md "Compute time"). With the hardware's measured kernel tables
// (gpu.kernels) every operator is timed from them (operators.hpp, kernel_times.hpp); without, GEMMs run
// at the scalar fraction of peak and the rest as bytes moved at the achieved HBM bandwidth.
namespace ptdsim::analytic {

// Achieved fraction of peak for an m x n x k GEMM: the calibrated gpu.matmul_table interpolated in
// log(m*n*k) (rows of the same precision, else the 16-bit rows, clamped at the ends), else
// gpu.matmul_efficiency.
double matmul_efficiency(const core::GpuSpec& g, core::Precision p, double m, double n, double k);
// The scalar model: 2*m*n*k / (peak * efficiency); `count` identical GEMMs (batched heads).
// (kernel_times.hpp gemm_kernel consults the measured tables first.)
double gemm_time(const core::GpuSpec& g, core::Precision p, double m, double n, double k,
                 double count = 1);
// The routed experts' grouped GEMM under the scalar model (a GPU without kernel tables): `count`
// per-expert GEMMs, each dispatched by the host, so each at least the host's dispatch floor as a
// smooth maximum, t = (t0^p + t_scalar^p)^(1/p), with the floor t0 and knee p of the H100 tables'
// fitted GEMM model of the same precision class (docs/analytic.md "Experts without kernel tables").
double expert_gemm_time(const core::GpuSpec& g, core::Precision p, double m, double n, double k, double count);
// bytes / (hbm_Bps * hbm_efficiency), times memory_bound_factor: the gpu-level one without kernel
// tables, kernels.overhead's with them (loaded into the same field).
double memory_time(const core::GpuSpec& g, double bytes);

// One transformer layer on one GPU, one micro-batch, seconds: the sums over layer_ops().
struct LayerTimes {
  double forward = 0;          // GEMMs + attention core + memory-bound work
  double backward_input = 0;   // B: input-gradient GEMMs, attention core backward, elementwise backward
  double backward_weight = 0;  // W: weight-gradient GEMMs
  double attention_core = 0;   // forward attention core (scores, softmax, weighted sum)
  double gemm_forward = 0;     // forward weight GEMMs only (what TP communication may hide behind)
  double recompute = 0;        // recomputed forward under the scenario's recompute mode
  double forward_flops = 0;    // per GPU
};
LayerTimes layer_times(const core::Scenario& s, bool moe_layer);
// The share of an operator's forward the backward reruns in a dense or an MoE layer: every operator
// under recompute full; under selective the attention core, or with training.recompute_modules the
// operators of the modules it names (docs/analytic.md "Recompute modules"); under op, every
// operator but the attention core, the weight GEMMs by op_checkpoint_shares.
double recomputed_share(const core::Scenario& s, core::Operator op, core::OperatorKind kind, bool moe_layer);
struct LayerOps;
// The same from the layer's operators given (layer_ops(s, moe_layer)).
LayerTimes layer_times(const core::Scenario& s, bool moe_layer, const LayerOps& ops);

// Input embedding (first stage) and logits + cross-entropy (last stage), one micro-batch.
struct EndTimes {
  double forward = 0, backward_input = 0, backward_weight = 0, forward_flops = 0;
};
EndTimes embedding_times(const core::Scenario& s);
EndTimes logits_times(const core::Scenario& s);
struct EndOps;
// The same from the ends' operators given (end_ops(s)).
EndTimes embedding_times(const EndOps& ends);
EndTimes logits_times(const core::Scenario& s, const EndOps& ends);

// Memory-bound elementwise bytes of one layer's forward on one GPU (documented byte counts).
double layer_elementwise_bytes(const core::Scenario& s, bool moe_layer);
// Of them, an MoE layer's routed experts' own (their activation, the tokens' permute and unpermute),
// forward and backward, 16-bit tensors.
struct RoutedBytes {
  double forward = 0, backward = 0;
};
RoutedBytes routed_elementwise_bytes(const core::Scenario& s);

// The optimizer step of one GPU: bytes of states read and written per parameter it updates.
double optimizer_step_bytes_per_param(const core::TrainingSpec& t);
// Its time for `params_updated` parameters: those bytes at the measured fused-AdamW bandwidth
// (gpu.kernels.optimizer), else as memory_time.
double optimizer_time(const core::GpuSpec& g, const core::TrainingSpec& t, double params_updated);

}  // namespace ptdsim::analytic
