#include "schema.hpp"

#include <map>

#include "ptdsim/core/names.hpp"

namespace ptdsim::io::detail {
namespace {

template <class E>
std::vector<std::string> names_of(int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.emplace_back(core::name(static_cast<E>(i)));
  return out;
}

std::vector<std::string> gemm_model_keys() {
  return {"tflops", "epilogue_gbs", "floor_us", "knee", "tail", "tile_m", "tile_n"};
}
std::vector<std::string> attention_keys() { return {"tflops", "q_gbs", "kv_gbs"}; }
std::vector<std::string> stream_keys() { return {"forward_gbs", "backward_gbs"}; }

const std::map<std::string, std::vector<std::string>>& sections() {
  static const std::map<std::string, std::vector<std::string>> table{
      {"", {"name", "source", "model", "hardware", "cluster", "parallel", "training"}},
      {"cluster", {"gpus", "nodes"}},
      {"parallel",
       {"tp", "pp", "dp", "cp", "ep", "vpp", "sequence_parallel", "zero", "schedule", "placement",
        "stage_layers"}},
      {"training",
       {"seq_len", "micro_batch", "global_batch", "precision", "recompute", "flash_attention",
        "optimizer", "overlap"}},
      {"training.overlap", {"dp", "tp", "pp", "zero3_prefetch"}},
      {"model",
       {"name", "source", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "mlp", "norm",
        "position", "max_seq_len", "tied_embeddings", "bias", "moe"}},
      {"model.moe", {"experts", "top_k", "every", "ffn_hidden"}},
      {"hardware", {"name", "source", "gpu", "node", "network", "collectives"}},
      {"hardware.gpu",
       {"name", "memory_gib", "hbm_gbs", "hbm_efficiency", "peak_tflops", "matmul_efficiency",
        "kernel_launch_us", "sms", "comm_sms", "kernels"}},
      {"hardware.gpu.kernels",
       {"source", "gemm", "attention", "memory_bound", "cross_entropy", "optimizer", "contention", "overhead"}},
      {"hardware.gpu.kernels.gemm", {"model", "rows"}},
      {"hardware.gpu.kernels.gemm.model", {"bf16", "fp8"}},
      {"hardware.gpu.kernels.gemm.model.bf16", gemm_model_keys()},
      {"hardware.gpu.kernels.gemm.model.fp8", gemm_model_keys()},
      {"hardware.gpu.kernels.attention", {"forward", "backward"}},
      {"hardware.gpu.kernels.attention.forward", attention_keys()},
      {"hardware.gpu.kernels.attention.backward", attention_keys()},
      {"hardware.gpu.kernels.memory_bound", names_of<core::MemoryOp>(core::kMemoryOpCount)},
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
      {"hardware.gpu.peak_tflops", names_of<core::Precision>(core::kPrecisionCount)},
      {"hardware.gpu.matmul_efficiency", names_of<core::Precision>(core::kPrecisionCount)},
      {"hardware.node", {"gpus", "intra"}},
      {"hardware.node.intra", {"bandwidth_gbs", "latency_us", "efficiency"}},
      {"hardware.network", {"bandwidth_gbs", "latency_us", "efficiency", "topology", "oversubscription"}},
      {"hardware.collectives", names_of<core::Collective>(core::kCollectiveCount)},
  };
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
  static const std::vector<std::string> k{"scope", "ranks", "alpha_us", "busbw_gbs", "min_bytes", "max_bytes"};
  return k;
}
const std::vector<std::string>& record_keys() {
  static const std::vector<std::string> k{"name",  "source",       "flops_convention", "split",
                                          "notes", "not_modelled", "scenario",         "measured"};
  return k;
}
const std::vector<std::string>& measured_keys() {
  static const std::vector<std::string> k{"step_s", "tflops_per_gpu", "peak_memory_gib", "tokens_per_s"};
  return k;
}

}  // namespace ptdsim::io::detail
