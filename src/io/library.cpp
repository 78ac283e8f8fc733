#include <cstdlib>
#include <algorithm>
#include <filesystem>

#include "loaders.hpp"

// The shipped model and hardware libraries, found by name (docs/inputs.md "Models and hardware by
// name"): `hardware: dgx-h100` is hardware/dgx-h100.yaml of the first library directory that has
// it: $PTDSIM_DATA when set, then the source tree this executable was built from.
namespace ptdsim::io::detail {
namespace {

namespace fs = std::filesystem;

const char* folder_of(const std::string& kind) { return kind == "model" ? "models" : "hardware"; }

}  // namespace

bool is_library_name(const std::string& text) {
  if (text.empty() || text.find('/') != std::string::npos) return false;
  for (const char* ext : {".yaml", ".yml"}) {
    const std::string e(ext);
    if (text.size() >= e.size() && text.compare(text.size() - e.size(), e.size(), e) == 0) return false;
  }
  return text != "." && text != "..";
}

std::vector<std::string> library_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("PTDSIM_DATA"); env && *env) dirs.emplace_back(env);
  dirs.emplace_back(PTDSIM_LIBRARY_DIR);
  return dirs;
}

std::vector<std::string> library_names(const std::string& kind) {
  std::vector<std::string> names;
  for (const auto& dir : library_dirs()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(dir) / folder_of(kind), ec)) {
      if (entry.path().extension() != ".yaml") continue;
      const std::string name = entry.path().stem().string();
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string library_file(const std::string& kind, const std::string& name, const Mark& at) {
  for (const auto& dir : library_dirs()) {
    const fs::path p = fs::path(dir) / folder_of(kind) / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  const auto names = library_names(kind);
  std::string msg = "no shipped " + kind + " named '" + name + "'";
  const std::string best = core::closest_match(name, names);
  if (!best.empty()) msg += "; did you mean '" + best + "'?";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  msg += " (shipped: " + list + "; a path with '/' or ending in .yaml names any file)";
  fail(at, msg);
}

}  // namespace ptdsim::io::detail
