#pragma once
// The few device kernels ptdsim-calibrate needs (kernels.cu), behind plain C++ calls: the rest of the
// tool is host code against the CUDA runtime, cuBLASLt, cuRAND and NCCL. Each call returns the launch
// status (cudaGetLastError).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "ptdsim/calibrate/collective_check.hpp"

namespace ptdsim::calibrate_tool {

// The element types GEMM inputs are stored in.
enum class Element { f32, bf16, f16, e4m3 };

// out[i] = in[i] converted (round to nearest; E4M3 saturates at +-448) for i < n.
cudaError_t launch_cast(const float* in, void* out, std::size_t n, Element to, cudaStream_t stream);

// buf[i] = check::value(rank, first + i) for i < n: a rank's collective input.
cudaError_t launch_fill_values(float* buf, std::size_t n, int rank, std::uint64_t first, cudaStream_t stream);
// buf[i] = v for i < n.
cudaError_t launch_fill_constant(float* buf, std::size_t n, float v, cudaStream_t stream);
// Adds to *wrong the elements j < check::output_elements(e) with out[j] != check::expected(e, j).
cudaError_t launch_count_wrong(const float* out, const calibrate::check::Expect& e, unsigned long long* wrong,
                               cudaStream_t stream);

// Copies `bytes` (a multiple of 16) back and forth between a and b, `passes` times (a to b, then b to
// a, ...), with exactly `blocks` thread blocks of kCopyThreads threads: a memory-bound kernel that
// holds `blocks` SMs the way an NCCL collective holds one SM per channel.
inline constexpr int kCopyThreads = 512;
cudaError_t launch_copy(void* a, void* b, std::size_t bytes, int blocks, int passes, cudaStream_t stream);

}  // namespace ptdsim::calibrate_tool
