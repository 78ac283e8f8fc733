#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"
#include "ptdsim/core/timeline.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/validation/validate.hpp"

// ptdsim as a library: what the commands `evaluate`, `sweep` and `validate` do, as functions on a
// loaded core::Scenario. The CLI (src/cli), the Python module (python/) and any C++ program
// (`find_package(ptdsim)`, target ptdsim::ptdsim) call these, so their numbers and their JSON are
// the same. Bad input throws core::ConfigError (file:line:col and the message the CLI prints);
// nothing here prints or exits.
namespace ptdsim::api {

// A scenario from a file or from YAML text (`name` stands for the file in messages, relative paths
// inside resolve against `base_dir`), with `--set` overrides applied ("parallel.tp" = "8").
core::Scenario load(const std::string& path, const std::vector<io::Override>& overrides = {});
core::Scenario load_text(const std::string& yaml, const std::string& name,
                         const std::vector<io::Override>& overrides = {}, const std::string& base_dir = ".");

// `ptdsim evaluate`: one step simulated by the discrete-event engine, its report checked printable
// (a non-finite or negative number is a ConfigError naming the scenario's file). `trace_json` and
// `timeline` as sim::simulate's.
core::Report evaluate(const core::Scenario& s, std::string* trace_json = nullptr,
                      core::Timeline* timeline = nullptr);
// `ptdsim evaluate --format json`: the report as JSON.
std::string evaluate_json(const core::Scenario& s);

// A report holding a non-finite or negative number (report::report_problem): a ConfigError naming
// `file`, the last guard before a report is printed.
void check_printable(const core::Report& r, const std::string& file);

// `ptdsim sweep`'s options (docs/planner.md). Degree choices are the command line's text ("4,8",
// "4..16"; "" every value), checked here: a bad one is a ConfigError naming its option.
struct SweepRequest {
  int gpus = 0;  // 0: the scenario's
  std::string objective = "time";  // time, memory, mfu, days, gpu_hours, cost, energy
  int top = 10;
  int threads = 0;  // 0: all cores
  bool rank_scenario = true;
  std::uint64_t rank_limit = planner::SweepOptions{}.rank_limit;
  double min_free_gib = 0;
  std::vector<std::string> search;  // --search: overlap.tp, recompute, ...
  std::string tp, pp, cp, ep, etp, dp, vpp, micro_batch, zero;
  int max_tp = 0, max_pp = 0, max_cp = 0, max_ep = 0, max_vpp = 0;
  int max_micro_batch = planner::SearchSpace{}.max_micro_batch;
  // Per evaluated candidate (CSV streaming) and about every 100 ms, from the calling thread.
  std::function<void(const planner::Row&)> on_row;
  std::function<void(const planner::Progress&)> on_progress;
};

// The objectives --objective takes.
const std::vector<std::string>& objectives();

// A sweep's inputs as it ran them and its result: the base scenario (with --gpus), the space and
// the ranked layouts, for the writers of io/sweep_report.hpp.
struct Sweep {
  core::Scenario base;
  planner::Space space;
  planner::SweepResult result;
  std::string objective;
};

// `ptdsim sweep`: `base` loaded with its overrides, whose keys (`override_keys`) pin the dimensions
// they name (planner::pin_dimensions). Every report ranked is checked printable.
Sweep sweep(core::Scenario base, const std::vector<std::string>& override_keys, const SweepRequest& request);
// `ptdsim sweep --format json`.
std::string sweep_json(const Sweep& s);

// The validation dataset shipped with ptdsim (scenarios/published/dataset.yaml of the first library
// folder that has it: io::shipped_file).
std::string default_dataset();

// `ptdsim validate [DATASET] [--split all|fit|holdout] [--strict]`: the records of the split scored.
struct Validation {
  std::vector<io::Record> records;
  validation::Summary summary;
};
Validation validate(const std::string& dataset, const std::string& split = "all", bool strict = false);
// `ptdsim validate --format json`.
std::string validate_json(const Validation& v);

// `ptdsim kernel HARDWARE gemm|attention`: one kernel's predicted time on a GPU and where it came
// from, raised to one launch where the model gives less (analytic::launch_floor), as the step times
// it. The precision must have a peak rate on the GPU (core::precision_ok).
struct GemmTime {
  double time_s = 0;
  double tflops = 0;
  core::TimeSource source{};
  bool launch_floor = false;  // the time is the launch floor, not the model's
};
GemmTime gemm(const core::GpuSpec& gpu, core::Precision p, double m, double n, double k);
// An FP8 GEMM on one of the kernels beside the tensorwise one (analytic::fp8_gemm_kernel).
GemmTime fp8_gemm(const core::GpuSpec& gpu, core::Fp8Kernel kernel, double m, double n, double k);
std::string gemm_json(const GemmTime& t);

struct AttentionTime {
  double forward_s = 0;
  double backward_s = 0;
  core::TimeSource source{};
  bool launch_floor = false;  // either time is the launch floor
};
AttentionTime attention(const core::GpuSpec& gpu, core::Precision p, const core::AttentionShape& shape,
                        core::AttentionKernel kernel);
std::string attention_json(const AttentionTime& t);

}  // namespace ptdsim::api
