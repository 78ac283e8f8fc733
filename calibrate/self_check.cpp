// ptdsim-calibrate --self-check: what the measurements rest on, checked on this machine's GPUs
// before any number is trusted. A check that cannot fail is a defect, so each one is also shown to
// fail when it should: a corrupted collective result must count exactly one wrong element.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench.hpp"
#include "kernels.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate_tool {
namespace {

int report(const World& w, bool ok, const std::string& what) {
  if (w.lead) std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  return ok ? 0 : 1;
}

// The GEMM against a host reference in double from the same (rounded) inputs: a wrong layout or
// transpose misses by O(1); rounding of the bf16 output stays below 2^-8 of the terms' magnitude.
int check_gemm(const World& w, int device, core::Precision p) {
  Timing t;
  t.warmup = 1;
  t.iters = 1;
  t.repeats = 1;
  const long long m = 96, n = 160, k = 256;  // unequal, multiples of 16 (FP8's alignment)
  Gemm g(device, p, m, n, k, 4, t, 7);
  const std::string what = fmt::format("gemm {} {}x{}x{} against a host reference", core::name(p), m, n, k);
  if (!g.usable()) {
    if (w.lead) std::printf("SKIP %s: %s\n", what.c_str(), g.why_not().c_str());
    return 0;
  }
  g.run(g.stream());
  std::vector<float> a, b, d;
  g.download(a, b, d);
  // D[j + i n] = sum_l A[l + j k] B[l + i k]: A stored k x n (W[n,k] row-major), B stored k x m
  double worst = 0;
  for (long long i = 0; i < m; ++i) {
    for (long long j = 0; j < n; ++j) {
      double ref = 0, scale = 0;
      for (long long l = 0; l < k; ++l) {
        const double x = a[static_cast<std::size_t>(l + j * k)], y = b[static_cast<std::size_t>(l + i * k)];
        ref += x * y;
        scale += std::abs(x * y);
      }
      worst = std::max(worst, std::abs(d[static_cast<std::size_t>(j + i * n)] - ref) / std::max(scale, 1e-30));
    }
  }
  // inputs: mean 0, variance 1 (random normal, not one repeated byte)
  double sum = 0, sq = 0;
  for (float x : a) {
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  const double mean = sum / static_cast<double>(a.size()), var = sq / static_cast<double>(a.size()) - mean * mean;
  int failures = report(w, worst < 1e-2, fmt::format("{}: worst error {:.2e} of the terms' magnitude", what, worst));
  failures += report(w, std::abs(mean) < 0.05 && std::abs(var - 1) < 0.1,
                     fmt::format("gemm {} inputs random normal: mean {:.3f}, variance {:.3f} over {} values",
                                 core::name(p), mean, var, a.size()));
  return failures;
}

// The copy kernel on a few blocks copies every byte (an odd number of passes ends in the target).
int check_copy(const World& w, int device) {
  PTDSIM_CUDA(cudaSetDevice(device));
  const std::size_t n = std::size_t(1) << 22;  // floats
  float *a = nullptr, *b = nullptr;
  cudaStream_t s = nullptr;
  PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&a), n * sizeof(float)));
  PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&b), n * sizeof(float)));
  PTDSIM_CUDA(cudaStreamCreate(&s));
  PTDSIM_CUDA(launch_fill_values(a, n, 3, 0, s));
  PTDSIM_CUDA(launch_fill_constant(b, n, calibrate::check::kUnwritten, s));
  PTDSIM_CUDA(launch_copy(a, b, n * sizeof(float), 4, 3, s));
  std::vector<float> host(n);
  PTDSIM_CUDA(cudaMemcpyAsync(host.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  PTDSIM_CUDA(cudaStreamSynchronize(s));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += host[i] != calibrate::check::value(3, i) ? 1 : 0;
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
  return report(w, wrong == 0, fmt::format("copy kernel on 4 blocks: {} of {} elements wrong", wrong, n));
}

}  // namespace

int self_check(World& w, const std::vector<core::Collective>& ops, const std::vector<core::Precision>& precisions) {
  int failures = 0;
  {  // on one GPU too: NCCL runs every collective on one rank, and the check must hold there as well
    Shape all{w.nodes, w.per_node};
    if (all.ranks() < 2) all = {1, w.per_node};
    Group g = make_group(w, all);
    for (core::Collective op : ops) {
      // an odd element count per rank, and a multi-MiB one
      for (double per_rank : {4.0 * 1031, 4.0 * 262147}) {
        const double bytes = per_rank * g.size;
        for (bool in_place : {false, true}) {
          const auto clean = checked_run(w, g, op, bytes, in_place, false);
          const auto bad = checked_run(w, g, op, bytes, in_place, true);
          const bool checked = !in_place || (op != core::Collective::all_to_all && op != core::Collective::send_recv);
          const std::string what = fmt::format("{} on {} x {} ranks, {:.0f} bytes {}", core::name(op), all.nodes,
                                               all.per_node, bytes, in_place ? "in place" : "out of place");
          if (checked) {
            failures += report(w, clean == 0, fmt::format("{}: {} wrong elements (0 expected)", what, clean));
            failures += report(w, bad == 1, fmt::format("{}, one element corrupted: {} wrong (1 expected)", what, bad));
          } else if (w.lead) {
            std::printf("SKIP %s: in place has no defined result (nccl-tests prints N/A)\n", what.c_str());
          }
        }
      }
    }
    free_group(g);
  }
  if (w.lead) {
    const int device = w.local.front().device;
    for (core::Precision p : precisions) failures += check_gemm(w, device, p);
    failures += check_copy(w, device);
    std::printf("%s: %d failed\n", failures == 0 ? "self-check passed" : "self-check FAILED", failures);
  }
  return failures;
}

}  // namespace ptdsim::calibrate_tool
