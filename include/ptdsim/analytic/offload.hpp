#pragma once
#include "ptdsim/core/scenario.hpp"

// CPU offload of the optimizer (and of the parameters): what leaves the GPU, what the host holds,
// and what the step spends on the host link and the CPU (docs/analytic.md "CPU offload").
// training.offload: DeepSpeed ZeRO-Offload (`offload_optimizer: {device: cpu}`), ZeRO-Infinity
// (`offload_param` too, stage 3) and Megatron-Core's --optimizer-cpu-offload with its
// --optimizer-offload-fraction.
namespace ptdsim::analytic {

// The share f of the optimizer on the host: training.offload_fraction when offloading, else 0.
double offload_share(const core::TrainingSpec& t);

// Host bytes one GPU's optimizer shard of `shard_params` parameters keeps: f x (the optimizer
// states, optimizer_bytes_per_param, + the fp32 gradients the CPU step reads, 4); with
// optimizer_params also the 16-bit parameter shard (all of it: DeepSpeed's offload_param has no
// ratio).
double host_bytes(const core::Scenario& s, double shard_params);
// The GPUs of one node that share its host: node.gpus, or the cluster's GPUs when fewer.
int gpus_sharing_host(const core::Scenario& s);

// The once-per-step offload work of one GPU whose optimizer shard holds `shard_params` parameters,
// `end_grad_params` of whose gradients reach the host only at the end of the step (all of them
// below ZeRO-3; under ZeRO-3 the embedding and head's, the layers' going down per unit).
struct OffloadStep {
  double down_bytes = 0, down_s = 0;  // gradients to the host (before any overlap)
  double cpu_s = 0;                   // the CPU's optimizer step, the node's GPUs sharing the host
  double up_bytes = 0, up_s = 0;      // the updated 16-bit parameters back (none with optimizer_params)
  double gpu_params = 0;              // parameters the GPU's own optimizer step still updates
};
OffloadStep offload_step(const core::Scenario& s, double shard_params, double end_grad_params);

// Seconds to move `bytes` over one GPU's host link (0 without offload or a host).
double host_link_time(const core::Scenario& s, double bytes);

}  // namespace ptdsim::analytic
