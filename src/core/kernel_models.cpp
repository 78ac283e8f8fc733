// The formulas of the fitted kernel models (docs/analytic.md "Compute from measured kernels"):
// evaluated by the analytic engine and by the fits in calibrate alike.
#include <algorithm>
#include <cmath>

#include "ptdsim/core/hardware.hpp"

namespace ptdsim::core {
namespace {

// GEMMs write 2-byte (bf16) outputs in the tables: cuBLAS bf16 and torch._scaled_mm with a bf16
// output, as TransformerEngine's FP8 GEMMs do.
constexpr double kOutputBytes = 2.0;
constexpr double kAttentionElementBytes = 2.0;  // bf16 Q, K, V

}  // namespace

double GemmModel::waves(int sms, double m, double n) const {
  const double tiles = std::ceil(m / tile_m) * std::ceil(n / tile_n);
  const double full = std::floor(tiles / sms);
  const double rest = tiles - full * sms;
  return full + (rest > 0 ? tail + (1 - tail) * rest / sms : 0.0);
}

double GemmModel::time(int sms, double m, double n, double k) const {
  // every SM works through tile_m x tile_n outputs per wave: 2k FLOPs each in the main loop, then
  // the epilogue writes them (the part the next tile's main loop does not hide)
  const double per_output = 2 * k / rate_flops + kOutputBytes / epilogue_Bps;
  const double work = waves(sms, m, n) * sms * tile_m * tile_n * per_output;
  // a smooth maximum of the latency floor and the work, (floor^p + work^p)^(1/p): small GEMMs sit on
  // the floor. Written as hi (1 + (lo/hi)^p)^(1/p) so that no power under- or overflows.
  const double hi = std::max(floor_s, work), lo = std::min(floor_s, work);
  return hi > 0 ? hi * std::pow(1 + std::pow(lo / hi, knee), 1 / knee) : 0.0;
}

double AttentionShape::flops() const {
  const double full = 4 * batch * heads * seq_q * seq_k * head_dim;
  return causal ? full / 2 : full;
}

double AttentionModel::time(const AttentionShape& a, bool backward) const {
  double t = (backward ? 2.5 : 1.0) * a.flops() / rate_flops;
  const double rows = kAttentionElementBytes * a.batch * a.head_dim;
  if (q_Bps > 0) t += rows * a.seq_q * a.heads / q_Bps;
  if (kv_Bps > 0) t += rows * a.seq_k * a.kv_heads / kv_Bps;
  return t;
}

bool gemm_class(Precision p, Precision& out) {
  switch (p) {
    case Precision::bf16:
    case Precision::fp16: out = Precision::bf16; return true;
    case Precision::fp8: out = Precision::fp8; return true;
    default: return false;
  }
}

AttentionTables attention_tables(const GpuSpec& g, Precision p, AttentionKernel kernel) {
  Precision cls;
  if (!g.kernels || !gemm_class(p, cls)) return {};
  const KernelTables& t = *g.kernels;
  const bool cudnn = t.attention_forward.valid() && t.attention_backward.valid();
  const bool flash2 = t.flash2_forward.valid() && t.flash2_backward.valid();
  const bool want_flash2 = kernel == AttentionKernel::flash2;
  if (flash2 && (want_flash2 || !cudnn))
    return {&t.flash2_forward, &t.flash2_backward, AttentionKernel::flash2, !want_flash2};
  if (cudnn) return {&t.attention_forward, &t.attention_backward, AttentionKernel::cudnn, want_flash2};
  return {};
}

}  // namespace ptdsim::core
