#include <algorithm>
#include <cstdio>
#include <string>

#include "bench.hpp"
#include "ptdsim/core/names.hpp"
#ifdef PTDSIM_CALIBRATE_MPI
#include <mpi.h>
#endif

namespace ptdsim::calibrate_tool {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw DeviceError(std::string(what) + ": " + cudaGetErrorString(e));
}
void check_nccl(ncclResult_t e, const char* what) {
  if (e != ncclSuccess) throw DeviceError(std::string(what) + ": " + ncclGetErrorString(e));
}

double max_over_ranks(const Team& team, double v) {
#ifdef PTDSIM_CALIBRATE_MPI
  if (team.mpi) {
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
#else
  (void)team;
#endif
  return v;
}

namespace {

// nccl-tests' binary names, for the printed header.
const char* binary(core::Collective op) {
  switch (op) {
    case core::Collective::all_reduce: return "all_reduce_perf";
    case core::Collective::all_gather: return "all_gather_perf";
    case core::Collective::reduce_scatter: return "reduce_scatter_perf";
    case core::Collective::all_to_all: return "alltoall_perf";
    case core::Collective::broadcast: return "broadcast_perf";
    case core::Collective::reduce: return "reduce_perf";
    case core::Collective::send_recv: return "sendrecv_perf";
  }
  return "";
}

// One operation on every local rank; `size` follows nccl-tests: the full buffer for all_gather,
// reduce_scatter and alltoall, the per-rank buffer otherwise. Floats throughout.
void launch(Team& team, core::Collective op, std::size_t size) {
  const int n = team.world;
  const std::size_t count = size / sizeof(float);
  PTDSIM_NCCL(ncclGroupStart());
  for (auto& r : team.local) {
    switch (op) {
      case core::Collective::all_reduce:
        PTDSIM_NCCL(ncclAllReduce(r.send, r.recv, count, ncclFloat, ncclSum, r.comm, r.stream));
        break;
      case core::Collective::all_gather:
        PTDSIM_NCCL(ncclAllGather(r.send, r.recv, count / n, ncclFloat, r.comm, r.stream));
        break;
      case core::Collective::reduce_scatter:
        PTDSIM_NCCL(ncclReduceScatter(r.send, r.recv, count / n, ncclFloat, ncclSum, r.comm, r.stream));
        break;
      case core::Collective::all_to_all: {
        // NCCL has no all-to-all call: grouped point-to-point, as nccl-tests' alltoall does
        const std::size_t part = count / n;
        for (int peer = 0; peer < n; ++peer) {
          PTDSIM_NCCL(ncclSend(static_cast<float*>(r.send) + part * peer, part, ncclFloat, peer, r.comm, r.stream));
          PTDSIM_NCCL(ncclRecv(static_cast<float*>(r.recv) + part * peer, part, ncclFloat, peer, r.comm, r.stream));
        }
        break;
      }
      case core::Collective::broadcast:
        PTDSIM_NCCL(ncclBroadcast(r.send, r.recv, count, ncclFloat, 0, r.comm, r.stream));
        break;
      case core::Collective::reduce:
        PTDSIM_NCCL(ncclReduce(r.send, r.recv, count, ncclFloat, ncclSum, 0, r.comm, r.stream));
        break;
      case core::Collective::send_recv:
        // a ring of pairs: every rank sends `size` to the next and receives from the previous
        PTDSIM_NCCL(ncclSend(r.send, count, ncclFloat, (r.rank + 1) % n, r.comm, r.stream));
        PTDSIM_NCCL(ncclRecv(r.recv, count, ncclFloat, (r.rank + n - 1) % n, r.comm, r.stream));
        break;
    }
  }
  PTDSIM_NCCL(ncclGroupEnd());
}

// Seconds per operation: events around `iters` back-to-back operations on every local stream, the
// slowest rank counting; the median of `repeats` such batches.
double time_op(Team& team, core::Collective op, std::size_t size, const Timing& t) {
  std::vector<cudaEvent_t> start(team.local.size()), stop(team.local.size());
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    PTDSIM_CUDA(cudaSetDevice(team.local[i].device));
    PTDSIM_CUDA(cudaEventCreate(&start[i]));
    PTDSIM_CUDA(cudaEventCreate(&stop[i]));
  }
  for (int w = 0; w < t.warmup; ++w) launch(team, op, size);
  std::vector<double> batches;
  for (int rep = 0; rep < t.repeats; ++rep) {
    for (std::size_t i = 0; i < team.local.size(); ++i) {
      PTDSIM_CUDA(cudaSetDevice(team.local[i].device));
      PTDSIM_CUDA(cudaEventRecord(start[i], team.local[i].stream));
    }
    for (int it = 0; it < t.iters; ++it) launch(team, op, size);
    double slowest = 0;
    for (std::size_t i = 0; i < team.local.size(); ++i) {
      PTDSIM_CUDA(cudaSetDevice(team.local[i].device));
      PTDSIM_CUDA(cudaEventRecord(stop[i], team.local[i].stream));
      PTDSIM_CUDA(cudaEventSynchronize(stop[i]));
      float ms = 0;
      PTDSIM_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
      slowest = std::max(slowest, ms * 1e-3 / t.iters);
    }
    batches.push_back(max_over_ranks(team, slowest));
  }
  for (std::size_t i = 0; i < team.local.size(); ++i) {
    PTDSIM_CUDA(cudaEventDestroy(start[i]));
    PTDSIM_CUDA(cudaEventDestroy(stop[i]));
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

}  // namespace

calibrate::NcclRun measure_collective(Team& team, core::Collective op, double min_bytes, double max_bytes,
                                      double factor, const Timing& t, bool print) {
  calibrate::NcclRun run;
  run.file = std::string("ptdsim-calibrate ") + binary(op);
  run.binary = binary(op);
  run.op = op;
  run.ranks = team.world;
  run.hosts = team.hosts;
  run.scope = team.hosts > 1 ? core::Scope::inter : core::Scope::intra;
  run.gpu = team.gpu_name;
  const double F = calibrate::bus_factor(op, team.world);
  const bool split = op == core::Collective::all_gather || op == core::Collective::reduce_scatter ||
                     op == core::Collective::all_to_all;
  if (print) {
    std::printf("# Collective test starting: %s\n# nThread 1 nGpus %zu minBytes %.0f maxBytes %.0f step: %g(factor) "
                "warmup iters: %d iters: %d agg iters: 1 validation: 0 graph: 0\n#\n"
                "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                "algbw   busbw #wrong\n"
                "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
                "(GB/s)  (GB/s)\n",
                binary(op), team.local.size(), min_bytes, max_bytes, factor, t.warmup, t.iters);
  }
  for (double s = min_bytes; s <= max_bytes; s *= factor) {
    // whole floats, divisible by the rank count where the buffer is split among ranks
    const std::size_t align = sizeof(float) * static_cast<std::size_t>(split ? team.world : 1);
    const std::size_t size = static_cast<std::size_t>(s) / align * align;
    if (size == 0) continue;
    const double time = time_op(team, op, size, t);
    calibrate::NcclRow row;
    row.size_bytes = static_cast<double>(size);
    row.count = static_cast<double>(size / sizeof(float) / (split ? team.world : 1));
    row.type = "float";
    row.redop = op == core::Collective::all_reduce || op == core::Collective::reduce_scatter ||
                        op == core::Collective::reduce ? "sum" : "none";
    row.root = op == core::Collective::broadcast || op == core::Collective::reduce ? 0 : -1;
    row.out_of_place.time_s = time;
    row.out_of_place.algbw_Bps = row.size_bytes / time;
    row.out_of_place.busbw_Bps = row.out_of_place.algbw_Bps * F;
    row.in_place = row.out_of_place;  // one measurement: only out-of-place buffers are timed
    run.rows.push_back(row);
    if (print) {
      std::printf("%12.0f  %12.0f  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %5s  %7.2f  %6.2f  %6.2f  %5s\n",
                  row.size_bytes, row.count, "float", row.redop.c_str(), row.root, time * 1e6,
                  row.out_of_place.algbw_Bps / 1e9, row.out_of_place.busbw_Bps / 1e9, "N/A", time * 1e6,
                  row.out_of_place.algbw_Bps / 1e9, row.out_of_place.busbw_Bps / 1e9, "N/A");
      std::fflush(stdout);
    }
  }
  if (print) std::printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n#\n# Collective test concluded: %s\n", binary(op));
  return run;
}

}  // namespace ptdsim::calibrate_tool
