#include <nlohmann/json.hpp>
#include <type_traits>

#include "report_fields.hpp"
#include "ptdsim/analytic/nccl_picks.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/report/evaluate.hpp"

namespace ptdsim::report {

namespace {

// One declared value to the visitor; an absent one drops its key (an object that ends up empty,
// to_train without tokens, never appears).
void emit(JsonVisitor& v, std::string_view path, const report::Value& value) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) v.string(path, x);
        else if constexpr (std::is_same_v<T, double>) v.number(path, x);
        else if constexpr (std::is_same_v<T, long long>) v.integer(path, x);
        else if constexpr (std::is_same_v<T, bool>) v.boolean(path, x);
        else if constexpr (std::is_same_v<T, report::List>) v.strings(path, x);
      },
      value);
}

void operators(JsonVisitor& v, std::string_view path, const std::vector<core::OperatorTime>& ops) {
  v.begin_rows(path);
  for (const auto& o : ops) {
    v.begin_row();
    visit_operator(o, [&](std::string_view k, const report::Value& x) { emit(v, k, x); });
  }
  v.end_rows();
}

// The walk as an nlohmann tree: ordered, so keys come out in interface.md's order.
class TreeWriter final : public JsonVisitor {
 public:
  nlohmann::ordered_json root;
  void boolean(std::string_view path, bool x) override { at(path) = x; }
  void integer(std::string_view path, long long x) override { at(path) = x; }
  void number(std::string_view path, double x) override { at(path) = x; }
  void string(std::string_view path, const std::string& x) override { at(path) = x; }
  void strings(std::string_view path, const std::vector<std::string>& x) override { at(path) = x; }
  void begin_rows(std::string_view path) override {
    base_ = &root;
    rows_ = &(at(path) = nlohmann::ordered_json::array());
  }
  void begin_row() override { base_ = &rows_->emplace_back(nlohmann::ordered_json::object()); }
  void end_rows() override {
    rows_ = nullptr;
    base_ = &root;
  }

 private:
  // The member at `path` ("a.b.c") under the current object, creating the objects on the way.
  nlohmann::ordered_json& at(std::string_view path) {
    nlohmann::ordered_json* node = base_;
    std::size_t start = 0;
    for (std::size_t dot; (dot = path.find('.', start)) != std::string_view::npos; start = dot + 1)
      node = &(*node)[std::string(path.substr(start, dot - start))];
    return (*node)[std::string(path.substr(start))];
  }
  nlohmann::ordered_json* base_ = &root;
  nlohmann::ordered_json* rows_ = nullptr;
};

}  // namespace

void report_json_walk(const core::Report& r, JsonVisitor& v) {
  visit_scalars(r, [&](std::string_view path, const report::Value& x) { emit(v, path, x); });
  // the keys training.framework filled because the scenario left them unset (a list: JSON only)
  v.strings("training.resolved_from_framework", r.scenario.training.from_framework);
  // where the compute goes: one layer's operators (and an MoE layer's), the ends of the model
  if (!r.compute.layer.empty()) {
    operators(v, "compute.layer", r.compute.layer);
    if (!r.compute.moe_layer.empty()) operators(v, "compute.moe_layer", r.compute.moe_layer);
    operators(v, "compute.other", r.compute.other);
  }
  // the critical path's parts with their stage, in the table's order (they add up to time.step_s)
  v.begin_rows("time.critical_path_parts");
  for (const auto& p : r.critical_path) {
    v.begin_row();
    v.string("cause", core::path_key(core::PathPart{p.cause, -1, 0}));
    if (p.stage >= 0) v.integer("stage", p.stage);
    v.number("seconds", p.seconds);
    v.string("what", core::path_words(p));
  }
  v.end_rows();
  // what runs each kind's collectives: NCCL's algorithm and protocol, calibrated, or p2p
  v.begin_rows("communication.collectives");
  for (const auto& k : analytic::collective_picks(r.scenario)) {
    v.begin_row();
    v.string("kind", k.kind);
    v.string("op", std::string(core::name(k.op)));
    v.integer("ranks", k.ranks);
    v.number("bytes", k.bytes);
    v.string("algorithm", k.algorithm);
    if (!k.protocol.empty()) v.string("protocol", k.protocol);
  }
  v.end_rows();
  v.begin_rows("memory.by_stage");
  for (const auto& m : r.stages) {
    v.begin_row();
    visit_stage(m, [&](std::string_view k, const report::Value& x) { emit(v, k, x); });
  }
  v.end_rows();
}

std::string report_json(const core::Report& r, int indent) {
  TreeWriter w;
  report_json_walk(r, w);
  return w.root.dump(indent) + "\n";
}

}  // namespace ptdsim::report
