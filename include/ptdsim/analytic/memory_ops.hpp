#pragma once
#include <array>

#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/model.hpp"
#include "ptdsim/core/scenario.hpp"

// Memory-bound operators from the bytes their kernels move (docs/analytic.md "Memory-bound operators
// from bytes"): each operator, under the framework's fusion setting (training.fusion), is a list of
// bytes per element by kind of kernel, and each kind runs at the bandwidth the kernel tables measure
// for it, read back from the measured sequences' real bytes.
namespace ptdsim::analytic {

// The kinds of memory-bound kernel the tables time (elementwise.csv, cross_entropy.csv):
// pointwise, a streaming kernel (residual_add's rows); norm, a row reduction (the model's norm
// class); dropout, a pointwise kernel drawing random numbers; gelu; swiglu_chunked, PyTorch's silu
// and mul over the two halves of one chunked tensor (strided); softmax, a row reduction over the
// vocabulary in fp32 (cross-entropy).
enum class StreamKind { pointwise, norm, dropout, gelu, swiglu_chunked, softmax };
inline constexpr int kStreamKinds = 6;

// Bytes per element one pass moves, by kind of kernel.
struct PassBytes {
  std::array<double, kStreamKinds> bytes{};
  double total() const;
};
struct OpBytes {
  PassBytes forward, backward;
};

// The operators' bytes per element of their tensor (16-bit activations; docs/analytic.md's table):
// a norm per element of [tokens, hidden]; GeLU and SwiGLU per output element of [tokens, ffn];
// dropout-add per element of [tokens, hidden]; RoPE per element of q and k; cross-entropy per logit.
OpBytes norm_bytes(core::Fusion f);
OpBytes gelu_bytes(core::Fusion f);
OpBytes swiglu_bytes(core::Fusion f);
OpBytes dropout_add_bytes(core::Fusion f);
OpBytes rope_bytes(core::Fusion f);
OpBytes cross_entropy_bytes(core::LossFusion f);
// The loss as it runs on tp ranks: loss_parallel is F.cross_entropy itself where there is one rank
// (nothing is sharded, torchtitan enters loss_parallel only when tp > 1).
core::LossFusion loss_as_run(core::LossFusion f, int tp);
// FP8: bytes per element to quantise one GEMM operand for both its GEMMs (the forward's and the
// weight gradient's, transposed) under the recipe: delayed 4, torchao's rowwise 8, the others 6; 2
// fewer but delayed's where the producing kernel does the first pass (fusion.fp8_cast fused).
double fp8_cast_bytes(core::Fp8Recipe r, core::Fusion cast);
// FP8: bytes per output element of each backward GEMM (input and weight gradient) rescaled after
// the GEMM: torchao's rowwise 4 (read 2, write 2), the others 0.
double fp8_rescale_bytes(core::Fp8Recipe r);
// FP8 under sequence parallelism: whether the inputs of the column-parallel GEMMs (QKV, fc1) are
// quantised on the rank's own rows and all-gathered in FP8, or gathered in 16 bits and quantised
// after. Transformer Engine gathers the quantised tensor (LayerNormLinear / LayerNormMLP:
// gather_along_first_dim with the input quantizer), and so does torchao's tensorwise recipe under
// its Float8ColwiseParallel / PrepareFloat8ModuleInput ("the float8 cast happens before the
// all-gather", torchao/float8/float8_tensor_parallel.py); torchao's rowwise recipe has no float8 TP
// plan, so torchtitan runs it under the plain ColwiseParallel: a 16-bit all-gather, then the cast.
bool fp8_gathers_quantized(core::Fp8Recipe r);

// The bytes the kernel tables' measured sequences really moved per element, against the bytes their
// rates are stated over (core::kMemoryOpBytes, core::kCrossEntropyBytes): the backward rows also
// accumulate into the leaf's .grad (read 2 + 2, write 2), a norm's backward reads dy and x twice
// (dx, then the weight gradient), the chunked SwiGLU writes silu(a) before the product and
// concatenates the halves' gradients. Forward and backward, per kind.
struct MeasuredBytes {
  double forward, backward;
};
MeasuredBytes measured_bytes(StreamKind k);

// Each kind's bandwidth, bytes per second of real traffic, forward and backward, from the tables
// (times `hbm_scale`, core::GpuSpec::tables_hbm_scale: tables carried to another HBM); valid only
// when every rate the layer needs was measured.
struct KindRates {
  std::array<double, kStreamKinds> forward{}, backward{};
  bool valid = false;
};
KindRates kind_rates(const core::KernelTables& k, core::Norm norm, double hbm_scale = 1.0);

// Seconds of one pass over `elements` elements, each byte scaled by `width` (2 for fp32 activations).
double pass_seconds(const PassBytes& b, const std::array<double, kStreamKinds>& rate, double elements,
                    double width = 1.0);

}  // namespace ptdsim::analytic
