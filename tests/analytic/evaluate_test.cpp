#include <catch2/catch.hpp>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/core/names.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

TEST_CASE("analytic: evaluate fills the report for GPT-3 175B on 1024 A100s", "[analytic][evaluate]") {
  const auto s = testing::gpt3_1024();
  const auto r = evaluate(s);
  CHECK(r.engine == core::EngineKind::analytic);
  CHECK(r.scenario.name == s.name);
  CHECK(r.params == Approx(175244992512.0).epsilon(1e-12));
  CHECK(r.model_flops_per_step == Approx(model_flops_per_step(s)).epsilon(1e-12));
  CHECK(r.stages.size() == 16);
  CHECK(r.fits);
  CHECK(r.peak_stage == 0);
  // 1F1B: bubble = (p-1)/m of the compute = 15/192
  CHECK(r.bubble_s == Approx(r.compute_s * 15.0 / 192).epsilon(1e-12));
  double exposed = 0;
  for (const auto& k : r.comm) exposed += k.exposed_s;
  CHECK(r.step_s == Approx(r.compute_s + r.bubble_s + exposed + r.optimizer_s).epsilon(1e-12));
  CHECK(r.tokens_per_s == Approx(1536.0 * 2048 / r.step_s).epsilon(1e-12));
  CHECK(r.tflops_per_gpu == Approx(r.model_flops_per_step / r.step_s / 1024 / 1e12).epsilon(1e-12));
  CHECK(r.mfu == Approx(r.tflops_per_gpu / 312).epsilon(1e-12));
  // Megatron-LM's count of this dense GPT (megatron_count.hpp, 2025): 72 L h^2 + 6 h s L (half the
  // causal matrix) + 6 h V a token against the model count's 72 L h^2 (1 + s/6h + V/12Lh); V = 51,200
  // is a multiple of 128 x tp 8 already
  const double seq = 2048, L = 96, h = 12288, V = 51200;
  CHECK(r.megatron_tflops_per_gpu ==
        Approx(r.tflops_per_gpu * (1 + seq / (12 * h) + V / (12 * L * h)) / (1 + seq / (6 * h) + V / (12 * L * h)))
            .epsilon(1e-12));
  CHECK(r.hfu > r.mfu);
  // Narayanan et al. 2021 Table 1 / Korthikanti Table 5 measure roughly 40-55% MFU for this class
  // of run; a first-order model at 0.8 GEMM efficiency must land in a plausible band.
  CHECK(r.mfu > 0.3);
  CHECK(r.mfu < 0.8);
}

namespace {
// One GPU, HBM time left out (hbm 0): every second is a GEMM at 0.8 x 312 TFLOP/s, so the step
// takes exactly hardware FLOPs / (0.8 x peak) and the HFU is 0.8.
core::Scenario single_gpu() {
  core::Scenario s;
  s.name = "gpt-1.3b-1gpu";
  s.model.name = "gpt-1.3b";
  s.model.layers = 24;
  s.model.hidden = 2048;
  s.model.heads = 16;
  s.model.kv_heads = 16;
  s.model.ffn_hidden = 8192;
  s.model.vocab = 51200;
  s.hardware = testing::dgx_a100_80g();
  s.hardware.gpu.hbm_Bps = 0;
  s.gpus = 1;
  s.training.seq_len = 2048;
  s.training.micro_batch = 4;
  s.training.global_batch = 32;
  return s;
}
}  // namespace

TEST_CASE("analytic: the step time on one GPU is the FLOPs at the achieved rate", "[analytic][evaluate]") {
  auto s = single_gpu();
  SECTION("selective recomputation") {
    const auto r = evaluate(s);
    CHECK(r.step_s == Approx(hardware_flops_per_step(s) / (0.8 * 312e12)).epsilon(1e-9));
    CHECK(r.hfu == Approx(0.8).epsilon(1e-9));
    CHECK(r.bubble_s == 0);
    CHECK(core::describe(r.bounded_by) == "stage 0 compute (100%)");
  }
  SECTION("full recomputation: HFU still 0.8, MFU 0.8 x model/hardware FLOPs") {
    s.training.recompute = core::Recompute::full;
    const auto r = evaluate(s);
    CHECK(r.hfu == Approx(0.8).epsilon(1e-9));
    CHECK(r.mfu == Approx(0.8 * model_flops_per_step(s) / hardware_flops_per_step(s)).epsilon(1e-9));
  }
}

TEST_CASE("analytic: pipeline bubbles per schedule", "[analytic][evaluate]") {
  auto s = single_gpu();
  s.gpus = 4;
  s.parallel.pp = 4;
  s.training.global_batch = 64;  // m = 16
  s.training.overlap.pp = true;
  const auto base = evaluate(s);
  const double per_mb = base.compute_s / 16;
  SECTION("1F1B: (p-1) slots of the slowest stage") {
    CHECK(base.bubble_s == Approx(3 * per_mb).epsilon(1e-12));
  }
  SECTION("GPipe: the same bubble (Huang et al. 2019)") {
    s.parallel.schedule = core::Schedule::gpipe;
    CHECK(evaluate(s).bubble_s == Approx(3 * per_mb).epsilon(1e-12));
  }
  SECTION("interleaved: (p-1)/v") {
    s.parallel.schedule = core::Schedule::interleaved;
    s.parallel.vpp = 2;
    const auto r = evaluate(s);
    CHECK(r.bubble_s == Approx(r.compute_s / 16 * 3 / 2).epsilon(1e-12));
  }
  SECTION("ZB-H1: (p-1)(T_F + T_B - T_W)") {
    s.parallel.schedule = core::Schedule::zb_h1;
    const auto r = evaluate(s);
    const double f = r.stage_forward_s;
    const double bw = r.stage_backward_s;
    CHECK(r.bubble_s < base.bubble_s);
    CHECK(r.bubble_s > 0);
    CHECK(r.compute_s / 16 == Approx(f + bw).epsilon(1e-12));
  }
}

TEST_CASE("analytic: exposed communication and overlap ratios", "[analytic][evaluate]") {
  auto s = testing::gpt3_1024();
  s.hardware.gpu.hbm_Bps = 0;
  s.hardware.intra.latency_s = 0;
  s.hardware.network.latency_s = 0;
  s.parallel.sequence_parallel = false;
  s.training.recompute = core::Recompute::none;
  const double sbh = 2048.0 * 12288, t = 8, h = 12288, rate = 312e12 * 0.8;
  SECTION("TP: 4 all-reduces of 2sbh bytes against the 72 s h^2 / t FLOPs of the layer's GEMMs") {
    // ratio = 4 (56 us + 1.75 * 2 sbh / 300e9) / (3 * 24 s h^2 / t / rate): NCCL's ring Simple on
    // NVLink carries its own latency, 8.4 + 14 x 3.4 = 56 us (the files' latencies are not read);
    // without it 14 t rate / (72 h 300e9)
    const auto r = evaluate(s);
    const double gemms = 72 * 2048 * h * h / t / rate;
    CHECK(r.of(core::CommBucket::tp).overlap_ratio == Approx(4 * (56e-6 + 1.75 * 2 * sbh / 300e9) / gemms).epsilon(1e-9));
    CHECK(r.of(core::CommBucket::tp).exposed_s > 0);  // overlap.tp is off: all of it is exposed
    s.training.overlap.tp = true;
    CHECK(evaluate(s).of(core::CommBucket::tp).exposed_s == 0);  // ratio 0.13 < 1: it hides
  }
  SECTION("TP at any degree: 16 (t-1) rate / (72 h busbw), which is 14 t ... only at t = 8") {
    // tp 4: 4 (28.8 us + 2 * 3/4 * 2 sbh / 300e9) / (3 * 24 s h^2 / 4 / rate), the ring Simple's
    // latency 8.4 + 6 x 3.4 = 28.8 us; without it 16 * 3 * rate / (72 h 300e9)
    s.parallel.tp = 4;
    s.parallel.dp = 16;
    const auto r = evaluate(s);
    CHECK(r.of(core::CommBucket::tp).overlap_ratio ==
          Approx(4 * (28.8e-6 + 1.5 * 2 * sbh / 300e9) / (72 * 2048 * h * h / 4 / rate)).epsilon(1e-9));
    CHECK(r.of(core::CommBucket::tp).overlap_ratio != Approx(14 * 4 * rate / (72 * h * 300e9)).epsilon(1e-3));
  }
  SECTION("TP overlap needs the TP group inside a node: tp 16 over two nodes stays serial") {
    s.training.overlap.tp = true;
    s.parallel.tp = 16;
    s.parallel.pp = 8;
    const auto r = evaluate(s);
    const auto& tp = r.of(core::CommBucket::tp);
    CHECK(tp.crosses_nodes);
    CHECK_FALSE(tp.overlappable);
    CHECK(tp.exposed_s > tp.time_s);  // all of it, in every slot of the pipeline (m + p - 1)
    s.parallel.tp = 8;  // one node: the same switch hides it
    s.parallel.pp = 16;
    CHECK(evaluate(s).of(core::CommBucket::tp).exposed_s == 0);
  }
  SECTION("DP: without overlap the whole reduce-scatter and all-gather are exposed") {
    s.training.overlap.dp = false;
    const auto r = evaluate(s);
    const auto& dp = r.of(core::CommBucket::dp);
    CHECK(dp.exposed_s == Approx(dp.time_s).epsilon(1e-9));
    CHECK(dp.crosses_nodes);
  }
  SECTION("PP: fill and drain only when overlapped, every transfer otherwise") {
    const double hop = 6291456.0 / 25e9;
    CHECK(evaluate(s).of(core::CommBucket::pp).exposed_s == Approx(2 * 15 * hop).epsilon(1e-9));
    s.training.overlap.pp = false;
    CHECK(evaluate(s).of(core::CommBucket::pp).exposed_s == Approx(2 * (192 + 15) * hop).epsilon(1e-9));
  }
  SECTION("ZeRO-3: a layer's bf16 weights gathered over dp against its forward") {
    s.parallel.zero = 3;
    const auto r = evaluate(s);
    // layer on one GPU 226,576,896 params x 2 bytes, 7/8 at 25 GB/s; forward 24 s h^2/t + 4 s^2 h/t;
    // NCCL's ring Simple over 8 nodes of one rank: 8.4 + 7 network steps x 14 us = 106.4 us
    const double gather = 106.4e-6 + 0.875 * 2 * 226576896.0 / 25e9;
    const double fwd = (24 * 2048 * h * h + 4 * 2048.0 * 2048 * h) / t / rate;
    CHECK(r.zero3_overlap_ratio == Approx(gather / fwd).epsilon(1e-9));
  }
  SECTION("SM contention: the hidden DP collectives slow compute by share x their time") {
    // The first stage's reduce-scatter (0.205 s) and all-gather (0.102 s) outlast what they may
    // hide behind, its last backward (2F) and a forward (F): the hidden part is 3F, F = 6 layers'
    // forward (no HBM time here). TP is serial and PP sends are left out: nothing else hides.
    const double F = 6 * (24 * 2048 * h * h + 4 * 2048.0 * 2048 * h) / t / rate;
    const double hidden = 3 * F;
    const auto plain = evaluate(s);
    CHECK(plain.contention_s == 0);
    s.hardware.gpu.sms = 108;
    s.hardware.gpu.comm_sms = 16;
    const auto r = evaluate(s);
    CHECK(r.contention_s == Approx(16.0 / 108 * hidden).epsilon(1e-9));  // 0.0455 s
    CHECK(r.compute_s - plain.compute_s == Approx(r.contention_s).epsilon(1e-9));
    CHECK(r.step_s - plain.step_s == Approx(r.contention_s).epsilon(1e-9));
    // a collective holding 105 of the 108 SMs takes 0.9 of the compute, the scheduler's floor
    s.hardware.gpu.comm_sms = 105;
    CHECK(evaluate(s).contention_s == Approx(0.9 * hidden).epsilon(1e-9));
  }
}

// evaluate() keeps its layer costs from one call to the next (layer_costs(s, out)): every field is
// written, so what a previous scenario left there (an MoE model under full recomputation on a
// pipeline) must leave no trace in a dense model's costs without one.
TEST_CASE("analytic: layer costs written into used storage equal fresh ones", "[analytic][evaluate]") {
  core::Scenario moe = testing::megatron_1t_3072();  // full recomputation, pp 64
  moe.model.moe = core::MoeSpec{8, 2, 2, 0};
  core::Scenario dense = testing::gpt3_1024();  // selective recomputation
  dense.parallel.pp = 1;
  dense.parallel.dp = 128;
  const auto same_ops = [](const LayerOps& a, const LayerOps& b) {
    REQUIRE(a.count == b.count);
    CHECK(a.tables == b.tables);
    CHECK(a.attention_gemm_s == b.attention_gemm_s);
    for (int i = 0; i < a.count; ++i) {
      const auto &x = a.ops[static_cast<std::size_t>(i)], &y = b.ops[static_cast<std::size_t>(i)];
      CHECK(x.op == y.op);
      CHECK(x.forward_s == y.forward_s);
      CHECK(x.backward_input_s == y.backward_input_s);
      CHECK(x.backward_weight_s == y.backward_weight_s);
    }
  };
  for (const auto* s : {&dense, &moe}) {
    LayerCosts used;
    layer_costs(s == &dense ? moe : dense, used);  // the other scenario's costs first
    layer_costs(*s, used);
    const LayerCosts fresh = layer_costs(*s);
    INFO((s == &dense ? "dense after MoE" : "MoE after dense"));
    same_ops(used.dense_ops, fresh.dense_ops);
    same_ops(used.moe_ops, fresh.moe_ops);
    for (auto [a, b] : {std::pair{&used.dense, &fresh.dense}, std::pair{&used.moe, &fresh.moe}}) {
      CHECK(a->forward == b->forward);
      CHECK(a->backward_input == b->backward_input);
      CHECK(a->backward_weight == b->backward_weight);
      CHECK(a->recompute == b->recompute);
    }
    CHECK(used.moe_comm.ep_forward_s == fresh.moe_comm.ep_forward_s);
    CHECK(used.moe_comm.tp_forward_s == fresh.moe_comm.tp_forward_s);
    CHECK(used.moe_params.expert == fresh.moe_params.expert);
    CHECK(used.activation_moe == fresh.activation_moe);
    CHECK(used.recomputed_dense == fresh.recomputed_dense);
    CHECK(used.recomputed_moe == fresh.recomputed_moe);
    CHECK(used.p2p_bytes == fresh.p2p_bytes);
    CHECK(used.p2p_s == fresh.p2p_s);
    CHECK(used.logits.forward == fresh.logits.forward);
  }
  // (the cases differ where a stale field would show)
  CHECK(layer_costs(moe).recomputed_moe > 0);
  CHECK(layer_costs(moe).p2p_s > 0);
  CHECK(layer_costs(dense).p2p_s == 0);
  CHECK(layer_costs(dense).moe_ops.count == 0);
}

// The sweep shares layer costs between candidates with equal layer_costs_key (docs/performance.md
// "Planner"): what the key leaves out (vpp, schedule, ZeRO stage, the overlap switches) must not
// move a number of them. TP overlap once read its switch there, and the Mixtral sweep's rows then
// depended on which candidate filled the cache first.
TEST_CASE("analytic: layer costs do not read what layer_costs_key leaves out", "[analytic][evaluate]") {
  core::Scenario a = testing::gpt3_1024();  // tp 8 in one node with SP: TP overlap applies
  a.training.fusion.projections = core::Fusion::eager;  // (input gradients summed: some TP stays serial)
  core::Scenario b = a;
  b.training.overlap.tp = !a.training.overlap.tp;
  b.training.overlap.dp = !a.training.overlap.dp;
  b.training.overlap.pp = !a.training.overlap.pp;
  b.parallel.vpp = 2;
  b.parallel.zero = 2;
  REQUIRE(layer_costs_key(a) == layer_costs_key(b));
  const LayerCosts x = layer_costs(a), y = layer_costs(b);
  CHECK(x.dense_comm.tp_forward_s == y.dense_comm.tp_forward_s);
  CHECK(x.dense_comm.tp_serial_forward_s == y.dense_comm.tp_serial_forward_s);
  CHECK(x.dense_comm.tp_serial_backward_s == y.dense_comm.tp_serial_backward_s);
  CHECK(x.dense_comm.tp_serial_backward_s > 0);  // (a case where the field is written)
  CHECK(x.dense.forward == y.dense.forward);
  CHECK(x.dense.backward_input == y.dense.backward_input);
}
