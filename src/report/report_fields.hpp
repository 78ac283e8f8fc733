#pragma once
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "ptdsim/core/names.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/core/version.hpp"

// The scalar fields of a report, declared once, in output order, with their interface.md paths
// and units (GiB for memory, seconds, plain counts). The JSON writer nests them by path; the CSV
// writer uses the paths as column names. Per-stage memory is visited separately (an array).
// Every row carries the inputs it was computed from (model, hardware, precision, batch, every
// switch, the framework) and the tool's version, so a saved row stands on its own.
namespace ptdsim::report {

// Absent: a value the inputs do not give (JSON leaves the key out, CSV leaves the cell empty).
struct Absent {};
// A list: a JSON array, in CSV its items joined by "; ".
using List = std::vector<std::string>;
using Value = std::variant<std::string, double, long long, bool, Absent, List>;

inline Value known_if(bool known, double v) { return known ? Value{v} : Value{Absent{}}; }

template <class F>
void visit_scalars(const core::Report& r, F&& f) {
  const auto& s = r.scenario;
  const auto& p = s.parallel;
  const auto& t = s.training;
  f("scenario", Value{s.name});
  f("parallel.gpus", Value{static_cast<long long>(s.gpus)});
  f("parallel.tp", Value{static_cast<long long>(p.tp)});
  f("parallel.pp", Value{static_cast<long long>(p.pp)});
  f("parallel.dp", Value{static_cast<long long>(p.dp)});
  f("parallel.cp", Value{static_cast<long long>(p.cp)});
  f("parallel.ep", Value{static_cast<long long>(p.ep)});
  const core::ExpertsReport& ex = r.experts;  // (absent without experts)
  auto moe_int = [&](int v) { return ex.present ? Value{static_cast<long long>(v)} : Value{Absent{}}; };
  f("parallel.etp", moe_int(ex.etp));
  f("parallel.expert_dp", moe_int(ex.edp));
  f("parallel.vpp", Value{static_cast<long long>(p.vpp)});
  f("parallel.micro_batch", Value{static_cast<long long>(t.micro_batch)});
  f("parallel.global_batch", Value{static_cast<long long>(t.global_batch)});
  f("parallel.num_microbatches", Value{static_cast<long long>(s.num_microbatches())});
  f("parallel.zero", Value{static_cast<long long>(p.zero)});
  // ZeRO-3's shard group: dp*cp, or a hybrid shard group's ranks (0 below ZeRO-3)
  f("parallel.shard_ranks", Value{static_cast<long long>(
                                p.zero < 3 ? 0 : p.sharding.shard_ranks > 0 ? std::min(p.sharding.shard_ranks, p.dp * p.cp)
                                                                            : p.dp * p.cp)});
  f("parallel.recompute", Value{std::string(core::name(t.recompute))});
  f("parallel.sequence_parallel", Value{p.sequence_parallel});
  f("parallel.schedule", Value{std::string(core::name(p.schedule))});
  {
    const auto split = core::pipeline_split(s);
    f("parallel.split", Value{std::string(core::name(split.method))});
    f("parallel.stage_layers", Value{core::describe_layers(split.layers)});
  }
  f("parallel.placement", Value{core::placement_text(p)});
  f("model.name", Value{s.model.name});
  f("model.params", Value{r.params});
  f("model.active_params", Value{r.active_params});
  f("model.model_flops_per_step", Value{r.model_flops_per_step});
  f("model.hardware_flops_per_step", Value{r.hardware_flops_per_step});
  f("hardware.name", Value{s.hardware.name});
  f("hardware.gpu", Value{s.hardware.gpu.name});
  f("training.seq_len", Value{static_cast<long long>(t.seq_len)});
  f("training.precision", Value{std::string(core::name(t.precision))});
  f("training.flash_attention", Value{t.flash_attention});
  f("training.attention_kernel", Value{std::string(core::name(t.attention_kernel))});
  f("training.optimizer", Value{std::string(core::name(t.optimizer))});
  f("training.overlap.tp", Value{t.overlap.tp});
  f("training.overlap.pp", Value{t.overlap.pp});
  f("training.overlap.dp", Value{t.overlap.dp});
  f("training.overlap.zero3_prefetch", Value{t.overlap.zero3_prefetch});
  // context parallelism's method and whether its exchange hides (absent without cp)
  const bool cp = p.cp > 1;
  f("training.cp_comm", cp ? Value{std::string(core::name(t.cp_comm))} : Value{Absent{}});
  f("training.overlap.cp", cp ? Value{t.overlap.cp} : Value{Absent{}});
  f("training.repeat_kv", Value{t.repeat_kv});
  f("training.main_grads", Value{std::string(core::name(t.main_grads))});
  f("training.moe.dispatcher", ex.present ? Value{std::string(core::name(t.moe.dispatcher))} : Value{Absent{}});
  f("training.moe.busiest_expert", known_if(ex.present, ex.busiest));
  f("training.overlap.ep", ex.present ? Value{t.overlap.ep} : Value{Absent{}});
  // CPU offload (docs/analytic.md "CPU offload"): its fields only when the scenario offloads (absent
  // in JSON, empty in CSV otherwise)
  const bool offload = t.offload != core::Offload::none;
  f("training.offload", offload ? Value{std::string(core::name(t.offload))} : Value{Absent{}});
  f("training.offload_fraction", known_if(offload, t.offload_fraction));
  f("training.overlap.offload", offload ? Value{t.overlap.offload} : Value{Absent{}});
  f("training.framework", Value{t.framework});
  // the keys training.framework filled because the scenario left them unset
  f("training.resolved_from_framework", Value{t.from_framework});
  f("memory.peak_gib", Value{r.peak_bytes / core::kGiB});  // what must fit: the reserve less its cache + context + NCCL
  // that stage's tensors (torch.cuda.max_memory_allocated), the caching allocator's reserve for them
  // with room for its cache (torch.cuda.max_memory_reserved, what torchtitan logs), and the device's
  // figure with the CUDA context and NCCL (nvidia-smi)
  f("memory.peak_allocated_gib", Value{r.peak_allocated_bytes / core::kGiB});
  f("memory.peak_reserved_gib", Value{r.peak_reserved_bytes / core::kGiB});
  f("memory.peak_device_gib", Value{r.peak_device_bytes / core::kGiB});
  // the experts on a GPU of the peak stage: their parameters, and their weights, gradients and
  // optimizer states as the expert data-parallel group shards them
  f("memory.expert_params", known_if(ex.present, ex.params));
  f("memory.expert_gib", known_if(ex.present, ex.state_bytes / core::kGiB));
  f("memory.peak_stage", Value{static_cast<long long>(r.peak_stage)});
  f("memory.capacity_gib", Value{r.capacity_bytes / core::kGiB});
  f("memory.fits", Value{r.fits});
  f("memory.headroom_gib", Value{(r.capacity_bytes - r.peak_bytes) / core::kGiB});  // < 0: over
  const bool host = t.uses_host();  // CPU offload or offloaded activations
  f("memory.host_gib_per_gpu", known_if(host, r.host_bytes_per_gpu / core::kGiB));
  f("memory.host_gib_per_node", known_if(host, r.host_bytes_per_node / core::kGiB));
  f("memory.host_capacity_gib", known_if(host, r.host_capacity_bytes / core::kGiB));
  f("memory.host_fits", host ? Value{r.host_fits} : Value{Absent{}});
  // the largest micro-batch and the longest sequence that fit the layout (evaluate only)
  f("memory.max_micro_batch", r.fit_micro_batch >= 0 ? Value{static_cast<long long>(r.fit_micro_batch)} : Value{Absent{}});
  f("memory.max_seq_len", r.fit_seq_len >= 0 ? Value{static_cast<long long>(r.fit_seq_len)} : Value{Absent{}});
  f("time.step_s", Value{r.step_s});
  f("time.compute_s", Value{r.compute_s});
  f("time.contention_s", Value{r.contention_s});
  f("time.bubble_s", Value{r.bubble_s});
  f("time.optimizer_s", Value{r.optimizer_s});
  f("time.offload_s", known_if(offload, r.offload_s));
  f("time.offload.grad_down_s", known_if(offload, r.offload_down_s));
  f("time.offload.cpu_step_s", known_if(offload, r.offload_cpu_s));
  f("time.offload.param_up_s", known_if(offload, r.offload_up_s));
  for (int k = 0; k < core::kCommBucketCount; ++k)
    f(std::string("time.exposed_comm_s.") + core::kCommBucketNames[k], Value{r.comm[k].exposed_s});
  // where the step goes: the critical path's parts by cause (stages summed), adding up to step_s
  {
    const auto by_cause = core::path_by_cause(r.critical_path);
    // (CPU offload's part only when the scenario offloads, the wait for the slowest GPU only when
    // the hardware gives a jitter, the FP8 amax reductions only under FP8 delayed scaling: absent
    // otherwise)
    const bool jitter = s.hardware.jitter.any();
    const bool amax = s.training.precision == core::Precision::fp8 && s.training.fp8_recipe == core::Fp8Recipe::delayed;
    for (int c = 0; c < core::kPathCauseCount; ++c) {
      const auto cause = static_cast<core::PathCause>(c);
      f(std::string("time.critical_path.") + core::path_key(core::PathPart{cause, -1, 0}),
        known_if((offload || cause != core::PathCause::offload) && (jitter || cause != core::PathCause::straggler) &&
                     (amax || cause != core::PathCause::fp8_amax),
                 by_cause[static_cast<std::size_t>(c)]));
    }
  }
  f("time.bounded_by", Value{core::describe(r.bounded_by)});
  f("time.engine", Value{std::string(core::name(r.engine))});
  f("throughput.tokens_per_s", Value{r.tokens_per_s});
  f("throughput.tflops_per_gpu", Value{r.tflops_per_gpu});
  f("throughput.megatron_tflops_per_gpu", Value{r.megatron_tflops_per_gpu});
  f("throughput.mfu", Value{r.mfu});
  f("throughput.hfu", Value{r.hfu});
  f("throughput.mfu_peak_tflops", Value{r.mfu_peak_flops / core::kTera});  // what mfu and hfu divide by
  // MFU against the bf16 peak: the MFU itself for a bf16 run; absent when the hardware gives no bf16 peak
  f("throughput.mfu_bf16", t.precision == core::Precision::bf16 ? Value{r.mfu}
                                                                 : known_if(r.mfu_bf16 > 0, r.mfu_bf16));
  for (int k = 0; k < core::kCommBucketCount; ++k)
    f(std::string("communication.bytes_per_gpu.") + core::kCommBucketNames[k], Value{r.comm[k].bytes});
  f("communication.pp_end_stage_bytes", Value{r.pp_end_bytes});  // what a first or last stage's GPU sends
  // the dispatcher's group: inside a node (NVLink) or across nodes, and its ranks in one node
  f("communication.dispatch_scope", ex.present ? Value{std::string(core::name(ex.ep_scope))} : Value{Absent{}});
  f("communication.dispatch_ranks_per_node", moe_int(ex.ep_ranks_per_node));
  // one MoE layer, one micro-batch, forward and backward: where its time goes
  f("moe_layer.router_s", known_if(ex.present, ex.router_s));
  f("moe_layer.permute_s", known_if(ex.present, ex.permute_s));
  f("moe_layer.experts_s", known_if(ex.present, ex.experts_s));
  f("moe_layer.dispatch_s", known_if(ex.present, ex.dispatch_s));
  f("moe_layer.dispatch_bytes", known_if(ex.present, ex.dispatch_bytes));
  for (int k = 0; k < core::kCommBucketCount; ++k)
    f(std::string("communication.time_s.") + core::kCommBucketNames[k], Value{r.comm[k].time_s});
  for (int k = 0; k < core::kCommBucketCount; ++k)
    f(std::string("communication.overlap_ratio.") + core::kCommBucketNames[k], Value{r.comm[k].overlap_ratio});
  f("communication.overlap_ratio.zero3", Value{r.zero3_overlap_ratio});
  f("communication.overlap_ratio.zero3_backward", Value{r.zero3_backward_ratio});
  f("communication.zero3_verdict", Value{core::zero3_verdict(r)});
  for (int k = 0; k < core::kOperatorKindCount; ++k)
    f(std::string("compute.share.") + std::string(core::name(static_cast<core::OperatorKind>(k))),
      Value{r.compute.share[static_cast<std::size_t>(k)]});
  const core::ToTrain& tt = r.to_train;
  f("to_train.tokens", known_if(tt.known(), tt.tokens));
  f("to_train.days", known_if(tt.known(), tt.days()));
  f("to_train.gpu_hours", known_if(tt.known(), tt.gpu_hours));
  f("to_train.energy_mwh", known_if(tt.has_energy(), tt.energy_j / 3.6e9));
  f("to_train.cost", known_if(tt.has_cost(s), tt.cost));
  f("warnings", Value{r.warnings});
  f("version", Value{std::string(core::kVersion)});
}

// One operator of Report::compute (one GPU, one micro-batch; the optimizer once per step).
template <class F>
void visit_operator(const core::OperatorTime& o, F&& f) {
  f("name", Value{std::string(core::name(o.op))});
  f("kind", Value{std::string(core::name(o.kind))});
  f("shape.m", Value{o.m});
  f("shape.n", Value{o.n});
  f("shape.k", Value{o.k});
  f("count", Value{o.count});
  f("forward_s", Value{o.forward_s});
  f("backward_s", Value{o.backward_input_s + o.backward_weight_s});
  f("backward_input_s", Value{o.backward_input_s});
  f("backward_weight_s", Value{o.backward_weight_s});
  f("source", Value{std::string(core::name(o.source))});
}

template <class F>
void visit_stage(const core::StageMemory& m, F&& f) {
  f("stage", Value{static_cast<long long>(m.stage)});
  f("layers", Value{static_cast<long long>(m.layers)});
  f("in_flight", Value{m.in_flight});
  f("weights_gib", Value{m.weights / core::kGiB});
  f("gradients_gib", Value{m.gradients / core::kGiB});
  f("optimizer_gib", Value{m.optimizer / core::kGiB});
  f("activations_gib", Value{m.activations / core::kGiB});
  f("other_gib", Value{m.other() / core::kGiB});
  f("total_gib", Value{m.total() / core::kGiB});
  f("loss_buffers_gib", Value{m.loss_buffers / core::kGiB});
  f("allocated_gib", Value{m.allocated() / core::kGiB});
  f("reserved_gib", Value{m.reserved / core::kGiB});
  f("cache_gib", Value{m.cache / core::kGiB});
  f("device_gib", Value{m.device() / core::kGiB});
  f("required_gib", Value{m.required() / core::kGiB});
}

}  // namespace ptdsim::report
