#include <dlfcn.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>

#include "loaders.hpp"
#include "ptdsim/core/join.hpp"

// The shipped model and hardware libraries, found by name (docs/inputs.md "Models and hardware by
// name"): `hardware: dgx-h100` is hardware/dgx-h100.yaml of the first library directory that has
// it: $PTDSIM_DATA when set, then the installed data beside the binary holding this code
// (PREFIX/share/ptdsim, `cmake --install`), then the source tree this code was built from.
namespace ptdsim::io::detail {
namespace {

namespace fs = std::filesystem;

const char* folder_of(const std::string& kind) { return kind == "model" ? "models" : "hardware"; }

// The file this code runs from: the shared object that holds it (the Python module) or else the
// executable (every other binary links the libraries statically).
fs::path running_binary() {
  Dl_info info{};
  static const int marker = 0;
  std::error_code ec;
  if (dladdr(&marker, &info) != 0 && info.dli_fname != nullptr) {
    const fs::path so(info.dli_fname);
    if (so.filename().string().find(".so") != std::string::npos) return fs::canonical(so, ec);
  }
  return fs::read_symlink("/proc/self/exe", ec);
}

// PREFIX/share/ptdsim of an installed tree, from the running binary by the install's own layout:
// PREFIX/bin/ptdsim, or the Python module PREFIX/lib/python3.X/dist-packages/ptdsim/_ptdsim*.so
// (PTDSIM_DATA_FROM_BIN, PTDSIM_DATA_FROM_PYTHON: the relative paths CMake computed). Only that
// folder: a build tree that happens to lie under an installed prefix keeps its own source's data.
std::string installed_dir() {
  const fs::path binary = running_binary();
  const bool module = binary.extension() == ".so";
  const std::string relative = module ? PTDSIM_DATA_FROM_PYTHON : PTDSIM_DATA_FROM_BIN;
  if (binary.empty() || relative.empty()) return {};
  const fs::path data = (binary.parent_path() / relative).lexically_normal();
  std::error_code ec;
  return fs::is_directory(data / "models", ec) ? data.string() : std::string();
}

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
  static const std::string installed = installed_dir();
  if (!installed.empty()) dirs.push_back(installed);
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
  msg += " (shipped: " + core::joined(names) + "; a path with '/' or ending in .yaml names any file)";
  fail(at, msg);
}

}  // namespace ptdsim::io::detail

namespace ptdsim::io {

std::vector<std::string> shipped_names(const std::string& kind) { return detail::library_names(kind); }

std::string shipped_file(const std::string& relative) {
  for (const auto& dir : detail::library_dirs()) {
    const std::filesystem::path p = std::filesystem::path(dir) / relative;
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

}  // namespace ptdsim::io
