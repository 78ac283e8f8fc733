// How much a GEMM slows down while a memory-bound copy kernel confined to k thread blocks runs on
// another stream, the way an NCCL collective holds one SM per channel (Transformer Engine's comm
// overlap reserves 16 of H100's 132 SMs), and how much the copy slows down in turn. The rows of
// contention.csv; `ptdsim calibrate import-kernels` fits the contention constant from them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "bench.hpp"
#include "kernels.hpp"

namespace ptdsim::calibrate_tool {

std::vector<calibrate::ContentionRow> measure_contention(int device, const std::vector<int>& blocks, int algos,
                                                         const Timing& t, const std::string& gpu) {
  // The four GEMMs of the H100 table: a square, an attention-projection-like, a small-k and a
  // wide fc1-like shape (m, n, k).
  const long long shapes[][3] = {{8192, 8192, 8192}, {4096, 3072, 8192}, {4096, 8192, 1024}, {4096, 16384, 4096}};
  PTDSIM_CUDA(cudaSetDevice(device));
  // 512 MiB each way: far beyond the L2, so the copy streams from HBM
  const std::size_t bytes = std::size_t(512) << 20;
  void *a = nullptr, *b = nullptr;
  cudaStream_t side = nullptr;
  PTDSIM_CUDA(cudaMalloc(&a, bytes));
  PTDSIM_CUDA(cudaMalloc(&b, bytes));
  PTDSIM_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  PTDSIM_CUDA(launch_fill_values(static_cast<float*>(a), bytes / sizeof(float), 1, 0, side));
  PTDSIM_CUDA(cudaStreamSynchronize(side));
  auto copy = [&](int k, int passes, cudaStream_t s) { PTDSIM_CUDA(launch_copy(a, b, bytes, k, passes, s)); };

  std::vector<calibrate::ContentionRow> rows;
  unsigned long long seed = 1000;
  for (const auto& shape : shapes) {
    Gemm gemm(device, core::Precision::bf16, shape[0], shape[1], shape[2], algos, t, ++seed);
    if (!gemm.usable()) continue;
    const double alone = gemm.seconds(t);
    const int iters = iterations_for(t, alone);
    for (int k : blocks) {
      calibrate::ContentionRow row;
      row.m = shape[0];
      row.n = shape[1];
      row.k = shape[2];
      row.blocks = k;
      row.gpu = gpu;
      row.gemm_alone_s = alone;
      Timing one = t;
      one.warmup = 1;
      const double pass = median_per_op(side, one, 1, [&](cudaStream_t s) { copy(k, 1, s); });
      row.copy_alone_Bps = 2.0 * static_cast<double>(bytes) / pass;

      // the GEMMs, timed while a copy that outlasts them runs beside them
      const int passes = static_cast<int>(std::ceil(3.0 * iters * alone / pass)) + 2;
      std::vector<double> with;
      for (int rep = 0; rep < std::max(1, t.repeats); ++rep) {
        copy(k, passes, side);
        Events ev;
        ev.start(gemm.stream());
        for (int i = 0; i < iters; ++i) gemm.run(gemm.stream());
        ev.stop(gemm.stream());
        with.push_back(ev.seconds() / iters);
        PTDSIM_CUDA(cudaStreamSynchronize(side));
      }
      std::sort(with.begin(), with.end());
      row.gemm_with_copy_s = with[with.size() / 2];

      // the copy, timed while GEMMs that outlast it run beside it
      const int copy_passes = std::max(1, static_cast<int>(std::ceil(t.batch_s / pass)));
      const int gemms = static_cast<int>(std::ceil(3.0 * copy_passes * pass / alone)) + 2;
      std::vector<double> bw;
      for (int rep = 0; rep < std::max(1, t.repeats); ++rep) {
        for (int i = 0; i < gemms; ++i) gemm.run(gemm.stream());
        Events ev;
        ev.start(side);
        copy(k, copy_passes, side);
        ev.stop(side);
        bw.push_back(2.0 * static_cast<double>(bytes) * copy_passes / ev.seconds());
        PTDSIM_CUDA(cudaStreamSynchronize(gemm.stream()));
      }
      std::sort(bw.begin(), bw.end());
      row.copy_with_gemm_Bps = bw[bw.size() / 2];
      rows.push_back(row);
    }
  }
  cudaStreamDestroy(side);
  cudaFree(a);
  cudaFree(b);
  return rows;
}

}  // namespace ptdsim::calibrate_tool
