// GEMMs as the MAMF method measures them (Bekman, "Maximum Achievable Matmul FLOPS finder"): random
// normal inputs, several cuBLASLt algorithms timed per shape and the fastest kept, enough warm-up
// and iterations for a stable median. Constant inputs toggle fewer bits, draw less power and run
// at higher clocks: on an H100 they overstate bf16 GEMM rates by a median 11.5%
// (calibrate/data/h100/gemm_random_vs_constant.csv). Also the device copy and launch overhead.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench.hpp"
#include "kernels.hpp"

namespace ptdsim::calibrate_tool {
namespace {

struct Types {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  Element element;
  std::size_t ab_bytes, cd_bytes;
};

Types types_of(core::Precision p) {
  switch (p) {
    case core::Precision::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::bf16, 2, 2};
    case core::Precision::fp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, Element::f16, 2, 2};
    case core::Precision::tf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Element::f32, 4, 4};
    case core::Precision::fp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, Element::f32, 4, 4};
    // FP8 (E4M3 inputs, BF16 output, FP32 accumulation): what Transformer Engine and torch._scaled_mm run
    case core::Precision::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::e4m3, 1, 2};
    case core::Precision::fp4: break;  // a peak rate only: unsupported() refuses it
  }
  return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::bf16, 2, 2};
}

// n normal(0, 1) values in `dst` as `e`: cuRAND's Philox generates floats in chunks (its normal
// generator wants an even count), a kernel converts them.
void fill_normal(curandGenerator_t gen, void* dst, std::size_t n, Element e, std::size_t element_bytes,
                 cudaStream_t stream) {
  const std::size_t chunk = std::min<std::size_t>(n, std::size_t(1) << 26);
  float* scratch = nullptr;
  PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&scratch), (chunk + 1) * sizeof(float)));
  for (std::size_t at = 0; at < n; at += chunk) {
    const std::size_t len = std::min(chunk, n - at);
    PTDSIM_RAND(curandGenerateNormal(gen, scratch, len + (len & 1), 0.0f, 1.0f));
    PTDSIM_CUDA(launch_cast(scratch, static_cast<char*>(dst) + at * element_bytes, len, e, stream));
  }
  PTDSIM_CUDA(cudaStreamSynchronize(stream));
  cudaFree(scratch);
}

float to_float(const void* p, std::size_t i, cudaDataType_t t) {
  switch (t) {
    case CUDA_R_16BF: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case CUDA_R_16F: return __half2float(static_cast<const __half*>(p)[i]);
    case CUDA_R_8F_E4M3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

}  // namespace

std::string unsupported(core::Precision p, int sm) {
  if (p == core::Precision::fp4) return "fp4 GEMMs are not measured (fp4 is a peak rate only in ptdsim)";
  if (p == core::Precision::fp8 && sm < 89) return "fp8 needs sm_89 or newer, this GPU is sm_" + std::to_string(sm);
  if ((p == core::Precision::bf16 || p == core::Precision::tf32) && sm < 80)
    return std::string(p == core::Precision::bf16 ? "bf16" : "tf32") + " needs sm_80 or newer, this GPU is sm_" +
           std::to_string(sm);
  return "";
}

// Every precision runs "TN" (A transposed, B not, column-major), the one layout cuBLASLt accepts for
// FP8 and the one nn.Linear's y = x W^T maps to: D[M,N] = A^T[M,K] B[K,N] with M = n (output
// features, A = W stored [n,k] row-major), N = m (tokens, B = x stored [m,k] row-major), K = k. The
// FLOPs are 2mnk as for C[m,n] = A[m,k] B[k,n].
Gemm::Gemm(int device, core::Precision p, long long m, long long n, long long k, int algos, const Timing& t,
           unsigned long long seed)
    : device_(device), precision_(p), m_(m), n_(n), k_(k) {
  try {
    setup(algos, t, seed);
  } catch (...) {
    release();  // no destructor runs for a constructor that throws
    throw;
  }
}

void Gemm::setup(int algos, const Timing& t, unsigned long long seed) {
  const core::Precision p = precision_;
  const int device = device_;
  const long long m = m_, n = n_, k = k_;
  PTDSIM_CUDA(cudaSetDevice(device));
  cudaDeviceProp prop{};
  PTDSIM_CUDA(cudaGetDeviceProperties(&prop, device));
  why_not_ = unsupported(p, prop.major * 10 + prop.minor);
  if (!why_not_.empty()) return;
  const Types ty = types_of(p);
  const auto M = static_cast<std::uint64_t>(n), N = static_cast<std::uint64_t>(m), K = static_cast<std::uint64_t>(k);
  PTDSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  PTDSIM_CUDA(cudaMalloc(&a_, M * K * ty.ab_bytes));
  PTDSIM_CUDA(cudaMalloc(&b_, K * N * ty.ab_bytes));
  PTDSIM_CUDA(cudaMalloc(&d_, M * N * ty.cd_bytes));
  PTDSIM_CUDA(cudaMalloc(&work_, work_bytes_));
  curandGenerator_t gen = nullptr;
  PTDSIM_RAND(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  PTDSIM_RAND(curandSetPseudoRandomGeneratorSeed(gen, seed));
  PTDSIM_RAND(curandSetStream(gen, stream_));
  fill_normal(gen, a_, M * K, ty.element, ty.ab_bytes, stream_);
  fill_normal(gen, b_, K * N, ty.element, ty.ab_bytes, stream_);
  curandDestroyGenerator(gen);

  PTDSIM_BLAS(cublasLtCreate(&lt_));
  PTDSIM_BLAS(cublasLtMatmulDescCreate(&op_, ty.compute, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, none = CUBLAS_OP_N;
  PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
  PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
  if (p == core::Precision::fp8) {
    // unit scales: the inputs are unscaled normal values, well inside E4M3's range
    const float one = 1.0f;
    PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&scale_), sizeof one));
    PTDSIM_CUDA(cudaMemcpy(scale_, &one, sizeof one, cudaMemcpyHostToDevice));
    PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_, sizeof scale_));
    PTDSIM_BLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_, sizeof scale_));
  }
  PTDSIM_BLAS(cublasLtMatrixLayoutCreate(&la_, ty.ab, K, M, K));  // A stored K x M, used transposed
  PTDSIM_BLAS(cublasLtMatrixLayoutCreate(&lb_, ty.ab, K, N, K));
  PTDSIM_BLAS(cublasLtMatrixLayoutCreate(&ld_, ty.cd, M, N, M));
  cublasLtMatmulPreference_t pref = nullptr;
  PTDSIM_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  PTDSIM_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &work_bytes_,
                                                   sizeof work_bytes_));
  std::vector<cublasLtMatmulHeuristicResult_t> found(static_cast<std::size_t>(std::max(1, algos)));
  int returned = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt_, op_, la_, lb_, ld_, ld_, pref, static_cast<int>(found.size()),
                                                           found.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS || returned == 0) {
    why_not_ = "cuBLASLt has no algorithm for this shape and precision";
    return;
  }
  // Each candidate: one call to see that it runs and how long it takes, then a short batch; the
  // fastest batch wins.
  const float alpha = 1.0f, beta = 0.0f;
  double best = INFINITY;
  Timing quick = t;
  quick.warmup = 1;
  quick.repeats = 1;
  quick.batch_s = t.batch_s / 4;
  for (int i = 0; i < returned; ++i) {
    const auto& cand = found[static_cast<std::size_t>(i)];
    if (cand.state != CUBLAS_STATUS_SUCCESS) continue;
    auto call = [&](cudaStream_t s) {
      return cublasLtMatmul(lt_, op_, &alpha, a_, la_, b_, lb_, &beta, d_, ld_, d_, ld_, &cand.algo, work_, work_bytes_, s);
    };
    if (call(stream_) != CUBLAS_STATUS_SUCCESS) continue;
    ++candidates_;
    Events ev;
    ev.start(stream_);
    PTDSIM_BLAS(call(stream_));
    ev.stop(stream_);
    const int iters = iterations_for(quick, ev.seconds());
    const double s = median_per_op(stream_, quick, iters, [&](cudaStream_t st) { PTDSIM_BLAS(call(st)); });
    if (s < best) {
      best = s;
      algo_ = cand.algo;
      usable_ = true;
    }
  }
  if (!usable_) why_not_ = "none of cuBLASLt's " + std::to_string(returned) + " candidate algorithms ran";
}

Gemm::~Gemm() { release(); }

void Gemm::release() {
  cudaSetDevice(device_);
  if (ld_) cublasLtMatrixLayoutDestroy(ld_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  if (lt_) cublasLtDestroy(lt_);
  cudaFree(scale_);
  cudaFree(a_);
  cudaFree(b_);
  cudaFree(d_);
  cudaFree(work_);
  if (stream_) cudaStreamDestroy(stream_);
  ld_ = lb_ = la_ = nullptr;
  op_ = nullptr;
  lt_ = nullptr;
  scale_ = nullptr;
  a_ = b_ = d_ = work_ = nullptr;
  stream_ = nullptr;
}

void Gemm::run(cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  PTDSIM_BLAS(cublasLtMatmul(lt_, op_, &alpha, a_, la_, b_, lb_, &beta, d_, ld_, d_, ld_, &algo_, work_, work_bytes_,
                             stream));
}

double Gemm::seconds(const Timing& t) {
  PTDSIM_CUDA(cudaSetDevice(device_));
  run(stream_);  // untimed: its time sets the iterations
  Events ev;
  ev.start(stream_);
  run(stream_);
  ev.stop(stream_);
  return median_per_op(stream_, t, iterations_for(t, ev.seconds()), [&](cudaStream_t s) { run(s); });
}

void Gemm::download(std::vector<float>& a, std::vector<float>& b, std::vector<float>& d) const {
  const Types ty = types_of(precision_);
  const auto M = static_cast<std::size_t>(n_), N = static_cast<std::size_t>(m_), K = static_cast<std::size_t>(k_);
  auto fetch = [&](const void* src, std::size_t count, cudaDataType_t type, std::size_t bytes, std::vector<float>& out) {
    std::vector<unsigned char> raw(count * bytes);
    PTDSIM_CUDA(cudaMemcpy(raw.data(), src, raw.size(), cudaMemcpyDeviceToHost));
    out.resize(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = to_float(raw.data(), i, type);
  };
  PTDSIM_CUDA(cudaSetDevice(device_));
  PTDSIM_CUDA(cudaStreamSynchronize(stream_));
  fetch(a_, M * K, ty.ab, ty.ab_bytes, a);
  fetch(b_, K * N, ty.ab, ty.ab_bytes, b);
  fetch(d_, M * N, ty.cd, ty.cd_bytes, d);
}

double measure_copy_Bps(int device, double bytes, const Timing& t) {
  PTDSIM_CUDA(cudaSetDevice(device));
  const auto n = static_cast<std::size_t>(bytes);
  void *src = nullptr, *dst = nullptr;
  cudaStream_t stream = nullptr;
  PTDSIM_CUDA(cudaMalloc(&src, n));
  PTDSIM_CUDA(cudaMalloc(&dst, n));
  PTDSIM_CUDA(cudaStreamCreate(&stream));
  const double s = median_per_op(stream, t, std::max(1, t.iters), [&](cudaStream_t st) {
    PTDSIM_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, st));
  });
  cudaStreamDestroy(stream);
  cudaFree(src);
  cudaFree(dst);
  return 2 * bytes / s;  // each byte is read once and written once
}

double measure_launch_s(int device, const Timing& t) {
  PTDSIM_CUDA(cudaSetDevice(device));
  void* p = nullptr;
  cudaStream_t stream = nullptr;
  PTDSIM_CUDA(cudaMalloc(&p, 4));
  PTDSIM_CUDA(cudaStreamCreate(&stream));
  const double s = median_per_op(stream, t, std::max(1000, t.iters),
                                 [&](cudaStream_t st) { PTDSIM_CUDA(cudaMemsetAsync(p, 0, 4, st)); });
  cudaStreamDestroy(stream);
  cudaFree(p);
  return s;
}

}  // namespace ptdsim::calibrate_tool
