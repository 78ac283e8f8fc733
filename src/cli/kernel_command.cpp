// `ptdsim kernel HARDWARE.yaml gemm --m M --n N --k K [--precision P] [--fp8-kernel K]` and
// `ptdsim kernel HARDWARE.yaml attention --seq S --heads H [--kv-heads G] [--head-dim D] [--batch B]
// [--causal|--no-causal] [--precision P] [--kernel cudnn|flash2]`: one kernel's predicted time and
// where it came from (a measured row, a model fitted to the hardware's kernel tables, or the scalar
// efficiency).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/api.hpp"
#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/load.hpp"

namespace ptdsim::cli {
namespace {

struct KernelArgs {
  std::string hardware;
  std::string precision = "bf16";
  OutputOptions out;
  long long m = 0, n = 0, k = 0;
  long long seq = 0, heads = 0, kv_heads = 0, head_dim = 128, batch = 1;
  bool causal = true;
  std::string kernel = "cudnn";  // training.attention_kernel's values
  std::string fp8_kernel = "tensorwise";  // core::Fp8Kernel's values, or the tables' fp8 kernel
};

// --precision, refused (exit 2) where the hardware file has no peak rate at it, or where it is fp4:
// core::check's rule for training.precision
core::Precision precision_of(const KernelArgs& a, const core::GpuSpec& g) {
  const core::Precision p = *core::parse<core::Precision>(a.precision);
  if (!core::precision_ok(g, p))
    throw CLI::ValidationError("--precision", core::precision_problem(g, p) + " (" + a.hardware + ")");
  return p;
}

// Said after the source where a time is the launch floor (analytic::launch_floor), not the model's.
constexpr const char* kRaised = "; at least one launch: gpu.kernel_launch_us";

std::string choices(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : " | ") + x;
  return out;
}

void run_gemm(const KernelArgs& a) {
  const core::HardwareSpec hw = io::load_hardware(a.hardware);
  const auto p = precision_of(a, hw.gpu);
  const double m = static_cast<double>(a.m), n = static_cast<double>(a.n), k = static_cast<double>(a.k);
  // nothing for "tensorwise", the kernel the fp8 rows and model time
  const std::optional<core::Fp8Kernel> other = core::parse<core::Fp8Kernel>(a.fp8_kernel);
  if (other && p != core::Precision::fp8)
    throw CLI::ValidationError("--fp8-kernel", a.fp8_kernel + " is an FP8 kernel: it needs --precision fp8");
  if (other) {
    const std::string fallback = analytic::fp8_kernel_fallback(hw.gpu, *other);
    if (!fallback.empty()) print_warnings({a.hardware + ": " + fallback});
  }
  const api::GemmTime t = other ? api::fp8_gemm(hw.gpu, *other, m, n, k) : api::gemm(hw.gpu, p, m, n, k);
  if (a.out.format == "json") {
    emit(a.out, api::gemm_json(t));
    return;
  }
  emit(a.out, fmt::format("gemm {}{} {} x {} x {} on {}: {:.2f} us, {:.1f} TFLOP/s ({}{})\n", a.precision,
                          other ? " (" + a.fp8_kernel + ")" : "", a.m, a.n, a.k, hw.gpu.name, t.time_s * 1e6,
                          t.tflops, core::name(t.source), t.launch_floor ? kRaised : ""));
}

void run_attention(const KernelArgs& a) {
  // grouped-query attention: each key/value head serves heads / kv_heads query heads (core::check's
  // rule for model files)
  if (a.kv_heads > 0 && a.heads % a.kv_heads != 0)
    throw CLI::ValidationError("--kv-heads", fmt::format("{} does not divide --heads {}", a.kv_heads, a.heads));
  const core::HardwareSpec hw = io::load_hardware(a.hardware);
  core::AttentionShape s;
  s.batch = static_cast<double>(a.batch);
  s.heads = static_cast<double>(a.heads);
  s.kv_heads = static_cast<double>(a.kv_heads > 0 ? a.kv_heads : a.heads);
  s.head_dim = static_cast<double>(a.head_dim);
  s.seq_q = s.seq_k = static_cast<double>(a.seq);
  s.causal = a.causal;
  const auto kernel = *core::parse<core::AttentionKernel>(a.kernel);
  const core::Precision p = precision_of(a, hw.gpu);
  const std::string fallback = analytic::attention_fallback(hw.gpu, p, true, kernel);
  if (!fallback.empty()) print_warnings({a.hardware + ": " + fallback});
  const api::AttentionTime t = api::attention(hw.gpu, p, s, kernel);
  const bool raised = t.launch_floor;
  if (a.out.format == "json") {
    emit(a.out, api::attention_json(t));
    return;
  }
  const double f = s.flops();
  emit(a.out, fmt::format("attention {} ({}) seq {}, {} heads ({} kv), head_dim {}, batch {}, {} on {}:\n"
                          "  forward  {:.2f} us, {:.1f} TFLOP/s\n  backward {:.2f} us, {:.1f} TFLOP/s ({}{})\n",
                          a.precision, a.kernel, a.seq, a.heads, s.kv_heads, a.head_dim, a.batch,
                          a.causal ? "causal" : "not causal", hw.gpu.name, t.forward_s * 1e6,
                          t.forward_s > 0 ? f / t.forward_s / 1e12 : 0.0, t.backward_s * 1e6,
                          t.backward_s > 0 ? 2.5 * f / t.backward_s / 1e12 : 0.0, core::name(t.source),
                          raised ? kRaised : ""));
}

void add_precision(CLI::App* cmd, KernelArgs& a) {
  const auto names = core::spellings<core::Precision>();
  cmd->add_option("--precision", a.precision, choices(names) + ": one the hardware file gives a peak rate at; fp4, a peak rate only, is refused")
      ->capture_default_str()
      ->check(CLI::IsMember(names));
}

}  // namespace

void add_kernel(CLI::App& app) {
  auto args = std::make_shared<KernelArgs>();
  auto* cmd = app.add_subcommand("kernel", "one GEMM's or attention core's predicted time on a hardware file's GPU");
  cmd->add_option("hardware", args->hardware, "hardware YAML file")->required();
  cmd->require_subcommand(1);
  add_output_options(cmd, args->out, {"table", "json"});

  auto* gemm = cmd->add_subcommand("gemm", "y[m,n] = x[m,k] W[n,k]^T");
  gemm->add_option("--m", args->m, "rows of x and y (tokens)")->required()->check(kPositiveCount);
  gemm->add_option("--n", args->n, "columns of y (output features)")->required()->check(kPositiveCount);
  gemm->add_option("--k", args->k, "the reduced dimension (input features)")->required()->check(kPositiveCount);
  add_precision(gemm, *args);
  std::vector<std::string> fp8_kernels{"tensorwise"};
  for (const auto& k : core::spellings<core::Fp8Kernel>()) fp8_kernels.push_back(k);
  gemm->add_option("--fp8-kernel", args->fp8_kernel,
                   choices(fp8_kernels) + ": the FP8 kernel (docs/analytic.md \"FP8 GEMM kernels\"); one the file "
                   "does not model times as tensorwise")
      ->capture_default_str()
      ->check(CLI::IsMember(fp8_kernels));
  add_output_options(gemm, args->out, {"table", "json"});
  gemm->callback([args] { run_gemm(*args); });

  auto* att = cmd->add_subcommand("attention", "the attention core (scores, softmax, weighted sum), forward and backward");
  att->add_option("--seq", args->seq, "sequence length")->required()->check(kPositiveCount);
  att->add_option("--heads", args->heads, "query heads")->required()->check(kPositiveCount);
  att->add_option("--kv-heads", args->kv_heads, "key/value heads (default: --heads)")->check(kPositiveCount);
  att->add_option("--head-dim", args->head_dim, "head dimension")->capture_default_str()->check(kPositiveCount);
  att->add_option("--batch", args->batch, "sequences")->capture_default_str()->check(kPositiveCount);
  att->add_flag("--causal,!--no-causal", args->causal, "causal mask (default) or none");
  const auto kernels = core::spellings<core::AttentionKernel>();
  att->add_option("--kernel", args->kernel,
                  choices(kernels) + ": training.attention_kernel, the attention table of gpu.kernels it reads")
      ->capture_default_str()
      ->check(CLI::IsMember(kernels));
  add_precision(att, *args);
  add_output_options(att, args->out, {"table", "json"});
  att->callback([args] { run_attention(*args); });
}

}  // namespace ptdsim::cli
