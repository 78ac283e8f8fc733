#include "ptdsim/analytic/offload.hpp"

#include <algorithm>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/memory.hpp"

namespace ptdsim::analytic {

double offload_share(const core::TrainingSpec& t) {
  return t.offload == core::Offload::none ? 0.0 : std::clamp(t.offload_fraction, 0.0, 1.0);
}

double host_bytes(const core::Scenario& s, double shard_params) {
  const auto& t = s.training;
  if (t.offload == core::Offload::none) return 0;
  // fp32 master weights and Adam's moments (or SGD's momentum), and the fp32 gradients the CPU step
  // reads: DeepSpeed's fp32 gradient partition in pinned memory (stage_1_and_2.py
  // single_partition_of_fp32_groups' .grad), Megatron's CPU copies' .grad (HybridDeviceOptimizer)
  double bytes = offload_share(t) * shard_params * (optimizer_bytes_per_param(t) + 4);
  if (t.offload == core::Offload::optimizer_params) bytes += shard_params * weight_bytes_per_param(t.precision);
  return bytes;
}

int gpus_sharing_host(const core::Scenario& s) { return std::max(1, std::min(s.hardware.gpus_per_node, s.gpus)); }

double host_link_time(const core::Scenario& s, double bytes) {
  const double rate = s.hardware.host.link_Bps;
  return s.training.offload == core::Offload::none || rate <= 0 || bytes <= 0 ? 0.0 : bytes / rate;
}

OffloadStep offload_step(const core::Scenario& s, double shard_params, double end_grad_params) {
  OffloadStep o;
  const auto& t = s.training;
  const double f = offload_share(t);
  o.gpu_params = (1 - f) * shard_params;
  if (t.offload == core::Offload::none || f <= 0) return o;
  const core::HostSpec& h = s.hardware.host;
  // the gradients as the GPU holds them go down (16-bit under DeepSpeed, the fp32 main gradients
  // under Megatron; ZeRO-3 in its reduce dtype); the CPU step writes the 16-bit weights that go up
  const double grad_bytes = s.parallel.zero >= 3 ? s.parallel.sharding.reduce_bytes : held_gradient_bytes_per_param(t);
  o.down_bytes = f * end_grad_params * grad_bytes;
  o.down_s = host_link_time(s, o.down_bytes);
  if (t.offload == core::Offload::optimizer) {
    o.up_bytes = f * shard_params * weight_bytes_per_param(t.precision);
    o.up_s = host_link_time(s, o.up_bytes);
  }
  // The CPU step: every GPU of the node hands the host its shard at once; it streams the optimizer
  // step's bytes per parameter (optimizer_step_bytes_per_param: 34 for mixed-precision Adam) through
  // the node's memory, and no faster than the node's measured CPU Adam rate when one is given
  const double node_params = f * shard_params * gpus_sharing_host(s);
  double per_param = h.memory_Bps > 0 ? optimizer_step_bytes_per_param(t) / h.memory_Bps : 0.0;
  if (h.adam_params_per_s > 0) per_param = std::max(per_param, 1.0 / h.adam_params_per_s);
  o.cpu_s = node_params * per_param;
  return o;
}

}  // namespace ptdsim::analytic
