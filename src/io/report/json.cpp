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
    std::visit(
        [&](const auto& x) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, report::Absent>) (*node)[path.substr(start)] = x;
        },
        v);
  };
  // a value left out drops its key; an object that ends up empty (to_train without tokens) goes too
  report::visit_scalars(r, [&](const std::string& path, const report::Value& v) {
    if (!std::holds_alternative<report::Absent>(v)) put_ordered(path, v);
  });
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
