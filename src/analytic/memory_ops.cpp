#include "ptdsim/analytic/memory_ops.hpp"

namespace ptdsim::analytic {
namespace {

constexpr std::size_t idx(StreamKind k) { return static_cast<std::size_t>(k); }

PassBytes one(StreamKind k, double bytes) {
  PassBytes p;
  p.bytes[idx(k)] = bytes;
  return p;
}
PassBytes two(StreamKind a, double x, StreamKind b, double y) {
  PassBytes p = one(a, x);
  p.bytes[idx(b)] += y;
  return p;
}

}  // namespace

double PassBytes::total() const {
  double s = 0;
  for (double b : bytes) s += b;
  return s;
}

// Norm: the forward reads x and writes y (4) either way. The backward of PyTorch's layer_norm and
// rms_norm (and Apex's) runs two passes over dy and x: dx (read 4, write 2), then the weight
// gradient (read 4): 10. TransformerEngine's norm backward reads them once, writing dx and per-block
// partial weight gradients that a small kernel sums: 6.
OpBytes norm_bytes(core::Fusion f) {
  return {one(StreamKind::norm, 4), one(StreamKind::norm, f == core::Fusion::eager ? 10 : 6)};
}

// GeLU: one kernel each way (read 2, write 2; backward read dy and x, write dx), fused with the bias
// or not (nn.Linear adds the bias in the GEMM's epilogue).
OpBytes gelu_bytes(core::Fusion) { return {one(StreamKind::gelu, 4), one(StreamKind::gelu, 6)}; }

// SwiGLU per output element. Eager (silu(a) * b over the halves of fc1_gated's output): silu reads a
// and writes s (4), the product reads s and b and writes y (6): 10; backward, the product's two
// gradients (read dy and b, write ds; read dy and s, write db: 12), silu's (read ds and a, write da:
// 6) and the concatenation of da and db into one gradient (read 4, write 4): 26. Fused (Megatron's
// bias_swiglu, TransformerEngine's swiglu, torch.compile): read a and b, write y (6); backward read
// dy, a and b, write da and db (10), contiguous.
OpBytes swiglu_bytes(core::Fusion f) {
  if (f == core::Fusion::eager) return {one(StreamKind::swiglu_chunked, 10), one(StreamKind::swiglu_chunked, 26)};
  return {one(StreamKind::pointwise, 6), one(StreamKind::pointwise, 10)};
}

// Dropout and the residual add. Eager: dropout (read 2, write 2 and a 1-byte mask: 5), then the add
// (read two, write one: 6). Fused (Megatron's bias_dropout_add): one kernel reading x and the
// residual and writing the sum and the mask (7), drawing the random numbers as dropout does. The
// backward is the same either way: dropout's (read dy and the mask, write dx: 5), and the gradient
// sum where the two branches meet (6).
OpBytes dropout_add_bytes(core::Fusion f) {
  const PassBytes backward = two(StreamKind::dropout, 5, StreamKind::pointwise, 6);
  if (f == core::Fusion::eager) return {two(StreamKind::dropout, 5, StreamKind::pointwise, 6), backward};
  return {one(StreamKind::dropout, 7), backward};
}

// RoPE on q and k, per element. Eager: Megatron's unfused t * cos + rotate_half(t) * sin (the
// negated half 2, the concatenation 4, two products 4 + 4, the sum 6) and torchtitan's complex
// product (cast to fp32: read 2, write 4; the complex product: read 4, write 4; cast back: read 4,
// write 2) both move 20 bytes, and their backward as many. Fused (TransformerEngine's fused_rope,
// Megatron's --apply-rope-fusion, torch.compile): read 2, write 2, each way.
OpBytes rope_bytes(core::Fusion f) {
  const double b = f == core::Fusion::eager ? 20 : 4;
  return {one(StreamKind::pointwise, b), one(StreamKind::pointwise, b)};
}

// Cross-entropy per logit (fp32 work). Eager, F.cross_entropy(logits.float()): the cast (read 2,
// write 4), log_softmax's max, sum and write passes (read 4 + 4 + 4, write 4): 22 forward; backward
// nll_loss's zero-filled gradient (write 4), log_softmax's backward (read 4 + 4, write 4) and the
// cast back (read 4, write 2): 22. Megatron's vocab_parallel (unfused): the cast (6), max (4),
// subtract (8), exp (8), sum (4), divide (8): 38 forward; backward scales the saved softmax in place
// (8) and casts back (6): 14. Fused (Megatron's --cross-entropy-loss-fusion, TransformerEngine's and
// flash-attn's Triton losses): the 16-bit logits read twice (max and sum, then the gradient written
// in their place: 2 + 2 + 2) in the forward, and the gradient scaled in place (4) backward.
// PyTorch's loss_parallel (torch/distributed/tensor/parallel/loss.py: `_log_softmax`, then
// `_nll_loss_and_log_softmax_backward`), each step its own op: the cast (6), amax (4), subtract (8),
// exp (8), sum (4), subtract the log-sum (8): 38 forward; backward zeros_like (write 4), exp of the
// saved output (8), their sum (12), times the per-row gradient (8), the cast back (6): 38.
OpBytes cross_entropy_bytes(core::LossFusion f) {
  switch (f) {
    case core::LossFusion::eager:
      return {one(StreamKind::softmax, 22), one(StreamKind::softmax, 22)};
    case core::LossFusion::vocab_parallel:
      return {one(StreamKind::softmax, 38), one(StreamKind::softmax, 14)};
    case core::LossFusion::loss_parallel:
      return {one(StreamKind::softmax, 38), one(StreamKind::softmax, 38)};
    case core::LossFusion::fused:
      break;
  }
  return {one(StreamKind::softmax, 6), one(StreamKind::pointwise, 4)};
}

core::LossFusion loss_as_run(core::LossFusion f, int tp) {
  return f == core::LossFusion::loss_parallel && tp == 1 ? core::LossFusion::eager : f;
}

// Delayed tensorwise scaling (TransformerEngine's cast_transpose): read 2, write the FP8 copy and
// its transpose (1 + 1), the amax taken on the way. Current tensorwise scaling reads the tensor once
// more for its amax first (2 + 4). Blockwise (1x128) and MXFP8 (1x32) scale along the GEMM's
// reduction dimension, which differs for the transposed copy: each copy is its own pass (read 2,
// write 1), 3 + 3. Rowwise is torchao's (Float8LinearConfig "rowwise"), as its roofline model
// counts it (torchao/testing/float8/roofline_utils.py, pytorch/ao@6243040): a first kernel reads
// the tensor and writes its row-scaled FP8 copy and a transposed 16-bit copy (2 + 1 + 2), a second
// reads that copy and writes the column-scaled FP8 one (2 + 1): 8.
// Under torch.compile the kernel that produces an activation or an output gradient does the first
// pass of its cast on the way, which torchao's roofline model assumes of compiled training
// (torchao/testing/training/roofline_utils.py `fuse_with_prev`, which benchmarks/float8/float8_roofline.py
// turns on for the inputs and output gradients: "assume for float8 activations/gradients that
// torch.compile will fuse to the preceding op"): that pass's read of the 16-bit tensor goes, the amax
// of tensorwise scaling (6 -> 4), rowwise's first kernel (8 -> 6), the first layout of blockwise and
// MXFP8 (6 -> 4, `fuse_read`). Delayed scaling is TransformerEngine's, whose casts are its own kernels
// (or its fused norm's, fusion.norm).
double fp8_cast_bytes(core::Fp8Recipe r, core::Fusion cast) {
  if (r == core::Fp8Recipe::delayed) return 4;
  const double unfused = r == core::Fp8Recipe::rowwise ? 8 : 6;
  return cast == core::Fusion::fused ? unfused - 2 : unfused;
}

// torchao's rowwise recipe runs its two backward GEMMs (use_fast_accum off) as cuBLAS's tensorwise
// kernel with unit scales and then multiplies the 16-bit output by the row and column scales, one
// more pass (read 2, write 2) over each output (float8_ops.py addmm_float8_unwrapped, pytorch/ao@6243040;
// pytorch/ao#2184: at least one extra kernel per GEMM under torch.compile). No other recipe has it.
double fp8_rescale_bytes(core::Fp8Recipe r) { return r == core::Fp8Recipe::rowwise ? 4 : 0; }

bool fp8_gathers_quantized(core::Fp8Recipe r) { return r != core::Fp8Recipe::rowwise; }

// What calibrate/data/h100's measuring script ran per element (its rows time forward, and forward +
// backward with the input a leaf whose .grad accumulates): residual_add (x + g: 6; backward only the
// accumulation, 6); a norm (4; backward dx 6, weight gradient 4, accumulation 6: 16); dropout (5;
// backward 5 + 6 = 11); GeLU (4; backward 6 + 6 = 12); SwiGLU on the chunked [tokens, 2 width]
// tensor (10; backward 26 less nothing, plus the accumulation of the [tokens, 2 width] gradient per
// output element, read 8 write 4: 38); cross-entropy on fp32-cast logits (22; backward 22 and the
// accumulation into the 16-bit logits' gradient, 6: 28).
MeasuredBytes measured_bytes(StreamKind k) {
  switch (k) {
    case StreamKind::pointwise: return {6, 6};
    case StreamKind::norm: return {4, 16};
    case StreamKind::dropout: return {5, 11};
    case StreamKind::gelu: return {4, 12};
    case StreamKind::swiglu_chunked: return {10, 38};
    case StreamKind::softmax: break;
  }
  return {22, 28};
}

KindRates kind_rates(const core::KernelTables& k, core::Norm norm, double hbm_scale) {
  KindRates r;
  const core::MemoryOp norm_op = norm == core::Norm::rmsnorm ? core::MemoryOp::rmsnorm : core::MemoryOp::layernorm;
  const auto rate = [&](core::MemoryOp op) { return k.memory_bound[static_cast<std::size_t>(op)]; };
  const std::array<std::pair<core::StreamRate, core::ElementBytes>, kStreamKinds> stated{{
      {rate(core::MemoryOp::residual_add), core::memory_op_bytes(core::MemoryOp::residual_add)},
      {rate(norm_op), core::memory_op_bytes(norm_op)},
      {rate(core::MemoryOp::dropout), core::memory_op_bytes(core::MemoryOp::dropout)},
      {rate(core::MemoryOp::gelu), core::memory_op_bytes(core::MemoryOp::gelu)},
      {rate(core::MemoryOp::swiglu), core::memory_op_bytes(core::MemoryOp::swiglu)},
      {k.cross_entropy, core::kCrossEntropyBytes},
  }};
  r.valid = true;
  for (std::size_t i = 0; i < stated.size(); ++i) {
    const auto& [s, nominal] = stated[i];
    if (!s.valid()) {
      r.valid = false;
      continue;
    }
    // a rate stated over nominal bytes, times the real bytes over the nominal ones: the same time
    const MeasuredBytes real = measured_bytes(static_cast<StreamKind>(i));
    r.forward[i] = hbm_scale * s.forward_Bps * real.forward / nominal.forward;
    r.backward[i] = hbm_scale * s.backward_Bps * real.backward / nominal.backward;
  }
  return r;
}

double pass_seconds(const PassBytes& b, const std::array<double, kStreamKinds>& rate, double elements,
                    double width) {
  double s = 0;
  for (std::size_t i = 0; i < b.bytes.size(); ++i)
    if (b.bytes[i] > 0) s += elements * width * b.bytes[i] / rate[i];
  return s;
}

}  // namespace ptdsim::analytic
