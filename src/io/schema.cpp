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

const std::map<std::string, std::vector<std::string>>& sections() {
  static const std::map<std::string, std::vector<std::string>> table{
      {"", {"name", "source", "model", "hardware", "cluster", "parallel", "training", "cost"}},
      {"cluster", {"gpus", "nodes"}},
      {"cost", {"gpu_hour"}},
      {"parallel",
       {"tp", "pp", "dp", "cp", "ep", "vpp", "sequence_parallel", "zero", "schedule", "placement",
        "stage_layers"}},
      {"training",
       {"seq_len", "micro_batch", "global_batch", "precision", "recompute", "flash_attention",
        "optimizer", "overlap", "framework", "dp_bucket_params", "main_grads", "tokens"}},
      {"training.overlap", {"dp", "tp", "pp", "zero3_prefetch"}},
      {"model",
       {"name", "source", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "mlp", "norm",
        "position", "max_seq_len", "tied_embeddings", "bias", "moe"}},
      {"model.moe", {"experts", "top_k", "every", "ffn_hidden"}},
      {"hardware", {"name", "source", "gpu", "node", "network", "collectives"}},
      {"hardware.gpu",
       {"name", "memory_gib", "hbm_gbs", "hbm_efficiency", "peak_tflops", "matmul_efficiency",
        "kernel_launch_us", "sms", "comm_sms", "tdp_w", "idle_w"}},
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
