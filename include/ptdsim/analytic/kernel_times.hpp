#pragma once
#include <optional>
#include <string>

#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/report.hpp"

// Kernel times from the measured tables of a hardware file (`gpu.kernels`), each with where it
// came from (docs/analytic.md "Compute from measured kernels"). Without tables, or for a precision
// the tables do not cover, the scalar efficiencies of compute.hpp answer instead.
namespace ptdsim::analytic {

struct KernelTime {
  double time_s = 0;
  core::TimeSource source = core::TimeSource::model;
};

// No kernel the tables time (a measured row, or a model fitted to them) takes less than
// gpu.kernel_launch_us: the smallest stream operation, measured back to back by ptdsim-calibrate (0
// where not measured). The tables were measured on kernels far above it, so it binds only tiny
// shapes. A time from a scalar efficiency (the scalar model, fitted to whole runs, or fp32 and tf32
// beside tables) takes no floor, and a time of 0 (no kernel) stays 0.
inline double launch_floor(const core::GpuSpec& g, double t, core::TimeSource source) {
  const bool tabled = source == core::TimeSource::measured || source == core::TimeSource::model;
  return g.kernels && tabled && t > 0 && t < g.kernel_launch_s ? g.kernel_launch_s : t;
}

// The measured row of exactly (precision class, m, n, k), or null. Binary search over the rows,
// which the loader keeps sorted.
const core::GemmTime* find_gemm_row(const core::KernelTables& t, core::Precision p, double m, double n,
                                    double k);

// One GEMM: the measured row when (precision class, m, n, k) matches one, else the fitted model
// (no faster than gemm_memory_floor), else 2mnk / (peak x scalar efficiency).
KernelTime gemm_kernel(const core::GpuSpec& g, core::Precision p, double m, double n, double k);
// An FP8 GEMM on `kernel` (core::Fp8Kernel): its fitted model where the tables hold one (on a shape
// with a tensorwise row, that row times the two models' ratio; no faster than gemm_memory_floor),
// else gemm_kernel's fp8 rows and model, the tensorwise kernel with split
// accumulation, as every FP8 GEMM was timed before the others were measured (docs/analytic.md "FP8
// GEMM kernels").
KernelTime fp8_gemm_kernel(const core::GpuSpec& g, core::Fp8Kernel kernel, double m, double n, double k);

// What a query of one FP8 kernel should be told when the hardware file does not model it (fp8_gemm_kernel
// then times the tensorwise kernel): the warning's text, or "" when the file models it.
std::string fp8_kernel_fallback(const core::GpuSpec& g, core::Fp8Kernel kernel);

// The three GEMMs of one weight: the forward y = x W^T, the input gradient dx = dy W and the weight
// gradient dW = dy^T x.
enum class GemmPass { forward, input_grad, weight_grad };
// The kernel an FP8 GEMM of `pass` runs under `recipe`; nothing: the tensorwise kernel with split
// accumulation. Transformer Engine's tensorwise recipes and torchao's accumulate the forward GEMM in
// the tensor cores and split the gradients' (TE's _2X_ACC_FPROP False, _2X_ACC_DGRAD and _WGRAD True;
// torchao's Float8LinearConfig gemm_config_output use_fast_accum=True, grad_input and grad_weight
// False); torchao's rowwise runs the forward on the rowwise kernel and the gradients on the
// tensorwise one with unit scales (fp8_rescale_bytes); blockwise and MXFP8 run every pass on theirs.
std::optional<core::Fp8Kernel> fp8_kernel_of(core::Fp8Recipe recipe, GemmPass pass);
// The time to read x[m,k] and W[n,k] (1 byte an element in FP8, else 2) and write y[m,n] in 16 bits
// at hbm_Bps x hbm_efficiency: the floor under the fitted model's time.
double gemm_memory_floor(const core::GpuSpec& g, core::Precision cls, double m, double n, double k);

// What `extra_bytes` more per output element costs a GEMM y[m,n] of precision p in its epilogue, at the
// rate the tables' model fits to the output traffic it does not hide (GemmModel::epilogue_Bps, over the
// waves of output tiles; times the hbm scale of tables carried to another memory): a weight-gradient
// GEMM that accumulates into an fp32 main gradient reads and writes 4 bytes a weight where the
// measured rows write 2 (6 more). 0 without a fitted model for the precision.
double gemm_epilogue_seconds(const core::GpuSpec& g, core::Precision p, double m, double n, double extra_bytes);

using core::AttentionShape;

struct AttentionTime {
  double forward_s = 0, backward_s = 0;
  core::TimeSource source = core::TimeSource::model;
};
// The attention core as two batched GEMMs per head and sequence (QK^T and PV, the full score
// matrix) at gemm_kernel's rate, the backward twice the forward: non-flash attention's GEMMs.
AttentionTime attention_gemms(const core::GpuSpec& g, core::Precision p, const AttentionShape& a);
// Flash attention from its own measured rates when the tables have them (any 16-bit or FP8
// training: the core stays bf16), else attention_gemms. `kernel` picks the table: cuDNN's fused
// attention (gpu.kernels.attention) or FlashAttention-2 (gpu.kernels.attention_flash2); a file
// with only the other table times it from that one (attention_fallback says so).
AttentionTime attention_kernel(const core::GpuSpec& g, core::Precision p, const AttentionShape& a,
                               core::AttentionKernel kernel = core::AttentionKernel::cudnn);
// The warning for a run whose attention_kernel's table the file lacks while it has the other one
// (16-bit or FP8 training, flash attention on); "" when the asked-for table times it.
std::string attention_fallback(const core::GpuSpec& g, core::Precision p, bool flash_attention,
                               core::AttentionKernel kernel);

// A memory-bound operation of `elements` moving `forward_bytes` / `backward_bytes` per element
// (docs/analytic.md lists them per operation): at the class's measured achieved bandwidth, else
// at hbm_Bps x hbm_efficiency with the backward twice the forward bytes (the scalar model; memory_time,
// which applies the memory-bound factor itself: a caller multiplies only a measured rate's time).
struct StreamTime {
  double forward_s = 0, backward_s = 0;
  core::TimeSource source = core::TimeSource::model;
};
StreamTime stream_kernel(const core::GpuSpec& g, const core::StreamRate* rate, double elements,
                         double forward_bytes, double backward_bytes);

}  // namespace ptdsim::analytic
