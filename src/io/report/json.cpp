#include <nlohmann/json.hpp>

#include "fields.hpp"
#include "ptdsim/io/report.hpp"

namespace ptdsim::io {

std::string report_json(const core::Report& r, int indent) {
  nlohmann::ordered_json j;  // ordered: keys come out in interface.md's order
  auto put_ordered = [&](const std::string& path, const report::Value& v) {
    nlohmann::ordered_json* node = &j;
    std::size_t start = 0;
    for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
      node = &(*node)[path.substr(start, dot - start)];
    std::visit([&](const auto& x) { (*node)[path.substr(start)] = x; }, v);
  };
  report::visit_scalars(r, put_ordered);
  // the keys training.framework filled because the scenario left them unset (a list: JSON only)
  j["training"]["resolved_from_framework"] = r.scenario.training.from_framework;
  auto& stages = j["memory"]["by_stage"] = nlohmann::ordered_json::array();
  for (const auto& m : r.stages) {
    nlohmann::ordered_json row;
    report::visit_stage(m, [&](const std::string& k, const report::Value& v) {
      std::visit([&](const auto& x) { row[k] = x; }, v);
    });
    stages.push_back(std::move(row));
  }
  return j.dump(indent) + "\n";
}

}  // namespace ptdsim::io
