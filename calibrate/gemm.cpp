#include <cublasLt.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench.hpp"

namespace ptdsim::calibrate_tool {
namespace {

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw DeviceError(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
#define PTDSIM_BLAS(call) check_blas((call), #call)

struct Types {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  std::size_t ab_bytes, cd_bytes;
};

Types types_of(core::Precision p) {
  switch (p) {
    case core::Precision::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2};
    case core::Precision::fp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2};
    case core::Precision::tf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4};
    case core::Precision::fp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4};
    // FP8 (E4M3 inputs, BF16 output, FP32 accumulation): the layout Transformer Engine uses
    case core::Precision::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2};
    case core::Precision::fp4: break;  // a peak rate only; measure_gemm refuses it
  }
  return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2};
}

}  // namespace

// Every precision runs "TN" (A transposed, B not, column-major), the one layout cuBLASLt accepts for
// FP8 and a fast one for the others: D[M,N] = A^T[M,K] B[K,N] with M = n (output features),
// N = m (tokens), K = k, so the FLOPs are 2mnk as for C[m,n] = A[m,k] B[k,n].
double measure_gemm(int device, core::Precision p, const GemmShape& s, const Timing& t, std::string& why_not) {
  PTDSIM_CUDA(cudaSetDevice(device));
  cudaDeviceProp prop{};
  PTDSIM_CUDA(cudaGetDeviceProperties(&prop, device));
  const int sm = prop.major * 10 + prop.minor;
  if (p == core::Precision::fp4) {
    why_not = "fp4 GEMMs are not measured (fp4 is a peak rate only in ptdsim)";
    return 0;
  }
  if (p == core::Precision::fp8 && sm < 89) {
    why_not = "fp8 needs sm_89 or newer, this GPU is sm_" + std::to_string(sm);
    return 0;
  }
  const Types ty = types_of(p);
  const auto M = static_cast<std::uint64_t>(s.n), N = static_cast<std::uint64_t>(s.m), K = static_cast<std::uint64_t>(s.k);
  void *a = nullptr, *b = nullptr, *d = nullptr, *work = nullptr;
  const std::size_t work_bytes = 32u << 20;
  PTDSIM_CUDA(cudaMalloc(&a, M * K * ty.ab_bytes));
  PTDSIM_CUDA(cudaMalloc(&b, K * N * ty.ab_bytes));
  PTDSIM_CUDA(cudaMalloc(&d, M * N * ty.cd_bytes));
  PTDSIM_CUDA(cudaMalloc(&work, work_bytes));
  // a non-zero, finite byte pattern in every format (0x3c: 1.5 in E4M3, ~1.06 in FP16)
  PTDSIM_CUDA(cudaMemset(a, 0x3c, M * K * ty.ab_bytes));
  PTDSIM_CUDA(cudaMemset(b, 0x3c, K * N * ty.ab_bytes));
  cudaStream_t stream = nullptr;
  PTDSIM_CUDA(cudaStreamCreate(&stream));

  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  PTDSIM_BLAS(cublasLtCreate(&lt));
  PTDSIM_BLAS(cublasLtMatmulDescCreate(&op, ty.compute, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, none = CUBLAS_OP_N;
  PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
  PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
  float* scale = nullptr;  // FP8 scales: device pointers to 1.0f (unscaled data)
  if (p == core::Precision::fp8) {
    const float one = 1.0f;
    PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&scale), sizeof one));
    PTDSIM_CUDA(cudaMemcpy(scale, &one, sizeof one, cudaMemcpyHostToDevice));
    PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale));
    PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof scale));
  }
  PTDSIM_BLAS(cublasLtMatrixLayoutCreate(&la, ty.ab, K, M, K));  // A stored K x M, used transposed
  PTDSIM_BLAS(cublasLtMatrixLayoutCreate(&lb, ty.ab, K, N, K));
  PTDSIM_BLAS(cublasLtMatrixLayoutCreate(&ld, ty.cd, M, N, M));
  PTDSIM_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  PTDSIM_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &work_bytes,
                                                   sizeof work_bytes));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found);
  double flops_per_s = 0;
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    why_not = "cuBLASLt has no algorithm for this shape and precision";
  } else {
    const float alpha = 1.0f, beta = 0.0f;
    auto run = [&] {
      PTDSIM_BLAS(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo, work,
                                 work_bytes, stream));
    };
    for (int w = 0; w < t.warmup; ++w) run();
    cudaEvent_t e0, e1;
    PTDSIM_CUDA(cudaEventCreate(&e0));
    PTDSIM_CUDA(cudaEventCreate(&e1));
    std::vector<double> per_op;
    for (int rep = 0; rep < t.repeats; ++rep) {
      PTDSIM_CUDA(cudaEventRecord(e0, stream));
      for (int it = 0; it < t.iters; ++it) run();
      PTDSIM_CUDA(cudaEventRecord(e1, stream));
      PTDSIM_CUDA(cudaEventSynchronize(e1));
      float ms = 0;
      PTDSIM_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      per_op.push_back(ms * 1e-3 / t.iters);
    }
    std::sort(per_op.begin(), per_op.end());
    flops_per_s = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) /
                  per_op[per_op.size() / 2];
    PTDSIM_CUDA(cudaEventDestroy(e0));
    PTDSIM_CUDA(cudaEventDestroy(e1));
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  cudaStreamDestroy(stream);
  cudaFree(scale);
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  cudaFree(work);
  return flops_per_s;
}

namespace {
template <class Op>
double median_per_op(int device, const Timing& t, Op op) {
  PTDSIM_CUDA(cudaSetDevice(device));
  cudaStream_t stream = nullptr;
  PTDSIM_CUDA(cudaStreamCreate(&stream));
  cudaEvent_t e0, e1;
  PTDSIM_CUDA(cudaEventCreate(&e0));
  PTDSIM_CUDA(cudaEventCreate(&e1));
  for (int w = 0; w < t.warmup; ++w) op(stream);
  std::vector<double> per_op;
  for (int rep = 0; rep < t.repeats; ++rep) {
    PTDSIM_CUDA(cudaEventRecord(e0, stream));
    for (int it = 0; it < t.iters; ++it) op(stream);
    PTDSIM_CUDA(cudaEventRecord(e1, stream));
    PTDSIM_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    PTDSIM_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    per_op.push_back(ms * 1e-3 / t.iters);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  std::sort(per_op.begin(), per_op.end());
  return per_op[per_op.size() / 2];
}
}  // namespace

double measure_copy_Bps(int device, double bytes, const Timing& t) {
  PTDSIM_CUDA(cudaSetDevice(device));
  const auto n = static_cast<std::size_t>(bytes);
  void *src = nullptr, *dst = nullptr;
  PTDSIM_CUDA(cudaMalloc(&src, n));
  PTDSIM_CUDA(cudaMalloc(&dst, n));
  double s = median_per_op(device, t, [&](cudaStream_t st) {
    PTDSIM_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, st));
  });
  cudaFree(src);
  cudaFree(dst);
  return 2 * bytes / s;  // each byte is read once and written once
}

double measure_launch_s(int device, const Timing& t) {
  PTDSIM_CUDA(cudaSetDevice(device));
  void* p = nullptr;
  PTDSIM_CUDA(cudaMalloc(&p, 4));
  Timing many = t;
  many.iters = std::max(1000, t.iters);
  double s = median_per_op(device, many, [&](cudaStream_t st) { PTDSIM_CUDA(cudaMemsetAsync(p, 0, 4, st)); });
  cudaFree(p);
  return s;
}

}  // namespace ptdsim::calibrate_tool
