#include "ptdsim/planner/explain.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "ptdsim/core/units.hpp"

namespace ptdsim::planner {
namespace {

struct Delta {
  std::string what;
  double amount = 0;
};

std::string with_amount(const Delta& d, double unit, const char* unit_name) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " +%.3g %s", d.amount / unit, unit_name);
  return d.what + buf;
}

const Delta& largest(const std::vector<Delta>& ds) {
  const Delta* best = &ds.front();
  for (const auto& d : ds)
    if (d.amount > best->amount) best = &d;
  return *best;
}

const core::StageMemory* peak_stage(const core::Report& r) {
  for (const auto& st : r.stages)
    if (st.stage == r.peak_stage) return &st;
  return r.stages.empty() ? nullptr : &r.stages.front();
}

}  // namespace

std::string why_slower(const core::Report& best, const core::Report& r) {
  if (!(r.step_s > best.step_s)) return "";
  std::vector<Delta> ds;
  ds.push_back({"bigger bubble", r.bubble_s - best.bubble_s});
  // More compute on the busiest stage is recomputation when the hardware does more FLOPs per GPU,
  // otherwise the same FLOPs run slower (smaller GEMMs, a heavier last stage).
  const double gpus_r = r.scenario.gpus > 0 ? r.scenario.gpus : 1;
  const double gpus_b = best.scenario.gpus > 0 ? best.scenario.gpus : 1;
  const bool more_flops = r.hardware_flops_per_step / gpus_r > best.hardware_flops_per_step / gpus_b * (1 + 1e-9);
  // compute slowed by the SMs of collectives running beside it is a cost of overlap, not of kernels
  ds.push_back({more_flops ? "recompute overhead" : "slower kernels",
                (r.compute_s - r.contention_s) - (best.compute_s - best.contention_s)});
  ds.push_back({"comm beside compute", r.contention_s - best.contention_s});
  ds.push_back({"optimizer step", r.optimizer_s - best.optimizer_s});
  if (r.offload_s > 0 || best.offload_s > 0) ds.push_back({"CPU offload", r.offload_s - best.offload_s});
  static const char* kNames[core::kCommBucketCount] = {"TP", "CP", "EP", "PP", "DP"};
  for (int k = 0; k < core::kCommBucketCount; ++k) {
    std::string what = std::string("exposed ") + kNames[k] + " comm";
    if (r.comm[k].crosses_nodes && !best.comm[k].crosses_nodes && k != static_cast<int>(core::CommBucket::dp))
      what += " across nodes";
    ds.push_back({what, r.comm[k].exposed_s - best.comm[k].exposed_s});
  }
  const Delta& d = largest(ds);
  if (d.amount <= 0) return "slower overall";
  return with_amount(d, 1.0, "s");
}

std::string why_bigger(const core::Report& best, const core::Report& r) {
  if (!(r.peak_bytes > best.peak_bytes)) return "";
  const auto* a = peak_stage(best);
  const auto* b = peak_stage(r);
  if (!a || !b) return "more memory";
  std::vector<Delta> ds{{"weights", b->weights - a->weights},
                        {"gradients", b->gradients - a->gradients},
                        {"optimizer states", b->optimizer - a->optimizer},
                        {"activations", b->activations - a->activations},
                        {"buffers and logits", b->other() - a->other()}};
  const Delta& d = largest(ds);
  if (d.amount <= 0) return "more memory";
  return with_amount(d, core::kGiB, "GiB");
}

}  // namespace ptdsim::planner
