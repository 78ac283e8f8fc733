#pragma once
#include <string>
#include <vector>

#include "ptdsim/calibrate/gemm_shapes.hpp"
#include "ptdsim/core/hardware.hpp"

// The kernel tables ptdsim-calibrate --tables DIR writes, in the columns of the measured H100 tables
// (calibrate/data/h100/, read by `ptdsim calibrate import-kernels`): gemm.csv and contention.csv.
// One extra column at the end of each, `gpu`, names the GPU the row was measured on
// (docs/calibration.md "Kernel tables").
namespace ptdsim::calibrate {

struct GemmRow {
  core::Precision precision = core::Precision::bf16;
  GemmShape shape;
  double time_s = 0;
  std::string gpu;
};

// A bf16 GEMM alone and beside a copy kernel confined to `blocks` thread blocks (the way an NCCL
// collective holds a few SMs), and the copy alone and beside the GEMM.
struct ContentionRow {
  long long m = 0, n = 0, k = 0;
  int blocks = 0;
  double gemm_alone_s = 0, gemm_with_copy_s = 0;
  double copy_alone_Bps = 0, copy_with_gemm_Bps = 0;  // bytes read + written per second
  std::string gpu;
};

// precision,hidden,ffn,heads,kv_heads,tp,op,m,n,k,time_s,tflops,gpu (tflops = 2mnk / time / 1e12)
std::string gemm_csv(const std::vector<GemmRow>& rows);
// m,n,k,blocks,gemm_alone_s,gemm_with_copy_s,slowdown,copy_alone_GBps,copy_with_gemm_GBps,gpu
std::string contention_csv(const std::vector<ContentionRow>& rows);

}  // namespace ptdsim::calibrate
