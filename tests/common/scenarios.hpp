#pragma once
// Scenarios built in code for the analytic and sim tests and benchmarks (no YAML below io).
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/units.hpp"

namespace ptdsim::testing {

// DGX A100 80GB: 312 TFLOP/s bf16, 2039 GB/s HBM, NVLink 300 GB/s per direction, 25 GB/s NIC per GPU.
inline core::HardwareSpec dgx_a100_80g() {
  core::HardwareSpec hw;
  hw.name = "dgx-a100-80g";
  hw.gpu.name = "A100-SXM4-80GB";
  hw.gpu.memory_bytes = 80 * core::kGiB;
  hw.gpu.hbm_Bps = 2039e9;
  hw.gpu.peak_flops[core::index(core::Precision::bf16)] = 312e12;
  hw.gpu.peak_flops[core::index(core::Precision::fp16)] = 312e12;
  hw.gpu.peak_flops[core::index(core::Precision::fp32)] = 19.5e12;
  hw.gpus_per_node = 8;
  hw.intra.bandwidth_Bps = 300e9;
  hw.intra.latency_s = 5e-6;
  hw.network.bandwidth_Bps = 25e9;
  hw.network.latency_s = 10e-6;
  return hw;
}

inline core::ModelSpec gpt3_175b() {
  core::ModelSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.max_seq_len = 2048;
  return m;
}

inline core::ModelSpec llama(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab) {
  core::ModelSpec m;
  m.name = "llama";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.vocab = vocab;
  m.mlp = core::Mlp::swiglu;
  m.norm = core::Norm::rmsnorm;
  m.position = core::Position::rope;
  m.bias = false;
  m.max_seq_len = 4096;
  return m;
}

// DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3; models/deepseek-v3.yaml): 61 layers, h 7168,
// 128 heads, dense FFN 18432 in the first 3 layers, 256 routed experts of 2048 (top 8) and one
// shared expert of 2048 in the other 58, MLA q_lora 1536, kv_lora 512, nope 128, rope 64, v 128,
// vocab 129280, untied; no MTP module (the model card's 671B count).
inline core::ModelSpec deepseek_v3() {
  core::ModelSpec m = llama(61, 7168, 128, 128, 18432, 129280);
  core::MoeSpec e;
  e.experts = 256;
  e.top_k = 8;
  e.ffn_hidden = 2048;
  e.shared_experts = 1;
  e.shared_ffn_hidden = 2048;
  e.first_k_dense = 3;
  e.router = core::Router::sigmoid;
  e.router_groups = 8;
  e.router_group_topk = 4;
  m.moe = e;
  m.mla = core::MlaSpec{1536, 512, 128, 64, 128};
  return m;
}

// The acceptance scenario: GPT-3 175B, tp 8, pp 16, dp 8 on 1024 A100 80GB, seq 2048, micro-batch 1,
// global batch 1536, selective recompute, sequence parallel, ZeRO-1 (distributed optimizer).
inline core::Scenario gpt3_1024() {
  core::Scenario s;
  s.name = "gpt3-175b-1024xa100";
  s.model = gpt3_175b();
  s.hardware = dgx_a100_80g();
  s.gpus = 1024;
  s.parallel.tp = 8;
  s.parallel.pp = 16;
  s.parallel.dp = 8;
  s.parallel.sequence_parallel = true;
  s.parallel.zero = 1;
  s.training.seq_len = 2048;
  s.training.micro_batch = 1;
  s.training.global_batch = 1536;
  s.training.recompute = core::Recompute::selective;
  return s;
}

// Narayanan et al. 2021 Table 1, the 1T row: L128 h25600 a160 V51200 on 3072 A100s, tp 8, pp 64,
// dp 6, global batch 3072, micro-batch 1 (m = 512), full recomputation.
inline core::Scenario megatron_1t_3072() {
  core::Scenario s;
  s.name = "megatron-1t-3072xa100";
  s.model = gpt3_175b();
  s.model.name = "megatron-1t";
  s.model.layers = 128;
  s.model.hidden = 25600;
  s.model.heads = 160;
  s.model.kv_heads = 160;
  s.model.ffn_hidden = 4 * 25600;
  s.model.tied_embeddings = true;
  s.hardware = dgx_a100_80g();
  s.gpus = 3072;
  s.parallel.tp = 8;
  s.parallel.pp = 64;
  s.parallel.dp = 6;
  s.training.seq_len = 2048;
  s.training.micro_batch = 1;
  s.training.global_batch = 3072;
  s.training.recompute = core::Recompute::full;
  return s;
}

// The GPT-3 sweep's winner (tp 1, pp 8, dp 32, cp 4, vpp 12, ZeRO-2, interleaved) with the A100's SM
// contention (16 of 108 SMs per running collective): a context-parallel exchange beside every
// segment's compute.
inline core::Scenario gpt3_cp4_contention() {
  core::Scenario s = gpt3_1024();
  s.parallel.tp = 1;
  s.parallel.pp = 8;
  s.parallel.dp = 32;
  s.parallel.cp = 4;
  s.parallel.vpp = 12;
  s.parallel.zero = 2;
  s.parallel.sequence_parallel = false;
  s.parallel.schedule = core::Schedule::interleaved;
  s.training.recompute = core::Recompute::none;
  s.hardware.gpu.sms = 108;
  s.hardware.gpu.comm_sms = 16;
  return s;
}

// A Mixtral-like MoE (32 layers, h 4096, 32 heads, 8 KV heads, 8 experts of ffn 14336, top-2) on
// 64 A100s, 8 a node: tensor parallel `tp`, ep 8, dp 64 / tp, sequence parallel, seq 4096,
// micro-batch 1, 8 micro-batches per data-parallel rank. With tp 8 the ep group steps over the
// nodes one rank a node; with tp 2 its ranks are 2 apart, across two nodes.
inline core::Scenario mixtral_like_64(int tp) {
  core::Scenario s;
  s.model = llama(32, 4096, 32, 8, 14336, 32000);
  s.model.moe = core::MoeSpec{8, 2, 1, 0};
  s.hardware = dgx_a100_80g();
  s.gpus = 64;
  s.parallel.tp = tp;
  s.parallel.dp = 64 / tp;
  s.parallel.ep = 8;
  s.parallel.sequence_parallel = true;
  s.training.seq_len = 4096;
  s.training.global_batch = 8 * s.parallel.dp;
  return s;
}

}  // namespace ptdsim::testing
