#include <catch2/catch.hpp>

#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/offload.hpp"
#include "ptdsim/analytic/params.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

namespace {

struct Fig1Row {
  const char* name;
  int layers, hidden, heads, gpus, tp, pp, vpp, micro_batch, global_batch;
  double params_gib, none_gib, seqsel_gib;
};

// tests/data/korthikanti_fig1_memory.yaml (Korthikanti et al. 2022, Figure 1, via Calculon),
// read by hand: per-GPU GiB of the first pipeline stage.
constexpr Fig1Row kFig1[] = {
    {"megatron-22b", 48, 6144, 64, 8, 8, 1, 1, 4, 4, 45.5625, 59.25, 9.5625},
    {"gpt3-175b", 96, 12288, 96, 64, 8, 8, 3, 1, 64, 45.5625, 66.84375, 12.3515625},
    {"turing-530b", 105, 20480, 128, 280, 8, 35, 3, 1, 280, 31.640625, 114.0234375, 23.076171875},
    {"megatron-1t", 128, 25600, 160, 512, 8, 64, 1, 1, 512, 32.958984375, 131.25, 26.5625},
};

core::Scenario fig1_scenario(const Fig1Row& r, bool seqsel) {
  core::Scenario s;
  s.model.name = r.name;
  s.model.layers = r.layers;
  s.model.hidden = r.hidden;
  s.model.heads = r.heads;
  s.model.kv_heads = r.heads;
  s.model.ffn_hidden = 4 * r.hidden;
  s.model.vocab = 51200;
  s.hardware = testing::dgx_a100_80g();
  s.gpus = r.gpus;
  s.parallel.tp = r.tp;
  s.parallel.pp = r.pp;
  s.parallel.vpp = r.vpp;
  s.parallel.dp = 1;
  s.parallel.schedule = r.vpp > 1 ? core::Schedule::interleaved : core::Schedule::one_f_one_b;
  s.parallel.sequence_parallel = seqsel;
  s.training.seq_len = 2048;
  s.training.micro_batch = r.micro_batch;
  s.training.global_batch = r.global_batch;
  s.training.precision = core::Precision::fp16;
  s.training.recompute = seqsel ? core::Recompute::selective : core::Recompute::none;
  s.training.flash_attention = false;
  return s;
}

}  // namespace

TEST_CASE("analytic: Korthikanti et al. Figure 1 first-stage memory", "[analytic][memory][acceptance]") {
  for (const auto& r : kFig1) {
    INFO(r.name);
    SECTION(std::string(r.name) + " tensor parallel, no recomputation") {
      // 22B check by hand: sbh = 2048*4*6144 = 50,331,648; 10 + 24/8 + 5*64*2048/(6144*8) = 26.333
      // bytes/sbh -> 1.3254e9 per layer x 48 = 59.25 GiB
      const auto s = fig1_scenario(r, false);
      CHECK(korthikanti_first_stage_activation_bytes(s) / core::kGiB == Approx(r.none_gib).epsilon(0.03));
      CHECK(korthikanti_params_and_optimizer_bytes(s) / core::kGiB == Approx(r.params_gib).epsilon(1e-9));
    }
    SECTION(std::string(r.name) + " sequence parallel + selective recomputation") {
      // 34 sbh / t per layer; 175B: 34*2048*12288/8 = 106,954,752 x 96 x (1 + 7/24) = 12.35 GiB
      const auto s = fig1_scenario(r, true);
      CHECK(korthikanti_first_stage_activation_bytes(s) / core::kGiB == Approx(r.seqsel_gib).epsilon(0.03));
    }
  }
}

TEST_CASE("analytic: Korthikanti's parameter formula, 22B", "[analytic][memory]") {
  // 12 h^2 L / (t p) = 12 * 6144^2 * 48 / 8 = 2,717,908,992 params x 18 bytes = 45.5625 GiB exactly
  const auto s = fig1_scenario(kFig1[0], false);
  CHECK(korthikanti_params_and_optimizer_bytes(s) == Approx(2717908992.0 * 18).epsilon(1e-12));
  CHECK(korthikanti_params_and_optimizer_bytes(s) / core::kGiB == Approx(45.5625).epsilon(1e-12));
}

TEST_CASE("analytic: activation formulas of Korthikanti section 4", "[analytic][memory]") {
  auto s = fig1_scenario(kFig1[1], false);  // 175B: s 2048, b 1, h 12288, a 96, t 8
  const double sbh = 2048.0 * 12288, as_h = 96.0 * 2048 / 12288;
  SECTION("no parallelism: sbh(34 + 5as/h)") {
    s.parallel.tp = 1;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (34 + 5 * as_h)).epsilon(1e-12));
  }
  SECTION("tensor parallel: sbh(10 + 24/t + 5as/(ht))") {
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (10 + 24.0 / 8 + 5 * as_h / 8)).epsilon(1e-12));
  }
  SECTION("tensor + sequence parallel: sbh(34 + 5as/h)/t") {
    s.parallel.sequence_parallel = true;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (34 + 5 * as_h) / 8).epsilon(1e-12));
  }
  SECTION("flash attention removes the 5as/h term like selective recomputation") {
    s.training.flash_attention = true;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (10 + 24.0 / 8)).epsilon(1e-12));
  }
  SECTION("full recomputation keeps 2sbh, /t with SP") {
    s.training.recompute = core::Recompute::full;
    CHECK(activation_bytes_per_layer(s) == Approx(2 * sbh).epsilon(1e-12));
    s.parallel.sequence_parallel = true;
    CHECK(activation_bytes_per_layer(s) == Approx(2 * sbh / 8).epsilon(1e-12));
  }
  SECTION("context parallel divides the tokens by c") {
    s.training.flash_attention = true;
    s.parallel.cp = 2;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh / 2 * (10 + 24.0 / 8)).epsilon(1e-12));
  }
  SECTION("swiglu and GQA: 10 + (4 + 4k/a + 6f/h)/t") {
    s.model.mlp = core::Mlp::swiglu;
    s.model.kv_heads = 8;
    s.model.ffn_hidden = 32768;
    s.training.flash_attention = true;
    const double split = 4 + 4.0 * 8 / 96 + 6.0 * 32768 / 12288;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (10 + split / 8)).epsilon(1e-12));
  }
  SECTION("FP8 keeps four GEMM inputs at one byte: 10 - 2 + (24 - 1 - 4)/t with SP over t") {
    // 34 sbh: QKV and MLP inputs 2sbh each -> 1; projection input 2sbh -> 1; fc2 input 2sbf -> sbf
    s.hardware.gpu.peak_flops[core::index(core::Precision::fp8)] = 1e15;
    s.training.precision = core::Precision::fp8;
    s.training.flash_attention = true;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (8 + 19.0 / 8)).epsilon(1e-12));
    s.parallel.sequence_parallel = true;
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * 27 / 8).epsilon(1e-12));
  }
}

TEST_CASE("analytic: Megatron-Core's recompute modules keep only a recomputed module's input", "[analytic][memory]") {
  auto s = fig1_scenario(kFig1[1], false);  // 175B: s 2048, b 1, h 12288, a 96, t 8, gelu, f = 4h
  const double sbh = 2048.0 * 12288, as_h = 96.0 * 2048 / 12288;
  s.training.recompute = core::Recompute::selective;
  SECTION("mlp: the split part loses the MLP's 4sbf = 16 sbh, the attention's 8 sbh stay: 10 + 8/t") {
    s.training.flash_attention = true;
    s.training.recompute_modules = 1u << static_cast<unsigned>(core::RecomputeModule::mlp);
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (10 + 8.0 / 8)).epsilon(1e-12));
  }
  SECTION("without core_attn among them the scores stay (no flash attention): 10 + (8 + 5as/h)/t") {
    s.training.flash_attention = false;
    s.training.recompute_modules = 1u << static_cast<unsigned>(core::RecomputeModule::mlp);
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (10 + (8 + 5 * as_h) / 8)).epsilon(1e-12));
    s.training.recompute_modules |= 1u << static_cast<unsigned>(core::RecomputeModule::core_attn);
    CHECK(activation_bytes_per_layer(s) == Approx(sbh * (10 + 8.0 / 8)).epsilon(1e-12));
  }
  SECTION("read under selective only: full keeps 2sbh whatever the modules") {
    s.training.recompute = core::Recompute::full;
    s.training.recompute_modules = 1u << static_cast<unsigned>(core::RecomputeModule::mlp);
    CHECK(activation_bytes_per_layer(s) == Approx(2 * sbh).epsilon(1e-12));
  }
}

TEST_CASE("analytic: moe_act, shared_experts and layernorm drop what their module's output held", "[analytic][memory]") {
  // Mixtral-like at tp 1 (no SP): s 4096, b 1, h 4096, 8 experts of 14336, top 2, one shared expert
  // of 2048 added; bf16, flash attention. Routed units on the rank: top_k s b f_e x busiest
  auto s = testing::mixtral_like_64(1);
  s.model.moe->shared_experts = 1;
  s.model.moe->shared_ffn_hidden = 2048;
  s.training.recompute = core::Recompute::selective;
  s.training.flash_attention = true;
  const double sb = 4096.0, sbh = sb * 4096;
  const double routed_f = 2 * sb * 14336 * s.training.moe.busiest(), shared_f = sb * 2048;
  const auto bit = [](core::RecomputeModule m) { return 1u << static_cast<unsigned>(m); };
  const auto with = [&](unsigned mods, bool moe_layer = true) {
    s.training.recompute_modules = bit(core::RecomputeModule::core_attn) | mods;
    return layer_activation_bytes(s, moe_layer, core::Recompute::selective);
  };
  const double base = with(0);
  SECTION("bf16: fc2's input of the routed experts (2 bytes a unit), the shared experts' 6, a norm's output 2sbh") {
    CHECK(base - with(bit(core::RecomputeModule::moe_act)) == Approx(2 * routed_f).epsilon(1e-12));
    CHECK(base - with(bit(core::RecomputeModule::shared_experts)) == Approx(6 * shared_f).epsilon(1e-12));
    CHECK(base - with(bit(core::RecomputeModule::layernorm)) == Approx(2 * sbh).epsilon(1e-12));
    // moe recomputes the whole block already: moe_act adds nothing to it
    CHECK(with(bit(core::RecomputeModule::moe) | bit(core::RecomputeModule::moe_act)) ==
          Approx(with(bit(core::RecomputeModule::moe))).epsilon(1e-12));
    // a dense layer of the same model: its norms are fused, it has no experts
    const double dense = with(0, false);
    CHECK(with(bit(core::RecomputeModule::moe_act) | bit(core::RecomputeModule::layernorm) |
                   bit(core::RecomputeModule::shared_experts), false) == Approx(dense).epsilon(1e-12));
  }
  SECTION("fp8: what was held as one FP8 byte goes, fc2 keeping the original (set_save_original_input)") {
    s.training.precision = core::Precision::fp8;
    const double fp8 = with(0);
    CHECK(fp8 - with(bit(core::RecomputeModule::moe_act)) == Approx(routed_f).epsilon(1e-12));
    CHECK(fp8 - with(bit(core::RecomputeModule::layernorm)) == Approx(sbh).epsilon(1e-12));
    CHECK(fp8 - with(bit(core::RecomputeModule::shared_experts)) == Approx(5 * shared_f).epsilon(1e-12));
  }
  SECTION("MLA keeps its input norm apart: layernorm drops the down projections' input in every layer") {
    s.model = testing::deepseek_v3();
    s.model.layers = 4;
    s.parallel.ep = 8;
    CHECK(with(0, false) - with(bit(core::RecomputeModule::layernorm), false) == Approx(2 * sbh * 7168 / 4096).epsilon(1e-12));
    CHECK(with(0) - with(bit(core::RecomputeModule::layernorm)) == Approx(4 * sbh * 7168 / 4096).epsilon(1e-12));
  }
}

TEST_CASE("analytic: fine-grained activation offloading moves the experts' inputs to the host", "[analytic][memory]") {
  // Mixtral-like at tp 1: s 4096, b 1, h 4096, 8 experts of 14336, top 2; bf16, flash attention
  auto s = testing::mixtral_like_64(1);
  s.training.recompute = core::Recompute::none;
  s.hardware.host.link_Bps = 50e9;
  const double sbh = 4096.0 * 4096, routed_f = 2 * 4096.0 * 14336 * s.training.moe.busiest();
  const auto bit = [](core::OffloadModule m) { return 1u << static_cast<unsigned>(m); };
  const double kept = layer_activation_bytes(s, true, core::Recompute::none);
  s.training.offload_modules = bit(core::OffloadModule::expert_fc1);
  // the permuted tokens the experts' fc1 keeps: k x 2sbh
  CHECK(offloaded_activation_bytes(s, true, core::Recompute::none) == Approx(2 * 2 * sbh).epsilon(1e-12));
  CHECK(kept - layer_activation_bytes(s, true, core::Recompute::none) == Approx(4 * sbh).epsilon(1e-12));
  s.training.offload_modules |= bit(core::OffloadModule::moe_act);
  // and fc1's output, the activation's input: gate and up, 4 bytes a routed unit under swiglu
  CHECK(offloaded_activation_bytes(s, true, core::Recompute::none) == Approx(4 * sbh + 4 * routed_f).epsilon(1e-12));
  // nothing on a dense layer, nothing where the MoE block is recomputed or the layer is
  CHECK(offloaded_activation_bytes(s, false, core::Recompute::none) == 0);
  CHECK(offloaded_activation_bytes(s, true, core::Recompute::full) == 0);
  s.training.recompute = core::Recompute::selective;
  s.training.recompute_modules = 1u << static_cast<unsigned>(core::RecomputeModule::moe);
  CHECK(offloaded_activation_bytes(s, true, core::Recompute::selective) == 0);
}

TEST_CASE("analytic: offloaded activations are pinned on the host while in flight", "[analytic][memory]") {
  // Mixtral-like on 64 GPUs, tp 1, pp 1 (one micro-batch in flight): 32 MoE layers, each moving
  // k·2sbh + 4 routed units a token; the node's host holds its 8 GPUs' copies
  auto s = testing::mixtral_like_64(1);
  s.training.recompute = core::Recompute::none;
  s.hardware.host.link_Bps = 50e9;
  s.hardware.host.memory_bytes = 2048.0 * core::kGiB;
  s.hardware.host.memory_Bps = 600e9;
  CHECK(host_bytes_per_gpu(s, pipeline_layers(s), layer_costs(s)) == 0);
  s.training.offload_modules = 3u;
  const double sbh = 4096.0 * 4096, routed_f = 2 * 4096.0 * 14336 * s.training.moe.busiest();
  const double per_layer = 2 * 2 * sbh + 4 * routed_f;
  CHECK(offload_copy_bytes(s, true, core::Recompute::none) == Approx(per_layer).epsilon(1e-12));
  CHECK(host_bytes_per_gpu(s, pipeline_layers(s), layer_costs(s)) == Approx(32 * per_layer).epsilon(1e-12));
  CHECK(gpus_sharing_host(s) == 8);
}

TEST_CASE("analytic: repeated key/value heads keep every query head's K and V (torchtitan's repeat_kv)", "[analytic][memory]") {
  // Llama 3 8B-like: h 4096, 32 heads, 8 KV heads of 128, swiglu f 14336, s 8192, b 1, t 1, bf16,
  // flash attention, no recompute: K and V 2sb·k·d each; repeated, 2sb·a·d each
  auto s = fig1_scenario(kFig1[0], false);
  s.model.hidden = 4096;
  s.model.heads = 32;
  s.model.kv_heads = 8;
  s.model.ffn_hidden = 14336;
  s.model.mlp = core::Mlp::swiglu;
  s.parallel.tp = 1;
  s.training.seq_len = 8192;
  s.training.micro_batch = 1;
  s.training.precision = core::Precision::bf16;
  s.training.flash_attention = true;
  const double sb = 8192.0, sbh = sb * 4096;
  const double plain = sbh * 10 + 2 * sb * (4096 + 2 * 1024 + 4096) + 6 * sb * 14336;
  CHECK(activation_bytes_per_layer(s) == Approx(plain).epsilon(1e-12));
  s.training.repeat_kv = true;
  CHECK(activation_bytes_per_layer(s) - plain == Approx(2 * 2 * sb * (4096 - 1024)).epsilon(1e-12));
  s.training.recompute = core::Recompute::full;  // the layer input only, repeated or not
  CHECK(activation_bytes_per_layer(s) == Approx(2 * sbh).epsilon(1e-12));
}

TEST_CASE("analytic: micro-batches in flight per schedule", "[analytic][memory]") {
  auto s = testing::gpt3_1024();  // p 16, m 192
  CHECK(in_flight_microbatches(s, 0) == 16);
  CHECK(in_flight_microbatches(s, 15) == 1);
  s.parallel.schedule = core::Schedule::zb_h1;
  CHECK(in_flight_microbatches(s, 3) == 13);
  s.parallel.schedule = core::Schedule::gpipe;
  CHECK(in_flight_microbatches(s, 5) == 192);
  s.parallel.schedule = core::Schedule::interleaved;
  s.parallel.vpp = 2;
  // first stage: (2(p-1) + (v-1)p + 1)/v = (30 + 16 + 1)/2 = 23.5 = p(1 + (p-1)/(p v))
  CHECK(in_flight_microbatches(s, 0) == Approx(16 * (1 + 15.0 / 32)).epsilon(1e-12));
}

TEST_CASE("analytic: GPT-3 175B on 1024 A100s, first-stage memory by hand", "[analytic][memory][acceptance]") {
  const auto s = testing::gpt3_1024();
  const auto st = stage_memory(s);
  REQUIRE(st.size() == 16);
  const auto& f = st[0];
  // params on a first-stage GPU: 1,463,270,400 (params_test)
  CHECK(f.params == Approx(1463270400.0).epsilon(1e-12));
  CHECK(f.weights == Approx(2 * 1463270400.0).epsilon(1e-12));    // bf16: 2.73 GiB
  CHECK(f.gradients == Approx(4 * 1463270400.0).epsilon(1e-12));  // fp32 main grads: 5.45 GiB
  CHECK(f.optimizer == Approx(12 * 1463270400.0 / 8).epsilon(1e-12));  // ZeRO-1 over dp 8: 2.04 GiB
  // SP + selective: 34 sbh/t = 34 * 2048 * 12288 / 8 = 106,954,752 per layer; 6 layers x 16 in flight
  CHECK(f.in_flight == 16);
  CHECK(f.activations == Approx(96 * 106954752.0).epsilon(1e-12));  // 9.56 GiB
  // embedding output + dropout mask: 3 sbh / t x 16 = 150,994,944
  CHECK(f.embedding_activations == Approx(150994944.0).epsilon(1e-12));
  CHECK(f.logits == 0);
  // the CUDA context, 1573 MiB, and NCCL's buffers: tp (8 GPUs), dp (8), pp (16), model-parallel
  // (tp*pp = 128) and the whole job (1024): five communicators of more than 2 GPUs, 688 MiB each
  // (untied embeddings: no embedding group)
  CHECK(f.context == Approx(1573.0 * 1024 * 1024).epsilon(1e-12));
  CHECK(f.nccl == Approx(5 * 688.0 * 1024 * 1024).epsilon(1e-12));
  CHECK(f.step_buffers == 0);  // Megatron's fp32 main gradients: nothing converted at the step
  // total 22,198,485,504 - 0.75 GiB (the former flat context) + 1,649,410,048 + 3,607,101,440
  // = 26,649,690,624 bytes = 24.82 GiB
  CHECK(f.total() == Approx(26649690624.0).epsilon(1e-12));
  SECTION("the last stage holds the fp32 logits, 4 s b V / t, and one micro-batch") {
    const auto& l = st[15];
    CHECK(l.logits == Approx(4.0 * 2048 * 51200 / 8).epsilon(1e-12));
    CHECK(l.in_flight == 1);
  }
}

TEST_CASE("analytic: ZeRO stages shard states over dp*cp", "[analytic][memory]") {
  auto s = testing::gpt3_1024();
  const double n = 1463270400.0;
  s.parallel.zero = 0;
  CHECK(stage_memory(s)[0].optimizer == Approx(12 * n).epsilon(1e-12));
  s.parallel.zero = 2;
  CHECK(stage_memory(s)[0].gradients == Approx(4 * n / 8).epsilon(1e-12));
  s.parallel.zero = 3;
  const auto z3 = stage_memory(s)[0];
  CHECK(z3.weights == Approx(2 * n / 8).epsilon(1e-12));
  // the unit computing and the one prefetched in bf16, and one unit's gradient in bf16 as the
  // backward makes it and again in fp32 for the reduce-scatter: (2*2 + 2 + 4) x 226,576,896
  CHECK(z3.buffers == Approx(10 * 226576896.0).epsilon(1e-12));
}

TEST_CASE("analytic: the communicators a GPU uses and what NCCL holds for them", "[analytic][memory]") {
  auto s = testing::gpt3_1024();
  auto names = [&](int stage) {
    std::string out;
    for (const auto& c : communicators(s, stage)) out += std::string(c.group) + "/" + std::to_string(c.ranks) + " ";
    return out;
  };
  CHECK(names(0) == "tp/8 dp/8 pp/16 model-parallel/128 world/1024 ");
  s.model.tied_embeddings = true;  // Megatron keeps the word embedding on both ends and all-reduces it
  CHECK(names(0) == "tp/8 dp/8 pp/16 model-parallel/128 world/1024 embedding/2 ");
  CHECK(names(7) == "tp/8 dp/8 pp/16 model-parallel/128 world/1024 ");
  CHECK(names(15) == "tp/8 dp/8 pp/16 model-parallel/128 world/1024 embedding/2 ");
  // 5 x 688 MiB + 544 MiB for the 2-GPU embedding group
  CHECK(process_overhead(s, 0).nccl == Approx((5 * 688.0 + 544) * 1024 * 1024).epsilon(1e-12));
  SECTION("one GPU: no communicator at all") {
    s.gpus = 1;
    s.parallel = core::ParallelSpec{};
    CHECK(communicators(s, 0).empty());
    CHECK(process_overhead(s, 0).nccl == 0);
    CHECK(process_overhead(s, 0).context == Approx(1573.0 * 1024 * 1024).epsilon(1e-12));
  }
}

TEST_CASE("analytic: DeepSpeed's 16-bit gradients, its bucket and the step's fp32 copy", "[analytic][memory]") {
  auto s = testing::gpt3_1024();  // ZeRO-1 over dp 8; 1,463,270,400 parameters on a first-stage GPU
  const double n = 1463270400.0;
  s.training.main_grads = core::MainGrads::bit16;
  s.training.dp_bucket_params = 5e8;  // DeepSpeed's reduce_bucket_size
  const auto f = stage_memory(s)[0];
  CHECK(f.gradients == Approx(2 * n).epsilon(1e-12));        // 16-bit .grad, not sharded at ZeRO-1
  CHECK(f.optimizer == Approx(12 * n / 8).epsilon(1e-12));    // master and Adam states, sharded
  CHECK(f.step_buffers == Approx(6 * n / 8).epsilon(1e-12));  // fp32 copy (4) and its 16-bit flat source (2)
  CHECK(f.buffers == Approx(2 * 5e8).epsilon(1e-12));         // the 16-bit ipg bucket
  SECTION("ZeRO-2 shards the 16-bit gradients too") {
    s.parallel.zero = 2;
    CHECK(stage_memory(s)[0].gradients == Approx(2 * n / 8).epsilon(1e-12));
  }
  SECTION("fp32 training has nothing to convert") {
    s.training.precision = core::Precision::fp32;
    s.hardware.gpu.peak_flops[core::index(core::Precision::fp32)] = 19.5e12;
    const auto g = stage_memory(s)[0];
    CHECK(g.gradients == Approx(4 * n).epsilon(1e-12));
    CHECK(g.step_buffers == 0);
    CHECK(g.buffers == 0);
  }
  SECTION("BLOOM's DP 1 to DP 2 drop, 22 GiB measured: 8 bytes a parameter here, 6 with Megatron's") {
    // per parameter: 2 + 2 + (12 + 6)/d; d 1 -> 2 saves 9 bytes of which the 16-bit flat copy's 1
    // is transient: the persistent 12 + 4 sharded states halve (8 bytes); Megatron's 12 halve (6)
    auto at = [&](int dp, core::MainGrads g) {
      auto t = s;
      t.parallel.dp = dp;
      t.training.main_grads = g;
      const auto m = stage_memory(t)[0];
      return m.gradients + m.optimizer + m.step_buffers;
    };
    CHECK(at(1, core::MainGrads::bit16) - at(2, core::MainGrads::bit16) == Approx(9 * n).epsilon(1e-12));
    CHECK(at(1, core::MainGrads::fp32) - at(2, core::MainGrads::fp32) == Approx(6 * n).epsilon(1e-12));
  }
}
