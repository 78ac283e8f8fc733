#pragma once
#include "ptdsim/core/report.hpp"

// What PyTorch's CUDA caching allocator reserves for the tensors a GPU holds (docs/analytic.md
// "Allocated and reserved"). Bytes.
namespace ptdsim::analytic {

// The allocator's sizes (c10/cuda/CUDACachingAllocator.cpp): every block is a multiple of 512 bytes
// (kMinBlockSize); requests up to 1 MiB (kSmallSize) come from the small pool, carved from 2 MiB
// segments (kSmallBuffer); a larger request that no cached block fits gets a new segment of 20 MiB
// (kLargeBuffer) when under 10 MiB (kMinLargeAlloc), else its size rounded up to 2 MiB (kRoundLarge).
inline constexpr double kAllocatorBlockBytes = 512;
inline constexpr double kAllocatorSmallSize = 1024.0 * 1024;
inline constexpr double kAllocatorSmallSegment = 2 * 1024.0 * 1024;
inline constexpr double kAllocatorLargeSegment = 20 * 1024.0 * 1024;
inline constexpr double kAllocatorMinLargeAlloc = 10 * 1024.0 * 1024;
inline constexpr double kAllocatorRoundLarge = 2 * 1024.0 * 1024;

// The one fitted constant of the memory model: the share of the bytes a step allocates and frees
// (activations, the loss's buffers, communication buffers, the optimizer step's copies) that the
// allocator holds beyond them at the peak, as freed blocks it keeps cached but cannot hand to the
// peak's requests (a block freed on another stream, one split around a live tensor, one smaller
// than the request). Fitted by least squares on the relative errors of the fit split's records that
// give a peak memory and whose predicted tensors are below it (BLOOM 20B on 8 GPUs and 200B on 160,
// nvidia-smi peaks: 0.104; docs/analytic.md "Allocated and reserved").
inline constexpr double kAllocatorCachedShare = 0.10;

// The block a request of `bytes` occupies (round_size): at least 512, a multiple of 512.
double allocator_block_bytes(double bytes);
// The segment cudaMalloc'd for a request of `bytes` that no cached block fits (get_allocation_size).
double allocator_segment_bytes(double bytes);

// Sets st.reserved and st.cache, its tensors given (st.allocated()): the reserve is the tensors;
// the rounding of the loss's fp32 tensors (the logits and, eager, the two gradients of the same
// size: each the first of its size in the step, a segment of its own, allocator_segment_bytes); and
// the cache, kAllocatorCachedShare of what the step allocates and frees (churn_bytes), which the
// allocator keeps while the GPU has room and frees when a cudaMalloc fails (then it retries).
void set_reserve(core::StageMemory& st);

// What the step allocates and frees (the terms kAllocatorCachedShare applies to): everything but
// the weights, gradients and optimizer states, which are allocated once and never freed.
double churn_bytes(const core::StageMemory& st);

}  // namespace ptdsim::analytic
