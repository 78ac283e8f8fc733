#include "schema.hpp"

#include <cctype>
#include <map>
#include <stdexcept>

#include "ptdsim/core/names.hpp"

namespace ptdsim::io::detail {
namespace {

std::vector<std::string> gemm_model_keys() {
  return {"tflops", "epilogue_gbs", "floor_us", "knee", "tail", "tile_m", "tile_n"};
}
std::vector<std::string> attention_keys() { return {"tflops", "q_gbs", "kv_gbs"}; }
std::vector<std::string> stream_keys() { return {"forward_gbs", "backward_gbs"}; }

const std::map<std::string, std::vector<std::string>>& sections() {
  static const std::map<std::string, std::vector<std::string>> table{
      {"", {"name", "source", "model", "hardware", "cluster", "parallel", "training", "cost"}},
      {"cluster", {"gpus", "nodes"}},
      {"cost", {"gpu_hour"}},
      {"parallel",
       {"tp", "pp", "dp", "cp", "ep", "etp", "vpp", "sequence_parallel", "zero", "schedule", "placement",
        "stage_layers", "first_stage_layers", "last_stage_layers", "embedding_in_split",
        "loss_in_split", "sharding"}},
      {"parallel.sharding",
       {"unit_layers", "reshard_after_forward", "pipeline_accumulates", "regather_on_recompute", "reduce_dtype", "prefetch_units",
        "backward_prefetch", "max_live_params", "sync", "overhead_us", "overhead_per_rank_us", "shard_ranks"}},
      {"training",
       {"seq_len", "micro_batch", "global_batch", "precision", "recompute", "recompute_modules", "offload_modules", "flash_attention",
        "attention_kernel", "cp_comm", "repeat_kv", "optimizer", "overlap", "fusion", "fp8_recipe", "framework",
        "dp_bucket_params", "main_grads", "tokens", "moe",
        "offload", "offload_fraction", "nccl"}},
      {"training.moe", {"dispatcher", "load_imbalance", "capacity_factor"}},
      {"training.nccl", {"algo", "proto"}},
      {"training.overlap", {"dp", "tp", "pp", "zero3_prefetch", "offload", "ep", "cp"}},
      {"training.fusion", {"norm", "activation", "dropout_add", "rope", "projections", "cross_entropy", "wgrad_accumulation",
                           "fp8_cast", "grouped_mlp"}},
      {"model",
       {"name", "source", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "mlp", "norm",
        "position", "max_seq_len", "tied_embeddings", "bias", "moe", "mla", "sliding_window", "attention_sinks", "qk_norm",
        "mtp_layers", "head_dim"}},
      {"model.moe",
       {"experts", "top_k", "every", "ffn_hidden", "shared_experts", "shared_ffn_hidden", "first_k_dense", "router",
        "router_groups", "router_group_topk"}},
      {"model.mla", {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}},
      {"model.sliding_window", {"window", "full_every"}},
      {"hardware", {"name", "source", "gpu", "node", "network", "collectives", "host", "jitter"}},
      {"hardware.jitter", {"compute", "link"}},
      {"hardware.host", {"link_gbs", "memory_gib", "memory_gbs", "adam_gparams"}},
      {"hardware.gpu",
       {"name", "memory_gib", "hbm_gbs", "hbm_efficiency", "peak_tflops", "matmul_efficiency",
        "kernel_launch_us", "sms", "comm_sms", "tdp_w", "idle_w", "sustained_clock", "tables_hbm_gbs", "memory_bound_factor", "kernels"}},
      {"hardware.gpu.kernels",
       {"source", "gemm", "attention", "attention_flash2", "memory_bound", "cross_entropy", "optimizer", "contention",
        "overhead"}},
      {"hardware.gpu.kernels.gemm", {"model", "rows", "fp8_kernels"}},
      {"hardware.gpu.kernels.gemm.fp8_kernels", core::names_of<core::Fp8Kernel>(core::kFp8KernelCount)},
      {"hardware.gpu.kernels.gemm.model", {"bf16", "fp8"}},
      {"hardware.gpu.kernels.gemm.model.bf16", gemm_model_keys()},
      {"hardware.gpu.kernels.gemm.model.fp8", gemm_model_keys()},
      {"hardware.gpu.kernels.gemm.fp8_kernels.fast_accum", gemm_model_keys()},
      {"hardware.gpu.kernels.gemm.fp8_kernels.rowwise", gemm_model_keys()},
      {"hardware.gpu.kernels.gemm.fp8_kernels.blockwise", gemm_model_keys()},
      {"hardware.gpu.kernels.gemm.fp8_kernels.mxfp8", gemm_model_keys()},
      {"hardware.gpu.kernels.attention", {"forward", "backward"}},
      {"hardware.gpu.kernels.attention.forward", attention_keys()},
      {"hardware.gpu.kernels.attention.backward", attention_keys()},
      {"hardware.gpu.kernels.attention_flash2", {"forward", "backward"}},
      {"hardware.gpu.kernels.attention_flash2.forward", attention_keys()},
      {"hardware.gpu.kernels.attention_flash2.backward", attention_keys()},
      {"hardware.gpu.kernels.memory_bound", core::names_of<core::MemoryOp>(core::kMemoryOpCount)},
      {"hardware.gpu.kernels.memory_bound.layernorm", stream_keys()},
      {"hardware.gpu.kernels.memory_bound.rmsnorm", stream_keys()},
      {"hardware.gpu.kernels.memory_bound.gelu", stream_keys()},
      {"hardware.gpu.kernels.memory_bound.swiglu", stream_keys()},
      {"hardware.gpu.kernels.memory_bound.dropout", stream_keys()},
      {"hardware.gpu.kernels.memory_bound.residual_add", stream_keys()},
      {"hardware.gpu.kernels.cross_entropy", stream_keys()},
      {"hardware.gpu.kernels.optimizer", {"gbs"}},
      {"hardware.gpu.kernels.contention", {"factor"}},
      {"hardware.gpu.kernels.overhead", {"layer_us", "memory_bound_factor"}},
      {"hardware.gpu.peak_tflops", core::names_of<core::Precision>(core::kPrecisionCount)},
      {"hardware.gpu.matmul_efficiency", core::names_of<core::Precision>(core::kPrecisionCount)},
      {"hardware.node", {"gpus", "intra"}},
      {"hardware.node.intra", {"bandwidth_gbs", "latency_us", "efficiency"}},
      {"hardware.network",
       {"bandwidth_gbs", "latency_us", "efficiency", "topology", "oversubscription", "nics_per_node", "planes",
        "tiers", "placement"}},
      {"hardware.collectives", core::names_of<core::Collective>(core::kCollectiveCount)},
  };
  return table;
}

// The physical limits behind the bounds: the largest value a real model, GPU or cluster has, times
// a generous margin (docs/inputs.md "Valid ranges" cites each).
constexpr double kMaxLayers = 8192;          // 8x DeepNet's 1,000 layers (Wang et al. 2022)
constexpr double kMaxHidden = 1 << 18;       // 262144: 10x Megatron 1T's 25600
constexpr double kMaxFfn = 1 << 20;          // 10x Megatron 1T's 102400
constexpr double kMaxVocab = 1 << 22;        // 16x the 256k vocabularies of PaLM and Gemma
constexpr double kMaxSeq = 1 << 26;          // 67M tokens: 6.7x Llama 4 Scout's 10M context
constexpr double kMaxExperts = 1 << 22;      // 4x PEER's 1,048,576 experts (He 2024)
constexpr double kMaxGpus = 1 << 22;         // 4.2M: 20x the 200k GPUs of xAI's Colossus
constexpr double kMaxNodeGpus = 1 << 16;     // 65536: 100x an NVL576 domain
constexpr double kMaxBatch = 1 << 20;        // sequences per step: 16x LAMB's 65536 (You et al. 2020)
constexpr double kMaxVpp = 64;               // virtual stages per rank: 3x NeMo Llama 2 70B's 20 (a layer each)
constexpr double kMaxSms = 1 << 20;          // 1.2x Cerebras WSE-3's 900,000 cores
constexpr double kMaxGemmDim = 1LL << 40;    // a GEMM side: far beyond tokens x micro-batch
constexpr double kMaxMessage = 1LL << 50;    // 1 PiB: one collective's message, 65536x nccl-tests' 16 GiB
constexpr double kMaxMemoryGiB = 65536;      // 100x GH200's 624 GB (144 GB HBM3e + 480 GB LPDDR5X)
constexpr double kMinMemoryGiB = 1;          // below 1 GiB: TiB or bytes given as GiB
constexpr double kMinBandwidthGBs = 1e-3;    // 1 MB/s: below it a bandwidth is surely a unit mistake
constexpr double kMaxBandwidthGBs = 1e8;     // 100 PB/s: 5x Cerebras WSE-3's 21 PB/s on-chip memory
constexpr double kMaxLatencyUs = 1e6;        // 1 s: above it a latency is surely a unit mistake
constexpr double kMinPeakTflops = 1e-3;      // 1 GFLOP/s: less than one CPU core
constexpr double kMaxPeakTflops = 1e6;       // 1 EFLOP/s: 8x Cerebras WSE-3's 125 PFLOP/s (FP16 sparse)
constexpr double kMinEfficiency = 0.01;      // a large GEMM or a link at under 1% of its peak: a percentage given as a fraction
constexpr double kMinGemmEfficiency = 1e-6;  // a calibrated row may be a tiny GEMM (128^3 on an H100: 0.1%)
constexpr double kMaxOversubscription = 1024;  // real fabrics: 1 to 8
constexpr double kMaxRadix = 1 << 16;        // ports per switch: 128x the 512 of a Broadcom Tomahawk 6 at 200 Gb/s
constexpr double kMaxPlanes = 64;            // network planes: 8x the 8 planes of DeepSeek-V3's fabric
constexpr double kMaxPrefetchUnits = 64;     // units gathered ahead: a whole 64-layer model
constexpr double kMaxParams = 1e15;          // parameters: 1000x any model trained
constexpr double kMaxWatts = 1e5;            // 100 kW a GPU: 40x a GB300's 2.4 kW (with its CPU share)
constexpr double kMaxTokens = 1e18;          // 60,000x Llama 3's 15.6T tokens
constexpr double kMaxPrice = 1e6;            // a GPU-hour at a million: a price in the wrong unit
constexpr double kMaxTile = 4096;            // a GEMM tile side: 16x the largest cuBLAS tile (256)
constexpr double kMaxKernelUs = 1e9;         // one kernel of 1000 s: far beyond any GEMM of a layer
constexpr double kMaxFactor = 100;           // a fitted slowdown factor 100x: surely a wrong fit
constexpr double kMaxStepS = 1e7;            // a training step of 4 months
constexpr double kMaxTokensPerS = 1e12;      // 5x10^6 x the default scenario's 1.9e5 tokens/s

using Kind = Bound::Kind;
Bound count(double max) { return Bound{Kind::integer, 1, max, "", false}; }
Bound rate(Kind k, double min, double max, const char* unit) { return Bound{k, min, max, unit, false}; }

std::map<std::string, Bound, std::less<>> make_bounds() {
  std::map<std::string, Bound, std::less<>> t;
  // model
  t["model.layers"] = count(kMaxLayers);
  t["model.hidden"] = count(kMaxHidden);
  t["model.heads"] = count(kMaxHidden);
  t["model.kv_heads"] = count(kMaxHidden);
  t["model.ffn_hidden"] = count(kMaxFfn);
  t["model.vocab"] = count(kMaxVocab);
  t["model.max_seq_len"] = count(kMaxSeq);
  t["model.moe.experts"] = count(kMaxExperts);
  t["model.moe.top_k"] = count(kMaxExperts);
  t["model.moe.every"] = count(kMaxLayers);
  t["model.moe.ffn_hidden"] = count(kMaxFfn);
  const Bound none_or_count = Bound{Kind::integer, 0, kMaxExperts, "", false};
  t["model.moe.shared_experts"] = none_or_count;
  t["model.moe.shared_ffn_hidden"] = count(kMaxFfn);
  t["model.moe.first_k_dense"] = Bound{Kind::integer, 0, kMaxLayers, "", false};
  t["model.moe.router_groups"] = none_or_count;
  t["model.moe.router_group_topk"] = none_or_count;
  t["model.mla.q_lora_rank"] = Bound{Kind::integer, 0, kMaxHidden, "", false};
  t["model.mla.kv_lora_rank"] = count(kMaxHidden);
  t["model.mla.qk_nope_head_dim"] = Bound{Kind::integer, 0, kMaxHidden, "", false};
  t["model.mla.qk_rope_head_dim"] = Bound{Kind::integer, 0, kMaxHidden, "", false};
  t["model.mla.v_head_dim"] = count(kMaxHidden);
  t["model.sliding_window.window"] = count(kMaxSeq);
  t["model.sliding_window.full_every"] = Bound{Kind::integer, 0, kMaxLayers, "", false};
  // import hf: Llama 4's per-layer flag list (1: the layer uses RoPE, 0: NoPE, global attention)
  t["import.hf.no_rope_layers[]"] = Bound{Kind::integer, 0, 1, "", false};
  // import hf: Llama 4's NoPE period when no_rope_layers is absent or empty (transformers takes each
  // layer's index modulo it, so 0 is a ZeroDivisionError; above the layers, no NoPE layer)
  t["import.hf.no_rope_layer_interval"] = Bound{Kind::integer, 1, 1e9, "", false};
  // import hf: Qwen2-MoE's shared expert width (0: no shared expert)
  t["import.hf.shared_expert_intermediate_size"] = Bound{Kind::integer, 0, kMaxFfn, "", false};
  t["model.head_dim"] = count(kMaxHidden);
  t["model.mtp_layers"] = Bound{Kind::integer, 0, kMaxLayers, "", false};
  // hardware
  const Bound bandwidth = rate(Kind::positive, kMinBandwidthGBs, kMaxBandwidthGBs, "GB/s");
  const Bound latency = rate(Kind::non_negative, 0, kMaxLatencyUs, "us");
  const Bound efficiency = rate(Kind::fraction, kMinEfficiency, 1, "");
  t["hardware.gpu.memory_gib"] = rate(Kind::positive, kMinMemoryGiB, kMaxMemoryGiB, "GiB");
  t["hardware.gpu.hbm_gbs"] = bandwidth;
  t["hardware.gpu.hbm_efficiency"] = efficiency;
  t["hardware.gpu.matmul_efficiency"] = efficiency;
  for (int p = 0; p < core::kPrecisionCount; ++p) {
    const std::string name(core::name(static_cast<core::Precision>(p)));
    t["hardware.gpu.peak_tflops." + name] = rate(Kind::positive, kMinPeakTflops, kMaxPeakTflops, "TFLOP/s");
    t["hardware.gpu.matmul_efficiency." + name] = efficiency;
  }
  for (const char* d : {"m", "n", "k"})
    t[std::string("hardware.gpu.matmul_efficiency[].") + d] = count(kMaxGemmDim);
  t["hardware.gpu.matmul_efficiency[].efficiency"] = rate(Kind::fraction, kMinGemmEfficiency, 1, "");
  t["hardware.gpu.kernel_launch_us"] = latency;
  // power: a GPU's board power (docs/inputs.md; hardware/FACTS.md)
  t["hardware.gpu.tdp_w"] = rate(Kind::positive, 0, kMaxWatts, "W");
  t["hardware.gpu.sustained_clock"] = rate(Kind::fraction, 0.1, 1, "");
  t["hardware.gpu.memory_bound_factor"] = rate(Kind::positive, 0, kMaxFactor, "");
  t["hardware.gpu.tables_hbm_gbs"] = bandwidth;
  t["hardware.gpu.idle_w"] = rate(Kind::positive, 0, kMaxWatts, "W");
  // gpu.kernels (docs/inputs.md "Kernel tables")
  const std::string kern = "hardware.gpu.kernels.";
  const Bound tflops = rate(Kind::positive, kMinPeakTflops, kMaxPeakTflops, "TFLOP/s");
  const Bound stream = rate(Kind::non_negative, 0, kMaxBandwidthGBs, "GB/s");  // 0: not measured
  for (const char* p : {"model.bf16", "model.fp8", "fp8_kernels.fast_accum", "fp8_kernels.rowwise",
                        "fp8_kernels.blockwise", "fp8_kernels.mxfp8"}) {
    const std::string m = kern + "gemm." + p + ".";
    t[m + "tflops"] = tflops;
    t[m + "epilogue_gbs"] = bandwidth;
    t[m + "floor_us"] = latency;
    t[m + "knee"] = rate(Kind::positive, 0, 1000, "");      // a dimensionless shape parameter: 1.8-2.6 on H100
    t[m + "tail"] = rate(Kind::non_negative, 0, 1, "");     // a fraction of the wave
    t[m + "tile_m"] = count(kMaxTile);
    t[m + "tile_n"] = count(kMaxTile);
  }
  for (const char* d : {"m", "n", "k"}) t[kern + "gemm.rows[]." + d] = count(kMaxGemmDim);
  t[kern + "gemm.rows[].time_us"] = rate(Kind::positive, 0, kMaxKernelUs, "us");
  for (const char* table : {"attention.", "attention_flash2."}) {
    for (const char* pass : {"forward", "backward"}) {
      t[kern + table + pass + ".tflops"] = tflops;
      t[kern + table + pass + ".q_gbs"] = stream;
      t[kern + table + pass + ".kv_gbs"] = stream;
    }
  }
  for (int i = 0; i < core::kMemoryOpCount; ++i) {
    const std::string op = kern + "memory_bound." + std::string(core::name(static_cast<core::MemoryOp>(i))) + ".";
    t[op + "forward_gbs"] = bandwidth;
    t[op + "backward_gbs"] = bandwidth;
  }
  t[kern + "cross_entropy.forward_gbs"] = bandwidth;
  t[kern + "cross_entropy.backward_gbs"] = bandwidth;
  t[kern + "optimizer.gbs"] = bandwidth;
  t[kern + "contention.factor"] = rate(Kind::positive, 0, kMaxFactor, "");
  t[kern + "overhead.layer_us"] = latency;
  t[kern + "overhead.memory_bound_factor"] = rate(Kind::positive, 0, kMaxFactor, "");
  t["hardware.gpu.sms"] = count(kMaxSms);
  t["hardware.gpu.comm_sms"] = Bound{Kind::integer, 0, kMaxSms, "", false};
  t["hardware.node.gpus"] = count(kMaxNodeGpus);
  for (const std::string link : {"hardware.node.intra.", "hardware.network."}) {
    t[link + "bandwidth_gbs"] = bandwidth;
    t[link + "latency_us"] = latency;
    t[link + "efficiency"] = efficiency;
  }
  // the cost of scale: relative standard deviations of a rank's time per step (docs/inputs.md
  // "Hardware file"); 0.5 is 20x the fitted values and past any measured spread (Sinha et al. 2022)
  t["hardware.jitter.compute"] = rate(Kind::non_negative, 0, 0.5, "");
  t["hardware.jitter.link"] = rate(Kind::non_negative, 0, 0.5, "");
  // the host of CPU offload (docs/inputs.md "Hardware file"; hardware/FACTS.md section 7)
  t["hardware.host.link_gbs"] = bandwidth;
  t["hardware.host.memory_gib"] = rate(Kind::positive, kMinMemoryGiB, kMaxMemoryGiB, "GiB");
  t["hardware.host.memory_gbs"] = bandwidth;
  // 1e6 billion parameters a second: 1000x the memory-bound rate of a 1 PB/s host at 34 bytes a parameter
  t["hardware.host.adam_gparams"] = rate(Kind::positive, 0, 1e6, "");
  t["hardware.network.oversubscription"] = rate(Kind::at_least_one, 1, kMaxOversubscription, "");
  // the fabric (docs/inputs.md "Network topology")
  t["hardware.network.nics_per_node"] = count(kMaxNodeGpus);
  t["hardware.network.planes"] = count(kMaxPlanes);
  t["hardware.network.tiers[].radix"] = Bound{Kind::integer, 2, kMaxRadix, "", false};
  t["hardware.network.tiers[].bandwidth_gbs"] = bandwidth;
  t["hardware.network.tiers[].latency_us"] = latency;
  t["hardware.network.tiers[].oversubscription"] = rate(Kind::at_least_one, 1, kMaxOversubscription, "");
  t["hardware.network.tiers[].nodes"] = count(kMaxGpus);
  for (int c = 0; c < core::kCollectiveCount; ++c) {
    const std::string row = "hardware.collectives." + std::string(core::name(static_cast<core::Collective>(c))) + "[].";
    t[row + "ranks"] = count(kMaxGpus);
    t[row + "ranks_per_node"] = count(kMaxGpus);
    t[row + "alpha_us"] = latency;
    t[row + "busbw_gbs"] = bandwidth;
    t[row + "min_bytes"] = rate(Kind::non_negative, 0, kMaxMessage, "bytes");
    t[row + "max_bytes"] = Bound{Kind::positive, 0, kMaxMessage, "bytes", true};
  }
  // scenario
  t["cluster.gpus"] = count(kMaxGpus);
  t["cluster.nodes"] = count(kMaxGpus);
  for (const char* d : {"tp", "pp", "dp", "cp", "ep", "etp"}) t[std::string("parallel.") + d] = count(kMaxGpus);
  t["parallel.vpp"] = count(kMaxVpp);
  t["parallel.zero"] = Bound{Kind::integer, 0, core::kMaxZeroStage, "", false};
  t["parallel.stage_layers[]"] = count(kMaxLayers);
  t["parallel.first_stage_layers"] = count(kMaxLayers);
  // parallel.sharding (ZeRO-3 / FSDP, docs/inputs.md "Sharding")
  t["parallel.sharding.unit_layers"] = rate(Kind::positive, 0, kMaxLayers, "");  // a fraction: submodules of a layer
  t["parallel.sharding.prefetch_units"] = count(kMaxPrefetchUnits);
  t["parallel.sharding.max_live_params"] = rate(Kind::non_negative, 0, kMaxParams, "");
  t["parallel.sharding.overhead_us"] = latency;
  t["parallel.sharding.overhead_per_rank_us"] = latency;
  t["parallel.sharding.shard_ranks"] = count(kMaxGpus);
  t["parallel.last_stage_layers"] = count(kMaxLayers);
  t["training.seq_len"] = count(kMaxSeq);
  t["training.micro_batch"] = count(kMaxBatch);
  t["training.global_batch"] = count(kMaxBatch);
  t["training.tokens"] = rate(Kind::at_least_one, 1, kMaxTokens, "");
  t["cost.gpu_hour"] = rate(Kind::positive, 0, kMaxPrice, "");
  // a bucket bigger than the model is one bucket; 1e15 parameters is 1000x any model trained
  t["training.dp_bucket_params"] = rate(Kind::at_least_one, 1, 1e15, "");
  // the busiest expert's tokens over the mean: at least 1 by definition, at most every token of
  // the ep group on one expert (kMaxExperts experts); a capacity factor the same range, or 0
  t["training.moe.load_imbalance"] = rate(Kind::at_least_one, 1, kMaxExperts, "");
  t["training.moe.capacity_factor"] = rate(Kind::non_negative, 0, kMaxExperts, "");
  // a share of the optimizer (Megatron-Core --optimizer-offload-fraction)
  t["training.offload_fraction"] = rate(Kind::non_negative, 0, 1, "");
  // dataset records
  t["measured.step_s"] = rate(Kind::positive, 0, kMaxStepS, "s");
  t["measured.tflops_per_gpu"] = rate(Kind::positive, 0, kMaxPeakTflops, "TFLOP/s");
  t["measured.peak_memory_gib"] = rate(Kind::positive, 0, kMaxMemoryGiB, "GiB");
  t["measured.peak_reserved_gib"] = rate(Kind::positive, 0, kMaxMemoryGiB, "GiB");
  t["measured.tokens_per_s"] = rate(Kind::positive, 0, kMaxTokensPerS, "");
  return t;
}

const std::map<std::string, Bound, std::less<>>& bounds() {
  static const auto table = make_bounds();
  return table;
}

}  // namespace

const std::vector<std::string>& section_keys(const std::string& section) {
  static const std::vector<std::string> none;
  auto it = sections().find(section);
  return it == sections().end() ? none : it->second;
}

const std::vector<std::string>& all_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for (const auto& [section, keys] : sections())
      for (const auto& k : keys) out.push_back(section.empty() ? k : section + "." + k);
    return out;
  }();
  return paths;
}

const std::vector<std::string>& matmul_row_keys() {
  static const std::vector<std::string> k{"precision", "m", "n", "k", "efficiency"};
  return k;
}
const std::vector<std::string>& gemm_row_keys() {
  static const std::vector<std::string> k{"precision", "m", "n", "k", "time_us"};
  return k;
}
const std::vector<std::string>& collective_row_keys() {
  static const std::vector<std::string> k{"scope",     "ranks",     "ranks_per_node", "gpu",       "algorithm",
                                          "protocol",  "alpha_us",  "busbw_gbs",      "min_bytes", "max_bytes"};
  return k;
}
const std::vector<std::string>& tier_row_keys() {
  static const std::vector<std::string> k{"name", "radix", "bandwidth_gbs", "latency_us", "oversubscription", "nodes"};
  return k;
}
const std::vector<std::string>& record_keys() {
  static const std::vector<std::string> k{"name",  "source",       "flops_convention", "split",
                                          "notes", "not_modelled", "scenario",         "measured"};
  return k;
}
const std::vector<std::string>& measured_keys() {
  static const std::vector<std::string> k{"step_s", "tflops_per_gpu", "peak_memory_gib", "peak_reserved_gib",
                                          "tokens_per_s"};
  return k;
}

const Bound& bound_of(std::string_view path) {
  // "a[12].b" -> "a[].b"
  std::string key;
  key.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    key += path[i];
    if (path[i] == '[') {
      while (i + 1 < path.size() && std::isdigit(static_cast<unsigned char>(path[i + 1]))) ++i;
    }
  }
  auto it = bounds().find(key);
  if (it == bounds().end())
    throw std::logic_error("no valid range for numeric key '" + key + "' in src/io/schema.cpp");
  return it->second;
}

std::vector<std::pair<std::string, Bound>> all_bounds() {
  return {bounds().begin(), bounds().end()};
}

}  // namespace ptdsim::io::detail
