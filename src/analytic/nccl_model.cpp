#include "ptdsim/analytic/nccl_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

#include "ptdsim/core/gpu_name.hpp"

namespace ptdsim::analytic {

namespace {

using C = core::Collective;
constexpr int kTree = 0, kRing = 1, kCollnetDirect = 2, kCollnetChain = 3, kNvls = 4, kNvlsTree = 5, kPat = 6;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kNvlinkHw = 0, kPciHw = 1, kNetHw = 2;

// NCCL's default tuner constants (tuning.cc, ncclTunerConstantsDefaults), microseconds and GB/s.
// Base latency per algorithm and protocol (LL, LL128, Simple).
constexpr double kBaseLat[kNcclAlgoCount][kNcclProtoCount] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
// Latency per hop by link type (NVLink, PCI, network), algorithm and protocol.
constexpr double kHwLat[3][kNcclAlgoCount][kNcclProtoCount] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
// Caps per GPU class (Volta, Ampere, Hopper, Blackwell) and node count (1, 2, more).
// LL: for one node the GPU class, across nodes the CPU vendor (Intel row 0, AMD row 1).
constexpr double kLLMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}};
constexpr double kPerChMaxRingLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChMaxTreeLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChMaxTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChMaxNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// The tree all-reduce's correction by message size (powers of two from 64 B), per protocol.
constexpr double kTreeCorrection[kNcclProtoCount][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// NCCL's log2i: floor(log2(n)), -1 for n <= 0.
int log2i(long long n) { return n <= 0 ? -1 : static_cast<int>(std::bit_width(static_cast<unsigned long long>(n))) - 1; }

bool is_ag_rs(C op) { return op == C::all_gather || op == C::reduce_scatter; }
}  // namespace

bool nccl_tuned(C op) {
  return op == C::all_reduce || op == C::all_gather || op == C::reduce_scatter || op == C::broadcast ||
         op == C::reduce;
}

namespace {

// NCCL's enable rules for an algorithm on a communicator (ncclTopoTuneModel's disable loop, the
// NVLS channel and PAT conditions).
bool algo_enabled(const NcclComm& c, int a) {
  switch (a) {
    case kNvlsTree: return c.nvls && c.nodes > 1;
    case kNvls: return c.nvls && (c.nodes == 1 || c.collnet);
    case kCollnetDirect: return c.collnet && c.nvswitch;
    case kCollnetChain: return c.collnet;
    default: return true;
  }
}

// LL128 by default on NVLink inside the node (Hopper and later up to PXN across it, earlier up to PXB):
// the GPU-NIC paths of the shipped systems qualify, so NVLink alone decides here.
bool proto_enabled(const NcclComm& c, int p) { return p != kLL128 || c.nvlink; }

}  // namespace

const char* name(NcclAlgo a) {
  static const char* const n[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return n[static_cast<int>(a)];
}
const char* name(NcclProto p) {
  static const char* const n[] = {"ll", "ll128", "simple"};
  return n[static_cast<int>(p)];
}

NcclCost nccl_cost(const NcclComm& c, C op, NcclAlgo algo, NcclProto proto) {
  const int a = static_cast<int>(algo), p = static_cast<int>(proto);
  NcclCost out;
  if (!nccl_tuned(op) || c.ranks <= 1) return out;
  // the pairs NCCL models for each collective
  if ((op == C::broadcast || op == C::reduce) && a != kRing) return out;
  if (is_ag_rs(op) && a != kPat && a != kRing && a != kNvls && a != kCollnetDirect) return out;
  if (op == C::all_reduce && a == kPat) return out;
  if ((a == kNvls || a == kNvlsTree) && p != kSimple) return out;
  if (a == kPat && (p != kSimple || c.nodes != c.ranks)) return out;  // PAT: one GPU per node
  if (!algo_enabled(c, a) || !proto_enabled(c, p)) return out;

  const int n = c.ranks, nodes = std::max(1, c.nodes);
  const int arch = static_cast<int>(c.arch);
  const int idx2 = nodes <= 2 ? nodes - 1 : 2;
  const int idx1 = nodes == 1 ? arch : (c.amd_cpu ? 1 : 0);
  const double ppn = static_cast<double>(n) / nodes;
  const int nsteps = op == C::all_reduce ? 2 * (n - 1) : is_ag_rs(op) ? n - 1 : n;
  const int ch = std::max(1, c.channels);
  const bool collnet = a == kCollnetDirect || a == kCollnetChain;
  // one node: the search's inter bandwidth is its intra one
  const double bw_inter = nodes == 1 ? c.bw_intra_GBs : c.bw_inter_GBs;

  // Bandwidth (tuning.cc "Various model refinements")
  // NCCL reads bwIntra for up to two nodes; across nodes the ring's and tree's channel graph runs at
  // its network speed (the search sets bwIntra = bwInter there), which this communicator keeps apart
  double bw = collnet ? c.bw_intra_GBs : bw_inter;
  if (a == kNvls || a == kNvlsTree) {
    if (ch < 2) return out;
    double intra = c.bw_intra_GBs * kNvlsEfficiency[arch] * (ch - 1) / ch;
    intra *= op == C::all_reduce ? 2.0 : (ppn - 1) / ppn;  // all-reduce pipelines two operations
    const double inter = bw_inter * (nodes <= 2 && a == kNvlsTree ? 2 : 1);
    bw = std::min({intra, inter, a == kNvlsTree ? kPerChMaxNvlsTreeBw[arch][idx2] : std::numeric_limits<double>::max()});
  }
  double bus = ch * bw;
  if (a == kRing && p == kLL) bus = std::min(kLLMaxBw[idx1][idx2], bus * .5);
  if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, ch * kPerChMaxRingLL128Bw[arch][idx2]);
  if (a == kTree && op == C::all_reduce) bus = std::min(bus * .92, ch * kPerChMaxTreeBw[arch][idx2]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, kLLMaxBw[idx1][idx2]);
  if (a == kTree && p == kLL128) bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kPerChMaxTreeLL128Bw[arch][idx2]);
  if (a == kPat) bus *= .75;
  if (collnet && p != kSimple) bus = 0;
  if (a == kCollnetDirect && p == kSimple) {
    if (is_ag_rs(op)) {
      bus = ppn * std::min(c.bw_intra_GBs, bw_inter * 0.9);
    } else {
      double factor = ppn / ch;  // GPUs per NIC head: full speed needs a NIC per GPU
      factor -= (factor - 1) / 2;
      bus /= factor;
      if (arch >= static_cast<int>(NcclArch::hopper)) bus *= .85;
    }
  }
  // across nodes, NVLS and CollNet all-gather / reduce-scatter need a CollNet plugin's: none here
  if ((a == kNvls || a == kCollnetDirect) && is_ag_rs(op) && nodes > 1) bus = 0;
  // bus bandwidth to algorithm bandwidth
  if (!(a != kRing && is_ag_rs(op))) bus *= a == kRing || a == kNvls || a == kNvlsTree ? static_cast<double>(n) / nsteps : .5;
  out.bw_GBs = bus;
  if (bus <= 0) return out;

  // Latency
  const int intra_hw = c.nvlink ? kNvlinkHw : kPciHw;
  double lat = kBaseLat[a][p];
  double intra_lat = kHwLat[intra_hw][a][p];
  double inter_lat = (ppn == 1 ? kHwLat[kNetHw][kTree][p] : kHwLat[kNetHw][a][p]) + c.latency_inter_us;
  if (p == kSimple) inter_lat += c.latency_inter_us;  // the flush
  inter_lat += c.switches_us;
  const int ppn_i = n / nodes;
  switch (a) {
    case kRing:
      if (op == C::reduce || op == C::broadcast) {
        lat += kHwLat[nodes == 1 ? intra_hw : kNetHw][a][p];  // the channels are the same (sameChannels)
      } else {
        // an inter-node ring still launches each step through the network proxy
        double overhead = 0;
        if (nodes > 1) overhead = (c.amd_cpu ? 2.0 : 1.0) * (p == kSimple ? 3 : 1);
        intra_lat = std::max(intra_lat, overhead);
        const int inter_steps = nodes == 1 ? 0 : op == C::all_reduce ? 2 * (nodes - 1) : nodes - 1;
        lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
      }
      break;
    case kTree:
      if (op == C::all_reduce) lat += 2 * ((ppn_i - 1) * intra_lat + log2i(nodes) * inter_lat);
      break;
    case kCollnetDirect:
      lat += 2 * (std::min(1, ppn_i - 1) * intra_lat + (ppn_i - 1) * 0.4) + inter_lat;  // 0.4 us arity serialization
      break;
    case kCollnetChain: lat += 2 * (ppn_i - 1) * intra_lat + inter_lat; break;
    case kNvls: lat = intra_lat + (nodes > 1 ? inter_lat : 0); break;
    case kNvlsTree: lat += intra_lat + 2 * log2i(nodes) * inter_lat; break;
    case kPat:
      if (is_ag_rs(op)) lat += log2i(nodes) * (inter_lat / 3.5) + n * 2.8;
      break;
  }
  out.latency_us = lat;
  return out;
}

namespace {

// ncclTopoGetAlgoTime's latency and bandwidth for `bytes`: the tree's size correction and the
// ring's plateau; bw 0 when the pair is not used.
NcclCost corrected(const NcclComm& c, C op, NcclAlgo algo, NcclProto proto, double bytes, NcclCost k) {
  if (k.bw_GBs <= 0) return k;
  const auto nbytes = static_cast<long long>(std::max(0.0, bytes));
  const int log_size = log2i(nbytes >> 6);
  const int p = static_cast<int>(proto);
  if (algo == NcclAlgo::tree && op == C::all_reduce && log_size >= 0 && log_size < 23) k.bw_GBs *= kTreeCorrection[p][log_size];
  if (algo == NcclAlgo::nvls_tree && op == C::all_reduce && log_size >= 0 && log_size < 24 &&
      c.arch >= NcclArch::blackwell && c.x86_host)
    k.bw_GBs *= kTreeCorrection[p][log_size];
  if (algo == NcclAlgo::ring && proto == NcclProto::simple && c.nodes > 1 && op == C::all_reduce &&
      nbytes / (static_cast<long long>(std::max(1, c.channels)) * c.ranks) >= 64)
    k.latency_us *= c.arch < NcclArch::ampere ? 1.9 : 1.4;  // the ring's plateau
  return k;
}

NcclCost corrected(const NcclComm& c, C op, NcclAlgo algo, NcclProto proto, double bytes) {
  return corrected(c, op, algo, proto, bytes, nccl_cost(c, op, algo, proto));
}

// Every pair's cost for a communicator and collective (they do not depend on the size), kept for
// the last few seen: a step asks the same few groups many times, a sweep the same groups across
// its candidates. Direct-mapped by a hash of the communicator.
struct CostsEntry {
  bool used = false;
  NcclComm comm;
  C op = C::all_reduce;
  NcclCost k[kNcclAlgoCount][kNcclProtoCount];
};

std::size_t mix(std::size_t h, std::size_t x) { return h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

const CostsEntry& costs(const NcclComm& c, C op) {
  constexpr std::size_t kSlots = 64;
  thread_local CostsEntry table[kSlots];
  std::size_t h = mix(static_cast<std::size_t>(op), static_cast<std::size_t>(c.ranks));
  h = mix(h, static_cast<std::size_t>(c.nodes));
  h = mix(h, static_cast<std::size_t>(c.channels));
  h = mix(h, std::hash<double>{}(c.bw_intra_GBs));
  h = mix(h, std::hash<double>{}(c.bw_inter_GBs));
  CostsEntry& e = table[h % kSlots];
  if (!e.used || e.op != op || !(e.comm == c)) {
    e.used = true;
    e.comm = c;
    e.op = op;
    for (int a = 0; a < kNcclAlgoCount; ++a)
      for (int p = 0; p < kNcclProtoCount; ++p)
        e.k[a][p] = nccl_cost(c, op, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p));
  }
  return e;
}

}  // namespace

double nccl_time_us(const NcclComm& c, C op, NcclAlgo algo, NcclProto proto, double bytes) {
  const NcclCost k = corrected(c, op, algo, proto, bytes);
  if (k.bw_GBs <= 0) return -1;
  return k.latency_us + static_cast<double>(static_cast<long long>(std::max(0.0, bytes))) / (1000 * k.bw_GBs);
}

namespace {

// NCCL's choice for one (communicator, collective, size, forced pair), kept for the last few seen:
// a step asks the same few collectives of the same sizes for every layer and pass, and scanning the
// 18 pairs with their size corrections is most of a collective's cost. Direct-mapped, as costs().
struct ChoiceEntry {
  bool used = false;
  NcclComm comm;
  C op = C::all_reduce;
  long long nbytes = 0;
  int algo = -1, proto = -1;
  NcclChoice choice;
};

NcclChoice choose_uncached(const NcclComm& c, C op, double bytes, int algo, int proto);

}  // namespace

NcclChoice nccl_choose(const NcclComm& c, C op, double bytes, int algo, int proto) {
  if (c.ranks <= 1) return NcclChoice{};
  constexpr std::size_t kSlots = 64;
  thread_local ChoiceEntry table[kSlots];
  const auto nbytes = static_cast<long long>(std::max(0.0, bytes));
  std::size_t h = mix(static_cast<std::size_t>(op), static_cast<std::size_t>(c.ranks));
  h = mix(h, static_cast<std::size_t>(c.nodes));
  h = mix(h, static_cast<std::size_t>(nbytes));
  h = mix(h, static_cast<std::size_t>(algo + 2 * (proto + 2)));
  h = mix(h, std::bit_cast<std::uint64_t>(c.bw_inter_GBs));
  // the sizes are multiples of large powers of two, so the slot is taken from the high bits of a
  // multiplicative hash, where every bit of the key has reached
  ChoiceEntry& e = table[(h * 0x9e3779b97f4a7c15ULL) >> 58];
  static_assert(kSlots == 64, "the slot is the top 6 bits");
  if (!e.used || e.op != op || e.nbytes != nbytes || e.algo != algo || e.proto != proto || !(e.comm == c)) {
    e.used = true;
    e.comm = c;
    e.op = op;
    e.nbytes = nbytes;
    e.algo = algo;
    e.proto = proto;
    e.choice = choose_uncached(c, op, bytes, algo, proto);
  }
  return e.choice;
}

namespace {

NcclChoice choose_uncached(const NcclComm& c, C op, double bytes, int algo, int proto) {
  NcclChoice best;
  const double nbytes = static_cast<double>(static_cast<long long>(std::max(0.0, bytes)));
  const CostsEntry& e = costs(c, op);
  for (int a = 0; a < kNcclAlgoCount; ++a) {
    if (algo >= 0 && a != algo) continue;
    for (int p = 0; p < kNcclProtoCount; ++p) {
      if (proto >= 0 && p != proto) continue;
      const NcclCost k = corrected(c, op, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p), bytes, e.k[a][p]);
      if (k.bw_GBs <= 0) continue;
      const double t = k.latency_us + nbytes / (1000 * k.bw_GBs);
      if (best.valid && t >= best.time_us) continue;
      best = NcclChoice{true, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p), t, k.latency_us, k.bw_GBs};
    }
  }
  return best;
}

}  // namespace

NcclComm nccl_comm(const core::HardwareSpec& hw, const Group& g) {
  NcclComm c;
  c.ranks = g.ranks;
  const int ppn = std::max(1, std::min(g.ranks, g.ranks_per_node));
  c.nodes = std::max(1, (g.ranks + ppn - 1) / ppn);
  // the GPU's class from its name, kept for the last name seen: every collective of a step asks
  struct Known {
    std::string name;
    NcclArch arch = NcclArch::ampere;
    bool x86 = true;
    bool set = false;
  };
  thread_local Known known;
  if (!known.set || known.name != hw.gpu.name) {
    const std::string part = core::gpu_part(hw.gpu.name);
    auto has = [&](const char* s) { return part.find(s) != std::string::npos; };
    known.arch = has("B200") || has("B300") || has("GB200") || has("GB300") ? NcclArch::blackwell
                 : has("H100") || has("H200") || has("H800") || has("H20") || has("GH200") ? NcclArch::hopper
                 : has("V100") ? NcclArch::volta
                               : NcclArch::ampere;
    known.x86 = !(has("GH200") || has("GB200") || has("GB300"));
    known.name = hw.gpu.name;
    known.set = true;
  }
  c.arch = known.arch;
  c.x86_host = known.x86;
  // a link faster than PCIe Gen5 x16 (64 GB/s a direction) is NVLink; NVSwitch boards since Ampere
  c.nvlink = hw.intra.bandwidth_Bps > 64e9;
  c.nvswitch = c.nvlink && c.arch >= NcclArch::ampere;
  c.nvls = c.nvswitch && c.arch >= NcclArch::hopper;
  c.channels = hw.gpu.comm_sms > 0 ? hw.gpu.comm_sms : 16;
  const double nvlink = hw.intra.bandwidth_Bps * hw.intra.efficiency / 1e9;
  c.bw_intra_GBs = nvlink / c.channels;
  // the channels cross the node's NICs: the NIC share of the group's GPUs on a node, never above NVLink
  double spine = hw.topology == core::Topology::fat_tree ? std::max(1.0, hw.oversubscription) : 1.0;
  // the tiers below the highest one the group crosses send its traffic up their uplinks; every tier
  // above the leaf adds a switch on the way up and one on the way down to each network hop
  const auto& tiers = hw.fabric.tiers;
  double switches_s = 0;
  for (int t = 0; t < static_cast<int>(tiers.size()) && t <= g.span.top; ++t) {
    if (t < g.span.top) spine = std::max(spine, tiers[t].oversubscription);
    if (t > 0) switches_s += 2 * tiers[t].latency_s;
  }
  c.switches_us = switches_s * 1e6;
  const double nic = hw.network.bandwidth_Bps * hw.network.efficiency / spine / 1e9;
  c.bw_inter_GBs = std::min(nvlink, ppn * nic) / c.channels;
  return c;
}

}  // namespace ptdsim::analytic
