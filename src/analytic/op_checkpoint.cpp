#include "ptdsim/analytic/op_checkpoint.hpp"

#include "ptdsim/core/layer_gemms.hpp"

namespace ptdsim::analytic {
namespace {

// One mm of the block, in forward order: the operator it belongs to and its output width on a rank.
struct Mm {
  int op;  // 0 qkv, 1 proj, 2 fc1, 3 fc2
  double width;
};

// The block's mm's in the order torchtitan's Llama runs them: wq, wk, wv (or one QKV GEMM), wo, then
// w1 and w3 (or one fc1), w2 (core::ProjectionParts). Row-parallel outputs (wo, w2) are the whole
// hidden width on every rank before their reduce-scatter.
int block_mms(const core::Scenario& s, Mm* out) {
  const auto& m = s.model;
  const bool apart = s.training.fusion.projections_apart();
  const double h = m.hidden;
  int n = 0;
  const core::ProjectionParts qkv = core::qkv_parts(m, s.parallel.tp, apart);
  for (int i = 0; i < qkv.n; ++i) out[n++] = {0, qkv.width[i]};
  out[n++] = {1, h};
  const core::ProjectionParts fc1 = core::fc1_parts(m, s.parallel.tp, apart);
  for (int i = 0; i < fc1.n; ++i) out[n++] = {2, fc1.width[i]};
  out[n++] = {3, h};
  return n;
}

}  // namespace

OpCheckpointShares op_checkpoint_shares(const core::Scenario& s) {
  Mm mms[8];
  const int n = block_mms(s, mms);
  double again[4] = {}, all[4] = {};
  for (int i = 0; i < n; ++i) {
    all[mms[i].op] += mms[i].width;
    if ((i + 1) % 2 == 0) again[mms[i].op] += mms[i].width;  // every second mm recomputed
  }
  const auto share = [&](int op) { return all[op] > 0 ? again[op] / all[op] : 0.0; };
  return {share(0), share(1), share(2), share(3)};
}

double op_checkpoint_saved_bytes(const core::Scenario& s) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const double t = p.tp, sp = p.sequence_parallel ? t : 1.0;
  const double tokens = s.training.micro_batch * static_cast<double>(s.training.seq_len) / p.cp;
  const double h = m.hidden;
  double bytes = 2 * tokens * h / sp;  // the block's input, which the checkpoint keeps
  Mm mms[8];
  const int n = block_mms(s, mms);
  for (int i = 0; i < n; ++i)
    if ((i + 1) % 2 == 1) bytes += 2 * tokens * mms[i].width;
  // SDPA's output and its fp32 log-sum-exp per query head
  bytes += 2 * tokens * m.attention_out_width() / t + 4 * tokens * (m.heads / t);
  if (t > 1 && p.sequence_parallel) bytes += 2 * (2 * tokens * h / t);  // wo's and w2's reduce-scatters
  return bytes;
}

}  // namespace ptdsim::analytic
