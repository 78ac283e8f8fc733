#include "ptdsim/analytic/context_parallel.hpp"

#include <algorithm>

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/core/layer_gemms.hpp"

namespace ptdsim::analytic {
namespace {

double act_width(core::Precision p) {
  return p == core::Precision::fp32 || p == core::Precision::tf32 ? 4.0 : 2.0;
}

// The cp group split as a2a_p2p runs it: the inner a ranks (the all-to-all, innermost in the cp
// group) and the ring over every a-th rank.
Group part_of_cp(const core::Scenario& s, int size, int stride_in_cp) {
  const DimStride d{size, dim_stride(s, core::Dim::cp) * stride_in_cp};
  return group_from(s, &d, 1);
}

// A ring of `steps` kernels with a transfer of `hop` seconds sent beside each of the first
// `steps - 1` (step i's transfer hides behind step i's kernel): the part that hides.
double ring_hidden(int steps, double hop, double first, double later) {
  if (steps <= 1) return 0;
  return std::min(hop, first) + (steps - 2) * std::min(hop, later);
}

}  // namespace

double cp_kv_bytes(const core::Scenario& s) {
  const auto& m = s.model;
  const double tp = s.parallel.tp;
  const double rows = s.training.micro_batch * static_cast<double>(s.training.seq_len) / s.parallel.cp;
  // K and V widths on this rank. MLA: TransformerEngine's CP runs on the up-projected keys and
  // values of the local heads (d_qk and d_v each); GQA: the rank's kv heads x head_dim each.
  const double width = m.mla ? m.heads / tp * (m.qk_head_dim() + m.v_head_dim())
                             : 2.0 * s.attention_kv_heads() * m.head_dim();
  return act_width(s.training.precision) * rows * width;
}

std::vector<CpCollective> cp_collectives(const core::Scenario& s, const StepGroups& groups) {
  using C = core::Collective;
  std::vector<CpCollective> out;
  const int c = s.parallel.cp;
  if (c <= 1) return out;
  const auto& m = s.model;
  const double kv = cp_kv_bytes(s);
  const int a = s.cp_a2a_ranks(), ring = c / a;
  if (a > 1) {
    const double rows = s.training.micro_batch * static_cast<double>(s.training.seq_len) / c;
    const double q = act_width(s.training.precision) * rows * m.heads / s.parallel.tp * m.qk_head_dim();
    out.push_back({C::all_to_all, q + kv, a == c ? groups.cp : part_of_cp(s, a, 1)});
  }
  if (ring <= 1) return out;
  const Group ring_group = a == 1 ? groups.cp : part_of_cp(s, ring, a);
  if (s.training.cp_comm == core::CpComm::allgather) {
    out.push_back({C::all_gather, kv * ring, ring_group});
    out.push_back({C::send_recv, kv * 4 / act_width(s.training.precision), ring_group});
  } else {
    out.push_back({C::send_recv, kv, ring_group});
  }
  return out;
}

CpMergeBytes cp_merge_bytes(const core::Scenario& s) {
  const auto& m = s.model;
  const double rows = s.training.micro_batch * static_cast<double>(s.training.seq_len) / s.parallel.cp;
  const double q = rows * m.heads / s.parallel.tp * (m.mla ? m.v_head_dim() : m.head_dim());
  const double k = m.mla ? rows * m.heads / s.parallel.tp * (m.qk_head_dim() + m.v_head_dim()) / 2.0
                         : rows * s.attention_kv_heads() * m.head_dim();
  return {10 * q, 10 * q + 20 * k};
}

CpKernels cp_attention(const core::Scenario& s) {
  const auto& m = s.model;
  const auto& g = s.hardware.gpu;
  const auto p = s.training.precision;
  const core::Precision wide = g.kernels && p == core::Precision::fp8 ? core::Precision::bf16 : p;
  AttentionShape local;
  local.batch = s.training.micro_batch;
  local.heads = m.heads / s.parallel.tp;
  local.kv_heads = s.attention_kv_heads();
  local.head_dim = m.mla ? (m.qk_head_dim() + m.v_head_dim()) / 2.0 : m.head_dim();
  local.seq_q = static_cast<double>(s.training.seq_len) / s.parallel.cp;
  local.seq_k = s.training.seq_len;
  local.causal = true;
  CpKernels k = s.training.flash_attention
                    ? cp_kernels(s, local, [&](const AttentionShape& a) {
                        return attention_kernel(g, wide, a, s.training.attention_kernel);
                      })
                    : cp_kernels(s, local, [&](const AttentionShape& a) { return attention_gemms(g, wide, a); });
  if (s.parallel.cp > 1 && s.training.cp_comm == core::CpComm::allgather) {
    // PyTorch's ring merges each step's output into an fp32 running one and sums the gradients in
    // fp32 (cp_merge_bytes), at the HBM rate and under the memory-bound factor of the other
    // memory-bound work
    const CpMergeBytes b = cp_merge_bytes(s);
    k.merge.forward_s = memory_time(g, b.forward);
    k.merge.backward_s = memory_time(g, b.backward);
    k.merge.source = core::TimeSource::hbm_efficiency;
  }
  return k;
}

CpExchange cp_exchange(const core::Scenario& s, const StepGroups& groups, const CpKernels& k) {
  using C = core::Collective;
  CpExchange x;
  const int c = s.parallel.cp;
  if (c <= 1) return x;
  const auto& hw = s.hardware;
  const auto& m = s.model;
  const bool full = s.training.recompute == core::Recompute::full;
  const double kv = cp_kv_bytes(s);
  const int a = s.cp_a2a_ranks(), ring = c / a;
  const Group ring_group = a == 1 ? groups.cp : part_of_cp(s, ring, a);

  // Ulysses all-to-alls over the a ranks (DeepSpeed-Ulysses, Megatron's a2a): before the core Q,
  // K and V go from a sequence split to a head split, after it the output goes back; the backward
  // sends the output's gradient and returns those of Q, K and V. Nothing runs beside them.
  if (a > 1) {
    const Group inner = a == c ? groups.cp : part_of_cp(s, a, 1);
    const double rows = s.training.micro_batch * static_cast<double>(s.training.seq_len) / c;
    const double q = act_width(s.training.precision) * rows * m.heads / s.parallel.tp * m.qk_head_dim();
    const double o = act_width(s.training.precision) * rows * m.heads / s.parallel.tp * m.v_head_dim();
    const double t = collective_time(hw, C::all_to_all, q + kv, inner) + collective_time(hw, C::all_to_all, o, inner);
    const double sent = bytes_sent(C::all_to_all, q + kv, a) + bytes_sent(C::all_to_all, o, a);
    x.forward_s += t;
    x.forward_bytes += sent;
    x.backward_s += (full ? 2 : 1) * t;
    x.backward_bytes += (full ? 2 : 1) * sent;
  }
  if (ring <= 1) return x;
  // After the all-to-all a ring member holds a x the sequence over heads/a: the same bytes.
  const double hop = collective_time(hw, C::send_recv, kv, ring_group);
  double f = 0, fh = 0, fb = 0, b = 0, bh = 0, bb = 0;
  if (s.training.cp_comm == core::CpComm::allgather) {
    // All of the keys and values gathered once, issued before step 0, whose kernel it runs beside
    // (PyTorch's _AllGatherRotater); the backward gathers them again and passes the keys' and
    // values' gradients around the ring (_AllToAllRotater, fp32 in PyTorch), each hop beside the
    // next step's kernel, the last one home after the last kernel.
    // The gradients travel in fp32 (_cp_options.convert_to_f32: the backward accumulates dK and dV
    // in float32 and permutes that buffer).
    const double grad = kv * 4 / act_width(s.training.precision);
    const double grad_hop = collective_time(hw, C::send_recv, grad, ring_group);
    const double gather = collective_time(hw, C::all_gather, kv * ring, ring_group);
    f = gather;
    fh = std::min(gather, k.first.forward_s);
    fb = bytes_sent(C::all_gather, kv * ring, ring);
    b = gather + ring * grad_hop;
    bh = std::min(gather, k.first.backward_s) + (ring - 1) * std::min(grad_hop, k.later.backward_s);
    bb = fb + ring * grad;
  } else {
    // Ring attention (TransformerEngine's AttnFuncWithCPAndKVP2P, PyTorch's alltoall rotater):
    // step i sends the block it holds to the next rank while its kernel runs, R - 1 hops. The
    // backward sends the keys and values again and, after each step's kernel, the gradients of
    // the block it holds on behind the next kernel; the last of them, after the last kernel,
    // travels home with nothing beside it: the hop that cannot hide.
    f = (ring - 1) * hop;
    fh = ring_hidden(ring, hop, k.first.forward_s, k.later.forward_s);
    fb = (ring - 1) * kv;
    b = (ring - 1) * hop + ring * hop;
    bh = std::min(hop, k.first.backward_s) +
         std::max(0, ring - 2) * std::min(2 * hop, k.later.backward_s) + std::min(hop, k.later.backward_s);
    bb = (2 * ring - 1) * kv;
  }
  if (!s.training.overlap.cp) fh = bh = 0;  // each collective waited on as soon as it is issued
  x.forward_s += f;
  x.forward_window_s += fh;
  x.forward_bytes += fb;
  x.backward_s += b + (full ? f : 0);
  x.backward_window_s += bh + (full ? fh : 0);
  x.backward_bytes += bb + (full ? fb : 0);
  if (!s.training.overlap.cp) return x;
  // An exchange that hides whole runs beside the whole span of the kernels (the same exposure, 0,
  // and no tie between its end and the kernels' in the simulator)
  if (x.forward_s <= x.forward_window_s) x.forward_window_s = k.forward_s();
  if (x.backward_s <= x.backward_window_s) x.backward_window_s = k.backward_s() + (full ? k.forward_s() : 0);
  return x;
}

}  // namespace ptdsim::analytic
