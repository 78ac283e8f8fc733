#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/core/report.hpp"
#include "ptdsim/io/load.hpp"

// Predictions against published training runs (`ptdsim validate`). Step times are compared
// directly; a record that publishes only TFLOP/s per GPU has its step time recovered with the
// source's own FLOP formula (flops_convention), never with ours, so definitions are not mixed.
namespace ptdsim::validation {

struct Quantity {
  std::optional<double> predicted;
  std::optional<double> measured;
  bool complete() const { return predicted && measured && *measured != 0; }
  double error() const { return (*predicted - *measured) / *measured; }  // signed, fraction
};

struct RecordResult {
  std::string name;
  std::string source;
  std::string split;         // fit | holdout
  std::string not_modelled;  // non-empty: not evaluated, and why
  std::string step_from;     // "measured" or "tflops (<convention>)"
  double params = 0;         // the model's parameters (for the size buckets)
  std::string gpu;           // the GPU's name
  Quantity step_s;
  Quantity tflops_per_gpu;   // in the source's own FLOP convention
  // the device's peak (measured.peak_memory_gib, against Report::peak_device_bytes) or, where the record
  // gives the allocator's (measured.peak_reserved_gib), that (against Report::peak_reserved_bytes)
  Quantity peak_memory_gib;
  bool memory_reserved = false;  // which of the two
  // Predicted peak memory per GPU against the GPU's capacity, for every predicted record: one that
  // does not fit is still scored (the run it stands for did fit), and flagged in every format.
  bool fits = true;
  double predicted_peak_gib = 0;
  double capacity_gib = 0;

  // The outcome: predicted (with the errors above), or not modelled for the reason given.
  bool predicted() const { return not_modelled.empty(); }
  // "does not fit: 91.2 GiB of 80.0 GiB", or "" when it fits or was not predicted.
  std::string memory_flag() const;
};

struct Error {
  int count = 0;
  double mape = 0;  // mean absolute error, fraction
  double mean = 0;  // mean signed error, fraction (the bias)
  std::string worst;
  double worst_error = 0;  // signed
};

struct Summary {
  std::vector<RecordResult> records;
  int predicted = 0;      // records with a prediction
  int not_modelled = 0;   // records without one (each with its reason)
  int does_not_fit = 0;   // predicted records whose predicted peak memory exceeds the GPU's
  std::map<std::string, Error> by_quantity;                 // step_s, tflops_per_gpu, peak_memory_gib
  std::map<std::string, Error> step_by_source;              // source group -> step-time error
  std::map<std::string, Error> step_by_split;               // fit / holdout -> step-time error
  std::map<std::string, Error> step_by_gpu;                 // GPU name -> step-time error
  std::map<std::string, Error> step_by_size;                // "<gpu> <size bucket>" -> step-time error
};

// The FLOPs per step a source's convention counts for a scenario, or nullopt when unknown.
// megatron96: 96 B s L h^2 (1 + s/6h + V/16Lh)  (Narayanan et al. 2021 Eq. 3, recompute included)
// megatron72: 72 B s L h^2 (1 + s/6h + V/12Lh)  (Korthikanti et al. 2022, model FLOPs)
// megatron, megatron-2024: Megatron-LM's own count, 2025 and v0.8 (analytic/megatron_count.hpp)
// model, unstated: the model FLOPs of the analytic engine (no recomputation; GQA and SwiGLU aware)
std::optional<double> convention_flops(const std::string& convention, const core::Scenario& s,
                                       const core::Report& predicted);

// A record whose scenario the simulation cannot run comes back not modelled with the reason, so
// one record never stops the others.
RecordResult validate_record(const io::Record& rec);
Summary summarize(std::vector<RecordResult> records);
Summary validate(const std::vector<io::Record>& records);

// `validate --strict`: throws, as a ConfigError at the record's position, the reason the first
// record of `summary` (made from `records`, in order) that is not predicted has none.
void require_all_predicted(const std::vector<io::Record>& records, const Summary& summary);

// The source group of a record: the part of its source before the first comma.
std::string source_group(const std::string& source);

// The size bucket of a model of `params` parameters: "<10B", "10-100B" or ">100B".
std::string size_bucket(double params);

}  // namespace ptdsim::validation

namespace ptdsim::validation {

// The hardware efficiency fit of the validation issue, for GPUs without measured kernel tables: one
// matmul efficiency per GPU type and precision (never per record), chosen to minimise the step-time
// MAPE of the records in the "fit" split, then scored on the "holdout" records it did not see.
// Brent's method (boost::math::tools::brent_find_minima) on [0.3, 1.0], rounded to 3 decimals.
struct EfficiencyFit {
  std::string gpu;  // "<gpu name> <precision>" (bf16 stands for fp16 too)
  double shipped = 0;  // the value in the hardware file the records use
  double fitted = 0;
  Error fit;      // step-time error on the fit split with the fitted value
  Error holdout;  // the same on the holdout split
};
std::vector<EfficiencyFit> fit_matmul_efficiency(const std::vector<io::Record>& records);

// For GPUs with measured kernel tables (gpu.kernels): what the tables leave unexplained end to end,
// per GPU type (docs/validation.md "What the kernel tables leave unexplained"): the time per
// transformer layer and pass (gpu.kernels.overhead.layer_us, in [0, 1 ms], to 0.1 us) and the factor
// on memory-bound kernel times (memory_bound_factor, in [0.5, 3], to 0.001), fitted together on the
// "fit" records by nested Brent searches (the factor outside, the layer time inside), scored on the
// "holdout" ones.
struct OverheadFit {
  std::string gpu;
  double shipped_layer_s = 0, shipped_factor = 1;
  double layer_s = 0, factor = 1;
  Error fit;
  Error holdout;
};
std::vector<OverheadFit> fit_overheads(const std::vector<io::Record>& records);

// The cost of scale's two constants per fabric type (hardware.jitter, docs/analytic.md "The cost of
// scale"): the relative spread of a rank's compute (in [0, 0.1], to 0.0001) and of its exposed
// communication (link, in [0, 0.5], to 0.001) across a job's GPUs, fitted together on the "fit"
// records of the hardware files that share a fabric (the network's topology and NIC bandwidth) by
// nested Brent searches (link outside, compute inside), scored on the "holdout" ones; the other
// fitted constants stay as the files ship them.
struct JitterFit {
  std::string fabric;  // "dgx-h100 (fat-tree, 50 GB/s NIC per GPU)": the files and their network
  core::JitterSpec shipped, fitted;
  Error fit;
  Error holdout;
};
std::vector<JitterFit> fit_jitter(const std::vector<io::Record>& records);

}  // namespace ptdsim::validation
