// ptdsim-calibrate [options] [--base HARDWARE.yaml] [-o HARDWARE.yaml] [--tables DIR]: measures, on
// this node's GPUs -- or across nodes when built with MPI and started by mpirun/srun -- NCCL
// collectives per group shape (nodes x GPUs per node), checked element by element; cuBLASLt GEMMs of
// the shipped models' layers on random inputs; device copy bandwidth, launch overhead, and the
// slowdown of a GEMM beside a copy kernel on k SMs. Fits the collectives as
// `ptdsim calibrate import-nccl-tests` does and writes a hardware file and the kernel tables.
// docs/calibration.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench.hpp"
#include "ptdsim/calibrate/fit.hpp"
#include "ptdsim/calibrate/gemm_shapes.hpp"
#include "ptdsim/calibrate/measured_tables.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/calibrate/hardware_writer.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/output.hpp"
#ifdef PTDSIM_CALIBRATE_MPI
#include <mpi.h>
#endif

namespace ct = ptdsim::calibrate_tool;
using namespace ptdsim;

namespace {

// The shipped models' files, found as `ptdsim` finds them ($PTDSIM_DATA, the install's share/ptdsim,
// the source tree: docs/inputs.md "Models and hardware by name"), so an installed calibrator needs no
// source tree.
std::vector<std::string> shipped_models() {
  std::vector<std::string> files;
  for (const auto& name : io::shipped_names("model")) files.push_back(io::shipped_file("models/" + name + ".yaml"));
  return files;
}

struct Args {
  ct::SizeSweep sweep;
  ct::Timing timing;
  std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv"};
  std::vector<std::string> shapes;  // "2x8"; empty: default_shapes
  std::vector<std::string> models = shipped_models();
  std::vector<int> hidden;  // when given: the classic shapes of these widths instead of the models
  std::vector<int> tp{1, 2, 4, 8};
  std::vector<long long> tokens{1024, 2048, 4096, 8192, 16384};
  std::vector<std::string> precisions{"bf16", "fp8"};
  std::vector<int> blocks;  // contention: thread blocks of the copy; empty: 4 8 16 32 SMs/2 SMs
  int algos = 8;
  std::string base, output, tables;
  int gpus = 0;
  bool skip_collectives = false, skip_gemm = false, skip_contention = false, self_check = false;
};

std::string size_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:g} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:g} KiB", b / 1024.0);
  return fmt::format("{:g} B", b);
}

// The model files named (files, or directories of *.yaml), read as the shipped models are.
std::vector<core::ModelSpec> load_models(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (!std::filesystem::exists(p)) {
      throw core::ConfigError({p, 0, 0}, "no such model file or directory (pass --models with the models/ directory "
                                         "of a ptdsim checkout, or --hidden)");
    }
    if (std::filesystem::is_directory(p)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.path().extension() == ".yaml") in_dir.push_back(e.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) throw core::ConfigError({"--models", 0, 0}, "no model files found (pass --models or --hidden)");
  std::vector<core::ModelSpec> out;
  for (const auto& f : files) out.push_back(io::load_model(f));
  return out;
}

std::vector<calibrate::GemmShape> gemm_shapes(const Args& a) {
  std::vector<core::ModelSpec> models;
  if (!a.hidden.empty()) {
    for (int h : a.hidden) models.push_back(calibrate::plain_model(h));
  } else {
    models = load_models(a.models);
  }
  return calibrate::gemm_shapes(models, a.tp, a.tokens);
}

void write_table(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / name).string();
  io::write_file_atomically(path, text);
  std::fprintf(stderr, "wrote %s\n", path.c_str());
}

int run(const Args& a) {
  std::optional<core::HardwareSpec> base;
  if (!a.base.empty()) base = io::load_hardware(a.base);
  std::vector<core::Collective> ops;
  for (const auto& o : a.ops) ops.push_back(*core::parse<core::Collective>(o));
  std::vector<core::Precision> precisions;
  for (const auto& p : a.precisions) precisions.push_back(*core::parse<core::Precision>(p));
  // GEMM shapes first: a bad model file stops the run before any GPU time is spent
  const auto shapes = a.skip_gemm || a.self_check ? std::vector<calibrate::GemmShape>{} : gemm_shapes(a);

  ct::World w = ct::make_world(a.gpus, static_cast<std::size_t>(a.sweep.max_bytes));
  int failures = 0;
  if (a.self_check) {
    failures = ct::self_check(w, ops, precisions);
    ct::free_world(w);
    return failures == 0 ? 0 : 1;
  }
  calibrate::HardwareCalibration cal;
  std::string log;

  if (!a.skip_collectives) {
    std::vector<ct::Shape> groups;
    for (const auto& s : a.shapes) groups.push_back(*ct::parse_shape(s));
    if (groups.empty()) groups = ct::default_shapes(w);
    std::vector<calibrate::NcclRun> runs;
    for (const auto& shape : groups) {
      ct::Group g = ct::make_group(w, shape);
      for (core::Collective op : ops) {
        auto r = ct::measure_collective(w, g, op, a.sweep, a.timing);
        // one rank moves nothing over a link: its table shows NCCL's own time on the GPU and proves
        // the path works, but it is no sample for the fit, and collectives.log keeps it out so that
        // import-nccl-tests (which refuses one-rank tables) reads the file whole
        if (w.lead) {
          std::fputs(r.text.c_str(), stdout);
          std::fflush(stdout);
          if (g.size >= 2) log += r.text;
        }
        if (r.wrong == 0) {
          if (g.size >= 2) runs.push_back(std::move(r.run));
        } else {
          ++failures;
          if (w.lead)
            std::fprintf(stderr, "ptdsim-calibrate: error: %s on %d x %d ranks computed %llu wrong elements: left out\n",
                         std::string(core::name(op)).c_str(), shape.nodes, shape.per_node, r.wrong);
        }
      }
      ct::free_group(g);
    }
    if (!runs.empty()) {
      auto fits = calibrate::fit_collectives(runs);
      cal.collectives = calibrate::hardware_rows(fits);
      if (w.lead) {
        for (const auto& f : fits) {
          std::printf("\n%s %s, %d ranks (%d per node):\n", std::string(core::name(f.op)).c_str(),
                      std::string(core::name(f.scope)).c_str(), f.ranks, f.ranks_per_node);
          for (const auto& p : f.pieces)
            std::printf("  %s .. %s: alpha %.2f us, busbw %.2f GB/s, max error %.1f%%\n", size_text(p.first_bytes).c_str(),
                        size_text(p.last_bytes).c_str(), p.alpha_s * 1e6, p.busbw_Bps / 1e9, 100 * p.max_abs_rel_error);
          for (const auto& n : f.notes) std::printf("  note: %s\n", n.c_str());
        }
      }
    }
    if (w.lead && runs.empty() && failures == 0)
      std::printf("\n# one rank: the collectives above are checked and printed, not fitted (nothing crosses a link)\n");
  }

  // Per-GPU rates: measured on rank 0's device only (every GPU of a node is the same part).
  if (w.lead) {
    const int dev = w.local.front().device;
    const std::string gpu = w.members.front().gpu;
    const double copy = ct::measure_copy_Bps(dev, std::min(a.sweep.max_bytes, 1073741824.0), a.timing);
    const double launch = ct::measure_launch_s(dev, a.timing);
    std::printf("\n# device %d (%s): copy %.1f GB/s (read+write)", dev, gpu.c_str(), copy / 1e9);
    if (base) {
      cal.hbm_efficiency = std::min(1.0, copy / base->gpu.hbm_Bps);
      std::printf(" = %.3f of the %.0f GB/s datasheet", *cal.hbm_efficiency, base->gpu.hbm_Bps / 1e9);
    }
    std::printf("; smallest stream operation (launch overhead) %.2f us\n", launch * 1e6);
    cal.kernel_launch_s = launch;

    std::vector<calibrate::GemmRow> gemm_rows;
    if (!a.skip_gemm) {
      std::printf("\n# %-9s %6s %6s %3s %7s %7s %7s %9s %10s %5s  (%zu shapes, random normal inputs, fastest of up to "
                  "%d cuBLASLt algorithms)\n",
                  "gemm", "hidden", "ffn", "tp", "m", "n", "k", "TFLOP/s", "efficiency", "algos", shapes.size(), a.algos);
      cudaDeviceProp prop{};
      PTDSIM_CUDA(cudaGetDeviceProperties(&prop, dev));
      unsigned long long seed = 1;
      for (core::Precision p : precisions) {
        if (const std::string why = ct::unsupported(p, prop.major * 10 + prop.minor); !why.empty()) {
          std::printf("# %s: skipped, %s\n", std::string(core::name(p)).c_str(), why.c_str());
          continue;
        }
        for (const auto& s : shapes) {
          std::unique_ptr<ct::Gemm> made;
          try {
            made = std::make_unique<ct::Gemm>(dev, p, s.m, s.n, s.k, a.algos, a.timing, ++seed);
          } catch (const ct::DeviceError& e) {
            // a shape too large for this GPU's memory, say: the others still count
            cudaGetLastError();
            std::printf("# %s %s %lldx%lldx%lld: skipped, %s\n", std::string(core::name(p)).c_str(), s.op.c_str(), s.m,
                        s.n, s.k, e.what());
            continue;
          }
          ct::Gemm& gemm = *made;
          if (!gemm.usable()) {
            std::printf("# %s %s %lldx%lldx%lld: skipped, %s\n", std::string(core::name(p)).c_str(), s.op.c_str(), s.m,
                        s.n, s.k, gemm.why_not().c_str());
            continue;
          }
          const double seconds = gemm.seconds(a.timing);
          const double rate = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / seconds;
          gemm_rows.push_back({p, s, seconds, gpu});
          const double peak = base ? base->gpu.peak_flops[static_cast<std::size_t>(core::index(p))] : 0;
          std::printf("  %-9s %6d %6d %3d %7lld %7lld %7lld %9.1f", s.op.c_str(), s.hidden, s.ffn, s.tp, s.m, s.n, s.k,
                      rate / 1e12);
          if (peak > 0) {
            std::printf(" %10.3f", rate / peak);
            core::GemmEfficiency e;
            e.precision = p;
            e.m = static_cast<double>(s.m);
            e.n = static_cast<double>(s.n);
            e.k = static_cast<double>(s.k);
            e.efficiency = std::min(1.0, rate / peak);
            cal.matmul_table.push_back(e);
          } else {
            std::printf(" %10s", "-");
          }
          std::printf(" %5d %s\n", gemm.candidates(), std::string(core::name(p)).c_str());
          std::fflush(stdout);
        }
      }
    }

    std::vector<calibrate::ContentionRow> contention;
    if (!a.skip_contention) {
      std::vector<int> blocks = a.blocks;
      if (blocks.empty()) {
        cudaDeviceProp prop{};
        PTDSIM_CUDA(cudaGetDeviceProperties(&prop, dev));
        blocks = {4, 8, 16, 32, prop.multiProcessorCount / 2, prop.multiProcessorCount};
      }
      contention = ct::measure_contention(dev, blocks, a.algos, a.timing, gpu);
      std::printf("\n# contention: a bf16 GEMM beside a copy kernel on k thread blocks\n");
      std::printf("#     m      n      k blocks  gemm_alone_us  gemm_with_copy_us  slowdown  copy_alone_GBps  "
                  "copy_with_gemm_GBps\n");
      for (const auto& r : contention)
        std::printf("  %5lld  %5lld  %5lld  %5d  %13.1f  %17.1f  %8.3f  %15.1f  %19.1f\n", r.m, r.n, r.k, r.blocks,
                    r.gemm_alone_s * 1e6, r.gemm_with_copy_s * 1e6, r.gemm_with_copy_s / r.gemm_alone_s,
                    r.copy_alone_Bps / 1e9, r.copy_with_gemm_Bps / 1e9);
    }

    if (!a.tables.empty()) {
      if (!gemm_rows.empty()) write_table(a.tables, "gemm.csv", calibrate::gemm_csv(gemm_rows));
      if (!contention.empty()) write_table(a.tables, "contention.csv", calibrate::contention_csv(contention));
      if (!log.empty()) write_table(a.tables, "collectives.log", log);
    }
    if (!a.output.empty()) {
      cal.comment = {fmt::format("calibrated by ptdsim-calibrate on {} x {} (docs/calibration.md)", w.size, gpu)};
      calibrate::write_calibrated_hardware(a.output, base ? std::optional<std::string>(a.base) : std::nullopt, cal);
      std::fprintf(stderr, "wrote %s\n", a.output.c_str());
    }
  }
  ct::free_world(w);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef PTDSIM_CALIBRATE_MPI
  MPI_Init(&argc, &argv);
#endif
  CLI::App app{"ptdsim-calibrate: measure collectives, GEMMs, copies, contention and launch overhead; write a "
               "hardware file and kernel tables"};
  Args a;
  app.add_option("--min-bytes", a.sweep.min_bytes, "smallest collective size")->capture_default_str();
  app.add_option("--max-bytes", a.sweep.max_bytes, "largest collective size")->capture_default_str()
      ->check(CLI::Range(8.0, 68719476736.0));
  app.add_option("--factor", a.sweep.factor, "size step factor")->capture_default_str()->check(CLI::Range(1.01, 1e6));
  app.add_option("--iters", a.timing.iters, "collectives and copies: timed operations per batch")->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", a.timing.warmup, "untimed operations first")->capture_default_str()->check(CLI::Range(0, 100000));
  app.add_option("--repeats", a.timing.repeats, "batches; the median is reported")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  double batch_ms = a.timing.batch_s * 1e3;
  app.add_option("--batch-ms", batch_ms, "GEMMs and contention: iterations per batch fill about this long")
      ->capture_default_str()->check(CLI::Range(0.0, 10000.0));
  app.add_option("--ops", a.ops, "collectives to measure")->capture_default_str();
  app.add_option("--shapes", a.shapes,
                 "groups as NODESxGPUS_PER_NODE (default: 1x2 1x4 .. 1xall, then 2xall 2x1 ..; 1x1 on one GPU)");
  app.add_option("--models", a.models, "model files or directories whose layers give the GEMM shapes (default: the shipped models)");
  app.add_option("--hidden", a.hidden, "instead of --models: hidden sizes of plain layers (qkv 3h/t, fc1 4h/t)");
  app.add_option("--tp", a.tp, "tensor-parallel degrees for the GEMM shapes")->capture_default_str();
  app.add_option("--tokens", a.tokens, "tokens per micro-batch (micro_batch x seq_len) for the GEMM shapes")
      ->capture_default_str();
  app.add_option("--precisions", a.precisions, "GEMM precisions (bf16 fp16 tf32 fp8 fp32)")->capture_default_str();
  app.add_option("--algos", a.algos, "cuBLASLt heuristic candidates timed per GEMM shape")->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--blocks", a.blocks, "contention: thread blocks of the copy kernel (default 4 8 16 32 SMs/2 SMs)");
  app.add_option("--gpus", a.gpus, "GPUs to use in single-process mode (default: all visible)");
  app.add_option("--base", a.base, "hardware file to copy (its peak_tflops and hbm_gbs give the efficiencies)")
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", a.output, "hardware file to write (whole or not at all)");
  app.add_option("--tables", a.tables, "directory for gemm.csv, contention.csv and collectives.log "
                                       "(`ptdsim calibrate import-kernels` and import-nccl-tests read them)");
  app.add_flag("--skip-collectives", a.skip_collectives, "no collectives");
  app.add_flag("--skip-gemm", a.skip_gemm, "no GEMMs");
  app.add_flag("--skip-contention", a.skip_contention, "no contention measurement");
  app.add_flag("--self-check", a.self_check,
               "check the verification, GEMM layout, random inputs and copy kernel on these GPUs, then exit");
  int status = 0;
  bool lead = true;
  try {
    app.parse(argc, argv);
    a.timing.batch_s = batch_ms * 1e-3;
    for (const auto& o : a.ops)
      if (!core::parse<core::Collective>(o)) throw core::ConfigError({"--ops", 0, 0}, "unknown collective '" + o + "'");
    for (const auto& p : a.precisions)
      if (!core::parse<core::Precision>(p)) throw core::ConfigError({"--precisions", 0, 0}, "unknown precision '" + p + "'");
    for (const auto& s : a.shapes)
      if (!ct::parse_shape(s))
        throw core::ConfigError({"--shapes", 0, 0},
                                "'" + s + "' is not NODESxGPUS_PER_NODE (e.g. 2x8; 1x1 is one rank)");
#ifdef PTDSIM_CALIBRATE_MPI
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    lead = rank == 0;
#endif
    status = run(a);
  } catch (const CLI::ParseError& e) {
    status = app.exit(e);
    if (status != 0) status = 2;
  } catch (const core::ConfigError& e) {
    if (lead) std::cerr << e.what() << "\n";
    status = 2;
  } catch (const std::exception& e) {
    std::cerr << "ptdsim-calibrate: error: " << e.what() << "\n";
    status = 1;
#ifdef PTDSIM_CALIBRATE_MPI
    // the other processes may wait in a collective for this one: stop them all
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, status);
#endif
  }
#ifdef PTDSIM_CALIBRATE_MPI
  MPI_Finalize();
#endif
  return status;
}
