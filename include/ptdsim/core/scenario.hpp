#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/model.hpp"
#include "ptdsim/core/parallel.hpp"

namespace ptdsim::core {

struct Overlap {
  bool dp = true;
  bool tp = false;
  bool pp = true;
  bool zero3_prefetch = true;
  // training.offload: the gradients of the last backward copied to the host as their buckets are
  // reduced (DeepSpeed ZeRO-Offload); false: all at the optimizer step (Megatron-Core's
  // HybridDeviceOptimizer copies them in step()). docs/analytic.md "CPU offload".
  bool offload = true;
  // EP's dispatch and combine of one micro-batch beside another micro-batch's compute (Megatron-Core
  // overlap_moe_expert_parallel_comm, Megatron-Bridge moe_a2a_overlap). docs/analytic.md "Expert
  // parallelism".
  bool ep = false;
  // Context parallelism's key/value exchange beside the attention kernels it feeds (docs/analytic.md
  // "Context parallelism"); false: each of its collectives waited on as soon as it is issued, so
  // none of it hides (PyTorch's context_parallel traced by torch.compile: a traced functional
  // collective is followed at once by its wait_tensor, and Inductor keeps that order unless
  // reorder_for_compute_comm_overlap is set, which torchtitan does not).
  bool cp = true;
};

enum class Optimizer { adam, sgd };

// What the optimizer step keeps in host memory (training.offload; docs/analytic.md "CPU offload"):
// none; optimizer, the fp32 master weights, Adam's moments and the fp32 gradients, with the step
// itself on the CPU (DeepSpeed ZeRO-Offload, `offload_optimizer: {device: cpu}`; Megatron-Core
// `--optimizer-cpu-offload`); optimizer_params, the 16-bit parameter shard too, fetched for each
// ZeRO-3 unit before its all-gather (ZeRO-Infinity, `offload_param: {device: cpu}`).
enum class Offload { none, optimizer, optimizer_params };
inline constexpr int kOffloadCount = 3;

// How a memory-bound operator runs (training.fusion, docs/analytic.md "Memory-bound operators from
// bytes"): eager, PyTorch's own kernels one after another (each reads its inputs from and writes its
// output to HBM); fused, one kernel for the chain (TransformerEngine's and Megatron's fused kernels,
// or torch.compile's generated ones).
enum class Fusion { eager, fused };
// How the loss runs: eager, F.cross_entropy on fp32 logits (the measured kernel); vocab_parallel,
// Megatron's unfused vocabulary-parallel cross-entropy (cast, max, subtract, exp, sum, divide);
// fused, one pass that writes the gradient in the forward (Megatron's --cross-entropy-loss-fusion);
// loss_parallel, F.cross_entropy on vocabulary-sharded logits under PyTorch's loss_parallel (DTensor
// runs it as separate ops), which is eager where tp is 1 (loss_as_run).
enum class LossFusion { eager, vocab_parallel, fused, loss_parallel };
// How a weight gradient reaches the gradient the optimizer reads (training.fusion.wgrad_accumulation):
// fused, Megatron-Core's gradient_accumulation_fusion (TransformerEngine's fuse_wgrad_accumulation):
// the weight-gradient GEMM accumulates into the fp32 main_grad, its epilogue reading and writing 4
// bytes per weight where a plain GEMM writes 2; separate, the GEMM writes a 16-bit gradient and an
// add kernel accumulates it into the fp32 main_grad (--no-gradient-accumulation-fusion); none, the
// GEMM's 16-bit output is the gradient that is reduced (PyTorch autograd under FSDP and DeepSpeed).
enum class WgradAccumulation { fused, separate, none };

// How FP8 training scales its tensors (training.fp8_recipe; docs/analytic.md "FP8 recipes"):
// delayed, tensorwise with the scale from past steps' amax (TransformerEngine's default: the amax is
// taken inside the cast); current, tensorwise from this tensor's own amax (torchao's tensorwise
// default, TE's Float8CurrentScaling: an amax pass before the cast); rowwise, a scale per row
// (torchao); blockwise, 1x128 activation and 128x128 weight tiles (DeepSeek-V3); mxfp8, 1x32 blocks
// with E8M0 scales (Blackwell's tensor cores).
enum class Fp8Recipe { delayed, current, rowwise, blockwise, mxfp8 };

struct FusionSpec {
  Fusion norm = Fusion::fused;         // norm (and, in FP8, its cast) in one kernel each way
  Fusion activation = Fusion::fused;   // bias + GeLU or SwiGLU
  Fusion dropout_add = Fusion::fused;  // bias + dropout + residual add
  Fusion rope = Fusion::fused;         // rotary embedding of q and k
  // Q, K and V in one GEMM and a gated MLP's two input projections in one (Megatron-Core's
  // linear_qkv and linear_fc1), or eager: one nn.Linear each (torchtitan's wq, wk, wv and w1, w3),
  // each reading the input again, and their input gradients summed after
  Fusion projections = Fusion::fused;
  bool projections_apart() const { return projections == Fusion::eager; }
  LossFusion cross_entropy = LossFusion::eager;
  WgradAccumulation wgrad_accumulation = WgradAccumulation::fused;
  // The FP8 cast of each activation and output gradient under the recipes that read the tensor in a
  // pass of their own first (current, rowwise, blockwise, mxfp8): eager, that pass reads it from HBM
  // (TransformerEngine's kernels, torchao without compile); fused, the kernel that produces the tensor
  // does that pass's work on the way (torch.compile; torchao's roofline model's fuse_with_prev)
  Fusion fp8_cast = Fusion::eager;
  // The routed experts' MLP under MXFP8 as one fused op (TransformerEngine's CuTeDSL grouped MLP,
  // Megatron-Core's use_transformer_engine_op_fuser): fc1's epilogue applies SwiGLU and writes fc2's
  // input already quantised, fc2's input-gradient epilogue applies dSwiGLU and quantises fc1's
  // output gradient; eager, each of those is a kernel of its own
  Fusion grouped_mlp = Fusion::eager;
};

// How the framework holds gradients (training.main_grads), which sets their memory:
// fp32: Megatron-LM's contiguous fp32 main-gradient buffer (--accumulate-allreduce-grads-in-fp32),
//   the data-parallel buckets being views into it;
// bit16: DeepSpeed ZeRO stage 1/2 (and its FP16 optimizer): gradients in the training precision
//   in the parameters' .grad, reduced through a separate bucket of dp_bucket_params elements, and
//   converted to fp32 shard by shard at the optimizer step (docs/analytic.md "Memory").
enum class MainGrads { fp32, bit16 };

// How an MoE layer sends its tokens to the experts and back (training.moe.dispatcher; docs/analytic.md
// "Expert parallelism"): alltoall, Megatron-Core's MoEAlltoAllTokenDispatcher (an all-to-all over
// the ep group, then an all-gather over the expert-TP group; the combine mirrors it); allgather,
// MoEAllGatherTokenDispatcher (every token all-gathered over the etp*ep group, the outputs
// reduce-scattered back); flex, MoEFlexTokenDispatcher with DeepEP's fused dispatch and combine
// (each token crosses the network once per destination node, then fans out over NVLink).
enum class Dispatcher { alltoall, allgather, flex };

// How context parallelism exchanges keys and values (training.cp_comm; docs/analytic.md "Context
// parallelism"): p2p, ring attention (Megatron-Core's cp_comm_type p2p, TransformerEngine's
// AttnFuncWithCPAndKVP2P; PyTorch's alltoall rotate method): each of cp steps sends the key/value
// block on to the next rank while the attention of the block in hand runs; allgather, the whole
// sequence's keys and values all-gathered once (cp_comm_type allgather; PyTorch's default
// allgather rotate method), their gradients passed around the ring; a2a, Ulysses (DeepSpeed-Ulysses,
// cp_comm_type a2a): all-to-alls trade the sequence split for a head split around the attention;
// a2a_p2p, Megatron's hierarchical a2a+p2p: a2a inside the node, the ring across nodes.
enum class CpComm { p2p, allgather, a2a, a2a_p2p };

// The MoE layers' training switches (training.moe).
struct MoeTraining {
  Dispatcher dispatcher = Dispatcher::alltoall;
  // Dropless routing: tokens of the busiest expert over the mean tokens per expert; the busiest
  // expert's rank sets the time of the experts' GEMMs and of the dispatch (1: perfectly balanced).
  double load_imbalance = 1.0;
  // > 0: each expert takes at most capacity_factor x the mean tokens (the rest dropped) and is
  // padded to it; 0: dropless.
  double capacity_factor = 0;
  // What sets the busiest expert's tokens over the mean: the capacity factor when tokens are
  // dropped (every expert padded to capacity), else the load imbalance.
  double busiest() const { return capacity_factor > 0 ? capacity_factor : load_imbalance; }
};

struct TrainingSpec {
  int seq_len = 2048;
  int micro_batch = 1;
  int global_batch = 1;
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::selective;
  // Under selective recompute, the modules whose forward the backward recomputes, one bit per
  // RecomputeModule (training.recompute_modules); 0: the attention core alone, the tool's
  // selective (Korthikanti et al.'s, Megatron-Core's default ["core_attn"]).
  unsigned recompute_modules = 0;
  bool names(RecomputeModule m) const { return (recompute_modules >> static_cast<unsigned>(m)) & 1u; }
  bool recomputes(RecomputeModule m) const { return recomputes_under(recompute, m); }
  // The same under another recompute mode (the memory model asks for each mode it weighs).
  bool recomputes_under(Recompute mode, RecomputeModule m) const {
    if (mode != Recompute::selective) return false;
    return recompute_modules == 0 ? m == RecomputeModule::core_attn : names(m);
  }
  bool flash_attention = true;
  AttentionKernel attention_kernel = AttentionKernel::cudnn;
  CpComm cp_comm = CpComm::p2p;  // Megatron's --cp-comm-type default
  // The model code repeats each key/value head heads/kv_heads times before the attention core
  // (torchtitan's Llama, repeat_kv): the core, and a context-parallel exchange of its keys and
  // values, then run on every query head's own copy, as without GQA.
  bool repeat_kv = false;
  Optimizer optimizer = Optimizer::adam;
  Overlap overlap;
  FusionSpec fusion;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  // Gradient bucket of data-parallel reduction, in parameters (elements); 0: Megatron's rule,
  // max(40M, 1M * dp). DeepSpeed's reduce_bucket_size is 5e8. Read by ZeRO-3's memory (DeepSpeed's
  // contiguous reduce bucket); the ZeRO-0/1/2 bucket count follows Megatron's rule.
  double dp_bucket_params = 0;
  // The framework whose documented defaults filled the keys the scenario left unset
  // (core/framework.hpp), "" for none, and those keys' dotted paths in file order.
  std::string framework;
  std::vector<std::string> from_framework;
  MainGrads main_grads = MainGrads::fp32;
  MoeTraining moe;
  // Tokens the whole run trains on (training.tokens, or --tokens); 0: not given, and the report
  // has no time or cost to train.
  double tokens = 0;
  Offload offload = Offload::none;
  // The share of the optimizer states and step that runs on the host, in [0, 1] (Megatron-Core
  // --optimizer-offload-fraction, default 1.0; DeepSpeed ZeRO-3 offload_optimizer.ratio); the
  // rest stays on the GPU. Read only when offload is not none.
  double offload_fraction = 1.0;
  // Fine-grained activation offloading: one bit per OffloadModule (training.offload_modules); 0:
  // every activation stays on the GPU.
  unsigned offload_modules = 0;
  bool offloads(OffloadModule m) const { return (offload_modules >> static_cast<unsigned>(m)) & 1u; }
  // Whether the run keeps anything in host memory: CPU offload, or offloaded activations.
  bool uses_host() const { return offload != Offload::none || offload_modules != 0; }
};

// What the run pays (the scenario's `cost` section): the price of one GPU for one hour, in the
// user's currency; 0: not given, and the report has no cost.
struct CostSpec {
  double gpu_hour = 0;
};

struct Scenario {
  std::string name;
  std::string file;  // where it was loaded from, for messages; "" when built in code
  ModelSpec model;
  HardwareSpec hardware;
  int gpus = 0;
  ParallelSpec parallel;
  TrainingSpec training;
  CostSpec cost;

  // m = B / (b * dp): micro-batches per step per pipeline
  int num_microbatches() const {
    return training.global_batch / (training.micro_batch * parallel.dp);
  }
  // Gradient elements per data-parallel bucket: training.dp_bucket_params, or Megatron-LM's rule
  // when it is not given, max(40M, 1M * dp) (DistributedDataParallelConfig.bucket_size docstring).
  double dp_bucket_params() const {
    const double rule = 1e6 * parallel.dp;
    return training.dp_bucket_params > 0 ? training.dp_bucket_params : (rule > 40e6 ? rule : 40e6);
  }
  // The context-parallel ranks an all-to-all spans (training.cp_comm): a2a all of cp; a2a_p2p the
  // cp ranks that share a node when tp is placed inside cp (gcd(cp, gpus_per_node / tp)), the ring
  // running over the rest, as Megatron's hierarchical_context_parallel_sizes [a2a, p2p] is set up
  // in practice; p2p and allgather none (1).
  int cp_a2a_ranks() const {
    const int c = parallel.cp;
    if (c <= 1 || training.cp_comm == CpComm::p2p || training.cp_comm == CpComm::allgather) return 1;
    if (training.cp_comm == CpComm::a2a) return c;
    int a = c, b = hardware.gpus_per_node / (parallel.tp > 0 ? parallel.tp : 1);
    if (b < 1) b = 1;
    while (b != 0) {  // gcd(c, gpus_per_node / tp)
      const int r = a % b;
      a = b;
      b = r;
    }
    return a;
  }
  // The busiest expert's tokens over the mean (MoeTraining::busiest), at most experts / top_k: an
  // expert takes a token once, so every token on one expert is that many times the mean. A capacity
  // factor above it keeps every token on every expert (Megatron-Core's router keeps all of them
  // when the capacity exceeds the tokens, moe_utils.py apply_router_token_dropping).
  double busiest_expert() const {
    const double b = training.moe.busiest();
    if (!model.moe || model.moe->top_k <= 0) return b;
    const double every_token = static_cast<double>(model.moe->experts) / model.moe->top_k;
    return b < every_token ? b : every_token;
  }
  // The key/value heads the attention core runs on one rank: the model's per rank
  // (kv_heads_per_rank), or heads / tp where the model code repeats them (training.repeat_kv).
  int attention_kv_heads() const {
    const int tp = parallel.tp > 0 ? parallel.tp : 1;
    const int kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
    if (training.repeat_kv) return model.heads / tp;
    return kv >= tp ? kv / tp : 1;
  }
};

}  // namespace ptdsim::core
