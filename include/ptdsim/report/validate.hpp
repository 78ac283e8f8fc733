#pragma once
#include <string>
#include <vector>

#include "ptdsim/validation/validate.hpp"

// validate's outputs (docs/validation.md "What validate reports"): the table, the JSON, the CSV (one
// row per record), the counts line CSV writes to stderr, and --fit's tables. The HTML page is
// html.hpp's validate_html.
namespace ptdsim::report {

std::string validate_table(const validation::Summary& s, const std::string& dataset);
std::string validate_json(const validation::Summary& s);
std::string validate_csv(const validation::Summary& s);
std::string validate_counts_line(const validation::Summary& s);  // "68 records: 57 predicted ...\n"
std::string validate_fit_tables(const std::vector<validation::EfficiencyFit>& efficiencies,
                                const std::vector<validation::OverheadFit>& overheads,
                                const std::vector<validation::JitterFit>& jitter = {});

}  // namespace ptdsim::report
