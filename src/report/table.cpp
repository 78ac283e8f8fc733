#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report_fields.hpp"
#include "format.hpp"
#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/nccl_picks.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/core/version.hpp"
#include "ptdsim/report/evaluate.hpp"

namespace ptdsim::report {
namespace {

using core::kGiB;

using report::bytes;
using report::seconds;

std::string verdict(const core::CommStats& c) {
  if (c.time_s <= 0) return "-";
  if (c.exposed_s <= 0.01 * c.time_s) return "hidden";
  if (!c.overlappable) return "exposed (not overlapped)";
  if (c.exposed_s < 0.99 * c.time_s) return "partly exposed";
  return "exposed";
}

// Stages whose memory rows are identical print as one range ("1-14"), so 64 stages stay readable.
bool same_row(const core::StageMemory& a, const core::StageMemory& b) {
  auto close = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(1.0, std::abs(x)); };
  return a.layers == b.layers && close(a.weights, b.weights) && close(a.gradients, b.gradients) &&
         close(a.optimizer, b.optimizer) && close(a.activations, b.activations) &&
         close(a.other(), b.other());
}

void memory_section(std::string& out, const core::Report& r) {
  out += fmt::format("\nMemory per GPU (GiB; capacity {:.1f})\n", r.capacity_bytes / kGiB);
  out += fmt::format("{:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6}\n", "stage", "layers",
                     "weights", "grads", "optim", "activ", "other", "alloc", "reserved", "device", "used");
  for (std::size_t i = 0; i < r.stages.size();) {
    std::size_t j = i;
    while (j + 1 < r.stages.size() && same_row(r.stages[i], r.stages[j + 1])) ++j;
    const auto& m = r.stages[i];
    std::string label = i == j ? std::to_string(m.stage)
                               : fmt::format("{}-{}", m.stage, r.stages[j].stage);
    const double tensors = m.weights + m.gradients + m.optimizer + m.activations;
    out += fmt::format("{:>7} {:>6} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>5.0f}%\n",
                       label, m.layers, m.weights / kGiB, m.gradients / kGiB, m.optimizer / kGiB,
                       m.activations / kGiB, (m.allocated() - tensors) / kGiB, m.allocated() / kGiB,
                       m.reserved / kGiB, m.device() / kGiB, 100 * m.required() / r.capacity_bytes);
    i = j + 1;
  }
  out += "  (alloc: the tensors; reserved: what the caching allocator holds for them with room for its cache; "
         "device: reserved, the CUDA context and NCCL's buffers; used: device less the cache, which the allocator "
         "frees when short, of capacity)\n";
  if (!r.stages.empty()) {
    const auto& m = r.stages[static_cast<std::size_t>(r.peak_stage)];
    out += fmt::format(
        "  stage {} in detail: activations {:.2f} GiB for {} layers x {:g} micro-batches in flight; "
        "embedding activations {:.2f}, logits and loss {:.2f}, buffers {:.2f}, optimizer-step copies {:.2f}, "
        "allocator rounding {:.2f} and cache {:.2f}, CUDA context {:.2f}, NCCL {:.2f}\n",
        m.stage, m.activations / kGiB, m.layers, m.in_flight, m.embedding_activations / kGiB,
        (m.logits + m.loss_buffers) / kGiB, m.buffers / kGiB, m.step_buffers / kGiB,
        (m.reserved - m.cache - m.allocated()) / kGiB, m.cache / kGiB, m.context / kGiB, m.nccl / kGiB);
  }
  out += fmt::format("peak {:.2f} GiB on stage {} of {:.1f} GiB: {} (tensors {:.2f}; the allocator's reserve {:.2f} "
                     "with room for its cache, the device's {:.2f})\n",
                     r.peak_bytes / kGiB, r.peak_stage, r.capacity_bytes / kGiB,
                     r.peak_bytes <= r.capacity_bytes ? fmt::format("fits, {:.2f} GiB headroom",
                                          (r.capacity_bytes - r.peak_bytes) / kGiB)
                            : fmt::format("DOES NOT FIT, {:.2f} GiB over",
                                          (r.peak_bytes - r.capacity_bytes) / kGiB),
                     r.peak_allocated_bytes / kGiB, r.peak_reserved_bytes / kGiB, r.peak_device_bytes / kGiB);
  if (const core::ExpertsReport& e = r.experts; e.present)
    out += fmt::format("experts on a GPU of stage {}: {:.3g} B parameters, {:.2f} GiB of weights, gradients and "
                       "optimizer states (etp {}, ep {}, expert data parallel {})\n",
                       r.peak_stage, e.params / 1e9, e.state_bytes / kGiB, e.etp, e.ep, e.edp);
  if (const auto& t = r.scenario.training; t.uses_host()) {  // the host's side: CPU offload, offloaded activations
    const std::string what = t.offload == core::Offload::none
                                 ? std::string("offloaded activations, pinned")
                                 : fmt::format("CPU offload {}, fraction {:g}{}", core::name(t.offload), t.offload_fraction,
                                               t.offload_modules != 0 ? ", and offloaded activations" : "");
    out += fmt::format("host ({}): {:.2f} GiB per GPU, {:.2f} GiB per node of {:.1f} GiB: {}\n", what,
                       r.host_bytes_per_gpu / kGiB, r.host_bytes_per_node / kGiB, r.host_capacity_bytes / kGiB,
                       r.host_fits ? "fits" : "DOES NOT FIT");
  }
  if (r.fit_micro_batch >= 0 && r.fit_seq_len >= 0) {
    auto said = [](int x, const char* what) {
      return x > 0 ? fmt::format("{} {}", what, x) : fmt::format("no {}", what);
    };
    out += fmt::format("fits on this layout at most: {} (global batch kept), {} (multiples of 256, this "
                       "micro-batch)\n",
                       said(r.fit_micro_batch, "micro-batch"), said(r.fit_seq_len, "sequence"));
  }
}

void time_section(std::string& out, const core::Report& r) {
  auto pct = [&](double x) { return r.step_s > 0 ? 100 * x / r.step_s : 0.0; };
  out += fmt::format("\nStep time ({})\n", core::name(r.engine));
  out += fmt::format("  {:<30} {:>10}\n", "step", seconds(r.step_s));
  // the critical path's parts: one cause per instant, so they add up to the step
  if (!r.critical_path.empty()) {
    out += "  where it goes (the critical path; these parts add up to the step):\n";
    for (const auto& p : r.critical_path)
      out += fmt::format("    {:<28} {:>10} {:>5.1f}%\n", core::path_words(p), seconds(p.seconds), pct(p.seconds));
  }
  if (!r.bounded_by.empty()) out += fmt::format("  bounded by: {}\n", core::describe(r.bounded_by));
  // totals per kind, each on its own: compute and communication run at the same time, so these
  // overlap one another and do not add up to the step
  out += "  totals per kind (they overlap one another; they do not add up to the step):\n";
  out += fmt::format("    {:<28} {:>10} {:>5.1f}%\n", "compute, busiest stage", seconds(r.compute_s), pct(r.compute_s));
  if (r.contention_s > 0)
    out += fmt::format("      {:<26} {:>10} {:>5.1f}%  (SMs held by collectives beside it)\n",
                       "of which slowed", seconds(r.contention_s), pct(r.contention_s));
  // the simulation's is every idle instant of the busiest stage, whatever it waited for; the closed
  // form's is the schedule's fill and drain
  out += fmt::format("    {:<28} {:>10} {:>5.1f}%\n",
                     r.engine == core::EngineKind::simulation ? "idle, busiest stage (all waits)" : "pipeline bubble",
                     seconds(r.bubble_s), pct(r.bubble_s));
  out += fmt::format("    {:<28} {:>10} {:>5.1f}%\n", "optimizer step", seconds(r.optimizer_s),
                     pct(r.optimizer_s));
  if (r.scenario.training.offload != core::Offload::none)
    out += fmt::format("    {:<28} {:>10} {:>5.1f}%  (gradients down {}, CPU step {}, parameters up {})\n",
                       "CPU offload", seconds(r.offload_s), pct(r.offload_s), seconds(r.offload_down_s),
                       seconds(r.offload_cpu_s), seconds(r.offload_up_s));
  for (int k = 0; k < core::kCommBucketCount; ++k)
    if (r.comm[k].exposed_s > 0)
      out += fmt::format("    {:<28} {:>10} {:>5.1f}%\n",
                         fmt::format("exposed {} comm", core::kCommBucketNames[k]),
                         seconds(r.comm[k].exposed_s), pct(r.comm[k].exposed_s));
}

// Where the compute goes: the share of each kind over the whole model's step, then one layer's
// operators (one GPU, one micro-batch) with their source.
void compute_section(std::string& out, const core::Report& r) {
  const auto& c = r.compute;
  if (c.layer.empty()) return;
  out += "\nCompute by kind (whole model, one step, recomputation included)\n ";
  for (int k = 0; k < core::kOperatorKindCount; ++k) {
    const double share = c.share[static_cast<std::size_t>(k)];
    if (share > 0 || k < 5)
      out += fmt::format(" {} {:.1f}%", core::name(static_cast<core::OperatorKind>(k)), 100 * share);
  }
  out += "\n";
  out += fmt::format("  one layer on one GPU, one micro-batch:\n  {:<22} {:>26} {:>10} {:>10}  {}\n", "operator",
                     "shape (m x n x k)", "forward", "backward", "source");
  auto shape = [](const core::OperatorTime& o) {
    std::string s = o.k > 0 ? fmt::format("{:g} x {:g} x {:g}", o.m, o.n, o.k)
                            : o.n > 0 ? fmt::format("{:g} x {:g}", o.m, o.n) : std::string("-");
    return o.count != 1 ? fmt::format("{:g} x ({})", o.count, s) : s;
  };
  for (const auto& o : c.layer)
    out += fmt::format("  {:<22} {:>26} {:>10} {:>10}  {}\n", core::name(o.op), shape(o), seconds(o.forward_s),
                       seconds(o.backward_input_s + o.backward_weight_s), core::name(o.source));
  // the same layer by module, forward + backward, and its TP communication (an average layer's share
  // of the busiest stage's, time alone)
  // With tables the FP8 casts are every GEMM's input casts (attention's and the MLP's alike), and
  // the fitted overhead is no module's: each is its own sum when present. Without tables the only
  // casts timed are the routed experts' (operators.cpp routed_fp8_casts), which are the MLP's.
  const bool casts_apart = r.scenario.hardware.gpu.kernels != nullptr;
  double attention = 0, mlp = 0, norms = 0, casts = 0, overhead = 0;
  for (const auto& o : c.layer) {
    switch (o.op) {
      case core::Operator::qkv:
      case core::Operator::q_down:
      case core::Operator::q_up:
      case core::Operator::kv_down:
      case core::Operator::kv_up:
      case core::Operator::rope:
      case core::Operator::attention:
      case core::Operator::proj:
      case core::Operator::attention_dropout_add: attention += o.total_s(); break;
      case core::Operator::input_norm:
      case core::Operator::mlp_norm:
      case core::Operator::latent_norm:
      case core::Operator::qk_norm: norms += o.total_s(); break;
      case core::Operator::fp8_cast: (casts_apart ? casts : mlp) += o.total_s(); break;
      case core::Operator::overhead: overhead += o.total_s(); break;
      default: mlp += o.total_s(); break;
    }
  }
  const auto& s = r.scenario;
  const double layer_tp = s.num_microbatches() > 0 && s.model.layers > 0
                              ? r.of(core::CommBucket::tp).time_s / s.num_microbatches() /
                                    (static_cast<double>(s.model.layers) / std::max(1, s.parallel.pp))
                              : 0.0;
  out += fmt::format("  by module (forward + backward): attention {}, MLP {}, norms {}{}{}; TP communication {} "
                     "(alone, an average layer)\n",
                     seconds(attention), seconds(mlp), seconds(norms),
                     casts > 0 ? ", FP8 casts " + seconds(casts) : std::string(),
                     overhead > 0 ? ", fitted overhead " + seconds(overhead) : std::string(), seconds(layer_tp));
  // an MoE layer's parts, its dispatch included (docs/analytic.md "Expert parallelism")
  if (const core::ExpertsReport& e = r.experts; e.present) {
    // EP overlap as asked for and as Megatron-Core runs it (analytic::ep_overlaps)
    const char* overlap = analytic::ep_overlaps(s) ? "on"
                          : s.training.overlap.ep ? "asked for but not run at this layout"
                                                  : "off";
    out += fmt::format("  an MoE layer (forward + backward): router {}, permute {}, experts {}, dispatch {} "
                       "({}, {} over {} group, {} a node; busiest expert {:g}x the mean; EP overlap {})\n",
                       seconds(e.router_s), seconds(e.permute_s), seconds(e.experts_s), seconds(e.dispatch_s),
                       core::name(s.training.moe.dispatcher), bytes(e.dispatch_bytes),
                       e.ep_scope == core::Scope::intra ? "an intra-node" : "an inter-node", e.ep_ranks_per_node,
                       e.busiest, overlap);
  }
}

void comm_section(std::string& out, const core::Report& r) {
  out += "\nCommunication per GPU per step (the busiest GPU)\n";
  out += fmt::format("  {:<5} {:>10} {:>10} {:>8} {:>10}  {}\n", "kind", "volume", "time",
                     "overlap", "exposed", "verdict");
  for (int k = 0; k < core::kCommBucketCount; ++k) {
    const auto& c = r.comm[k];
    if (c.bytes <= 0 && c.time_s <= 0) continue;
    // 1e9: nothing beside it to hide behind (fold.cpp ratio), shown as "-"
    out += fmt::format("  {:<5} {:>10} {:>10} {:>8} {:>10}  {}{}\n", core::kCommBucketNames[k],
                       bytes(c.bytes), seconds(c.time_s),
                       c.overlap_ratio >= 1e9 ? std::string("-") : fmt::format("{:.2f}", c.overlap_ratio),
                       seconds(c.exposed_s),
                       verdict(c), c.crosses_nodes ? ", crosses nodes" : "");
  }
  // what runs each collective: NCCL's algorithm/protocol, calibrated rows, or point-to-point
  std::string picks;
  for (const auto& k : analytic::collective_picks(r.scenario)) {
    const std::string what = k.algorithm == "calibrated" ? k.algorithm
                             : k.protocol.empty()         ? k.algorithm
                                                          : k.algorithm + "/" + k.protocol;
    picks += fmt::format("{}{} {} {}", picks.empty() ? "" : "; ", k.kind, core::name(k.op), what);
  }
  if (!picks.empty()) out += "  run by: " + picks + "\n";
  if (r.pp_end_bytes > 0 && r.pp_end_bytes != r.of(core::CommBucket::pp).bytes)
    out += fmt::format("  pp above is a middle stage's GPU; the first and last stage's send {} (no gradient back from the\n"
                       "   first virtual stage, no activation forward from the last)\n", bytes(r.pp_end_bytes));
  if (const std::string z = core::zero3_verdict(r); !z.empty())
    out += fmt::format("  ZeRO-3 per unit: all-gather / forward {:.2f}, collectives / backward {:.2f}: {}\n",
                       r.zero3_overlap_ratio, r.zero3_backward_ratio, z);
  out += "  (overlap = t_comm / t_compute of the work it may hide behind; below 1 it can hide.\n"
         "   exposed = its time on the step's critical path, which crosses stages, so it can exceed\n"
         "   one GPU's time)\n";
}

// A layout that does not fit heads the table, so it cannot be missed under the numbers.
std::string banner(const core::Report& r) {
  if (r.fits) return "";
  const std::string line =
      r.peak_bytes > r.capacity_bytes
          ? fmt::format("!! DOES NOT FIT: peak {:.1f} GiB on stage {} of {:.1f} GiB per GPU ({:.1f} GiB over) !!",
                        r.peak_bytes / kGiB, r.peak_stage, r.capacity_bytes / kGiB,
                        (r.peak_bytes - r.capacity_bytes) / kGiB)
          : fmt::format("!! DOES NOT FIT the host: {:.1f} GiB offloaded per node of {:.1f} GiB ({:.1f} GiB over) !!",
                        r.host_bytes_per_node / kGiB, r.host_capacity_bytes / kGiB,
                        (r.host_bytes_per_node - r.host_capacity_bytes) / kGiB);
  const std::string bar(line.size(), '!');
  return bar + "\n" + line + "\n" + bar + "\n";
}

// "MFU 41.2% of the bf16 peak 989 TFLOP/s" (and the bf16-peak MFU beside another precision)
std::string mfu_line(const core::Report& r) {
  const auto& s = r.scenario;
  std::string out = fmt::format("MFU {:.1f}%, HFU {:.1f}% of the {} peak {:.0f} TFLOP/s", 100 * r.mfu, 100 * r.hfu,
                                core::name(s.training.precision), r.mfu_peak_flops / 1e12);
  if (r.mfu_bf16 > 0)
    out += fmt::format(" (MFU {:.1f}% of the bf16 peak {:.0f} TFLOP/s)", 100 * r.mfu_bf16,
                       s.hardware.gpu.peak_flops[core::index(core::Precision::bf16)] / 1e12);
  return out;
}

}  // namespace

std::string to_train_line(const core::Report& r) {
  const auto& t = r.to_train;
  const auto& s = r.scenario;
  if (!t.known()) return "not known: give training.tokens (or --tokens 15T)";
  auto big = [](double x) {
    if (x >= 1e12) return fmt::format("{:.3g}T", x / 1e12);
    if (x >= 1e9) return fmt::format("{:.3g}B", x / 1e9);
    if (x >= 1e6) return fmt::format("{:.3g}M", x / 1e6);
    if (x >= 1e3) return fmt::format("{:.3g}K", x / 1e3);
    return fmt::format("{:.3g}", x);
  };
  std::string out = fmt::format("{} tokens ({} steps): {:.1f} days, {} GPU-hours", big(t.tokens), big(t.steps),
                                t.days(), big(t.gpu_hours));
  out += t.has_energy() ? fmt::format(", {:.4g} MWh of GPU energy at {:.0f} W per GPU", t.energy_j / 3.6e9,
                                      t.gpu_power_w)
                        : std::string(", energy not known (hardware.gpu.tdp_w and idle_w)");
  out += t.has_cost(s) ? fmt::format(", cost {} at {:g} per GPU-hour", big(t.cost), s.cost.gpu_hour)
                       : std::string(", cost not known: give cost.gpu_hour (or --gpu-hour 2.5)");
  return out;
}

std::string report_table(const core::Report& r) {
  const auto& s = r.scenario;
  const auto& p = s.parallel;
  const auto& t = s.training;
  std::string out = banner(r) + fmt::format("ptdsim {} evaluate: {}\n", core::kVersion, core::printable(s.name));
  out += fmt::format("  model     {}: {:.2f} B parameters{}, {} layers, hidden {}, heads {}/{}\n",
                     core::printable(s.model.name), r.params / 1e9,
                     s.model.moe ? fmt::format(" ({:.2f} B active)", r.active_params / 1e9) : std::string(),
                     s.model.layers, s.model.hidden, s.model.heads, s.model.kv_heads);
  out += fmt::format("  hardware  {}: {}, {:.0f} GiB, {:.0f} TFLOP/s {}, {} GPUs per node\n",
                     core::printable(s.hardware.name), core::printable(s.hardware.gpu.name), s.hardware.gpu.memory_bytes / kGiB,
                     s.hardware.gpu.peak_flops[core::index(t.precision)] / 1e12,
                     core::name(t.precision), s.hardware.gpus_per_node);
  out += fmt::format(
      "  layout    {} GPUs = tp {} x pp {} x dp {} x cp {} (ep {}), vpp {}, {}, ZeRO-{}, sequence "
      "parallel {}\n",
      s.gpus, p.tp, p.pp, p.dp, p.cp, p.ep, p.vpp, core::name(p.schedule), p.zero,
      p.sequence_parallel ? "on" : "off");
  out += fmt::format(
      "  batch     global {} = micro-batch {} x {} micro-batches x dp {}; seq {}; recompute {}\n",
      t.global_batch, t.micro_batch, s.num_microbatches(), p.dp, t.seq_len, core::name(t.recompute));
  if (const auto split = core::pipeline_split(s); split.method != core::SplitMethod::even)
    out += fmt::format("  split     {} layers per {}stage: {}{}\n", core::describe_layers(split.layers),
                       p.vpp > 1 ? "virtual " : "", core::describe(split),
                       split.chosen ? fmt::format(", chosen: {} layers do not divide over pp*vpp = {}", s.model.layers,
                                                  p.pp * p.vpp)
                                    : std::string());
  auto on = [](bool b) { return b ? "on" : "off"; };
  out += fmt::format(
      "  switches  {}, flash attention {}, optimizer {}, {} main gradients; overlap tp {}, pp {}, dp {}, "
      "ZeRO-3 prefetch {}{}; placement {}{}\n",
      core::name(t.precision), report::flash_attention_text(t, s.hardware.gpu), core::name(t.optimizer), core::name(t.main_grads),
      on(t.overlap.tp), on(t.overlap.pp), on(t.overlap.dp), on(t.overlap.zero3_prefetch),
      p.cp > 1 ? fmt::format(", cp {}", on(t.overlap.cp)) : std::string(), core::placement_text(p),
      (p.cp > 1 ? fmt::format("; cp_comm {}", core::name(t.cp_comm)) : std::string()) +
          (t.repeat_kv ? "; key/value heads repeated" : ""));
  if (!t.framework.empty()) {
    const std::string keys = core::joined(t.from_framework);
    out += fmt::format("  framework {}: its defaults set {}\n", t.framework,
                       keys.empty() ? std::string("nothing (the scenario sets every switch it has)") : keys);
  }
  memory_section(out, r);
  time_section(out, r);
  compute_section(out, r);
  comm_section(out, r);
  out += fmt::format("\nThroughput: {:.0f} tokens/s, {:.1f} TFLOP/s per GPU, {}\n", r.tokens_per_s,
                     r.tflops_per_gpu, mfu_line(r));
  out += fmt::format("  model FLOPs per step {:.4g}, hardware FLOPs per step {:.4g}\n",
                     r.model_flops_per_step, r.hardware_flops_per_step);
  out += fmt::format("  {:.1f} TFLOP/s per GPU as Megatron-LM and Megatron-Bridge log it (their own FLOP count)\n",
                     r.megatron_tflops_per_gpu);
  out += "\nTo train: " + report::to_train_line(r) + "\n";
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace ptdsim::report
