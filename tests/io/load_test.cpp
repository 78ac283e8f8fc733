#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "fixtures.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;
using io::test::scenario;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("io: a model's optional keys take their documented defaults", "[io][model]") {
  auto m = io::load_model_from_string(io::test::kModel, "models/tiny.yaml");
  CHECK(m.name == "tiny");
  CHECK(m.layers == 4);
  CHECK(m.hidden == 256);
  CHECK(m.heads == 8);
  CHECK(m.vocab == 1000);
  CHECK(m.kv_heads == 8);        // = heads
  CHECK(m.ffn_hidden == 1024);   // 4 * 256
  CHECK(m.mlp == core::Mlp::gelu);
  CHECK(m.norm == core::Norm::layernorm);
  CHECK(m.position == core::Position::learned);
  CHECK(m.max_seq_len == 2048);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.bias);  // layernorm -> biases
  CHECK_FALSE(m.moe.has_value());
}

TEST_CASE("io: every model key is read", "[io][model]") {
  auto m = io::load_model_from_string(R"(
name: big
source: "somewhere, Table 1"
layers: 32
hidden: 4096
heads: 32
kv_heads: 8
ffn_hidden: 14336
vocab: 32000
mlp: swiglu
norm: rmsnorm
position: rope
max_seq_len: 32768
tied_embeddings: true
moe: {experts: 8, top_k: 2, every: 2, ffn_hidden: 7168}
)", "m.yaml");
  CHECK(m.kv_heads == 8);
  CHECK(m.ffn_hidden == 14336);
  CHECK(m.mlp == core::Mlp::swiglu);
  CHECK(m.norm == core::Norm::rmsnorm);
  CHECK(m.position == core::Position::rope);
  CHECK(m.max_seq_len == 32768);
  CHECK(m.tied_embeddings);
  CHECK_FALSE(m.bias);  // rmsnorm -> no biases by default
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->experts == 8);
  CHECK(m.moe->top_k == 2);
  CHECK(m.moe->every == 2);
  CHECK(m.moe->ffn_hidden == 7168);
}

TEST_CASE("io: model name and MoE defaults", "[io][model]") {
  SECTION("name defaults to the file's stem") {
    auto m = io::load_model_from_string("layers: 2\nhidden: 64\nheads: 4\nvocab: 10\n", "models/x-1b.yaml");
    CHECK(m.name == "x-1b");
  }
  SECTION("moe: top_k 1, every 1, expert ffn = model ffn") {
    auto m = io::load_model_from_string(
        "layers: 2\nhidden: 64\nheads: 4\nvocab: 10\nffn_hidden: 100\nmoe: {experts: 4}\n", "m.yaml");
    REQUIRE(m.moe.has_value());
    CHECK(m.moe->top_k == 1);
    CHECK(m.moe->every == 1);
    CHECK(m.moe->ffn_hidden == 100);
  }
  SECTION("explicit bias overrides the norm's default") {
    auto m = io::load_model_from_string("layers: 2\nhidden: 64\nheads: 4\nvocab: 10\nnorm: rmsnorm\nbias: true\n",
                                        "m.yaml");
    CHECK(m.bias);
  }
  SECTION("an integer may be written as 1e3 and a null value means absent") {
    auto m = io::load_model_from_string("layers: 2\nhidden: 1e3\nheads: 4\nvocab: 10\nkv_heads: ~\n", "m.yaml");
    CHECK(m.hidden == 1000);
    CHECK(m.kv_heads == 4);
  }
}

TEST_CASE("io: hardware units are converted once to SI", "[io][hardware]") {
  auto h = io::load_hardware_from_string(R"(
name: dgx-a100-80g
source: "NVIDIA datasheet"
gpu:
  name: A100-SXM4-80GB
  memory_gib: 80
  hbm_gbs: 2039
  hbm_efficiency: 0.9
  peak_tflops: {bf16: 312, fp16: 312, tf32: 156, fp32: 19.5}
  matmul_efficiency: 0.7
  kernel_launch_us: 4
node:
  gpus: 8
  intra: {bandwidth_gbs: 300, latency_us: 5, efficiency: 0.8}
network:
  bandwidth_gbs: 25
  latency_us: 10
  efficiency: 0.9
  topology: rail-optimized
  oversubscription: 2
collectives:
  all_reduce:
    - {scope: intra, ranks: 8, alpha_us: 20.1, busbw_gbs: 232.0}
    - {scope: inter, ranks: 16, alpha_us: 45.0, busbw_gbs: 23.5, min_bytes: 1048576, max_bytes: 1e9}
  send_recv:
    - {scope: inter, ranks: 2, alpha_us: 8, busbw_gbs: 20}
)", "hw.yaml");
  const double eps = 1e-12;
  CHECK(h.name == "dgx-a100-80g");
  CHECK(h.gpu.name == "A100-SXM4-80GB");
  CHECK(h.gpu.memory_bytes == Approx(85899345920.0).epsilon(eps));  // 80 * 2^30
  CHECK(h.gpu.hbm_Bps == Approx(2.039e12).epsilon(eps));            // 2039 GB/s
  CHECK(h.gpu.hbm_efficiency == Approx(0.9).epsilon(eps));
  CHECK(h.gpu.peak_flops[core::index(core::Precision::bf16)] == Approx(312e12).epsilon(eps));
  CHECK(h.gpu.peak_flops[core::index(core::Precision::fp32)] == Approx(19.5e12).epsilon(eps));
  CHECK(h.gpu.peak_flops[core::index(core::Precision::tf32)] == Approx(156e12).epsilon(eps));
  CHECK(h.gpu.peak_flops[core::index(core::Precision::fp8)] == 0);  // not given: unsupported
  CHECK(h.gpu.matmul_efficiency == Approx(0.7).epsilon(eps));
  CHECK(h.gpu.matmul_table.empty());
  CHECK(h.gpu.kernel_launch_s == Approx(4e-6).epsilon(eps));
  CHECK(h.gpus_per_node == 8);
  CHECK(h.intra.bandwidth_Bps == Approx(300e9).epsilon(eps));
  CHECK(h.intra.latency_s == Approx(5e-6).epsilon(eps));
  CHECK(h.intra.efficiency == Approx(0.8).epsilon(eps));
  CHECK(h.network.bandwidth_Bps == Approx(25e9).epsilon(eps));
  CHECK(h.network.latency_s == Approx(10e-6).epsilon(eps));
  CHECK(h.network.efficiency == Approx(0.9).epsilon(eps));
  CHECK(h.topology == core::Topology::rail_optimized);
  CHECK(h.oversubscription == Approx(2.0).epsilon(eps));
  REQUIRE(h.collectives.size() == 3);
  CHECK(h.collectives[0].op == core::Collective::all_reduce);
  CHECK(h.collectives[0].scope == core::Scope::intra);
  CHECK(h.collectives[0].ranks == 8);
  CHECK(h.collectives[0].alpha_s == Approx(20.1e-6).epsilon(eps));
  CHECK(h.collectives[0].busbw_Bps == Approx(232e9).epsilon(eps));
  CHECK(h.collectives[0].min_bytes == 0);
  CHECK(std::isinf(h.collectives[0].max_bytes));
  CHECK(h.collectives[1].scope == core::Scope::inter);
  CHECK(h.collectives[1].min_bytes == 1048576);
  CHECK(h.collectives[1].max_bytes == Approx(1e9).epsilon(eps));
  CHECK(h.collectives[2].op == core::Collective::send_recv);
}

TEST_CASE("io: hardware defaults", "[io][hardware]") {
  auto h = io::load_hardware_from_string(io::test::kHardware, "hw.yaml");
  CHECK(h.gpu.hbm_efficiency == Approx(0.85).epsilon(1e-12));
  CHECK(h.gpu.matmul_efficiency == Approx(0.8).epsilon(1e-12));
  CHECK(h.gpu.kernel_launch_s == 0);
  CHECK(h.intra.efficiency == 1.0);
  CHECK(h.network.efficiency == 1.0);
  CHECK(h.topology == core::Topology::fat_tree);
  CHECK(h.oversubscription == 1.0);
  CHECK(h.collectives.empty());
}

TEST_CASE("io: gpu.memory_bound_factor is read without kernel tables, and refused beside them",
          "[io][hardware]") {
  CHECK(io::load_hardware_from_string(io::test::kHardware, "hw.yaml").gpu.memory_bound_factor == 1.0);
  const std::string dir = std::string(PTDSIM_SOURCE_DIR) + "/hardware/";
  CHECK(io::load_hardware(dir + "gb200-nvl72.yaml").gpu.memory_bound_factor == Approx(2.167).epsilon(1e-12));
  CHECK(io::load_hardware(dir + "dgx-h100.yaml").gpu.memory_bound_factor == Approx(2.167).epsilon(1e-12));
  // with tables the factor is kernels.overhead's (default 1); a gpu-level one would go unused, so it
  // is an error at its line
  std::ifstream in(dir + "dgx-h100.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto over = text.find("    overhead: {");
  REQUIRE(over != std::string::npos);
  std::string without = text;
  without.erase(over, without.find('\n', over) + 1 - over);
  CHECK(io::load_hardware_from_string(without, "h.yaml").gpu.memory_bound_factor == 1.0);
  const auto at = text.find("  kernel_launch_us:");
  REQUIRE(at != std::string::npos);
  text.insert(at, "  memory_bound_factor: 5\n");
  CHECK_THROWS_WITH(io::load_hardware_from_string(text, "h.yaml"),
                    Catch::Contains("hardware.gpu.memory_bound_factor applies only without kernel tables"));
}

TEST_CASE("io: matmul_efficiency may be a calibrated table", "[io][hardware]") {
  auto h = io::load_hardware_from_string(R"(
gpu:
  name: G
  memory_gib: 1
  hbm_gbs: 1
  peak_tflops: {bf16: 1}
  matmul_efficiency:
    - {precision: bf16, m: 4096, n: 4096, k: 4096, efficiency: 0.75}
    - {precision: fp8, m: 1024, n: 2048, k: 512, efficiency: 0.5}
node: {gpus: 1, intra: {bandwidth_gbs: 1, latency_us: 0}}
network: {bandwidth_gbs: 1, latency_us: 0, topology: rail-optimized}
)", "hw.yaml");
  CHECK(h.gpu.matmul_efficiency == Approx(0.8).epsilon(1e-12));  // the scalar default stays
  REQUIRE(h.gpu.matmul_table.size() == 2);
  CHECK(h.gpu.matmul_table[0].precision == core::Precision::bf16);
  CHECK(h.gpu.matmul_table[0].m == 4096);
  CHECK(h.gpu.matmul_table[0].efficiency == Approx(0.75).epsilon(1e-12));
  CHECK(h.gpu.matmul_table[1].precision == core::Precision::fp8);
  CHECK(h.gpu.matmul_table[1].n == 2048);
  CHECK(h.gpu.matmul_table[1].k == 512);
  CHECK(h.topology == core::Topology::rail_optimized);
}

TEST_CASE("io: a scenario's optional keys take their documented defaults", "[io][scenario]") {
  auto s = io::load_scenario_from_string(scenario("cluster: {gpus: 8}\ntraining: {seq_len: 512, global_batch: 8}\n"),
                                         "scenarios/run.yaml");
  CHECK(s.name == "s");
  CHECK(s.file == "scenarios/run.yaml");
  CHECK(s.model.name == "tiny");
  CHECK(s.hardware.name == "box");
  CHECK(s.gpus == 8);
  const auto& p = s.parallel;
  CHECK(p.tp == 1);
  CHECK(p.pp == 1);
  CHECK(p.cp == 1);
  CHECK(p.ep == 1);
  CHECK(p.vpp == 1);
  CHECK(p.dp == 8);  // derived: 8 / (1*1*1)
  CHECK_FALSE(p.sequence_parallel);
  CHECK(p.zero == 0);
  CHECK(p.schedule == core::Schedule::one_f_one_b);
  CHECK(p.placement == std::array<core::Dim, 5>{core::Dim::tp, core::Dim::cp, core::Dim::ep, core::Dim::dp,
                                                core::Dim::pp});
  CHECK(p.stage_layers.empty());
  const auto& t = s.training;
  CHECK(t.seq_len == 512);
  CHECK(t.micro_batch == 1);
  CHECK(t.global_batch == 8);
  CHECK(t.precision == core::Precision::bf16);
  CHECK(t.recompute == core::Recompute::selective);
  CHECK(t.flash_attention);
  CHECK(t.optimizer == core::Optimizer::adam);
  CHECK(t.overlap.dp);
  CHECK_FALSE(t.overlap.tp);
  CHECK(t.overlap.pp);
  CHECK(t.overlap.zero3_prefetch);
  // parallel.sharding: FSDP FULL_SHARD with a block per unit, fp32 gradients, one unit ahead
  const auto& z = p.sharding;
  CHECK(z.unit_layers == 1);
  CHECK(z.reshard_after_forward);
  CHECK_FALSE(z.regather_on_recompute);
  CHECK(z.reduce_bytes == 4);
  CHECK(z.prefetch_units == 1);
  CHECK(z.backward_prefetch);
  CHECK(z.max_live_params == 0);
  CHECK_FALSE(z.sync);
  CHECK(z.overhead_s == 0);
  CHECK(z.overhead_per_rank_s == 0);
  CHECK(z.shard_ranks == 0);
}

TEST_CASE("io: every parallel.sharding key is read, the host overheads in seconds", "[io][scenario]") {
  auto s = io::load_scenario_from_string(scenario(R"(
cluster: {gpus: 8}
parallel:
  zero: 3
  sharding:
    unit_layers: 0.25
    reshard_after_forward: false
    regather_on_recompute: true
    reduce_dtype: bf16
    prefetch_units: 3
    backward_prefetch: false
    max_live_params: 1e9
    sync: true
    overhead_us: 130
    overhead_per_rank_us: 31.25
    shard_ranks: 4
training: {seq_len: 512, global_batch: 8}
)"), "in.yaml");
  const auto& z = s.parallel.sharding;
  CHECK(z.unit_layers == 0.25);
  CHECK_FALSE(z.reshard_after_forward);
  CHECK(z.regather_on_recompute);
  CHECK(z.reduce_bytes == 2);
  CHECK(z.prefetch_units == 3);
  CHECK_FALSE(z.backward_prefetch);
  CHECK(z.max_live_params == 1e9);
  CHECK(z.sync);
  CHECK(z.overhead_s == Approx(130e-6).epsilon(1e-12));
  CHECK(z.overhead_per_rank_s == Approx(31.25e-6).epsilon(1e-12));
  CHECK(z.shard_ranks == 4);
}

TEST_CASE("io: every scenario key is read", "[io][scenario]") {
  auto s = io::load_scenario_from_string(scenario(R"(
cluster: {nodes: 4}
parallel:
  tp: 2
  pp: 2
  dp: 4
  cp: 1
  ep: 1
  vpp: 2
  sequence_parallel: true
  zero: 3
  placement: pp-dp-ep-cp-tp
training:
  seq_len: 1024
  micro_batch: 2
  global_batch: 32
  precision: fp32
  recompute: full
  flash_attention: false
  optimizer: sgd
  overlap: {dp: false, tp: true, pp: false, zero3_prefetch: false}
)"), "in.yaml");
  CHECK(s.gpus == 16);  // 4 nodes * 4 GPUs per node
  const auto& p = s.parallel;
  CHECK(p.tp == 2);
  CHECK(p.pp == 2);
  CHECK(p.dp == 4);
  CHECK(p.vpp == 2);
  CHECK(p.sequence_parallel);
  CHECK(p.zero == 3);
  CHECK(p.schedule == core::Schedule::interleaved);  // default when vpp > 1
  CHECK(p.placement == std::array<core::Dim, 5>{core::Dim::pp, core::Dim::dp, core::Dim::ep, core::Dim::cp,
                                                core::Dim::tp});
  const auto& t = s.training;
  CHECK(t.seq_len == 1024);
  CHECK(t.micro_batch == 2);
  CHECK(t.global_batch == 32);
  CHECK(t.precision == core::Precision::fp32);
  CHECK(t.recompute == core::Recompute::full);
  CHECK_FALSE(t.flash_attention);
  CHECK(t.optimizer == core::Optimizer::sgd);
  CHECK_FALSE(t.overlap.dp);
  CHECK(t.overlap.tp);
  CHECK_FALSE(t.overlap.pp);
  CHECK_FALSE(t.overlap.zero3_prefetch);
}

TEST_CASE("io: schedules and stage_layers", "[io][scenario]") {
  SECTION("explicit schedule names") {
    for (const char* name : {"gpipe", "1f1b", "zb-h1"}) {
      auto s = io::load_scenario_from_string(
          scenario(std::string("cluster: {gpus: 2}\nparallel: {pp: 2, schedule: ") + name +
                   "}\ntraining: {seq_len: 512, global_batch: 4}\n"),
          "in.yaml");
      CHECK(core::name(s.parallel.schedule) == name);
    }
  }
  SECTION("uneven stage_layers") {
    auto s = io::load_scenario_from_string(
        scenario("cluster: {gpus: 2}\nparallel: {pp: 2, stage_layers: [1, 3]}\ntraining: {seq_len: 512, global_batch: 4}\n"),
        "in.yaml");
    CHECK(s.parallel.stage_layers == std::vector<int>{1, 3});
  }
}

TEST_CASE("io: scenario files include model and hardware by relative path", "[io][scenario][files]") {
  const std::string good = PTDSIM_TEST_DATA "/good/";
  SECTION("beside the scenario") {
    auto s = io::load_scenario(good + "tiny.yaml");
    CHECK(s.name == "tiny-run");
    CHECK(s.model.name == "tiny");
    CHECK(s.hardware.name == "tiny-box");
    CHECK(s.gpus == 8);         // nodes 2 * 4 GPUs
    CHECK(s.parallel.dp == 2);  // 8 / (tp 2 * pp 2)
  }
  SECTION("one directory up, name from the file") {
    auto s = io::load_scenario(good + "sub/nested.yaml");
    CHECK(s.name == "nested");
    CHECK(s.model.layers == 4);
    CHECK(s.gpus == 4);
  }
  SECTION("from a string, relative to base_dir") {
    auto s = io::load_scenario_from_string(
        "model: tiny-model.yaml\nhardware: tiny-hw.yaml\ncluster: {gpus: 4}\ntraining: {seq_len: 64, global_batch: 4}\n",
        "mem.yaml", {}, good);
    CHECK(s.model.name == "tiny");
  }
  SECTION("standalone model and hardware files") {
    CHECK(io::load_model(good + "tiny-model.yaml").hidden == 256);
    CHECK(io::load_hardware(good + "tiny-hw.yaml").gpus_per_node == 4);
  }
}

TEST_CASE("io: error messages name the file, line and column with the source line", "[io][errors]") {
  SECTION("a missing include names the including key") {
    // the include is collected with the scenario's other problems; the missing hardware section
    // then stops the loader (what follows would need it), and both are reported, the file first
    CHECK(error_of([] {
            io::load_scenario_from_string("model: m.yaml\nparallel:\n    tp: eight\n", "scenarios/x.yaml");
          }) == "scenarios/x.yaml: error: missing required key 'hardware' in scenario\n"
                "scenarios/x.yaml:1:8: error: cannot open file 'm.yaml'\nmodel: m.yaml\n       ^");
  }
  SECTION("inline problems point into the scenario") {
    CHECK(error_of([] {
            io::load_scenario_from_string(
                scenario("cluster: {gpus: 8}\nparallel:\n    tp: eight\ntraining: {seq_len: 512, global_batch: 8}\n"),
                "scenarios/x.yaml");
          }) == "scenarios/x.yaml:25:9: error: parallel.tp must be a positive integer, got \"eight\"\n"
                "    tp: eight\n"
                "        ^");
  }
  SECTION("a missing file loaded directly") {
    CHECK(error_of([] { io::load_model("/nonexistent/m.yaml"); }) == "/nonexistent/m.yaml: error: cannot open file");
  }
  SECTION("a syntax error") {
    CHECK(error_of([] { io::load_model_from_string("layers: [1, 2\n", "m.yaml"); }) ==
          "m.yaml:1:14: error: invalid YAML: end of sequence flow not found\nlayers: [1, 2\n             ^");
  }
}

TEST_CASE("io: cross-field problems are reported together at their keys", "[io][errors]") {
  // tp 3: divides neither the 8 GPUs, the 8 heads nor the 1024 ffn columns; dp derived -> 8/6 = 1
  const std::string msg = error_of([] {
    io::load_scenario_from_string(
        scenario("cluster: {gpus: 8}\nparallel: {tp: 3, pp: 2}\ntraining: {seq_len: 512, global_batch: 8}\n"),
        "x.yaml");
  });
  CHECK(msg ==
        "x.yaml:24:12: error: tp*cp*pp = 3*1*2 = 6 does not divide the 8 GPUs\n"
        "parallel: {tp: 3, pp: 2}\n"
        "           ^\n"
        "x.yaml:24:12: error: tp 3 does not divide heads 8\n"
        "parallel: {tp: 3, pp: 2}\n"
        "           ^\n"
        "x.yaml:24:12: error: tp 3 does not divide ffn_hidden 1024\n"
        "parallel: {tp: 3, pp: 2}\n"
        "           ^");
}

TEST_CASE("io: a problem with an overridden key is blamed on its --set", "[io][errors][files]") {
  const std::string good = PTDSIM_TEST_DATA "/good/";
  std::string msg;
  try {
    io::load_scenario(good + "tiny.yaml", {io::parse_override("model.hidden=250")});
  } catch (const core::ConfigError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    msg = e.what();
  }
  // hidden 250 is not a multiple of 8 heads; ffn_hidden defaults to 4*250 = 1000, which tp 2 divides
  CHECK(msg == "--set:1:1: error: hidden 250 is not a multiple of heads 8\nmodel.hidden=250\n^");
}
