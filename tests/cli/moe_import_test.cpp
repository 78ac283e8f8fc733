#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run.hpp"

// Issue 36: `ptdsim import hf` of each MoE architecture's public config.json (tests/data/hf/), then
// `ptdsim evaluate` of the scenario it writes; `ptdsim import megatron` of DeepSeek-V3's flags; the
// importers' refusals at the field that holds what ptdsim cannot model.
using cli_testing::ptdsim;
using cli_testing::slurp;

namespace {

struct HfCase {
  const char* folder;
  const char* architecture_line;  // a line of the written model that shows the architecture's keys
  double params, active;          // the evaluate report's model.params and model.active_params
};

// Hand counts (tests/analytic/moe_model_test.cpp and docs/analytic.md "Parameters"):
// DeepSeek-V3 671,026,404,352 + its MTP module 11,610,067,968; Qwen3 as there, plus q_norm and
// k_norm (head_dim 128 weights each, 256 a layer); gpt-oss-120b:
// attention 2880*4096*2 + 2*2880*512 + biases 4096 + 1024 + 2880 + 64 sinks = 26,550,336, 128
// experts of 3*2880^2 + 2*2880 + 2880 = 24,892,992, router 368,640, norms 5,760 -> 3,218,227,968 x
// 36 = 115,856,206,848 + 2*201088*2880 + 2880 = 116,829,152,064 (the card: 116.83B), active 124
// experts fewer per layer = 5,711,978,304 (the card's 5.13B leaves out the 0.58B embedding);
// Llama 4 Scout's text decoder: attention 5120*5120*2 + 2*5120*1024 = 62,914,560, 16 experts and
// the shared one of 3*5120*8192 = 125,829,120 each, router 81,920, norms 10,240 -> 2,202,140,672 x
// 48 = 105,702,752,256 + 2*202048*5120 + 5120 = 107,769,861,120 (the card's 109B holds the vision
// encoder), active 15 experts fewer per layer = 17,172,894,720 (the card: 17B); Mixtral 8x7B
// 46,702,792,704 / 12,879,925,248; Qwen2-57B-A14B: attention 2*3584^2 + 2*3584*512 = 29,360,128
// (its Q, K and V biases not counted), 64 experts of 3*3584*2560 = 27,525,120, the shared expert
// 3*3584*20480 = 220,200,960, router 229,376, norms 7,168 -> 2,011,405,312 x 28 = 56,319,348,736 +
// 2*151936*3584 + 3584 = 57,408,429,568 (the card: 57B), active 56 experts fewer per layer =
// 14,249,041,408 (the card: 14B); GLM-4.5: attention 5120*12288*2 + 2*5120*1024 = 136,314,880 (its Q,
// K and V biases not counted), qk norms 256, norms 10,240; 3 dense layers of 3*5120*12288 =
// 188,743,680 -> 325,069,056 each; 89 MoE layers of 160 experts and the shared one of 3*5120*1536 =
// 23,592,960 each and router 819,200 -> 3,935,611,136 each; 2*151552*5120 + 5120 -> 352,796,495,872
// (the report's 355B), and the MTP layer 3,935,611,136 + eh_proj 52,428,800 + 3 norms 15,360 ->
// 356,784,551,168; active 152 experts fewer per MoE layer (the MTP's too) = 34,032,858,368, of which
// 32,079,040,512 outside the embedding and the MTP layer (the report's 32B activated).
const HfCase kHf[] = {
    {"DeepSeek-V3", "  kv_lora_rank: 512", 682636472320.0, 38240382976.0},
    {"Qwen3-30B-A3B", "qk_norm: true", 30532110336.0 + 48 * 256, 3353020416.0 + 48 * 256},
    {"Qwen3-235B-A22B", "qk_norm: true", 235093610496.0 + 94 * 256, 22190739456.0 + 94 * 256},
    {"gpt-oss-120b", "attention_sinks: true", 116829152064.0, 5711978304.0},
    {"Llama-4-Scout-17B-16E", "  shared_experts: 1", 107769861120.0, 17172894720.0},
    {"Mixtral-8x7B-v0.1", "  experts: 8", 46702792704.0, 12879925248.0},
    {"Qwen2-57B-A14B", "  shared_ffn_hidden: 20480", 57408429568.0, 14249041408.0},
    {"GLM-4.5", "  first_k_dense: 3", 356784551168.0, 34032858368.0},
};

}  // namespace

TEST_CASE("cli: import hf of each MoE architecture, then evaluate", "[cli][import][moe]") {
  const auto dir = cli_testing::scratch_dir();
  for (const auto& c : kHf) {
    INFO(c.folder);
    const std::string file = (dir / (std::string(c.folder) + ".yaml")).string();
    const auto imported = ptdsim(std::string("import hf tests/data/hf/") + c.folder +
                                 "/config.json --hardware dgx-h100 --gpus 64 --seq-len 4096 --global-batch 512 -o " + file);
    REQUIRE(imported.status == 0);
    CHECK(slurp(file).find(c.architecture_line) != std::string::npos);
    const auto ev = ptdsim("evaluate " + file + " --format json");
    REQUIRE(ev.status == 0);
    const auto j = nlohmann::json::parse(ev.out);
    CHECK(j["model"]["params"].get<double>() == Approx(c.params).epsilon(1e-12));
    CHECK(j["model"]["active_params"].get<double>() == Approx(c.active).epsilon(1e-12));
    CHECK(j["time"]["step_s"].get<double>() > 0);
  }
}

TEST_CASE("cli: import hf says what of Llama 4's attention it does not time", "[cli][import][moe]") {
  const auto dir = cli_testing::scratch_dir();
  const auto r = ptdsim("import hf tests/data/hf/Llama-4-Scout-17B-16E/config.json -o " + (dir / "scout.yaml").string());
  REQUIRE(r.status == 0);
  CHECK(r.err.find("use_qk_norm: Llama 4's L2 norm of each head's query and key") != std::string::npos);
  CHECK(r.err.find("chunked attention is timed as a sliding window") != std::string::npos);
  CHECK(r.err.find("'use_qk_norm' is not read") == std::string::npos);
}

TEST_CASE("cli: the imported DeepSeek-V3 is the shipped model", "[cli][import][moe]") {
  const auto dir = cli_testing::scratch_dir();
  const std::string file = (dir / "dsv3-model.yaml").string();
  REQUIRE(ptdsim("import hf tests/data/hf/DeepSeek-V3/config.json -o " + file).status == 0);
  const std::string text = slurp(file);
  for (const char* line : {"layers: 61", "ffn_hidden: 18432", "mtp_layers: 1", "  first_k_dense: 3",
                           "  router: sigmoid", "  router_groups: 8", "  router_group_topk: 4",
                           "  shared_experts: 1", "  q_lora_rank: 1536", "  qk_rope_head_dim: 64"}) {
    INFO(line);
    CHECK(text.find(line) != std::string::npos);
  }
  // the same parameters as models/deepseek-v3.yaml, through evaluate
  const auto shipped = ptdsim("evaluate scenarios/dgxc-deepseek-v3-h100.yaml --format json");
  REQUIRE(shipped.status == 0);
  CHECK(nlohmann::json::parse(shipped.out)["model"]["params"].get<double>() == Approx(682636472320.0).epsilon(1e-12));
}

TEST_CASE("cli: sweep of an imported MoE model over an --ep list", "[cli][import][moe][sweep]") {
  const auto dir = cli_testing::scratch_dir();
  const std::string file = (dir / "qwen3-30b.yaml").string();
  REQUIRE(ptdsim("import hf tests/data/hf/Qwen3-30B-A3B/config.json --hardware dgx-h100 --gpus 64 --seq-len 4096 "
                 "--global-batch 512 -o " + file)
              .status == 0);
  const auto sweep = ptdsim("sweep " + file + " --ep 1,8 --pp 1 --max-cp 1 --top 3 --format json");
  REQUIRE(sweep.status == 0);
  const auto results = nlohmann::json::parse(sweep.out)["results"];
  REQUIRE(!results.empty());
  for (const auto& r : results) {
    const int ep = r["parallel"]["ep"].get<int>();
    CHECK((ep == 1 || ep == 8));
  }
}

TEST_CASE("cli: import megatron reads the MoE and MLA flags", "[cli][import][moe][mla]") {
  // DeepSeek-V3 as the Megatron MoE model zoo writes it (model_configs/benchmarking/DeepSeek-V3.yaml)
  const std::string flags =
      "--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --ffn-hidden-size 18432 --vocab-size 129280 "
      "--make-vocab-size-divisible-by 128 --swiglu --normalization RMSNorm --position-embedding-type rope "
      "--untie-embeddings-and-output-weights --disable-bias-linear --num-experts 256 --moe-grouped-gemm --moe-router-topk 8 "
      "--moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) "
      "--moe-router-score-function sigmoid --moe-router-num-groups 8 --moe-router-group-topk 4 "
      "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 "
      "--v-head-dim 128 --mtp-num-layers 1";
  const auto dir = cli_testing::scratch_dir();
  const std::string file = (dir / "dsv3-megatron.yaml").string();
  const auto r = ptdsim("import megatron '" + flags + "' --hardware dgx-h100 --gpus 64 --seq-len 4096 "
                        "--global-batch 512 -o " + file);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto ev = ptdsim("evaluate " + file + " --format json");
  REQUIRE(ev.status == 0);
  // vocab 129280 is a multiple of 128 (no --tensor-model-parallel-size: tp 1), so not padded: the
  // shipped model's count, its MTP module included
  const auto j = nlohmann::json::parse(ev.out);
  CHECK(j["model"]["params"].get<double>() == Approx(682636472320.0).epsilon(1e-12));
  CHECK(slurp(file).find("  first_k_dense: 3") != std::string::npos);

  SECTION("a layer pattern ptdsim cannot model is refused at the flag") {
    const auto bad = ptdsim("import megatron '--num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
                            "--vocab-size 1000 --num-experts 8 --moe-layer-freq [1,0,0,1]'");
    CHECK(bad.status == 2);
    CHECK(bad.err.find("--moe-layer-freq [1,0,0,1] is not modelled") != std::string::npos);
    CHECK(bad.err.find("megatron:1:") != std::string::npos);
  }
  SECTION("MLA's dimensions without --multi-latent-attention") {
    const auto bad = ptdsim("import megatron '--num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
                            "--vocab-size 1000 --kv-lora-rank 64'");
    CHECK(bad.status == 2);
    CHECK(bad.err.find("--kv-lora-rank is read with --multi-latent-attention only") != std::string::npos);
  }
}

TEST_CASE("cli: import megatron reads --recompute-modules as the scenario's recompute_modules", "[cli][import][moe][mla]") {
  // DeepSeek-V3's flags (as above) with Megatron-Bridge's DeepSeek-V3 recompute (selective:
  // mla_up_proj; moe added here to cover an MoE module too)
  const std::string flags =
      "--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --ffn-hidden-size 18432 --vocab-size 129280 "
      "--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
      "--disable-bias-linear --num-experts 256 --moe-grouped-gemm --moe-router-topk 8 --moe-ffn-hidden-size 2048 "
      "--moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) --multi-latent-attention "
      "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
      "--pipeline-model-parallel-size 8 --expert-model-parallel-size 8 --bf16 --use-distributed-optimizer "
      "--recompute-granularity selective";
  const std::string where = " --hardware dgx-h100 --gpus 256 --seq-len 4096 --global-batch 512 -o ";
  const auto dir = cli_testing::scratch_dir();
  const std::string with = (dir / "dsv3-modules.yaml").string(), without = (dir / "dsv3-selective.yaml").string();
  REQUIRE(ptdsim("import megatron '" + flags + " --recompute-modules mla_up_proj moe'" + where + with).status == 0);
  REQUIRE(ptdsim("import megatron '" + flags + "'" + where + without).status == 0);
  // the one line the list adds, by hand: the key the scenario reads, under the flag's name
  std::string a = slurp(with), b = slurp(without);
  const std::string line = "  recompute_modules: [mla_up_proj, moe] # --recompute-modules\n";
  const auto at = a.find(line);
  REQUIRE(at != std::string::npos);
  CHECK(a.erase(at, line.size()) == b);
  // evaluated, the import is the selective scenario with the key set by hand
  const auto imported = ptdsim("evaluate " + with + " --format json");
  const auto by_hand = ptdsim("evaluate " + without + " --format json --set 'training.recompute_modules=[mla_up_proj, moe]'");
  REQUIRE(imported.status == 0);
  CHECK(imported.out == by_hand.out);
  // and the recomputed modules keep less than the attention core alone (Megatron's default)
  const auto core_only = nlohmann::json::parse(ptdsim("evaluate " + without + " --format json").out);
  const auto j = nlohmann::json::parse(imported.out);
  CHECK(j["memory"]["by_stage"][0]["activations_gib"].get<double>() <
        core_only["memory"]["by_stage"][0]["activations_gib"].get<double>());

  SECTION("an unknown module is an error at its word; so is one named twice") {
    const std::string small = "--num-layers 4 --hidden-size 1024 --num-attention-heads 8 --vocab-size 1000 "
                              "--recompute-granularity selective --recompute-modules ";
    const auto bad = ptdsim("import megatron '" + small + "core_attn mpl'");
    CHECK(bad.status == 2);
    CHECK(bad.err.find("megatron:1:141: error: --recompute-modules: unknown module \"mpl\": did you mean mlp?") == 0);
    const auto twice = ptdsim("import megatron '" + small + "mlp mlp'");
    CHECK(twice.status == 2);
    CHECK(twice.err.find("megatron:1:135: error: --recompute-modules names mlp twice") == 0);
  }
}

TEST_CASE("cli: import hf of DeepSeek-V2-Lite: no query bottleneck, greedy softmax routing", "[cli][import][moe][mla]") {
  // the shape fields of deepseek-ai/DeepSeek-V2-Lite's config.json (q_lora_rank null, topk_method
  // greedy, scoring_func softmax: DeepseekV2Config's defaults)
  const auto dir = cli_testing::scratch_dir();
  const std::string config = (dir / "v2-lite.json").string();
  std::ofstream(config) << R"({"architectures": ["DeepseekV2ForCausalLM"], "vocab_size": 102400, "hidden_size": 2048,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16,
    "num_key_value_heads": 16, "n_shared_experts": 2, "n_routed_experts": 64, "num_experts_per_tok": 6,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": null, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "topk_method": "greedy",
    "scoring_func": "softmax", "tie_word_embeddings": false})";
  const std::string file = (dir / "v2-lite.yaml").string();
  const auto r = ptdsim("import hf " + config + " --hardware dgx-h100 --gpus 8 --seq-len 4096 --global-batch 64 -o " + file);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string text = slurp(file);
  CHECK(text.find("q_lora_rank: 0") != std::string::npos);
  CHECK(text.find("router: softmax") != std::string::npos);
  CHECK(text.find("router_groups: 0") != std::string::npos);
  const auto ev = ptdsim("evaluate " + file + " --format json");
  REQUIRE(ev.status == 0);
  // attention: W_q 2048*16*192 = 6,291,456; W_kva 2048*576 = 1,179,648; kv norm 512; W_kvb
  // 512*16*256 = 2,097,152; W_o 16*128*2048 = 4,194,304 -> 13,763,072. Layer 0 dense: + 3*2048*10944
  // = 67,239,936 + norms 4,096 = 81,007,104. MoE layers: 66 experts (64 routed, 2 shared) of
  // 3*2048*1408 = 8,650,752 = 570,949,632, router 131,072, attention, norms -> 584,847,872 x 26 =
  // 15,206,044,672.
  // Embedding and head 2*102400*2048 = 419,430,400, final norm 2048: 15,706,484,224 (the card: 15.7B)
  const auto j = nlohmann::json::parse(ev.out);
  CHECK(j["model"]["params"].get<double>() == Approx(15706484224.0).epsilon(1e-12));
  CHECK(j["model"]["params"].get<double>() == Approx(15.7e9).epsilon(0.005));
  // active: 58 unchosen experts x 8,650,752 x 26 layers fewer = 2,661,150,208; without the 0.21B
  // input embedding 2.45B (the card: 2.4B activated)
  CHECK(j["model"]["active_params"].get<double>() == Approx(2661150208.0).epsilon(1e-12));
}
