// Device kernels of ptdsim-calibrate (kernels.hpp): casts for random GEMM inputs, the fill and check
// kernels of the collectives' verification (rules in ptdsim/calibrate/collective_check.hpp), and the
// copy kernel of the contention measurement.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels.hpp"

namespace ptdsim::calibrate_tool {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;  // grid-stride loops cover the rest

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < kMaxBlocks ? (b > 0 ? b : 1) : kMaxBlocks);
}

__device__ std::size_t first_index() { return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::size_t stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

template <class T>
__global__ void cast_kernel(const float* in, T* out, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += stride()) out[i] = static_cast<T>(in[i]);
}
__global__ void cast_bf16_kernel(const float* in, __nv_bfloat16* out, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += stride()) out[i] = __float2bfloat16_rn(in[i]);
}
__global__ void cast_f16_kernel(const float* in, __half* out, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += stride()) out[i] = __float2half_rn(in[i]);
}
__global__ void cast_e4m3_kernel(const float* in, __nv_fp8_e4m3* out, std::size_t n) {
  // the constructor rounds to nearest and saturates to the finite range
  for (std::size_t i = first_index(); i < n; i += stride()) out[i] = __nv_fp8_e4m3(in[i]);
}

__global__ void fill_values_kernel(float* buf, std::size_t n, int rank, std::uint64_t first) {
  for (std::size_t i = first_index(); i < n; i += stride()) buf[i] = calibrate::check::value(rank, first + i);
}
__global__ void fill_constant_kernel(float* buf, std::size_t n, float v) {
  for (std::size_t i = first_index(); i < n; i += stride()) buf[i] = v;
}
__global__ void count_wrong_kernel(const float* out, calibrate::check::Expect e, unsigned long long* wrong) {
  const std::uint64_t n = calibrate::check::output_elements(e);
  unsigned long long mine = 0;
  for (std::size_t j = first_index(); j < n; j += stride()) mine += out[j] != calibrate::check::expected(e, j) ? 1 : 0;
  if (mine) atomicAdd(wrong, mine);
}

__global__ void copy_kernel(uint4* a, uint4* b, std::size_t n, int passes) {
  for (int p = 0; p < passes; ++p) {
    // alternate the direction so no pass repeats the previous one's work
    const uint4* from = p % 2 ? b : a;
    uint4* to = p % 2 ? a : b;
    for (std::size_t i = first_index(); i < n; i += stride()) to[i] = from[i];
  }
}

}  // namespace

cudaError_t launch_cast(const float* in, void* out, std::size_t n, Element to, cudaStream_t stream) {
  const unsigned g = blocks_for(n);
  switch (to) {
    case Element::f32: cast_kernel<float><<<g, kThreads, 0, stream>>>(in, static_cast<float*>(out), n); break;
    case Element::bf16: cast_bf16_kernel<<<g, kThreads, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out), n); break;
    case Element::f16: cast_f16_kernel<<<g, kThreads, 0, stream>>>(in, static_cast<__half*>(out), n); break;
    case Element::e4m3: cast_e4m3_kernel<<<g, kThreads, 0, stream>>>(in, static_cast<__nv_fp8_e4m3*>(out), n); break;
  }
  return cudaGetLastError();
}

cudaError_t launch_fill_values(float* buf, std::size_t n, int rank, std::uint64_t first, cudaStream_t stream) {
  fill_values_kernel<<<blocks_for(n), kThreads, 0, stream>>>(buf, n, rank, first);
  return cudaGetLastError();
}

cudaError_t launch_fill_constant(float* buf, std::size_t n, float v, cudaStream_t stream) {
  fill_constant_kernel<<<blocks_for(n), kThreads, 0, stream>>>(buf, n, v);
  return cudaGetLastError();
}

cudaError_t launch_count_wrong(const float* out, const calibrate::check::Expect& e, unsigned long long* wrong,
                               cudaStream_t stream) {
  if (!e.checked) return cudaSuccess;
  count_wrong_kernel<<<blocks_for(calibrate::check::output_elements(e)), kThreads, 0, stream>>>(out, e, wrong);
  return cudaGetLastError();
}

cudaError_t launch_copy(void* a, void* b, std::size_t bytes, int blocks, int passes, cudaStream_t stream) {
  copy_kernel<<<static_cast<unsigned>(blocks), kCopyThreads, 0, stream>>>(static_cast<uint4*>(a), static_cast<uint4*>(b),
                                                                           bytes / sizeof(uint4), passes);
  return cudaGetLastError();
}

}  // namespace ptdsim::calibrate_tool
