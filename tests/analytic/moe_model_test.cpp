#include <catch2/catch.hpp>

#include "ptdsim/analytic/flops.hpp"
#include "ptdsim/analytic/kv_cache.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/operators.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/check.hpp"
#include "../common/scenarios.hpp"

// The MoE and MLA model keys (docs/analytic.md "Parameters", "FLOPs", "MLA"): parameter counts
// against the model cards, and one MLA layer worked by hand.
using namespace ptdsim;
using namespace ptdsim::analytic;
using testing::deepseek_v3;
using testing::llama;

namespace {

// Qwen3 MoE (config.json of Qwen/Qwen3-235B-A22B and Qwen/Qwen3-30B-A3B): head_dim 128 whatever
// hidden / heads, 128 experts, top 8, every layer MoE, untied; q_norm and k_norm of 128 each.
core::ModelSpec qwen3_moe(int layers, int hidden, int heads, int expert_ffn) {
  core::ModelSpec m = llama(layers, hidden, heads, 4, expert_ffn * 8, 151936);
  m.attention_head_dim = 128;
  m.qk_norm = true;
  m.moe = core::MoeSpec{128, 8, 1, expert_ffn};
  return m;
}

}  // namespace

TEST_CASE("moe model: DeepSeek-V3 total 671B and active parameters", "[analytic][params][moe][mla]") {
  const core::ModelSpec m = deepseek_v3();
  // MLA per layer: W_qa 7168*1536 = 11,010,048; q norm 1536; W_qb 1536*128*192 = 37,748,736;
  // W_kva 7168*(512+64) = 4,128,768; kv norm 512; W_kvb 512*128*(128+128) = 16,777,216;
  // W_o 128*128*7168 = 117,440,512 -> 187,107,328
  CHECK(attention_params(m) == Approx(187107328.0).epsilon(1e-12));
  // dense layer: + 3*7168*18432 = 396,361,728 + two norms 14,336 -> 583,483,392
  CHECK(layer_params(m, 0) == Approx(583483392.0).epsilon(1e-12));
  CHECK(!m.is_moe_layer(2));
  CHECK(m.is_moe_layer(3));
  // MoE layer: 256 experts * 3*7168*2048 (44,040,192) = 11,274,289,152; router 7168*256 =
  // 1,835,008; shared expert 44,040,192 -> + attention + norms = 11,507,286,016
  CHECK(layer_params(m, 3) == Approx(11507286016.0).epsilon(1e-12));
  // 3 dense + 58 MoE layers = 669,172,049,920; embedding and head 2*129280*7168 = 1,853,358,080;
  // final norm 7168 -> 671,026,404,352: the card's 671B main model
  CHECK(total_params(m) == Approx(671026404352.0).epsilon(1e-12));
  CHECK(total_params(m) == Approx(671e9).epsilon(0.005));
  // active: 58 layers * 248 unused experts * 44,040,192 fewer = 37,552,282,624. The card's "37B
  // activated" is 1.5% below this count, which includes the 0.93B input embedding; without it
  // (a lookup, not a matmul) it is 36.63B: the card rounds one of the two, and says not which.
  CHECK(active_params(m) == Approx(37552282624.0).epsilon(1e-12));
  CHECK(active_params(m) == Approx(37e9).epsilon(0.02));
  CHECK(active_params(m) - embedding_params(m) == Approx(37e9).epsilon(0.02));
}

TEST_CASE("moe model: DeepSeek-V3's MTP module: the 685B checkpoint", "[analytic][params][moe][mla]") {
  core::ModelSpec m = deepseek_v3();
  m.mtp_layers = 1;
  // the module: its layer (the kind layer 61 would be: MoE) 11,507,286,016, eh_proj 2*7168^2 =
  // 102,760,448, three norms 21,504 -> 11,610,067,968; total 682,636,472,320. The Hugging Face
  // checkpoint (685B) stores the module's own copies of the embedding and the head (2*129280*7168 =
  // 1,853,358,080): 684,489,830,400, 0.07% below the card's 685B
  CHECK(mtp_extra_params(m) == Approx(102781952.0).epsilon(1e-12));
  CHECK(total_params(m) == Approx(682636472320.0).epsilon(1e-12));
  CHECK(total_params(m) + 2.0 * 129280 * 7168 == Approx(685e9).epsilon(0.005));
  // the module's routed experts are active by top_k too: 37,552,282,624 + 11,610,067,968 -
  // 248 * 44,040,192 = 38,240,382,976
  CHECK(active_params(m) == Approx(38240382976.0).epsilon(1e-12));
}

TEST_CASE("moe model: Qwen3-235B-A22B and Qwen3-30B-A3B", "[analytic][params][moe]") {
  SECTION("235B-A22B: 94 layers, h 4096, 64 heads of 128, expert FFN 1536") {
    const core::ModelSpec m = qwen3_moe(94, 4096, 64, 1536);
    // attention: Q 4096*8192 + K, V 2*4096*512 + O 8192*4096 = 71,303,168 + q_norm and k_norm 256
    // = 71,303,424; experts 128 * 3*4096*1536 (18,874,368) = 2,415,919,104; router 524,288; norms
    // 8192 -> 2,487,755,008 x 94 = 233,848,970,752; embedding and head 2*151936*4096 =
    // 1,244,659,712; final norm 4096
    CHECK(attention_params(m) == Approx(71303424.0).epsilon(1e-12));
    CHECK(total_params(m) == Approx(235093634560.0).epsilon(1e-12));
    CHECK(total_params(m) == Approx(235e9).epsilon(0.005));  // the card: 235B
    // active: 94 * 120 * 18,874,368 fewer = 22,190,763,520 (the card: 22B, 0.9% below)
    CHECK(active_params(m) == Approx(22190763520.0).epsilon(1e-12));
    CHECK(active_params(m) == Approx(22e9).epsilon(0.01));
  }
  SECTION("30B-A3B: 48 layers, h 2048, 32 heads of 128, expert FFN 768") {
    const core::ModelSpec m = qwen3_moe(48, 2048, 32, 768);
    // attention 2048*4096*2 + 2*2048*512 + 256 = 18,874,624; experts 128 * 4,718,592 =
    // 603,979,776; router 262,144; norms 4096 -> 623,120,640 x 48 = 29,909,790,720; + 2*151936*2048
    // = 622,329,856 + 2048 -> 30,532,122,624 (the card: 30.5B)
    CHECK(total_params(m) == Approx(30532122624.0).epsilon(1e-12));
    CHECK(total_params(m) == Approx(30.5e9).epsilon(0.005));
    // active: 48 * 120 * 4,718,592 fewer = 3,353,032,704 (the card: 3.3B, 1.6% below)
    CHECK(active_params(m) == Approx(3353032704.0).epsilon(1e-12));
    CHECK(active_params(m) == Approx(3.3e9).epsilon(0.02));
  }
}

TEST_CASE("moe model: shared experts, dense first layers and Llama 4's interleaving", "[analytic][params][moe]") {
  core::ModelSpec m = llama(4, 1024, 8, 8, 4096, 1000);
  m.moe = core::MoeSpec{16, 1, 2, 512};
  m.moe->shared_experts = 2;
  m.moe->shared_ffn_hidden = 256;
  // every 2: layers 1 and 3 are MoE; 16 experts of 3*1024*512 = 1,572,864, router 16,384, two
  // shared experts of 3*1024*256 = 786,432 each
  CHECK(!m.is_moe_layer(0));
  CHECK(m.is_moe_layer(1));
  CHECK(shared_expert_params(m) == Approx(1572864.0).epsilon(1e-12));
  CHECK(layer_mlp_params(m, 1) == Approx(16 * 1572864.0 + 16384 + 1572864).epsilon(1e-12));
  m.moe->first_k_dense = 2;  // layer 1 is dense now, 3 stays MoE
  CHECK(!m.is_moe_layer(1));
  CHECK(m.is_moe_layer(3));
  // forward FLOPs of a MoE layer's MLP per token: top_1 expert 6*1024*512 + the shared 2 *
  // 6*1024*256 = 6,291,456; the router 2*1024*16 = 32,768
  const LayerFlops f = layer_forward_flops(m, true, 1, 1);
  CHECK(f.mlp == Approx(6291456.0).epsilon(1e-12));
  CHECK(f.router == Approx(32768.0).epsilon(1e-12));
}

TEST_CASE("moe model: one MLA layer's FLOPs and KV bytes by hand", "[analytic][flops][mla]") {
  const core::ModelSpec m = deepseek_v3();
  // one sequence of 4096 tokens: projections per token 2*(7168*1536 + 1536*128*192 + 7168*576 +
  // 512*128*256) = 2*69,664,768 = 139,329,536 -> x4096 = 570,693,779,456
  const LayerFlops f = layer_forward_flops(m, false, 1, 4096);
  CHECK(f.qkv == Approx(570693779456.0).epsilon(1e-12));
  // core: each of 4096 queries against 4096 keys (causal half kept, as Megatron counts), 128 heads,
  // scores over d_qk 192 and the sum over d_v 128: 2*4096^2*128*(192+128) = 1,374,389,534,720
  CHECK(f.attention_core == Approx(1374389534720.0).epsilon(1e-12));
  // output: 2*4096*(128*128)*7168 = 962,072,674,304
  CHECK(f.out_proj == Approx(962072674304.0).epsilon(1e-12));
  // KV cache: the 512 latent and the 64 rope key per token per layer (DeepSeek-V2 Table 1), 1,152
  // bytes at 16 bits; x61 layers = 70,272 bytes. Multi-head attention of the same heads would
  // keep 2*128*128 = 32,768 elements: 56.9x more
  CHECK(kv_elements_per_token_layer(m) == 576);
  CHECK(kv_bytes_per_token(m, 2) == Approx(70272.0).epsilon(1e-12));
  core::ModelSpec mha = m;
  mha.mla.reset();
  mha.attention_head_dim = 128;
  CHECK(kv_elements_per_token_layer(mha) == 32768);
}

TEST_CASE("moe model: one MLA layer's activations by hand", "[analytic][memory][mla]") {
  core::Scenario s;
  s.model = deepseek_v3();
  s.gpus = 1;
  s.training.seq_len = 4096;
  s.training.micro_batch = 1;
  s.training.global_batch = 1;
  s.training.flash_attention = true;
  // a dense layer (layer 0), tp 1, bytes at 16 bits: the layer's 10sbh = 293,601,280; the latents'
  // norm inputs and the up projections' inputs 2*4096*(2*1536 + 2*512 + 64) = 34,078,720; Q and K
  // of 192 and V and the output of 128 per head: 2*4096*128*(2*192 + 2*128) = 671,088,640; the
  // SwiGLU MLP 6*4096*18432 = 452,984,832 -> 1,451,753,472
  CHECK(layer_activation_bytes(s, false, core::Recompute::none) == Approx(1451753472.0).epsilon(1e-12));
}

TEST_CASE("moe model: MTP layers sit on the last pipeline stage", "[analytic][params][moe]") {
  core::Scenario s;
  s.model = deepseek_v3();
  s.model.mtp_layers = 1;
  s.gpus = 8;
  s.parallel.pp = 8;
  s.parallel.stage_layers = {7, 8, 8, 8, 8, 8, 8, 6};
  const PipelineLayers L = pipeline_layers(s);
  // stage 0: layers 0-6, the 3 dense first; the last: its 6 decoder layers and the MTP module's
  CHECK(L.stages[0].layers == 7);
  CHECK(L.stages[0].moe_layers == 4);
  CHECK(L.stages[7].layers == 7);
  CHECK(L.stages[7].moe_layers == 7);
}

TEST_CASE("moe model: the checks refuse what the router and MLA cannot be", "[core][check][moe]") {
  core::Scenario s;
  s.model = deepseek_v3();
  s.gpus = 1;
  s.training.seq_len = 4096;
  s.training.micro_batch = 1;
  s.training.global_batch = 1;
  s.hardware = testing::dgx_a100_80g();
  auto keys = [&] {
    std::vector<std::string> out;
    for (const auto& p : core::check(s)) out.push_back(p.key);
    return out;
  };
  CHECK(keys().empty());
  s.model.moe->router_groups = 7;  // 256 experts in 7 groups
  CHECK(keys() == std::vector<std::string>{"model.moe.router_groups"});
  s.model.moe->router_groups = 8;
  s.model.moe->router_group_topk = 0;
  CHECK(keys() == std::vector<std::string>{"model.moe.router_group_topk"});
  s.model.moe->router_group_topk = 1;  // 32 experts of one group can hold a top 8
  CHECK(keys().empty());
  s.model.moe->router_groups = 64;  // 4 experts per group, one group: fewer than top 8
  CHECK(keys() == std::vector<std::string>{"model.moe.top_k"});
  s.model.moe->router_groups = 8;
  s.model.moe->first_k_dense = 61;
  CHECK(keys() == std::vector<std::string>{"model.moe.first_k_dense"});
  s.model.moe->first_k_dense = 3;
  s.model.kv_heads = 8;
  CHECK(keys() == std::vector<std::string>{"model.kv_heads"});
  s.model.kv_heads = 128;
  s.model.bias = true;
  CHECK(keys() == std::vector<std::string>{"model.bias"});
}

TEST_CASE("moe model: sliding-window layers' attention FLOPs by hand", "[analytic][flops][window]") {
  // gpt-oss-120b's attention: 64 heads of 64 (head_dim), window 128 on every other layer
  core::ModelSpec m = llama(4, 2880, 64, 8, 2880, 1000);
  m.attention_head_dim = 64;
  m.sliding_window = core::SlidingWindow{128, 2};
  CHECK(m.is_windowed_layer(0));
  CHECK(!m.is_windowed_layer(1));
  CHECK(m.windowed_fraction() == 0.5);
  // one sequence of 4096: a full layer's core 2*4096*4096*64*(64+64) = 274,877,906,944; a windowed
  // one's 2*4096*128*64*128 = 8,589,934,592
  CHECK(layer_forward_flops(m, false, false, 1, 4096).attention_core == Approx(274877906944.0).epsilon(1e-12));
  CHECK(layer_forward_flops(m, false, true, 1, 4096).attention_core == Approx(8589934592.0).epsilon(1e-12));
  // the four layers: QKV 2*4096*2880*(4096 + 2*512) = 120,795,955,200 and the output 2*4096*4096*2880
  // = 96,636,764,160 each, the MLP 6*4096*2880*2880 = 203,843,174,400 each, the cores 2 x each kind
  const double per_layer = 120795955200.0 + 96636764160.0 + 203843174400.0;
  CHECK(layers_forward_flops(m, 1, 4096) ==
        Approx(4 * per_layer + 2 * 274877906944.0 + 2 * 8589934592.0).epsilon(1e-12));
  // a window at least the sequence is no window
  CHECK(layer_forward_flops(m, false, true, 1, 64).attention_core == Approx(layer_forward_flops(m, false, false, 1, 64).attention_core).epsilon(1e-12));
}

TEST_CASE("moe model: a layer's attention time is the mean over windowed and full layers", "[analytic][operators][window]") {
  core::Scenario s;
  s.model = llama(4, 2880, 64, 8, 2880, 1000);
  s.model.attention_head_dim = 64;
  s.hardware = testing::dgx_a100_80g();
  s.gpus = 1;
  s.training.seq_len = 4096;
  s.training.micro_batch = 1;
  s.training.global_batch = 1;
  s.training.flash_attention = true;
  auto attention = [&](std::optional<core::SlidingWindow> w) {
    s.model.sliding_window = w;
    return layer_ops(s, false).find(core::Operator::attention)->forward_s;
  };
  const double full = attention(std::nullopt);
  const double windowed = attention(core::SlidingWindow{128, 0});  // every layer windowed
  const double half = attention(core::SlidingWindow{128, 2});      // gpt-oss: every other layer
  CHECK(windowed < full / 8);  // 128 keys a query against 4096 (causal: 2048 on average)
  CHECK(half == Approx(0.5 * full + 0.5 * windowed).epsilon(1e-12));
}
