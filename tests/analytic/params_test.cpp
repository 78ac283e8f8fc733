#include <catch2/catch.hpp>

#include "ptdsim/analytic/params.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;
using testing::gpt3_175b;
using testing::llama;

TEST_CASE("analytic: GPT-3 175B parameter count", "[analytic][params]") {
  auto m = gpt3_175b();
  // per layer: attention 4h^2 + 4h = 604,028,928; MLP 8h^2 + 4h + h = 1,208,020,992; two layernorms
  // 4h = 49,152 -> 1,812,099,072; x96 = 173,961,510,912. Embedding 51200*12288 + 2048*12288 =
  // 654,311,424; head 629,145,600 + final norm 24,576.
  SECTION("untied: the exact hand count") {
    CHECK(layer_params(m, 0) == Approx(1812099072.0).epsilon(1e-12));
    CHECK(total_params(m) == Approx(175244992512.0).epsilon(1e-12));
  }
  SECTION("tied like the published model: about 174.6e9 (Brown et al. 2020 Table 2.1 says 175.0e9)") {
    m.tied_embeddings = true;
    // 175,244,992,512 - 629,145,600 = 174,615,846,912
    CHECK(total_params(m) == Approx(174.6e9).epsilon(0.005));
    CHECK(total_params(m) == Approx(174615846912.0).epsilon(1e-12));
  }
}

TEST_CASE("analytic: Llama parameter counts", "[analytic][params]") {
  SECTION("Llama-2 7B = 6,738,415,616 (Touvron et al. 2023; the HF checkpoint)") {
    // layer: 4h^2 = 67,108,864 + 3*4096*11008 = 135,266,304 + 2 rmsnorms 8192 = 202,383,360; x32
    // = 6,476,267,520; embedding and untied head 2*131,072,000; final norm 4096.
    auto m = llama(32, 4096, 32, 32, 11008, 32000);
    CHECK(total_params(m) == Approx(6738415616.0).epsilon(1e-12));
  }
  SECTION("Llama-3 70B with GQA (8 kv heads): 70,553,706,496") {
    // K, V are 8192 x 1024: attention 2*8192^2 + 2*8192*1024 = 150,994,944; MLP 3*8192*28672 =
    // 704,643,072; norms 16,384 -> 855,654,400 x 80 = 68,452,352,000; embedding + head
    // 2*128256*8192 = 2,101,346,304; final norm 8192.
    auto m = llama(80, 8192, 64, 8, 28672, 128256);
    CHECK(total_params(m) == Approx(70553706496.0).epsilon(1e-12));
    CHECK(total_params(m) == Approx(70.55e9).epsilon(0.001));
  }
}

TEST_CASE("analytic: Mixtral 8x7B total and active parameters", "[analytic][params][moe]") {
  auto m = llama(32, 4096, 32, 8, 14336, 32000);
  m.moe = core::MoeSpec{8, 2, 1, 0};
  // layer: attention 2*4096^2 + 2*4096*1024 = 41,943,040; 8 experts x 3*4096*14336 = 1,409,286,144;
  // router 4096*8 = 32,768; norms 8192 -> 1,451,270,144 x 32 = 46,440,644,608; + 262,148,096.
  CHECK(total_params(m) == Approx(46702792704.0).epsilon(1e-12));
  CHECK(total_params(m) == Approx(46.7e9).epsilon(0.001));  // Jiang et al. 2024: 46.7B total
  // active: 6 unused experts x 176,160,768 x 32 layers fewer = 12,879,925,248 (paper: 12.9B)
  CHECK(active_params(m) == Approx(12879925248.0).epsilon(1e-12));
}

TEST_CASE("analytic: parameters per GPU per stage", "[analytic][params]") {
  auto s = testing::gpt3_1024();
  const auto layers = stage_layers(s);
  REQUIRE(layers.size() == 16);
  CHECK(layers[0].layers == 6);
  SECTION("first stage: 6 layers / tp 8 plus the vocabulary-parallel embedding and the positions") {
    // layer on one GPU: attention (604,028,928 - 12,288)/8 + 12,288 + norms 49,152 = 75,563,520;
    // MLP (1,208,020,992 - 12,288)/8 + 12,288 = 151,013,376 -> 226,576,896 x 6 = 1,359,461,376;
    // embedding 629,145,600/8 = 78,643,200 + positions 25,165,824 -> 1,463,270,400
    CHECK(stage_params_per_gpu(s, 0).total() == Approx(1463270400.0).epsilon(1e-12));
  }
  SECTION("last stage: the head (V*h/t) and the final norm") {
    // 1,359,461,376 + 78,643,200 + 24,576
    CHECK(stage_params_per_gpu(s, 15).total() == Approx(1438129152.0).epsilon(1e-12));
  }
  SECTION("tied embeddings with pp > 1 keep a copy on both ends; with pp = 1 only one") {
    s.model.tied_embeddings = true;
    CHECK(stage_params_per_gpu(s, 15).total() == Approx(1438129152.0).epsilon(1e-12));
    s.parallel.pp = 1;
    s.parallel.dp = 128;
    s.training.global_batch = 1536;
    // 96 layers x 226,576,896 + 78,643,200 + 25,165,824 + 24,576 (no second V*h/t)
    CHECK(stage_params_per_gpu(s, 0).total() == Approx(96 * 226576896.0 + 103833600.0).epsilon(1e-12));
  }
  SECTION("explicit stage_layers move layers between stages") {
    s.parallel.stage_layers = std::vector<int>(16, 6);
    s.parallel.stage_layers[0] = 5;
    s.parallel.stage_layers[15] = 7;
    const auto l = stage_layers(s);
    CHECK(l[0].layers == 5);
    CHECK(l[15].layers == 7);
  }
  SECTION("MoE experts split over ep and tp") {
    auto m = llama(32, 4096, 32, 8, 14336, 32000);
    m.moe = core::MoeSpec{8, 2, 1, 0};
    core::Scenario x;
    x.model = m;
    x.parallel.tp = 2;
    x.parallel.ep = 4;
    x.parallel.dp = 4;
    // 2 local experts x 176,160,768 / 2 = 176,160,768 per layer
    CHECK(layer_params_per_gpu(x, true).expert == Approx(176160768.0).epsilon(1e-12));
    // attention 41,943,040/2 + norms 8192 + router 32,768
    CHECK(layer_params_per_gpu(x, true).dense == Approx(20971520.0 + 8192 + 32768).epsilon(1e-12));
  }
}

TEST_CASE("analytic: which pipeline stages repeat the one before", "[analytic][params]") {
  auto s = testing::gpt3_1024();  // 96 layers over pp 16: 6 on every rank
  auto repeating = [](const PipelineLayers& split) {
    std::vector<int> out;
    for (int r = 0; r < static_cast<int>(split.stages.size()); ++r)
      if (split.repeats_previous(r)) out.push_back(r);
    return out;
  };
  SECTION("even: every middle rank but the one after the first (rank 0 holds the embedding)") {
    std::vector<int> want;
    for (int r = 2; r <= 14; ++r) want.push_back(r);
    CHECK(repeating(pipeline_layers(s)) == want);
  }
  SECTION("uneven totals: a rank with one layer more repeats nobody, and the rank after it neither") {
    s.parallel.stage_layers = std::vector<int>(16, 6);
    s.parallel.stage_layers[7] = 7;
    s.parallel.stage_layers[8] = 5;
    CHECK(repeating(pipeline_layers(s)) == std::vector<int>{2, 3, 4, 5, 6, 10, 11, 12, 13, 14});
  }
  SECTION("interleaved: equal totals but chunks in another order do not repeat") {
    // vpp 2 over pp 4 on 16 layers, per virtual stage: ranks 0-3 hold chunks r and r + 4
    s.model.layers = 16;
    s.gpus = 4;
    s.parallel.pp = 4;
    s.parallel.dp = 1;
    s.parallel.vpp = 2;
    s.parallel.schedule = core::Schedule::interleaved;
    s.parallel.stage_layers = std::vector<int>{2, 2, 1, 2, 2, 2, 3, 2};  // rank 2: 1 + 3, rank 1: 2 + 2
    const auto split = pipeline_layers(s);
    REQUIRE(split.stages[2].layers == split.stages[1].layers);
    CHECK_FALSE(split.repeats_previous(2));
    CHECK(repeating(split).empty());
  }
}
