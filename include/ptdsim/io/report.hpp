#pragma once
#include <string>

#include "ptdsim/core/report.hpp"

// Reports out: the table a person reads, and the JSON and CSV programs read. The JSON and CSV
// share one declaration of the fields (src/io/report/fields.hpp), so they never drift apart.
namespace ptdsim::io {

std::string report_table(const core::Report& r);
std::string report_json(const core::Report& r, int indent = 2);  // interface.md "JSON output of evaluate"
std::string report_csv_header();                                   // one line, with '\n'
std::string report_csv_row(const core::Report& r);                 // one line, with '\n'

// "" when every number the writers would print is finite and not negative, else the first that is
// not ("time.step_s = inf"): the last check before a report is printed (inputs in their valid
// ranges cannot produce one; a printed inf or negative time would be nonsense with exit 0).
std::string report_problem(const core::Report& r);

}  // namespace ptdsim::io
