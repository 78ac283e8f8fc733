#include "ptdsim/analytic/kernel_times.hpp"

#include <algorithm>
#include <tuple>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::analytic {
namespace {

auto key(const core::GemmTime& r) { return std::make_tuple(static_cast<int>(r.precision), r.m, r.n, r.k); }

}  // namespace

const core::GemmTime* find_gemm_row(const core::KernelTables& t, core::Precision p, double m, double n,
                                    double k) {
  core::GemmTime probe;
  probe.precision = p;
  probe.m = m;
  probe.n = n;
  probe.k = k;
  auto it = std::lower_bound(t.gemm_rows.begin(), t.gemm_rows.end(), probe,
                             [](const core::GemmTime& a, const core::GemmTime& b) { return key(a) < key(b); });
  return it != t.gemm_rows.end() && key(*it) == key(probe) ? &*it : nullptr;
}

// The wave model counts tiles and FLOPs, not operand traffic: a narrow GEMM (a K or V projection
// of one KV head, n = 128) is bound by reading its input x[m,k] instead, which no row of the tables
// measured. The kernel reads x and W once (1 byte an element in FP8, 2 else) and writes y in 16
// bits, at the GPU's achieved HBM bandwidth (the roofline torchao's float8 model uses,
// torchao/testing/float8/roofline_utils.py get_individual_gemm_time_sympy).
double gemm_memory_floor(const core::GpuSpec& g, core::Precision cls, double m, double n, double k) {
  const double bw = g.hbm_Bps * g.hbm_efficiency;
  const double in = cls == core::Precision::fp8 ? 1.0 : 2.0;
  return bw > 0 ? ((m * k + n * k) * in + 2 * m * n) / bw : 0.0;
}

KernelTime gemm_kernel(const core::GpuSpec& g, core::Precision p, double m, double n, double k) {
  core::Precision cls;
  if (g.kernels && core::gemm_class(p, cls)) {
    if (const core::GemmTime* row = find_gemm_row(*g.kernels, cls, m, n, k))
      return {row->time_s / g.sustained_clock, core::TimeSource::measured};
    const core::GemmModel& model = g.kernels->gemm_model[static_cast<std::size_t>(core::index(cls))];
    if (model.valid() && g.sms > 0)
      return {std::max(model.time(g.sms, m, n, k) / g.sustained_clock, gemm_memory_floor(g, cls, m, n, k)),
              core::TimeSource::model};
  }
  return {gemm_time(g, p, m, n, k), core::TimeSource::scalar_efficiency};
}

KernelTime fp8_gemm_kernel(const core::GpuSpec& g, core::Fp8Kernel kernel, double m, double n, double k) {
  if (g.kernels && g.sms > 0) {
    const core::GemmModel& model = g.kernels->fp8_kernels[static_cast<std::size_t>(kernel)];
    if (model.valid()) {
      double t = model.time(g.sms, m, n, k);
      // a shape the tables measured on the tensorwise kernel keeps what its row holds beyond that
      // kernel's model (cuBLAS's pick of tile and split for the shape), scaled by the two models' ratio
      const core::GemmModel& tensorwise = g.kernels->gemm_model[static_cast<std::size_t>(core::index(core::Precision::fp8))];
      if (const core::GemmTime* row = find_gemm_row(*g.kernels, core::Precision::fp8, m, n, k);
          row && tensorwise.valid())
        t = row->time_s * t / tensorwise.time(g.sms, m, n, k);
      return {std::max(t / g.sustained_clock, gemm_memory_floor(g, core::Precision::fp8, m, n, k)),
              core::TimeSource::model};
    }
  }
  return gemm_kernel(g, core::Precision::fp8, m, n, k);
}

std::optional<core::Fp8Kernel> fp8_kernel_of(core::Fp8Recipe recipe, GemmPass pass) {
  switch (recipe) {
    case core::Fp8Recipe::delayed:
    case core::Fp8Recipe::current:
      if (pass == GemmPass::forward) return core::Fp8Kernel::fast_accum;
      break;
    case core::Fp8Recipe::rowwise:
      if (pass == GemmPass::forward) return core::Fp8Kernel::rowwise;
      break;
    case core::Fp8Recipe::blockwise: return core::Fp8Kernel::blockwise;
    case core::Fp8Recipe::mxfp8: return core::Fp8Kernel::mxfp8;
  }
  return std::nullopt;
}

double gemm_epilogue_seconds(const core::GpuSpec& g, core::Precision p, double m, double n, double extra_bytes) {
  core::Precision cls;
  if (!g.kernels || g.sms <= 0 || !core::gemm_class(p, cls)) return 0;
  const core::GemmModel& model = g.kernels->gemm_model[static_cast<std::size_t>(core::index(cls))];
  if (!model.valid() || model.epilogue_Bps <= 0) return 0;
  const double outputs = model.waves(g.sms, m, n) * g.sms * model.tile_m * model.tile_n;
  return outputs * extra_bytes / (model.epilogue_Bps * g.tables_hbm_scale());
}

AttentionTime attention_kernel(const core::GpuSpec& g, core::Precision p, const AttentionShape& a,
                               core::AttentionKernel kernel) {
  const core::AttentionTables t = core::attention_tables(g, p, kernel);
  if (t.forward)
    return {t.forward->time(a, false) / g.sustained_clock, t.backward->time(a, true) / g.sustained_clock,
            core::TimeSource::model};
  return attention_gemms(g, p, a);
}

std::string fp8_kernel_fallback(const core::GpuSpec& g, core::Fp8Kernel kernel) {
  if (g.kernels && g.kernels->fp8_kernels[static_cast<std::size_t>(kernel)].valid()) return {};
  return "no gpu.kernels.gemm.fp8_kernels." + std::string(core::name(kernel)) +
         ": timed as the tensorwise kernel (split accumulation) that the fp8 rows and model measure";
}

std::string attention_fallback(const core::GpuSpec& g, core::Precision p, bool flash_attention,
                               core::AttentionKernel kernel) {
  if (!flash_attention || !core::attention_tables(g, p, kernel).other) return {};
  return kernel == core::AttentionKernel::flash2
             ? "training.attention_kernel flash2: hardware.gpu.kernels has no attention_flash2 rates, so the "
               "attention core is timed from gpu.kernels.attention (cuDNN's fused attention, faster)"
             : "training.attention_kernel cudnn: hardware.gpu.kernels has no attention rates, so the attention "
               "core is timed from gpu.kernels.attention_flash2 (FlashAttention-2, slower)";
}

AttentionTime attention_gemms(const core::GpuSpec& g, core::Precision p, const AttentionShape& a) {
  // scores QK^T (s_q x s_k over head_dim) and the weighted sum PV (s_q x head_dim over s_k), one
  // per head and sequence
  const double count = a.batch * a.heads;
  const KernelTime scores = gemm_kernel(g, p, a.seq_q, a.seq_k, a.head_dim);
  const KernelTime sum = gemm_kernel(g, p, a.seq_q, a.head_dim, a.seq_k);
  AttentionTime out;
  out.forward_s = scores.source == core::TimeSource::scalar_efficiency
                      ? gemm_time(g, p, a.seq_q, a.seq_k, a.head_dim, count) +
                            gemm_time(g, p, a.seq_q, a.head_dim, a.seq_k, count)
                      : count * (scores.time_s + sum.time_s);
  out.backward_s = 2 * out.forward_s;
  out.source = scores.source;
  return out;
}

StreamTime stream_kernel(const core::GpuSpec& g, const core::StreamRate* rate, double elements,
                         double forward_bytes, double backward_bytes) {
  if (rate && rate->valid())
    return {elements * forward_bytes / rate->forward_Bps, elements * backward_bytes / rate->backward_Bps,
            core::TimeSource::model};
  const double f = memory_time(g, elements * forward_bytes);
  return {f, 2 * f, core::TimeSource::hbm_efficiency};
}

}  // namespace ptdsim::analytic
