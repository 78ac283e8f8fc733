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
#include "ptdsim/api.hpp"
#include "options.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/io/emit.hpp"
#include "ptdsim/report/html.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/report/sweep.hpp"
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
  std::string tp, pp, cp, ep, etp, dp, vpp, micro_batch, zero;
  std::string emit;    // --emit FILE: the layout of rank emit_rank as a scenario
  int emit_rank = 1;
  bool csv_all = false;  // --csv-all: a CSV row per evaluated candidate, not the top K
  planner::SearchSpace bounds;
  OutputOptions out;
};

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

// --emit: the layout of rank N as a scenario `ptdsim evaluate` runs as is. It is loaded and simulated
// again before it is written: a file that would not reproduce the ranked step time is never written.
void emit_layout(const SweepArgs& a, const std::vector<io::Override>& overrides, const planner::SweepResult& r) {
  // the row of that rank (its near-ties share it and follow it)
  const auto row = std::find_if(r.results.begin(), r.results.end(),
                                [&](const planner::Ranked& x) { return x.near_tie_of < 0 && x.rank == a.emit_rank; });
  if (row == r.results.end()) {
    int rows = 0;
    for (const auto& x : r.results) rows = std::max(rows, x.rank);
    throw core::ConfigError(core::SourceLocation{"--emit-rank", 0, 0},
                            fmt::format("rank {} was asked for, but the sweep ranked {} layout{}", a.emit_rank, rows,
                                        rows == 1 ? "" : "s"));
  }
  const planner::Ranked& w = *row;
  const std::string header = fmt::format(
      "# Written by `ptdsim {} sweep --emit`: rank {} (objective {}) of {}, step {:.17g} s.\n"
      "# `ptdsim evaluate` on this file gives that step; the sweep's degrees and switches are set below.\n",
      core::kVersion, a.emit_rank, a.objective, a.scenario, w.report.step_s);
  const std::string text = io::scenario_yaml(a.scenario, overrides, w.report.scenario, header);
  const std::string dir = std::filesystem::path(a.emit).parent_path().string();
  const core::Scenario back = io::load_scenario_from_string(text, a.emit, {}, dir.empty() ? "." : dir);
  const double step = api::evaluate(back).step_s;
  if (step != w.report.step_s)
    throw std::runtime_error(fmt::format("the emitted scenario evaluates to {:.17g} s, not the ranked {:.17g} s", step,
                                         w.report.step_s));
  io::write_output(a.emit, text);
}

void run(const SweepArgs& a) {
  const std::vector<io::Override> overrides = overrides_of(a.sets, a.plan);
  std::vector<std::string> keys;
  for (const auto& o : overrides) keys.push_back(o.key);
  api::SweepRequest req;
  req.gpus = a.gpus;
  req.objective = a.objective;
  req.top = a.top;
  req.threads = a.threads;
  req.rank_scenario = !a.no_scenario_rank;
  req.rank_limit = a.rank_limit;
  req.min_free_gib = a.min_free_gib;
  req.search = a.search;
  req.tp = a.tp, req.pp = a.pp, req.cp = a.cp, req.ep = a.ep, req.etp = a.etp, req.dp = a.dp;
  req.vpp = a.vpp, req.micro_batch = a.micro_batch, req.zero = a.zero;
  req.max_tp = a.bounds.max_tp, req.max_pp = a.bounds.max_pp, req.max_cp = a.bounds.max_cp;
  req.max_ep = a.bounds.max_ep, req.max_vpp = a.bounds.max_vpp, req.max_micro_batch = a.bounds.max_micro_batch;
  ProgressLine progress;
  req.on_progress = [&](const planner::Progress& p) { progress(p); };

  // CSV: the top K ranked; with --csv-all one row per evaluated candidate, to stdout as they come,
  // to -o whole at the end.
  std::string csv;
  const bool to_stdout = a.out.to_stdout();
  if (a.out.format == "csv" && a.csv_all) {
    csv = report::sweep_csv_header();
    if (to_stdout) {
      std::cout << csv;
      csv.clear();
    }
    req.on_row = [&](const planner::Row& row) {
      std::string line = report::sweep_csv_row(row);
      if (to_stdout) {
        std::cout << line;
      } else {
        csv += line;
      }
    };
  }
  // HTML draws every candidate from a bounded summary of the rows (report::SweepCollector)
  report::SweepCollector collector;
  if (a.out.format == "html") req.on_row = [&](const planner::Row& row) { collector.add(row); };
  const api::Sweep sw = api::sweep(io::load_scenario(a.scenario, overrides), keys, req);
  const planner::SweepResult& result = sw.result;

  if (!a.emit.empty()) emit_layout(a, overrides, result);
  if (a.out.format == "csv" && !a.csv_all) {
    emit(a.out, report::sweep_csv_header() + report::sweep_csv_ranked(result));
    std::cerr << report::sweep_counts_line(result) << report::sweep_scenario_line(result, a.objective);
    return;
  }
  if (a.out.format == "csv") {
    if (to_stdout) {
      std::cout.flush();
    } else {
      emit(a.out, csv);
    }
    std::cerr << report::sweep_counts_line(result) << report::sweep_scenario_line(result, a.objective);
    return;
  }
  if (a.out.format == "html") {
    emit(a.out, report::sweep_html(sw.base, result, collector, a.objective, report::PageInfo{core::kVersion, a.scenario}));
    return;
  }
  emit(a.out, a.out.format == "json" ? api::sweep_json(sw)
                                     : report::sweep_table(sw.base, sw.space, result, a.objective, a.min_free_gib));
}

// The layout dimensions' lists (--tp 4,8 or 4..16, ...), each checked as it is parsed.
void add_layout_lists(CLI::App* cmd, SweepArgs& a) {
  auto choice = [&](const char* name, std::string& text, const char* what, int least = 1,
                    const char* example = "4,8 or 4..16") {
    cmd->add_option(name, text, std::string(what) + ": values and ranges, e.g. " + example)
        ->type_name("LIST")
        ->check(CLI::Validator(
            [least, example](const std::string& v) {
              return planner::parse_choice(v, least)
                         ? std::string()
                         : fmt::format("a list of {} integers and ranges such as {}, got {} (at most {} items)",
                                       least > 0 ? "positive" : "non-negative", example,
                                       v.size() > 60 ? v.substr(0, 60) + "..." : v, planner::kMaxChoiceItems);
            },
            "LIST"));
  };
  choice("--tp", a.tp, "tensor-parallel degrees");
  choice("--pp", a.pp, "pipeline-parallel degrees");
  choice("--cp", a.cp, "context-parallel degrees");
  choice("--ep", a.ep, "expert-parallel degrees");
  choice("--etp", a.etp, "expert tensor-parallel degrees (default: the scenario's parallel.etp, unset: as tp)");
  choice("--dp", a.dp, "data-parallel degrees (a filter: dp = GPUs / (tp*pp*cp))");
  choice("--vpp", a.vpp, "virtual pipeline stages per rank");
  choice("--micro-batch", a.micro_batch, "micro-batch sizes");
  const std::string stages = "0 to " + std::to_string(core::kMaxZeroStage);
  choice("--zero", a.zero, ("ZeRO stages (" + stages + ")").c_str(), 0, "1,3 or 0..2");
  cmd->get_option("--zero")->check(CLI::Validator(
      [stages](const std::string& v) {
        // (text that is no list is the validator above's to refuse)
        const auto c = planner::parse_choice(v, 0);
        int largest = 0;
        if (c) {
          for (int x : c->values) largest = std::max(largest, x);
          for (const auto& [lo, hi] : c->ranges) largest = std::max(largest, hi);
        }
        return largest <= core::kMaxZeroStage ? std::string() : "ZeRO stages are " + stages + ", got " + v;
      },
      ""));
}

// The largest degree of each dimension searched when no list is given.
void add_max_options(CLI::App* cmd, planner::SearchSpace& b) {
  cmd->add_option("--max-tp", b.max_tp, "largest tensor-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-pp", b.max_pp, "largest pipeline-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-cp", b.max_cp, "largest context-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-ep", b.max_ep, "largest expert-parallel degree")->check(kPositiveCount);
  cmd->add_option("--max-vpp", b.max_vpp, "most virtual pipeline stages per rank")
      ->check(kPositiveCount);
  cmd->add_option("--max-micro-batch", b.max_micro_batch, "largest micro-batch (default 8)")
      ->check(kPositiveCount);
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
  cmd->add_option("--top", args->top, "how many rows to rank (different layouts; near-ties ride with their row)")->check(kPositiveCount)->default_val(10);
  cmd->add_option("--threads", args->threads, "worker threads (default: all cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--objective", args->objective,
                  "what to rank by: time, memory, mfu, or with --tokens days, gpu_hours, cost (as time; with --gpu-hour) and "
                  "energy; ties go to more memory headroom")
      ->check(CLI::IsMember(api::objectives()))
      ->default_str("time");
  cmd->add_option("--min-free-gib", args->min_free_gib,
                  "a layout fits only with at least this much memory left free on every GPU")
      ->check(finite_range(0.0, 1e6));
  cmd->add_option("--search", args->search,
                  "also search these switches: overlap.tp, overlap.dp, overlap.pp (on and off instead of the "
                  "scenario's), recompute, zero, sequence_parallel, schedule, offload (none, optimizer, optimizer_params) "
                  "(every value, even when --set)")
      ->delimiter(',')
      ->check(CLI::IsMember(planner::searchable_switches()));
  add_layout_lists(cmd, *args);
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
  add_max_options(cmd, args->bounds);
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
