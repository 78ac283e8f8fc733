#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <limits>

#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/nccl_picks.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using core::Collective;

TEST_CASE("analytic: NCCL bus factors", "[analytic][collectives]") {
  CHECK(bus_factor(Collective::all_reduce, 8) == Approx(1.75).epsilon(1e-12));      // 2*7/8
  CHECK(bus_factor(Collective::all_gather, 8) == Approx(0.875).epsilon(1e-12));     // 7/8
  CHECK(bus_factor(Collective::reduce_scatter, 4) == Approx(0.75).epsilon(1e-12));
  CHECK(bus_factor(Collective::all_to_all, 2) == Approx(0.5).epsilon(1e-12));
  CHECK(bus_factor(Collective::broadcast, 8) == 1);
  CHECK(bus_factor(Collective::send_recv, 2) == 1);
}

TEST_CASE("analytic: groups under the rank placement", "[analytic][collectives]") {
  auto s = testing::gpt3_1024();  // tp 8, dp 8, pp 16; 8 GPUs a node
  SECTION("default tp-cp-ep-dp-pp: tp fills a node, dp and pp stride across nodes") {
    const auto tp = group_of(s, core::Dim::tp);
    CHECK(tp.ranks == 8);
    CHECK(tp.scope == core::Scope::intra);
    CHECK(tp.ranks_per_node == 8);
    const auto dp = group_of(s, core::Dim::dp);  // stride 8
    CHECK(dp.ranks == 8);
    CHECK(dp.scope == core::Scope::inter);
    CHECK(dp.ranks_per_node == 1);
    CHECK(group_of(s, core::Dim::pp).scope == core::Scope::inter);
  }
  SECTION("dp innermost puts dp inside the node and tp across") {
    s.parallel.placement = {core::Dim::dp, core::Dim::tp, core::Dim::cp, core::Dim::ep, core::Dim::pp};
    CHECK(group_of(s, core::Dim::dp).scope == core::Scope::intra);
    CHECK(group_of(s, core::Dim::tp).scope == core::Scope::inter);
    CHECK(group_of(s, core::Dim::tp).ranks_per_node == 1);
  }
  SECTION("a group partly inside a node: tp 4, dp 4 -> dp stride 4, 2 of its ranks per node") {
    s.parallel.tp = 4;
    s.parallel.dp = 16;
    const auto dp = group_of(s, core::Dim::dp);
    CHECK(dp.scope == core::Scope::inter);
    CHECK(dp.ranks_per_node == 2);
  }
  SECTION("ep is carved out of dp: its ranks are consecutive dp ranks (stride tp*cp)") {
    s.parallel.tp = 2;
    s.parallel.dp = 32;
    s.parallel.ep = 4;  // stride 2: ranks 0, 2, 4, 6 share a node
    const auto ep = group_of(s, core::Dim::ep);
    CHECK(ep.ranks == 4);
    CHECK(ep.scope == core::Scope::intra);
    CHECK(ep.ranks_per_node == 4);
  }
  SECTION("the gradient group spans dp*cp") {
    s.parallel.tp = 2;
    s.parallel.cp = 2;
    s.parallel.dp = 16;
    // cp stride 2 (2 fit), dp stride 4 (2 of 16 fit) -> 4 ranks per node of 32
    const auto g = grad_group(s);
    CHECK(g.ranks == 32);
    CHECK(g.ranks_per_node == 4);
    CHECK(g.scope == core::Scope::inter);
  }
}

// The collectives NCCL's tuner models take NCCL's pick on the link bandwidths (nccl_model_test.cpp
// works NCCL's formulas); all-to-all and send/recv keep the link model. A100: no NVLS; 16 channels.
TEST_CASE("analytic: collective times from NCCL's model on the link bandwidths", "[analytic][collectives]") {
  auto hw = testing::dgx_a100_80g();  // NVLink 300 GB/s 5 us, NIC 25 GB/s 10 us
  Group intra8{8, core::Scope::intra, 8};
  Group inter1{8, core::Scope::inter, 1};
  Group inter2{8, core::Scope::inter, 2};
  SECTION("inside a node: NVLink") {
    // ring Simple: busbw 16 channels x 300/16 = 300 GB/s, latency 8.4 + 14 steps x 3.4 us = 56 us:
    // 56 us + 1.75 * 2^30 / 300e9 = 0.0063194... s (LL128: 40.6 us + 1.75 * 2^30 / 276e9 is slower;
    // the one-node tree's bandwidth 276 x 0.5, is too)
    CHECK(collective_time(hw, Collective::all_reduce, core::kGiB, intra8) ==
          Approx(56e-6 + 1.75 * core::kGiB / 300e9).epsilon(1e-12));
  }
  SECTION("one rank per node: the NIC share") {
    // ring Simple: busbw 1 x 25 GB/s, 1.75 * 1e9 / 25e9 = 0.07 s; all 14 steps cross the network,
    // one rank a node takes the tree's network hop 14 us: 8.4 + 14 x 14 = 204.4 us, x 1.4 (the ring's
    // plateau: 1e9 / (16 x 8) >= 64) = 286.16 us. The tree: 25 x 0.92 x 0.5 = 11.5 GB/s, slower.
    CHECK(collective_time(hw, Collective::all_reduce, 1e9, inter1) == Approx(0.07 + 286.16e-6).epsilon(1e-12));
  }
  SECTION("k ranks per node aggregate k NICs (NCCL rings over every NIC), latency adds NVLink's") {
    // busbw 2 x 25 = 50 GB/s; 0.875 * 1e9 / 50e9 = 0.0175 s; ring Simple over 4 nodes of 2: 7 steps,
    // 3 cross the network (14 us), 4 NVLink (3.4 us): 8.4 + 4 x 3.4 + 3 x 14 = 64 us
    CHECK(collective_time(hw, Collective::reduce_scatter, 1e9, inter2) == Approx(64e-6 + 0.0175).epsilon(1e-12));
  }
  SECTION("all-to-all cannot aggregate NICs") {
    CHECK(collective_time(hw, Collective::all_to_all, 1e9, inter2) == Approx(15e-6 + 0.875 * 1e9 / 25e9).epsilon(1e-12));
  }
  SECTION("a ring over 128 nodes of 8 pays NCCL's hop latencies") {
    Group ring{1024, core::Scope::inter, 8};
    // 1023 steps, 127 across the network. LL128: 14 + 896 x 1.9 + 127 x 4.0 = 2224.4 us, busbw
    // min(200 x 0.92, 16 x 20) = 184 GB/s: 2224.4 + 1e9 x 1023/1024 / 184e3 = 7653.9 us; Simple:
    // 8.4 + 896 x 3.4 + 127 x 14 = 4832.8 us + 1e9 x 1023/1024 / 200e3 = 9827.9 us. LL128 is picked.
    CHECK(collective_line(hw, Collective::all_gather, 1e9, ring).alpha_s == Approx(2224.4e-6).epsilon(1e-12));
    CHECK(collective_line(hw, Collective::all_gather, 1e9, ring).busbw_Bps == Approx(184e9).epsilon(1e-12));
    // two nodes: 15 steps, one across. Simple 8.4 + 14 x 3.4 + 14 = 70 us + 1e9 x 15/16 / 200e3 =
    // 4757.5 us beats LL128's 14 + 14 x 1.9 + 4 = 44.6 us + 1e9 x 15/16 / 184e3 = 5139.6 us
    Group two{16, core::Scope::inter, 8};
    CHECK(collective_line(hw, Collective::all_gather, 1e9, two).alpha_s == Approx(70e-6).epsilon(1e-12));
  }
  SECTION("efficiency and oversubscription scale the NIC") {
    hw.network.efficiency = 0.9;
    hw.oversubscription = 2;
    // 25e9 * 0.9 / 2 = 11.25e9
    CHECK(collective_line(hw, Collective::all_gather, 1e9, inter1).busbw_Bps == Approx(11.25e9).epsilon(1e-12));
    // on a rail-optimized fabric NCCL keeps the ring on its rail switch: the spine's ratio is moot
    hw.topology = core::Topology::rail_optimized;
    CHECK(collective_line(hw, Collective::all_gather, 1e9, inter1).busbw_Bps == Approx(22.5e9).epsilon(1e-12));
  }
  SECTION("aggregation never exceeds NVLink") {
    hw.network.bandwidth_Bps = 100e9;
    Group g{16, core::Scope::inter, 8};
    CHECK(collective_line(hw, Collective::all_reduce, 1e9, g).busbw_Bps == Approx(300e9).epsilon(1e-12));
  }
  SECTION("one rank, or nothing to send, costs nothing") {
    CHECK(collective_time(hw, Collective::all_reduce, 1e9, Group{1, core::Scope::intra, 1}) == 0);
    CHECK(collective_time(hw, Collective::all_reduce, 0, intra8) == 0);
  }
}

TEST_CASE("analytic: calibrated rows override the link model", "[analytic][collectives]") {
  auto hw = testing::dgx_a100_80g();
  auto row = [](Collective op, core::Scope sc, int ranks, double alpha, double bw, double lo, double hi) {
    core::CollectiveFit f;
    f.op = op;
    f.scope = sc;
    f.ranks = ranks;
    f.alpha_s = alpha;
    f.busbw_Bps = bw;
    f.min_bytes = lo;
    f.max_bytes = hi;
    return f;
  };
  const double inf = std::numeric_limits<double>::infinity();
  hw.collectives.push_back(row(Collective::all_reduce, core::Scope::intra, 8, 20.1e-6, 232e9, 0, inf));
  hw.collectives.push_back(row(Collective::all_reduce, core::Scope::inter, 16, 45e-6, 23.5e9, 0, inf));
  hw.collectives.push_back(row(Collective::all_reduce, core::Scope::inter, 64, 80e-6, 20e9, 0, 1e6));
  hw.collectives.push_back(row(Collective::all_reduce, core::Scope::inter, 64, 90e-6, 22e9, 1e6, inf));
  SECTION("a matching row (interface.md's example): 20.1 us + 1.75 * 1e9 / 232e9") {
    CHECK(collective_time(hw, Collective::all_reduce, 1e9, Group{8, core::Scope::intra, 8}) ==
          Approx(20.1e-6 + 1.75e9 / 232e9).epsilon(1e-12));
  }
  SECTION("the nearest rank count: 4 ranks use the 8-rank row with their own bus factor 1.5") {
    CHECK(collective_time(hw, Collective::all_reduce, 1e9, Group{4, core::Scope::intra, 4}) ==
          Approx(20.1e-6 + 1.5e9 / 232e9).epsilon(1e-12));
  }
  SECTION("nearest in log distance: 24 ranks are closer to 16 than to 64 (1.5x vs 2.67x)") {
    // the 16-rank row's alpha plus what NCCL's tree adds from 2 to 3 nodes: 2 (log2 3 - 1) x 14 us
    const auto l = collective_line(hw, Collective::all_reduce, 1e9, Group{24, core::Scope::inter, 8});
    CHECK(l.alpha_s == Approx(45e-6 + 2 * (std::log2(3.0) - 1) * 14e-6).epsilon(1e-12));
    CHECK(l.busbw_Bps == Approx(23.5e9).epsilon(1e-12));
  }
  SECTION("a ring larger than the measured one pays the hops it adds; a smaller one keeps the row") {
    // ZeRO-3's reduce-scatter over 128 nodes of 8 with a row measured on 2 nodes: the ring adds
    // (128 - 2) nodes x (one network hop 14 us + 7 NVLink hops 3.4 us) = 4.7628 ms
    hw.collectives.push_back(row(Collective::reduce_scatter, core::Scope::inter, 16, 50e-6, 180e9, 0, inf));
    const auto big = collective_line(hw, Collective::reduce_scatter, 1e9, Group{1024, core::Scope::inter, 8});
    CHECK(big.alpha_s == Approx(50e-6 + 126 * (14e-6 + 7 * 3.4e-6)).epsilon(1e-12));
    CHECK(big.busbw_Bps == Approx(180e9).epsilon(1e-12));
    const auto small = collective_line(hw, Collective::reduce_scatter, 1e9, Group{8, core::Scope::inter, 4});
    CHECK(small.alpha_s == Approx(50e-6).epsilon(1e-12));
  }
  SECTION("the size range holding the message picks the piece of a piecewise fit") {
    const Group g{64, core::Scope::inter, 8};
    CHECK(collective_line(hw, Collective::all_reduce, 1e5, g).busbw_Bps == Approx(20e9).epsilon(1e-12));
    CHECK(collective_line(hw, Collective::all_reduce, 1e8, g).busbw_Bps == Approx(22e9).epsilon(1e-12));
    // the ranges are half-open, [min_bytes, max_bytes): 1e6 bytes is the second row's, as the fit
    // that cut them meant (calibrate::fitted_time picks the same, core::piece_miss)
    CHECK(collective_line(hw, Collective::all_reduce, 1e6, g).busbw_Bps == Approx(22e9).epsilon(1e-12));
    CHECK(collective_line(hw, Collective::all_reduce, 999999, g).busbw_Bps == Approx(20e9).epsilon(1e-12));
  }
  SECTION("a size in a gap between rows takes the nearer row, the first of two equally near") {
    const Group g{32, core::Scope::inter, 8};
    hw.collectives.push_back(row(Collective::all_reduce, core::Scope::inter, 32, 10e-6, 10e9, 0, 1000));
    hw.collectives.push_back(row(Collective::all_reduce, core::Scope::inter, 32, 10e-6, 30e9, 3000, inf));
    CHECK(collective_line(hw, Collective::all_reduce, 1900, g).busbw_Bps == Approx(10e9).epsilon(1e-12));
    CHECK(collective_line(hw, Collective::all_reduce, 2100, g).busbw_Bps == Approx(30e9).epsilon(1e-12));
    CHECK(collective_line(hw, Collective::all_reduce, 2000, g).busbw_Bps == Approx(10e9).epsilon(1e-12));
  }
  SECTION("an op without rows falls back to the link model") {
    CHECK(collective_line(hw, Collective::all_gather, 1e9, Group{8, core::Scope::intra, 8}).busbw_Bps ==
          Approx(300e9).epsilon(1e-12));
  }
}

namespace {

core::CollectiveFit measured_row(Collective op, core::Scope sc, int ranks, int per_node, const char* gpu,
                                 double alpha, double bw) {
  core::CollectiveFit f;
  f.op = op;
  f.scope = sc;
  f.ranks = ranks;
  f.ranks_per_node = per_node;
  f.gpu = gpu;
  f.alpha_s = alpha;
  f.busbw_Bps = bw;
  return f;
}

}  // namespace

TEST_CASE("analytic: of two measurements on the same rank count, the group's shape is preferred",
          "[analytic][collectives]") {
  auto hw = testing::dgx_a100_80g();
  // 16 ranks across nodes, measured as 2 x 8 (NICs aggregated) and as 16 x 1 (one NIC each)
  hw.collectives.push_back(measured_row(Collective::all_reduce, core::Scope::inter, 16, 8, "NVIDIA A100-SXM4-80GB", 40e-6, 190e9));
  hw.collectives.push_back(measured_row(Collective::all_reduce, core::Scope::inter, 16, 1, "NVIDIA A100-SXM4-80GB", 60e-6, 23e9));
  CHECK(collective_line(hw, Collective::all_reduce, 1e9, Group{16, core::Scope::inter, 1}).busbw_Bps ==
        Approx(23e9).epsilon(1e-12));
  CHECK(collective_line(hw, Collective::all_reduce, 1e9, Group{16, core::Scope::inter, 8}).busbw_Bps ==
        Approx(190e9).epsilon(1e-12));
  // a group of 4 per node matches neither: the rows of unknown shape would come next, then the
  // first of the mismatched ones in table order
  CHECK(collective_line(hw, Collective::all_reduce, 1e9, Group{16, core::Scope::inter, 4}).busbw_Bps ==
        Approx(190e9).epsilon(1e-12));
}

TEST_CASE("analytic: calibrated rows used outside what was measured are warned about", "[analytic][collectives]") {
  auto s = testing::gpt3_1024();  // tp 8 (one node), dp 8 at stride 8 (1 per node), pp 16
  s.parallel.sequence_parallel = false;
  s.parallel.zero = 0;  // TP and DP both all-reduce
  SECTION("no calibrated rows: nothing to say") { CHECK(collective_warnings(s).empty()); }
  SECTION("rows that match the groups: nothing to say") {
    s.hardware.collectives.push_back(
        measured_row(Collective::all_reduce, core::Scope::intra, 8, 8, "NVIDIA A100-SXM4-80GB", 20e-6, 230e9));
    s.hardware.collectives.push_back(
        measured_row(Collective::all_reduce, core::Scope::inter, 8, 1, "NVIDIA A100-SXM4-80GB", 50e-6, 23e9));
    CHECK(collective_warnings(s).empty());
  }
  SECTION("an 8-per-node log applied to the 1-per-node gradient group, a 2-GPU log to tp, another GPU") {
    s.hardware.collectives.push_back(
        measured_row(Collective::all_reduce, core::Scope::inter, 16, 8, "NVIDIA A100-SXM4-40GB", 40e-6, 190e9));
    s.hardware.collectives.push_back(
        measured_row(Collective::all_reduce, core::Scope::intra, 2, 2, "NVIDIA GeForce RTX 2080 Ti", 23e-6, 4e9));
    const auto w = collective_warnings(s);
    REQUIRE(w.size() == 2);
    CHECK(w[0] ==
          "all_reduce over the tp group (8 ranks, 8 per node, intra) uses the calibrated rows measured on 2 ranks, "
          "2 per node, NVIDIA GeForce RTX 2080 Ti: extrapolated from 2 to 8 ranks (the 2-rank busbw as it is, and "
          "its alpha plus NCCL's hop latencies for the larger group); measured on NVIDIA GeForce RTX 2080 Ti, the hardware's GPU is A100-SXM4-80GB");
    // A100 40GB against the A100 80GB file: the same part for collectives, no GPU complaint
    CHECK(w[1] ==
          "all_reduce over the dp gradient group (8 ranks, 1 per node, inter) uses the calibrated rows measured on "
          "16 ranks, 8 per node, NVIDIA A100-SXM4-40GB: extrapolated from 16 to 8 ranks (the 16-rank busbw as it is, "
          "and its alpha as it is); measured with 8 GPUs per node, the group has 1 (NCCL spreads a node's "
          "traffic over one NIC per GPU in the group, so the measured busbw is likely too fast for it)");
  }
  SECTION("pipeline sends use the 2-rank hop; rows of unknown shape say so") {
    s.hardware.collectives.push_back(measured_row(Collective::send_recv, core::Scope::inter, 2, 0, "", 30e-6, 23e9));
    const auto w = collective_warnings(s);
    REQUIRE(w.size() == 1);
    CHECK(w[0] == "send_recv over the pp group (2 ranks, 1 per node, inter) uses the calibrated rows measured on "
                  "2 ranks: the row does not record how many GPUs per node it was measured with");
  }
}

TEST_CASE("analytic: CP's calibrated rows are checked for the collectives its method runs", "[analytic][collectives]") {
  // tp 2, cp 4: the cp group is 4 ranks 2 apart in one node. An all-gather log of 2 ranks: the
  // allgather method gathers the keys and values over the 4 (and sends the gradients, no row for
  // that), so its row is used outside what was measured; p2p sends only, and the all-gather row is
  // not its concern.
  auto s = testing::gpt3_1024();
  s.parallel.tp = 2;
  s.parallel.cp = 4;
  s.parallel.dp = 8;
  s.parallel.sequence_parallel = false;
  s.parallel.zero = 0;  // no data-parallel all-gather either
  s.hardware.collectives.push_back(
      measured_row(Collective::all_gather, core::Scope::intra, 2, 2, "NVIDIA A100-SXM4-80GB", 20e-6, 230e9));
  s.training.cp_comm = core::CpComm::allgather;
  const auto w = collective_warnings(s);
  REQUIRE(w.size() == 1);
  CHECK(w[0].starts_with("all_gather over the cp group (4 ranks, 4 per node, intra) uses the calibrated rows "
                         "measured on 2 ranks, 2 per node"));
  s.training.cp_comm = core::CpComm::p2p;
  CHECK(collective_warnings(s).empty());
}

TEST_CASE("analytic: a forced NCCL algorithm or protocol, as NCCL_ALGO / NCCL_PROTO", "[analytic][collectives]") {
  auto hw = testing::dgx_a100_80g();  // NVLink 300 GB/s, 16 channels, A100: no NVLS
  Group intra8{8, core::Scope::intra, 8};
  const double S = core::kGiB;
  SECTION("the tree inside a node") {
    // tree all-reduce, one node: busbw min(300 x 0.92, 16 x 24.0) = 276, x 0.5 = 138 GB/s algorithm
    // bandwidth; latency 8.4 + 2 x (7 NVLink hops x 4.0) = 64.4 us; 2^30 B: log2(2^24) = 24, past the
    // size correction's table
    hw.nccl.algo = static_cast<int>(NcclAlgo::tree);
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(64.4e-6 + S / 138e9).epsilon(1e-12));
    CHECK(nccl_line(hw, Collective::all_reduce, S, intra8).algo == NcclAlgo::tree);
  }
  SECTION("LL128: the ring's, 40.6 us at 276 GB/s busbw") {
    hw.nccl.proto = static_cast<int>(NcclProto::ll128);
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(40.6e-6 + 1.75 * S / 276e9).epsilon(1e-12));
  }
  SECTION("a pair NCCL cannot run keeps NCCL's own choice") {
    hw.nccl.algo = static_cast<int>(NcclAlgo::pat);  // PAT has no all-reduce
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(56e-6 + 1.75 * S / 300e9).epsilon(1e-12));
    hw.nccl.algo = static_cast<int>(NcclAlgo::nvls);  // no NVLS on A100
    CHECK(nccl_line(hw, Collective::all_reduce, S, intra8).algo == NcclAlgo::ring);
  }
}

TEST_CASE("analytic: the report's algorithm and protocol for each kind of collective", "[analytic][collectives]") {
  auto s = testing::gpt3_1024();  // tp 8 inside a node, pipeline sends, data-parallel gradients
  s.parallel.sequence_parallel = false;
  const auto picks = collective_picks(s);
  auto find = [&](const char* kind, Collective op) -> const CollectivePick* {
    for (const auto& k : picks)
      if (k.kind == kind && k.op == op) return &k;
    return nullptr;
  };
  // TP: the all-reduce of the s*b*h activation, 2 x 2048 x 12288 B, over 8 GPUs on NVLink: the
  // ring Simple (collectives_test's derivation above: 56 us + 1.75 S / 300e9)
  const CollectivePick* tp = find("tp", Collective::all_reduce);
  REQUIRE(tp);
  CHECK(tp->ranks == 8);
  CHECK(tp->bytes == 2.0 * 2048 * 12288);
  CHECK(tp->algorithm == "ring");
  CHECK(tp->protocol == "simple");
  // pipeline sends run as NCCL's point-to-point: no tuner pick, no protocol named
  const CollectivePick* pp = find("pp", Collective::send_recv);
  REQUIRE(pp);
  CHECK(pp->algorithm == "p2p");
  CHECK(pp->protocol.empty());
  // a calibrated row for the TP group's op and scope takes priority
  core::CollectiveFit row;
  row.op = Collective::all_reduce;
  row.scope = core::Scope::intra;
  row.ranks = 8;
  row.ranks_per_node = 8;
  row.alpha_s = 20e-6;
  row.busbw_Bps = 200e9;
  row.min_bytes = 0;
  row.max_bytes = 1e12;
  s.hardware.collectives.push_back(row);
  const auto calibrated = collective_picks(s);
  bool seen = false;
  for (const auto& k : calibrated)
    if (k.kind == std::string("tp")) {
      CHECK(k.algorithm == "calibrated");
      CHECK(k.protocol == "calibrated");
      seen = true;
    }
  CHECK(seen);
}

TEST_CASE("analytic: a calibrated row measured with a forced algorithm times only that algorithm",
          "[analytic][collectives][algo]") {
  auto hw = testing::dgx_a100_80g();  // NVLink 300 GB/s, 16 channels, A100: no NVLS
  const Group intra8{8, core::Scope::intra, 8};
  const double S = core::kGiB;
  const int ring = static_cast<int>(NcclAlgo::ring), tree = static_cast<int>(NcclAlgo::tree);
  // an 8-GPU all-reduce measured with NCCL_ALGO=Ring: 30 us + S F / 230 GB/s, F = 2 x 7/8 = 1.75
  core::CollectiveFit row = measured_row(Collective::all_reduce, core::Scope::intra, 8, 8, "NVIDIA A100-SXM4-80GB", 30e-6, 230e9);
  row.algo = ring;
  hw.collectives.push_back(row);
  SECTION("NCCL's model picks ring at 1 GiB (ring Simple, the tests above): the row times it") {
    REQUIRE(nccl_line(hw, Collective::all_reduce, S, intra8).algo == NcclAlgo::ring);
    // 30e-6 + 1.75 x 2^30 / 230e9 = 30e-6 + 8.16977e-3 = 8.19977e-3 s
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(8.19977e-3).epsilon(1e-5));
    CHECK(calibrated_row(hw, Collective::all_reduce, S, intra8) == &hw.collectives[0]);
    CHECK(forced_row_warning(hw, Collective::all_reduce, S, intra8, "tp").empty());
  }
  SECTION("the scenario forces tree (training.nccl, --set): the ring row is not used, NCCL's model times it") {
    hw.nccl.algo = tree;
    // the tree inside a node (the forced-tree test above): 64.4 us + S / 138 GB/s
    // = 64.4e-6 + 7.78074e-3 = 7.84514e-3 s
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(7.84514e-3).epsilon(1e-5));
    CHECK(calibrated_row(hw, Collective::all_reduce, S, intra8) == nullptr);
    CHECK(forced_row_warning(hw, Collective::all_reduce, S, intra8, "tp") ==
          "all_reduce over the tp group (8 ranks, 8 per node, intra) at 1.074 GB: the calibrated rows measured on 8 "
          "ranks, 8 per node, NVIDIA A100-SXM4-80GB with NCCL_ALGO ring are not used, because NCCL's model runs "
          "tree/simple there, which they did not measure; NCCL's model times it");
  }
  SECTION("a row measured with NCCL_ALGO=Tree where NCCL's model picks ring: not used") {
    hw.collectives[0].algo = tree;
    // ring Simple on NVLink (above): 56 us + 1.75 S / 300 GB/s = 56e-6 + 6.26349e-3 = 6.31949e-3 s
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(6.31949e-3).epsilon(1e-5));
    CHECK(calibrated_row(hw, Collective::all_reduce, S, intra8) == nullptr);
    // and where the scenario forces tree, it is
    hw.nccl.algo = tree;
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(8.19977e-3).epsilon(1e-5));
  }
  SECTION("a protocol the row did not measure: not used (ring LL128 forced: 40.6 us + 1.75 S / 276 GB/s)") {
    hw.collectives[0].proto = static_cast<int>(NcclProto::simple);
    hw.nccl.proto = static_cast<int>(NcclProto::ll128);
    // 40.6e-6 + 1.75 x 2^30 / 276e9 = 40.6e-6 + 6.80814e-3 = 6.84874e-3 s
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(6.84874e-3).epsilon(1e-5));
  }
  SECTION("beside a row NCCL picked for itself: the ring row where ring runs, the other elsewhere") {
    core::CollectiveFit own = measured_row(Collective::all_reduce, core::Scope::intra, 8, 8, "NVIDIA A100-SXM4-80GB", 20e-6, 200e9);
    hw.collectives.push_back(own);
    CHECK(calibrated_row(hw, Collective::all_reduce, S, intra8) == &hw.collectives[0]);
    hw.nccl.algo = tree;
    // 20e-6 + 1.75 x 2^30 / 200e9 = 20e-6 + 9.39524e-3 = 9.41524e-3 s
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(9.41524e-3).epsilon(1e-5));
    CHECK(forced_row_warning(hw, Collective::all_reduce, S, intra8, "tp").ends_with(
        "which they did not measure; the calibrated rows of NCCL's own pick (8 ranks, 8 per node) time it"));
  }
  SECTION("a row without an algorithm is used whatever NCCL picks, as before") {
    hw.collectives[0].algo = -1;
    hw.nccl.algo = tree;
    CHECK(collective_time(hw, Collective::all_reduce, S, intra8) == Approx(8.19977e-3).epsilon(1e-5));
    CHECK(forced_row_warning(hw, Collective::all_reduce, S, intra8, "tp").empty());
  }
}

TEST_CASE("analytic: the report and evaluate say which forced rows run", "[analytic][collectives][algo]") {
  auto s = testing::gpt3_1024();  // tp 8 inside a node: its all-reduce of 2 x 2048 x 12288 B runs ring Simple
  s.parallel.sequence_parallel = false;
  core::CollectiveFit row = measured_row(Collective::all_reduce, core::Scope::intra, 8, 8, "NVIDIA A100-SXM4-80GB", 30e-6, 230e9);
  row.algo = static_cast<int>(NcclAlgo::ring);
  s.hardware.collectives.push_back(row);
  auto tp_pick = [&] {
    for (const auto& k : collective_picks(s))
      if (k.kind == std::string("tp")) return k;
    FAIL("no tp pick");
    return CollectivePick{};
  };
  CHECK(tp_pick().algorithm == "ring");
  CHECK(tp_pick().protocol == "calibrated");
  CHECK(tp_pick().warning.empty());
  s.hardware.nccl.algo = static_cast<int>(NcclAlgo::tree);
  CHECK(tp_pick().algorithm == "tree");
  CHECK(tp_pick().protocol != "calibrated");
  const std::string w = tp_pick().warning;
  CHECK(w.starts_with("all_reduce over the tp group (8 ranks, 8 per node, intra) at 50.33 MB: the calibrated rows"));
  const auto report = evaluate(s);
  CHECK(std::count(report.warnings.begin(), report.warnings.end(), w) == 1);
}
