#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/import.hpp"
#include "ptdsim/io/load.hpp"

// `ptdsim import hf` and `ptdsim import megatron` (src/io/import_*.cpp): the fields each source
// gives, the defaults of the framework where it does not, and positioned errors.
using namespace ptdsim;

namespace {

const std::string kHf = PTDSIM_TEST_DATA "/hf/";

std::string slurp_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

core::ModelSpec imported_model(const std::string& folder) {
  const io::Imported im = io::import_hf(kHf + folder + "/config.json", "", {});
  return io::load_model_from_string(im.yaml, folder + ".yaml");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

bool mentions(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

// The model fields two specs must share to be the same model (the name aside).
void same_model(const core::ModelSpec& a, const core::ModelSpec& b) {
  CHECK(a.layers == b.layers);
  CHECK(a.hidden == b.hidden);
  CHECK(a.heads == b.heads);
  CHECK(a.kv_heads == b.kv_heads);
  CHECK(a.ffn_hidden == b.ffn_hidden);
  CHECK(a.vocab == b.vocab);
  CHECK(a.mlp == b.mlp);
  CHECK(a.norm == b.norm);
  CHECK(a.position == b.position);
  CHECK(a.tied_embeddings == b.tied_embeddings);
  CHECK(a.bias == b.bias);
  REQUIRE(a.moe.has_value() == b.moe.has_value());
  if (a.moe) {
    CHECK(a.moe->experts == b.moe->experts);
    CHECK(a.moe->top_k == b.moe->top_k);
    CHECK(a.moe->every == b.moe->every);
    CHECK(a.expert_ffn_hidden() == b.expert_ffn_hidden());
  }
}

}  // namespace

TEST_CASE("io: import hf reproduces the shipped Llama 3 70B and Mixtral 8x7B", "[io][import]") {
  // the shipped files were written from the papers; the released config.json must give the same model
  SECTION("Llama 3 70B") {
    same_model(imported_model("Meta-Llama-3-70B"), io::load_model(PTDSIM_SOURCE_DIR "/models/llama3-70b.yaml"));
  }
  SECTION("Mixtral 8x7B") {
    same_model(imported_model("Mixtral-8x7B-v0.1"), io::load_model(PTDSIM_SOURCE_DIR "/models/mixtral-8x7b.yaml"));
  }
}

TEST_CASE("io: import hf reads each family's fields and defaults", "[io][import]") {
  SECTION("Mistral: GQA, SwiGLU, RMSNorm, RoPE; the sliding window is said to be timed as full attention") {
    const auto im = io::import_hf(kHf + "Mistral-7B-v0.1/config.json", "", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    CHECK(m.name == "Mistral-7B-v0.1");  // the config's folder
    CHECK(m.layers == 32);
    CHECK(m.kv_heads == 8);
    CHECK(m.ffn_hidden == 14336);
    CHECK(m.vocab == 32000);
    CHECK(m.max_seq_len == 32768);
    CHECK_FALSE(m.bias);
    CHECK(mentions(im.warnings, "sliding-window"));
  }
  SECTION("Qwen2: its Q, K and V biases are named as not counted") {
    const auto im = io::import_hf(kHf + "Qwen2-7B/config.json", "qwen2-7b", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    CHECK(m.name == "qwen2-7b");
    CHECK(m.hidden == 3584);
    CHECK(m.kv_heads == 4);
    CHECK_FALSE(m.bias);
    // per layer: h + 2 h k/a = 3584 + 2 * 3584 * 4 / 28 = 4608 bias parameters left out
    CHECK(mentions(im.warnings, "(4608 parameters per layer)"));
  }
  SECTION("Qwen3 (dense): head_dim wider than hidden / heads, QK-norm, tied, no biases") {
    const auto im = io::import_hf(kHf + "Qwen3-4B/config.json", "qwen3-4b", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    CHECK(m.layers == 36);
    CHECK(m.hidden == 2560);
    CHECK(m.heads == 32);
    CHECK(m.kv_heads == 8);
    CHECK(m.attention_head_dim == 128);  // 32 x 128 = 4096, not 2560
    CHECK(m.ffn_hidden == 9728);
    CHECK(m.vocab == 151936);
    CHECK(m.qk_norm);
    CHECK(m.tied_embeddings);
    CHECK_FALSE(m.bias);
    CHECK_FALSE(m.moe);
    CHECK(m.mlp == core::Mlp::swiglu);
    // by hand, a layer: q and o 2560 x 4096 each, k and v 2560 x 1024 each, the QK norms 2 x 128,
    // the MLP 3 x 2560 x 9728, two RMSNorms 2 x 2560 = 100,930,816; 36 of them and the final norm
    // 3,633,511,936, the model card's 3.6B non-embedding; with the tied 151,936 x 2560 embedding
    // 4,022,468,096, its 4.0B
    const double layer = 2.0 * 2560 * 4096 + 2.0 * 2560 * 1024 + 2 * 128 + 3.0 * 2560 * 9728 + 2 * 2560;
    CHECK(layer == 100930816.0);
    CHECK(analytic::total_params(m) == Approx(36 * layer + 2560 + 151936.0 * 2560).epsilon(1e-12));
    // without its head_dim field the class's default, 128, not hidden / heads = 80
    std::string text = slurp_text(kHf + "Qwen3-4B/config.json");
    const auto at = text.find("  \"head_dim\": 128,\n");
    REQUIRE(at != std::string::npos);
    text.erase(at, std::string("  \"head_dim\": 128,\n").size());
    const auto bare = io::import_hf_text(text, "Qwen3-4B/config.json", "", {});
    CHECK(io::load_model_from_string(bare.yaml, "m.yaml").attention_head_dim == 128);
    CHECK(bare.yaml.find("head_dim absent: Qwen3's default 128") != std::string::npos);
  }
  SECTION("Qwen2-MoE: the routed experts and one wide shared expert; its Q, K, V biases and gate named") {
    const auto im = io::import_hf(kHf + "Qwen2-57B-A14B/config.json", "", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    REQUIRE(m.moe);
    CHECK(m.moe->experts == 64);
    CHECK(m.moe->top_k == 8);
    CHECK(m.moe->ffn_hidden == 2560);
    CHECK(m.moe->shared_experts == 1);
    CHECK(m.moe->shared_ffn_hidden == 20480);
    CHECK(m.moe->router == core::Router::softmax);
    CHECK(m.attention_head_dim == 0);  // hidden / heads = 128: no head_dim of its own
    CHECK_FALSE(m.qk_norm);
    CHECK_FALSE(m.bias);
    CHECK(mentions(im.warnings, "(4608 parameters per layer)"));
    CHECK(mentions(im.warnings, "shared_expert_gate"));
    // no shared expert (0), no Q, K, V biases (qkv_bias false), and the class's default width (absent)
    std::string text = slurp_text(kHf + "Qwen2-57B-A14B/config.json");
    const std::string shared = "\"shared_expert_intermediate_size\": 20480,";
    const auto at = text.find(shared);
    REQUIRE(at != std::string::npos);
    const auto none = io::import_hf_text(text.substr(0, at) + "\"shared_expert_intermediate_size\": 0, \"qkv_bias\": false," +
                                             text.substr(at + shared.size()), "q/config.json", "", {});
    CHECK(io::load_model_from_string(none.yaml, "m.yaml").moe->shared_experts == 0);
    CHECK_FALSE(mentions(none.warnings, "biases"));
    CHECK_FALSE(mentions(none.warnings, "shared_expert_gate"));
    const auto absent = io::import_hf_text(text.substr(0, at) + text.substr(at + shared.size()), "q/config.json", "", {});
    CHECK(io::load_model_from_string(absent.yaml, "m.yaml").moe->shared_ffn_hidden == 5632);
    CHECK(absent.yaml.find("shared_expert_intermediate_size absent: defaulted to 5632") != std::string::npos);
  }
  SECTION("GLM-4.5: DeepSeek-V3's MoE layers under GQA; its Q, K, V biases and partial rotary named") {
    const auto im = io::import_hf(kHf + "GLM-4.5/config.json", "", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    REQUIRE(m.moe);
    CHECK(m.moe->experts == 160);
    CHECK(m.moe->top_k == 8);
    CHECK(m.moe->ffn_hidden == 1536);
    CHECK(m.moe->shared_experts == 1);
    CHECK(m.moe->shared_ffn_hidden == 1536);
    CHECK(m.moe->first_k_dense == 3);
    CHECK(m.moe->router == core::Router::sigmoid);
    CHECK(m.moe->router_groups == 1);
    CHECK(m.mtp_layers == 1);
    CHECK(m.qk_norm);
    CHECK_FALSE(m.mla);
    CHECK_FALSE(m.bias);  // attention_bias: Q, K and V only, named, not counted
    CHECK(m.attention_head_dim == 128);  // 96 x 128 = 12288, not 5120
    // (96 + 2 x 8) x 128 = 14,336 bias parameters a layer
    CHECK(mentions(im.warnings, "GLM-4-MoE's Q, K and V biases (14336 parameters per layer)"));
    CHECK(mentions(im.warnings, "partial_rotary_factor"));
    // Glm4MoeConfig's defaults where a field is absent
    const auto bare = io::import_hf_text("{\"architectures\": [\"Glm4MoeForCausalLM\"], \"num_hidden_layers\": 46, "
                                         "\"hidden_size\": 4096, \"num_attention_heads\": 96, "
                                         "\"num_key_value_heads\": 8, \"head_dim\": 128, \"intermediate_size\": 10944, "
                                         "\"vocab_size\": 151552}", "g/config.json", "", {});
    const auto d = io::load_model_from_string(bare.yaml, "m.yaml");
    CHECK(d.moe->experts == 128);
    CHECK(d.moe->ffn_hidden == 1408);
    CHECK(d.moe->first_k_dense == 1);
    CHECK(d.mtp_layers == 0);
    CHECK_FALSE(d.qk_norm);
    CHECK_FALSE(mentions(bare.warnings, "biases"));
  }
  SECTION("Llama 4: no_rope_layers as Llama4TextConfig reads it") {
    // Maverick's text decoder (48 layers, MoE every 2nd), with the NoPE pattern given four ways
    const auto maverick = [](const std::string& rope) {
      return io::import_hf_text(
          "{\"architectures\": [\"Llama4ForCausalLM\"], \"num_hidden_layers\": 48, \"hidden_size\": 5120, "
          "\"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"head_dim\": 128, \"intermediate_size\": 8192, "
          "\"intermediate_size_mlp\": 16384, \"num_local_experts\": 128, \"num_experts_per_tok\": 1, "
          "\"interleave_moe_layer_step\": 2, \"vocab_size\": 202048, \"attention_chunk_size\": 8192" + rope + "}",
          "l4/config.json", "", {});
    };
    const auto full_every = [](const io::Imported& im) {
      return io::load_model_from_string(im.yaml, "m.yaml").sliding_window->full_every;
    };
    // an empty list is falsy: transformers builds the default, one NoPE (global) layer in 4
    const auto empty = maverick(", \"no_rope_layers\": []");
    CHECK(full_every(empty) == 4);
    CHECK(empty.yaml.find("no_rope_layers empty, which transformers takes as absent") != std::string::npos);
    // the default's interval is a field too
    CHECK(full_every(maverick(", \"no_rope_layer_interval\": 2")) == 2);
    CHECK(full_every(maverick(", \"no_rope_layers\": [], \"no_rope_layer_interval\": 3")) == 3);
    // a list longer than the layers is indexed by layer: the first 48 entries count
    std::string longer = ", \"no_rope_layers\": [";
    for (int i = 0; i < 52; ++i) longer += std::string(i ? ", " : "") + ((i + 1) % 6 == 0 || i >= 48 ? "0" : "1");
    CHECK(full_every(maverick(longer + "]")) == 6);
    // shorter is an IndexError in transformers; an interval of 0 a ZeroDivisionError
    CHECK_THROWS_WITH(maverick(", \"no_rope_layers\": [1, 1, 1, 0]"),
                      Catch::Contains("no_rope_layers has 4 entries but num_hidden_layers is 48"));
    CHECK_THROWS_WITH(maverick(", \"no_rope_layer_interval\": 0"),
                      Catch::Contains("no_rope_layer_interval must be a positive integer, got \"0\""));
    // every layer global at 1; none past the last layer (transformers' modulo never reaches 0)
    CHECK(full_every(maverick(", \"no_rope_layer_interval\": 1")) == 1);
    const auto beyond = maverick(", \"no_rope_layer_interval\": 64");
    CHECK(full_every(beyond) == 0);
    CHECK(beyond.yaml.find("no_rope_layer_interval 64 passes the last layer: none global") != std::string::npos);
    CHECK(full_every(maverick(", \"no_rope_layer_interval\": 48")) == 48);  // the last layer only
  }
  SECTION("GPT-NeoX: GeLU, LayerNorm with biases, rotary positions, untied") {
    const auto im = io::import_hf(kHf + "gpt-neox-20b/config.json", "", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    CHECK(m.layers == 44);
    CHECK(m.hidden == 6144);
    CHECK(m.heads == 64);
    CHECK(m.kv_heads == 64);
    CHECK(m.ffn_hidden == 24576);
    CHECK(m.vocab == 50432);
    CHECK(m.mlp == core::Mlp::gelu);
    CHECK(m.norm == core::Norm::layernorm);
    CHECK(m.position == core::Position::rope);
    CHECK(m.bias);
    CHECK_FALSE(m.tied_embeddings);
    CHECK(mentions(im.warnings, "use_parallel_residual"));
  }
}

TEST_CASE("io: import hf writes a scenario that loads, on a shipped hardware name", "[io][import]") {
  io::ImportScenario s;
  s.hardware = "dgx-h100";
  s.gpus = 512;
  s.seq_len = 8192;
  s.global_batch = 1024;
  s.tokens = "15T";
  s.gpu_hour = 2.5;
  const auto im = io::import_hf(kHf + "Meta-Llama-3-70B/config.json", "", s);
  CHECK(im.yaml.find("hardware: dgx-h100") != std::string::npos);
  const auto sc = io::load_scenario_from_string(im.yaml, "plan.yaml");
  CHECK(sc.gpus == 512);
  CHECK(sc.hardware.name == "dgx-h100");
  CHECK(sc.training.tokens == 15e12);
  CHECK(sc.cost.gpu_hour == 2.5);
  // the starting layout: tp 8 (a node; divides 64 heads, 8 kv heads, 28672) and pp 1, dp 64 divides 1024
  CHECK(sc.parallel.tp == 8);
  CHECK(sc.parallel.pp == 1);
  CHECK(sc.parallel.dp == 64);
  SECTION("without a GPU count it says what it needs") {
    io::ImportScenario missing = s;
    missing.gpus = 0;
    CHECK(error_of([&] { io::import_hf(kHf + "Meta-Llama-3-70B/config.json", "", missing); }) ==
          kHf + "Meta-Llama-3-70B/config.json: error: a scenario (--hardware) needs a GPU count: --gpus N or --nodes N");
  }
}

TEST_CASE("io: import hf positions every problem in the config.json", "[io][import][errors]") {
  auto hf = [](const std::string& text) {
    return error_of([&] { io::import_hf_text(text, "cfg/config.json", "", {}); });
  };
  SECTION("a JSON syntax error, at the byte nlohmann names, as line:col") {
    // the parser stops at the '}' of line 3 (byte 34): line 3, column 1
    CHECK(hf("{\n  \"architectures\": [\"LlamaForCausalLM\"],\n}\n") ==
          "cfg/config.json:3:1: error: invalid JSON: syntax error while parsing object key - unexpected '}'; "
          "expected string literal\n}\n^");
  }
  SECTION("an architecture it does not model") {
    CHECK(hf("{\"architectures\": [\"FalconForCausalLM\"], \"hidden_size\": 64}") ==
          "cfg/config.json:1:20: error: architecture 'FalconForCausalLM' is not supported (supported: "
          "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM, GPTNeoXForCausalLM, "
          "DeepseekV3ForCausalLM, DeepseekV2ForCausalLM, Qwen3MoeForCausalLM, GptOssForCausalLM, "
          "Llama4ForConditionalGeneration, Llama4ForCausalLM, Qwen3ForCausalLM, Qwen2MoeForCausalLM, Glm4MoeForCausalLM)\n"
          "{\"architectures\": [\"FalconForCausalLM\"], \"hidden_size\": 64}\n"
          "                   ^");
  }
  SECTION("a bad value") {
    CHECK(hf("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_attention_heads\": 8,\n"
             " \"intermediate_size\": 256, \"vocab_size\": 100, \"num_hidden_layers\": -2}") ==
          "cfg/config.json:2:68: error: num_hidden_layers must be a positive integer, got \"-2\"\n"
          " \"intermediate_size\": 256, \"vocab_size\": 100, \"num_hidden_layers\": -2}\n"
          "                                                                   ^");
  }
  SECTION("every missing field at once, for the file") {
    CHECK(hf("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_attention_heads\": 8}") ==
          "cfg/config.json: error: missing required key 'num_hidden_layers' in config.json\n"
          "cfg/config.json: error: missing required key 'intermediate_size' in config.json\n"
          "cfg/config.json: error: missing required key 'vocab_size' in config.json");
  }
  SECTION("a head_dim other than hidden / heads is the model's head_dim (Mistral Nemo: 32 x 128 = 4096 of 5120)") {
    const auto im = io::import_hf_text(
        "{\"architectures\": [\"MistralForCausalLM\"], \"num_hidden_layers\": 40, \"hidden_size\": 5120,\n"
        " \"num_attention_heads\": 32, \"intermediate_size\": 14336, \"vocab_size\": 131072, \"head_dim\": 128}",
        "cfg/config.json", "", {});
    const auto m = io::load_model_from_string(im.yaml, "x.yaml");
    CHECK(m.head_dim() == 128);
    CHECK(m.q_width() == 4096);
    CHECK(im.yaml.find("head_dim: 128") != std::string::npos);
  }
}

TEST_CASE("io: import megatron maps the documented flags", "[io][import]") {
  const std::string args =
      "pretrain_gpt.py --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention "
      "--num-query-groups 8 --seq-length 8192 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
      "--num-layers-per-virtual-pipeline-stage 5 --sequence-parallel --use-distributed-optimizer "
      "--micro-batch-size 1 --global-batch-size 1024 --bf16 --recompute-granularity selective --swiglu "
      "--normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
      "--vocab-size 128256 --tp-comm-overlap --overlap-grad-reduce --train-iters 100 --lr 3e-4 --data-path /d";
  SECTION("a model: Megatron's SwiGLU FFN default and vocabulary padding") {
    const auto im = io::import_megatron(args, "llama", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    CHECK(m.kv_heads == 8);
    // no --ffn-hidden-size with --swiglu: int((4 * 8192 * 2/3) / 64) * 64 = int(341.33) * 64 = 21824
    CHECK(m.ffn_hidden == 21824);
    // 128256 padded to a multiple of 128 * tp 8 = 1024: ceil(125.25) * 1024 = 129024
    CHECK(m.vocab == 129024);
    CHECK(m.norm == core::Norm::rmsnorm);
    CHECK_FALSE(m.tied_embeddings);
    CHECK(m.bias);  // no --disable-bias-linear
    CHECK_FALSE(m.qk_norm);  // no --qk-layernorm
    CHECK(mentions(im.warnings, "ignored (not read by ptdsim): --lr --data-path"));
    const auto qk = io::import_megatron(args + " --qk-layernorm", "llama", {});
    CHECK(qk.yaml.find("qk_norm: true") != std::string::npos);
    CHECK(io::load_model_from_string(qk.yaml, "m.yaml").qk_norm);
    // DeepSeek-V3's command lines pass it with MLA, where it is the latents' norms: no qk_norm
    const auto mla = io::import_megatron(args + " --qk-layernorm --multi-latent-attention --kv-lora-rank 512"
                                                " --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128"
                                                " --num-query-groups 64 --disable-bias-linear",
                                         "mla", {});
    CHECK(mla.yaml.find("qk_norm") == std::string::npos);
    CHECK_FALSE(io::load_model_from_string(mla.yaml, "m.yaml").qk_norm);
    CHECK(mentions(im.warnings, "only into a scenario"));
  }
  SECTION("a scenario: layout, switches, tokens from --train-iters") {
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 512;
    const auto sc = io::load_scenario_from_string(io::import_megatron(args, "llama", s).yaml, "plan.yaml");
    CHECK(sc.parallel.tp == 8);
    CHECK(sc.parallel.pp == 4);
    CHECK(sc.parallel.vpp == 4);  // 80 / (4 * 5)
    CHECK(sc.parallel.dp == 16);  // 512 / (8 * 4)
    CHECK(sc.parallel.sequence_parallel);
    CHECK(sc.parallel.zero == 1);
    CHECK(sc.training.precision == core::Precision::bf16);
    CHECK(sc.training.recompute == core::Recompute::selective);
    CHECK(sc.training.overlap.tp);
    CHECK(sc.training.overlap.dp);
    CHECK(sc.training.tokens == 100.0 * 1024 * 8192);  // iterations x global batch x sequence
    CHECK(sc.training.framework == "megatron-core-0.8");
  }
  SECTION("an uneven pipeline written out stage by stage") {
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 64;
    const auto sc = io::load_scenario_from_string(
        io::import_megatron("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 "
                            "--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 6 "
                            "--decoder-last-pipeline-num-layers 6 --seq-length 4096 --global-batch-size 256",
                            "", s)
            .yaml,
        "plan.yaml");
    // 32 - 6 - 6 = 20 over the 2 middle stages
    CHECK(sc.parallel.stage_layers == std::vector<int>{6, 10, 10, 6});
    CHECK(sc.training.precision == core::Precision::fp32);  // Megatron trains in fp32 without --bf16/--fp16
  }
  SECTION("--transformer-impl: Transformer Engine's attention (cuDNN on Hopper), or local flash-attn / unfused") {
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 8;
    const std::string base = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 "
                             "--seq-length 4096 --global-batch-size 64 --bf16 ";
    auto load = [&](const std::string& more) {
      return io::load_scenario_from_string(io::import_megatron(base + more, "", s).yaml, "plan.yaml").training;
    };
    const auto te = load("--use-flash-attn");
    CHECK(te.flash_attention);
    CHECK(te.attention_kernel == core::AttentionKernel::cudnn);
    CHECK(load("--transformer-impl transformer_engine").attention_kernel == core::AttentionKernel::cudnn);
    const auto fa = load("--transformer-impl local --use-flash-attn");
    CHECK(fa.flash_attention);
    CHECK(fa.attention_kernel == core::AttentionKernel::flash2);
    CHECK_FALSE(load("--transformer-impl local").flash_attention);
  }
  SECTION("the fusion switches and --fp8-recipe; what they leave unset, Megatron-Core's row fills") {
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 8;
    const std::string base = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 "
                             "--seq-length 4096 --global-batch-size 64 --bf16 --swiglu ";
    auto load = [&](const std::string& more) {
      return io::load_scenario_from_string(io::import_megatron(base + more, "", s).yaml, "plan.yaml").training;
    };
    const auto plain = load("");
    CHECK(plain.fusion.rope == core::Fusion::fused);                         // --no-rope-fusion: store_false
    CHECK(plain.fusion.cross_entropy == core::LossFusion::vocab_parallel);  // the loss fusion is opt-in
    CHECK(plain.fp8_recipe == core::Fp8Recipe::delayed);
    // gradient_accumulation_fusion: on unless --no-gradient-accumulation-fusion (store_false)
    CHECK(plain.fusion.wgrad_accumulation == core::WgradAccumulation::fused);
    CHECK(load("--no-gradient-accumulation-fusion").fusion.wgrad_accumulation == core::WgradAccumulation::separate);
    const auto t = load("--no-rope-fusion --no-bias-swiglu-fusion --no-bias-gelu-fusion --no-bias-dropout-fusion "
                        "--cross-entropy-loss-fusion --fp8-format hybrid --fp8-recipe tensorwise");
    CHECK(t.fusion.rope == core::Fusion::eager);
    CHECK(t.fusion.activation == core::Fusion::eager);
    CHECK(t.fusion.dropout_add == core::Fusion::eager);
    CHECK(t.fusion.norm == core::Fusion::fused);
    CHECK(t.fusion.cross_entropy == core::LossFusion::fused);
    CHECK(t.fp8_recipe == core::Fp8Recipe::current);  // Megatron's "tensorwise" is current scaling
    CHECK(load("--fp8-format hybrid --fp8-recipe blockwise").fp8_recipe == core::Fp8Recipe::blockwise);
    // bias_activation_fusion is bias_swiglu_fusion under --swiglu and bias_gelu_fusion otherwise,
    // which --disable-bias-linear turns off (Megatron-LM argument_utils.py, arguments.py)
    CHECK(load("--no-bias-gelu-fusion").fusion.activation == core::Fusion::fused);
    CHECK(load("--disable-bias-linear").fusion.activation == core::Fusion::fused);
    auto gated = [&](const std::string& more) {
      std::string line = base + more;
      line.replace(line.find("--swiglu"), 8, "--quick-geglu");
      return io::load_scenario_from_string(io::import_megatron(line, "", s).yaml, "plan.yaml").training;
    };
    CHECK(gated("").fusion.activation == core::Fusion::fused);
    CHECK(gated("--no-bias-swiglu-fusion").fusion.activation == core::Fusion::fused);
    CHECK(gated("--no-bias-gelu-fusion").fusion.activation == core::Fusion::eager);
    CHECK(gated("--disable-bias-linear").fusion.activation == core::Fusion::eager);
  }
  SECTION("the experts' layout and dispatcher; unset, Megatron-Core's etp = tp and allgather") {
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 16;
    const std::string base = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                             "--num-experts 64 --moe-router-topk 8 --moe-ffn-hidden-size 1024 --seq-length 4096 "
                             "--global-batch-size 64 --bf16 --tensor-model-parallel-size 2 --sequence-parallel "
                             "--expert-model-parallel-size 8 ";
    auto load = [&](const std::string& more) {
      return io::load_scenario_from_string(io::import_megatron(base + more, "", s).yaml, "plan.yaml");
    };
    const auto plain = load("");
    CHECK(plain.parallel.etp == 0);
    CHECK(plain.parallel.expert_tp() == 2);
    CHECK(plain.training.moe.dispatcher == core::Dispatcher::allgather);  // the framework row's
    const auto set = load("--expert-tensor-parallel-size 1 --moe-token-dispatcher-type alltoall_seq");
    CHECK(set.parallel.etp == 1);
    CHECK(set.parallel.expert_dp() == 2);  // 2 * 8 / (1 * 8)
    CHECK(set.training.moe.dispatcher == core::Dispatcher::alltoall);
    CHECK(load("--moe-token-dispatcher-type flex").training.moe.dispatcher == core::Dispatcher::flex);
  }
  SECTION("--optimizer-cpu-offload with its fraction: CPU offload, the gradients copied in step()") {
    io::ImportScenario s;
    s.hardware = "dgx-h100";  // it has a host (hardware/FACTS.md section 7)
    s.gpus = 8;
    const std::string base = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 "
                             "--seq-length 4096 --global-batch-size 64 --bf16 --use-distributed-optimizer ";
    const auto t = io::load_scenario_from_string(
                       io::import_megatron(base + "--optimizer-cpu-offload --optimizer-offload-fraction 0.25", "", s).yaml,
                       "plan.yaml")
                       .training;
    CHECK(t.offload == core::Offload::optimizer);
    CHECK(t.offload_fraction == 0.25);
    CHECK_FALSE(t.overlap.offload);  // megatron-core-0.8's row: HybridDeviceOptimizer copies in step()
    // a fraction outside [0, 1] is an error at the flag
    CHECK_THROWS_AS(io::import_megatron(base + "--optimizer-cpu-offload --optimizer-offload-fraction 2", "", s),
                    core::ConfigError);
  }
}

TEST_CASE("io: import megatron reads --recompute-modules, a list flag", "[io][import][recompute]") {
  // Megatron-LM's --recompute-modules takes a list (arguments.py: nargs '*'; since its arguments are
  // generated from TransformerConfig, nargs '+'), read under --recompute-granularity selective only
  // (every module's switch is `recompute_granularity == 'selective' and name in recompute_modules`)
  io::ImportScenario s;
  s.hardware = "dgx-h100";
  s.gpus = 16;
  const std::string base = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                           "--num-experts 64 --moe-router-topk 8 --moe-ffn-hidden-size 1024 --seq-length 4096 "
                           "--global-batch-size 64 --bf16 --expert-model-parallel-size 8 ";
  const auto bit = [](core::RecomputeModule m) { return 1u << static_cast<unsigned>(m); };
  auto import = [&](const std::string& more) { return io::import_megatron(base + more, "", s); };
  auto load = [&](const io::Imported& im) { return io::load_scenario_from_string(im.yaml, "plan.yaml"); };
  SECTION("selective with a list: the modules, in the order given, and nothing else") {
    const auto im = import("--recompute-granularity selective --recompute-modules mlp moe --lr 1e-4");
    // the two written lines, by hand: the granularity, then the list under its flag's name
    CHECK(im.yaml.find("\n  recompute: selective               # --recompute-granularity\n"
                       "  recompute_modules: [mlp, moe]      # --recompute-modules\n") != std::string::npos);
    const auto sc = load(im);
    CHECK(sc.training.recompute == core::Recompute::selective);
    CHECK(sc.training.recompute_modules == (bit(core::RecomputeModule::mlp) | bit(core::RecomputeModule::moe)));
    CHECK_FALSE(sc.training.recomputes(core::RecomputeModule::core_attn));  // the list replaces Megatron's default
    CHECK(core::check(sc).empty());
    CHECK(mentions(im.warnings, "ignored (not read by ptdsim): --lr ("));  // the list stops at the next flag
  }
  SECTION("--recompute-activations is selective; --flag=value gives one value, as argparse does") {
    const auto sc = load(import("--recompute-activations --recompute-modules=core_attn"));
    CHECK(sc.training.recompute == core::Recompute::selective);
    CHECK(sc.training.recompute_modules == bit(core::RecomputeModule::core_attn));
    const auto im = import("--recompute-activations --recompute-modules=core_attn moe");
    CHECK(mentions(im.warnings, "stray word moe: not read by ptdsim"));  // a stray word after the one value
  }
  SECTION("under full or no recompute the list is not read") {
    const auto full = import("--recompute-granularity full --recompute-modules moe_act layernorm");
    CHECK(load(full).training.recompute == core::Recompute::full);
    CHECK(load(full).training.recompute_modules == 0u);
    CHECK(full.yaml.find("recompute_modules") == std::string::npos);
    CHECK(mentions(full.warnings, "--recompute-modules is read under --recompute-granularity selective only"));
    const auto none = import("--recompute-modules mlp");
    CHECK(load(none).training.recompute == core::Recompute::none);
    CHECK(mentions(none.warnings, "(the recompute is none)"));
  }
  SECTION("an empty list under selective recomputes nothing: recompute none") {
    const auto sc = load(import("--recompute-granularity selective --recompute-modules --sequence-parallel"));
    CHECK(sc.training.recompute == core::Recompute::none);
    CHECK(sc.parallel.sequence_parallel);  // the empty list took no word from the next flag
  }
  SECTION("moe on a dense model recomputes nothing (Megatron-Core reads it in MoE layers): left out") {
    const std::string dense = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                              "--seq-length 4096 --global-batch-size 64 --bf16 --recompute-granularity selective ";
    const auto im = io::import_megatron(dense + "--recompute-modules core_attn moe", "", s);
    CHECK(load(im).training.recompute_modules == bit(core::RecomputeModule::core_attn));
    CHECK(mentions(im.warnings, "--recompute-modules moe recomputes nothing without --num-experts"));
    CHECK(load(io::import_megatron(dense + "--recompute-modules moe", "", s)).training.recompute == core::Recompute::none);
  }
  SECTION("moe_act and layernorm on an MoE model are written; shared_experts without shared experts is left out") {
    const auto im = import("--moe-grouped-gemm --recompute-granularity selective --recompute-modules moe_act layernorm "
                           "shared_experts");
    const auto sc = load(im);
    CHECK(sc.training.recompute_modules == (bit(core::RecomputeModule::moe_act) | bit(core::RecomputeModule::layernorm)));
    CHECK(mentions(im.warnings, "--recompute-modules shared_experts recomputes nothing without --num-experts or "
                                "--moe-shared-expert-intermediate-size"));
    const auto shared = import("--moe-shared-expert-intermediate-size 2048 --recompute-granularity selective "
                               "--recompute-modules shared_experts");
    CHECK(load(shared).training.recompute_modules == bit(core::RecomputeModule::shared_experts));
    // TransformerConfig's checks: moe_act needs grouped GEMM, shared_experts refuses the shared experts' overlap
    const auto fails = [&](const std::string& more) { return error_of([&] { import(more); }); };
    CHECK(fails("--recompute-granularity selective --recompute-modules moe_act")
              .find("error: --recompute-modules moe_act needs --moe-grouped-gemm (as in Megatron-LM)") != std::string::npos);
    CHECK(fails("--moe-shared-expert-intermediate-size 2048 --moe-shared-expert-overlap --recompute-granularity "
                "selective --recompute-modules shared_experts")
              .find("error: --recompute-modules shared_experts cannot work with --moe-shared-expert-overlap") !=
          std::string::npos);
  }
  SECTION("moe_act and layernorm on a dense model recompute nothing: left out") {
    const std::string dense = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                              "--seq-length 4096 --global-batch-size 64 --bf16 --recompute-granularity selective ";
    // (TransformerConfig asks for grouped GEMM before it asks whether there are experts)
    CHECK(error_of([&] { io::import_megatron(dense + "--recompute-modules moe_act", "", s); })
              .find("--recompute-modules moe_act needs --moe-grouped-gemm") != std::string::npos);
    const auto im = io::import_megatron(dense + "--moe-grouped-gemm --recompute-modules core_attn moe_act layernorm", "", s);
    CHECK(load(im).training.recompute_modules == bit(core::RecomputeModule::core_attn));
    CHECK(mentions(im.warnings, "--recompute-modules moe_act recomputes nothing without --num-experts"));
    CHECK(mentions(im.warnings, "--recompute-modules layernorm recomputes nothing without --num-experts or "
                                "--multi-latent-attention"));
  }
  SECTION("layernorm under the local spec, where every norm is a module of its own") {
    const auto moe = import("--transformer-impl local --recompute-granularity selective --recompute-modules layernorm");
    CHECK(load(moe).training.recompute_modules == bit(core::RecomputeModule::layernorm));
    CHECK(mentions(moe.warnings, "--recompute-modules layernorm under --transformer-impl local also recomputes the norms"));
    const std::string dense = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                              "--seq-length 4096 --global-batch-size 64 --bf16 --recompute-granularity selective ";
    const auto d = io::import_megatron(dense + "--transformer-impl local --recompute-modules core_attn layernorm", "", s);
    CHECK(load(d).training.recompute_modules == bit(core::RecomputeModule::core_attn));
    CHECK(mentions(d.warnings, "--recompute-modules layernorm under --transformer-impl local recomputes every layer's "
                               "norms, which ptdsim does not count"));
  }
  SECTION("--offload-modules under --fine-grained-activation-offloading: the modules ptdsim models") {
    const auto im = import("--moe-grouped-gemm --fine-grained-activation-offloading --offload-modules expert_fc1 moe_act");
    CHECK(im.yaml.find("  offload_modules: [expert_fc1, moe_act]") != std::string::npos);
    CHECK(load(im).training.offload_modules == 3u);
    // without grouped GEMM the experts run as SequentialMLP, which has no offload groups
    const auto seq = import("--fine-grained-activation-offloading --offload-modules expert_fc1");
    CHECK(load(seq).training.offload_modules == 0u);
    CHECK(mentions(seq.warnings, "--offload-modules offloads nothing without --moe-grouped-gemm"));
    const auto off = import("--offload-modules moe_act");  // not read without the switch, as in Megatron-LM
    CHECK(load(off).training.offload_modules == 0u);
    CHECK(mentions(off.warnings, "--offload-modules is read under --fine-grained-activation-offloading only"));
    const auto fails = [&](const std::string& more) { return error_of([&] { import(more); }); };
    const std::string col = "megatron:1:" + std::to_string(base.size() + 56) + ": error: ";
    CHECK(fails("--fine-grained-activation-offloading --offload-modules core_attn")
              .rfind(col + "--offload-modules core_attn changes the memory, and offloading core_attn is not modelled "
                           "(ptdsim models expert_fc1, moe_act)\n", 0) == 0);
    CHECK(fails("--fine-grained-activation-offloading --offload-modules moe_akt")
              .rfind(col + "--offload-modules: unknown module \"moe_akt\": did you mean moe_act?", 0) == 0);
    CHECK(fails("--fine-grained-activation-offloading").find("--fine-grained-activation-offloading needs "
                                                             "--offload-modules") != std::string::npos);
    CHECK(fails("--transformer-impl local --fine-grained-activation-offloading --offload-modules moe_act")
              .find("--fine-grained-activation-offloading needs --transformer-impl transformer_engine") != std::string::npos);
    const std::string dense = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                              "--seq-length 4096 --global-batch-size 64 --bf16 ";
    const auto d = io::import_megatron(dense + "--fine-grained-activation-offloading --offload-modules moe_act", "", s);
    CHECK(load(d).training.offload_modules == 0u);
    CHECK(mentions(d.warnings, "--offload-modules offloads nothing without --num-experts"));
  }
  SECTION("the harmless list flags take their values with them") {
    const auto im = import("--data-path 0.3 /data/a 0.7 /data/b --lr 1e-4");
    CHECK_FALSE(mentions(im.warnings, "unknown flag"));
    CHECK_FALSE(mentions(im.warnings, "stray word"));
    CHECK(mentions(im.warnings, "ignored (not read by ptdsim): --data-path --lr ("));
    // an empty list takes nothing of the next flag
    const auto empty = import("--data-path --lr 1e-4 --sequence-parallel");
    CHECK_FALSE(mentions(empty.warnings, "unknown flag"));
    CHECK(mentions(empty.warnings, "ignored (not read by ptdsim): --data-path --lr ("));
    CHECK(load(empty).parallel.sequence_parallel);
  }
  SECTION("a harmless flag takes argparse's words: one value, none for a switch") {
    // --mock-data is store_true in arguments.py: the word after it is not its value
    const auto sw = import("--mock-data true --lr 1e-4 --eod-mask-loss --sequence-parallel");
    CHECK(mentions(sw.warnings, "stray word true"));
    CHECK_FALSE(mentions(sw.warnings, "unknown flag"));
    CHECK(mentions(sw.warnings, "ignored (not read by ptdsim): --mock-data --lr --eod-mask-loss ("));
    CHECK(load(sw).parallel.sequence_parallel);
    // the import of `more` fails at its first word with `message`
    const auto refused = [&](const std::string& more, const std::string& message) {
      return error_of([&] { import(more); })
                 .rfind("megatron:1:" + std::to_string(base.size() + 1) + ": error: " + message, 0) == 0;
    };
    CHECK(refused("--mock-data=true", "--mock-data takes no value"));
    // a value flag takes the next word whatever it says, and needs one
    CHECK_FALSE(mentions(import("--seed 1234 --save /ckpt").warnings, "stray word"));
    CHECK(refused("--lr --sequence-parallel", "--lr needs a value"));
    CHECK(refused("--save", "--save needs a value"));
  }
  SECTION("what NVIDIA's MoE recipes set and ptdsim does not model: read as the step without it, said once each") {
    const auto im = import("--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess "
                           "--te-rng-tracker --moe-permute-fusion --moe-router-fusion --moe-router-dtype fp32 "
                           "--cross-entropy-loss-fusion --cross-entropy-fusion-impl=te --sequence-parallel");
    CHECK_FALSE(mentions(im.warnings, "unknown flag"));
    CHECK_FALSE(mentions(im.warnings, "stray word"));  // the scope's list goes with it
    CHECK(mentions(im.warnings, "--cuda-graph-impl transformer_engine: not modelled: CUDA graphs replay captured "
                                "kernels without the host's launch work"));
    CHECK(mentions(im.warnings, "--cuda-graph-scope attn moe_router moe_preprocess: not modelled: CUDA graphs"));
    CHECK(mentions(im.warnings, "--moe-permute-fusion: not modelled: ptdsim times permute and unpermute as one "
                                "memory-bound copy"));
    CHECK(mentions(im.warnings, "--moe-router-fusion: not modelled"));
    CHECK(mentions(im.warnings, "--moe-router-dtype fp32: not modelled: the router's GEMM"));
    CHECK(mentions(im.warnings, "--cross-entropy-fusion-impl te: not modelled"));
    CHECK(mentions(im.warnings, "ignored (not read by ptdsim): --te-rng-tracker ("));
    const auto sc = load(im);  // the flags after them are read
    CHECK(sc.parallel.sequence_parallel);
    CHECK(sc.training.fusion.cross_entropy == core::LossFusion::fused);
    // a switch takes no value: the word after it is a stray word, and --switch=value an error
    CHECK(mentions(import("--moe-permute-fusion true").warnings, "stray word true"));
    CHECK(error_of([&] { import("--moe-permute-fusion=true"); }).find("--moe-permute-fusion takes no value") !=
          std::string::npos);
    // Megatron-LM's newer name for the scope; no graphs, nothing to say
    const auto modules = import("--cuda-graph-modules attn moe_router --cuda-graph-impl none");
    CHECK_FALSE(mentions(modules.warnings, "--cuda-graph"));  // under impl none nothing is captured
    CHECK_FALSE(mentions(modules.warnings, "stray word"));
    CHECK(mentions(import("--cuda-graph-modules attn moe_router").warnings,
                   "--cuda-graph-modules attn moe_router: not modelled"));
    CHECK(error_of([&] { import("--cuda-graph-scope attn --cuda-graph-modules attn"); })
              .find("--cuda-graph-scope and --cuda-graph-modules cannot be used together") != std::string::npos);
  }
}

TEST_CASE("io: import megatron reads the MoE dispatcher, token dropping and EP overlap flags", "[io][import][moe]") {
  // TransformerConfig's fields (megatron/core/transformer/transformer_config.py): moe_flex_dispatcher_backend,
  // moe_expert_capacity_factor, moe_pad_expert_input_to_capacity, moe_router_force_load_balancing,
  // overlap_moe_expert_parallel_comm, and the checks __post_init__ makes of them
  io::ImportScenario s;
  s.hardware = "dgx-h100";
  s.gpus = 16;
  const std::string base = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                           "--num-experts 64 --moe-router-topk 8 --moe-ffn-hidden-size 1024 --seq-length 4096 "
                           "--global-batch-size 64 --bf16 --expert-model-parallel-size 8 --moe-grouped-gemm ";
  auto import = [&](const std::string& more) { return io::import_megatron(base + more, "", s); };
  auto load = [&](const io::Imported& im) { return io::load_scenario_from_string(im.yaml, "plan.yaml"); };
  const auto fails = [&](const std::string& more) { return error_of([&] { import(more); }); };
  // "megatron:1:C: error: " for the word `word` of `more`, its column in base + more
  const auto at = [&](const std::string& more, const std::string& word) {
    return "megatron:1:" + std::to_string(base.size() + more.find(word) + 1) + ": error: ";
  };
  // the import of `more` fails at `word` with a message that begins `message`
  const auto refused_at = [&](const std::string& more, const std::string& word, const std::string& message) {
    return fails(more).rfind(at(more, word) + message, 0) == 0;
  };
  SECTION("token dropping padded to capacity, a force-balanced router, and the combined 1F1B's overlap") {
    const auto im = import("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1.25 "
                           "--moe-pad-expert-input-to-capacity --moe-router-force-load-balancing "
                           "--overlap-moe-expert-parallel-comm");
    CHECK(im.yaml.find("  moe: {dispatcher: alltoall, capacity_factor: 1.25, load_imbalance: 1} # "
                       "--moe-token-dispatcher-type; --moe-expert-capacity-factor with "
                       "--moe-pad-expert-input-to-capacity; --moe-router-force-load-balancing\n") != std::string::npos);
    const auto sc = load(im);
    CHECK(sc.training.moe.capacity_factor == Approx(1.25));
    CHECK(sc.training.moe.dispatcher == core::Dispatcher::alltoall);
    CHECK(sc.training.overlap.ep);
    CHECK(im.warnings.empty());
    // under a pipeline, with a virtual pipeline of two stages a rank (16 / (2 x 4))
    const auto pp = import("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
                           "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4 "
                           "--overlap-moe-expert-parallel-comm");
    CHECK(load(pp).training.overlap.ep);
    CHECK(load(pp).parallel.vpp == 2);
  }
  SECTION("padded dropping under every dispatcher but DeepEP's: the router pads each expert's map") {
    // the default dispatcher (allgather), HybridEP, and the all-to-all over a sequence-split layout
    for (const std::string d : {"", "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep ",
                                "--moe-token-dispatcher-type alltoall_seq "}) {
      const auto im = import(d + "--moe-expert-capacity-factor 1.5 --moe-pad-expert-input-to-capacity");
      CHECK(load(im).training.moe.capacity_factor == Approx(1.5));
      CHECK(im.yaml.find("capacity_factor: 1.5") != std::string::npos);
    }
    CHECK(load(import("")).training.moe.dispatcher == core::Dispatcher::allgather);
    // a balancing type changes no key; several need a coefficient each
    const auto lb = import("--moe-router-load-balancing-type sinkhorn");
    CHECK(load(lb).training.moe.capacity_factor == 0);
    CHECK(lb.warnings.empty());
    CHECK(import("--moe-router-load-balancing-type seq_aux_loss global_aux_loss --moe-aux-loss-coeff 1e-3 1e-4")
              .warnings.empty());
    // the EP overlap's companion: read, checked, and said to change nothing
    const auto dw = import("--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm --delay-wgrad-compute");
    CHECK(load(dw).training.overlap.ep);
    CHECK(mentions(dw.warnings, "--delay-wgrad-compute changes nothing ptdsim times"));
  }
  SECTION("DeepEP and HybridEP are the flex dispatcher; a factor without padding is dropless") {
    for (const std::string backend : {"deepep", "hybridep"}) {
      const auto im = import("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend " + backend);
      CHECK(im.yaml.find("  moe: {dispatcher: flex}            # --moe-token-dispatcher-type with "
                         "--moe-flex-dispatcher-backend " + backend + "\n") != std::string::npos);
      CHECK(im.warnings.empty());
      CHECK(load(im).training.moe.dispatcher == core::Dispatcher::flex);
    }
    // the deprecated switch sets the backend to deepep, even over ncclep (as TransformerConfig does)
    const auto deepep = import("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep --moe-enable-deepep");
    CHECK(deepep.yaml.find("--moe-flex-dispatcher-backend deepep\n") != std::string::npos);
    const auto unpadded = import("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1.5");
    CHECK(load(unpadded).training.moe.capacity_factor == 0);
    CHECK(mentions(unpadded.warnings, "--moe-expert-capacity-factor without --moe-pad-expert-input-to-capacity"));
    // Megatron-Core: a negative factor is None, dropless
    CHECK(load(import("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor -1")).training.moe.capacity_factor == 0);
    const auto unread = import("--moe-token-dispatcher-type alltoall --moe-flex-dispatcher-backend hybridep");
    CHECK(mentions(unread.warnings, "--moe-flex-dispatcher-backend is read under --moe-token-dispatcher-type flex only"));
    const std::string dense = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                              "--seq-length 4096 --global-batch-size 64 --bf16 ";
    const auto d = io::import_megatron(dense + "--moe-router-force-load-balancing", "", s);
    CHECK(mentions(d.warnings, "--moe-router-force-load-balancing changes nothing without --num-experts"));
    CHECK(d.yaml.find("load_imbalance") == std::string::npos);
  }
  SECTION("refused as Megatron-LM refuses them, at the flag") {
    CHECK(refused_at("--moe-pad-expert-input-to-capacity", "--moe-pad",
                     "--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor (as in Megatron-LM)"));
    CHECK(refused_at("--moe-expert-capacity-factor -1 --moe-pad-expert-input-to-capacity", "--moe-pad",
                     "--moe-pad-expert-input-to-capacity needs a capacity factor: --moe-expert-capacity-factor -1 is "
                     "none (dropless)"));
    CHECK(refused_at("--moe-token-dispatcher-type flex --moe-expert-capacity-factor 1 "
                     "--moe-pad-expert-input-to-capacity", "--moe-pad",
                     "--moe-pad-expert-input-to-capacity does not work with the flex dispatcher's deepep backend"));
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --moe-enable-deepep", "--moe-enable",
                     "--moe-enable-deepep needs --moe-token-dispatcher-type flex"));
    CHECK(refused_at("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-enable-deepep",
                     "--moe-enable", "--moe-enable-deepep and --moe-flex-dispatcher-backend hybridep name two backends"));
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --moe-flex-dispatcher-backend ncclep", "ncclep",
                     "--moe-flex-dispatcher-backend ncclep needs --moe-token-dispatcher-type flex"));
    CHECK(refused_at("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep", "ncclep",
                     "--moe-flex-dispatcher-backend ncclep changes the step, and NCCL's EP kernels are not modelled"));
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 0", "0",
                     "--moe-expert-capacity-factor 0 leaves every expert no capacity: Megatron-LM drops every token, "
                     "which is not modelled"));
    CHECK(fails("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor -0").find("leaves every expert no "
                                                                                             "capacity") != std::string::npos);
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor x1", "x1",
                     "--moe-expert-capacity-factor must be a number, got \"x1\""));
    CHECK(fails("--moe-expert-capacity-factor -nan").find("must be a number, got \"-nan\"") != std::string::npos);
    // a capacity factor beside a balancing that routes by its own rule, at that type
    CHECK(refused_at("--moe-expert-capacity-factor 1 --moe-router-load-balancing-type aux_loss sinkhorn "
                     "--moe-aux-loss-coeff 1e-3 0", "sinkhorn",
                     "--moe-expert-capacity-factor works with aux_loss, seq_aux_loss, global_aux_loss or none load "
                     "balancing, not sinkhorn (as in Megatron-LM)"));
    CHECK(fails("--moe-expert-capacity-factor 1.5 --moe-router-load-balancing-type=quantile_balancing")
              .find("not quantile_balancing") != std::string::npos);
    CHECK(refused_at("--moe-router-load-balancing-type seq_aux_los", "seq_aux_los",
                     "--moe-router-load-balancing-type: unknown type \"seq_aux_los\" (Megatron-LM's are aux_loss, "
                     "seq_aux_loss, global_aux_loss, sinkhorn, quantile_balancing, none): did you mean seq_aux_loss?"));
    CHECK(fails("--moe-router-load-balancing-type --bf16").find("needs a type") != std::string::npos);
    // TransformerConfig checks the balancing beside any factor given, a negative one (None) too
    CHECK(fails("--moe-expert-capacity-factor -1 --moe-router-load-balancing-type sinkhorn").find("not sinkhorn") !=
          std::string::npos);
    // several types, a coefficient each (arguments.py makes one value a scalar, which TransformerConfig refuses)
    CHECK(refused_at("--moe-router-load-balancing-type seq_aux_loss global_aux_loss --moe-aux-loss-coeff 1e-3",
                     "--moe-aux", "--moe-router-load-balancing-type gives 2 types: --moe-aux-loss-coeff needs as many "
                     "coefficients, one a type, got 1 (as in Megatron-LM)"));
    CHECK(refused_at("--moe-router-load-balancing-type seq_aux_loss global_aux_loss", "--moe-router-load",
                     "--moe-router-load-balancing-type gives 2 types"));
    CHECK(refused_at("--moe-aux-loss-coeff 1e-3 nope", "nope",
                     "--moe-aux-loss-coeff must be a number, got \"nope\""));
    // argparse's checks come before any assert of arguments.py or TransformerConfig
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --moe-enable-deepep --moe-expert-capacity-factor x1", "x1",
                     "--moe-expert-capacity-factor must be a number"));
    CHECK(refused_at("--delay-wgrad-compute --moe-router-load-balancing-type bogus", "bogus",
                     "--moe-router-load-balancing-type: unknown type \"bogus\""));
    // argparse refuses a bad type before TransformerConfig looks at the factor
    CHECK(fails("--moe-expert-capacity-factor 1 --moe-router-load-balancing-type sinkhorn bogus")
              .find("unknown type \"bogus\"") != std::string::npos);
    // TransformerConfig's delay_wgrad_compute asserts
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --delay-wgrad-compute", "--delay",
                     "--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm"));
    CHECK(refused_at("--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm --transformer-impl local "
                     "--delay-wgrad-compute", "--delay",
                     "--delay-wgrad-compute needs --transformer-impl transformer_engine"));
    // overlap_moe_expert_parallel_comm's asserts
    const std::string ov = "--overlap-moe-expert-parallel-comm ";
    const auto overlap = [&](const std::string& more, const std::string& why) {
      return fails(ov + more).rfind(at(ov, "--overlap") + "--overlap-moe-expert-parallel-comm " + why, 0) == 0;
    };
    CHECK(overlap("--moe-token-dispatcher-type allgather", "needs --moe-token-dispatcher-type alltoall or flex, not allgather"));
    CHECK(overlap("--moe-token-dispatcher-type alltoall --recompute-granularity full",
                  "does not work with --recompute-granularity full"));
    CHECK(overlap("--moe-token-dispatcher-type alltoall --recompute-granularity selective --recompute-modules moe",
                  "does not work with --recompute-modules moe"));
    CHECK(overlap("--moe-token-dispatcher-type alltoall --recompute-modules moe",  // asserted under any granularity
                  "does not work with --recompute-modules moe"));
    CHECK(overlap("--moe-token-dispatcher-type alltoall --pipeline-model-parallel-size 2",
                  "needs a virtual pipeline of more than one stage a rank"));
    CHECK(overlap("--moe-token-dispatcher-type alltoall --pipeline-model-parallel-size 2 "
                  "--num-layers-per-virtual-pipeline-stage 8",  // 16 / (2 x 8): one stage a rank, none
                  "needs a virtual pipeline of more than one stage a rank"));
    // the split counts the embedding and the loss (arguments.py): (16 + 2) / (2 x 3) = 3 stages a rank
    const auto counted = import("--moe-token-dispatcher-type alltoall --pipeline-model-parallel-size 2 "
                                "--num-layers-per-virtual-pipeline-stage 3 --account-for-embedding-in-pipeline-split "
                                "--account-for-loss-in-pipeline-split " + ov);
    CHECK(counted.yaml.find("vpp: 3 ") != std::string::npos);
    CHECK(overlap("--moe-token-dispatcher-type alltoall --moe-shared-expert-intermediate-size 1024 "
                  "--moe-shared-expert-overlap",
                  "does not work with --moe-shared-expert-overlap"));
    CHECK(overlap("--moe-token-dispatcher-type alltoall --mtp-num-layers 2", "takes at most one MTP layer"));
    const std::string fp32 = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                             "--num-experts 64 --seq-length 4096 --global-batch-size 64 --expert-model-parallel-size 8 ";
    CHECK(error_of([&] { io::import_megatron(fp32 + ov + "--moe-token-dispatcher-type alltoall", "", s); })
              .find("--overlap-moe-expert-parallel-comm needs --bf16 or --fp16") != std::string::npos);
    const std::string one = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                            "--num-experts 64 --seq-length 4096 --global-batch-size 64 --bf16 ";
    CHECK(error_of([&] { io::import_megatron(one + ov + "--moe-token-dispatcher-type alltoall", "", s); })
              .find("needs expert parallelism") != std::string::npos);
  }
  SECTION("on a dense model the flags are not read, but what TransformerConfig refuses is refused") {
    const std::string dense = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                              "--seq-length 4096 --global-batch-size 64 --bf16 ";
    const auto dense_fails = [&](const std::string& more) {
      return error_of([&] { io::import_megatron(dense + more, "", s); });
    };
    CHECK(dense_fails("--moe-pad-expert-input-to-capacity").find("needs --moe-expert-capacity-factor") != std::string::npos);
    CHECK(dense_fails("--moe-enable-deepep").find("--moe-enable-deepep needs --moe-token-dispatcher-type flex") !=
          std::string::npos);
    CHECK(dense_fails("--moe-expert-capacity-factor x").find("must be a number") != std::string::npos);
    CHECK(dense_fails("--overlap-moe-expert-parallel-comm").find("needs expert parallelism") != std::string::npos);
    CHECK(dense_fails("--moe-expert-capacity-factor 1 --moe-router-load-balancing-type sinkhorn").find("not sinkhorn") !=
          std::string::npos);
    CHECK(dense_fails("--delay-wgrad-compute").find("needs --overlap-moe-expert-parallel-comm") != std::string::npos);
    // and on a model-only import
    CHECK(error_of([&] { io::import_megatron(dense + "--moe-flex-dispatcher-backend ncclep", "", {}); })
              .find("ncclep needs --moe-token-dispatcher-type flex") != std::string::npos);
  }
}

TEST_CASE("io: import megatron reads --cp-comm-type, TransformerEngine's names", "[io][import][cp]") {
  io::ImportScenario s;
  s.hardware = "dgx-h100";
  s.gpus = 16;
  const std::string base = "--num-layers 16 --hidden-size 2048 --num-attention-heads 16 --vocab-size 32000 "
                           "--seq-length 8192 --global-batch-size 64 --bf16 ";
  auto import = [&](const std::string& more) { return io::import_megatron(base + more, "", s); };
  auto load = [&](const io::Imported& im) { return io::load_scenario_from_string(im.yaml, "plan.yaml"); };
  const auto fails = [&](const std::string& more) { return error_of([&] { import(more); }); };
  SECTION("one type for every layer, or the same one per layer") {
    CHECK(load(import("--context-parallel-size 2 --cp-comm-type a2a")).training.cp_comm == core::CpComm::a2a);
    CHECK(load(import("--context-parallel-size 2 --cp-comm-type all_gather")).training.cp_comm == core::CpComm::allgather);
    CHECK(load(import("--context-parallel-size 2 --cp-comm-type p2p")).training.cp_comm == core::CpComm::p2p);
    std::string each;
    for (int i = 0; i < 16; ++i) each += "a2a ";
    CHECK(load(import("--context-parallel-size 2 --cp-comm-type " + each)).training.cp_comm == core::CpComm::a2a);
    const auto h = import("--context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2");
    CHECK(load(h).training.cp_comm == core::CpComm::a2a_p2p);
    CHECK(mentions(h.warnings, "--hierarchical-context-parallel-sizes 2 2 is not read"));
    // TransformerEngine runs a2a+p2p with a group of one as the other group's method (context_parallel.py)
    CHECK(load(import("--context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 1 4"))
              .training.cp_comm == core::CpComm::p2p);
    CHECK(load(import("--context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 4 1"))
              .training.cp_comm == core::CpComm::a2a);
    // cp 1: TransformerEngine never sees the type, even one it would refuse
    CHECK(mentions(import("--cp-comm-type allgather").warnings, "--cp-comm-type is read with --context-parallel-size above 1"));
    const auto none = import("--cp-comm-type a2a");  // TransformerConfig reads it with cp > 1 only
    CHECK(none.yaml.find("cp_comm") == std::string::npos);
    CHECK(mentions(none.warnings, "--cp-comm-type is read with --context-parallel-size above 1 only"));
  }
  SECTION("refused at the word") {
    const std::string type = "megatron:1:" + std::to_string(base.size() + 42) + ": error: ";
    CHECK(fails("--context-parallel-size 2 --cp-comm-type allgather")
              .rfind(type + "--cp-comm-type: unknown type \"allgather\" (TransformerEngine's are p2p, all_gather, a2a, "
                            "a2a+p2p): did you mean all_gather?", 0) == 0);
    CHECK(fails("--context-parallel-size 4 --cp-comm-type a2a+p2p")
              .rfind(type + "--cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes", 0) == 0);
    CHECK(fails("--context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 3")
              .find("--hierarchical-context-parallel-sizes must multiply to --context-parallel-size 4") != std::string::npos);
    CHECK(fails("--context-parallel-size 4 --cp-comm-type p2p --hierarchical-context-parallel-sizes 65536 65536 65536 65536")
              .find("must multiply to --context-parallel-size 4") != std::string::npos);  // no overflow
    CHECK(fails("--context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2 1")
              .find("--cp-comm-type a2a+p2p takes two --hierarchical-context-parallel-sizes") != std::string::npos);
    CHECK(fails("--cp-comm-type a2a+p2p").find("needs --hierarchical-context-parallel-sizes") !=
          std::string::npos);  // arguments.py asserts it at any cp
    CHECK(fails("--context-parallel-size 2 --cp-comm-type p2p a2a")
              .find("--cp-comm-type gives 2 types: one, or one per layer (16)") != std::string::npos);
    std::string mixed;
    for (int i = 0; i < 15; ++i) mixed += "a2a ";
    CHECK(fails("--context-parallel-size 2 --cp-comm-type " + mixed + "p2p")
              .find("--cp-comm-type p2p after a2a: a type per layer changes the step, and mixing them is not modelled") !=
          std::string::npos);
    // a model-only import refuses it too
    CHECK(error_of([&] { io::import_megatron(base + "--context-parallel-size 2 --cp-comm-type ring", "", {}); })
              .find("--cp-comm-type: unknown type \"ring\"") != std::string::npos);
  }
}

TEST_CASE("io: import megatron reads sliding windows, sinks and gated activations, and refuses other layers",
          "[io][import][attention]") {
  // GPT-OSS 120B as Megatron-Bridge's GPTOSSProvider120B sets it (window_size (128, 0),
  // window_attn_skip_freq 2, softmax_type learnable, quick GeGLU, YaRN)
  const std::string oss =
      "--num-layers 36 --hidden-size 2880 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
      "--kv-channels 64 --ffn-hidden-size 2880 --normalization RMSNorm --quick-geglu --position-embedding-type yarn "
      "--untie-embeddings-and-output-weights --vocab-size 201088 --num-experts 128 --moe-ffn-hidden-size 2880 "
      "--moe-router-topk 4 --window-size 128,0 --window-attn-skip-freq 2 --softmax-type learnable";
  const auto model = [](const std::string& args) {
    return io::load_model_from_string(io::import_megatron(args, "", {}).yaml, "m.yaml");
  };
  SECTION("GPT-OSS: the model config.json gives") {
    const auto m = model(oss);
    const auto h = io::load_model_from_string(io::import_hf(kHf + "gpt-oss-120b/config.json", "", {}).yaml, "h.yaml");
    REQUIRE(m.sliding_window);
    CHECK(m.sliding_window->window == 128);
    CHECK(m.sliding_window->full_every == 2);
    CHECK(m.attention_sinks);
    CHECK(m.mlp == core::Mlp::swiglu);  // quick GeGLU gates the MLP
    CHECK(m.position == core::Position::rope);  // YaRN rotates as RoPE
    CHECK(analytic::total_params(m) == analytic::total_params(h));
    CHECK(analytic::total_params(m) == 116829152064.0);  // tests/cli/moe_import_test.cpp's hand count
  }
  SECTION("the window's forms and its full layers") {
    const std::string base = "--num-layers 12 --hidden-size 64 --num-attention-heads 8 --vocab-size 100 ";
    const auto window = [&](const std::string& flags) {
      const auto m = model(base + flags);
      REQUIRE(m.sliding_window);
      return *m.sliding_window;
    };
    CHECK(window("--window-size '(4096, 0)'").window == 4096);  // tuple_type's parentheses and int()'s blanks
    CHECK(window("--window-size 4096,0").full_every == 0);      // every layer windowed
    CHECK(window("--window-size 0,0").window == 1);             // the query alone
    CHECK_FALSE(model(base + "--window-size=-1,0").sliding_window);  // unbounded: full attention
    CHECK(window("--window-size 64,0 --window-attn-skip-freq 4").full_every == 4);
    CHECK(window("--window-size 64,0 --window-attn-skip-freq -3").full_every == 3);  // Python's % of -3 as of 3
    const auto beyond = io::import_megatron(base + "--window-size 64,0 --window-attn-skip-freq 13", "", {});
    CHECK(io::load_model_from_string(beyond.yaml, "m.yaml").sliding_window->full_every == 0);
    CHECK(beyond.yaml.find("passes the last layer: none attends fully") != std::string::npos);
    CHECK(window("--window-size 64,0 --window-attn-skip-freq [1,1,0]*4").full_every == 3);
    CHECK(window("--window-size 64,0 --window-attn-skip-freq [1]*12").full_every == 0);
    // Megatron-Core takes each entry's truth and reads one a layer: 2 is windowed, a tail unread
    CHECK(window("--window-size 64,0 --window-attn-skip-freq [2,0]*6").full_every == 2);
    CHECK(window("--window-size 64,0 --window-attn-skip-freq [1,0]*6+[0,0]").full_every == 2);
    CHECK_THROWS_WITH(model(base + "--window-size 64,0 --window-attn-skip-freq [1,0]*5"),
                      Catch::Contains("gives 10 of 12 entries (Megatron-Core reads one per layer)"));
    CHECK_THROWS_WITH(model(base + "--window-size 64,0 --window-attn-skip-freq [0,1]*6"),
                      Catch::Contains("is not modelled: ptdsim's full-attention layers are those with (i + 1) %"));
    CHECK_THROWS_WITH(model(base + "--window-size 64,0 --window-attn-skip-freq 0"), Catch::Contains("modulo it"));
    CHECK_THROWS_WITH(model(base + "--window-attn-skip-freq x2"),  // argparse's type, with or without a window
                      Catch::Contains("--window-attn-skip-freq x2 is not an integer or a list"));
    for (const char* bad : {"64,8", "-1,5", "-2,0"}) {
      INFO(bad);
      CHECK_THROWS_WITH(model(base + "--window-size=" + bad), Catch::Contains("not ahead (a right size of 0)"));
    }
    for (const char* bad : {"64", "1,2,3"}) {
      INFO(bad);
      CHECK_THROWS_WITH(model(base + "--window-size " + bad), Catch::Contains("must give a left and a right size"));
    }
    for (const char* bad : {"64,x", "128,"}) {
      INFO(bad);
      CHECK_THROWS_WITH(model(base + "--window-size " + bad), Catch::Contains("must be integers separated by commas"));
    }
    // every occurrence is checked, as argparse checks it; the last one counts
    CHECK_THROWS_WITH(model(base + "--window-size 64,x --window-size 64,0"),
                      Catch::Contains("must be integers separated by commas"));
    CHECK(window("--window-size 32,0 --window-size 64,0").window == 64);
    const auto alone = io::import_megatron(base + "--window-attn-skip-freq 2", "", {});
    CHECK(mentions(alone.warnings, "--window-attn-skip-freq has no effect without --window-size"));
    CHECK_FALSE(io::load_model_from_string(alone.yaml, "m.yaml").sliding_window);
    const auto unbounded = io::import_megatron(base + "--window-size=-1,0 --window-attn-skip-freq 2", "", {});
    CHECK(mentions(unbounded.warnings, "--window-attn-skip-freq has no effect with an unbounded --window-size"));
    CHECK_FALSE(model(base + "--softmax-type off-by-one").attention_sinks);  // a fixed offset: no parameters
    CHECK_THROWS_WITH(model(base + "--softmax-type sink"), Catch::Contains("--softmax-type must be one of"));
    // multimodal RoPE with its sections (a list Megatron-LM requires beside it; ignored)
    const auto mrope = io::import_megatron(base + "--position-embedding-type mrope --mrope-section 16 24 24", "", {});
    CHECK(io::load_model_from_string(mrope.yaml, "m.yaml").position == core::Position::rope);
    CHECK_FALSE(mentions(mrope.warnings, "stray word"));
  }
  SECTION("activations: --squared-relu ungated, and not with --swiglu") {
    const std::string base = "--num-layers 2 --hidden-size 64 --num-attention-heads 8 --vocab-size 100 ";
    CHECK(model(base + "--squared-relu").mlp == core::Mlp::gelu);
    CHECK(model(base + "--quick-geglu --squared-relu").mlp == core::Mlp::gelu);  // squared ReLU first, as Megatron
    CHECK(model(base + "--quick-geglu").ffn_hidden == 4 * 64);  // the default width follows --swiglu alone
    CHECK_THROWS_WITH(model(base + "--swiglu --quick-geglu"), Catch::Contains("--quick-geglu and --swiglu name two"));
    CHECK_THROWS_WITH(model(base + "--swiglu --squared-relu"), Catch::Contains("--squared-relu and --swiglu name two"));
  }
  SECTION("what Megatron-Bridge's Llama 4 and Qwen3-Next carry beside: warned of, or ignored") {
    const std::string base = "--num-layers 48 --hidden-size 512 --num-attention-heads 8 --vocab-size 1000 ";
    const auto im = io::import_megatron(base + "--no-rope-freq 4 --qk-l2-norm --num-experts 8 --moe-shared-expert-gate "
                                               "--moe-shared-expert-intermediate-size 512 --apply-layernorm-1p "
                                               "--glu-linear-offset 1.0 --activation-func-clamp-value 7.0",
                                        "", {});
    CHECK(mentions(im.warnings, "--no-rope-freq 4: not modelled: RoPE is timed on every layer"));
    CHECK(mentions(im.warnings, "--qk-l2-norm: not modelled"));
    CHECK(mentions(im.warnings, "--moe-shared-expert-gate: not modelled"));
    CHECK(mentions(im.warnings, "ignored (not read by ptdsim): --apply-layernorm-1p --glu-linear-offset "
                                "--activation-func-clamp-value"));
    CHECK_FALSE(mentions(im.warnings, "unknown flag"));
  }
  SECTION("layers other than attention and an MLP are refused at their flag") {
    const std::string base = "--num-layers 48 --hidden-size 2048 --num-attention-heads 16 --vocab-size 151936 ";
    const std::pair<const char*, const char*> refusals[] = {
        {"--linear-attention-type gated_delta_net", "linear-attention layers (Gated DeltaNet"},
        {"--linear-attention-freq 4", "linear-attention layers (Gated DeltaNet"},
        {"--experimental-attention-variant gdn", "Gated DeltaNet and DeepSeek sparse attention layers"},
        {"--hybrid-layer-pattern M-M*-", "hybrid models (Mamba"},
        {"--hybrid-override-pattern M-M*-", "hybrid models (Mamba"},
        {"--heterogeneous-layers-config-path nas.json", "heterogeneous layers"},
        {"--heterogeneous-layers-config-encoded-json {}", "heterogeneous layers"},
        {"--spec a b", "a custom layer spec"},
        {"--attention-output-gate", "the attention's output gate"}};
    for (const auto& [flag, why] : refusals) {
      INFO(flag);
      CHECK_THROWS_WITH(model(base + flag),
                        Catch::Contains(std::string(flag) + " changes the model or the step, and ") && Catch::Contains(why));
    }
    // a refused switch takes no value: the word after it is not part of the refusal
    CHECK_THROWS_WITH(model(base + "--attention-output-gate x"),
                      Catch::Contains("--attention-output-gate changes the model"));
    CHECK_THROWS_WITH(model(base + "--attention-output-gate=true"), Catch::Contains("takes no value"));
    // --is-hybrid-model alone builds no hybrid (Megatron-LM's is_hybrid_model() is the pattern's): ignored
    CHECK(model(base + "--is-hybrid-model").layers == 48);
    CHECK_THROWS_WITH(model(base + "--position-embedding-type relative"),
                      Catch::Contains("--position-embedding-type relative (T5's bias buckets) is not modelled"));
  }
}

TEST_CASE("io: import megatron positions its errors in the argument string", "[io][import][errors]") {
  auto mg = [](const std::string& args) { return error_of([&] { io::import_megatron(args, "", {}); }); };
  CHECK(mg("--num-layers 8x --hidden-size 64") ==
        "megatron:1:14: error: --num-layers must be a positive integer, got \"8x\"\n"
        "--num-layers 8x --hidden-size 64\n"
        "             ^");
  CHECK(mg("--num-layers 8 --hidden-size 64 --num-attention-heads 8 --normalization BatchNorm --vocab-size 100") ==
        "megatron:1:73: error: --normalization must be one of LayerNorm, RMSNorm, got \"BatchNorm\"\n"
        "--num-layers 8 --hidden-size 64 --num-attention-heads 8 --normalization BatchNorm --vocab-size 100\n"
        "                                                                        ^");
  {  // the training flags are read when the import writes a scenario
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 8;
    const std::string args = "--num-layers 8 --hidden-size 64 --num-attention-heads 8 --vocab-size 100 --seq-length 512 --global-batch-size 8 --fp8-recipe rowwise";
    CHECK(error_of([&] { io::import_megatron(args, "", s); }) ==
          "megatron:1:126: error: --fp8-recipe must be one of delayed, tensorwise, blockwise, mxfp8, got \"rowwise\"\n" +
              args + "\n" + std::string(125, ' ') + "^");
  }
  CHECK(mg("--num-layers 8 --hidden-size 64 --num-attention-heads 8") ==
        "megatron: error: missing --vocab-size (Megatron-LM reads the vocabulary from the tokenizer: give its size "
        "with --vocab-size N)");
  {
    io::ImportScenario s;
    s.hardware = "dgx-h100";
    s.gpus = 8;
    const std::string args = "--num-layers 8 --hidden-size 64 --num-attention-heads 8 --vocab-size 100 --seq-length 64 "
                             "--global-batch-size 8 --transformer-impl te";
    CHECK(error_of([&] { io::import_megatron(args, "", s); }) ==
          "megatron:1:131: error: --transformer-impl must be one of transformer_engine, local, got \"te\"\n" + args +
              "\n" + std::string(130, ' ') + "^");
  }
  {  // --recompute-modules: each name at its word, whatever the granularity
    const std::string base = "--num-layers 8 --hidden-size 64 --num-attention-heads 8 --vocab-size 100 ";
    CHECK(mg(base + "--recompute-granularity selective --recompute-modules core_attn core_atn") ==
          "megatron:1:138: error: --recompute-modules: unknown module \"core_atn\": did you mean core_attn? "
          "(Megatron-Core's: core_attn, mla_up_proj, mlp, moe, moe_act, layernorm, shared_experts, gdn_norm_out, "
          "gdp_in_proj, gdp_qkv, mhc)\n" +
              base + "--recompute-granularity selective --recompute-modules core_attn core_atn\n" +
              std::string(137, ' ') + "^");
    CHECK(mg(base + "--recompute-granularity full --recompute-modules attention").rfind(
              "megatron:1:123: error: --recompute-modules: unknown module \"attention\" (Megatron-Core's: ", 0) == 0);
    CHECK(mg(base + "--recompute-granularity selective --recompute-modules mlp core_attn mlp")
              .rfind("megatron:1:142: error: --recompute-modules names mlp twice\n", 0) == 0);
    {  // argparse keeps the last list (and the last value): read so, with a warning at the later one
      io::ImportScenario s;
      s.hardware = "dgx-h100";
      s.gpus = 8;
      const auto again = io::import_megatron(
          base + "--recompute-modules mlp --recompute-granularity selective --recompute-modules core_attn "
                 "--num-layers 4 --seq-length 128 --global-batch-size 8",
          "", s);
      CHECK(mentions(again.warnings, "megatron:1:132: --recompute-modules is given again: Megatron-LM (argparse) "
                                     "keeps the last one, read here; the earlier is not"));
      CHECK(mentions(again.warnings, "megatron:1:162: --num-layers is given again"));  // at the flag, not its value
      const auto sc = io::load_scenario_from_string(again.yaml, "plan.yaml");
      CHECK(sc.training.recompute_modules == (1u << static_cast<unsigned>(core::RecomputeModule::core_attn)));
      CHECK(sc.model.layers == 4);
      // argparse checks every occurrence's type and choices, not only the last
      const std::string ok = base + "--seq-length 128 --global-batch-size 8 ";
      const auto refused = [&](const std::string& more) { return error_of([&] { io::import_megatron(ok + more, "", s); }); };
      CHECK(refused("--num-layers abc --num-layers 4")
                .rfind("megatron:1:" + std::to_string(ok.size() + 14) + ": error: --num-layers", 0) == 0);
      CHECK(refused("--fp8-format e5m2x --fp8-format hybrid").find("--fp8-format must be one of") != std::string::npos);
      CHECK(refused("--moe-aux-loss-coeff x --moe-aux-loss-coeff 1e-3")
                .find("--moe-aux-loss-coeff must be a number, got \"x\"") != std::string::npos);
      // a refused or unmodelled flag given again: its last value is the one read
      CHECK(refused("--recompute-granularity full --recompute-method uniform --recompute-method block "
                    "--recompute-num-layers 1")
                .find("--recompute-method block changes the model or the step") != std::string::npos);
      const auto graphs = io::import_megatron(ok + "--cuda-graph-impl none --cuda-graph-impl local", "", s);
      CHECK(mentions(graphs.warnings, "--cuda-graph-impl local: not modelled"));
      CHECK(mentions(graphs.warnings, "--cuda-graph-impl is given again"));
    }
    CHECK(mg(base + "--recompute-granularity selective --recompute-modules mhc")
              .rfind("megatron:1:128: error: --recompute-modules mhc changes the step, and recomputing mhc is not "
                     "modelled (ptdsim models core_attn, mla_up_proj, mlp, moe, moe_act, layernorm, shared_experts)\n",
                     0) == 0);
    CHECK(mg(base + "--recompute-activations --recompute-modules mla_up_proj")
              .rfind("megatron:1:118: error: --recompute-modules mla_up_proj needs --multi-latent-attention", 0) == 0);
  }
  CHECK(mg("--num-layers 8 --hidden-size") == "megatron:1:16: error: --hidden-size needs a value\n"
                                              "--num-layers 8 --hidden-size\n"
                                              "               ^");
}
