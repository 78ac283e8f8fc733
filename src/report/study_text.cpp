// The study's table, CSV and JSON (docs/study.md "Outputs").
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ptdsim/report/study.hpp"

namespace ptdsim::report {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The columns that say which point a row is: the base when there are several, then each knob.
std::vector<std::string> point_columns(const io::StudySpec& spec) {
  std::vector<std::string> out;
  if (spec.bases.size() > 1) out.push_back("base");
  for (const auto& k : spec.vary) out.push_back(k.key);
  return out;
}
std::vector<std::string> point_values(const io::StudySpec& spec, std::uint64_t point) {
  const auto p = spec.point(point);
  std::vector<std::string> out;
  if (spec.bases.size() > 1) out.push_back(spec.base_names[p.base]);
  for (std::size_t k = 0; k < spec.vary.size(); ++k) out.push_back(spec.vary[k].values[p.value[k]].value);
  return out;
}

}  // namespace

double study_objective(const std::string& objective, const io::StudyLayout& l) {
  if (objective == "memory") return l.peak_gib;
  if (objective == "mfu") return -l.mfu;
  if (objective == "days") return l.days;
  if (objective == "gpu_hours") return l.gpu_hours;
  if (objective == "energy") return l.energy_mwh;
  if (objective == "cost") return l.cost;
  return l.step_s;
}

std::string study_objective_label(const std::string& objective) {
  if (objective == "memory") return "peak memory (GiB)";
  if (objective == "mfu") return "MFU (negated: smaller is better)";
  if (objective == "days") return "days to train";
  if (objective == "gpu_hours") return "GPU-hours to train";
  if (objective == "energy") return "energy to train (MWh)";
  if (objective == "cost") return "cost to train";
  return "step time (s)";
}

std::string study_csv(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records) {
  std::string out = "point";
  for (const auto& c : point_columns(spec)) {
    out += ',';
    out += csv_field(c);
  }
  out += ",rank,tp,pp,dp,cp,ep,vpp,micro_batch,zero,recompute,sequence_parallel,schedule,step_s,mfu,tokens_per_s,"
         "days,gpu_hours,energy_mwh,cost,peak_gib,free_gib,bounded_by,failed\n";
  for (const auto& r : records) {
    std::string head = std::to_string(r.point);
    for (const auto& v : point_values(spec, r.point)) {
      head += ',';
      head += csv_field(v);
    }
    if (r.layouts.empty()) {
      out += head + ",,,,,,,,,,,,,,,,,,,,,,," + csv_field(r.failed) + "\n";
      continue;
    }
    for (std::size_t i = 0; i < r.layouts.size(); ++i) {
      const auto& l = r.layouts[i];
      out += head + fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.4f},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.3f},{:.3f},{},\n",
                                i + 1, l.tp, l.pp, l.dp, l.cp, l.ep, l.vpp, l.micro_batch, l.zero, l.recompute,
                                l.sequence_parallel ? "on" : "off", l.schedule, l.step_s, l.mfu, l.tokens_per_s, l.days,
                                l.gpu_hours, l.energy_mwh, l.cost, l.peak_gib, l.capacity_gib - l.peak_gib,
                                csv_field(l.bounded_by));
    }
  }
  return out;
}

std::string study_json(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records) {
  nlohmann::ordered_json j;
  j["study"] = spec.file;
  j["hash"] = spec.hash;
  j["objective"] = spec.objective;
  j["top"] = spec.top;
  j["keys"] = point_columns(spec);
  auto points = nlohmann::ordered_json::array();
  const auto columns = point_columns(spec);
  for (const auto& r : records) {
    nlohmann::ordered_json p;
    p["point"] = r.point;
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    const auto v = point_values(spec, r.point);
    for (std::size_t i = 0; i < columns.size(); ++i) values[columns[i]] = v[i];
    p["values"] = std::move(values);
    if (!r.failed.empty()) p["failed"] = r.failed;
    auto layouts = nlohmann::ordered_json::array();
    for (const auto& l : r.layouts) {
      nlohmann::ordered_json x;
      visit_layout(l, [&](const char* key, const auto& value) { x[key] = value; });
      layouts.push_back(std::move(x));
    }
    p["layouts"] = std::move(layouts);
    points.push_back(std::move(p));
  }
  j["points"] = std::move(points);
  return j.dump(2) + "\n";
}

std::string study_table(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records) {
  const auto columns = point_columns(spec);
  std::vector<std::size_t> width;
  for (const auto& c : columns) width.push_back(c.size());
  for (const auto& r : records) {
    const auto v = point_values(spec, r.point);
    for (std::size_t i = 0; i < v.size(); ++i) width[i] = std::max(width[i], v[i].size());
  }
  std::string out = fmt::format("study: {} ({} points, objective {}, best of each point's sweep)\n\n", spec.file,
                                spec.points(), spec.objective);
  std::string head = fmt::format("{:>5}", "point");
  for (std::size_t i = 0; i < columns.size(); ++i) head += fmt::format("  {:>{}}", columns[i], width[i]);
  out += head + "   tp  pp   dp  cp vpp  mb zero   step_s    MFU      days     GPU-h      cost peak_GiB  bounded by\n";
  std::uint64_t failed = 0;
  for (const auto& r : records) {
    std::string line = fmt::format("{:>5}", r.point);
    const auto v = point_values(spec, r.point);
    for (std::size_t i = 0; i < v.size(); ++i) line += fmt::format("  {:>{}}", v[i], width[i]);
    if (r.layouts.empty()) {
      ++failed;
      out += line + "   " + r.failed + "\n";
      continue;
    }
    const auto& l = r.layouts.front();
    // days, GPU-hours and cost need a token budget (and a price): "-" without
    auto known = [](double v) { return v > 0 ? fmt::format("{:.4g}", v) : std::string("-"); };
    out += line + fmt::format(" {:>4}{:>4}{:>5}{:>4}{:>4}{:>4}{:>5}{:>9.3f}{:>6.1f}% {:>9} {:>9} {:>9}{:>9.1f}  {}\n",
                              l.tp, l.pp, l.dp, l.cp, l.vpp, l.micro_batch, l.zero, l.step_s, 100 * l.mfu, known(l.days),
                              known(l.gpu_hours), known(l.cost), l.peak_gib, l.bounded_by);
  }
  out += fmt::format("\n{} points, {} with a layout, {} without\n", records.size(), records.size() - failed, failed);
  return out;
}

}  // namespace ptdsim::report
