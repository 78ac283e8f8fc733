#include "ptdsim/api.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "ptdsim/analytic/capacity.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/analytic/step.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/report/sweep.hpp"
#include "ptdsim/report/validate.hpp"
#include "ptdsim/sim/simulate.hpp"

namespace ptdsim::api {
namespace {

// An option's problem, positioned at the option as the command line's own checks are.
[[noreturn]] void bad_option(const std::string& option, const std::string& message) {
  throw core::ConfigError(core::SourceLocation{option, 0, 0}, message);
}

// What an objective needs that the inputs may not give: a ConfigError naming it, before any work.
void check_objective(const std::string& objective, const core::Scenario& base) {
  const auto& all = objectives();
  if (std::find(all.begin(), all.end(), objective) == all.end()) {
    bad_option("--objective", "'" + objective + "' is not one of " + core::joined(all));
  }
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) bad_option("--objective", objective + " needs " + what);
  };
  if (objective == "days" || objective == "gpu_hours" || objective == "cost" || objective == "energy")
    need(base.training.tokens > 0, "a token budget: --tokens 15T or training.tokens");
  if (objective == "cost") need(base.cost.gpu_hour > 0, "a price: --gpu-hour 2.5 or cost.gpu_hour");
  if (objective == "energy")
    need(base.hardware.gpu.tdp_w > 0 && base.hardware.gpu.idle_w > 0,
         "the GPU's power: hardware.gpu.tdp_w and hardware.gpu.idle_w");
}

// A degree choice's text ("4,8", "4..16"), or a ConfigError naming its option.
// (`least` is the smallest value the option takes: 1 for degrees, 0 for ZeRO stages.)
planner::Choice choice_of(const std::string& option, const std::string& text, int least = 1) {
  if (text.empty()) return {};
  const auto c = planner::parse_choice(text, least);
  if (!c)
    bad_option(option, fmt::format("a list of {} integers and ranges such as {}, got {} (at most {} items)",
                                   least > 0 ? "positive" : "non-negative", least > 0 ? "4,8 or 4..16" : "1,3 or 0..2",
                                   text.size() > 60 ? text.substr(0, 60) + "..." : text, planner::kMaxChoiceItems));
  return *c;
}

planner::SearchSpace bounds_of(const SweepRequest& r) {
  planner::SearchSpace b;
  b.tp = choice_of("--tp", r.tp);
  b.pp = choice_of("--pp", r.pp);
  b.cp = choice_of("--cp", r.cp);
  b.ep = choice_of("--ep", r.ep);
  b.etp = choice_of("--etp", r.etp);
  b.dp = choice_of("--dp", r.dp);
  b.vpp = choice_of("--vpp", r.vpp);
  b.micro_batch = choice_of("--micro-batch", r.micro_batch);
  b.zero = choice_of("--zero", r.zero, 0);
  int largest_zero = 0;
  for (int x : b.zero.values) largest_zero = std::max(largest_zero, x);
  for (const auto& [lo, hi] : b.zero.ranges) largest_zero = std::max(largest_zero, hi);
  const std::string stages = "0 to " + std::to_string(core::kMaxZeroStage);
  if (largest_zero > core::kMaxZeroStage) bad_option("--zero", "ZeRO stages are " + stages + ", got " + r.zero);
  b.max_tp = r.max_tp;
  b.max_pp = r.max_pp;
  b.max_cp = r.max_cp;
  b.max_ep = r.max_ep;
  b.max_vpp = r.max_vpp;
  b.max_micro_batch = r.max_micro_batch;
  return b;
}

}  // namespace

core::Scenario load(const std::string& path, const std::vector<io::Override>& overrides) {
  return io::load_scenario(path, overrides);
}

core::Scenario load_text(const std::string& yaml, const std::string& name, const std::vector<io::Override>& overrides,
                         const std::string& base_dir) {
  return io::load_scenario_from_string(yaml, name, overrides, base_dir);
}

void check_printable(const core::Report& r, const std::string& file) {
  const std::string bad = report::report_problem(r);
  if (!bad.empty())
    throw core::ConfigError(core::SourceLocation{file, 0, 0},
                            "the result is not a finite, non-negative number (" + bad +
                                "): the inputs are beyond what the engines represent");
}

core::Report evaluate(const core::Scenario& s, std::string* trace_json, core::Timeline* timeline) {
  const analytic::Step step(s);
  core::Report r = sim::simulate(step, trace_json, timeline);
  // the largest micro-batch and sequence that fit this layout (the analytic memory model)
  const analytic::Capacity cap = analytic::capacity(s);
  r.fit_micro_batch = cap.micro_batch;
  r.fit_seq_len = cap.seq_len;
  check_printable(r, s.file);
  return r;
}

std::string evaluate_json(const core::Scenario& s) { return report::report_json(evaluate(s)); }

const std::vector<std::string>& objectives() {
  static const std::vector<std::string> all{"time", "memory", "mfu", "days", "gpu_hours", "energy", "cost"};
  return all;
}

Sweep sweep(core::Scenario base, const std::vector<std::string>& override_keys, const SweepRequest& request) {
  // The file (with its --set) must be a valid scenario on its own cluster; --gpus then only moves
  // the GPU count, since the sweep replaces every parallel degree the user did not pin.
  if (request.gpus > 0) base.gpus = request.gpus;
  check_objective(request.objective, base);
  planner::SearchSpace bounds = bounds_of(request);
  planner::pin_dimensions(base, override_keys, bounds);
  // --search after the pins: a searched switch is searched even when a --set gave it a value
  const auto unknown = planner::search_switches(request.search, bounds);
  if (!unknown.empty()) bad_option("--search", "'" + unknown.front() + "' is not a switch the sweep searches");
  if (!bounds.offload.empty() && !base.hardware.host.known())
    bad_option("--search", "offload needs the hardware's host (hardware.host.link_gbs, memory_gib, memory_gbs); " +
                               base.hardware.name + " gives none");

  planner::SweepOptions opt;
  opt.top = request.top;
  opt.threads = request.threads;
  opt.rank_scenario = request.rank_scenario;
  opt.rank_limit = request.rank_limit;
  opt.min_free_bytes = request.min_free_gib * core::kGiB;
  // days, GPU-hours and cost are proportional to the step time for one GPU count and budget
  const std::string& o = request.objective;
  opt.objective = o == "memory" ? planner::Objective::memory
                  : o == "mfu"  ? planner::Objective::mfu
                  : o == "energy" ? planner::Objective::energy
                                  : planner::Objective::time;
  opt.on_progress = request.on_progress;
  if (request.on_row) {
    opt.on_row = [&](const planner::Row& row) {
      check_printable(row.report, base.file);
      request.on_row(row);
    };
  }
  planner::Space space(base, bounds);
  planner::SweepResult result = planner::sweep(base, space, opt);
  for (const auto& x : result.results) check_printable(x.report, base.file);
  if (result.scenario && result.scenario->ranked) check_printable(result.scenario->report, base.file);
  return Sweep{std::move(base), std::move(space), std::move(result), request.objective};
}

std::string sweep_json(const Sweep& s) { return report::sweep_json(s.result, s.objective); }

std::string default_dataset() {
  const std::string found = io::shipped_file("scenarios/published/dataset.yaml");
  return found.empty() ? "scenarios/published/dataset.yaml" : found;
}

Validation validate(const std::string& dataset, const std::string& split, bool strict) {
  if (split != "all" && split != "fit" && split != "holdout")
    bad_option("--split", "'" + split + "' is not one of all, fit, holdout");
  auto records = io::load_dataset(dataset);
  if (split != "all") {
    std::erase_if(records, [&](const io::Record& r) {
      return (r.split.empty() ? std::string("holdout") : r.split) != split;
    });
  }
  if (strict) io::require_all_modelled(records);
  validation::Summary summary = validation::validate(records);
  if (strict) validation::require_all_predicted(records, summary);
  return Validation{std::move(records), std::move(summary)};
}

std::string validate_json(const Validation& v) { return report::validate_json(v.summary); }

namespace {

GemmTime gemm_time(const core::GpuSpec& gpu, const analytic::KernelTime& t, double m, double n, double k) {
  GemmTime g;
  g.time_s = analytic::launch_floor(gpu, t.time_s, t.source);  // as the step times it (operators.cpp)
  g.tflops = g.time_s > 0 ? 2 * m * n * k / g.time_s / 1e12 : 0.0;
  g.source = t.source;
  g.launch_floor = g.time_s > t.time_s;
  return g;
}

}  // namespace

GemmTime gemm(const core::GpuSpec& gpu, core::Precision p, double m, double n, double k) {
  return gemm_time(gpu, analytic::gemm_kernel(gpu, p, m, n, k), m, n, k);
}

GemmTime fp8_gemm(const core::GpuSpec& gpu, core::Fp8Kernel kernel, double m, double n, double k) {
  return gemm_time(gpu, analytic::fp8_gemm_kernel(gpu, kernel, m, n, k), m, n, k);
}

std::string gemm_json(const GemmTime& t) {
  nlohmann::ordered_json j;
  j["time_s"] = t.time_s;
  j["tflops"] = t.tflops;
  j["source"] = std::string(core::name(t.source));
  j["launch_floor"] = t.launch_floor;
  return j.dump(2) + "\n";
}

AttentionTime attention(const core::GpuSpec& gpu, core::Precision p, const core::AttentionShape& shape,
                        core::AttentionKernel kernel) {
  const analytic::AttentionTime t = analytic::attention_kernel(gpu, p, shape, kernel);
  AttentionTime a;
  a.forward_s = analytic::launch_floor(gpu, t.forward_s, t.source);  // as the step times it (operators.cpp)
  a.backward_s = analytic::launch_floor(gpu, t.backward_s, t.source);
  a.source = t.source;
  a.launch_floor = a.forward_s > t.forward_s || a.backward_s > t.backward_s;
  return a;
}

std::string attention_json(const AttentionTime& t) {
  nlohmann::ordered_json j;
  j["fwd_s"] = t.forward_s;
  j["bwd_s"] = t.backward_s;
  j["source"] = std::string(core::name(t.source));
  j["launch_floor"] = t.launch_floor;
  return j.dump(2) + "\n";
}

}  // namespace ptdsim::api
