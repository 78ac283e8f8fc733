#pragma once
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ptdsim/core/network.hpp"

namespace ptdsim::core {

// fp4 is a datasheet peak only (Blackwell's NVFP4 tensor cores): check() refuses a scenario that
// trains in it, since nothing in the engines models 4-bit training.
enum class Precision { bf16, fp16, fp8, fp32, tf32, fp4 };
inline constexpr int kPrecisionCount = 6;
inline int index(Precision p) { return static_cast<int>(p); }

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };
inline constexpr int kCollectiveCount = 7;

// How the nodes' NICs are cabled, as far as it moves a collective's time: whether inter-node traffic
// crosses the spine, whose uplinks `oversubscription` divides. fat_tree: any inter-node byte may cross
// it. rail_optimized: NIC k of every node hangs off rail switch k (DGX SuperPOD reference
// architecture), and NCCL keeps collectives, p2p and all-to-all on their rail (PXN routes a byte over
// NVLink to the GPU on the destination's rail first, NCCL 2.12+), so they never cross the spine.
enum class Topology { fat_tree, rail_optimized };

// Where a communication group's ranks are: all inside one node (NVLink/NVSwitch) or across nodes.
enum class Scope { intra, inter };

struct Link {
  double bandwidth_Bps = 0;  // per GPU, one direction
  double latency_s = 0;
  double efficiency = 1.0;   // achieved fraction of bandwidth_Bps for bandwidth-bound collectives
};

// One fitted line of a calibrated collectives table: time = alpha + bytes*factor/busbw for
// message sizes in [min_bytes, max_bytes] (piecewise fits have several rows per op and scope).
// ranks_per_node and gpu say what the row was measured on, so a group of another shape or part
// can be warned about (analytic::collective_warnings); 0 and "" when unknown. algo and proto are
// the NCCL algorithm and protocol the log forced (NCCL_ALGO / NCCL_PROTO), indices of
// nccl_algo_names() / nccl_proto_names(); -1 when NCCL picked. A row with an algorithm times a
// collective only where NCCL's model picks that algorithm (analytic::collective_line).
struct CollectiveFit {
  Collective op = Collective::all_reduce;
  Scope scope = Scope::intra;
  int ranks = 0;
  int ranks_per_node = 0;
  std::string gpu;
  int algo = -1;
  int proto = -1;
  double alpha_s = 0;
  double busbw_Bps = 0;
  double min_bytes = 0;
  double max_bytes = std::numeric_limits<double>::infinity();
  // measured with NCCL_ALGO or NCCL_PROTO forcing NCCL's choice
  bool forced() const { return algo >= 0 || proto >= 0; }
};

// One row of a calibrated GEMM efficiency table: achieved fraction of peak for a GEMM of
// m x n x k (C[m,n] = A[m,k] B[k,n]) at a precision.
struct GemmEfficiency {
  Precision precision = Precision::bf16;
  double m = 0, n = 0, k = 0;
  double efficiency = 0;
};

// Measured kernel tables and the few parameters fitted to them (`gpu.kernels`, docs/inputs.md; the
// models are derived in docs/analytic.md "Compute from measured kernels"). SI units throughout.

// One measured GEMM y[m,n] = x[m,k] W[n,k]^T at a precision (random data, CUDA-event timing).
struct GemmTime {
  Precision precision = Precision::bf16;
  double m = 0, n = 0, k = 0;
  double time_s = 0;
};

// The GEMM time model of one precision, fitted to the measured rows:
//   work = waves(m, n) * sms * tile_m * tile_n * (2k / rate + out_bytes / epilogue_Bps)
//   time = (floor^p + work^p)^(1/p),  p = knee
// waves counts full waves of tile_m x tile_n output tiles over the SMs plus a partial last wave
// that costs `tail` + (1 - tail) * its fill. Absent (rate_flops == 0) for unmeasured precisions.
struct GemmModel {
  double rate_flops = 0;    // sustained multiply-add rate of a full wave, FLOP/s
  double epilogue_Bps = 0;  // rate at which a tile's 2-byte outputs leave, not hidden by the main loop
  double floor_s = 0;       // latency floor (launch and dispatch of one GEMM)
  double knee = 1;          // sharpness of the transition from the floor to the work (p above)
  double tail = 1;          // cost of a partial last wave as a fraction of a full one, in [0, 1]
  int tile_m = 128, tile_n = 128;
  bool valid() const { return rate_flops > 0; }
  // Full waves of output tiles over `sms`, the partial last wave counting tail + (1 - tail) x its fill.
  double waves(int sms, double m, double n) const;
  // The model's time for y[m,n] = x[m,k] W^T with 2-byte outputs, seconds.
  double time(int sms, double m, double n, double k) const;
};

// The attention core of `batch` sequences: `heads` query heads and `kv_heads` key/value heads of
// `head_dim`, `seq_q` query rows against `seq_k` key rows (context parallelism: s/c against s).
struct AttentionShape {
  double batch = 1, heads = 1, kv_heads = 1, head_dim = 128, seq_q = 0, seq_k = 0;
  bool causal = true;
  // FLOPs the forward kernel executes: 4 b heads s_q s_k d, halved when causal (the masked half of
  // the score matrix is skipped). The backward executes 2.5x that (FlashAttention-2's count).
  double flops() const;
};

// Which flash-attention kernel times the attention core (training.attention_kernel), when the
// hardware file has measured attention rates (docs/analytic.md "Compute from measured kernels"):
// cudnn: cuDNN's fused attention, which Transformer Engine picks on Hopper and newer (its
//   gpu.kernels.attention table); flash2: FlashAttention-2, which PyTorch's
//   scaled_dot_product_attention runs first by default and flash-attn / Triton-based frameworks use
//   (gpu.kernels.attention_flash2; on an H100 about half cuDNN's rate).
enum class AttentionKernel { cudnn, flash2 };

// One direction of the flash-attention core, fitted to the measured rows:
//   time = flops / rate + 2 bytes * b * head_dim * (s_q * heads / q_Bps + s_k * kv_heads / kv_Bps)
// flops = 4 b heads s_q s_k head_dim (halved when causal), x 2.5 backward (FlashAttention-2's count).
struct AttentionModel {
  double rate_flops = 0;
  double q_Bps = 0;   // per-query-row work (Q, O, softmax state), as bytes of Q per second; 0: none
  double kv_Bps = 0;  // per-key-row work (K, V), as bytes of K and V per second; 0: none
  bool valid() const { return rate_flops > 0; }
  double time(const AttentionShape& a, bool backward) const;
};

// Memory-bound layer operations timed in elementwise.csv (kMemoryOpCount classes).
enum class MemoryOp { layernorm, rmsnorm, gelu, swiglu, dropout, residual_add };
inline constexpr int kMemoryOpCount = 6;

// Bytes one element of a class moves (16-bit tensors), forward and backward: the convention its
// achieved bandwidth is stated in (docs/analytic.md "Memory-bound operations"). A norm or GeLU reads
// x and writes y, and backward reads dy and x and writes dx; dropout also writes (reads) a 1-byte
// mask; a residual add reads two tensors and writes one, and so does its backward (the gradient sum
// where two branches meet); SwiGLU, per output element, reads gate and up and writes one, backward
// reads dy, gate and up and writes two.
struct ElementBytes {
  double forward, backward;
};
inline constexpr std::array<ElementBytes, kMemoryOpCount> kMemoryOpBytes{
    {{4, 6}, {4, 6}, {4, 6}, {6, 10}, {5, 5}, {6, 6}}};
inline ElementBytes memory_op_bytes(MemoryOp op) { return kMemoryOpBytes[static_cast<std::size_t>(op)]; }
// Cross-entropy in fp32 per logit: forward reads the 16-bit logit (2), writes it in fp32 (4) and
// reads it twice (max, sum: 4 + 4); backward reads 4, writes 2, reads 4.
inline constexpr ElementBytes kCrossEntropyBytes{14, 10};

// Achieved bandwidth of one operation class over its documented bytes (docs/analytic.md); 0: not measured.
struct StreamRate {
  double forward_Bps = 0;
  double backward_Bps = 0;
  bool valid() const { return forward_Bps > 0 && backward_Bps > 0; }
};

// The FP8 GEMM kernels beside the one the `fp8` rows and model measure, cuBLAS's tensorwise-scaled
// kernel with split accumulation (partial sums promoted to FP32 in CUDA cores: cuBLASLt's default,
// torch._scaled_mm's use_fast_accum=False): fast_accum, the same kernel accumulating in the tensor
// cores alone (CUBLASLT_MATMUL_DESC_FAST_ACCUM); rowwise, per-row and per-column scales with fast
// accumulation (PyTorch's rowwise _scaled_mm); blockwise, 1x128 activation and 128x128 weight tiles
// (DeepSeek-V3's); mxfp8, MX blocks of 32 with E8M0 scales (Blackwell). Which one each pass of a
// recipe runs: analytic::fp8_kernel_of (docs/analytic.md "FP8 GEMM kernels").
enum class Fp8Kernel { fast_accum, rowwise, blockwise, mxfp8 };
inline constexpr int kFp8KernelCount = 4;

struct KernelTables {
  std::string source;  // where the tables were measured
  std::array<GemmModel, kPrecisionCount> gemm_model{};
  std::vector<GemmTime> gemm_rows;  // sorted by (precision, m, n, k), no duplicates: binary search
  std::array<GemmModel, kFp8KernelCount> fp8_kernels{};  // invalid where not measured
  AttentionModel attention_forward, attention_backward;  // bf16 (TransformerEngine keeps it in bf16 under fp8)
  // FlashAttention-2's rates (training.attention_kernel flash2); invalid when not measured
  AttentionModel flash2_forward, flash2_backward;
  std::array<StreamRate, kMemoryOpCount> memory_bound{};
  StreamRate cross_entropy;  // fp32 loss over the local vocabulary slice
  double optimizer_Bps = 0;  // fused AdamW step: bytes of optimizer state moved per second
};

// The precision whose GEMM rows, GEMM model and attention tables serve `p`: bf16 for bf16 and fp16
// (the same tensor cores at the same peak), fp8 for fp8 (its attention core stays bf16, as
// Transformer Engine keeps it); nothing for fp32 and tf32 (no table measures them).
bool gemm_class(Precision p, Precision& out);

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
  // A GEMM beside a copy confined to k SMs slows by more than k/sms (contention.csv): the share
  // is scaled by this fitted factor (gpu.kernels.contention.factor; 1 without tables).
  double contention_factor = 1.0;
  // The SMs' share a running collective holds, as the hardware file gives it (below 1)
  double sm_share() const { return sms > 0 ? contention_factor * comm_sms / sms : 0.0; }
  // and the share of the compute beside it that it takes, as every model counts it: a compute
  // kernel keeps at least kMinComputeRate of its speed, its blocks still scheduled between the
  // collective's (the scheduler's floor, the analytic estimate's and the sweep's bounds' alike)
  static constexpr double kMinComputeRate = 0.1;
  double comm_share() const { return std::min(sm_share(), 1 - kMinComputeRate); }

  // Measured kernel tables (gpu.kernels); null: the scalar efficiencies above time everything.
  // Shared and immutable: scenarios are copied freely, the tables are not.
  std::shared_ptr<const KernelTables> kernels;
  // What the tables leave unexplained end to end (gpu.kernels.overhead, fitted by `ptdsim
  // validate --fit` on the fit split; docs/validation.md): a time per transformer layer and pass
  // (forward, B, W) for the host's launch gaps (used only with kernel tables), and a factor on the
  // memory-bound kernels' times for the elementwise work the tables do not time (casts, RoPE,
  // unfused framework code), which grows with the same activations. Without tables the factor is
  // hardware.gpu.memory_bound_factor, on every memory-bound time at hbm_efficiency (memory_time;
  // docs/analytic.md "Memory-bound work without tables").
  double layer_overhead_s = 0;
  double memory_bound_factor = 1.0;
  // What the tables measured, carried to this GPU (hardware.gpu.sustained_clock, tables_hbm_gbs;
  // docs/analytic.md "Another GPU's tables"): the fraction of the tables' SM clock this GPU sustains
  // in training (a lower power cap), which divides every GEMM and attention rate the tables give;
  // and the HBM bandwidth of the GPU they were measured on (0: this GPU's), whose ratio to this
  // GPU's scales every memory-bound rate.
  double sustained_clock = 1.0;
  double tables_hbm_Bps = 0;
  double tables_hbm_scale() const { return tables_hbm_Bps > 0 && hbm_Bps > 0 ? hbm_Bps / tables_hbm_Bps : 1.0; }
  // Board power, watts: the datasheet's maximum (TDP) and what the GPU draws with a process on it
  // but no kernel running (P0 idle). 0: not known, and the report has no energy.
  double tdp_w = 0;
  double idle_w = 0;
};

// The measured tables that time flash attention's core for `kernel` at precision p on g: the ones
// asked for, else the other kernel's (either beats two GEMMs), `other` saying so; `forward` null
// where none does (no tables, or fp32/tf32), and the core is then timed as its two GEMMs.
struct AttentionTables {
  const AttentionModel* forward = nullptr;
  const AttentionModel* backward = nullptr;
  AttentionKernel kernel = AttentionKernel::cudnn;  // whose tables these are
  bool other = false;                               // not the kernel asked for
};
AttentionTables attention_tables(const GpuSpec& g, Precision p, AttentionKernel kernel);

// The host side of a node (hardware.host), read only by CPU offload (training.offload); 0: not
// given. hardware/FACTS.md section 7 cites the shipped values.
struct HostSpec {
  double link_Bps = 0;        // host link per GPU, one direction (PCIe, NVLink-C2C)
  double memory_bytes = 0;    // host memory of one node
  double memory_Bps = 0;      // the node's CPU memory bandwidth (all sockets)
  double adam_params_per_s = 0;  // the node's CPU Adam rate, parameters a second; 0: memory-bound only
  bool known() const { return link_Bps > 0 && memory_bytes > 0 && memory_Bps > 0; }
};

// The cost of scale (hardware.jitter, docs/analytic.md "The cost of scale"): how much a rank's time
// per step varies across the job's GPUs, as a relative standard deviation, of its compute and of its
// exposed communication. Fitted per fabric by `validate --fit`; 0: no wait for the slowest rank.
struct JitterSpec {
  double compute = 0;
  double link = 0;
  bool any() const { return compute > 0 || link > 0; }
};

// NCCL's algorithms and protocols as hardware and scenario files name them, in NCCL's order
// (nccl_tuner.h NCCL_ALGO_*, NCCL_PROTO_*; analytic::NcclAlgo, NcclProto): tree, ring,
// collnet_direct, collnet_chain, nvls, nvls_tree, pat; ll, ll128, simple.
const std::vector<std::string>& nccl_algo_names();
const std::vector<std::string>& nccl_proto_names();

struct HardwareSpec {
  std::string name;
  GpuSpec gpu;
  int gpus_per_node = 8;
  Link intra;    // NVLink / NVSwitch inside a node
  Link network;  // the NIC share per GPU across nodes
  Topology topology = Topology::fat_tree;
  double oversubscription = 1.0;  // of the leaf-to-spine uplinks (fat-tree); see Topology
  // The switch tiers, NICs and planes (network.tiers, .nics_per_node, .planes): where a group's
  // ranks sit in the fabric (analytic::fabric_span). rail_optimized above says whether NIC k of every
  // node shares the rail-k leaf.
  NetworkTopology fabric;
  int nics_per_node() const { return fabric.nics_per_node > 0 ? fabric.nics_per_node : gpus_per_node; }
  std::vector<CollectiveFit> collectives;  // optional, calibrated; overrides NCCL's model
  HostSpec host;
  JitterSpec jitter;
  // The job's NCCL_ALGO / NCCL_PROTO (the scenario's training.nccl): indices in NCCL's order
  // (analytic::NcclAlgo, NcclProto; nccl_algo_names, nccl_proto_names); -1: NCCL's own choice.
  struct NcclForce {
    int algo = -1;
    int proto = -1;
  } nccl;
};

}  // namespace ptdsim::core
