#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/io/emit.hpp"
#include "ptdsim/io/html.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/report.hpp"
#include "ptdsim/io/sweep_report.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/core/version.hpp"

namespace ptdsim::cli {
namespace {

struct SweepArgs {
  std::string scenario;
  int gpus = 0;
  std::vector<std::string> sets;
  PlanOptions plan;  // --tokens, --gpu-hour
  int top = 10;
  int threads = 0;
  std::string objective = "time";
  bool no_scenario_rank = false;
  std::uint64_t rank_limit = planner::SweepOptions{}.rank_limit;
  double min_free_gib = 0;
  std::vector<std::string> search;
  // --tp 4,8 --pp 4..16 ...: the text of each choice, parsed once the options are read
  std::string tp, pp, cp, ep, dp, vpp, micro_batch, zero;
  std::string emit;    // --emit FILE: the layout of rank emit_rank as a scenario
  int emit_rank = 1;
  bool csv_all = false;  // --csv-all: a CSV row per evaluated candidate, not the top K
  planner::SearchSpace bounds;
  OutputOptions out;
};

// What each --objective ranks by, and what it needs beside the step.
const std::vector<std::string> kObjectives{"time", "memory", "mfu", "days", "gpu_hours", "energy", "cost"};

using core::kGiB;

// The progress line: only for a person watching a terminal, only once the sweep has run a second.
class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  void operator()(const planner::Progress& p) {
    if (!enabled_) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1.0) return;
    std::cerr << fmt::format("\rsweep: {} {}/{} ({:.0f} s)   ", p.phase, p.done, p.total, elapsed)
              << std::flush;
    shown_ = true;
  }
  ~ProgressLine() {
    if (shown_) std::cerr << "\r" << std::string(60, ' ') << "\r" << std::flush;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

// A choice option's text as planner::Choice; the text was checked when the options were read.
planner::Choice choice_of(const std::string& text) {
  return text.empty() ? planner::Choice{} : *planner::parse_choice(text);
}

// What an objective needs that the inputs may not give: exit 2 naming it, before any work.
void check_objective(const std::string& objective, const core::Scenario& base) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw core::ConfigError(core::SourceLocation{"--objective", 0, 0}, objective + " needs " + what);
  };
  if (objective == "days" || objective == "gpu_hours" || objective == "cost" || objective == "energy")
    need(base.training.tokens > 0, "a token budget: --tokens 15T or training.tokens");
  if (objective == "cost") need(base.cost.gpu_hour > 0, "a price: --gpu-hour 2.5 or cost.gpu_hour");
  if (objective == "energy")
    need(base.hardware.gpu.tdp_w > 0 && base.hardware.gpu.idle_w > 0,
         "the GPU's power: hardware.gpu.tdp_w and hardware.gpu.idle_w");
}

// --emit: the layout of rank N as a scenario `ptdsim evaluate` runs as is. It is loaded and simulated
// again before it is written: a file that would not reproduce the ranked step time is never written.
void emit_layout(const SweepArgs& a, const std::vector<io::Override>& overrides, const planner::SweepResult& r) {
  if (a.emit_rank > static_cast<int>(r.results.size()))
    throw core::ConfigError(core::SourceLocation{"--emit-rank", 0, 0},
                            fmt::format("rank {} was asked for, but the sweep ranked {} layout{}", a.emit_rank,
                                        r.results.size(), r.results.size() == 1 ? "" : "s"));
  const planner::Ranked& w = r.results[static_cast<std::size_t>(a.emit_rank - 1)];
  const std::string header = fmt::format(
      "# Written by `ptdsim {} sweep --emit`: rank {} (objective {}) of {}, step {:.17g} s.\n"
      "# `ptdsim evaluate` on this file gives that step; the sweep's degrees and switches are set below.\n",
      core::kVersion, a.emit_rank, a.objective, a.scenario, w.report.step_s);
  const std::string text = io::scenario_yaml(a.scenario, overrides, w.report.scenario, header);
  const std::string dir = std::filesystem::path(a.emit).parent_path().string();
  const core::Scenario back = io::load_scenario_from_string(text, a.emit, {}, dir.empty() ? "." : dir);
  const double step = sim::simulate(back).step_s;
  if (step != w.report.step_s)
    throw std::runtime_error(fmt::format("the emitted scenario evaluates to {:.17g} s, not the ranked {:.17g} s", step,
                                         w.report.step_s));
  io::write_output(a.emit, text);
}

void run(const SweepArgs& a) {
  const std::vector<io::Override> overrides = overrides_of(a.sets, a.plan);
  std::vector<std::string> keys;
  for (const auto& o : overrides) keys.push_back(o.key);
  // The file (with its --set) must be a valid scenario on its own cluster; --gpus then only moves
  // the GPU count, since the sweep replaces every parallel degree the user did not pin.
  core::Scenario base = io::load_scenario(a.scenario, overrides);
  if (a.gpus > 0) base.gpus = a.gpus;
  check_objective(a.objective, base);

  planner::SearchSpace bounds = a.bounds;
  bounds.tp = choice_of(a.tp);
  bounds.pp = choice_of(a.pp);
  bounds.cp = choice_of(a.cp);
  bounds.ep = choice_of(a.ep);
  bounds.dp = choice_of(a.dp);
  bounds.vpp = choice_of(a.vpp);
  bounds.micro_batch = choice_of(a.micro_batch);
  bounds.zero = choice_of(a.zero);
  planner::pin_dimensions(base, keys, bounds);
  // --search after the pins: a searched switch is searched even when a --set gave it a value
  planner::search_switches(a.search, bounds);
  const planner::Space space(base, bounds);

  planner::SweepOptions opt;
  opt.top = a.top;
  opt.threads = a.threads;
  opt.rank_scenario = !a.no_scenario_rank;
  opt.rank_limit = a.rank_limit;
  opt.min_free_bytes = a.min_free_gib * kGiB;
  // days, GPU-hours and cost are proportional to the step time for one GPU count and budget
  opt.objective = a.objective == "memory" ? planner::Objective::memory
                  : a.objective == "mfu"  ? planner::Objective::mfu
                  : a.objective == "energy" ? planner::Objective::energy
                                          : planner::Objective::time;
  ProgressLine progress;
  opt.on_progress = [&](const planner::Progress& p) { progress(p); };

  // CSV: the top K ranked; with --csv-all one row per evaluated candidate, to stdout as they come,
  // to -o whole at the end.
  std::string csv;
  const bool to_stdout = a.out.to_stdout();
  if (a.out.format == "csv" && a.csv_all) {
    csv = io::sweep_csv_header();
    if (to_stdout) {
      std::cout << csv;
      csv.clear();
    }
    opt.on_row = [&](const planner::Row& row) {
      check_printable(row.report, a.scenario);
      std::string line = io::sweep_csv_row(row);
      if (to_stdout) {
        std::cout << line;
      } else {
        csv += line;
      }
    };
  }
  // HTML draws every candidate from a bounded summary of the rows (io::SweepCollector)
  io::SweepCollector collector;
  if (a.out.format == "html") opt.on_row = [&](const planner::Row& row) { collector.add(row); };
  const planner::SweepResult result = planner::sweep(base, space, opt);
  for (const auto& x : result.results) check_printable(x.report, a.scenario);
  if (result.scenario && result.scenario->ranked) check_printable(result.scenario->report, a.scenario);

  if (!a.emit.empty()) emit_layout(a, overrides, result);
  if (a.out.format == "csv" && !a.csv_all) {
    emit(a.out, io::sweep_csv_header() + io::sweep_csv_ranked(result));
    std::cerr << io::sweep_counts_line(result) << io::sweep_scenario_line(result, a.objective);
    return;
  }
  if (a.out.format == "csv") {
    if (to_stdout) {
      std::cout.flush();
    } else {
      emit(a.out, csv);
    }
    std::cerr << io::sweep_counts_line(result) << io::sweep_scenario_line(result, a.objective);
    return;
  }
  if (a.out.format == "html") {
    emit(a.out, io::sweep_html(base, result, collector, a.objective, io::PageInfo{core::kVersion, a.scenario}));
    return;
  }
  emit(a.out, a.out.format == "json" ? io::sweep_json(result, a.objective)
                                     : io::sweep_table(base, space, result, a.objective, a.min_free_gib));
}

}  // namespace

void add_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep", "search every parallel layout of a scenario's model and rank the fastest");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (the model, hardware and batch)")
      ->required();
  cmd->add_option("--gpus", args->gpus, "GPUs to lay out (default: the scenario's)")
      ->check(CLI::Range(1LL, static_cast<long long>(io::valid_range("cluster.gpus").max)));
  add_set_option(cmd, args->sets);
  add_plan_options(cmd, args->plan);
  cmd->add_option("--top", args->top, "how many layouts to rank")->check(kPositiveCount)->default_val(10);
  cmd->add_option("--threads", args->threads, "worker threads (default: all cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--objective", args->objective,
                  "what to rank by: time, memory, mfu, or with --tokens days, gpu_hours, cost (as time; with --gpu-hour) and "
                  "energy; ties go to more memory headroom")
      ->check(CLI::IsMember(kObjectives))
      ->default_str("time");
  cmd->add_option("--min-free-gib", args->min_free_gib,
                  "a layout fits only with at least this much memory left free on every GPU")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--search", args->search,
                  "also search these switches: overlap.tp, overlap.dp, overlap.pp (on and off instead of the "
                  "scenario's), recompute, zero, sequence_parallel, schedule (every value, even when --set)")
      ->delimiter(',')
      ->check(CLI::IsMember(planner::searchable_switches()));
  auto choice = [&](const char* name, std::string& text, const char* what) {
    cmd->add_option(name, text, std::string(what) + (std::string_view(name) == "--zero" ? ": values and ranges, e.g. 1,3 or 0..2"
                                                                                        : ": values and ranges, e.g. 4,8 or 4..16"))
        ->type_name("LIST")
        ->check(CLI::Validator(
            [](const std::string& v) {
              return planner::parse_choice(v) ? std::string()
                                              : "a list of positive integers and ranges such as 4,8 or 4..16, got " + v;
            },
            "LIST"));
  };
  choice("--tp", args->tp, "tensor-parallel degrees");
  choice("--pp", args->pp, "pipeline-parallel degrees");
  choice("--cp", args->cp, "context-parallel degrees");
  choice("--ep", args->ep, "expert-parallel degrees");
  choice("--dp", args->dp, "data-parallel degrees (a filter: dp = GPUs / (tp*pp*cp))");
  choice("--vpp", args->vpp, "virtual pipeline stages per rank");
  choice("--micro-batch", args->micro_batch, "micro-batch sizes");
  const std::string stages = "0 to " + std::to_string(core::kMaxZeroStage);
  choice("--zero", args->zero, ("ZeRO stages (" + stages + ")").c_str());
  cmd->get_option("--zero")->check(CLI::Validator(
      [stages](const std::string& v) {
        // (text that is no list is the validator above's to refuse)
        const auto c = planner::parse_choice(v);
        int largest = 0;
        if (c) {
          for (int x : c->values) largest = std::max(largest, x);
          for (const auto& [lo, hi] : c->ranges) largest = std::max(largest, hi);
        }
        return largest <= core::kMaxZeroStage ? std::string() : "ZeRO stages are " + stages + ", got " + v;
      },
      ""));
  cmd->add_option("--emit", args->emit,
                  "write the layout of rank --emit-rank (default the best) as a scenario FILE that `ptdsim evaluate` "
                  "runs as is")
      ->type_name("FILE");
  cmd->add_option("--emit-rank", args->emit_rank, "which ranked layout --emit writes (1: the best)")
      ->check(kPositiveCount);
  cmd->add_flag("--csv-all", args->csv_all,
                "with --format csv: a row per evaluated candidate (rank column empty) instead of the top K");
  cmd->add_flag("--no-scenario-rank", args->no_scenario_rank,
               "do not rank the scenario's own layout (saves its simulations)");
  cmd->add_option("--rank-limit", args->rank_limit,
                  "most simulations beyond the top K's to rank the scenario's layout; past it the rank "
                  "is a range")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  auto& b = args->bounds;
  cmd->add_option("--max-tp", b.max_tp, "largest tensor-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-pp", b.max_pp, "largest pipeline-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-cp", b.max_cp, "largest context-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-ep", b.max_ep, "largest expert-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-vpp", b.max_vpp, "most virtual pipeline stages per rank")
      ->check(kPositiveCount);
  cmd->add_option("--max-micro-batch", b.max_micro_batch, "largest micro-batch (default 8)")
      ->check(kPositiveCount);
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
