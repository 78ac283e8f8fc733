#pragma once
#include <array>
#include <cstdint>

// The kinds of communication a training step does: the one list every layer uses (the step plan's
// collectives, the simulator's tasks, the report's parts of the step). Their spelling in tables and
// traces is core::name(CommKind) (names.hpp).
namespace ptdsim::core {

enum class CommKind : std::uint8_t {
  tp,            // tensor-parallel all-reduce / all-gather / reduce-scatter inside the passes
  cp,            // context-parallel ring exchange of keys and values
  ep,            // expert-parallel all-to-all (dispatch and combine)
  p2p,           // pipeline send of activations or gradients
  dp_reduce,     // data-parallel gradient reduction (DP bucket, ZeRO-1/2 reduce-scatter)
  dp_gather,     // ZeRO-1/2 parameter all-gather after the update
  zero3_gather,  // ZeRO-3 parameter all-gather of a sharding unit
  zero3_reduce,  // ZeRO-3 gradient reduce-scatter (and replica all-reduce) of a sharding unit
};
inline constexpr int kCommKindCount = 8;

// The report's per-parallelism totals (Report::comm, keys "tp", "cp", "ep", "pp", "dp"): a grouping
// of the kinds above, not a second list of them.
enum class CommBucket { tp, cp, ep, pp, dp };
inline constexpr int kCommBucketCount = 5;
inline constexpr std::array<const char*, kCommBucketCount> kCommBucketNames{"tp", "cp", "ep", "pp", "dp"};

constexpr CommBucket bucket(CommKind k) {
  switch (k) {
    case CommKind::tp: return CommBucket::tp;
    case CommKind::cp: return CommBucket::cp;
    case CommKind::ep: return CommBucket::ep;
    case CommKind::p2p: return CommBucket::pp;
    case CommKind::dp_reduce:
    case CommKind::dp_gather:
    case CommKind::zero3_gather:
    case CommKind::zero3_reduce: return CommBucket::dp;
  }
  return CommBucket::dp;
}

// A collective holds SMs of its rank while it runs (docs/simulator.md "SM contention"); NCCL gives a
// p2p peer one or two channels, too few to count.
constexpr bool holds_sms(CommKind k) { return k != CommKind::p2p; }
// ZeRO-3's per-unit transfers, which the compute of the unit waits for.
constexpr bool is_zero3(CommKind k) { return k == CommKind::zero3_gather || k == CommKind::zero3_reduce; }

}  // namespace ptdsim::core
