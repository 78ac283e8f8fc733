#pragma once
// Kernel tables built in code for the analytic tests: round numbers, so expected times can be
// worked by hand (the shipped H100 tables are tested in tests/calibrate and tests/cli).
#include <memory>

#include "scenarios.hpp"

namespace ptdsim::testing {

inline core::GemmModel round_gemm_model(double tflops) {
  core::GemmModel m;
  m.rate_flops = tflops * 1e12;
  m.epilogue_Bps = 4e12;
  m.floor_s = 20e-6;
  m.knee = 2;
  m.tail = 0.25;
  m.tile_m = m.tile_n = 128;
  return m;
}

// bf16 800 TFLOP/s and fp8 1600 TFLOP/s GEMM models, one measured bf16 row (4096 x 4096 x 4096 in
// 200 us), attention 500 TFLOP/s forward and 400 backward without per-row terms, every memory-bound
// class at 2 TB/s forward and 1 TB/s backward, cross-entropy likewise, the optimizer at 2.5 TB/s.
inline std::shared_ptr<core::KernelTables> round_tables() {
  auto t = std::make_shared<core::KernelTables>();
  t->source = "round numbers for tests";
  t->gemm_model[core::index(core::Precision::bf16)] = round_gemm_model(800);
  t->gemm_model[core::index(core::Precision::fp8)] = round_gemm_model(1600);
  t->gemm_rows = {{core::Precision::bf16, 4096, 4096, 4096, 200e-6}};
  t->attention_forward.rate_flops = 500e12;
  t->attention_backward.rate_flops = 400e12;
  for (auto& r : t->memory_bound) r = {2e12, 1e12};
  t->cross_entropy = {2e12, 1e12};
  t->optimizer_Bps = 2.5e12;
  return t;
}

// DGX H100-like hardware carrying round_tables(): 132 SMs, 16 held by a collective.
inline core::HardwareSpec h100_with_tables() {
  core::HardwareSpec hw = dgx_a100_80g();
  hw.name = "dgx-h100-test";
  hw.gpu.name = "H100-test";
  hw.gpu.hbm_Bps = 3350e9;
  hw.gpu.peak_flops[core::index(core::Precision::bf16)] = 989e12;
  hw.gpu.peak_flops[core::index(core::Precision::fp16)] = 989e12;
  hw.gpu.peak_flops[core::index(core::Precision::fp8)] = 1979e12;
  hw.gpu.sms = 132;
  hw.gpu.comm_sms = 16;
  hw.gpu.kernels = round_tables();
  return hw;
}

}  // namespace ptdsim::testing
