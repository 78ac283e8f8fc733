#pragma once
#include <new>
#include <string>
#include <vector>

#include "ptdsim/core/scenario.hpp"
#include "ptdsim/io/load.hpp"
#include "yaml_tree.hpp"

// The converters from a checked YAML tree to core value types, shared by the public loaders in
// load_api.cpp, the scenario loader and the dataset loader.
namespace ptdsim::io::detail {

// `where`: the position blamed for the mapping as a whole. `default_name`: when `name` is absent.
core::ModelSpec convert_model(const Node& n, const Mark& where, const std::string& default_name);
core::HardwareSpec convert_hardware(const Node& n, const Mark& where, const std::string& default_name);
// hardware.gpu.kernels (its tables into gpu.kernels, contention and overhead into gpu's scalars);
// reads gpu.sms and gpu.comm_sms, so call it after them.
void convert_kernels(const Entry& e, core::GpuSpec& gpu);
// parallel.sharding (sharding_loader.cpp); `where` blames the mapping as a whole.
core::Sharding convert_sharding(const Node& n, const Mark& where);

// Replaces a scalar `model:` / `hardware:` value (a path, relative to the file that wrote it, or
// the name of a shipped model or hardware file) with the tree of that file.
void resolve_include(Entry& e);

// The shipped libraries (library.cpp). A value is a name when it has no '/' and does not end in
// .yaml or .yml. `kind` is "model" or "hardware"; library_file fails at `at` for an unknown name,
// with a suggestion and the names there are.
bool is_library_name(const std::string& text);
std::vector<std::string> library_dirs();
std::vector<std::string> library_names(const std::string& kind);
std::string library_file(const std::string& kind, const std::string& name, const Mark& at);

// Applies --set overrides to a scenario's root mapping (includes along a path are resolved).
void apply_overrides(Node& root, const std::vector<Override>& overrides);

// Puts `value` at the dotted `key` of `root`, creating the mappings on the way (an included model
// or hardware file along the path is resolved first); the new entry's key is marked `at`. An
// existing non-null value is replaced only when `replace`. Returns whether the value was put.
bool put_path(Node& root, const std::string& key, const NodePtr& value, const Mark& at, bool replace);

// Fills, from the framework named by `training.framework` (core/framework.hpp), every key of its
// row that the scenario (with its overrides applied) leaves unset; each filled key is marked at the
// framework's name, so a problem it causes points there. Returns the filled keys' dotted paths.
// An unknown framework name is an error with the list of names and a suggestion.
std::vector<std::string> apply_framework(Node& root);

// Converts a scenario's root mapping (overrides applied) and runs core::check, reporting every
// cross-field problem at its key's position. `file` is recorded in Scenario::file.
core::Scenario convert_scenario(Node& root, const Mark& where, const std::string& default_name,
                                const std::string& file, Checks checks = Checks::all);

// The whole path from a parsed scenario document: checks it is a mapping, applies the overrides,
// converts and checks.
core::Scenario scenario_from_tree(Node& root, const Mark& where, const std::vector<Override>& overrides,
                                  const std::string& default_name, const std::string& file,
                                  Checks checks = Checks::all);

// Nothing but ConfigError leaves the loaders: anything else (a library's exception, an allocation
// failure on absurd input) becomes one naming the file.
template <class F>
auto guarded(const std::string& file, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const core::ConfigError&) {
    throw;
  } catch (const std::bad_alloc&) {
    // "std::bad_alloc" means nothing to a user; the size limits make it unlikely
    throw core::ConfigError(core::SourceLocation{file, 0, 0}, "cannot load: out of memory");
  } catch (const std::exception& e) {
    throw core::ConfigError(core::SourceLocation{file, 0, 0}, std::string("cannot load: ") + e.what());
  }
}

// "models/gpt3-175b.yaml" -> "gpt3-175b"
std::string stem(const std::string& path);

}  // namespace ptdsim::io::detail
