#include <catch2/catch.hpp>

#include "ptdsim/analytic/nccl_model.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Collective;

// Hand-worked cases of NCCL's tuning model (src/graph/tuning.cc, NVIDIA/nccl 5067397): every number
// below is the formula of tuning.cc on NCCL's default constants, worked by hand.
namespace {

// A DGX H100 as nccl_comm sees it: 16 channels (comm_sms), NVLink 450 GB/s x 0.82 = 369 GB/s shared
// by them (23.0625 each); across nodes the 8 NICs of a node, 47 GB/s each (50 x 0.94): 376, capped at
// NVLink's 369 -> 23.0625 a channel. Intel hosts.
NcclComm h100(int ranks, int nodes) {
  NcclComm c;
  c.ranks = ranks;
  c.nodes = nodes;
  c.arch = NcclArch::hopper;
  c.nvls = true;
  c.channels = 16;
  c.bw_intra_GBs = 369.0 / 16;
  c.bw_inter_GBs = std::min(369.0, 8 * 47.0 * ranks / nodes / 8) / 16;
  return c;
}

}  // namespace

TEST_CASE("nccl model: ring all-reduce inside a node", "[analytic][nccl]") {
  const auto c = h100(8, 1);
  // Simple: busBw = 16 x 23.0625 = 369; algorithm bandwidth = 369 x n/nsteps = 369 x 8/14 = 210.857
  // latency = base 8.4 + nsteps 14 x NVLink ring hop 3.4 = 56.0 us
  const auto k = nccl_cost(c, Collective::all_reduce, NcclAlgo::ring, NcclProto::simple);
  CHECK(k.bw_GBs == Approx(369.0 * 8 / 14).epsilon(1e-9));
  CHECK(k.latency_us == Approx(56.0).epsilon(1e-9));
  // 1e9 bytes: 56 + 1e9 / (1000 x 210.857) = 56 + 4742.5 us (one node: no ring plateau)
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::ring, NcclProto::simple, 1e9) ==
        Approx(56.0 + 1e9 / (1000 * 369.0 * 8 / 14)).epsilon(1e-9));
  // LL: half the bus bandwidth, capped by llMaxBw (Hopper, one node: 141): min(141, 184.5) x 8/14;
  // latency 6.6 + 14 x 0.6 = 15.0
  const auto ll = nccl_cost(c, Collective::all_reduce, NcclAlgo::ring, NcclProto::ll);
  CHECK(ll.bw_GBs == Approx(141.0 * 8 / 14).epsilon(1e-9));
  CHECK(ll.latency_us == Approx(15.0).epsilon(1e-9));
  // LL128: min(369 x 0.92, 16 x 36.7) = 339.48, x 8/14; latency 14.0 + 14 x 1.9 = 40.6
  const auto ll128 = nccl_cost(c, Collective::all_reduce, NcclAlgo::ring, NcclProto::ll128);
  CHECK(ll128.bw_GBs == Approx(339.48 * 8 / 14).epsilon(1e-9));
  CHECK(ll128.latency_us == Approx(40.6).epsilon(1e-9));
}

TEST_CASE("nccl model: tree all-reduce across 16 nodes", "[analytic][nccl]") {
  const auto c = h100(128, 16);
  // Simple: busBw 369, the tree's all-reduce min(369 x 0.92, 16 x perChMaxTreeBw 36.0) = 339.48,
  // x 0.5 = 169.74; latency 8.4 + 2 x ((8 - 1) x NVLink 4.0 + log2(16) x network 14) = 176.4 us
  const auto k = nccl_cost(c, Collective::all_reduce, NcclAlgo::tree, NcclProto::simple);
  CHECK(k.bw_GBs == Approx(169.74).epsilon(1e-9));
  CHECK(k.latency_us == Approx(176.4).epsilon(1e-9));
  // 1e9 bytes: log2((1e9 >> 6)) = 23, past the correction table: 176.4 + 1e9 / 169740
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::tree, NcclProto::simple, 1e9) ==
        Approx(176.4 + 1e9 / (1000 * 169.74)).epsilon(1e-9));
  // 1 MiB: log2(16384) = 14, Simple's correction 0.5: 176.4 + 1048576 / (1000 x 84.87)
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::tree, NcclProto::simple, 1048576) ==
        Approx(176.4 + 1048576 / (1000 * 169.74 * 0.5)).epsilon(1e-9));
  // the ring on the same communicator: 369 x 128/254; latency 8.4 + (254 - 30) x 3.4 + 30 x 14 =
  // 1190.0, times the plateau 1.4 at 1e9 bytes (1e9 / (16 x 128) >= 64)
  const auto ring = nccl_cost(c, Collective::all_reduce, NcclAlgo::ring, NcclProto::simple);
  CHECK(ring.latency_us == Approx(1190.0).epsilon(1e-9));
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::ring, NcclProto::simple, 1e9) ==
        Approx(1190.0 * 1.4 + 1e9 / (1000 * 369.0 * 128 / 254)).epsilon(1e-9));
}

TEST_CASE("nccl model: NVLS and NVLS tree", "[analytic][nccl]") {
  SECTION("one node: NVLS all-reduce") {
    const auto c = h100(8, 1);
    // intra = 23.0625 x 0.85 x 15/16 x 2 = 36.756; capped by the (one-node) inter bandwidth 23.0625;
    // busBw 369 x 8/14; latency: NVLink's NVLS hop alone, 25 us
    const auto k = nccl_cost(c, Collective::all_reduce, NcclAlgo::nvls, NcclProto::simple);
    CHECK(k.bw_GBs == Approx(369.0 * 8 / 14).epsilon(1e-9));
    CHECK(k.latency_us == Approx(25.0).epsilon(1e-9));
    // NVLS carries Simple only, and needs NVLink SHARP
    CHECK(nccl_cost(c, Collective::all_reduce, NcclAlgo::nvls, NcclProto::ll).bw_GBs == 0);
    auto a100 = c;
    a100.nvls = false;
    CHECK(nccl_cost(a100, Collective::all_reduce, NcclAlgo::nvls, NcclProto::simple).bw_GBs == 0);
  }
  SECTION("16 nodes: NVLS tree; NVLS itself needs CollNet across nodes") {
    const auto c = h100(128, 16);
    // bw = min(36.756, inter 23.0625, perChMaxNVLSTreeBw 45.5) = 23.0625 -> 369 x 128/254;
    // latency 0 + NVLink 25 + 2 x log2(16) x network 20.9 = 192.2 us
    const auto k = nccl_cost(c, Collective::all_reduce, NcclAlgo::nvls_tree, NcclProto::simple);
    CHECK(k.bw_GBs == Approx(369.0 * 128 / 254).epsilon(1e-9));
    CHECK(k.latency_us == Approx(192.2).epsilon(1e-9));
    CHECK(nccl_cost(c, Collective::all_reduce, NcclAlgo::nvls, NcclProto::simple).bw_GBs == 0);
    // NCCL's pick at 1e9 bytes: NVLS tree 192.2 + 5377.8 beats tree 176.4 + 5891.4 and ring 1666 + 5377.8
    const auto pick = nccl_choose(c, Collective::all_reduce, 1e9);
    REQUIRE(pick.valid);
    CHECK(pick.algo == NcclAlgo::nvls_tree);
    CHECK(pick.proto == NcclProto::simple);
    CHECK(pick.time_us == Approx(192.2 + 1e9 / (1000 * 369.0 * 128 / 254)).epsilon(1e-9));
    // forced to the tree (NCCL_ALGO=tree): Simple, as its 1e9-byte time 6067.8 beats LL128's 99.5 + 6284.2
    const auto tree = nccl_choose(c, Collective::all_reduce, 1e9, static_cast<int>(NcclAlgo::tree));
    CHECK(tree.algo == NcclAlgo::tree);
    CHECK(tree.proto == NcclProto::simple);
  }
}

TEST_CASE("nccl model: PAT all-gather with one GPU per node", "[analytic][nccl]") {
  const auto c = h100(16, 16);  // one NIC of 47 GB/s a rank: 2.9375 a channel
  // PAT: busBw 16 x 2.9375 = 47, x 0.75 = 35.25 (all-gather: no algorithm-bandwidth conversion);
  // latency 8.0 + log2(16) x (network tree hop 14 / 3.5) + 16 x 2.8 = 68.8 us (one rank a node:
  // the tree's network latency)
  const auto k = nccl_cost(c, Collective::all_gather, NcclAlgo::pat, NcclProto::simple);
  CHECK(k.bw_GBs == Approx(35.25).epsilon(1e-9));
  CHECK(k.latency_us == Approx(68.8).epsilon(1e-9));
  // the ring: 47 x 16/15; latency 8.4 + 15 network steps x 14 = 218.4
  const auto ring = nccl_cost(c, Collective::all_gather, NcclAlgo::ring, NcclProto::simple);
  CHECK(ring.latency_us == Approx(218.4).epsilon(1e-9));
  // small messages go to PAT (1 MB: 68.8 + 28.4 against 218.4 + 19.9), large ones to the ring
  CHECK(nccl_choose(c, Collective::all_gather, 1e6).algo == NcclAlgo::pat);
  CHECK(nccl_choose(c, Collective::all_gather, 1e9).algo == NcclAlgo::ring);
  // PAT needs one GPU per node
  CHECK(nccl_cost(h100(128, 16), Collective::all_gather, NcclAlgo::pat, NcclProto::simple).bw_GBs == 0);
}

TEST_CASE("nccl model: CollNet (SHARP) all-reduce", "[analytic][nccl]") {
  auto c = h100(128, 16);
  CHECK(nccl_cost(c, Collective::all_reduce, NcclAlgo::collnet_direct, NcclProto::simple).bw_GBs == 0);  // off by default
  c.collnet = true;
  // Direct: busBw 369 / factor, factor = ppn/channels 0.5 - (0.5 - 1)/2 = 0.75 -> 492, x 0.85 (Hopper)
  // = 418.2, x 0.5 = 209.1; latency 2 x (min(1, 7) x NVLink 3.7 + 7 x 0.4) + network 31 = 44.0 us
  const auto d = nccl_cost(c, Collective::all_reduce, NcclAlgo::collnet_direct, NcclProto::simple);
  CHECK(d.bw_GBs == Approx(209.1).epsilon(1e-9));
  CHECK(d.latency_us == Approx(44.0).epsilon(1e-9));
  // Chain: 369 x 0.5 = 184.5; latency 2 x 7 x 2.8 + 30 = 69.2 us
  const auto ch = nccl_cost(c, Collective::all_reduce, NcclAlgo::collnet_chain, NcclProto::simple);
  CHECK(ch.bw_GBs == Approx(184.5).epsilon(1e-9));
  CHECK(ch.latency_us == Approx(69.2).epsilon(1e-9));
  CHECK(nccl_cost(c, Collective::all_reduce, NcclAlgo::collnet_direct, NcclProto::ll).bw_GBs == 0);
  // with SHARP on, a 1e9-byte all-reduce goes to CollNet Direct: 44 + 4782.4 beats NVLS tree's 5570.0
  CHECK(nccl_choose(c, Collective::all_reduce, 1e9).algo == NcclAlgo::collnet_direct);
}

TEST_CASE("nccl model: a group of the hardware as NCCL sees it", "[analytic][nccl]") {
  core::HardwareSpec hw;
  hw.gpu.name = "H100-SXM5-80GB";
  hw.gpu.comm_sms = 16;
  hw.gpus_per_node = 8;
  hw.intra = core::Link{450e9, 20e-6, 0.82};
  hw.network = core::Link{50e9, 50e-6, 0.94};
  const auto c = nccl_comm(hw, Group{128, core::Scope::inter, 8});
  CHECK(c.nodes == 16);
  CHECK(c.arch == NcclArch::hopper);
  CHECK(c.nvls);
  CHECK(c.bw_intra_GBs == Approx(369.0 / 16).epsilon(1e-9));
  CHECK(c.bw_inter_GBs == Approx(369.0 / 16).epsilon(1e-9));  // min(369, 8 x 47 = 376)
  const auto one = nccl_comm(hw, Group{16, core::Scope::inter, 1});
  CHECK(one.bw_inter_GBs == Approx(47.0 / 16).epsilon(1e-9));
  hw.gpu.name = "A100-SXM4-80GB";
  CHECK_FALSE(nccl_comm(hw, Group{8, core::Scope::intra, 8}).nvls);
  CHECK(nccl_comm(hw, Group{8, core::Scope::intra, 8}).arch == NcclArch::ampere);
  // all-to-all and send/recv are point-to-point: not in the tuner's model
  CHECK_FALSE(nccl_choose(c, Collective::all_to_all, 1e6).valid);
}

TEST_CASE("nccl model: Blackwell's NVLS tree takes the size correction on x86 hosts only", "[analytic][nccl]") {
  auto c = h100(16, 2);
  c.arch = NcclArch::blackwell;
  const auto k = nccl_cost(c, Collective::all_reduce, NcclAlgo::nvls_tree, NcclProto::simple);
  REQUIRE(k.bw_GBs > 0);
  // 1 MiB: log2(1048576 >> 6) = 14, Simple's correction 0.5 (a DGX B200's x86 host)
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::nvls_tree, NcclProto::simple, 1048576) ==
        Approx(k.latency_us + 1048576 / (1000 * k.bw_GBs * 0.5)).epsilon(1e-9));
  c.x86_host = false;  // Grace (GB200 NVL72): as modelled
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::nvls_tree, NcclProto::simple, 1048576) ==
        Approx(k.latency_us + 1048576 / (1000 * k.bw_GBs)).epsilon(1e-9));
  // Hopper: no correction whatever the host
  c.arch = NcclArch::hopper;
  c.x86_host = true;
  const auto h = nccl_cost(c, Collective::all_reduce, NcclAlgo::nvls_tree, NcclProto::simple);
  CHECK(nccl_time_us(c, Collective::all_reduce, NcclAlgo::nvls_tree, NcclProto::simple, 1048576) ==
        Approx(h.latency_us + 1048576 / (1000 * h.bw_GBs)).epsilon(1e-9));
}

TEST_CASE("nccl model: the switch tiers a group crosses", "[analytic][nccl]") {
  core::HardwareSpec hw;
  hw.gpu.name = "H100-SXM5-80GB";
  hw.gpu.comm_sms = 16;
  hw.gpus_per_node = 8;
  hw.intra = core::Link{450e9, 20e-6, 0.82};
  hw.network = core::Link{50e9, 50e-6, 0.94};
  hw.topology = core::Topology::rail_optimized;  // the network scalar's oversubscription is not read
  core::SwitchTier leaf, spine, top;
  leaf.latency_s = 0.33e-6;
  leaf.oversubscription = 2;
  spine.latency_s = 0.5e-6;
  spine.oversubscription = 3;
  top.latency_s = 0.7e-6;
  hw.fabric.tiers = {leaf, spine, top};
  Group g{64, core::Scope::inter, 1};  // one GPU a node: the NIC share 47 GB/s
  SECTION("under one leaf: no uplink, no switch beyond NCCL's hop") {
    g.span.top = 0;
    const auto c = nccl_comm(hw, g);
    CHECK(c.bw_inter_GBs == Approx(47.0 / 16).epsilon(1e-12));
    CHECK(c.switches_us == 0);
  }
  SECTION("across leaves: the leaf's uplinks halve the share, the spine adds 2 x 0.5 us a hop") {
    g.span.top = 1;
    const auto c = nccl_comm(hw, g);
    CHECK(c.bw_inter_GBs == Approx(47.0 / 2 / 16).epsilon(1e-12));
    CHECK(c.switches_us == Approx(1.0).epsilon(1e-12));
    // the tree's network hop, one GPU a node (Simple): 14 + 1.0 us; 64 nodes: 2 x log2(64) = 12 hops
    // on base 8.4: 8.4 + 12 x 15 = 188.4 us
    CHECK(nccl_cost(c, Collective::all_reduce, NcclAlgo::tree, NcclProto::simple).latency_us ==
          Approx(188.4).epsilon(1e-12));
  }
  SECTION("through the top tier: the largest ratio below it (the spine's 3), both tiers' switches") {
    g.span.top = 2;
    const auto c = nccl_comm(hw, g);
    CHECK(c.bw_inter_GBs == Approx(47.0 / 3 / 16).epsilon(1e-12));
    CHECK(c.switches_us == Approx(2 * (0.5 + 0.7)).epsilon(1e-12));
  }
}
