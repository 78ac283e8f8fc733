#pragma once
#include <vector>

#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/core/scenario.hpp"

// Context parallelism as frameworks run it (docs/analytic.md "Context parallelism"): the attention
// kernels each method runs on its blocks and the exchange of keys and values beside them.
namespace ptdsim::analytic {

// The attention kernels of one layer's core on one rank, per micro-batch. p2p and allgather
// (and the ring of a2a_p2p) split the sequence into 2R chunks, rank i holding chunks i and
// 2R-1-i (Megatron's get_batch_on_this_cp_rank; PyTorch's round-robin load balancer): step 0 is
// the rank's two chunks against themselves (causal), each later step half a block without a mask,
// either all its queries against the first chunk of the visiting keys or its second chunk of
// queries against both; `later` is the slower of the two, which sets the ring's pace. a2a runs one
// kernel: all queries and keys over heads/cp heads.
struct CpKernels {
  int steps = 1;       // kernels per pass (R)
  AttentionTime first;  // step 0
  AttentionTime later;  // each of steps 1 .. R-1
  // The memory-bound work between the kernels (cp_merge): forward, the merge of each later step's
  // partial output into the running one; backward, each step's accumulation of the gradients.
  AttentionTime merge;
  double forward_s() const { return first.forward_s + (steps - 1) * (later.forward_s + merge.forward_s); }
  double backward_s() const { return first.backward_s + (steps - 1) * later.backward_s + steps * merge.backward_s; }
};
// `local` is the rank's core as one kernel: its heads (heads/t), s/c query rows against s keys,
// causal. `time` times one kernel's shape (attention_kernel or attention_gemms).
template <class Time>
CpKernels cp_kernels(const core::Scenario& s, const AttentionShape& local, const Time& time);

// One layer's key/value exchange, per micro-batch: each pass's collective time, its window and
// the bytes one GPU sends. The window is the part of the exchange that hides behind the attention
// kernels it runs beside (every fold exposes time - window), or the kernels' whole span when all of
// it hides (exposed 0 either way). The backward includes a recomputed forward's exchange (full
// recompute).
struct CpExchange {
  double forward_s = 0, forward_window_s = 0, forward_bytes = 0;
  double backward_s = 0, backward_window_s = 0, backward_bytes = 0;
};
CpExchange cp_exchange(const core::Scenario& s, const StepGroups& groups, const CpKernels& kernels);

// The collectives training.cp_comm runs, each with its bytes per call (one layer, one micro-batch)
// and group: p2p, a send of the K/V block around the cp ring; allgather, the all-gather of every
// block and the send of their fp32 gradients; a2a, the all-to-all of Q, K and V over the cp group;
// a2a_p2p, that all-to-all over the inner ranks and the send around the ring of the rest. What the
// report names (nccl_picks) and what collective_warnings checks against calibrated rows.
struct CpCollective {
  core::Collective op;
  double bytes = 0;
  Group group;
};
std::vector<CpCollective> cp_collectives(const core::Scenario& s, const StepGroups& groups);

// Bytes of this rank's key and value blocks for one micro-batch: b s/c rows of K and V over the
// rank's heads (GQA: the kv heads the core runs on, attention_kv_heads, x head_dim each; MLA: the
// up-projected heads/t x (d_qk + d_v)).
double cp_kv_bytes(const core::Scenario& s);

// The HBM bytes of PyTorch's ring bookkeeping (torch.distributed.tensor.experimental._attention,
// _cp_options.convert_to_f32) per step, one layer and micro-batch, at the least a fused kernel moves:
// forward (_SDPAMerger), read the running fp32 output (4 bytes an element) and the step's 16-bit
// one, write the fp32 output: 10 bytes an output element; backward, the same for dQ into its fp32
// sum and for dK and dV into the fp32 buffer sent on: 10 per query element and 20 per key element.
struct CpMergeBytes {
  double forward = 0, backward = 0;
};
CpMergeBytes cp_merge_bytes(const core::Scenario& s);

// The rank's attention kernels under training.cp_comm, timed from the hardware file's attention
// model as the operators are (flash attention) or as two GEMMs.
CpKernels cp_attention(const core::Scenario& s);

template <class Time>
CpKernels cp_kernels(const core::Scenario& s, const AttentionShape& local, const Time& time) {
  CpKernels k;
  const int c = s.parallel.cp;
  if (c <= 1) {
    k.first = time(local);
    return k;
  }
  const int a = s.cp_a2a_ranks(), ring = c / a;
  AttentionShape one = local;
  one.heads = local.heads / a;
  one.kv_heads = local.kv_heads / a > 0 ? local.kv_heads / a : 1;
  const double rows = local.seq_k / ring;  // query rows a ring member holds (s/c x a)
  one.seq_q = rows;
  one.seq_k = rows;
  one.causal = true;
  k.steps = ring;
  k.first = time(one);
  if (ring > 1) {
    AttentionShape keys_half = one, queries_half = one;
    keys_half.seq_k = rows / 2;
    keys_half.causal = false;
    queries_half.seq_q = rows / 2;
    queries_half.causal = false;
    const AttentionTime x = time(keys_half), y = time(queries_half);
    k.later.forward_s = std::max(x.forward_s, y.forward_s);
    k.later.backward_s = std::max(x.backward_s, y.backward_s);
    k.later.source = std::max(x.source, y.source);
  }
  return k;
}

}  // namespace ptdsim::analytic
