#pragma once
// ptdsim-calibrate: measures a node's (or, under MPI, a cluster's) collective, GEMM, copy and launch
// rates with CUDA events. Plain C++ against the CUDA runtime, cuBLASLt and NCCL: no nvcc needed.
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/hardware.hpp"

namespace ptdsim::calibrate_tool {

// A failed CUDA/NCCL/cuBLAS call: the tool stops with the call and its error string.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check_cuda(cudaError_t e, const char* what);
void check_nccl(ncclResult_t e, const char* what);
#define PTDSIM_CUDA(call) ::ptdsim::calibrate_tool::check_cuda((call), #call)
#define PTDSIM_NCCL(call) ::ptdsim::calibrate_tool::check_nccl((call), #call)

struct Timing {
  int warmup = 5;
  int iters = 20;
  int repeats = 5;  // the reported time is the median over repeats of (elapsed / iters)
};

// The ranks this process drives: all local GPUs (single process), or one (one process per GPU
// under MPI). `world` is the total number of ranks.
struct LocalRank {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};
struct Team {
  std::vector<LocalRank> local;
  int world = 0;
  int hosts = 1;
  bool mpi = false;
  std::string gpu_name;
};

// Per collective: one nccl-tests-like run (sizes min..max by `factor`), timed with CUDA events,
// its rows printed in nccl-tests' 2022+ layout so the text can also be fed back to
// `ptdsim calibrate import-nccl-tests`.
calibrate::NcclRun measure_collective(Team& team, core::Collective op, double min_bytes, double max_bytes,
                                      double factor, const Timing& t, bool print);

// The slowest rank's value, across processes when running under MPI.
double max_over_ranks(const Team& team, double v);

struct GemmShape {
  std::string name;  // qkv, proj, fc1, fc2
  int hidden = 0, tp = 0, tokens = 0;
  long long m = 0, n = 0, k = 0;
};
// C[m,n] = A[m,k] B[k,n] with cuBLASLt; returns achieved FLOP/s, or 0 when the precision is not
// supported on this GPU (fp8 needs sm >= 89) or cuBLASLt has no algorithm for the shape.
double measure_gemm(int device, core::Precision p, const GemmShape& s, const Timing& t, std::string& why_not);

// Device-to-device cudaMemcpyAsync of `bytes`: bytes read + written per second.
double measure_copy_Bps(int device, double bytes, const Timing& t);
// Back-to-back 4-byte cudaMemsetAsync: the per-operation cost of the smallest stream operation,
// standing in for the kernel launch overhead (no nvcc: no empty kernel of our own).
double measure_launch_s(int device, const Timing& t);

}  // namespace ptdsim::calibrate_tool
