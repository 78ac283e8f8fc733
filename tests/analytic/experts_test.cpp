// Expert parallelism (docs/analytic.md "Expert parallelism"): the experts' groups under MoE parallel
// folding, the dispatchers' traffic, the busiest expert's load, the grouped GEMMs' rows and the
// experts' memory, against hand-worked values.
#include <catch2/catch.hpp>

#include <cmath>

#include "ptdsim/analytic/comm.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/check.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

namespace {

// tp 8, dp 8, ep 8 (one rank a node), global batch 64
core::Scenario moe_64() { return testing::mixtral_like_64(8); }

bool has_problem(const core::Scenario& s, const std::string& key) {
  for (const auto& p : core::check(s))
    if (p.key == key) return true;
  return false;
}

}  // namespace

TEST_CASE("experts: groups with etp == tp and folded", "[analytic][experts]") {
  auto s = moe_64();
  SECTION("etp unset follows tp: ep is carved out of dp at stride tp, one rank a node") {
    CHECK(s.parallel.expert_tp() == 8);
    CHECK_FALSE(s.parallel.folded_experts());
    CHECK(s.parallel.expert_dp() == 1);  // 8*1*8 / (8*8)
    const Group ep = ep_group(s);
    CHECK(ep.ranks == 8);
    CHECK(ep.ranks_per_node == 1);
    CHECK(ep.scope == core::Scope::inter);
    CHECK(expert_tp_group(s).ranks == 8);
  }
  SECTION("etp 1 folds the experts over the tp*dp ranks: ep is the innermost 8, inside the node") {
    s.parallel.etp = 1;
    CHECK(s.parallel.folded_experts());
    CHECK(s.parallel.expert_dp() == 8);  // 8*1*8 / (1*8)
    const Group ep = ep_group(s);
    CHECK(ep.ranks == 8);
    CHECK(ep.ranks_per_node == 8);
    CHECK(ep.scope == core::Scope::intra);
    // the experts' data parallel steps over whole nodes: 8 ranks, one a node
    const Group edp = grad_group(s, true);
    CHECK(edp.ranks == 8);
    CHECK(edp.ranks_per_node == 1);
    CHECK(expert_tp_group(s).ranks == 1);
    // dense gradients still over dp*cp = 8
    CHECK(grad_group(s, false).ranks == 8);
  }
  SECTION("etp 2, ep 8: etp the innermost 2, ep 8 at stride 2 across two nodes, edp 4") {
    s.parallel.etp = 2;
    CHECK(s.parallel.expert_dp() == 4);
    CHECK(expert_tp_group(s).ranks_per_node == 2);
    const Group ep = ep_group(s);
    CHECK(ep.ranks == 8);
    CHECK(ep.ranks_per_node == 4);  // ranks 0,2,4,6 in node 0; 8..14 in node 1
    CHECK(ep.scope == core::Scope::inter);
    CHECK(expert_tp_ep_group(s).ranks == 16);
    CHECK(grad_group(s, true).ranks == 4);
  }
}

TEST_CASE("experts: checks as Megatron-Core imposes them", "[analytic][experts]") {
  auto s = moe_64();
  CHECK(core::check(s).empty());
  SECTION("etp*ep must divide tp*cp*dp") {
    s.parallel.etp = 16;
    s.parallel.ep = 8;  // 128 does not divide 64
    CHECK(has_problem(s, "parallel.etp"));
  }
  SECTION("etp must divide the experts' ffn_hidden") {
    s.model.moe->ffn_hidden = 14336 + 4;  // 14340 = 4 * 3585: not a multiple of 8
    s.parallel.etp = 8;
    CHECK(has_problem(s, "parallel.etp"));
  }
  SECTION("etp > 1 needs experts") {
    s.model.moe.reset();
    s.parallel.ep = 1;
    s.parallel.etp = 2;
    CHECK(has_problem(s, "parallel.etp"));
  }
  SECTION("a capacity factor under every dispatcher (the router pads each expert's map)") {
    s.training.moe.capacity_factor = 1.0;
    for (auto d : {core::Dispatcher::alltoall, core::Dispatcher::allgather, core::Dispatcher::flex}) {
      s.training.moe.dispatcher = d;
      CHECK(core::check(s).empty());  // the layout evaluates: no rule of any key refuses it
    }
  }
}

TEST_CASE("experts: the dispatchers' traffic", "[analytic][experts]") {
  auto s = moe_64();
  s.parallel.etp = 1;  // ep inside the node: NVLink, 5 us + bytes / 300 GB/s bus bandwidth
  // this rank routes T/t = 4096/8 = 512 tokens; top_k 2 copies of h 4096 in 2 bytes:
  // S = 2 * 512 * 4096 * 2 = 8,388,608 bytes per all-to-all; each GPU sends 7/8 of it
  const double S = 2.0 * 512 * 4096 * 2;
  SECTION("alltoall, etp 1: two all-to-alls over the 8 ranks of the node") {
    const Dispatch d = dispatch(s);
    CHECK(d.sent_bytes == Approx(2 * 0.875 * S).epsilon(1e-12));
    CHECK(d.time_s == Approx(2 * (5e-6 + 0.875 * S / 300e9)).epsilon(1e-12));
    // the MoE layer's TP collectives are the attention's alone: one all-gather + reduce-scatter of
    // the s*b*h activation (2 * 4096 * 4096 = 33,554,432 bytes) each way
    const auto c = layer_comm(s, true);
    const double A = 2.0 * 4096 * 4096;
    CHECK(c.tp_bytes_forward == Approx(2 * 0.875 * A).epsilon(1e-12));
    CHECK(layer_comm(s, false).tp_bytes_forward == Approx(4 * 0.875 * A).epsilon(1e-12));
    CHECK(c.ep_bytes_forward == Approx(d.sent_bytes).epsilon(1e-12));
    CHECK(c.ep_backward_s == Approx(d.time_s).epsilon(1e-12));
  }
  SECTION("the busiest expert's rank sets the all-to-alls' time, not what a GPU sends") {
    s.training.moe.load_imbalance = 1.5;
    const Dispatch d = dispatch(s);
    CHECK(d.sent_bytes == Approx(2 * 0.875 * S).epsilon(1e-12));
    CHECK(d.time_s == Approx(1.5 * 2 * (5e-6 + 0.875 * S / 300e9)).epsilon(1e-12));
  }
  SECTION("alltoall with etp == tp 8: the all-to-all crosses nodes, then an etp pair of 8x the rows") {
    s.parallel.etp = 0;
    // all-to-all over 8 nodes, one rank each: 10 us + 7/8 S / 25 GB/s
    const double a2a = 10e-6 + 0.875 * S / 25e9;
    // the gathered rows of this rank's experts: 8 * 512 * 2 tokens of h: G = 8 * S = 67,108,864
    const double G = 8 * S;
    // an all-gather and a reduce-scatter on NVLink, NCCL's ring Simple: 8.4 + 7 x 3.4 = 32.2 us each
    const double pair = 2 * (32.2e-6 + 0.875 * G / 300e9);
    const Dispatch d = dispatch(s);
    CHECK(d.time_s == Approx(2 * a2a + pair).epsilon(1e-9));
    CHECK(d.sent_bytes == Approx(2 * 0.875 * S + 2 * 0.875 * G).epsilon(1e-12));
  }
  SECTION("allgather: every token of the etp*ep group gathered, no top_k") {
    s.training.moe.dispatcher = core::Dispatcher::allgather;
    // etp*ep = 8 ranks inside the node; the gathered buffer 2 * 512 * 4096 * 8 = 33,554,432
    const double G = 2.0 * 512 * 4096 * 8;
    const Dispatch d = dispatch(s);
    CHECK(d.sent_bytes == Approx(2 * 0.875 * G).epsilon(1e-12));
    // NCCL's ring Simple, 32.2 us (LL128: 27.3 us + 0.875 G / 276e9, slower at 33.5 MB)
    CHECK(d.time_s == Approx(2 * (32.2e-6 + 0.875 * G / 300e9)).epsilon(1e-12));
    // padded dropping at 1.5: every token is gathered whatever the routing, so the traffic stays;
    // each expert computes 1.5 x the mean: 512 x 2 x 8 / 8 = 1024 rows, 1536 padded
    REQUIRE(expert_rows(s).per_expert == Approx(1024).epsilon(1e-12));
    s.training.moe.capacity_factor = 1.5;
    CHECK(dispatch(s).time_s == Approx(d.time_s).epsilon(1e-12));
    CHECK(dispatch(s).sent_bytes == Approx(d.sent_bytes).epsilon(1e-12));
    CHECK(expert_rows(s).per_expert == Approx(1536).epsilon(1e-12));
  }
  SECTION("flex across nodes: a token crosses the network once per destination node") {
    s.training.moe.dispatcher = core::Dispatcher::flex;
    s.model.moe = core::MoeSpec{64, 8, 1, 1792};
    s.parallel.tp = 1;
    s.parallel.dp = 64;
    s.parallel.ep = 32;
    s.parallel.etp = 1;
    s.parallel.sequence_parallel = false;
    // ep 32 over 4 nodes; top-8 of experts spread uniformly reach 4 (1 - (3/4)^8) = 3.5995 nodes
    CHECK(distinct_nodes(*s.model.moe, 4) == Approx(4 * (1 - std::pow(0.75, 8))).epsilon(1e-12));
    CHECK(distinct_nodes(*s.model.moe, 1) == 1);
    // T = 4096 tokens routed; S = 2 * 4096 * 4096 * 8 * (3.5995 / 8) bytes
    const double Sf = 2.0 * 4096 * 4096 * 8 * 4 * (1 - std::pow(0.75, 8)) / 8;
    const Dispatch d = dispatch(s);
    CHECK(d.sent_bytes == Approx(2 * (31.0 / 32) * Sf).epsilon(1e-12));
    // across nodes with 8 ranks a node: the network's 10 us and NVLink's 5, one NIC's 25 GB/s
    CHECK(d.time_s == Approx(2 * (15e-6 + (31.0 / 32) * Sf / 25e9)).epsilon(1e-9));
    // HybridEP's padded dropping at 1.1: every expert's padded map holds 1.1 x the mean from every
    // rank, so every rank sends 1.1 x as much and the transfers take 1.1 x as long (1.1 x 3.5995
    // node sends a token, under the 4 nodes)
    s.training.moe.capacity_factor = 1.1;
    CHECK(dispatch(s).time_s == Approx(1.1 * d.time_s).epsilon(1e-12));
    CHECK(dispatch(s).sent_bytes == Approx(1.1 * d.sent_bytes).epsilon(1e-12));
    // above experts / top_k = 8 every token is on every expert (the capacity exceeds the tokens):
    // 8 x the mean, however large the factor, and a token's node sends 8 x 3.5995, at most the 4
    // nodes: 4 x 4096 tokens of 2 x 4096 bytes on the busiest rank, the time's 8 x a half of that
    s.training.moe.capacity_factor = 20;
    CHECK(s.busiest_expert() == Approx(8).epsilon(1e-12));
    const double every = 2.0 * 4096 * 4096 * 0.5;
    CHECK(dispatch(s).time_s == Approx(2 * 8 * (15e-6 + (31.0 / 32) * every / 25e9)).epsilon(1e-9));
    CHECK(dispatch(s).sent_bytes == Approx(2 * 8 * (31.0 / 32) * every).epsilon(1e-12));
    // a dropless imbalance cannot exceed it either
    s.training.moe.capacity_factor = 0;
    s.training.moe.load_imbalance = 20;
    CHECK(s.busiest_expert() == Approx(8).epsilon(1e-12));
    s.training.moe.capacity_factor = 20;
    // each expert takes every token of the 32 ranks' 4,096: 131,072 rows
    CHECK(expert_rows(s).per_expert == Approx(4096.0 * 32).epsilon(1e-12));
  }
  SECTION("node-limited routing: a token reaches only the nodes of the groups its router keeps") {
    // DeepSeek-V3: 256 experts in 8 groups, top-8 from the best 4 groups
    core::MoeSpec v3{256, 8, 1, 2048};
    v3.router_groups = 8;
    v3.router_group_topk = 4;
    // ep 64 on 8 nodes, a group a node: half the nodes are kept, and a kept one is reached unless
    // all 8 experts miss its quarter of the kept experts: 8 * 1/2 * (1 - (3/4)^8) = 3.5995, where
    // uniform experts would reach 8 (1 - (7/8)^8) = 5.2509 (DeepSeek-V3's "at most 4 nodes")
    CHECK(distinct_nodes(v3, 8) == Approx(4 * (1 - std::pow(0.75, 8))).epsilon(1e-12));
    // a group on 2 nodes (16 nodes): 16 * 1/2 * (1 - (1 - 1/8)^8) = 5.2509
    CHECK(distinct_nodes(v3, 16) == Approx(8 * (1 - std::pow(7.0 / 8, 8))).epsilon(1e-12));
    // two groups a node (4 nodes): the node keeps none with C(6,4)/C(8,4) = 15/70, one with
    // 2 C(6,3)/70 = 40/70 (reached unless 8 experts miss 1 of 4 groups), both with 15/70 (2 of 4)
    const double hit = 40.0 / 70 * (1 - std::pow(0.75, 8)) + 15.0 / 70 * (1 - std::pow(0.5, 8));
    CHECK(distinct_nodes(v3, 4) == Approx(4 * hit).epsilon(1e-12));
    // at most the kept groups' nodes: G' = 4 where a node holds a group or more, 4 n / G beyond
    for (int n : {2, 4, 8, 16, 32}) CHECK(distinct_nodes(v3, n) <= 4.0 * std::max(1, n / 8) + 1e-12);
    // groups that do not line up with nodes: drawn uniformly
    CHECK(distinct_nodes(v3, 3) == Approx(3 * (1 - std::pow(2.0 / 3, 8))).epsilon(1e-12));
    // no group limit: uniform
    v3.router_group_topk = 0;
    CHECK(distinct_nodes(v3, 8) == Approx(8 * (1 - std::pow(7.0 / 8, 8))).epsilon(1e-12));

    // in the dispatch: the flex layout above (ep 32 over 4 nodes), its 64 experts in 4 groups of
    // which a token's 8 come from the best 2: 4 * 2/4 * (1 - (1/2)^8) = 1.9922 nodes a token
    s.training.moe.dispatcher = core::Dispatcher::flex;
    s.model.moe = core::MoeSpec{64, 8, 1, 1792};
    s.model.moe->router_groups = 4;
    s.model.moe->router_group_topk = 2;
    s.parallel.tp = 1;
    s.parallel.dp = 64;
    s.parallel.ep = 32;
    s.parallel.etp = 1;
    s.parallel.sequence_parallel = false;
    const double S = 2.0 * 4096 * 4096 * 8 * (2 * (1 - std::pow(0.5, 8))) / 8;
    CHECK(dispatch(s).sent_bytes == Approx(2 * (31.0 / 32) * S).epsilon(1e-12));
  }
}

TEST_CASE("experts: grouped GEMM rows and memory", "[analytic][experts]") {
  auto s = moe_64();
  SECTION("etp == tp with SP: all tokens of the TP group reach the experts, as before folding") {
    // R = 4096 / 8 * 8 = 4096 rows; per expert R * top_k 2 * ep 8 / 8 experts = 8192; one local
    // expert, 14336 / 8 = 1792 columns of it
    const ExpertRows r = expert_rows(s);
    CHECK(r.per_expert == Approx(8192).epsilon(1e-12));
    CHECK(r.local_experts == Approx(1).epsilon(1e-12));
    CHECK(r.width == Approx(1792).epsilon(1e-12));
  }
  SECTION("etp 1: each rank's own 512 tokens, whole experts; the busiest expert 1.25x") {
    s.parallel.etp = 1;
    s.training.moe.load_imbalance = 1.25;
    const ExpertRows r = expert_rows(s);
    CHECK(r.per_expert == Approx(512 * 2 * 8 / 8 * 1.25).epsilon(1e-12));  // 1280
    CHECK(r.width == Approx(14336).epsilon(1e-12));
    const LayerOps ops = layer_ops(s, true);
    const auto* fc1 = ops.find(core::Operator::fc1_gated);
    REQUIRE(fc1 != nullptr);
    CHECK(fc1->m == Approx(1280).epsilon(1e-12));
    CHECK(fc1->n == Approx(2 * 14336).epsilon(1e-12));
    CHECK(fc1->count == Approx(1).epsilon(1e-12));
    // the router runs on the 512 tokens this rank routes
    CHECK(ops.find(core::Operator::router)->m == Approx(512).epsilon(1e-12));
  }
  SECTION("a capacity factor pads every expert to capacity and overrides the imbalance") {
    s.parallel.etp = 1;
    s.training.moe.load_imbalance = 3;
    s.training.moe.capacity_factor = 1.0;
    CHECK(expert_rows(s).per_expert == Approx(1024).epsilon(1e-12));
  }
  SECTION("the alltoall dispatcher sorts the received rows by local expert, and unsorts them") {
    // 16 experts on ep 8: two local experts. Each rank routes 512 tokens x top_k 2 = 1024 rows and
    // receives 2 x 512 x 2 x 8 / 16 = 1024; Megatron-Core's "Permutation 2" moves those once more
    s.parallel.etp = 1;
    s.model.moe->experts = 16;
    REQUIRE(expert_rows(s).local_experts == Approx(2).epsilon(1e-12));
    s.training.moe.dispatcher = core::Dispatcher::alltoall;
    CHECK(permuted_rows(s) == Approx(1024 + 1024).epsilon(1e-12));
    const LayerOps ops = layer_ops(s, true);
    CHECK(ops.find(core::Operator::permute)->m == Approx(2048).epsilon(1e-12));
    CHECK(ops.find(core::Operator::unpermute)->m == Approx(2048).epsilon(1e-12));
    // DeepEP's fused dispatch permutes the sender's rows inside its kernel: each row once each way
    s.training.moe.dispatcher = core::Dispatcher::flex;
    CHECK(permuted_rows(s) == Approx(1024).epsilon(1e-12));
    // token dropping at capacity factor 1.25 pads both: 1280 sent, 1280 received
    s.training.moe.dispatcher = core::Dispatcher::alltoall;
    s.training.moe.capacity_factor = 1.25;
    CHECK(permuted_rows(s) == Approx(1280 + 1280).epsilon(1e-12));
    s.training.moe.capacity_factor = 0;
    // etp 2 with sequence parallelism (tp 8): the sort runs after the expert-TP all-gather, on
    // 4096 / 8 x 2 = 1024 tokens' rows: 1024 x 2 x 8 / 16 = 1024 an expert, 2048 for the two
    s.parallel.etp = 2;
    REQUIRE(expert_rows(s).per_expert == Approx(1024).epsilon(1e-12));
    CHECK(permuted_rows(s) == Approx(1024 + 2048).epsilon(1e-12));
    s.parallel.etp = 1;
    // one local expert: nothing to sort
    s.model.moe->experts = 8;
    CHECK(permuted_rows(s) == Approx(1024).epsilon(1e-12));
  }
  SECTION("expert parameters split etp ways, their states sharded over the experts' dp") {
    // one expert's SwiGLU MLP: 3 * 4096 * 14336 = 176,160,768 parameters (no bias)
    const double expert = 3.0 * 4096 * 14336;
    CHECK(layer_params_per_gpu(s, true).expert == Approx(expert / 8).epsilon(1e-12));  // etp = tp 8
    s.parallel.etp = 1;
    CHECK(layer_params_per_gpu(s, true).expert == Approx(expert).epsilon(1e-12));
    CHECK(zero_shard_ranks(s, true) == 8);   // edp = 64 / (1 * 8)
    s.parallel.etp = 2;
    CHECK(layer_params_per_gpu(s, true).expert == Approx(expert / 2).epsilon(1e-12));
    CHECK(zero_shard_ranks(s, true) == 4);   // edp = 64 / (2 * 8)
  }
}

TEST_CASE("experts: without tables the report's experts time holds the routed FP8 casts, hand-worked",
          "[analytic][experts]") {
  // etp 1, one local expert: 512 tokens x top_k 2 x ep 8 / 8 experts = 1024 rows, hidden 4096, the
  // whole expert (ffn 14336, gated: fc1 writes 2 x 14336). Current scaling casts each GEMM operand
  // unfused at 6 bytes an element (memory_ops.cpp fp8_cast_bytes): forward fc1's and fc2's inputs,
  // backward their output gradients; no rescale. Timed at hbm_efficiency x memory_bound_factor.
  auto s = moe_64();
  s.parallel.etp = 1;
  auto& g = s.hardware.gpu;
  g.peak_flops[core::index(core::Precision::fp8)] = 2 * g.peak_flops[core::index(core::Precision::bf16)];
  g.memory_bound_factor = 2.0;
  s.training.precision = core::Precision::fp8;
  s.training.fp8_recipe = core::Fp8Recipe::current;
  s.training.recompute = core::Recompute::none;
  REQUIRE(core::check(s).empty());
  const LayerOps ops = layer_ops(s, true);
  const auto* cast = ops.find(core::Operator::fp8_cast);
  REQUIRE(cast != nullptr);
  const double bw = g.hbm_Bps * g.hbm_efficiency;
  const double forward = 6.0 * 1024 * (4096 + 14336);      // 113,246,208 bytes
  const double backward = 6.0 * 1024 * (2 * 14336 + 4096);  // 201,326,592 bytes
  CHECK(cast->forward_s == Approx(2.0 * forward / bw).epsilon(1e-9));
  CHECK(cast->backward_input_s == Approx(2.0 * backward / bw).epsilon(1e-9));
  CHECK(cast->backward_weight_s == 0);
  // the report's "experts" share of an MoE layer: the grouped GEMMs, the activation and these casts
  double expected = 0;
  for (auto op : {core::Operator::fc1_gated, core::Operator::fc2, core::Operator::swiglu, core::Operator::fp8_cast})
    expected += ops.find(op)->total_s();
  const core::Report r = analytic::evaluate(s);
  REQUIRE(r.experts.present);
  CHECK(r.experts.experts_s == Approx(expected).epsilon(1e-9));  // the casts' 0.36 ms at 2x among them
}
