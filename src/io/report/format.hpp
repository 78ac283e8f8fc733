#pragma once
#include <fmt/format.h>

#include <string>

// Numbers as people read them, shared by the table and the HTML report.
namespace ptdsim::io::report {

// "0", "12.5 us", "3.4 ms", "1.234 s"
inline std::string seconds(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

// decimal units, as bandwidths are quoted: "1.50 GB"
inline std::string bytes(double b) {
  if (b >= 1e12) return fmt::format("{:.2f} TB", b / 1e12);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b > 0) return fmt::format("{:.0f} B", b);
  return "0";
}

}  // namespace ptdsim::io::report
