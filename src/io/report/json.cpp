#include <nlohmann/json.hpp>
#include <type_traits>

#include "fields.hpp"
#include "ptdsim/io/report.hpp"

namespace ptdsim::io {

namespace {

// Sets `path` ("a.b.c") under `root`, creating the objects on the way.
void put(nlohmann::ordered_json& root, const std::string& path, const report::Value& v) {
  nlohmann::ordered_json* node = &root;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
    node = &(*node)[path.substr(start, dot - start)];
  std::visit(
      [&](const auto& x) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, report::Absent>) (*node)[path.substr(start)] = x;
      },
      v);
}

nlohmann::ordered_json operators(const std::vector<core::OperatorTime>& ops) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& o : ops) {
    nlohmann::ordered_json row;
    report::visit_operator(o, [&](const std::string& k, const report::Value& v) { put(row, k, v); });
    list.push_back(std::move(row));
  }
  return list;
}

}  // namespace

std::string report_json(const core::Report& r, int indent) {
  nlohmann::ordered_json j;  // ordered: keys come out in interface.md's order
  // a value left out drops its key; an object that ends up empty (to_train without tokens) goes too
  report::visit_scalars(r, [&](const std::string& path, const report::Value& v) {
    if (!std::holds_alternative<report::Absent>(v)) put(j, path, v);
  });
  // the keys training.framework filled because the scenario left them unset (a list: JSON only)
  j["training"]["resolved_from_framework"] = r.scenario.training.from_framework;
  // where the compute goes: one layer's operators (and an MoE layer's), the ends of the model
  if (!r.compute.layer.empty()) {
    j["compute"]["layer"] = operators(r.compute.layer);
    if (!r.compute.moe_layer.empty()) j["compute"]["moe_layer"] = operators(r.compute.moe_layer);
    j["compute"]["other"] = operators(r.compute.other);
  }
  // the critical path's parts with their stage, in the table's order (they add up to time.step_s)
  {
    auto& parts = j["time"]["critical_path_parts"] = nlohmann::ordered_json::array();
    for (const auto& p : r.critical_path) {
      nlohmann::ordered_json row;
      row["cause"] = core::path_key(core::PathPart{p.cause, -1, 0});
      if (p.stage >= 0) row["stage"] = p.stage;
      row["seconds"] = p.seconds;
      row["what"] = core::path_words(p);
      parts.push_back(std::move(row));
    }
  }
  auto& stages = j["memory"]["by_stage"] = nlohmann::ordered_json::array();
  for (const auto& m : r.stages) {
    nlohmann::ordered_json row;
    report::visit_stage(m, [&](const std::string& k, const report::Value& v) {
      std::visit(
        [&](const auto& x) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, report::Absent>) row[k] = x;
        },
        v);
    });
    stages.push_back(std::move(row));
  }
  return j.dump(indent) + "\n";
}

}  // namespace ptdsim::io
