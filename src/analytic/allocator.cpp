#include "ptdsim/analytic/allocator.hpp"

#include <cmath>

namespace ptdsim::analytic {

double allocator_block_bytes(double bytes) {
  if (bytes < kAllocatorBlockBytes) return kAllocatorBlockBytes;
  return kAllocatorBlockBytes * std::ceil(bytes / kAllocatorBlockBytes);
}

double allocator_segment_bytes(double bytes) {
  if (bytes <= kAllocatorSmallSize) return kAllocatorSmallSegment;
  if (bytes < kAllocatorMinLargeAlloc) return kAllocatorLargeSegment;
  return kAllocatorRoundLarge * std::ceil(bytes / kAllocatorRoundLarge);
}

double churn_bytes(const core::StageMemory& st) {
  return st.activations + st.embedding_activations + st.logits + st.loss_buffers + st.buffers + st.step_buffers;
}

void set_reserve(core::StageMemory& st) {
  double rounding = 0;
  if (st.logits > 0) {
    const double tensors = 1 + st.loss_buffers / st.logits;  // the logits and their gradients, one size
    rounding = tensors * (allocator_segment_bytes(st.logits) - st.logits);
  }
  st.cache = kAllocatorCachedShare * churn_bytes(st);
  st.reserved = st.allocated() + rounding + st.cache;
}

}  // namespace ptdsim::analytic
