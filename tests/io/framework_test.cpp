#include <catch2/catch.hpp>

#include <algorithm>

#include "fixtures.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/framework.hpp"
#include "ptdsim/io/load.hpp"

// training.framework: a framework's documented defaults fill only what the scenario and --set leave
// unset (src/core/frameworks.cpp, cited in docs/inputs.md).
using namespace ptdsim;

namespace {

core::Scenario load(const std::string& training, const std::vector<io::Override>& sets = {}) {
  return io::load_scenario_from_string(
      io::test::scenario("cluster: {gpus: 8}\nparallel: {tp: 2, dp: 4}\ntraining:\n" + training), "s.yaml", sets);
}

std::string error_of(const std::string& training) {
  try {
    load(training);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("io: a framework fills the switches the scenario leaves unset", "[io][framework]") {
  // nemo-24.07 (NeMo's performance recipes): sequence parallel, distributed optimizer, no recompute,
  // FlashAttention, TP/DP/PP overlap. The tool's own defaults differ in four of them
  // (sequence parallel off, ZeRO 0, selective recompute, TP overlap off).
  const auto s = load("  seq_len: 512\n  global_batch: 8\n  framework: nemo-24.07\n");
  CHECK(s.training.framework == "nemo-24.07");
  CHECK(s.parallel.sequence_parallel);
  CHECK(s.parallel.zero == 1);
  CHECK(s.training.recompute == core::Recompute::none);
  CHECK(s.training.flash_attention);
  CHECK(s.training.overlap.tp);
  CHECK(s.training.overlap.dp);
  CHECK(s.training.overlap.pp);
  CHECK(s.training.from_framework ==
        std::vector<std::string>{"parallel.sequence_parallel", "parallel.zero", "training.recompute",
                                 "training.flash_attention", "training.overlap.tp", "training.overlap.dp",
                                 "training.overlap.pp", "training.fusion.norm", "training.fusion.activation",
                                 "training.fusion.dropout_add", "training.fusion.rope",
                                 "training.fusion.cross_entropy", "training.fusion.wgrad_accumulation"});

  // without a framework: the tool's defaults, and nothing is said to come from a framework
  const auto plain = load("  seq_len: 512\n  global_batch: 8\n");
  CHECK(plain.training.framework.empty());
  CHECK(plain.training.from_framework.empty());
  CHECK_FALSE(plain.parallel.sequence_parallel);
  CHECK(plain.parallel.zero == 0);
  CHECK(plain.training.recompute == core::Recompute::selective);
  CHECK_FALSE(plain.training.overlap.tp);
  CHECK(plain.training.dp_bucket_params == 0);  // the engine's rule (Megatron's)
}

TEST_CASE("io: an explicit value always wins over the framework's", "[io][framework]") {
  SECTION("in the file") {
    const auto s = load("  seq_len: 512\n  global_batch: 8\n  framework: nemo-24.07\n  recompute: full\n"
                        "  overlap: {tp: false}\n");
    CHECK(s.training.recompute == core::Recompute::full);
    CHECK_FALSE(s.training.overlap.tp);
    CHECK(std::count(s.training.from_framework.begin(), s.training.from_framework.end(), "training.recompute") == 0);
    CHECK(std::count(s.training.from_framework.begin(), s.training.from_framework.end(), "training.overlap.tp") == 0);
    CHECK(s.training.overlap.dp);  // the rest of overlap still comes from the framework
  }
  SECTION("by --set, which may also name the framework") {
    const auto s = load("  seq_len: 512\n  global_batch: 8\n",
                        {{"training.framework", "deepspeed"}, {"training.overlap.dp", "true"}});
    CHECK(s.training.framework == "deepspeed");
    CHECK(s.training.overlap.dp);                        // --set, not DeepSpeed's overlap_comm false
    CHECK(s.training.dp_bucket_params == Approx(5e8));  // DeepSpeed's reduce_bucket_size
    CHECK(s.training.from_framework ==
          std::vector<std::string>{"parallel.zero", "parallel.sharding.unit_layers",
                                   "parallel.sharding.regather_on_recompute", "parallel.sharding.reduce_dtype",
                                   "parallel.sharding.max_live_params", "training.overlap.zero3_prefetch",
                                   "training.dp_bucket_params", "training.main_grads", "training.fusion.norm",
                                   "training.fusion.activation", "training.fusion.dropout_add",
                                   "training.fusion.rope", "training.fusion.cross_entropy",
                                   "training.fusion.wgrad_accumulation"});
    CHECK(s.parallel.sharding.unit_layers == Approx(0.25));  // a fetch per submodule, four a GPT layer
    CHECK(s.parallel.sharding.reduce_bytes == 2);           // the model's 16 bits
    CHECK(s.parallel.sharding.max_live_params == Approx(1e9));
    CHECK(s.training.main_grads == core::MainGrads::bit16);  // DeepSpeed's 16-bit .grad
  }
  SECTION("a null value is unset") {
    const auto s = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-lm-2021\n  recompute: ~\n");
    CHECK(s.training.recompute == core::Recompute::none);
  }
}

TEST_CASE("io: the FSDP frameworks time attention at FlashAttention-2's rates, Transformer Engine's at cuDNN's",
          "[io][framework]") {
  for (const char* fw : {"llm-foundry", "pytorch-fsdp", "pytorch-fsdp2"}) {
    const auto s = load(std::string("  seq_len: 512\n  global_batch: 8\n  framework: ") + fw + "\n");
    INFO(fw);
    CHECK(s.training.attention_kernel == core::AttentionKernel::flash2);
    CHECK(std::count(s.training.from_framework.begin(), s.training.from_framework.end(), "training.attention_kernel") ==
          1);
  }
  for (const char* fw : {"megatron-core-0.8", "nemo-24.07", "megatron-fsdp"})
    CHECK(load(std::string("  seq_len: 512\n  global_batch: 8\n  framework: ") + fw + "\n").training.attention_kernel ==
          core::AttentionKernel::cudnn);
  // an explicit kernel wins, in the file and by --set
  CHECK(load("  seq_len: 512\n  global_batch: 8\n  framework: llm-foundry\n  attention_kernel: cudnn\n")
            .training.attention_kernel == core::AttentionKernel::cudnn);
  CHECK(load("  seq_len: 512\n  global_batch: 8\n  framework: pytorch-fsdp2\n",
             {{"training.attention_kernel", "cudnn"}})
            .training.attention_kernel == core::AttentionKernel::cudnn);
}

TEST_CASE("io: a problem a framework default causes points at the framework", "[io][framework]") {
  // nemo-24.07 turns sequence parallelism on; at tp 2 it needs seq_len/cp to be even
  CHECK(error_of("  seq_len: 511\n  global_batch: 8\n  framework: nemo-24.07\n") ==
        "s.yaml:28:14: error: sequence parallel needs seq_len/cp = 511 to be a multiple of tp 2\n"
        "  framework: nemo-24.07\n"
        "             ^");
}

TEST_CASE("io: a framework's CP method fills training.cp_comm when the run has cp > 1", "[io][framework]") {
  // torchtitan runs PyTorch's context_parallel, whose default rotate method is allgather; Megatron-Core
  // TransformerEngine's ring (p2p). A run without CP does not list the key as used.
  const std::string base = "  seq_len: 512\n  global_batch: 8\n  framework: ";
  const core::Scenario tt = load(base + "torchtitan\n", {{"parallel.cp", "2"}, {"parallel.tp", "1"}});
  CHECK(tt.training.cp_comm == core::CpComm::allgather);
  CHECK(std::count(tt.training.from_framework.begin(), tt.training.from_framework.end(), "training.cp_comm") == 1);
  CHECK(load(base + "megatron-core-0.8\n", {{"parallel.cp", "2"}, {"parallel.tp", "1"}}).training.cp_comm ==
        core::CpComm::p2p);
  const core::Scenario no_cp = load(base + "torchtitan\n");
  CHECK(std::count(no_cp.training.from_framework.begin(), no_cp.training.from_framework.end(), "training.cp_comm") == 0);
  CHECK(load(base + "torchtitan\n", {{"parallel.cp", "2"}, {"parallel.tp", "1"}, {"training.cp_comm", "p2p"}})
            .training.cp_comm == core::CpComm::p2p);  // an explicit value wins
  // torchtitan's Llama repeats the key/value heads (both rows); compiled, its ring waits on each
  // collective at once (overlap.cp false), which a run without CP does not list as used
  CHECK(tt.training.repeat_kv);
  CHECK(tt.training.overlap.cp);
  const core::Scenario ttc = load(base + "torchtitan-compile\n", {{"parallel.cp", "2"}, {"parallel.tp", "1"}});
  CHECK(ttc.training.repeat_kv);
  CHECK_FALSE(ttc.training.overlap.cp);
  CHECK(std::count(ttc.training.from_framework.begin(), ttc.training.from_framework.end(), "training.overlap.cp") == 1);
  const core::Scenario ttc1 = load(base + "torchtitan-compile\n");
  CHECK(std::count(ttc1.training.from_framework.begin(), ttc1.training.from_framework.end(), "training.overlap.cp") == 0);
  CHECK_FALSE(load(base + "megatron-core-0.8\n").training.repeat_kv);
}

TEST_CASE("io: every framework row names scenario keys and loads", "[io][framework]") {
  for (const auto& fw : core::frameworks()) {
    DYNAMIC_SECTION(fw.name) {
      CHECK_FALSE(fw.version.empty());
      CHECK_FALSE(fw.defaults.empty());
      core::Scenario s;
      REQUIRE_NOTHROW(s = load("  seq_len: 512\n  global_batch: 8\n  framework: " + std::string(fw.name) + "\n"));
      // the scenario sets none of them; its dense model reads no MoE switch (EP overlap is one), its cp 1
      // no CP method nor CP overlap, and a default of a feature it does not turn on (CPU offload's overlap) is not filled
      const auto filled = std::count_if(fw.defaults.begin(), fw.defaults.end(), [](const core::FrameworkDefault& d) {
        return d.when.empty() && !d.key.starts_with("training.moe.") && d.key != "training.overlap.ep" &&
               d.key != "training.cp_comm" && d.key != "training.overlap.cp";
      });
      CHECK(s.training.from_framework.size() == static_cast<std::size_t>(filled));
    }
  }
  CHECK(core::find_framework("nemo-24.07") != nullptr);
  CHECK(core::find_framework("nemo") == nullptr);
}

// a host for CPU offload (the fixture's hardware has none): the DGX H100's (hardware/FACTS.md section 7)
const io::Override kHost{"hardware.host", "{link_gbs: 64, memory_gib: 2048, memory_gbs: 614.4}"};

TEST_CASE("io: a framework's CPU offload default applies only to a scenario that offloads", "[io][framework][offload]") {
  // Megatron-Core's HybridDeviceOptimizer copies the gradients to the host in step(): not beside the backward
  const auto plain = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-core-0.8-distopt\n");
  CHECK(std::find(plain.training.from_framework.begin(), plain.training.from_framework.end(),
                  "training.overlap.offload") == plain.training.from_framework.end());
  CHECK(plain.training.overlap.offload);  // the tool's default, unread without offload
  const auto off = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-core-0.8-distopt\n",
                        {{"training.offload", "optimizer"}, kHost});
  CHECK(off.training.offload == core::Offload::optimizer);
  CHECK_FALSE(off.training.overlap.offload);
  CHECK(std::find(off.training.from_framework.begin(), off.training.from_framework.end(),
                  "training.overlap.offload") != off.training.from_framework.end());
  // an explicit value wins, as for every default
  const auto mine = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-core-0.8-distopt\n  offload: optimizer\n"
                         "  overlap: {offload: true}\n",
                         {kHost});
  CHECK(mine.training.overlap.offload);
  // DeepSpeed copies each reduced bucket during the backward
  const auto ds = load("  seq_len: 512\n  global_batch: 8\n  framework: deepspeed\n  offload: optimizer\n",
                       {{"parallel.zero", "1"}, kHost});
  CHECK(ds.training.overlap.offload);
}

TEST_CASE("io: the torchtitan rows set its fusions and torchao's Float8 recipe", "[io][framework]") {
  const auto eager = load("  seq_len: 512\n  global_batch: 8\n  framework: torchtitan\n");
  CHECK(eager.training.fusion.norm == core::Fusion::eager);
  CHECK(eager.training.fusion.activation == core::Fusion::eager);
  CHECK(eager.training.fusion.rope == core::Fusion::eager);
  CHECK(eager.training.fusion.cross_entropy == core::LossFusion::loss_parallel);  // F.cross_entropy, sharded where tp > 1
  CHECK(eager.training.fp8_recipe == core::Fp8Recipe::current);
  CHECK(eager.parallel.zero == 3);
  const auto compiled = load("  seq_len: 512\n  global_batch: 8\n  framework: torchtitan-compile\n");
  CHECK(compiled.training.fusion.norm == core::Fusion::fused);
  CHECK(compiled.training.fusion.rope == core::Fusion::fused);
  CHECK(compiled.training.fusion.cross_entropy == core::LossFusion::loss_parallel);  // the loss is outside the blocks
  CHECK(compiled.training.fusion.fp8_cast == core::Fusion::fused);  // Inductor: the producer takes the amax
  CHECK(eager.training.fusion.fp8_cast == core::Fusion::eager);
  const auto nemo = load("  seq_len: 512\n  global_batch: 8\n  framework: nemo-24.07\n");
  CHECK(nemo.training.fusion.cross_entropy == core::LossFusion::fused);
  CHECK(nemo.training.fp8_recipe == core::Fp8Recipe::delayed);  // TransformerEngine's default, the tool's
  const auto mcore = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-core-0.8\n");
  CHECK(mcore.training.fusion.cross_entropy == core::LossFusion::vocab_parallel);
  // an explicit value wins
  CHECK(load("  seq_len: 512\n  global_batch: 8\n  framework: torchtitan\n  fusion: {norm: fused}\n")
            .training.fusion.norm == core::Fusion::fused);
}

TEST_CASE("io: Megatron-Core's rows give an MoE model the allgather dispatcher", "[io][framework]") {
  // --moe-token-dispatcher-type defaults to 'allgather' (Megatron-LM arguments.py); a dense model
  // does not list the key among those its framework filled
  const std::string moe_model = "model:\n  layers: 4\n  hidden: 256\n  heads: 8\n  vocab: 1000\n  moe: {experts: 8, top_k: 2}\n";
  const auto moe = io::load_scenario_from_string(
      moe_model + "hardware: dgx-a100-80g\ncluster: {gpus: 8}\nparallel: {ep: 4}\ntraining:\n  seq_len: 512\n"
                  "  global_batch: 8\n  framework: megatron-core-0.8\n",
      "s.yaml");
  CHECK(moe.training.moe.dispatcher == core::Dispatcher::allgather);
  CHECK(std::count(moe.training.from_framework.begin(), moe.training.from_framework.end(), "training.moe.dispatcher") == 1);
  const auto dense = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-core-0.8\n");
  CHECK(std::count(dense.training.from_framework.begin(), dense.training.from_framework.end(), "training.moe.dispatcher") == 0);
}

TEST_CASE("io: the Megatron-Bridge row gives an MoE model the alltoall dispatcher without EP overlap",
          "[io][framework]") {
  // scripts/performance: set_workload_base_configs sets moe_token_dispatcher_type "alltoall" and
  // WorkloadBaseConfig.moe_a2a_overlap defaults to False; a workload (the scenario) turns it on
  const std::string moe_model = "model:\n  layers: 4\n  hidden: 256\n  heads: 8\n  vocab: 1000\n  moe: {experts: 8, top_k: 2}\n";
  const std::string rest = "hardware: dgx-a100-80g\ncluster: {gpus: 8}\nparallel: {ep: 4}\ntraining:\n  seq_len: 512\n"
                           "  global_batch: 8\n  framework: megatron-bridge\n";
  const auto moe = io::load_scenario_from_string(moe_model + rest, "s.yaml");
  auto filled = [](const core::Scenario& s, const char* key) {
    return std::count(s.training.from_framework.begin(), s.training.from_framework.end(), key);
  };
  CHECK(moe.training.moe.dispatcher == core::Dispatcher::alltoall);
  CHECK_FALSE(moe.training.overlap.ep);
  CHECK(filled(moe, "training.moe.dispatcher") == 1);
  CHECK(filled(moe, "training.overlap.ep") == 1);
  CHECK(moe.parallel.zero == 1);
  CHECK(moe.parallel.sequence_parallel);
  const auto overlapped = io::load_scenario_from_string(moe_model + rest + "  overlap: {ep: true}\n", "s.yaml");
  CHECK(overlapped.training.overlap.ep);
  CHECK(filled(overlapped, "training.overlap.ep") == 0);
  // a dense model reads neither switch
  const auto dense = load("  seq_len: 512\n  global_batch: 8\n  framework: megatron-bridge\n");
  CHECK(filled(dense, "training.moe.dispatcher") == 0);
  CHECK(filled(dense, "training.overlap.ep") == 0);
}

TEST_CASE("io: training.nccl forces NCCL's algorithm and protocol, by file or --set", "[io][nccl]") {
  // indices in NCCL's order: tree 0, ring 1, ..., nvls 4, nvls_tree 5, pat 6; ll 0, ll128 1, simple 2
  const auto plain = load("  seq_len: 512\n  global_batch: 8\n");
  CHECK(plain.hardware.nccl.algo == -1);
  CHECK(plain.hardware.nccl.proto == -1);
  const auto file = load("  seq_len: 512\n  global_batch: 8\n  nccl: {algo: nvls_tree, proto: simple}\n");
  CHECK(file.hardware.nccl.algo == 5);
  CHECK(file.hardware.nccl.proto == 2);
  const auto set = load("  seq_len: 512\n  global_batch: 8\n", {{"training.nccl.algo", "pat"}, {"training.nccl.proto", "ll128"}});
  CHECK(set.hardware.nccl.algo == 6);
  CHECK(set.hardware.nccl.proto == 1);
  CHECK(error_of("  seq_len: 512\n  global_batch: 8\n  nccl: {algo: rings}\n").find("training.nccl.algo must be one of") !=
        std::string::npos);
}
