#pragma once
#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/core/hardware.hpp"

// NCCL's own performance model: the latency and bandwidth its tuner predicts for each algorithm and
// protocol of a collective, and the pair it picks (the least predicted time), as NCCL computes them
// in src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime; NVIDIA/nccl at 5067397, 2026-06).
// The constants are NCCL's; docs/analytic.md "NCCL's algorithms and protocols" cites each.
namespace ptdsim::analytic {

// NCCL's algorithms and protocols, in NCCL's order (nccl_tuner.h: NCCL_ALGO_*, NCCL_PROTO_*).
enum class NcclAlgo { tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat };
inline constexpr int kNcclAlgoCount = 7;
enum class NcclProto { ll, ll128, simple };
inline constexpr int kNcclProtoCount = 3;
const char* name(NcclAlgo a);
const char* name(NcclProto p);

// The compute-capability classes NCCL's tables are indexed by.
enum class NcclArch { volta, ampere, hopper, blackwell };

// What NCCL's tuner knows of a communicator: its ranks and nodes, the GPUs' class, and the channel
// graph its topology search found (channels, bandwidth per channel inside and across nodes).
struct NcclComm {
  int ranks = 1;
  int nodes = 1;
  NcclArch arch = NcclArch::hopper;
  bool amd_cpu = false;      // NCCL's LL bandwidth and network overhead differ for AMD hosts
  bool x86_host = true;      // an x86 host (not Grace): Blackwell's NVLS tree takes the tree's size correction
  bool nvlink = true;        // the intra-node graph runs over NVLink (else PCI latencies, no LL128)
  bool nvswitch = true;      // an NVSwitch: CollNet Direct possible
  bool nvls = false;         // NVLink SHARP (NVSwitch on Hopper and Blackwell)
  bool collnet = false;      // in-network reduction (SHARP) enabled: NCCL_COLLNET_ENABLE=1 with its plugin
  int channels = 16;
  double bw_intra_GBs = 0;   // per channel: graph->bwIntra
  double bw_inter_GBs = 0;   // per channel: graph->bwInter
  double latency_inter_us = 0;  // graph->latencyInter (the network plugin's; 0 on InfiniBand)
  double switches_us = 0;       // the switch tiers above the leaf a network hop crosses, up and down
  bool operator==(const NcclComm&) const = default;
};

// NCCL's predictions for one (collective, algorithm, protocol): latency in microseconds and the
// bandwidth in GB/s that divides the message (NCCL's "bandwidth": bus bandwidth converted to
// algorithm bandwidth). bw 0: NCCL would not use the pair.
struct NcclCost {
  double latency_us = 0;
  double bw_GBs = 0;
};
// Collectives NCCL's tuner models (ncclFunc*): all-reduce, all-gather, reduce-scatter, broadcast,
// reduce. Others (all-to-all, send/recv) run as point-to-point and get bw 0 here.
bool nccl_tuned(core::Collective op);
NcclCost nccl_cost(const NcclComm& c, core::Collective op, NcclAlgo a, NcclProto p);
// NCCL's time for `bytes` (ncclTopoGetAlgoTime: its tree and ring corrections), microseconds; < 0
// when the pair is not used.
double nccl_time_us(const NcclComm& c, core::Collective op, NcclAlgo a, NcclProto p, double bytes);

// The pair NCCL picks: the least predicted time among the pairs it enables; `algo` / `proto`, when
// set (>= 0), restrict the choice as NCCL_ALGO / NCCL_PROTO do. valid false when nothing is enabled.
struct NcclChoice {
  bool valid = false;
  NcclAlgo algo = NcclAlgo::ring;
  NcclProto proto = NcclProto::simple;
  double time_us = 0;
  // the pair's time as a line at this size: time_us = latency_us + bytes / (1000 * bw_GBs) (its
  // latency and bandwidth after ncclTopoGetAlgoTime's corrections)
  double latency_us = 0;
  double bw_GBs = 0;
};
NcclChoice nccl_choose(const NcclComm& c, core::Collective op, double bytes, int algo = -1, int proto = -1);

// The communicator a group of the scenario's hardware forms (docs/analytic.md): its ranks and
// nodes, the GPU's class from its name, channels = gpu.comm_sms (one thread block per channel),
// the NVLink bandwidth times its efficiency and the node's NIC bandwidth shared by the channels
// (divided by the oversubscription of a fat tree and of every switch tier whose uplinks the group's
// span uses); the network hop adds two traversals of each switch tier above the leaf it crosses;
// a Grace host (GH200, GB200, GB300) is not x86.
NcclComm nccl_comm(const core::HardwareSpec& hw, const Group& g);

}  // namespace ptdsim::analytic
