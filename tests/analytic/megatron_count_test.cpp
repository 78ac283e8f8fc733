#include <catch2/catch.hpp>

#include "ptdsim/analytic/megatron_count.hpp"
#include "../common/scenarios.hpp"

// Megatron-LM's own FLOP count (megatron_count.hpp), worked by hand term by term and checked against
// the TFLOP/s per token that Megatron-Bridge's performance summary prints for the same model.
using namespace ptdsim;
using namespace ptdsim::analytic;
using testing::llama;

namespace {

core::Scenario one_batch(core::ModelSpec m, int tp = 1) {
  core::Scenario s;
  s.model = std::move(m);
  s.parallel.tp = tp;
  s.training.seq_len = 4096;
  s.training.global_batch = 1;
  return s;
}

core::ModelSpec qwen3_235b() {  // models/qwen3-235b-a22b.yaml
  core::ModelSpec m = llama(94, 4096, 64, 4, 12288, 151936);
  m.attention_head_dim = 128;
  m.qk_norm = true;
  m.moe = core::MoeSpec{128, 8, 1, 1536};
  return m;
}

core::ModelSpec deepseek_v3_mtp() {  // models/deepseek-v3.yaml: one MTP module
  core::ModelSpec m = testing::deepseek_v3();
  m.mtp_layers = 1;
  return m;
}

}  // namespace

TEST_CASE("analytic: Megatron's count of Qwen3-235B-A22B, by hand and against Megatron-Bridge's table",
          "[analytic][flops][megatron]") {
  // per token at s 4096 (94 layers, all MoE; 3 x 2 = 6 for forward, wgrad and dgrad multiply-adds):
  //   routed experts  6 h (1536 x 8) 3 x 94                = 85,161,148,416
  //   QKV and output  6 (h (8192 + 2 x 512) + 8192 h) x 94 = 40,214,986,752
  //   logits          6 h 151,936 (a multiple of 128)      =  3,733,979,136
  //   core attention  6 x 8192 x s x 94 (half the matrix)  = 18,924,699,648
  const double per_token = 85161148416.0 + 40214986752.0 + 3733979136.0 + 18924699648.0;
  CHECK(per_token == 148034813952.0);
  const auto s = one_batch(qwen3_235b());
  CHECK(megatron_flops_per_step(s, MegatronCount::v2025) == Approx(4096 * per_token).epsilon(1e-12));
  // Megatron-Bridge's performance summary, 26.02 container, DGX-B200, Qwen3-235B-A22B MXFP8, 4,096
  // tokens a sequence: 563 TFLOP/s and 3,805 tokens/s per GPU, 1.4796e11 FLOPs a token as it counts
  CHECK(per_token == Approx(563e12 / 3805).epsilon(0.001));
  SECTION("the vocabulary is padded to a multiple of 128 tp: 152,064 at tp 4") {
    const auto t4 = one_batch(qwen3_235b(), 4);
    CHECK(megatron_flops_per_step(t4, MegatronCount::v2025) - megatron_flops_per_step(s, MegatronCount::v2025) ==
          Approx(4096.0 * 6 * 4096 * (152064 - 151936)).epsilon(1e-9));
  }
}

TEST_CASE("analytic: Megatron's count of DeepSeek-V3 (MLA, MTP, three dense layers), by hand and against the table",
          "[analytic][flops][megatron]") {
  // per token at s 4096: 3 dense layers and 58 + 1 (the MTP layer is of the last layer's kind) MoE
  //   MLP   6 h (18432 x 3 x 3 + (2048 x 8 + 2048) x 3 x 59)                          = 147,446,562,816
  //   MLA   6 (1536 (h + 128 x 192 + 1) + 512 (h + 128 x 256 + 1) + 64 h + 128 x 128 h) = 1,122,643,968 a layer, x 62
  //   MTP   6 (3 h + 2 h^2)                                                          = 616,691,712
  //   logits 6 h 129,280 x 2                                                          = 11,120,148,480
  //   core  6 (128 x 192 / 2 + 128 x 128 / 2) s x 62 = 122,880 x 4096 x 62          = 31,205,621,760
  const double per_token = 147446562816.0 + 1122643968.0 * 62 + 616691712.0 + 11120148480.0 + 31205621760.0;
  const auto s = one_batch(deepseek_v3_mtp());
  CHECK(megatron_flops_per_step(s, MegatronCount::v2025) == Approx(4096 * per_token).epsilon(1e-12));
  // Megatron-Bridge's 26.02.01 summary, DGX-B200, DeepSeek-V3 MXFP8: 725 TFLOP/s, 2,790 tokens/s per GPU
  CHECK(per_token == Approx(725e12 / 2790).epsilon(0.001));
}

TEST_CASE("analytic: Megatron-Core v0.8's count (2024): the full attention matrix and every layer at ffn x top_k",
          "[analytic][flops][megatron]") {
  // Mixtral 8x7B, one sequence of 4,096: 12 s L h^2 ((1 + 8/32 + s/h) q/h + (14336/h) 2 (3/2) + V/(2 L h))
  const auto s = one_batch(testing::mixtral_like_64(1).model);
  const double h = 4096, seq = 4096, L = 32;
  const double expect = 12 * seq * L * h * h * ((1 + 0.25 + 1) + (14336 / h) * 2 * 1.5 + 32000 / (2 * L * h));
  CHECK(expect == Approx(339671783571456.0).epsilon(1e-12));
  CHECK(megatron_flops_per_step(s, MegatronCount::v2024) == Approx(expect).epsilon(1e-12));
  // the 2025 count halves the causal attention matrix: 6 q s L less a token here
  CHECK(megatron_flops_per_step(s, MegatronCount::v2024) - megatron_flops_per_step(s, MegatronCount::v2025) ==
        Approx(seq * 6 * 4096 * seq * L).epsilon(1e-9));
}

TEST_CASE("analytic: ModelSpec::moe_layer_count is is_moe_layer counted", "[analytic][flops][megatron]") {
  for (int layers = 1; layers <= 24; ++layers)
    for (int every = 1; every <= 4; ++every)
      for (int dense = 0; dense < layers; ++dense) {
        core::ModelSpec m = llama(layers, 1024, 8, 8, 4096, 32000);
        m.moe = core::MoeSpec{8, 2, every, 0};
        m.moe->first_k_dense = dense;
        int counted = 0;
        for (int i = 0; i < layers; ++i) counted += m.is_moe_layer(i) ? 1 : 0;
        INFO(layers << " layers, every " << every << ", first " << dense << " dense");
        CHECK(m.moe_layer_count() == counted);
      }
}
