#pragma once
#include <string>
#include <vector>

#include "ptdsim/report/html.hpp"
#include "ptdsim/io/study.hpp"

// What `ptdsim study` prints (docs/study.md "Outputs"), from the records of every point in point
// order: one row per point and layout kept (the varied values, the layout's degrees, step time,
// MFU, days, GPU-hours, energy, cost, peak memory, what bounds it), or the point's reason when it
// has none. Each writer reads only the records, so a study run whole, resumed, on ranks or merged
// from shards prints the same bytes.
namespace ptdsim::report {

std::string study_csv(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records);
std::string study_json(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records);
std::string study_table(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records);
// The page: the answer per point, the objective's sensitivity to each knob (a tornado chart), time
// against cost with the Pareto front, and a heat map over the first two knobs that vary.
std::string study_html(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records, const PageInfo& info);

// The objective's value of a layout, smaller is better (mfu: its negative), and its name with unit.
double study_objective(const std::string& objective, const io::StudyLayout& l);
std::string study_objective_label(const std::string& objective);

}  // namespace ptdsim::report
