// NCCL collectives timed and checked the way nccl-tests does it (src/common.cu: BenchTime times the
// out-of-place and the in-place run of every size, then runs each once more on known data and
// counts the wrong elements), printed in its 2022+ layout so `ptdsim calibrate import-nccl-tests`
// reads the text back.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench.hpp"
#include "kernels.hpp"
#include "ptdsim/calibrate/collective_check.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/core/alpha_beta.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate_tool {
namespace {

using core::Collective;
namespace check = calibrate::check;

// nccl-tests' binary name, for the printed header: its name of the collective and "_perf"
// (calibrate::nccl_tests_names, the table the log reader reads it back with).
std::string binary(Collective op) { return calibrate::nccl_tests_names()[static_cast<std::size_t>(op)] + "_perf"; }

// The buffer is split among the ranks: nccl-tests' size is count x ranks x 4 bytes.
bool split(Collective op) {
  return op == Collective::all_gather || op == Collective::reduce_scatter || op == Collective::all_to_all;
}

// The count nccl-tests passes to NCCL for `bytes` of floats on n ranks (per rank, or per block).
std::uint64_t count_of(Collective op, double bytes, int n) {
  const auto floats = static_cast<std::uint64_t>(bytes) / sizeof(float);
  return split(op) ? floats / static_cast<std::uint64_t>(n) : floats;
}

// In-place runs whose result NCCL defines: all-to-all and send/recv on one buffer race by design
// (nccl-tests prints N/A for their in-place check).
bool in_place_checked(Collective op) { return op != Collective::all_to_all && op != Collective::send_recv; }

// One operation on every rank of the group this process drives (a NCCL group call).
void launch(World& w, Group& g, Collective op, std::uint64_t count, bool in_place) {
  const int n = g.size;
  PTDSIM_NCCL(ncclGroupStart());
  for (const auto& m : g.mine) {
    const auto& l = w.local[static_cast<std::size_t>(m.local)];
    const std::uint64_t q = static_cast<std::uint64_t>(m.rank);
    float* recv = l.recv;
    const float* send = in_place ? l.recv : l.send;
    switch (op) {
      case Collective::all_reduce:
        PTDSIM_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, m.comm, l.stream));
        break;
      case Collective::all_gather:
        // in place: this rank's block already sits at its place in the output
        PTDSIM_NCCL(ncclAllGather(in_place ? recv + q * count : send, recv, count, ncclFloat, m.comm, l.stream));
        break;
      case Collective::reduce_scatter:
        // in place: the full input in the buffer, this rank's block of the result at its place
        PTDSIM_NCCL(ncclReduceScatter(send, in_place ? recv + q * count : recv, count, ncclFloat, ncclSum, m.comm,
                                      l.stream));
        break;
      case Collective::all_to_all:
        // NCCL has no all-to-all call: grouped point-to-point, as nccl-tests' alltoall does
        for (int peer = 0; peer < n; ++peer) {
          const std::uint64_t at = static_cast<std::uint64_t>(peer) * count;
          PTDSIM_NCCL(ncclSend(send + at, count, ncclFloat, peer, m.comm, l.stream));
          PTDSIM_NCCL(ncclRecv(recv + at, count, ncclFloat, peer, m.comm, l.stream));
        }
        break;
      case Collective::broadcast:
        PTDSIM_NCCL(ncclBroadcast(send, recv, count, ncclFloat, 0, m.comm, l.stream));
        break;
      case Collective::reduce:
        PTDSIM_NCCL(ncclReduce(send, recv, count, ncclFloat, ncclSum, 0, m.comm, l.stream));
        break;
      case Collective::send_recv:
        // a ring of pairs: every rank sends to the next and receives from the previous
        PTDSIM_NCCL(ncclSend(send, count, ncclFloat, (m.rank + 1) % n, m.comm, l.stream));
        PTDSIM_NCCL(ncclRecv(recv, count, ncclFloat, (m.rank + n - 1) % n, m.comm, l.stream));
        break;
    }
  }
  PTDSIM_NCCL(ncclGroupEnd());
}

// Seconds per operation in each of t.repeats batches: the slowest of this process's ranks (0 for a
// process outside the group; the caller takes the maximum over processes).
std::vector<double> time_half(World& w, Group& g, Collective op, std::uint64_t count, bool in_place, const Timing& t) {
  std::vector<double> out(static_cast<std::size_t>(std::max(1, t.repeats)), 0.0);
  if (g.mine.empty()) return out;
  for (int i = 0; i < t.warmup; ++i) launch(w, g, op, count, in_place);
  std::vector<std::unique_ptr<Events>> events;
  for (const auto& m : g.mine) {
    PTDSIM_CUDA(cudaSetDevice(w.local[static_cast<std::size_t>(m.local)].device));
    events.push_back(std::make_unique<Events>());
  }
  const int iters = std::max(1, t.iters);
  for (auto& batch : out) {
    for (std::size_t i = 0; i < g.mine.size(); ++i) {
      const auto& l = w.local[static_cast<std::size_t>(g.mine[i].local)];
      PTDSIM_CUDA(cudaSetDevice(l.device));
      events[i]->start(l.stream);
    }
    for (int it = 0; it < iters; ++it) launch(w, g, op, count, in_place);
    for (std::size_t i = 0; i < g.mine.size(); ++i) {
      const auto& l = w.local[static_cast<std::size_t>(g.mine[i].local)];
      PTDSIM_CUDA(cudaSetDevice(l.device));
      events[i]->stop(l.stream);
    }
    for (std::size_t i = 0; i < g.mine.size(); ++i) {
      PTDSIM_CUDA(cudaSetDevice(w.local[static_cast<std::size_t>(g.mine[i].local)].device));
      batch = std::max(batch, events[i]->seconds() / iters);
    }
  }
  return out;
}

// nccl-tests' time column: 2 decimals below 100 us, 1 below 10 ms, none above.
std::string time_column(double us) {
  if (us >= 10000) return fmt::format("{:7.0f}", us);
  if (us >= 100) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

}  // namespace

unsigned long long checked_run(World& w, Group& g, Collective op, double bytes, bool in_place, bool corrupt) {
  const int n = g.size;
  const std::uint64_t count = count_of(op, bytes, n);
  std::vector<unsigned long long> wrong{0};
  if (!g.mine.empty() && count > 0) {
    // known inputs, and outputs that a collective that writes nothing would leave wrong
    for (const auto& m : g.mine) {
      const auto& l = w.local[static_cast<std::size_t>(m.local)];
      const int q = m.rank;
      const std::uint64_t in = check::input_elements(op, n, count);
      const std::uint64_t out = check::output_elements(check::expect(op, n, q, count));
      PTDSIM_CUDA(cudaSetDevice(l.device));
      if (!in_place) {
        PTDSIM_CUDA(launch_fill_values(l.send, in, q, 0, l.stream));
        PTDSIM_CUDA(launch_fill_constant(l.recv, out, check::kUnwritten, l.stream));
      } else if (op == Collective::all_gather) {
        PTDSIM_CUDA(launch_fill_constant(l.recv, out, check::kUnwritten, l.stream));
        PTDSIM_CUDA(launch_fill_values(l.recv + static_cast<std::uint64_t>(q) * count, count, q, 0, l.stream));
      } else if (op == Collective::broadcast && q != 0) {
        PTDSIM_CUDA(launch_fill_constant(l.recv, count, check::kUnwritten, l.stream));
      } else {
        PTDSIM_CUDA(launch_fill_values(l.recv, in, q, 0, l.stream));
      }
      PTDSIM_CUDA(cudaMemsetAsync(l.wrong, 0, sizeof(unsigned long long), l.stream));
    }
    launch(w, g, op, count, in_place);
    static const float kCorrupt = 0.5f;  // never expected: inputs and sums are whole numbers
    for (const auto& m : g.mine) {
      const auto& l = w.local[static_cast<std::size_t>(m.local)];
      const auto e = check::expect(op, n, m.rank, count);
      const float* out =
          in_place && op == Collective::reduce_scatter ? l.recv + static_cast<std::uint64_t>(m.rank) * count : l.recv;
      PTDSIM_CUDA(cudaSetDevice(l.device));
      if (corrupt && m.rank == 0) {
        PTDSIM_CUDA(cudaMemcpyAsync(const_cast<float*>(out) + check::output_elements(e) / 2, &kCorrupt, sizeof kCorrupt,
                                    cudaMemcpyHostToDevice, l.stream));
      }
      if (!in_place || in_place_checked(op)) PTDSIM_CUDA(launch_count_wrong(out, e, l.wrong, l.stream));
      unsigned long long found = 0;
      PTDSIM_CUDA(cudaMemcpyAsync(&found, l.wrong, sizeof found, cudaMemcpyDeviceToHost, l.stream));
      PTDSIM_CUDA(cudaStreamSynchronize(l.stream));
      wrong[0] += found;
    }
  }
  sum_over_world(w, wrong);
  return wrong[0];
}

CollectiveResult measure_collective(World& w, Group& g, Collective op, const SizeSweep& sweep, const Timing& t) {
  const int n = g.size;
  // whole floats, divisible by the rank count where the buffer is split among ranks
  const double align = static_cast<double>(sizeof(float)) * (split(op) ? n : 1);
  const double cap = static_cast<double>(w.buffer_bytes);
  std::vector<double> sizes;
  for (double s = sweep.min_bytes; s <= sweep.max_bytes && s <= cap; s *= sweep.factor) {
    const double size = std::floor(s / align) * align;
    if (size > 0 && (sizes.empty() || size != sizes.back())) sizes.push_back(size);
  }
  const std::size_t reps = static_cast<std::size_t>(std::max(1, t.repeats));
  std::vector<double> times(sizes.size() * 2 * reps, 0.0);
  std::vector<unsigned long long> wrong(sizes.size() * 2, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::uint64_t count = count_of(op, sizes[i], n);
    for (int half = 0; half < 2; ++half) {
      const auto batches = time_half(w, g, op, count, half == 1, t);
      std::copy(batches.begin(), batches.end(), times.begin() + static_cast<long>((i * 2 + static_cast<std::size_t>(half)) * reps));
      wrong[i * 2 + static_cast<std::size_t>(half)] = checked_run(w, g, op, sizes[i], half == 1, false);
    }
  }
  max_over_world(w, times);  // the slowest rank's batch

  CollectiveResult r;
  calibrate::NcclRun& run = r.run;
  run.file = fmt::format("ptdsim-calibrate {} on {} x {}", binary(op), g.shape.nodes, g.shape.per_node);
  run.binary = binary(op);
  run.op = op;
  run.ranks = n;
  run.scope = g.shape.nodes > 1 ? core::Scope::inter : core::Scope::intra;
  run.hosts = g.shape.nodes;
  run.listed_ranks = n;
  run.ranks_per_node = g.shape.per_node;
  run.gpu = w.members[static_cast<std::size_t>(g.world_ranks.front())].gpu;
  const double F = core::bus_factor(op, n);
  const bool rooted = op == Collective::broadcast || op == Collective::reduce;
  const bool reduces = op == Collective::all_reduce || op == Collective::reduce_scatter || op == Collective::reduce;

  std::string& text = r.text;
  text += fmt::format("# Collective test starting: {}\n", binary(op));
  // what NCCL was told (its environment): the reader takes a single algorithm or protocol as the
  // table's, and its fit keeps such rows apart (docs/calibration.md "Rows per algorithm")
  text += calibrate::nccl_setting_lines([](const char* var) -> const char* { return std::getenv(var); });
  text += fmt::format(
      "# nThread 1 nGpus {} minBytes {:.0f} maxBytes {:.0f} step: {:g}(factor) warmup iters: {} iters: {} agg iters: 1 "
      "validation: 1 graph: 0\n#\n# Using devices\n",
      w.mpi ? 1 : n, sweep.min_bytes, std::min(sweep.max_bytes, cap), sweep.factor, t.warmup, t.iters);
  for (int q = 0; q < n; ++q) {
    const Member& m = w.members[static_cast<std::size_t>(g.world_ranks[static_cast<std::size_t>(q)])];
    text += fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on {:>10} device {:2d} [{}] {}\n", q, m.pid, m.host, m.device,
                        m.pci[0] ? m.pci : "-", m.gpu);
  }
  text += "#\n#                                                              out-of-place                       in-place\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  double busbw_sum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    calibrate::NcclRow row;
    row.size_bytes = sizes[i];
    row.count = static_cast<double>(count_of(op, sizes[i], n));
    row.type = "float";
    row.redop = reduces ? "sum" : "none";
    row.root = rooted ? 0 : -1;
    std::string line = fmt::format("{:12.0f}  {:12.0f}  {:>8}  {:>6}  {:6d}", row.size_bytes, row.count, row.type,
                                   row.redop, row.root);
    for (int half = 0; half < 2; ++half) {
      auto first = times.begin() + static_cast<long>((i * 2 + static_cast<std::size_t>(half)) * reps);
      std::vector<double> b(first, first + static_cast<long>(reps));
      std::sort(b.begin(), b.end());
      calibrate::NcclMeasure& m = half == 0 ? row.out_of_place : row.in_place;
      m.time_s = b[b.size() / 2];
      m.algbw_Bps = row.size_bytes / m.time_s;
      m.busbw_Bps = m.algbw_Bps * F;
      busbw_sum += m.busbw_Bps;
      const bool checked = half == 0 || in_place_checked(op);
      r.wrong += wrong[i * 2 + static_cast<std::size_t>(half)];
      line += fmt::format("  {}  {:6.2f}  {:6.2f}  {:>5}", time_column(m.time_s * 1e6), m.algbw_Bps / 1e9,
                          m.busbw_Bps / 1e9,
                          checked ? std::to_string(wrong[i * 2 + static_cast<std::size_t>(half)]) : std::string("N/A"));
    }
    run.rows.push_back(row);
    text += line + "\n";
  }
  text += fmt::format("# Out of bounds values : {} {}\n# Avg bus bandwidth    : {:g}\n#\n# Collective test concluded: {}\n\n",
                      r.wrong, r.wrong == 0 ? "OK" : "FAILED",
                      sizes.empty() ? 0.0 : busbw_sum / 1e9 / (2.0 * static_cast<double>(sizes.size())), binary(op));
  // the algorithm and protocol NCCL was forced to, as the reader takes the text back (-1: NCCL's pick)
  if (const auto back = calibrate::parse_nccl_tests(text, run.file); back.size() == 1) {
    run.algo = back.front().algo;
    run.proto = back.front().proto;
  }
  return r;
}

}  // namespace ptdsim::calibrate_tool
