#include "ptdsim/calibrate/measured_tables.hpp"

#include <fmt/format.h>

#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate {
namespace {

// Six significant digits, as the measured tables print them (3.98688e-05, 646.365).
std::string g(double v) { return fmt::format("{:g}", v); }

// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string gemm_csv(const std::vector<GemmRow>& rows) {
  std::string out = "precision,hidden,ffn,heads,kv_heads,tp,op,m,n,k,time_s,tflops,gpu\n";
  for (const auto& r : rows) {
    const auto& s = r.shape;
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", core::name(r.precision), s.hidden, s.ffn, s.heads,
                       s.kv_heads, s.tp, s.op, s.m, s.n, s.k, g(r.time_s), g(flops / r.time_s / 1e12), field(r.gpu));
  }
  return out;
}

std::string contention_csv(const std::vector<ContentionRow>& rows) {
  std::string out =
      "m,n,k,blocks,gemm_alone_s,gemm_with_copy_s,slowdown,copy_alone_GBps,copy_with_gemm_GBps,gpu\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", r.m, r.n, r.k, r.blocks, g(r.gemm_alone_s),
                       g(r.gemm_with_copy_s), g(r.gemm_with_copy_s / r.gemm_alone_s), g(r.copy_alone_Bps / 1e9),
                       g(r.copy_with_gemm_Bps / 1e9), field(r.gpu));
  }
  return out;
}

}  // namespace ptdsim::calibrate
