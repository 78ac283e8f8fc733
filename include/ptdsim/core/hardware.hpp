#pragma once
#include <array>
#include <limits>
#include <string>
#include <vector>

namespace ptdsim::core {

// fp4 is a datasheet peak only (Blackwell's NVFP4 tensor cores): check() refuses a scenario that
// trains in it, since nothing in the engines models 4-bit training.
enum class Precision { bf16, fp16, fp8, fp32, tf32, fp4 };
inline constexpr int kPrecisionCount = 6;
inline int index(Precision p) { return static_cast<int>(p); }

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };
inline constexpr int kCollectiveCount = 7;

// Where a communication group's ranks are: all inside one node (NVLink/NVSwitch) or across nodes.
enum class Scope { intra, inter };

struct Link {
  double bandwidth_Bps = 0;  // per GPU, one direction
  double latency_s = 0;
  double efficiency = 1.0;   // achieved fraction of bandwidth_Bps for bandwidth-bound collectives
};

// One fitted line of a calibrated collectives table: time = alpha + bytes*factor/busbw for
// message sizes in [min_bytes, max_bytes] (piecewise fits have several rows per op and scope).
struct CollectiveFit {
  Collective op = Collective::all_reduce;
  Scope scope = Scope::intra;
  int ranks = 0;
  double alpha_s = 0;
  double busbw_Bps = 0;
  double min_bytes = 0;
  double max_bytes = std::numeric_limits<double>::infinity();
};

// One row of a calibrated GEMM efficiency table: achieved fraction of peak for a GEMM of
// m x n x k (C[m,n] = A[m,k] B[k,n]) at a precision.
struct GemmEfficiency {
  Precision precision = Precision::bf16;
  double m = 0, n = 0, k = 0;
  double efficiency = 0;
};

struct GpuSpec {
  std::string name;
  double memory_bytes = 0;
  double hbm_Bps = 0;
  double hbm_efficiency = 0.85;  // achieved fraction of hbm_Bps for memory-bound kernels
  // dense datasheet peak FLOP/s per precision; 0 = not supported
  std::array<double, kPrecisionCount> peak_flops{};
  double matmul_efficiency = 0.8;  // achieved fraction of peak for large GEMMs
  // per precision, when the file gives a mapping ({bf16: 0.7, fp8: 0.55}); 0 = use matmul_efficiency.
  // FP8 reaches a smaller fraction of its (doubled) peak than BF16 does (hardware_facts.md 2a).
  std::array<double, kPrecisionCount> matmul_efficiency_by_precision{};
  double scalar_matmul_efficiency(Precision p) const {
    const double e = matmul_efficiency_by_precision[static_cast<std::size_t>(p)];
    return e > 0 ? e : matmul_efficiency;
  }
  std::vector<GemmEfficiency> matmul_table;  // optional, calibrated; overrides matmul_efficiency
  double kernel_launch_s = 0;                // optional, calibrated
  // Streaming multiprocessors, and how many of them one running NCCL collective holds (one
  // thread block per channel): the GEMMs running beside it lose that share. 0: not modelled.
  int sms = 0;
  int comm_sms = 0;
  double comm_share() const { return sms > 0 ? static_cast<double>(comm_sms) / sms : 0.0; }
  // Board power, watts: the datasheet's maximum (TDP) and what the GPU draws with a process on it
  // but no kernel running (P0 idle). 0: not known, and the report has no energy.
  double tdp_w = 0;
  double idle_w = 0;
};

struct HardwareSpec {
  std::string name;
  GpuSpec gpu;
  int gpus_per_node = 8;
  Link intra;    // NVLink / NVSwitch inside a node
  Link network;  // the NIC share per GPU across nodes
  std::string topology = "fat-tree";
  double oversubscription = 1.0;
  std::vector<CollectiveFit> collectives;  // optional, calibrated; overrides the link model
};

}  // namespace ptdsim::core
