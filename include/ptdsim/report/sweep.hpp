#pragma once
#include <string>
#include <string_view>

#include "ptdsim/core/scenario.hpp"
#include "ptdsim/planner/space.hpp"
#include "ptdsim/planner/sweep.hpp"

// The sweep's outputs (docs/planner.md "Output"): the ranked table a person reads, the JSON, the CSV
// rows streamed per candidate, and the two summary lines CSV writes to stderr. The HTML page is
// html.hpp's sweep_html.
namespace ptdsim::report {

// The ranked table. `min_free_gib`: the --min-free-gib the sweep ran with (0: none).
std::string sweep_table(const core::Scenario& base, const planner::Space& space, const planner::SweepResult& r,
                        std::string_view objective, double min_free_gib);
std::string sweep_json(const planner::SweepResult& r, std::string_view objective);
// CSV: the header (with '\n'), then the ranked layouts (the top K, rank 1 first; `--format csv`),
// or one row per evaluated candidate as planner::SweepOptions::on_row gives it (`--csv-all`:
// its rank column is empty, its lower bound given).
std::string sweep_csv_header();
std::string sweep_csv_ranked(const planner::SweepResult& r);
std::string sweep_csv_row(const planner::Row& row);
// "472416 candidates: 115258 feasible (...); rejected: ..." and "scenario's layout: ..." (each with
// '\n'; the second empty without a scenario rank).
std::string sweep_counts_line(const planner::SweepResult& r);
std::string sweep_scenario_line(const planner::SweepResult& r, std::string_view objective);

}  // namespace ptdsim::report
