#pragma once
#include <string>
#include <string_view>

namespace ptdsim::core {

// The items (strings, string views or C strings) with `sep` between them: "a, b, c", the lists that
// messages, comments and tables print.
template <class Range>
std::string joined(const Range& items, std::string_view sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    out += item;
    first = false;
  }
  return out;
}

}  // namespace ptdsim::core
