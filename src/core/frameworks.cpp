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
        {"training.overlap.dp", "false"},         // train_step: allreduce_gradients() after the backward
        {"training.fusion.norm", "eager"},        // Apex FusedLayerNorm: its backward reads dy and x twice
        {"training.fusion.activation", "fused"},  // --bias-gelu-fusion (on unless --no-bias-gelu-fusion)
        {"training.fusion.dropout_add", "fused"},  // --bias-dropout-fusion (on unless --no-bias-dropout-fusion)
        {"training.fusion.cross_entropy", "vocab_parallel"}}},  // mpu/cross_entropy.py, unfused
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
        {"training.overlap.pp", "true"},        // --no-overlap-p2p-communication: overlap_p2p_comm = True
        {"training.overlap.offload", "false", "training.offload"},  // HybridDeviceOptimizer copies grads in step()
        {"training.fusion.norm", "fused"},        // --transformer-impl transformer_engine: TE's norms
        {"training.fusion.activation", "fused"},  // --no-bias-swiglu-fusion / --no-bias-gelu-fusion: store_false
        {"training.fusion.dropout_add", "fused"},  // --no-bias-dropout-fusion: store_false
        {"training.fusion.rope", "fused"},        // --no-rope-fusion: store_false (apply_rope_fusion)
        {"training.fusion.cross_entropy", "vocab_parallel"},  // --cross-entropy-loss-fusion: store_true
        {"training.cp_comm", "p2p"},                // TE's ring (AttnFuncWithCPAndKVP2P); later --cp-comm-type default p2p
        {"training.fusion.wgrad_accumulation", "fused"},  // --no-gradient-accumulation-fusion: store_false
        {"training.moe.dispatcher", "allgather"}}},  // --moe-token-dispatcher-type: default 'allgather'
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
        {"training.overlap.pp", "true"},        // overlap_p2p_comm: true
        {"training.overlap.offload", "false", "training.offload"},  // HybridDeviceOptimizer copies grads in step()
        {"training.fusion.norm", "fused"},        // transformer_engine: true (TE's norms)
        {"training.fusion.activation", "fused"},  // bias_activation_fusion: true
        {"training.fusion.dropout_add", "fused"},  // bias_dropout_add_fusion: true
        {"training.fusion.rope", "fused"},        // apply_rope_fusion: true
        {"training.fusion.cross_entropy", "fused"},  // cross_entropy_loss_fusion: true
        {"training.cp_comm", "p2p"},  // cp_comm_type: Megatron-Core's default p2p, which the recipes keep
        {"training.fusion.wgrad_accumulation", "fused"}}},  // gradient_accumulation_fusion: true
      // Megatron-Core r0.8.0 with its distributed optimizer (--use-distributed-optimizer): gradients
      // reduce-scattered and parameters all-gathered over the data-parallel group, overlaps opt-in.
      {"megatron-core-0.8-distopt",
       "Megatron-Core r0.8.0 (2024) with --use-distributed-optimizer",
       {{"parallel.sequence_parallel", "false"},  // --sequence-parallel: store_true
        {"parallel.zero", "1"},                   // --use-distributed-optimizer: optimizer states sharded
        {"training.recompute", "none"},           // --recompute-granularity: None
        {"training.flash_attention", "true"},     // transformer_engine attention
        {"training.overlap.tp", "false"},         // --tp-comm-overlap: store_true
        {"training.overlap.dp", "false"},         // --overlap-grad-reduce / --overlap-param-gather: store_true
        {"training.overlap.pp", "true"},        // overlap_p2p_comm = True
        {"training.overlap.offload", "false", "training.offload"},  // HybridDeviceOptimizer copies grads in step()
        {"training.fusion.norm", "fused"},        // --transformer-impl transformer_engine: TE's norms
        {"training.fusion.activation", "fused"},  // --no-bias-swiglu-fusion / --no-bias-gelu-fusion: store_false
        {"training.fusion.dropout_add", "fused"},  // --no-bias-dropout-fusion: store_false
        {"training.fusion.rope", "fused"},        // --no-rope-fusion: store_false (apply_rope_fusion)
        {"training.fusion.cross_entropy", "vocab_parallel"},  // --cross-entropy-loss-fusion: store_true
        {"training.cp_comm", "p2p"},                // TE's ring (AttnFuncWithCPAndKVP2P); later --cp-comm-type default p2p
        {"training.fusion.wgrad_accumulation", "fused"},  // --no-gradient-accumulation-fusion: store_false
        {"training.moe.dispatcher", "allgather"}}},  // --moe-token-dispatcher-type: default 'allgather'
      // Megatron-FSDP (Megatron-Core's own FSDP, --use-custom-fsdp with
      // --data-parallel-sharding-strategy optim_grads_params, core_r0.12.0).
      {"megatron-fsdp",
       "Megatron-Core r0.12.0 Megatron-FSDP (optim_grads_params)",
       {{"parallel.zero", "3"},                          // optim_grads_params: ZeRO-3
        {"parallel.sharding.unit_layers", "1"},          // one FSDP unit per TransformerLayer
        {"parallel.sharding.reduce_dtype", "fp32"},      // --bf16 sets accumulate_allreduce_grads_in_fp32
        {"training.recompute", "none"},                  // --recompute-granularity: None
        {"training.flash_attention", "true"},            // transformer_engine attention
        {"training.overlap.dp", "true"},                 // overlap_grad_reduce: required by custom FSDP
        {"training.overlap.zero3_prefetch", "true"},   // overlap_param_gather: the next unit prefetched
        {"training.overlap.offload", "false", "training.offload"},  // HybridDeviceOptimizer copies grads in step()
        {"training.fusion.norm", "fused"},        // --transformer-impl transformer_engine: TE's norms
        {"training.fusion.activation", "fused"},  // --no-bias-swiglu-fusion / --no-bias-gelu-fusion: store_false
        {"training.fusion.dropout_add", "fused"},  // --no-bias-dropout-fusion: store_false
        {"training.fusion.rope", "fused"},        // --no-rope-fusion: store_false (apply_rope_fusion)
        {"training.fusion.cross_entropy", "vocab_parallel"},  // --cross-entropy-loss-fusion: store_true
        {"training.cp_comm", "p2p"},                // TE's ring (AttnFuncWithCPAndKVP2P); later --cp-comm-type default p2p
        {"training.fusion.wgrad_accumulation", "fused"},  // --no-gradient-accumulation-fusion: store_false
        {"training.moe.dispatcher", "allgather"}}},  // --moe-token-dispatcher-type: default 'allgather'
      // DeepSpeed ZeRO (deepspeed/runtime/zero/config.py) and its pipeline engine. At stage 3 it
      // fetches each submodule's weights with its own all-gather (parameter_offload.py hooks).
      {"deepspeed",
       "DeepSpeed ZeRO config defaults (the same in its 2021 and current config code)",
       {{"parallel.zero", "0"},                     // zero_optimization.stage: 0
        {"parallel.sharding.unit_layers", "0.25"},  // a submodule per fetch: QKV, projection, fc1, fc2
        {"parallel.sharding.regather_on_recompute", "true"},  // recomputed forward re-fetches
        {"parallel.sharding.reduce_dtype", "fp16"},  // communication_data_type: the model's 16 bits
        {"parallel.sharding.max_live_params", "1e9"},  // stage3_max_live_parameters
        {"training.overlap.dp", "false"},           // overlap_comm: false below stage 3; the pipeline
                                                    // engine reduces after the last micro-batch
        {"training.overlap.zero3_prefetch", "true"},  // stage 3: overlap_comm true, prefetch 5e7
        {"training.dp_bucket_params", "5e8"},       // reduce_bucket_size: 5e8 elements
        {"training.main_grads", "16bit"},         // 16-bit .grad, an fp32 copy of the shard at the
                                                  // step (stage_1_and_2.py step)
        {"training.overlap.offload", "true", "training.offload"},  // cpu_offload: each reduced bucket copied in backward
        {"training.fusion.norm", "eager"},        // the model's own nn.LayerNorm / RMSNorm
        {"training.fusion.activation", "eager"},  // F.silu(w1(x)) * w3(x), F.gelu
        {"training.fusion.dropout_add", "eager"},  // nn.Dropout, then the residual add
        {"training.fusion.rope", "eager"},        // the model's rotary code
        {"training.fusion.cross_entropy", "eager"},  // F.cross_entropy
        {"training.fusion.wgrad_accumulation", "none"}}},  // autograd's 16-bit .grad is what is reduced
      // DeepSpeed v0.3.16 (May 2021), the ZeRO-3 Narayanan et al. 2021 compared against: the same
      // config defaults, but each parameter's all-gather synchronised the device and built its
      // per-rank views and copies on the host (issue #1069, PR #1188).
      {"deepspeed-0.3",
       "DeepSpeed v0.3.16 ZeRO-3 (spring 2021)",
       {{"parallel.zero", "0"},                     // zero_optimization.stage: 0
        {"parallel.sharding.unit_layers", "0.25"},  // a submodule per fetch: QKV, projection, fc1, fc2
        {"parallel.sharding.regather_on_recompute", "true"},  // recomputed forward re-fetches
        {"parallel.sharding.reduce_dtype", "fp16"},  // FP16_DeepSpeedZeroOptimizer_Stage3: fp16 grads
        {"parallel.sharding.max_live_params", "1e9"},  // stage3_max_live_parameters
        {"parallel.sharding.sync", "true"},         // torch.cuda.synchronize() in every fetch
        {"parallel.sharding.overhead_us", "130"},   // #1069: "pre_launch typically takes 130us"
        {"parallel.sharding.overhead_per_rank_us", "31.25"},  // #1069: launch 250 us over 8 ranks
        {"training.overlap.dp", "false"},
        {"training.overlap.zero3_prefetch", "true"},
        {"training.dp_bucket_params", "5e8"},       // reduce_bucket_size: 5e8 elements
        {"training.main_grads", "16bit"},         // as the deepspeed row
        {"training.overlap.offload", "true", "training.offload"},  // cpu_offload: each reduced bucket copied in backward
        {"training.fusion.norm", "eager"},        // the model's own nn.LayerNorm / RMSNorm
        {"training.fusion.activation", "eager"},  // F.silu(w1(x)) * w3(x), F.gelu
        {"training.fusion.dropout_add", "eager"},  // nn.Dropout, then the residual add
        {"training.fusion.rope", "eager"},        // the model's rotary code
        {"training.fusion.cross_entropy", "eager"},  // F.cross_entropy
        {"training.fusion.wgrad_accumulation", "none"}}},  // autograd's 16-bit .grad is what is reduced
      // PyTorch FSDP (FSDP1) constructor defaults, torch 2.0.
      {"pytorch-fsdp",
       "PyTorch 2.0 FullyShardedDataParallel",
       {{"parallel.zero", "3"},                       // sharding_strategy None = FULL_SHARD
        {"parallel.sharding.unit_layers", "1"},       // transformer_auto_wrap_policy: a block per unit
        {"parallel.sharding.reduce_dtype", "bf16"},   // MixedPrecision.reduce_dtype None: param_dtype
        {"training.overlap.dp", "true"},              // reduce-scatter per unit in its post-backward hook
        {"training.overlap.zero3_prefetch", "true"},  // backward_prefetch = BACKWARD_PRE
        {"training.attention_kernel", "flash2"},    // SDPA's flash backend (FlashAttention-1 in 2.0)
        {"training.fusion.norm", "eager"},        // the model's own nn.LayerNorm / RMSNorm
        {"training.fusion.activation", "eager"},  // F.silu(w1(x)) * w3(x), F.gelu
        {"training.fusion.dropout_add", "eager"},  // nn.Dropout, then the residual add
        {"training.fusion.rope", "eager"},        // the model's rotary code
        {"training.fusion.cross_entropy", "eager"},  // F.cross_entropy
        {"training.fusion.wgrad_accumulation", "none"}}},  // autograd's 16-bit .grad is what is reduced
      // PyTorch FSDP2 (torch.distributed.fsdp.fully_shard), torch 2.6.
      {"pytorch-fsdp2",
       "PyTorch 2.6 fully_shard (FSDP2)",
       {{"parallel.zero", "3"},                       // reshard_after_forward=True: ZeRO-3
        {"parallel.sharding.unit_layers", "1"},       // fully_shard applied to each block
        {"parallel.sharding.reduce_dtype", "bf16"},   // MixedPrecisionPolicy.reduce_dtype None: param_dtype
        {"training.overlap.dp", "true"},              // reduce-scatter per unit on its own stream
        {"training.overlap.zero3_prefetch", "true"},  // implicit prefetch, forward and backward
        {"training.attention_kernel", "flash2"},    // SDPA picks FlashAttention-2 first (pytorch#142132)
        {"training.fusion.norm", "eager"},        // the model's own nn.LayerNorm / RMSNorm
        {"training.fusion.activation", "eager"},  // F.silu(w1(x)) * w3(x), F.gelu
        {"training.fusion.dropout_add", "eager"},  // nn.Dropout, then the residual add
        {"training.fusion.rope", "eager"},        // the model's rotary code
        {"training.fusion.cross_entropy", "eager"},  // F.cross_entropy
        {"training.fusion.wgrad_accumulation", "none"}}},  // autograd's 16-bit .grad is what is reduced
      // MosaicML llm-foundry MPT pretraining and benchmark settings (Composer on FSDP).
      {"llm-foundry",
       "llm-foundry MPT pretrain yamls and benchmark sweep (2023)",
       {{"parallel.zero", "3"},                       // fsdp_config.sharding_strategy: FULL_SHARD
        {"parallel.sharding.unit_layers", "1"},       // Composer wraps each MPTBlock (fsdp_wrap_fn)
        {"parallel.sharding.reduce_dtype", "bf16"},   // fsdp_config.mixed_precision: PURE
        {"parallel.sharding.backward_prefetch", "false"},  // Composer backward_prefetch: BACKWARD_POST
        {"training.recompute", "full"},               // fsdp_config.activation_checkpointing: true
        {"training.flash_attention", "true"},         // attn_config.attn_impl: triton
        {"training.attention_kernel", "flash2"},      // triton / flash-attn kernels, not cuDNN's
        {"training.overlap.dp", "true"},              // FSDP reduce-scatter per unit
        {"training.overlap.zero3_prefetch", "true"},  // limit_all_gathers: true, one unit ahead
        {"training.fusion.norm", "eager"},            // low_precision_layernorm: F.layer_norm
        {"training.fusion.activation", "eager"},      // ffn_act_fn: nn.GELU
        {"training.fusion.dropout_add", "eager"},     // resid_pdrop dropout, then the residual add
        {"training.fusion.cross_entropy", "fused"},   // loss_fn: fused_crossentropy (flash-attn's Triton loss)
        {"training.fusion.wgrad_accumulation", "none"}}},  // FSDP reduce-scatters autograd's .grad
      // torchtitan (pytorch/torchtitan at 9dec370, December 2024, the commit of its Llama 3.1 H100
      // benchmarks): FSDP2 on every TransformerBlock, the model written in plain PyTorch
      // (torchtitan/models/llama/model.py), no torch.compile (compile.enable = false).
      {"torchtitan",
       "torchtitan (FSDP2, eager), 9dec370 (2024-12)",
       {{"parallel.zero", "3"},                       // data_parallel_shard_degree: FSDP2 fully_shard
        {"parallel.sharding.unit_layers", "1"},       // apply_fsdp: fully_shard per TransformerBlock
        {"parallel.sharding.reduce_dtype", "fp32"},   // training.mixed_precision_reduce = float32
        {"parallel.sharding.pipeline_accumulates", "true"},  // apply_fsdp: no reshard after forward with PP;
                                                     // pipelining's stage: no grad sync until the last backward
        {"training.attention_kernel", "flash2"},      // F.scaled_dot_product_attention: FlashAttention-2
        {"training.overlap.dp", "true"},              // FSDP2 reduce-scatter per unit
        {"training.overlap.zero3_prefetch", "true"},  // FSDP2 implicit prefetch
        {"training.fusion.norm", "eager"},            // RMSNorm: x * rsqrt(mean(x^2) + eps) * w (norm_type rmsnorm)
        {"training.fusion.activation", "eager"},      // F.silu(self.w1(x)) * self.w3(x)
        {"training.fusion.dropout_add", "eager"},     // h = x + attention(...): no dropout, the add
        {"training.fusion.rope", "eager"},            // apply_rotary_emb: view_as_complex product
        {"training.fusion.projections", "eager"},     // Attention wq, wk, wv; FeedForward w1, w2, w3
        {"training.fusion.cross_entropy", "loss_parallel"},  // F.cross_entropy(pred.flatten(0, 1).float(), ...)
                                                             // inside loss_parallel() where tp > 1
        {"training.fusion.fp8_cast", "eager"},  // float8: torchao's amax, then its cast, kernels of their own
        {"training.fusion.wgrad_accumulation", "none"},  // FSDP2 reduce-scatters autograd's .grad
        {"training.fp8_recipe", "current"},  // float8: torchao Float8LinearConfig, tensorwise dynamic scaling
        {"training.cp_comm", "allgather"},  // torch context_parallel: _cp_options.rotate_method ALL_GATHER
        {"training.repeat_kv", "true"}}},   // Attention.forward: keys = repeat_kv(xk, self.n_rep) before SDPA
      // torchtitan with compile.enable = true: apply_compile wraps each TransformerBlock in
      // torch.compile (fullgraph), so Inductor fuses the norm, RoPE, SwiGLU and residual chains of a
      // block; the final norm, output layer and loss stay outside the compiled blocks.
      {"torchtitan-compile",
       "torchtitan (FSDP2, torch.compile per block), 9dec370 (2024-12)",
       {{"parallel.zero", "3"},
        {"parallel.sharding.unit_layers", "1"},
        {"parallel.sharding.reduce_dtype", "fp32"},
        {"parallel.sharding.pipeline_accumulates", "true"},
        {"training.attention_kernel", "flash2"},
        {"training.overlap.dp", "true"},
        {"training.overlap.zero3_prefetch", "true"},
        {"training.fusion.norm", "fused"},            // Inductor: one reduction kernel each way
        {"training.fusion.activation", "fused"},      // silu * mul in one kernel
        {"training.fusion.dropout_add", "fused"},     // the residual add joins its neighbours
        {"training.fusion.rope", "fused"},            // the complex product in one kernel
        {"training.fusion.projections", "eager"},     // nn.Linear each: cuBLAS GEMMs Inductor does not merge
        {"training.fusion.cross_entropy", "loss_parallel"},  // the loss is not compiled at this commit
        {"training.fusion.fp8_cast", "fused"},  // Inductor takes each activation's and gradient's amax
                                                // in the kernel that produces it (torchao's roofline)
        {"training.fusion.wgrad_accumulation", "none"},
        {"training.fp8_recipe", "current"},           // as torchtitan
        {"training.cp_comm", "allgather"},  // torch context_parallel: _cp_options.rotate_method ALL_GATHER
        {"training.overlap.cp", "false"},   // the ring traced into the block's graph (fullgraph): each
                                            // all_gather_into_tensor / all_to_all_single waited on at once
        {"training.repeat_kv", "true"}}},   // as torchtitan
      // Megatron-Bridge's performance scripts (NVIDIA-NeMo/Megatron-Bridge scripts/performance,
      // v0.2.1 to v0.6.0), the configurations of the NeMo 25.09 to 26.08 containers' performance
      // summary: the model recipes' DDP and optimizer settings with the scripts' overrides
      // (utils/overrides.py set_workload_base_configs, _set_common_perf_overrides). What a workload
      // turns on beyond these (moe_a2a_overlap, a DeepEP / HybridEP backend) is its own row of the
      // workload configs, which a scenario states.
      {"megatron-bridge",
       "Megatron-Bridge performance scripts v0.2.1-v0.6.0 (NeMo 25.09-26.08 containers)",
       {{"parallel.sequence_parallel", "true"},   // WorkloadBaseConfig.sequence_parallel: tp > 1
        {"parallel.zero", "1"},                   // recipes' OptimizerConfig use_distributed_optimizer=True
        {"training.recompute", "none"},           // recompute_modules / recompute_num_layers: None unless set
        {"training.flash_attention", "true"},     // Transformer Engine attention (cuDNN fused)
        {"training.overlap.tp", "true"},          // CommOverlapConfig(tp_comm_overlap = tp > 1)
        {"training.overlap.dp", "true"},          // recipes' DDP overlap_grad_reduce / overlap_param_gather=True
        {"training.overlap.pp", "true"},          // Megatron-Core overlap_p2p_comm
        {"training.overlap.offload", "false", "training.offload"},  // HybridDeviceOptimizer copies grads in step()
        {"training.fusion.norm", "fused"},        // Transformer Engine's norms
        {"training.fusion.activation", "fused"},  // bias_activation_fusion
        {"training.fusion.dropout_add", "fused"},  // bias_dropout_fusion
        {"training.fusion.rope", "fused"},        // _set_common_perf_overrides: apply_rope_fusion = True
        {"training.fusion.cross_entropy", "fused"},  // _set_common_perf_overrides: cross_entropy_fusion_impl "te"
        {"training.moe.dispatcher", "alltoall"},  // set_workload_base_configs: moe_token_dispatcher_type "alltoall"
                                                  // unless the workload names a flex backend
        {"training.overlap.ep", "false"},         // WorkloadBaseConfig.moe_a2a_overlap = False
        {"training.fusion.wgrad_accumulation", "fused"},  // Megatron-Core's gradient_accumulation_fusion default
        {"training.cp_comm", "p2p"}}},  // cp_comm_type: Megatron-Core's default p2p, which the recipes keep
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
