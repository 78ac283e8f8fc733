#pragma once
// ptdsim-calibrate: measures a node's (or, under MPI, a cluster's) NCCL collectives, cuBLASLt GEMMs,
// device copies, the slowdown of a GEMM beside a copy kernel, and the launch overhead, with CUDA
// events (docs/calibration.md). Host code against the CUDA runtime, cuBLASLt, cuRAND and NCCL; the
// few device kernels are in kernels.cu.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <nccl.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ptdsim/calibrate/measured_tables.hpp"
#include "ptdsim/calibrate/nccl_log.hpp"
#include "ptdsim/calibrate/rank_groups.hpp"
#include "ptdsim/core/hardware.hpp"

namespace ptdsim::calibrate_tool {

// A failed CUDA/NCCL/cuBLAS/cuRAND call: the tool stops with the call and its error.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check_cuda(cudaError_t e, const char* what);
void check_nccl(ncclResult_t e, const char* what);
void check_blas(cublasStatus_t s, const char* what);
void check_rand(curandStatus_t s, const char* what);
#define PTDSIM_CUDA(call) ::ptdsim::calibrate_tool::check_cuda((call), #call)
#define PTDSIM_NCCL(call) ::ptdsim::calibrate_tool::check_nccl((call), #call)
#define PTDSIM_BLAS(call) ::ptdsim::calibrate_tool::check_blas((call), #call)
#define PTDSIM_RAND(call) ::ptdsim::calibrate_tool::check_rand((call), #call)

struct Timing {
  int warmup = 5;
  int iters = 20;         // collectives and copies: operations per batch
  int repeats = 5;        // the reported time is the median over repeats of (elapsed / iterations)
  double batch_s = 0.02;  // GEMMs and contention: as many iterations as fill this (2 to 10,000)
};

// A start and a stop event on the current device.
class Events {
 public:
  Events();
  ~Events();
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  void start(cudaStream_t s);
  void stop(cudaStream_t s);
  double seconds();  // waits for the stop event

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Seconds per operation: the median over t.repeats batches of `iters` back-to-back calls of op on
// `stream`, after t.warmup untimed ones.
template <class Op>
double median_per_op(cudaStream_t stream, const Timing& t, int iters, Op op) {
  for (int w = 0; w < t.warmup; ++w) op(stream);
  Events ev;
  std::vector<double> per_op;
  for (int rep = 0; rep < std::max(1, t.repeats); ++rep) {
    ev.start(stream);
    for (int it = 0; it < iters; ++it) op(stream);
    ev.stop(stream);
    per_op.push_back(ev.seconds() / iters);
  }
  std::sort(per_op.begin(), per_op.end());
  return per_op[per_op.size() / 2];
}

// Iterations for a batch of about t.batch_s given one operation's time (2 to 10,000).
int iterations_for(const Timing& t, double one_op_s);

// ---- The ranks (team.cpp) -------------------------------------------------------------------------

// One rank as the device list of nccl-tests prints it.
struct Member {
  int pid = 0;
  int device = 0;
  char host[256] = {};
  char pci[24] = {};
  char gpu[256] = {};
};

// Every rank of the run: one process driving all of a node's GPUs, or (under mpirun/srun, when
// built with MPI) one process per GPU on any number of nodes. Ranks are numbered node by node.
struct World {
  bool mpi = false;
  int size = 0;           // ranks
  int nodes = 1;
  int per_node = 0;       // ranks on each node (the fewest, if nodes differ)
  std::vector<int> node_of, local_of;  // per rank: its node (hosts in order of first rank) and index there
  std::vector<Member> members;         // per rank
  std::vector<int> my_ranks;           // the ranks this process drives
  bool lead = true;                    // this process prints and writes (it drives rank 0)
  // per rank this process drives: its device, stream and buffers (reused by every group)
  struct Local {
    int rank = 0, device = 0;
    cudaStream_t stream = nullptr;
    float* send = nullptr;
    float* recv = nullptr;
    unsigned long long* wrong = nullptr;  // device counter of the check kernel
  };
  std::vector<Local> local;
  std::size_t buffer_bytes = 0;
};
World make_world(int gpus, std::size_t buffer_bytes);
void free_world(World& w);

// The largest value over every process (MPI_Allreduce MAX), element-wise; the sum likewise.
void max_over_world(const World& w, std::vector<double>& v);
void sum_over_world(const World& w, std::vector<unsigned long long>& v);

// The groups of ranks measured (ptdsim/calibrate/rank_groups.hpp, tested on the host).
using calibrate::Shape;
using calibrate::parse_shape;
std::vector<Shape> default_shapes(const World& w);

struct Group {
  Shape shape;
  int size = 0;
  struct Rank {
    int local = 0;  // index into World::local
    int rank = 0;   // in the group
    ncclComm_t comm = nullptr;
  };
  std::vector<Rank> mine;      // the group's ranks this process drives (none: not a member)
  std::vector<int> world_ranks;  // the group's ranks in group order, as world ranks
};
Group make_group(World& w, const Shape& s);  // collective over every process
void free_group(Group& g);

// ---- Collectives (collectives.cpp) ----------------------------------------------------------------

struct SizeSweep {
  double min_bytes = 8, max_bytes = 1073741824.0, factor = 2;
};

struct CollectiveResult {
  calibrate::NcclRun run;              // for the fit (rows with both halves' times)
  std::string text;                    // the table in nccl-tests' layout (lead only)
  unsigned long long wrong = 0;        // wrong elements over every checked size, rank and half
};
// One nccl-tests-like run of `op` on the group: every size timed out of place and in place, then run
// once more on known inputs and checked element by element (the #wrong columns). Every process calls
// it; the result is complete on the lead.
CollectiveResult measure_collective(World& w, Group& g, core::Collective op, const SizeSweep& sweep,
                                    const Timing& t);

// One checked run of `op` at `bytes` (nccl-tests' size): the wrong elements over every rank. With
// `corrupt`, one element of group rank 0's output is overwritten before the check, which must then
// count exactly one more (the self-check). Every process calls it.
unsigned long long checked_run(World& w, Group& g, core::Collective op, double bytes, bool in_place, bool corrupt);

// ---- GEMMs, copies, launches (gemm.cpp) -----------------------------------------------------------

// C = A B through cuBLASLt on random normal inputs (cuRAND), in the layout nn.Linear runs:
// y[m,n] = x[m,k] W[n,k]^T. The heuristic's first `algos` candidates are each timed and the
// fastest kept, the way cuBLAS autotuning and MAMF (Bekman's mamf-finder) pick one.
class Gemm {
 public:
  Gemm(int device, core::Precision p, long long m, long long n, long long k, int algos, const Timing& t,
       unsigned long long seed);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  bool usable() const { return usable_; }
  const std::string& why_not() const { return why_not_; }
  int candidates() const { return candidates_; }
  void run(cudaStream_t stream);
  double seconds(const Timing& t);  // median seconds per GEMM on the Gemm's own stream
  cudaStream_t stream() const { return stream_; }
  // The inputs and the output, copied to the host as floats (the self-check's reference GEMM).
  void download(std::vector<float>& a, std::vector<float>& b, std::vector<float>& d) const;

 private:
  void setup(int algos, const Timing& t, unsigned long long seed);
  void release();
  int device_;
  core::Precision precision_;
  long long m_, n_, k_;
  bool usable_ = false;
  std::string why_not_;
  int candidates_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void *a_ = nullptr, *b_ = nullptr, *d_ = nullptr, *work_ = nullptr;
  float* scale_ = nullptr;
  std::size_t work_bytes_ = 32u << 20;
};

// The precision a GPU of compute capability `sm` (major * 10 + minor) runs, "" or why not.
std::string unsupported(core::Precision p, int sm);

// Device-to-device cudaMemcpyAsync of `bytes`: bytes read + written per second.
double measure_copy_Bps(int device, double bytes, const Timing& t);
// Back-to-back 4-byte cudaMemsetAsync: the per-operation cost of the smallest stream operation,
// standing in for the kernel launch overhead.
double measure_launch_s(int device, const Timing& t);

// ---- Contention (contention.cpp) ------------------------------------------------------------------

// A bf16 GEMM alone and beside the copy kernel on each of `blocks` thread-block counts (NCCL's
// channels each hold one SM), and the copy alone and beside the GEMM: contention.csv's rows.
std::vector<calibrate::ContentionRow> measure_contention(int device, const std::vector<int>& blocks, int algos,
                                                         const Timing& t, const std::string& gpu);

// ---- Self-check (self_check.cpp) ------------------------------------------------------------------

// Checks what the measurements rest on, on this machine's GPUs: each collective's verification
// passes on a correct result and counts exactly one wrong element when one is corrupted; the GEMM
// (every precision the GPU runs) matches a host reference; the random inputs are not constant; the
// copy kernel copies. Prints a line per check; returns the number of failures.
int self_check(World& w, const std::vector<core::Collective>& ops, const std::vector<core::Precision>& precisions);

}  // namespace ptdsim::calibrate_tool
