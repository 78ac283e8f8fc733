#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/io/load.hpp"
#include "schema.hpp"

namespace ptdsim::io {
namespace {

using detail::Entry;
using detail::Fields;
using detail::Node;

// "file:line:col: message; ..." : the problems on one line, for tables and JSON.
std::string one_line(const std::vector<core::Diagnostic>& problems) {
  std::string out;
  for (const auto& d : problems) {
    if (!out.empty()) out += "; ";
    out += d.where.file;
    if (d.where.line > 0) out += ":" + std::to_string(d.where.line) + ":" + std::to_string(d.where.column);
    out += ": " + d.message;
  }
  return out;
}

// The record's scenario, or (when it cannot be loaded or fails the cross-field checks) nothing,
// with the reason kept in the record: one bad scenario does not stop the others being validated.
void load_scenario_of(Record& r, const Fields& f, Node& item, const std::string& file) {
  f.require("scenario");
  Entry& e = *item.find("scenario");
  try {
    if (e.value->kind == Node::Kind::scalar) {
      detail::resolve_include(e);
      r.scenario = detail::scenario_from_tree(*e.value, *e.value->document, {}, r.name,
                                              e.value->mark.src->name);
    } else {
      r.scenario = detail::scenario_from_tree(*e.value, e.key_mark, {}, r.name, file);
    }
  } catch (const core::ConfigError& err) {
    r.problems = err.diagnostics();
    r.not_modelled = one_line(r.problems);
  }
}

Record convert_record(const detail::NodePtr& item, const std::string& file) {
  Fields f(*item, item->mark, "", "record", detail::record_keys());
  Record r;
  r.name = f.required_string("name");
  r.where = detail::diagnostic(f.get("name")->value->mark, "");
  r.source = f.required_string("source");
  r.flops_convention = f.choice("flops_convention", {"megatron96", "megatron72", "megatron", "megatron-2024", "model", "unstated"})
                           .value_or("unstated");
  if (r.flops_convention == "unstated") r.flops_convention.clear();
  r.split = f.choice("split", {"fit", "holdout"}).value_or("holdout");
  r.notes = f.string("notes").value_or("");
  r.not_modelled = f.string("not_modelled").value_or("");
  // Declared not modelled: no scenario and no measurement required. A scenario that fails to load
  // makes a record not modelled too, but the record must still be well formed.
  const bool declared = !r.not_modelled.empty();

  if (!declared) {
    load_scenario_of(r, f, *item, file);
  } else {
    // a scenario that is not modelled may be partial and is not read at all
    r.problems.push_back(detail::diagnostic(f.get("not_modelled")->value->mark,
                                            "record '" + r.name + "' is not modelled: " + r.not_modelled));
  }

  const Entry* me = f.get("measured");
  if (!me && !declared) f.require("measured");
  if (me) {
    Fields m(*me->value, me->key_mark, "measured", "measured", detail::measured_keys());
    r.measured.step_s = m.number("step_s");
    r.measured.tflops_per_gpu = m.number("tflops_per_gpu");
    if (auto gib = m.number("peak_memory_gib")) r.measured.peak_memory_bytes = *gib * core::kGiB;
    if (auto gib = m.number("peak_reserved_gib")) {
      if (r.measured.peak_memory_bytes)
        detail::fail(me->key_mark, "measured gives peak_memory_gib and peak_reserved_gib: give one (the source's)");
      r.measured.peak_reserved_bytes = *gib * core::kGiB;
    }
    r.measured.tokens_per_s = m.number("tokens_per_s");
    const auto& x = r.measured;
    if (!declared && !x.step_s && !x.tflops_per_gpu && !x.peak_memory_bytes && !x.peak_reserved_bytes &&
        !x.tokens_per_s)
      detail::fail(me->key_mark, "measured must give at least one of step_s, tflops_per_gpu, peak_memory_gib, "
                                 "peak_reserved_gib, tokens_per_s");
  }
  return r;
}

std::vector<Record> convert_dataset(Node& root, const std::string& file) {
  if (root.kind != Node::Kind::list)
    detail::fail(root.kind == Node::Kind::null ? *root.document : root.mark,
                 "a dataset must be a list of records, got " + detail::describe(root));
  if (root.items.empty()) detail::fail(root.mark, "the dataset has no records");
  std::vector<Record> out;
  std::vector<detail::Mark> name_marks;
  for (const auto& item : root.items) {
    Record r = convert_record(item, file);
    const detail::Mark at = item->find("name")->value->mark;
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].name == r.name)
        detail::fail(at, "duplicate record name '" + r.name + "' (first at line " +
                             std::to_string(name_marks[j].line) + ")");
    }
    name_marks.push_back(at);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

void require_all_modelled(const std::vector<Record>& records) {
  for (const auto& r : records)
    if (!r.scenario) throw core::ConfigError(r.problems);
}

std::vector<Record> load_dataset(const std::string& path) {
  return detail::guarded(path, [&] {
    auto root = detail::parse_file(path, detail::Mark{});
    return convert_dataset(*root, path);
  });
}

std::vector<Record> load_dataset_from_string(const std::string& text, const std::string& name,
                                             const std::string& base_dir) {
  return detail::guarded(name, [&] {
    auto root = detail::parse_yaml(text, detail::make_source(name, base_dir, text));
    return convert_dataset(*root, name);
  });
}

}  // namespace ptdsim::io
