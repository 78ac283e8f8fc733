#include "ptdsim/core/printable.hpp"

namespace ptdsim::core {

std::string printable(std::string_view text, bool keep_breaks) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool control = u < 0x20 || u == 0x7f;
    if (control && !(keep_breaks && (c == '\n' || c == '\t'))) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ptdsim::core
