// The import-nccl-tests report and its warnings (include/ptdsim/calibrate/fit_report.hpp).
#include "ptdsim/calibrate/fit_report.hpp"

#include <fmt/format.h>

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/core/gpu_name.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate {
namespace {

std::string size_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:g} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:g} KiB", b / 1024.0);
  return fmt::format("{:g} B", b);
}

std::string time_text(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

// A fit this many times slower or faster than the base file's link model describes other links
// than the file does (a 2-GPU PCIe log on an NVLink base turned a 7 s step into 95 s).
constexpr double kLinkModelRatio = 3;

}  // namespace

std::string fit_report(const std::vector<CollectiveFitResult>& fits) {
  std::string out;
  for (const auto& f : fits) {
    out += fmt::format("{} {}, {} ranks: {} piece{}, worst error {:.1f}%\n", core::name(f.op),
                       core::name(f.scope), f.ranks, f.pieces.size(), f.pieces.size() == 1 ? "" : "s",
                       100 * f.max_abs_rel_error);
    out += fmt::format("  measured on {}, {}\n", f.gpu.empty() ? "an unnamed GPU" : f.gpu,
                       f.ranks_per_node > 0 ? fmt::format("{} per node", f.ranks_per_node)
                                            : std::string("GPUs per node unknown (--ranks-per-node)"));
    if (f.algo >= 0 || f.proto >= 0)
      out += fmt::format("  forced to {}{}{} (used only where NCCL's model picks it)\n",
                         f.algo >= 0 ? "algorithm " + core::nccl_algo_names()[static_cast<std::size_t>(f.algo)] : "",
                         f.algo >= 0 && f.proto >= 0 ? ", " : "",
                         f.proto >= 0 ? "protocol " + core::nccl_proto_names()[static_cast<std::size_t>(f.proto)] : "");
    for (const auto& file : f.files) out += fmt::format("  from {}\n", file);
    out += fmt::format("  {:>5}  {:>21}  {:>10}  {:>10}  {:>9}\n", "piece", "fitted on sizes", "alpha_us",
                       "busbw_gbs", "max error");
    for (std::size_t i = 0; i < f.pieces.size(); ++i) {
      const auto& p = f.pieces[i];
      out += fmt::format("  {:>5}  {:>21}  {:>10.2f}  {:>10.2f}  {:>8.1f}%\n", i + 1,
                         size_text(p.first_bytes) + " .. " + size_text(p.last_bytes), p.alpha_s * 1e6,
                         p.busbw_Bps / 1e9, 100 * p.max_abs_rel_error);
    }
    out += fmt::format("  {:>10}  {:>12}  {:>12}  {:>7}  {:>5}\n", "size", "measured_us", "fitted_us", "error",
                       "piece");
    for (const auto& p : f.points) {
      out += fmt::format("  {:>10}  {:>12.2f}  {:>12.2f}  {:>+6.1f}%  {:>5}\n", size_text(p.size_bytes),
                         p.measured_s * 1e6, p.fitted_s * 1e6, 100 * p.rel_error,
                         p.dropped ? std::string("spike") : std::to_string(p.piece + 1));
    }
    for (const auto& n : f.notes) out += "  note: " + n + "\n";
    out += "\n";
  }
  return out;
}

// What is wrong with applying the fits to the base hardware: another GPU, or links far from the
// ones its node/network sections describe (compared at the largest measured size).
std::vector<std::string> base_warnings(const std::vector<CollectiveFitResult>& fits,
                                       core::HardwareSpec base, const std::string& base_name) {
  std::vector<std::string> out;
  base.collectives.clear();  // the file's links alone (NCCL's model on them)
  for (const auto& f : fits) {
    const std::string what = fmt::format("{} {}, {} ranks", core::name(f.op), core::name(f.scope), f.ranks);
    if (!f.gpu.empty() && !core::same_gpu_part(f.gpu, base.gpu.name)) {
      out.push_back(fmt::format("ptdsim: warning: {}: measured on {}, but {}'s gpu.name is {}: the rows "
                                "describe another part",
                                what, f.gpu, base_name, base.gpu.name));
    }
    analytic::Group g;
    g.ranks = f.ranks;
    g.scope = f.scope;
    g.ranks_per_node = f.ranks_per_node > 0 ? f.ranks_per_node
                                            : f.scope == core::Scope::intra ? f.ranks : base.gpus_per_node;
    // a run forced to an algorithm (protocol) is compared with that algorithm on the file's links
    base.nccl.algo = f.algo;
    base.nccl.proto = f.proto;
    const double size = f.points.back().size_bytes;
    const double fitted = fitted_time(f, size), link = analytic::collective_time(base, f.op, size, g);
    if (!(link > 0) || !(fitted > 0)) continue;
    const double ratio = fitted / link;
    if (ratio > kLinkModelRatio || ratio < 1 / kLinkModelRatio) {
      out.push_back(fmt::format(
          "ptdsim: warning: {}: at {} the fit takes {}, {:.1f}x {} than the {} of {}'s model (NCCL's pick on its links): "
          "the log was measured on {} links than the file describes{}; evaluate will use the calibrated rows",
          what, size_text(size), time_text(fitted), ratio > 1 ? ratio : 1 / ratio, ratio > 1 ? "slower" : "faster",
          time_text(link), base_name, ratio > 1 ? "slower" : "faster",
          ratio > 1 ? " (PCIe instead of NVLink, a slower network, or another GPU)" : ""));
    }
  }
  return out;
}

}  // namespace ptdsim::calibrate
