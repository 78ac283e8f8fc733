#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptdsim/core/report.hpp"
#include "ptdsim/core/timeline.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/planner/sweep.hpp"
#include "ptdsim/validation/validate.hpp"

// `--format html`: one self-contained page per command (docs/report.md). Inline SVG drawn by
// src/report/svg.cpp, inline CSS, no script, no external file, nothing fetched. Each page is
// drawn from the same structures the table, JSON and CSV writers read.
namespace ptdsim::report {

// What a page says about where it came from.
struct PageInfo {
  std::string version;  // ptdsim's version
  std::string input;    // the scenario or dataset file as given on the command line
};

// evaluate: inputs, the answer, the simulated step's timeline, memory per stage, where the step
// time goes. `timeline` is sim::simulate's (an empty one draws no timeline and says so).
std::string evaluate_html(const core::Report& report, const core::Timeline& timeline,
                          const PageInfo& info);

// What the sweep page needs of every candidate, gathered from SweepOptions::on_row in bounded
// memory (docs/report.md "Sweep"): per (tp, pp) the best step time, the Pareto front of step
// time against peak memory (kept incrementally), and a fixed grid of counts for the cloud of
// all candidates. A 1M-row sweep costs the same memory as a 100-row one.
class SweepCollector {
 public:
  struct Cell {
    std::uint64_t rows = 0;     // candidates with this (tp, pp) that passed core::check
    std::uint64_t fitting = 0;  // of them, those that fit in memory
    double best_step_s = 0;     // the fastest fitting one's step time (when fitting > 0)
    double best_peak_bytes = 0;
    bool best_simulated = false;  // its step time is the scheduler's (else the analytic engine's)
    planner::Candidate best;
    double min_peak_bytes = 0;  // the smallest peak of the cell (what "does not fit" missed by)
  };
  struct Point {
    double peak_bytes = 0;
    double step_s = 0;
    bool simulated = false;
    planner::Candidate candidate;
  };
  // The cloud's grid: log10 bins, kBinsPerDecade per decade, over fixed ranges wide enough for
  // any layout (1e-4 to 1e6 s; 1e-2 to 1e5 GiB); values outside land in the edge bins.
  static constexpr int kBinsPerDecade = 20;
  static constexpr double kStepLog0 = -4, kStepLog1 = 6;
  static constexpr double kPeakLog0 = -2, kPeakLog1 = 5;  // GiB
  static constexpr int kStepBins = static_cast<int>((kStepLog1 - kStepLog0) * kBinsPerDecade);
  static constexpr int kPeakBins = static_cast<int>((kPeakLog1 - kPeakLog0) * kBinsPerDecade);

  SweepCollector();
  void add(const planner::Row& row);

  std::uint64_t rows() const { return rows_; }
  const std::map<std::pair<int, int>, Cell>& cells() const { return cells_; }  // key (tp, pp)
  std::vector<Point> front() const;  // by peak memory, ascending; step time descending
  // Candidates per grid bin (peak bin * kStepBins + step bin), fitting or not.
  const std::vector<std::uint32_t>& cloud(bool fits) const { return fits ? fit_ : over_; }
  double min_step_s() const { return min_step_; }
  double max_step_s() const { return max_step_; }
  double min_peak_bytes() const { return min_peak_; }
  double max_peak_bytes() const { return max_peak_; }

 private:
  std::uint64_t rows_ = 0;
  std::map<std::pair<int, int>, Cell> cells_;
  std::map<double, Point> front_;  // peak -> point
  std::vector<std::uint32_t> fit_, over_;
  double min_step_ = 0, max_step_ = 0, min_peak_ = 0, max_peak_ = 0;
};

// sweep: the heat map of the best step time per (tp, pp), the Pareto front, the ranked table.
std::string sweep_html(const core::Scenario& base, const planner::SweepResult& result,
                       const SweepCollector& rows, std::string_view objective, const PageInfo& info);

// validate: predicted against measured step time, the error per source group and per model size,
// every record, the records not modelled with their reasons. `records` are the dataset's, in the
// order validate() took them (for each record's parameter count).
std::string validate_html(const validation::Summary& summary, const std::vector<io::Record>& records,
                          const PageInfo& info);

}  // namespace ptdsim::report
