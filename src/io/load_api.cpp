#include <utility>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "schema.hpp"
#include "ptdsim/io/load.hpp"

namespace ptdsim::io {
namespace {

detail::NodePtr parse_named(const std::string& text, const std::string& name, const std::string& dir) {
  return detail::parse_yaml(text, detail::make_source(name, dir, text));
}

}  // namespace

ValidRange valid_range(const std::string& key) {
  const detail::Bound& b = detail::bound_of(key);
  return ValidRange{b.min, b.max};
}

core::Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
  return load_scenario(path, overrides, Checks::all);
}

core::Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides, Checks checks) {
  return detail::guarded(path, [&] {
    auto root = detail::parse_file(path, detail::Mark{});
    return detail::scenario_from_tree(*root, *root->document, overrides, detail::stem(path), path, checks);
  });
}

core::Scenario load_scenario_from_string(const std::string& text, const std::string& name,
                                         const std::vector<Override>& overrides,
                                         const std::string& base_dir) {
  return detail::guarded(name, [&] {
    auto root = parse_named(text, name, base_dir);
    return detail::scenario_from_tree(*root, *root->document, overrides, detail::stem(name), name);
  });
}

// Every problem of the file in one error (detail::Collector).
template <class F>
auto collecting(F&& f) -> decltype(f()) {
  detail::Collector collector;
  return collector.run(std::forward<F>(f));
}

core::ModelSpec load_model(const std::string& path) {
  return detail::guarded(path, [&] {
    auto root = detail::parse_file(path, detail::Mark{});
    return collecting([&] { return detail::convert_model(*root, *root->document, detail::stem(path)); });
  });
}

core::ModelSpec load_model_from_string(const std::string& text, const std::string& name) {
  return detail::guarded(name, [&] {
    auto root = parse_named(text, name, ".");
    return collecting([&] { return detail::convert_model(*root, *root->document, detail::stem(name)); });
  });
}

core::HardwareSpec load_hardware(const std::string& path) {
  return detail::guarded(path, [&] {
    auto root = detail::parse_file(path, detail::Mark{});
    return collecting([&] { return detail::convert_hardware(*root, *root->document, detail::stem(path)); });
  });
}

core::HardwareSpec load_hardware_from_string(const std::string& text, const std::string& name) {
  return detail::guarded(name, [&] {
    auto root = parse_named(text, name, ".");
    return collecting([&] { return detail::convert_hardware(*root, *root->document, detail::stem(name)); });
  });
}

}  // namespace ptdsim::io
