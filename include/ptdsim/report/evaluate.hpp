#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ptdsim/core/report.hpp"

// Reports out: the table a person reads, and the JSON and CSV programs read. The JSON and CSV
// share one declaration of the fields (src/report/report_fields.hpp), so they never drift apart.
namespace ptdsim::report {

std::string report_table(const core::Report& r);
std::string report_json(const core::Report& r, int indent = 2);  // interface.md "JSON output of evaluate"
// What report_json writes, as a walk for a writer of another tree (the Python module's dict): each
// member by its dotted path ("memory.peak_gib": nested objects, each where its first member comes),
// in the text's order, the numbers as they are before formatting. An array of objects comes as
// begin_rows(path), then per element begin_row() and its members with paths inside it, then end_rows().
// report_json is this walk written as text, so the two cannot differ.
class JsonVisitor {
 public:
  virtual ~JsonVisitor() = default;
  virtual void boolean(std::string_view path, bool v) = 0;
  virtual void integer(std::string_view path, long long v) = 0;
  virtual void number(std::string_view path, double v) = 0;
  virtual void string(std::string_view path, const std::string& v) = 0;
  virtual void strings(std::string_view path, const std::vector<std::string>& v) = 0;  // an array of text
  virtual void begin_rows(std::string_view path) = 0;
  virtual void begin_row() = 0;
  virtual void end_rows() = 0;
};
void report_json_walk(const core::Report& r, JsonVisitor& visitor);

std::string report_csv_header();                                   // one line, with '\n'
std::string report_csv_row(const core::Report& r);                 // one line, with '\n'

// "" when every number the writers would print is finite and not negative, else the first that is
// not ("time.step_s = inf"): the last check before a report is printed (inputs in their valid
// ranges cannot produce one; a printed inf or negative time would be nonsense with exit 0).
std::string report_problem(const core::Report& r);

}  // namespace ptdsim::report
