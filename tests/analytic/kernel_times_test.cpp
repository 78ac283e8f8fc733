#include <catch2/catch.hpp>

#include <cmath>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "../common/round_kernel_tables.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Precision;
using core::TimeSource;

TEST_CASE("analytic: a GEMM is a measured row, else the fitted model, else the scalar efficiency",
          "[analytic][kernels]") {
  const auto g = testing::h100_with_tables().gpu;
  SECTION("the measured row, for bf16 and for fp16 (the same tensor cores)") {
    for (auto p : {Precision::bf16, Precision::fp16}) {
      const KernelTime t = gemm_kernel(g, p, 4096, 4096, 4096);
      CHECK(t.source == TimeSource::measured);
      CHECK(t.time_s == 200e-6);
    }
  }
  SECTION("a shape no row measured: the precision's model") {
    const KernelTime t = gemm_kernel(g, Precision::bf16, 4096, 4096, 2048);
    CHECK(t.source == TimeSource::model);
    CHECK(t.time_s == g.kernels->gemm_model[core::index(Precision::bf16)].time(132, 4096, 4096, 2048));
    // fp8: its own model (the bf16 row does not serve it)
    const KernelTime f = gemm_kernel(g, Precision::fp8, 4096, 4096, 4096);
    CHECK(f.source == TimeSource::model);
    CHECK(f.time_s == g.kernels->gemm_model[core::index(Precision::fp8)].time(132, 4096, 4096, 4096));
  }
  SECTION("a narrow GEMM no faster than reading its operands") {
    // a K projection of one KV head: x[98304, 4096] in FP8 (1 byte), W[128, 4096], y[98304, 128]
    // in 16 bits: 403.2 MB in, 25.2 MB out at the file's hbm_Bps x hbm_efficiency
    const double bytes = 98304.0 * 4096 + 128.0 * 4096 + 2.0 * 98304 * 128;
    CHECK(gemm_memory_floor(g, Precision::fp8, 98304, 128, 4096) ==
          Approx(bytes / (g.hbm_Bps * g.hbm_efficiency)).epsilon(1e-12));
    const KernelTime t = gemm_kernel(g, Precision::fp8, 98304, 128, 4096);
    CHECK(t.source == TimeSource::model);
    CHECK(t.time_s == gemm_memory_floor(g, Precision::fp8, 98304, 128, 4096));
    CHECK(t.time_s > g.kernels->gemm_model[core::index(Precision::fp8)].time(132, 98304, 128, 4096));
  }
  SECTION("a precision the tables do not cover: 2mnk / (peak x efficiency)") {
    auto g32 = g;
    g32.peak_flops[core::index(Precision::tf32)] = 494.5e12;
    const KernelTime t = gemm_kernel(g32, Precision::tf32, 4096, 4096, 4096);
    CHECK(t.source == TimeSource::scalar_efficiency);
    CHECK(t.time_s == Approx(2.0 * 4096 * 4096 * 4096 / (494.5e12 * 0.8)).epsilon(1e-12));
  }
  SECTION("no tables at all: the scalar model") {
    const auto a100 = testing::dgx_a100_80g().gpu;
    const KernelTime t = gemm_kernel(a100, Precision::bf16, 4096, 4096, 4096);
    CHECK(t.source == TimeSource::scalar_efficiency);
    CHECK(t.time_s == gemm_time(a100, Precision::bf16, 4096, 4096, 4096));
  }
}

TEST_CASE("analytic: the attention core from its own rates, in bf16 also under FP8", "[analytic][kernels]") {
  const auto g = testing::h100_with_tables().gpu;
  core::AttentionShape a;
  a.batch = 1;
  a.heads = 32;
  a.kv_heads = 8;
  a.seq_q = a.seq_k = 4096;
  // causal: 4 x 32 x 4096^2 x 128 / 2 = 137.44e9 FLOPs: 274.9 us at 500 TFLOP/s forward,
  // 2.5x that at 400 TFLOP/s backward = 859.0 us (the round tables have no per-row terms)
  const double flops = 4.0 * 32 * 4096 * 4096 * 128 / 2;
  for (auto p : {Precision::bf16, Precision::fp8}) {
    const AttentionTime t = attention_kernel(g, p, a);
    CHECK(t.source == TimeSource::model);
    CHECK(t.forward_s == Approx(flops / 500e12).epsilon(1e-12));
    CHECK(t.backward_s == Approx(2.5 * flops / 400e12).epsilon(1e-12));
  }
  SECTION("fp32 training has no flash-attention rates: two batched GEMMs, backward twice") {
    auto g32 = g;
    g32.peak_flops[core::index(Precision::fp32)] = 67e12;
    const AttentionTime t = attention_kernel(g32, Precision::fp32, a);
    CHECK(t.source == TimeSource::scalar_efficiency);
    CHECK(t.forward_s == Approx(2 * gemm_time(g32, Precision::fp32, 4096, 4096, 128, 32)).epsilon(1e-12));
    CHECK(t.backward_s == 2 * t.forward_s);
  }
}

TEST_CASE("analytic: training.attention_kernel flash2 times the core from FlashAttention-2's rates",
          "[analytic][kernels]") {
  auto g = testing::h100_with_tables().gpu;
  core::AttentionShape a;
  a.heads = a.kv_heads = 16;
  a.seq_q = a.seq_k = 2048;
  a.batch = 8;
  // 4 x 8 x 16 x 2048^2 x 128 / 2 = 137.44e9 FLOPs: 458.1 us at 300 TFLOP/s forward, and 2.5x that
  // at 250 TFLOP/s backward = 1374.4 us; cuDNN's table (500 / 400) stays as it was
  const double flops = 4.0 * 8 * 16 * 2048 * 2048 * 128 / 2;
  const AttentionTime cudnn = attention_kernel(g, Precision::bf16, a, core::AttentionKernel::cudnn);
  SECTION("no FlashAttention-2 rates in the file: the cuDNN table (evaluate warns)") {
    const AttentionTime t = attention_kernel(g, Precision::bf16, a, core::AttentionKernel::flash2);
    CHECK(t.forward_s == cudnn.forward_s);
    CHECK(t.backward_s == cudnn.backward_s);
    CHECK(attention_fallback(g, Precision::bf16, true, core::AttentionKernel::flash2).find("attention_flash2") !=
          std::string::npos);
    CHECK(attention_fallback(g, Precision::bf16, true, core::AttentionKernel::cudnn).empty());
  }
  auto tables = std::make_shared<core::KernelTables>(*g.kernels);
  tables->flash2_forward.rate_flops = 300e12;
  tables->flash2_backward.rate_flops = 250e12;
  g.kernels = tables;
  const AttentionTime t = attention_kernel(g, Precision::bf16, a, core::AttentionKernel::flash2);
  CHECK(t.source == TimeSource::model);
  CHECK(t.forward_s == Approx(flops / 300e12).epsilon(1e-12));
  CHECK(t.backward_s == Approx(2.5 * flops / 250e12).epsilon(1e-12));
  CHECK(attention_kernel(g, Precision::bf16, a).forward_s == Approx(flops / 500e12).epsilon(1e-12));
  CHECK(attention_kernel(g, Precision::bf16, a, core::AttentionKernel::cudnn).forward_s == cudnn.forward_s);
  CHECK(attention_fallback(g, Precision::bf16, true, core::AttentionKernel::flash2).empty());
  CHECK(attention_fallback(g, Precision::bf16, true, core::AttentionKernel::cudnn).empty());
  SECTION("only FlashAttention-2's rates: cudnn is timed from them, with a warning") {
    tables->attention_forward = tables->attention_backward = core::AttentionModel{};
    const AttentionTime c = attention_kernel(g, Precision::bf16, a, core::AttentionKernel::cudnn);
    CHECK(c.forward_s == t.forward_s);
    CHECK(c.backward_s == t.backward_s);
    CHECK(attention_fallback(g, Precision::bf16, true, core::AttentionKernel::cudnn).find("attention_flash2") !=
          std::string::npos);
    CHECK(attention_fallback(g, Precision::bf16, false, core::AttentionKernel::cudnn).empty());  // no flash
    CHECK(attention_fallback(g, Precision::fp32, true, core::AttentionKernel::cudnn).empty());   // two GEMMs
  }
}

TEST_CASE("analytic: a memory-bound kernel at its class's measured bandwidth, else at hbm_efficiency",
          "[analytic][kernels]") {
  const auto g = testing::h100_with_tables().gpu;
  const core::StreamRate rate{2e12, 1e12};
  // 1e9 elements: 4 bytes each at 2 TB/s = 2 ms forward, 6 bytes at 1 TB/s = 6 ms backward
  const StreamTime t = stream_kernel(g, &rate, 1e9, 4, 6);
  CHECK(t.source == TimeSource::model);
  CHECK(t.forward_s == Approx(2e-3).epsilon(1e-12));
  CHECK(t.backward_s == Approx(6e-3).epsilon(1e-12));
  // no rate: 4 GB at 3350 GB/s x 0.85, the backward twice the forward
  const StreamTime s = stream_kernel(g, nullptr, 1e9, 4, 6);
  CHECK(s.source == TimeSource::hbm_efficiency);
  CHECK(s.forward_s == Approx(4e9 / (3350e9 * 0.85)).epsilon(1e-12));
  CHECK(s.backward_s == 2 * s.forward_s);
}

TEST_CASE("analytic: each pass of an FP8 recipe on the kernel its framework runs", "[analytic][kernels]") {
  using core::Fp8Kernel;
  using core::Fp8Recipe;
  // Transformer Engine and torchao: fast accumulation forward, split accumulation for the gradients
  for (auto r : {Fp8Recipe::delayed, Fp8Recipe::current}) {
    CHECK(fp8_kernel_of(r, GemmPass::forward) == Fp8Kernel::fast_accum);
    CHECK_FALSE(fp8_kernel_of(r, GemmPass::input_grad).has_value());
    CHECK_FALSE(fp8_kernel_of(r, GemmPass::weight_grad).has_value());
  }
  // torchao's rowwise: the rowwise kernel forward, the tensorwise one (unit scales) for the gradients
  CHECK(fp8_kernel_of(Fp8Recipe::rowwise, GemmPass::forward) == Fp8Kernel::rowwise);
  CHECK_FALSE(fp8_kernel_of(Fp8Recipe::rowwise, GemmPass::input_grad).has_value());
  CHECK_FALSE(fp8_kernel_of(Fp8Recipe::rowwise, GemmPass::weight_grad).has_value());
  for (auto p : {GemmPass::forward, GemmPass::input_grad, GemmPass::weight_grad}) {
    CHECK(fp8_kernel_of(Fp8Recipe::blockwise, p) == Fp8Kernel::blockwise);
    CHECK(fp8_kernel_of(Fp8Recipe::mxfp8, p) == Fp8Kernel::mxfp8);
  }
}

TEST_CASE("analytic: an FP8 kernel's own model where the tables hold one, else the fp8 rows and model",
          "[analytic][kernels]") {
  auto hw = testing::h100_with_tables();
  const core::GemmModel fp8 = hw.gpu.kernels->gemm_model[core::index(Precision::fp8)];  // a copy: the tables change
  SECTION("not measured: the tensorwise kernel's time, as before") {
    for (auto k : {core::Fp8Kernel::fast_accum, core::Fp8Kernel::rowwise, core::Fp8Kernel::blockwise}) {
      const KernelTime t = fp8_gemm_kernel(hw.gpu, k, 8192, 8192, 8192);
      CHECK(t.time_s == gemm_kernel(hw.gpu, Precision::fp8, 8192, 8192, 8192).time_s);
      CHECK(t.time_s == fp8.time(132, 8192, 8192, 8192));
    }
  }
  SECTION("measured: its model, at the sustained clock, no faster than reading the operands") {
    auto k = std::make_shared<core::KernelTables>(*hw.gpu.kernels);
    k->fp8_kernels[static_cast<std::size_t>(core::Fp8Kernel::fast_accum)] = testing::round_gemm_model(1800);
    hw.gpu.kernels = k;
    hw.gpu.sustained_clock = 0.9;
    const KernelTime t = fp8_gemm_kernel(hw.gpu, core::Fp8Kernel::fast_accum, 8192, 8192, 8192);
    CHECK(t.source == TimeSource::model);
    CHECK(t.time_s == testing::round_gemm_model(1800).time(132, 8192, 8192, 8192) / 0.9);
    // hand-worked: 64 x 64 = 4096 tiles of 128 x 128 over 132 SMs, 31 full waves and 4 tiles more
    // (0.25 + 0.75 x 4/132 of a wave); each output 2 x 8192 FLOPs at 1800 TFLOP/s and 2 bytes at 4
    // TB/s; then the smooth maximum (p = 2) with the 20 us floor, at 0.9 of the tables' clock
    const double waves = 31 + 0.25 + 0.75 * 4 / 132;
    const double work = waves * 132 * 128 * 128 * (2 * 8192 / 1800e12 + 2 / 4e12);
    CHECK(t.time_s == Approx(std::sqrt(work * work + 20e-6 * 20e-6) / 0.9).epsilon(1e-12));
    // a narrow GEMM: reading its operands, the floor under every kernel's model
    CHECK(fp8_gemm_kernel(hw.gpu, core::Fp8Kernel::fast_accum, 98304, 128, 4096).time_s ==
          gemm_memory_floor(hw.gpu, Precision::fp8, 98304, 128, 4096));
    // a shape with a measured tensorwise row: the row, times the ratio of the two models
    auto with_row = std::make_shared<core::KernelTables>(*k);
    with_row->gemm_rows.push_back({Precision::fp8, 8192, 8192, 8192, 700e-6});
    hw.gpu.kernels = with_row;
    CHECK(fp8_gemm_kernel(hw.gpu, core::Fp8Kernel::fast_accum, 8192, 8192, 8192).time_s ==
          Approx(700e-6 * testing::round_gemm_model(1800).time(132, 8192, 8192, 8192) /
                 fp8.time(132, 8192, 8192, 8192) / 0.9)
              .epsilon(1e-12));
    hw.gpu.kernels = k;
    // the other kernels are still not measured
    CHECK(fp8_gemm_kernel(hw.gpu, core::Fp8Kernel::rowwise, 8192, 8192, 8192).time_s ==
          gemm_kernel(hw.gpu, Precision::fp8, 8192, 8192, 8192).time_s);
  }
}
