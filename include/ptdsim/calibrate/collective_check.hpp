#pragma once
#include <cstdint>

#include "ptdsim/core/hardware.hpp"

// What ptdsim-calibrate writes into each rank's buffers before a checked collective and what every
// element must hold after it, the way nccl-tests counts "#wrong" (its initData/CheckData). Header-only
// and free of CUDA so the same rules run in the device check kernel (calibrate/kernels.cu) and in the
// host tests (tests/calibrate/collective_check_test.cpp), which replay every collective on the host.
//
// Values are small integers, so every reduction is exact in float whatever order NCCL sums in: rank
// r's element i is a(i) * c(r) + b(r) with a in 0..15, c in 1..8, b in 0..15 (at most 135), and a sum
// over n ranks is a(i) * C + B with C = sum c(r), B = sum b(r), below 2^24 for n up to 124,000 ranks.
// Each factor comes from a different hash, so a block landing at another rank's place or another
// offset differs from what is expected in most of its elements.
#if defined(__CUDACC__)
#define PTDSIM_HD __host__ __device__
#else
#define PTDSIM_HD
#endif

namespace ptdsim::calibrate::check {

// splitmix64's finaliser: a well-mixed 64-bit hash of an index.
PTDSIM_HD inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

PTDSIM_HD inline std::uint32_t element_term(std::uint64_t i) { return static_cast<std::uint32_t>(mix(i) & 15u); }
PTDSIM_HD inline std::uint32_t rank_scale(int r) {
  return 1u + static_cast<std::uint32_t>(mix(0x5ca1e000ULL + static_cast<std::uint64_t>(r)) & 7u);
}
PTDSIM_HD inline std::uint32_t rank_offset(int r) {
  return static_cast<std::uint32_t>(mix(0x0ff5e7000ULL + static_cast<std::uint64_t>(r)) & 15u);
}

// Rank r's input element i.
PTDSIM_HD inline float value(int r, std::uint64_t i) {
  return static_cast<float>(element_term(i) * rank_scale(r) + rank_offset(r));
}

// Written into output buffers before the collective: no input or result is negative, so an element
// the collective never wrote is counted wrong.
inline constexpr float kUnwritten = -1.0f;

// C and B of a sum over ranks 0..n-1 (computed once on the host; n x hash is cheap there).
struct RankSums {
  double scale = 0;   // C
  double offset = 0;  // B
};
inline RankSums rank_sums(int n) {
  RankSums s;
  for (int r = 0; r < n; ++r) {
    s.scale += rank_scale(r);
    s.offset += rank_offset(r);
  }
  return s;
}

// One checked buffer of one rank: its collective, the rank q of n, `count` as nccl-tests passes it
// (elements per rank; per block for all_gather, reduce_scatter and all_to_all), the root (0).
struct Expect {
  core::Collective op = core::Collective::all_reduce;
  int ranks = 1;
  int rank = 0;
  std::uint64_t count = 0;
  float sum_scale = 0, sum_offset = 0;  // rank_sums(ranks), exact in float
  bool checked = true;                  // false: this rank's output is undefined (reduce off the root)
};

inline Expect expect(core::Collective op, int ranks, int rank, std::uint64_t count) {
  Expect e;
  e.op = op;
  e.ranks = ranks;
  e.rank = rank;
  e.count = count;
  const RankSums s = rank_sums(ranks);
  e.sum_scale = static_cast<float>(s.scale);
  e.sum_offset = static_cast<float>(s.offset);
  e.checked = !(op == core::Collective::reduce && rank != 0);
  return e;
}

// Elements in the checked output (the receive buffer; the result's place for in-place runs).
PTDSIM_HD inline std::uint64_t output_elements(const Expect& e) {
  switch (e.op) {
    case core::Collective::all_gather:
    case core::Collective::all_to_all: return e.count * static_cast<std::uint64_t>(e.ranks);
    default: return e.count;
  }
}

// Elements of a rank's input (its send buffer): value(rank, i) for i below this.
PTDSIM_HD inline std::uint64_t input_elements(core::Collective op, int ranks, std::uint64_t count) {
  switch (op) {
    case core::Collective::reduce_scatter:
    case core::Collective::all_to_all: return count * static_cast<std::uint64_t>(ranks);
    default: return count;
  }
}

// The value output element j of rank e.rank must hold.
PTDSIM_HD inline float expected(const Expect& e, std::uint64_t j) {
  const auto sum = [&](std::uint64_t i) {
    return static_cast<float>(element_term(i)) * e.sum_scale + e.sum_offset;
  };
  switch (e.op) {
    case core::Collective::all_reduce:
    case core::Collective::reduce: return sum(j);
    case core::Collective::reduce_scatter: return sum(static_cast<std::uint64_t>(e.rank) * e.count + j);
    case core::Collective::all_gather: return value(static_cast<int>(j / e.count), j % e.count);
    case core::Collective::broadcast: return value(0, j);
    case core::Collective::all_to_all: {
      // block p of rank q's output is block q of rank p's input
      const std::uint64_t p = j / e.count, i = j % e.count;
      return value(static_cast<int>(p), static_cast<std::uint64_t>(e.rank) * e.count + i);
    }
    case core::Collective::send_recv: return value((e.rank + e.ranks - 1) % e.ranks, j);
  }
  return 0;
}

// Host version of the check kernel: wrong elements of `out` (output_elements(e) of them).
inline std::uint64_t count_wrong(const Expect& e, const float* out) {
  if (!e.checked) return 0;
  std::uint64_t wrong = 0;
  for (std::uint64_t j = 0; j < output_elements(e); ++j) wrong += out[j] != expected(e, j) ? 1 : 0;
  return wrong;
}

}  // namespace ptdsim::calibrate::check
