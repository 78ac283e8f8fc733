#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "ptdsim/core/check.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/import.hpp"
#include "ptdsim/io/load.hpp"

// What the importers must never do (issue 39, and issue 38's importer items): write a file that
// `evaluate` then refuses, let a path or a value add keys to the YAML, take a misspelt flag or a
// flag that changes the step in silence, or call a default "read".
using namespace ptdsim;

namespace {

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

// A Llama config.json with `extra` spliced into the object (each field replaced where named twice:
// the later one wins in nlohmann, but ptdsim refuses duplicate keys, so callers replace by editing).
std::string llama(const std::string& kv_heads = "8", const std::string& hidden = "8192", const std::string& heads = "64") {
  return std::string("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": ") + hidden +
         ", \"intermediate_size\": 28672, \"num_attention_heads\": " + heads +
         ", \"num_hidden_layers\": 80, \"num_key_value_heads\": " + kv_heads + ", \"vocab_size\": 128256}";
}

io::ImportScenario on_h100() {
  io::ImportScenario s;
  s.hardware = "dgx-h100";
  s.gpus = 64;
  s.seq_len = 4096;
  s.global_batch = 64;
  return s;
}

// Whether `evaluate` takes what an importer wrote: the scenario loads (its own checks) and
// core::check, which evaluate applies, finds nothing.
std::string evaluate_verdict(const std::string& yaml) {
  try {
    const core::Scenario sc = io::load_scenario_from_string(yaml, "imported.yaml");
    const auto problems = core::check(sc);
    return problems.empty() ? "" : problems.front().message;
  } catch (const core::ConfigError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("io: an importer never writes what evaluate refuses", "[io][import][hostile]") {
  // before issue 39 each of these imported with exit 0 and evaluate refused the file
  const std::vector<std::string> configs{
      llama("7"),                                  // kv_heads 7 does not divide 64 heads
      llama("128"),                                // kv_heads above heads
      llama("8", "8200"),                          // hidden not a multiple of heads
      "{\"architectures\": [\"MixtralForCausalLM\"], \"hidden_size\": 4096, \"intermediate_size\": 14336, "
      "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, \"vocab_size\": 32000, "
      "\"num_local_experts\": 8, \"num_experts_per_tok\": 9}",  // top_k above the experts
  };
  for (const auto& text : configs) {
    for (bool scenario : {false, true}) {
      DYNAMIC_SECTION(text << (scenario ? " (scenario)" : " (model)")) {
        std::string yaml;
        const std::string err =
            error_of([&] { yaml = io::import_hf_text(text, "x/config.json", "", scenario ? on_h100() : io::ImportScenario{}).yaml; });
        // refused, at the field that holds the problem in config.json (line 1 of this one-line file)
        CHECK(err.rfind("x/config.json:1:", 0) == 0);
        CHECK(err.find("evaluate") != std::string::npos);
      }
    }
  }
  const std::vector<std::string> flags{
      "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 3 "
      "--vocab-size 32000",
      "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 128 "
      "--vocab-size 32000",
      "--num-layers 80 --hidden-size 8200 --num-attention-heads 64 --vocab-size 32000",
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 --num-experts 4 "
      "--moe-router-topk 5",
  };
  for (const auto& f : flags) {
    for (bool scenario : {false, true}) {
      DYNAMIC_SECTION(f << (scenario ? " (scenario)" : " (model)")) {
        const std::string err =
            error_of([&] { io::import_megatron(f, "", scenario ? on_h100() : io::ImportScenario{}); });
        CHECK(err.rfind("megatron:1:", 0) == 0);  // at the flag, not at generated text
        CHECK(err.find("evaluate") != std::string::npos);
      }
    }
  }
}

TEST_CASE("io: an imported model's problem is told at its flag", "[io][import][hostile]") {
  // --num-query-groups 3: at the value of the flag (column 104), as evaluate would put it
  CHECK(error_of([] {
          io::import_megatron("--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention "
                              "--num-query-groups 3 --vocab-size 32000",
                              "", {});
        }) == "megatron:1:104: error: kv_heads 3 does not divide heads 64: ptdsim (evaluate) refuses such a model\n"
              "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 3 "
              "--vocab-size 32000\n" + std::string(103, ' ') + "^");
}

TEST_CASE("io: what an importer accepts, evaluate accepts", "[io][import][hostile]") {
  // the corpus of odd but valid inputs: each import that succeeds must evaluate
  const std::vector<std::string> configs{llama(), llama("64"), llama("1"), llama("16", "4096", "32")};
  for (const auto& text : configs) {
    const auto im = io::import_hf_text(text, "x/config.json", "", on_h100());
    CHECK(evaluate_verdict(im.yaml) == "");
  }
  const std::vector<std::string> flags{
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000",
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 "
      "--vocab-size 32000 --tensor-model-parallel-size 8 --global-batch-size 64",
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 --recompute-granularity full "
      "--recompute-method uniform --recompute-num-layers 1 --global-batch-size 64"};
  for (const auto& f : flags) {
    const auto im = io::import_megatron(f, "", on_h100());
    CHECK(evaluate_verdict(im.yaml) == "");
  }
}

TEST_CASE("io: a path or value cannot add keys to the imported YAML", "[io][import][hostile]") {
  SECTION("a config folder whose name holds a line break") {
    // before: the folder name ended the header comment and its text became a key, turning Llama 3
    // 70B into a 3.62e12-parameter MoE
    const std::string dir = "x\nmoe: {experts: 64, top_k: 8} #";
    const auto im = io::import_hf_text(llama(), dir + "/config.json", "", {});
    const auto m = io::load_model_from_string(im.yaml, "m.yaml");
    CHECK_FALSE(m.moe);
    CHECK(m.name == dir);  // the name kept, escaped in the file ("x\nmoe...")
    CHECK(im.yaml.find("\nmoe:") == std::string::npos);
  }
  SECTION("a framework holding a line break and a key") {
    auto s = on_h100();
    s.framework = "megatron-core-0.8\n  flash_attention: false";
    const std::string err = error_of([&] { io::import_hf_text(llama(), "x/config.json", "", s); });
    // read back as one (unknown) framework name, never as a flash_attention key
    CHECK(err.find("error: training.framework must be one of") != std::string::npos);
    CHECK(err.find("unknown key") == std::string::npos);
  }
  SECTION("a hardware path holding a space and a '#'") {
    auto s = on_h100();
    s.hardware = std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-h100.yaml";
    const auto plain = io::import_hf_text(llama(), "x/config.json", "", s);
    CHECK(evaluate_verdict(plain.yaml) == "");
    s.hardware = "my hw #2.yaml";
    // before: written unquoted, read back as 'my hw' ("cannot open file '.../my hw'")
    const std::string err = error_of([&] { io::import_hf_text(llama(), "x/config.json", "", s); });
    CHECK(err.find("my hw #2.yaml") != std::string::npos);
  }
}

TEST_CASE("io: import megatron names what it does not read", "[io][import][hostile]") {
  SECTION("a misspelt required flag is named with the fix") {
    // before: only "missing --hidden-size (a model needs it)"
    CHECK(error_of([] { io::import_megatron("--num-layers 8 --hiden-size 1024 --num-attention-heads 16 --vocab-size 32000", "", {}); }) ==
          "megatron:1:16: error: unknown flag --hiden-size: did you mean --hidden-size? (missing --hidden-size, which "
          "a model needs)\n"
          "--num-layers 8 --hiden-size 1024 --num-attention-heads 16 --vocab-size 32000\n"
          "               ^");
  }
  SECTION("an unknown flag is a warning with a did-you-mean; known harmless ones are listed apart") {
    const auto im = io::import_megatron(
        "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 --sequence-paralel --lr 3e-4 "
        "--frobnicate 3",
        "", {});
    CHECK(mentions(im.warnings, "megatron:1:79: unknown flag --sequence-paralel: did you mean --sequence-parallel?"));
    CHECK(mentions(im.warnings, "unknown flag --frobnicate: not read by ptdsim"));
    CHECK(mentions(im.warnings, "ignored (not read by ptdsim): --lr (they change neither"));
    CHECK_FALSE(mentions(im.warnings, "ignored (not read by ptdsim): --lr --frobnicate"));
  }
  SECTION("flags that change the step are read or refused, never ignored") {
    const std::string base = "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 ";
    CHECK(error_of([&] { io::import_megatron(base + "--recompute-granularity full --recompute-method block --recompute-num-layers 2", "", {}); })
              .rfind("megatron:1:108: error: --recompute-method block changes the model or the step", 0) == 0);
    // a head width other than hidden / heads (1024 / 16 = 64) is the model's head_dim
    CHECK(io::load_model_from_string(io::import_megatron(base + "--kv-channels 128", "", {}).yaml, "x.yaml").head_dim() == 128);
    // the width hidden / heads gives anyway changes nothing: read, and not written
    const auto same = io::import_megatron(base + "--kv-channels 64", "", {});
    CHECK(same.warnings.empty());
    CHECK(same.yaml.find("head_dim") == std::string::npos);
    // uniform over one-layer chunks recomputes every layer: read as recompute: full
    auto s = on_h100();
    const auto im = io::import_megatron(
        base + "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1", "", s);
    CHECK(io::load_scenario_from_string(im.yaml, "x.yaml").training.recompute == core::Recompute::full);
    CHECK_FALSE(mentions(im.warnings, "--recompute"));
    // the import of base + `more` fails with a message holding `text`; the recompute it writes
    const auto refuses = [&](const std::string& more, const std::string& text) {
      return error_of([&] { io::import_megatron(base + more, "", s); }).find(text) != std::string::npos;
    };
    const auto recompute_of = [&](const std::string& more) {
      return io::load_scenario_from_string(io::import_megatron(base + more, "", s).yaml, "x.yaml").training.recompute;
    };
    // without a granularity Megatron-Core reads neither (TransformerBlock recomputes under full only)
    const auto bare = io::import_megatron(base + "--recompute-method block --recompute-num-layers 2", "", s);
    CHECK(io::load_scenario_from_string(bare.yaml, "x.yaml").training.recompute == core::Recompute::none);
    CHECK(mentions(bare.warnings, "--recompute-method is read under --recompute-granularity full only"));
    CHECK(mentions(bare.warnings, "--recompute-num-layers is read under --recompute-granularity full only"));
    // under selective arguments.py refuses a method, --recompute-activations' selective too
    CHECK(refuses("--recompute-activations --recompute-method uniform",
                  "--recompute-method applies to --recompute-granularity full only"));
    // argparse checks the recompute flags whatever the granularity
    CHECK(refuses("--recompute-method foo", "--recompute-method must be one of uniform, block"));
    CHECK(refuses("--recompute-num-layers x", "--recompute-num-layers must be an integer"));
    CHECK(recompute_of("--recompute-granularity full --recompute-method uniform --recompute-num-layers 01") ==
          core::Recompute::full);
    // --recompute-activations makes it selective whatever --recompute-granularity says (arguments.py)
    CHECK(recompute_of("--recompute-activations --recompute-granularity full") == core::Recompute::selective);
    // full without a method and a count: TransformerConfig refuses it; read as every layer, said
    CHECK(mentions(io::import_megatron(base + "--recompute-granularity full", "", s).warnings,
                   "--recompute-granularity full without --recompute-method and --recompute-num-layers is refused"));
    // adam is Megatron-LM's default and what ptdsim models; another optimizer is refused
    CHECK_FALSE(mentions(io::import_megatron(base + "--optimizer adam", "", s).warnings, "--optimizer"));
    CHECK(refuses("--optimizer sgd", "--optimizer sgd changes the model or the step"));
    // both 16-bit formats: arguments.py asserts against it
    CHECK(refuses("--bf16 --fp16", "--fp16 and --bf16 cannot be used together"));
    // an unmodelled flag that takes a value needs one, as argparse has it
    CHECK(refuses("--moe-router-dtype --bf16", "--moe-router-dtype needs a value"));
    // a continued command line: each backslash-newline is a blank
    const auto continued = io::import_megatron(
        "--num-layers 8 --hidden-size 1024 \\\n --num-attention-heads 16 --vocab-size 32000 \\\r\n"
        " --recompute-granularity selective --recompute-modules core_attn \\\n --bf16",
        "", s);
    CHECK_FALSE(mentions(continued.warnings, "stray word"));
    CHECK(io::load_scenario_from_string(continued.yaml, "x.yaml").training.precision == core::Precision::bf16);
    CHECK(mentions(io::import_megatron(base + "--lr 3 ''", "", s).warnings, "stray word '': not read"));
  }
  SECTION("--moe-layer-freq as Megatron-LM's moe_freq_type reads it: int() or a Python list expression") {
    auto s = on_h100();
    const std::string moe = "--num-layers 16 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 "
                            "--num-experts 8 --moe-grouped-gemm --moe-layer-freq ";
    const auto model = [&](const std::string& freq) {
      return io::load_model_from_string(io::import_megatron(moe + freq, "", {}).yaml, "x.yaml");
    };
    CHECK(model("([0]*3+[1])*4").moe->every == 4);  // Megatron's own help's form
    CHECK(model("2*[0,1]*4").moe->every == 2);
    CHECK(model("[1]*(16)").moe->every == 1);
    CHECK(model("[0]*2+[1]*14").moe->first_k_dense == 2);
    CHECK(model("+1").moe->every == 1);
    const auto fails = [&](const std::string& freq) { return error_of([&] { io::import_megatron(moe + freq, "", {}); }); };
    CHECK(fails("([1]*3+[0])*4").find("is not modelled") != std::string::npos);
    CHECK(fails("[1]*17").find("gives more than 16 entries") != std::string::npos);
    CHECK(fails("[1,2]*8").find("has entries other than 0 and 1") != std::string::npos);
    CHECK(fails("[1]+1").find("is not a list as a Python expression") != std::string::npos);
    CHECK(fails("[01]*16").find("is not a list as a Python expression") != std::string::npos);  // 01: Python 3 refuses it
    CHECK(fails("[0,1]*(274177*67280421310721)").find("is not a list") != std::string::npos);  // past 10^12: not wrapped
    CHECK(fails("[0,_1]*8").find("digits, commas, brackets") != std::string::npos);
    CHECK(fails("'[1, 1]*8'").find("no blanks") != std::string::npos);  // _eval_pattern allows no blank
    CHECK(model("[00]*4+[1]*12").moe->first_k_dense == 4);
    CHECK(model("[1,]*16").moe->every == 1);
    // an earlier value only has to be what Python evaluates; the last one is read
    CHECK(model("[1] --moe-layer-freq 1").moe->every == 1);
    CHECK(model("0 --moe-layer-freq 1").moe->every == 1);
    CHECK(fails("[1 --moe-layer-freq 1").find("--moe-layer-freq [1 is not a list") != std::string::npos);
    CHECK(fails("[1]*-1").find("digits, commas, brackets") != std::string::npos);
    CHECK(fails("0").find("must not be 0") != std::string::npos);
    CHECK(fails("-2").find("is not modelled") != std::string::npos);  // i % -2 == 0: every other layer from the first
    CHECK(fails("abc").find("is not an integer or a list") != std::string::npos);
    CHECK(fails(std::string(300, '(') + "[1]*16" + std::string(300, ')')).find("is not a list") != std::string::npos);
  }
  SECTION("what Megatron-LM derives or ignores is told at the flag") {
    auto s = on_h100();
    const std::string base = "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 ";
    const auto fails = [&](const std::string& more) { return error_of([&] { io::import_megatron(base + more, "", s); }); };
    // SwiGLU's default width of a tiny hidden size is 0
    CHECK(error_of([&] { io::import_megatron("--num-layers 2 --hidden-size 16 --num-attention-heads 1 "
                                             "--vocab-size 100 --swiglu", "", {}); })
              .rfind("megatron:1:30: error: --hidden-size 16 gives Megatron's SwiGLU FFN width", 0) == 0);
    // MLA with biases is not modelled: said at the flag, with the fix
    CHECK(fails("--num-experts 8 --moe-grouped-gemm --multi-latent-attention")
              .find("give --disable-bias-linear") != std::string::npos);
    // groups without a group top-k are not read, as Megatron-Core; a group top-k needs groups
    const auto groups = io::import_megatron(base + "--num-experts 8 --moe-grouped-gemm --moe-router-num-groups 4", "", s);
    CHECK(mentions(groups.warnings, "--moe-router-num-groups is read with a --moe-router-group-topk above 0 only"));
    CHECK(io::load_scenario_from_string(groups.yaml, "x.yaml").model.moe->router_groups == 0);
    CHECK(fails("--num-experts 8 --moe-grouped-gemm --moe-router-group-topk 2")
              .find("--moe-router-group-topk needs --moe-router-num-groups") != std::string::npos);
    // tp*cp*pp not dividing the GPUs without --tensor-model-parallel-size: at the degree given
    const std::string cp = "--context-parallel-size 3";
    CHECK(fails(cp).rfind("megatron:1:" + std::to_string(base.size() + 25) + ": error: tp*cp*pp = 1*3*1", 0) == 0);
    // a scenario key's refusal is told at the flag that set it
    const std::string etp = "--num-experts 8 --moe-grouped-gemm --expert-model-parallel-size 8 "
                            "--expert-tensor-parallel-size 3";
    CHECK(fails(etp).rfind("megatron:1:" + std::to_string(base.size() + etp.size()) + ": error: etp*ep = 3*8", 0) == 0);
    // the arguments' own values win over ptdsim's options, said when they differ
    auto opt = on_h100();
    opt.precision = "fp8";
    opt.micro_batch = 2;
    const std::string given = base + "--seq-length 1024 --bf16 --global-batch-size 256 --micro-batch-size 4";
    const auto over = io::import_megatron(given, "", opt);
    CHECK(mentions(over.warnings, "--bf16 in the arguments replaces --precision fp8"));
    // each at its value's column, with both numbers; the scenario holds the arguments' values
    const auto col = [&](const std::string& flag) { return std::to_string(given.find(flag) + flag.size() + 2); };
    CHECK(mentions(over.warnings, "megatron:1:" + col("--seq-length") + ": --seq-length 1024 in the arguments replaces --seq-len 4096"));
    CHECK(mentions(over.warnings, "megatron:1:" + col("--global-batch-size") + ": --global-batch-size 256 in the arguments replaces --global-batch 64"));
    CHECK(mentions(over.warnings, "megatron:1:" + col("--micro-batch-size") + ": --micro-batch-size 4 in the arguments replaces --micro-batch 2"));
    const core::Scenario read = io::load_scenario_from_string(over.yaml, "x.yaml");
    CHECK(read.training.seq_len == 1024);
    CHECK(read.training.global_batch == 256);
    CHECK(read.training.micro_batch == 4);
    // the same values as the options: nothing to say
    opt = on_h100();
    opt.micro_batch = 1;
    const auto same = io::import_megatron(base + "--seq-length 4096 --global-batch-size 64 --micro-batch-size 1", "", opt);
    CHECK_FALSE(mentions(same.warnings, "in the arguments replaces"));
  }
  SECTION("a model-only import checks every flag it would read into a scenario") {
    const std::string base = "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 ";
    CHECK(error_of([&] { io::import_megatron(base + "--fp8-format e5m2x", "", {}); })
              .rfind("megatron:1:92: error: --fp8-format must be one of e4m3, hybrid, got \"e5m2x\"", 0) == 0);
    CHECK(error_of([&] { io::import_megatron(base + "--train-samples -5", "", {}); }).rfind("megatron:1:95: error: --train-samples", 0) == 0);
  }
}

TEST_CASE("io: import hf says which fields were defaulted", "[io][import][hostile]") {
  // no num_key_value_heads: before, `kv_heads: 64  # num_key_value_heads` as if read
  const std::string text =
      "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8192, \"intermediate_size\": 28672, "
      "\"num_attention_heads\": 64, \"num_hidden_layers\": 80, \"vocab_size\": 128256}";
  const auto im = io::import_hf_text(text, "x/config.json", "", {});
  CHECK(im.yaml.find("# num_key_value_heads absent: defaulted to num_attention_heads") != std::string::npos);
  CHECK(im.yaml.find("# max_position_embeddings absent: defaulted to 2048") != std::string::npos);
  CHECK(im.yaml.find("# tie_word_embeddings absent: defaulted to false") != std::string::npos);
  // a misspelt field is named, with the one it was probably meant to be
  const std::string typo =
      "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8192, \"intermediate_size\": 28672, "
      "\"num_attention_heads\": 64, \"num_hidden_layers\": 80, \"num_key_value_head\": 8, \"vocab_size\": 128256}";
  const auto t = io::import_hf_text(typo, "x/config.json", "", {});
  CHECK(mentions(t.warnings, "config.json key 'num_key_value_head' is not read: did you mean 'num_key_value_heads'?"));
  // the shipped configs raise no such warning
  for (const char* folder : {"Meta-Llama-3-70B", "Mistral-7B-v0.1", "Mixtral-8x7B-v0.1", "Qwen2-7B", "gpt-neox-20b"}) {
    const auto shipped = io::import_hf(std::string(PTDSIM_TEST_DATA "/hf/") + folder + "/config.json", "", {});
    CHECK_FALSE(mentions(shipped.warnings, "is not read"));
  }
}

TEST_CASE("io: import hf reads JSON as Python's json does", "[io][import][hostile]") {
  const std::string head = "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                           "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100";
  const auto model = [](const std::string& text) {
    return io::load_model_from_string(io::import_hf_text(text, "x/config.json", "", {}).yaml, "x.yaml");
  };
  // a bare carriage return is JSON's whitespace (YAML's line break lost the keys after it)
  const auto cr = model(head + ",\r\"num_key_value_heads\": 1,\r\"tie_word_embeddings\": true}");
  CHECK(cr.kv_heads == 1);
  CHECK(cr.tied_embeddings);
  // a character past the basic plane, as Python's json.dumps writes it: two surrogate escapes
  CHECK(model(head + ", \"torch_dtype\": \"\\ud83d\\ude00\", \"x\": \"\\\\ud83d\"}").layers == 2);
  // a string is not a number or a boolean (transformers would take "false" as true)
  CHECK(error_of([&] { model(head + ", \"tie_word_embeddings\": \"false\"}"); })
            .find("tie_word_embeddings must be a JSON boolean, got the string \"false\"") != std::string::npos);
  // a NUL byte is no JSON
  CHECK(error_of([&] { model(head + "}" + std::string(1, '\0')); }).find("a NUL byte") != std::string::npos);
}

TEST_CASE("io: a scenario problem of an imported value is told at its flag, not in generated text", "[io][import][hostile]") {
  // before: "the imported scenario (megatron):17:3: error: ..." at a line of text in no file
  const std::string args =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000 --tensor-model-parallel-size 3";
  const std::string err = error_of([&] { io::import_megatron(args, "", on_h100()); });
  CHECK(err.rfind("megatron:1:108: error: ", 0) == 0);
  CHECK(err.find("(the imported parallel.tp, from --tensor-model-parallel-size)") != std::string::npos);
  CHECK(err.find("the imported scenario") == std::string::npos);
}
