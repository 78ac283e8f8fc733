#include "ptdsim/core/count.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ptdsim::core {

std::optional<double> parse_count(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  switch (text.back()) {
    case 'k': case 'K': scale = 1e3; break;
    case 'm': case 'M': scale = 1e6; break;
    case 'b': case 'B': case 'g': case 'G': scale = 1e9; break;
    case 't': case 'T': scale = 1e12; break;
    default: break;
  }
  if (scale != 1) text.remove_suffix(1);
  // digits, one point and (without a suffix) an exponent: strtod alone takes "inf", "0x1p3", " 5"
  bool digit = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (c == '.') {
    } else if ((c == 'e' || c == 'E') && scale == 1 && digit && i + 1 < text.size()) {
    } else if ((c == '+' || c == '-') && i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E')) {
    } else {
      return std::nullopt;
    }
  }
  if (!digit) return std::nullopt;
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v) || v < 0) return std::nullopt;
  return v * scale;
}

}  // namespace ptdsim::core
