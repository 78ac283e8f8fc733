#pragma once
#include <array>
#include <string>
#include <vector>

namespace ptdsim::core {

enum class Schedule { gpipe, one_f_one_b, interleaved, zb_h1 };
// op: torchtitan's per-operator selective checkpointing (analytic/op_checkpoint.hpp)
enum class Recompute { none, selective, full, op };
// The modules Megatron-Core's --recompute-modules names (recompute_granularity selective) that the
// tool models: the attention core, MLA's up projections, a dense layer's MLP, an MoE layer's whole
// MoE block (router, dispatch, experts, combine, shared experts), the routed experts' activation,
// the norms Megatron-Core keeps apart from a GEMM, the shared experts. training.recompute_modules.
enum class RecomputeModule { core_attn, mla_up_proj, mlp, moe, moe_act, layernorm, shared_experts };
inline constexpr int kRecomputeModuleCount = 7;
// The modules whose saved input Megatron-Core's fine-grained activation offloading moves to the
// host after the forward and back before the backward (--fine-grained-activation-offloading with
// --offload-modules) that the tool models: the routed experts' fc1 input (the permuted tokens) and
// their activation's input (fc1's output). training.offload_modules.
enum class OffloadModule { expert_fc1, moe_act };
inline constexpr int kOffloadModuleCount = 2;

// How a ZeRO-3 / FSDP framework runs its sharded parameters (docs/inputs.md "parallel.sharding";
// the framework rows of frameworks.cpp set them). Read only when zero == 3.
struct Sharding {
  // Transformer layers per sharding unit: the unit is gathered before its compute and its gradients
  // reduce-scattered after it. FSDP wraps one block per unit (1); below 1 a layer holds several
  // units (DeepSpeed ZeRO-3 fetches each submodule's weights on its own: 0.25 for a GPT layer's four).
  double unit_layers = 1;
  bool reshard_after_forward = true;   // false: kept gathered from forward to backward (SHARD_GRAD_OP, ZeRO++)
  // Under a pipeline (pp > 1) the stage's units stay gathered from their forward to their last
  // backward and their gradients accumulate unsharded in the reduce dtype until the last micro-batch
  // (torch.distributed.pipelining on FSDP2, as torchtitan runs it)
  bool pipeline_accumulates = false;
  bool regather_on_recompute = false;  // recomputing a unit's forward gathers it once more
  int reduce_bytes = 4;                // gradient reduce-scatter dtype: 4 fp32, 2 bf16/fp16
  int prefetch_units = 1;              // gathers issued at most this many units ahead
  bool backward_prefetch = true;       // the backward prefetches too (FSDP BACKWARD_PRE)
  double max_live_params = 0;          // no prefetch beyond this many gathered parameters (0: no limit)
  bool sync = false;                   // a device synchronize around every collective: nothing overlaps
  double overhead_s = 0;               // host time per collective call
  double overhead_per_rank_s = 0;      // host time per collective call and rank of its group
  int shard_ranks = 0;                 // hybrid sharding: ranks of a shard group (0: all of dp*cp)
};

// The parallel dimensions, in the order a placement string names them.
enum class Dim { tp, cp, ep, dp, pp };
inline constexpr int kDimCount = 5;

// The highest ZeRO stage (3: parameters sharded too): the scenario schema's bound on parallel.zero,
// the sweep's stages 0..3.
inline constexpr int kMaxZeroStage = 3;

struct ParallelSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  // Expert tensor parallel (parallel.etp): the ranks one routed expert's weights are split over.
  // 0: not given, the same as tp (Megatron-Core's default, --expert-tensor-parallel-size None);
  // read it through expert_tp(). Experts fold over the tp*cp*dp ranks: etp * ep * edp = tp*cp*dp.
  int etp = 0;
  int vpp = 1;
  bool sequence_parallel = false;
  int zero = 0;  // 0 none, 1 optimizer states, 2 + gradients, 3 + parameters (up to kMaxZeroStage)
  Schedule schedule = Schedule::one_f_one_b;
  // rank order, innermost (fastest-varying) first; default tp-cp-ep-dp-pp
  std::array<Dim, kDimCount> placement{Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
  // How the layers are split over the pipeline (core::pipeline_split): explicit layers per stage
  // (pp entries) or per virtual stage (pp*vpp entries, in pipeline order); or Megatron-LM's first
  // and last stage sizes (0 = not given; the middle stages split the rest evenly); or Megatron-LM's
  // accounting for the embedding and the loss as one layer each in the even split.
  std::vector<int> stage_layers;
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool embedding_in_split = false;
  bool loss_in_split = false;
  Sharding sharding;

  int expert_tp() const { return etp > 0 ? etp : tp; }
  // The experts' data-parallel degree: the ranks holding the same experts' shard (Megatron-Core's
  // expert_data_parallel_size = tp*cp*dp / (etp*ep)); at least 1 (check() rejects the rest).
  int expert_dp() const {
    const long long block = 1LL * tp * cp * dp, per = 1LL * expert_tp() * ep;
    return per > 0 && block >= per ? static_cast<int>(block / per) : 1;
  }
  // Megatron-Core >= 0.10 "MoE parallel folding": an etp that differs from tp lays the experts'
  // groups (etp innermost, then ep, then expert dp) over the tp*cp*dp ranks in their own order.
  // With etp == tp the expert-parallel ranks are carved out of the data-parallel ranks where
  // `placement` puts ep (Megatron-Core's order before folding, tp-cp-ep-dp-pp).
  bool folded_experts() const { return etp > 0 && etp != tp; }
};

}  // namespace ptdsim::core
