// The ranks of a ptdsim-calibrate run and the groups its collectives run on: one process driving a
// node's GPUs, or one process per GPU under mpirun/srun (built with MPI), split into groups of a
// given number of nodes and ranks per node.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "bench.hpp"
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
void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw DeviceError(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
void check_rand(curandStatus_t s, const char* what) {
  if (s != CURAND_STATUS_SUCCESS) throw DeviceError(std::string(what) + ": cuRAND status " + std::to_string(s));
}

Events::Events() {
  PTDSIM_CUDA(cudaEventCreate(&start_));
  PTDSIM_CUDA(cudaEventCreate(&stop_));
}
Events::~Events() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}
void Events::start(cudaStream_t s) { PTDSIM_CUDA(cudaEventRecord(start_, s)); }
void Events::stop(cudaStream_t s) { PTDSIM_CUDA(cudaEventRecord(stop_, s)); }
double Events::seconds() {
  PTDSIM_CUDA(cudaEventSynchronize(stop_));
  float ms = 0;
  PTDSIM_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return ms * 1e-3;
}

int iterations_for(const Timing& t, double one_op_s) {
  // two at least, so a batch is never one call's launch latency; 10,000 at most
  const double wanted = one_op_s > 0 ? t.batch_s / one_op_s : 2;
  return static_cast<int>(std::clamp(std::ceil(wanted), 2.0, 10000.0));
}

namespace {

Member describe(int device) {
  Member m;
  m.pid = static_cast<int>(getpid());
  m.device = device;
  gethostname(m.host, sizeof m.host - 1);
  cudaDeviceProp prop{};
  PTDSIM_CUDA(cudaGetDeviceProperties(&prop, device));
  std::snprintf(m.gpu, sizeof m.gpu, "%s", prop.name);
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) {
    // "0000:1B:00.0" -> "0000:1b:00", as nccl-tests prints it
    std::string b(bus);
    b = b.substr(0, b.rfind('.'));
    for (auto& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::snprintf(m.pci, sizeof m.pci, "%s", b.c_str());
  }
  return m;
}

// Nodes in order of their first rank, each rank's index on its node.
void place(World& w) {
  std::map<std::string, int> node_index;
  std::vector<int> on_node;
  w.node_of.assign(static_cast<std::size_t>(w.size), 0);
  w.local_of.assign(static_cast<std::size_t>(w.size), 0);
  for (int r = 0; r < w.size; ++r) {
    const std::string host = w.members[static_cast<std::size_t>(r)].host;
    auto [it, added] = node_index.emplace(host, static_cast<int>(node_index.size()));
    if (added) on_node.push_back(0);
    w.node_of[static_cast<std::size_t>(r)] = it->second;
    w.local_of[static_cast<std::size_t>(r)] = on_node[static_cast<std::size_t>(it->second)]++;
  }
  w.nodes = static_cast<int>(on_node.size());
  w.per_node = *std::min_element(on_node.begin(), on_node.end());
}

}  // namespace

World make_world(int gpus, std::size_t buffer_bytes) {
  World w;
  int visible = 0;
  PTDSIM_CUDA(cudaGetDeviceCount(&visible));
  if (visible == 0) throw DeviceError("no CUDA device visible");
#ifdef PTDSIM_CALIBRATE_MPI
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size > 1) {
    // one process per GPU: the node-local rank picks the device
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    const Member me = describe(local % visible);
    w.mpi = true;
    w.size = size;
    w.members.resize(static_cast<std::size_t>(size));
    MPI_Allgather(&me, sizeof(Member), MPI_BYTE, w.members.data(), sizeof(Member), MPI_BYTE, MPI_COMM_WORLD);
    w.my_ranks = {rank};
    w.lead = rank == 0;
  }
#endif
  if (!w.mpi) {
    const int n = gpus > 0 ? std::min(gpus, visible) : visible;
    w.size = n;
    for (int d = 0; d < n; ++d) {
      w.members.push_back(describe(d));
      w.my_ranks.push_back(d);
    }
  }
  place(w);
  w.buffer_bytes = buffer_bytes;
  for (int r : w.my_ranks) {
    World::Local l;
    l.rank = r;
    l.device = w.members[static_cast<std::size_t>(r)].device;
    PTDSIM_CUDA(cudaSetDevice(l.device));
    PTDSIM_CUDA(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&l.send), buffer_bytes));
    PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&l.recv), buffer_bytes));
    PTDSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&l.wrong), sizeof(unsigned long long)));
    w.local.push_back(l);
  }
  return w;
}

void free_world(World& w) {
  for (auto& l : w.local) {
    cudaSetDevice(l.device);
    cudaFree(l.send);
    cudaFree(l.recv);
    cudaFree(l.wrong);
    cudaStreamDestroy(l.stream);
  }
  w.local.clear();
}

void max_over_world(const World& w, std::vector<double>& v) {
#ifdef PTDSIM_CALIBRATE_MPI
  if (w.mpi && !v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#else
  (void)w;
  (void)v;
#endif
}

void sum_over_world(const World& w, std::vector<unsigned long long>& v) {
#ifdef PTDSIM_CALIBRATE_MPI
  if (w.mpi && !v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
#else
  (void)w;
  (void)v;
#endif
}

std::vector<Shape> default_shapes(const World& w) {
  return calibrate::default_shapes(w.size, w.nodes, w.per_node);
}

Group make_group(World& w, const Shape& s) {
  if (s.nodes > w.nodes || s.per_node > w.per_node || s.ranks() < 1) {
    throw DeviceError("a group of " + std::to_string(s.nodes) + " x " + std::to_string(s.per_node) +
                      " ranks needs more than the " + std::to_string(w.nodes) + " x " + std::to_string(w.per_node) +
                      " this run has");
  }
  Group g;
  g.shape = s;
  g.size = s.ranks();
  for (int node = 0; node < s.nodes; ++node) {
    for (int local = 0; local < s.per_node; ++local) {
      for (int r = 0; r < w.size; ++r) {
        if (w.node_of[static_cast<std::size_t>(r)] == node && w.local_of[static_cast<std::size_t>(r)] == local)
          g.world_ranks.push_back(r);
      }
    }
  }
  if (w.mpi) {
#ifdef PTDSIM_CALIBRATE_MPI
    // every process takes part in the split; the group's first rank makes the NCCL id and sends it
    // to the others, which join it under their group rank (any NCCL 2 version does this)
    const int r = w.my_ranks.front();
    const int node = w.node_of[static_cast<std::size_t>(r)], local = w.local_of[static_cast<std::size_t>(r)];
    const bool member = node < s.nodes && local < s.per_node;
    const int key = node * s.per_node + local;
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, key, &sub);
    if (member) {
      ncclUniqueId id;
      if (key == 0) PTDSIM_NCCL(ncclGetUniqueId(&id));
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, sub);
      MPI_Comm_free(&sub);
      ncclComm_t comm = nullptr;
      PTDSIM_CUDA(cudaSetDevice(w.local.front().device));
      PTDSIM_NCCL(ncclCommInitRank(&comm, g.size, id, key));
      g.mine.push_back({0, key, comm});
    }
#endif
  } else {
    std::vector<int> devices;
    for (int i = 0; i < s.per_node; ++i) devices.push_back(w.local[static_cast<std::size_t>(i)].device);
    std::vector<ncclComm_t> comms(devices.size());
    PTDSIM_NCCL(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
    for (int i = 0; i < s.per_node; ++i) g.mine.push_back({i, i, comms[static_cast<std::size_t>(i)]});
  }
  return g;
}

void free_group(Group& g) {
  for (auto& m : g.mine) ncclCommDestroy(m.comm);
  g.mine.clear();
}

}  // namespace ptdsim::calibrate_tool
