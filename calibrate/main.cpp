// ptdsim-calibrate [options] -o HARDWARE.yaml: measures collectives (NCCL), GEMMs (cuBLASLt), device
// copy bandwidth and launch overhead on this node -- or across nodes when built with MPI and started
// by mpirun/srun -- fits the collectives as `ptdsim calibrate import-nccl-tests` does, and writes a
// hardware file. docs/calibration.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench.hpp"
#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/hardware_writer.hpp"
#include "ptdsim/io/load.hpp"
#ifdef PTDSIM_CALIBRATE_MPI
#include <mpi.h>
#include <unistd.h>
#endif

namespace ct = ptdsim::calibrate_tool;
using namespace ptdsim;

namespace {

struct Args {
  double min_bytes = 8, max_bytes = 1073741824.0, factor = 2;
  ct::Timing timing;
  std::vector<int> hidden{4096, 8192}, tp{1, 2, 4, 8}, tokens{4096};
  std::vector<std::string> precisions{"bf16", "fp16", "tf32", "fp8"};
  std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv"};
  std::string base, output;
  int gpus = 0;
  bool skip_collectives = false, skip_gemm = false;
};

// The four GEMMs of a transformer layer under tensor parallelism t (Megatron-LM's column/row split,
// Shoeybi et al. 2019, Sec. 3): QKV [T,h]x[h,3h/t], attention projection [T,h/t]x[h/t,h],
// fc1 [T,h]x[h,4h/t], fc2 [T,4h/t]x[4h/t,h], T tokens per micro-batch.
std::vector<ct::GemmShape> shapes(const Args& a) {
  std::vector<ct::GemmShape> out;
  for (int h : a.hidden)
    for (int t : a.tp)
      for (int T : a.tokens) {
        if (h % t) continue;
        out.push_back({"qkv", h, t, T, T, 3LL * h / t, h});
        out.push_back({"proj", h, t, T, T, h, h / t});
        out.push_back({"fc1", h, t, T, T, 4LL * h / t, h});
        out.push_back({"fc2", h, t, T, T, h, 4LL * h / t});
      }
  return out;
}

ct::Team make_team(int gpus, double max_bytes) {
  ct::Team team;
  int visible = 0;
  PTDSIM_CUDA(cudaGetDeviceCount(&visible));
  if (visible == 0) throw ct::DeviceError("no CUDA device visible");
#ifdef PTDSIM_CALIBRATE_MPI
  int world = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (world > 1) {
    // one process per GPU: the local rank picks the device, rank 0's unique id is broadcast
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::vector<char> all(256 * static_cast<std::size_t>(world));
    MPI_Allgather(host, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
    std::set<std::string> hosts;
    for (int r = 0; r < world; ++r) hosts.insert(std::string(all.data() + 256 * r));
    team.hosts = static_cast<int>(hosts.size());
    ncclUniqueId id;
    if (rank == 0) PTDSIM_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ct::LocalRank r;
    r.device = local % visible;
    r.rank = rank;
    PTDSIM_CUDA(cudaSetDevice(r.device));
    PTDSIM_NCCL(ncclCommInitRank(&r.comm, world, id, rank));
    team.local.push_back(r);
    team.world = world;
    team.mpi = true;
  }
#endif
  if (team.local.empty()) {
    // one process driving every local GPU
    const int n = gpus > 0 ? std::min(gpus, visible) : visible;
    std::vector<int> devs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) devs[static_cast<std::size_t>(i)] = i;
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    PTDSIM_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
    for (int i = 0; i < n; ++i) {
      ct::LocalRank r;
      r.device = i;
      r.rank = i;
      r.comm = comms[static_cast<std::size_t>(i)];
      team.local.push_back(r);
    }
    team.world = n;
  }
  for (auto& r : team.local) {
    PTDSIM_CUDA(cudaSetDevice(r.device));
    PTDSIM_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    PTDSIM_CUDA(cudaMalloc(&r.send, static_cast<std::size_t>(max_bytes)));
    PTDSIM_CUDA(cudaMalloc(&r.recv, static_cast<std::size_t>(max_bytes)));
    PTDSIM_CUDA(cudaMemset(r.send, 0, static_cast<std::size_t>(max_bytes)));
  }
  cudaDeviceProp prop{};
  PTDSIM_CUDA(cudaGetDeviceProperties(&prop, team.local.front().device));
  team.gpu_name = prop.name;
  return team;
}

std::string size_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:g} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:g} KiB", b / 1024.0);
  return fmt::format("{:g} B", b);
}

int run(const Args& a) {
  std::optional<core::HardwareSpec> base;
  if (!a.base.empty()) base = io::load_hardware(a.base);
  ct::Team team = make_team(a.gpus, a.max_bytes);
  const bool lead = team.local.front().rank == 0;
  io::HardwareCalibration cal;

  if (!a.skip_collectives && team.world >= 2) {
    std::vector<calibrate::NcclRun> runs;
    for (const auto& name : a.ops) {
      auto op = core::parse<core::Collective>(name);
      runs.push_back(ct::measure_collective(team, *op, a.min_bytes, a.max_bytes, a.factor, a.timing, lead));
    }
    auto fits = calibrate::fit_collectives(runs);
    cal.collectives = calibrate::hardware_rows(fits);
    if (lead) {
      for (const auto& f : fits) {
        std::printf("\n%s %s, %d ranks:\n", std::string(core::name(f.op)).c_str(),
                    std::string(core::name(f.scope)).c_str(), f.ranks);
        for (const auto& p : f.pieces) {
          std::printf("  %s .. %s: alpha %.2f us, busbw %.2f GB/s, max error %.1f%%\n", size_text(p.first_bytes).c_str(),
                      size_text(p.last_bytes).c_str(), p.alpha_s * 1e6, p.busbw_Bps / 1e9, 100 * p.max_abs_rel_error);
        }
        for (const auto& n : f.notes) std::printf("  note: %s\n", n.c_str());
      }
    }
  } else if (lead && !a.skip_collectives) {
    std::printf("# one rank: no collectives to measure\n");
  }

  // Per-GPU rates: measured on rank 0's device only (every GPU of a node is the same part).
  if (lead) {
    const int dev = team.local.front().device;
    const double copy = ct::measure_copy_Bps(dev, std::min(a.max_bytes, 1073741824.0), a.timing);
    const double launch = ct::measure_launch_s(dev, a.timing);
    std::printf("\n# device %d (%s): copy %.1f GB/s (read+write)", dev, team.gpu_name.c_str(), copy / 1e9);
    if (base) {
      cal.hbm_efficiency = std::min(1.0, copy / base->gpu.hbm_Bps);
      std::printf(" = %.3f of the %.0f GB/s datasheet", *cal.hbm_efficiency, base->gpu.hbm_Bps / 1e9);
    }
    std::printf("; smallest stream operation (launch overhead) %.2f us\n", launch * 1e6);
    cal.kernel_launch_s = launch;

    if (!a.skip_gemm) {
      std::printf("\n# %-5s %6s %3s %6s %7s %7s %7s %9s %10s\n", "gemm", "hidden", "tp", "tokens", "m", "n", "k",
                  "TFLOP/s", "efficiency");
      for (const auto& pname : a.precisions) {
        auto p = core::parse<core::Precision>(pname);
        for (const auto& s : shapes(a)) {
          std::string why;
          const double rate = ct::measure_gemm(dev, *p, s, a.timing, why);
          if (rate <= 0) {
            std::printf("# %s %s: skipped, %s\n", pname.c_str(), s.name.c_str(), why.c_str());
            break;  // the same reason holds for every shape of this precision
          }
          const double peak = base ? base->gpu.peak_flops[static_cast<std::size_t>(core::index(*p))] : 0;
          std::printf("  %-5s %6d %3d %6d %7lld %7lld %7lld %9.1f", s.name.c_str(), s.hidden, s.tp, s.tokens, s.m, s.n,
                      s.k, rate / 1e12);
          if (peak > 0) {
            std::printf(" %10.3f %s\n", rate / peak, pname.c_str());
            core::GemmEfficiency g;
            g.precision = *p;
            g.m = static_cast<double>(s.m);
            g.n = static_cast<double>(s.n);
            g.k = static_cast<double>(s.k);
            g.efficiency = std::min(1.0, rate / peak);
            cal.matmul_table.push_back(g);
          } else {
            std::printf(" %10s %s\n", "-", pname.c_str());
          }
        }
      }
    }
    if (!a.output.empty()) {
      cal.comment = {"calibrated by ptdsim-calibrate on " + std::to_string(team.world) + " x " + team.gpu_name +
                     " (docs/calibration.md)"};
      io::write_calibrated_hardware(a.output, base ? std::optional<std::string>(a.base) : std::nullopt, cal);
      std::fprintf(stderr, "wrote %s\n", a.output.c_str());
    }
  }
  for (auto& r : team.local) {
    cudaSetDevice(r.device);
    ncclCommDestroy(r.comm);
    cudaFree(r.send);
    cudaFree(r.recv);
    cudaStreamDestroy(r.stream);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef PTDSIM_CALIBRATE_MPI
  MPI_Init(&argc, &argv);
#endif
  CLI::App app{"ptdsim-calibrate: measure collectives, GEMMs, copy bandwidth and launch overhead; write a hardware file"};
  Args a;
  app.add_option("--min-bytes", a.min_bytes, "smallest collective size")->capture_default_str();
  app.add_option("--max-bytes", a.max_bytes, "largest collective size")->capture_default_str();
  app.add_option("--factor", a.factor, "size step factor")->capture_default_str()->check(CLI::Range(1.01, 1e6));
  app.add_option("--iters", a.timing.iters, "timed operations per batch")->capture_default_str();
  app.add_option("--warmup", a.timing.warmup, "untimed operations first")->capture_default_str();
  app.add_option("--repeats", a.timing.repeats, "batches; the median is reported")->capture_default_str();
  app.add_option("--ops", a.ops, "collectives to measure")->capture_default_str();
  app.add_option("--hidden", a.hidden, "model hidden sizes for the GEMM shapes")->capture_default_str();
  app.add_option("--tp", a.tp, "tensor-parallel degrees for the GEMM shapes")->capture_default_str();
  app.add_option("--tokens", a.tokens, "tokens per micro-batch (micro_batch x seq_len)")->capture_default_str();
  app.add_option("--precisions", a.precisions, "GEMM precisions (bf16 fp16 tf32 fp8 fp32)")->capture_default_str();
  app.add_option("--gpus", a.gpus, "GPUs to use in single-process mode (default: all visible)");
  app.add_option("--base", a.base, "hardware file to copy (its peak_tflops and hbm_gbs give the efficiencies)")
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", a.output, "hardware file to write (whole or not at all)");
  app.add_flag("--skip-collectives", a.skip_collectives, "measure GEMMs, copy and launch only");
  app.add_flag("--skip-gemm", a.skip_gemm, "measure collectives, copy and launch only");
  int status = 0;
  try {
    app.parse(argc, argv);
    for (const auto& o : a.ops)
      if (!core::parse<core::Collective>(o)) throw core::ConfigError({"--ops", 0, 0}, "unknown collective '" + o + "'");
    for (const auto& p : a.precisions)
      if (!core::parse<core::Precision>(p)) throw core::ConfigError({"--precisions", 0, 0}, "unknown precision '" + p + "'");
    status = run(a);
  } catch (const CLI::ParseError& e) {
    status = app.exit(e);
    if (status != 0) status = 2;
  } catch (const core::ConfigError& e) {
    std::cerr << e.what() << "\n";
    status = 2;
  } catch (const std::exception& e) {
    std::cerr << "ptdsim-calibrate: error: " << e.what() << "\n";
    status = 1;
  }
#ifdef PTDSIM_CALIBRATE_MPI
  MPI_Finalize();
#endif
  return status;
}
