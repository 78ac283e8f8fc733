#include "ptdsim/core/gpu_name.hpp"

#include <cctype>
#include <vector>

namespace ptdsim::core {
namespace {

// A model number: at most two letters, two to four digits, at most one letter (A100, GB200, L40S,
// V100, 2080, MI300X). Excludes form factors and memory (SXM4, 80GB, HBM3).
bool is_model_number(const std::string& t) {
  std::size_t i = 0;
  while (i < t.size() && std::isalpha(static_cast<unsigned char>(t[i]))) ++i;
  if (i > 2) return false;
  const std::size_t digits_from = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  const std::size_t digits = i - digits_from;
  if (digits < 2 || digits > 4) return false;
  if (i < t.size() && std::isalpha(static_cast<unsigned char>(t[i]))) ++i;
  return i == t.size();
}

}  // namespace

std::string gpu_part(std::string_view name) {
  std::vector<std::string> tokens(1);
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      tokens.back().push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    } else if (!tokens.back().empty()) {
      tokens.emplace_back();
    }
  }
  std::string model;
  bool pcie = false, ti = false;
  for (const auto& t : tokens) {
    if (model.empty() && is_model_number(t)) model = t;
    if (t == "PCIE") pcie = true;
    if (t == "TI") ti = true;
  }
  if (model.empty()) {
    for (const auto& t : tokens) {
      if (t.empty()) continue;
      if (!model.empty()) model += " ";
      model += t;
    }
    return model;
  }
  return model + (pcie ? " PCIE" : "") + (ti ? " TI" : "");
}

bool same_gpu_part(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return false;
  return gpu_part(a) == gpu_part(b);
}

}  // namespace ptdsim::core
