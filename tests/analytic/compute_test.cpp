#include <catch2/catch.hpp>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/flops.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Precision;

namespace {
core::GemmEfficiency row(Precision p, double n, double e) {
  core::GemmEfficiency r;
  r.precision = p;
  r.m = r.n = r.k = n;
  r.efficiency = e;
  return r;
}
}  // namespace

TEST_CASE("analytic: GEMM efficiency from the calibrated table", "[analytic][compute]") {
  auto g = testing::dgx_a100_80g().gpu;
  SECTION("no table: the flat matmul_efficiency") {
    CHECK(matmul_efficiency(g, Precision::bf16, 4096, 4096, 4096) == Approx(0.8).epsilon(1e-12));
  }
  g.matmul_table = {row(Precision::bf16, 1024, 0.4), row(Precision::bf16, 8192, 0.8), row(Precision::fp8, 8192, 0.6)};
  SECTION("linear in log(m n k): 2048^3 lies a third of the way from 1024^3 to 8192^3") {
    CHECK(matmul_efficiency(g, Precision::bf16, 2048, 2048, 2048) == Approx(0.4 + 0.4 / 3).epsilon(1e-12));
  }
  SECTION("clamped outside the table") {
    CHECK(matmul_efficiency(g, Precision::bf16, 64, 64, 64) == Approx(0.4).epsilon(1e-12));
    CHECK(matmul_efficiency(g, Precision::bf16, 65536, 65536, 65536) == Approx(0.8).epsilon(1e-12));
  }
  SECTION("the precision's own rows, else the 16-bit rows") {
    CHECK(matmul_efficiency(g, Precision::fp8, 1024, 1024, 1024) == Approx(0.6).epsilon(1e-12));
    CHECK(matmul_efficiency(g, Precision::fp16, 8192, 8192, 8192) == Approx(0.8).epsilon(1e-12));
  }
}

TEST_CASE("analytic: GEMM and memory-bound times", "[analytic][compute]") {
  const auto g = testing::dgx_a100_80g().gpu;
  // 2 * 8192^3 / (312e12 * 0.8) = 4.4049e-3 s
  CHECK(gemm_time(g, Precision::bf16, 8192, 8192, 8192) == Approx(2.0 * 8192 * 8192 * 8192 / (312e12 * 0.8)).epsilon(1e-12));
  // 1 GB at 2039 GB/s x 0.85 = 0.57698 ms
  CHECK(memory_time(g, 1e9) == Approx(1e9 / (2039e9 * 0.85)).epsilon(1e-12));
}

TEST_CASE("analytic: one layer's time splits into forward, B and W", "[analytic][compute]") {
  auto s = testing::gpt3_1024();
  s.hardware.gpu.hbm_Bps = 0;  // GEMMs only: every GEMM at the flat 0.8 of 312 TFLOP/s
  const double rate = 312e12 * 0.8, sq = 2048, h = 12288, t = 8;
  const auto lt = layer_times(s, false);
  // forward: (24 s h^2 + 4 s^2 h) / t FLOPs on one GPU
  const double gemm = 24 * sq * h * h / t / rate, core_t = 4 * sq * sq * h / t / rate;
  CHECK(lt.forward_flops == Approx((24 * sq * h * h + 4 * sq * sq * h) / t).epsilon(1e-12));
  CHECK(lt.forward == Approx(gemm + core_t).epsilon(1e-12));
  CHECK(lt.backward_weight == Approx(gemm).epsilon(1e-12));         // W: weight gradients only
  CHECK(lt.backward_input == Approx(gemm + 2 * core_t).epsilon(1e-12));  // B: the attention core is all B
  CHECK(lt.recompute == Approx(core_t).epsilon(1e-12));             // selective: the attention core
  s.training.recompute = core::Recompute::full;
  CHECK(layer_times(s, false).recompute == Approx(gemm + core_t).epsilon(1e-12));
}

TEST_CASE("analytic: memory-bound bytes of a layer", "[analytic][compute]") {
  auto s = testing::gpt3_1024();  // SP, flash attention, gelu
  const double sbh = 2048.0 * 12288, t = 8;
  // norms 8 sbh + dropout/residual 14 sbh, both /t with SP; gelu 4 s b f / t with f = 4h
  CHECK(layer_elementwise_bytes(s, false) == Approx(22 * sbh / t + 16 * sbh / t).epsilon(1e-12));
  s.training.flash_attention = false;  // plus 9 a s^2 b / t for softmax and its dropout
  CHECK(layer_elementwise_bytes(s, false) == Approx(38 * sbh / t + 9.0 * 96 * 2048 * 2048 / t).epsilon(1e-12));
  // optimizer: Adam 34 bytes per parameter updated, SGD 26
  CHECK(optimizer_step_bytes_per_param(s.training) == 34);
}
