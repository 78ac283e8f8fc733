#include <algorithm>

#include "ptdsim/core/framework.hpp"

// The framework table. Each value is the framework's own default (or, for NeMo, the setting its
// published performance recipes share), with the config key it comes from; docs/inputs.md
// "Framework defaults" gives the full citation of every entry. A switch a framework does not
// decide (a model's recompute policy under DeepSpeed, say) is left out of its row, so the tool's
// default or the scenario decides it.
namespace ptdsim::core {

const std::vector<Framework>& frameworks() {
  static const std::vector<Framework> table{
      // Megatron-LM before Megatron-Core (Narayanan et al. 2021, Korthikanti et al. 2022):
      // --DDP-impl local all-reduced the gradients after the whole backward pass; sequence
      // parallelism and the distributed optimizer were opt-in flags (v3.0, 2022); no FlashAttention.
      {"megatron-lm-2021",
       "Megatron-LM 2021-2022, before Megatron-Core",
       {{"parallel.sequence_parallel", "false"},  // --sequence-parallel: store_true
        {"parallel.zero", "0"},                   // --use-distributed-optimizer: store_true
        {"training.recompute", "none"},           // --checkpoint-activations / --recompute-granularity: off
        {"training.flash_attention", "false"},    // --use-flash-attn arrived in 2023
        {"training.overlap.tp", "false"},         // no TP communication overlap before TE userbuffers
        {"training.overlap.dp", "false"}}},       // train_step: allreduce_gradients() after the backward
      // Megatron-Core r0.8.0 (Megatron-LM arguments.py and DistributedDataParallelConfig, 2024).
      // The DP bucket is left to the engine, whose rule is Megatron's max(40M, 1M*dp) parameters.
      {"megatron-core-0.8",
       "Megatron-Core r0.8.0 (2024)",
       {{"parallel.sequence_parallel", "false"},  // --sequence-parallel: store_true
        {"parallel.zero", "0"},                   // use_distributed_optimizer = False
        {"training.recompute", "none"},           // --recompute-granularity: None
        {"training.flash_attention", "true"},     // --transformer-impl transformer_engine: fused/flash attention
        {"training.overlap.tp", "false"},         // --tp-comm-overlap: store_true
        {"training.overlap.dp", "false"},         // overlap_grad_reduce = False
        {"training.overlap.pp", "true"}}},        // --no-overlap-p2p-communication: overlap_p2p_comm = True
      // NeMo 24.07's performance recipes (NeMo-Framework-Launcher conf/training: llama3_70b.yaml,
      // nemotron_340b.yaml, gpt3/175b.yaml), the configurations of its performance summary.
      {"nemo-24.07",
       "NeMo Framework 24.07 performance recipes",
       {{"parallel.sequence_parallel", "true"},   // sequence_parallel: true
        {"parallel.zero", "1"},                   // optim.name: mcore_distributed_optim
        {"training.recompute", "none"},           // activations_checkpoint_granularity: null
        {"training.flash_attention", "true"},     // use_flash_attention: true
        {"training.overlap.tp", "true"},          // ub_tp_comm_overlap: true
        {"training.overlap.dp", "true"},          // optim.overlap_grad_sync / overlap_param_sync: true
        {"training.overlap.pp", "true"}}},        // overlap_p2p_comm: true
      // DeepSpeed ZeRO (deepspeed/runtime/zero/config.py) and its pipeline engine.
      {"deepspeed",
       "DeepSpeed ZeRO config defaults (the same in its 2021 and current config code)",
       {{"parallel.zero", "0"},                     // zero_optimization.stage: 0
        {"training.overlap.dp", "false"},           // overlap_comm: false below stage 3; the pipeline
                                                    // engine reduces after the last micro-batch
        {"training.overlap.zero3_prefetch", "true"},  // stage 3: overlap_comm true, prefetch 5e7
        {"training.dp_bucket_params", "5e8"},       // reduce_bucket_size: 5e8 elements
        {"training.main_grads", "16bit"}}},         // 16-bit .grad, an fp32 copy of the shard at the
                                                    // step (stage_1_and_2.py step)
      // PyTorch FSDP (FSDP1) constructor defaults, torch 2.0.
      {"pytorch-fsdp",
       "PyTorch 2.0 FullyShardedDataParallel",
       {{"parallel.zero", "3"},                       // sharding_strategy None = FULL_SHARD
        {"training.overlap.dp", "true"},              // reduce-scatter per unit in its post-backward hook
        {"training.overlap.zero3_prefetch", "true"}}},  // backward_prefetch = BACKWARD_PRE
      // MosaicML llm-foundry MPT pretraining and benchmark settings (Composer on FSDP).
      {"llm-foundry",
       "llm-foundry MPT pretrain yamls and benchmark sweep (2023)",
       {{"parallel.zero", "3"},                       // fsdp_config.sharding_strategy: FULL_SHARD
        {"training.recompute", "full"},               // fsdp_config.activation_checkpointing: true
        {"training.flash_attention", "true"},         // attn_config.attn_impl: triton
        {"training.overlap.dp", "true"},              // FSDP reduce-scatter per unit
        {"training.overlap.zero3_prefetch", "true"}}},  // FSDP backward prefetch (Composer default)
  };
  return table;
}

const Framework* find_framework(std::string_view name) {
  const auto& t = frameworks();
  auto it = std::find_if(t.begin(), t.end(), [&](const Framework& f) { return f.name == name; });
  return it == t.end() ? nullptr : &*it;
}

std::vector<std::string> framework_names() {
  std::vector<std::string> out;
  for (const auto& f : frameworks()) out.emplace_back(f.name);
  return out;
}

}  // namespace ptdsim::core
