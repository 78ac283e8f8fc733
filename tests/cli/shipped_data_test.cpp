// Every shipped input file loads through the real loaders (unknown keys, types, ranges and the
// cross-field checks all apply), and the validation dataset keeps all 68 published records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "ptdsim/analytic/fabric.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/load.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> yaml_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(PTDSIM_SOURCE_DIR) / dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string dataset_path() {
  return (fs::path(PTDSIM_SOURCE_DIR) / "scenarios" / "published" / "dataset.yaml").string();
}

}  // namespace

TEST_CASE("shipped data: every model file loads", "[data]") {
  const auto files = yaml_files("models");
  // 12 required shapes (gpt3-175b ... bloom-176b, docs/data.md)
  REQUIRE(files.size() >= 12);
  for (const auto& f : files) {
    INFO(f);
    ptdsim::core::ModelSpec m;
    REQUIRE_NOTHROW(m = ptdsim::io::load_model(f));
    CHECK(m.layers > 0);
    CHECK(m.hidden % m.heads == 0);
  }
}

TEST_CASE("shipped data: model shapes match their papers", "[data]") {
  const std::string dir = std::string(PTDSIM_SOURCE_DIR) + "/models/";
  // Brown et al. 2020 Table 2.1
  auto gpt3 = ptdsim::io::load_model(dir + "gpt3-175b.yaml");
  CHECK(gpt3.layers == 96);
  CHECK(gpt3.hidden == 12288);
  CHECK(gpt3.ffn_hidden == 4 * 12288);  // default 4h
  // Llama 3 Herd Table 3: 126 layers, 16384, 128 heads, 8 KV heads, FFN 53248
  auto l405 = ptdsim::io::load_model(dir + "llama3-405b.yaml");
  CHECK(l405.layers == 126);
  CHECK(l405.kv_heads == 8);
  CHECK(l405.ffn_hidden == 53248);
  CHECK(l405.mlp == ptdsim::core::Mlp::swiglu);
  CHECK_FALSE(l405.bias);
  // Mixtral Table 1: 8 experts, top-2, every layer
  auto mix = ptdsim::io::load_model(dir + "mixtral-8x7b.yaml");
  REQUIRE(mix.moe.has_value());
  CHECK(mix.moe->experts == 8);
  CHECK(mix.moe->top_k == 2);
  // BLOOM Table 3: 70 layers, 112 heads, vocab 250880, tied, LayerNorm with bias
  auto bloom = ptdsim::io::load_model(dir + "bloom-176b.yaml");
  CHECK(bloom.layers == 70);
  CHECK(bloom.heads == 112);
  CHECK(bloom.vocab == 250880);
  CHECK(bloom.tied_embeddings);
  CHECK(bloom.bias);
}

TEST_CASE("shipped data: every hardware file loads", "[data]") {
  const auto files = yaml_files("hardware");
  // interface.md fixes six names
  for (const char* name : {"dgx-a100-40g", "dgx-a100-80g", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72",
                           "gb300-nvl72"}) {
    INFO(name);
    CHECK(fs::exists(fs::path(PTDSIM_SOURCE_DIR) / "hardware" / (std::string(name) + ".yaml")));
  }
  for (const auto& f : files) {
    INFO(f);
    ptdsim::core::HardwareSpec hw;
    REQUIRE_NOTHROW(hw = ptdsim::io::load_hardware(f));
    CHECK(hw.gpu.peak_flops[ptdsim::core::index(ptdsim::core::Precision::bf16)] > 0);
    const double eff = hw.gpu.scalar_matmul_efficiency(ptdsim::core::Precision::bf16);
    CHECK(eff > 0.5);
    CHECK(eff < 1.0);
    CHECK(hw.gpu.sms > 0);
    CHECK(hw.intra.bandwidth_Bps > hw.network.bandwidth_Bps);
  }
}

TEST_CASE("shipped data: the Grand Teton and H800 files carry the H100 tables to their GPUs", "[data]") {
  const std::string dir = std::string(PTDSIM_SOURCE_DIR) + "/hardware/";
  const auto h100 = ptdsim::io::load_hardware(dir + "dgx-h100.yaml");
  const auto gt = ptdsim::io::load_hardware(dir + "grand-teton-h100.yaml");
  const auto h800 = ptdsim::io::load_hardware(dir + "hgx-h800.yaml");
  // torchtitan's Grand Teton: 96 GB HBM2e at 2.4 TB/s, 500 W; the tables' H100 had 3.35 TB/s
  CHECK(gt.gpu.memory_bytes == Approx(96.0 * 1024 * 1024 * 1024));
  CHECK(gt.gpu.hbm_Bps == Approx(2400e9));
  CHECK(gt.gpu.tdp_w == 500);
  CHECK(gt.gpu.tables_hbm_scale() == Approx(2400.0 / 3350));
  CHECK(gt.gpu.sustained_clock == Approx(0.92));  // between the NVL's 835/989 and 1 (hardware/FACTS.md)
  REQUIRE(gt.gpu.kernels != nullptr);
  CHECK(gt.gpu.kernels->gemm_rows.size() == h100.gpu.kernels->gemm_rows.size());
  // H800: the H100 SXM5 with NVLink at 400 GB/s both ways, DeepSeek-V3's 160 GB/s achieved
  CHECK(h800.intra.bandwidth_Bps == Approx(200e9));
  CHECK(h800.intra.bandwidth_Bps * h800.intra.efficiency == Approx(160e9));
  CHECK(h800.gpu.tables_hbm_scale() == 1.0);
  CHECK(h800.gpu.sustained_clock == 1.0);
  CHECK(h800.gpu.layer_overhead_s == h100.gpu.layer_overhead_s);
  CHECK(h800.gpu.memory_bound_factor == h100.gpu.memory_bound_factor);
}

TEST_CASE("shipped data: hardware figures are converted to SI", "[data]") {
  // dgx-h100: 80 GiB, 3350 GB/s, 989 TFLOP/s bf16, NVLink 450 GB/s, NDR 50 GB/s, 20 us / 50 us
  auto hw = ptdsim::io::load_hardware(std::string(PTDSIM_SOURCE_DIR) + "/hardware/dgx-h100.yaml");
  CHECK(hw.gpu.memory_bytes == Approx(80.0 * 1024 * 1024 * 1024).epsilon(1e-12));
  CHECK(hw.gpu.hbm_Bps == Approx(3350e9).epsilon(1e-12));
  CHECK(hw.gpu.peak_flops[ptdsim::core::index(ptdsim::core::Precision::bf16)] == Approx(989e12).epsilon(1e-12));
  CHECK(hw.gpu.peak_flops[ptdsim::core::index(ptdsim::core::Precision::fp8)] == Approx(1979e12).epsilon(1e-12));
  CHECK(hw.intra.bandwidth_Bps == Approx(450e9).epsilon(1e-12));
  CHECK(hw.network.bandwidth_Bps == Approx(50e9).epsilon(1e-12));
  CHECK(hw.intra.latency_s == Approx(20e-6).epsilon(1e-12));
  CHECK(hw.network.latency_s == Approx(50e-6).epsilon(1e-12));
  CHECK(hw.gpus_per_node == 8);
  auto nvl = ptdsim::io::load_hardware(std::string(PTDSIM_SOURCE_DIR) + "/hardware/gb200-nvl72.yaml");
  CHECK(nvl.gpus_per_node == 72);
}

TEST_CASE("shipped data: the Blackwell files carry their datasheet peaks and NVLink domains", "[data]") {
  using ptdsim::core::index;
  using ptdsim::core::Precision;
  const std::string dir = std::string(PTDSIM_SOURCE_DIR) + "/hardware/";
  // B200: 2,250 BF16 / 4,500 FP8 / 9,000 FP4 dense (FACTS.md 1), an 8-GPU NVLink domain
  auto b200 = ptdsim::io::load_hardware(dir + "dgx-b200.yaml");
  CHECK(b200.gpu.peak_flops[index(Precision::bf16)] == Approx(2250e12).epsilon(1e-12));
  CHECK(b200.gpu.peak_flops[index(Precision::fp8)] == Approx(4500e12).epsilon(1e-12));
  CHECK(b200.gpu.peak_flops[index(Precision::fp4)] == Approx(9000e12).epsilon(1e-12));
  CHECK(b200.gpus_per_node == 8);
  // GB200 NVL72: 1,440 PFLOPS FP4 per rack with sparsity / 72 GPUs / 2 = 10,000 dense
  auto gb200 = ptdsim::io::load_hardware(dir + "gb200-nvl72.yaml");
  CHECK(gb200.gpu.peak_flops[index(Precision::fp4)] == Approx(10000e12).epsilon(1e-12));
  // GB300 NVL72: 15 PFLOPS dense NVFP4, 5,000 FP8, 2,500 BF16; 8 TB/s; 72 GPUs on NVLink5 at
  // 900 GB/s per direction; a ConnectX-8 800 Gb/s NIC (100 GB/s) per GPU
  auto gb300 = ptdsim::io::load_hardware(dir + "gb300-nvl72.yaml");
  CHECK(gb300.gpu.peak_flops[index(Precision::fp4)] == Approx(15000e12).epsilon(1e-12));
  CHECK(gb300.gpu.peak_flops[index(Precision::fp8)] == Approx(5000e12).epsilon(1e-12));
  CHECK(gb300.gpu.peak_flops[index(Precision::bf16)] == Approx(2500e12).epsilon(1e-12));
  CHECK(gb300.gpu.hbm_Bps == Approx(8000e9).epsilon(1e-12));
  CHECK(gb300.gpus_per_node == 72);
  CHECK(gb300.intra.bandwidth_Bps == Approx(900e9).epsilon(1e-12));
  CHECK(gb300.network.bandwidth_Bps == Approx(100e9).epsilon(1e-12));
  // DGX B300: 8 GPUs on NVLink5 (1.8 TB/s both directions), 8 x ConnectX-8 800 Gb/s; B300 SXM 2,250
  // BF16 and 4,500 FP8 dense (FACTS.md HF2a), 15 PFLOPS dense NVFP4; efficiency
  // 1769.0/2250 x 0.805 = 0.633 (bf16, provisional)
  auto b300 = ptdsim::io::load_hardware(dir + "dgx-b300.yaml");
  CHECK(b300.gpu.peak_flops[index(Precision::bf16)] == Approx(2250e12).epsilon(1e-12));
  CHECK(b300.gpu.peak_flops[index(Precision::fp8)] == Approx(4500e12).epsilon(1e-12));
  CHECK(b300.gpu.peak_flops[index(Precision::fp4)] == Approx(15000e12).epsilon(1e-12));
  CHECK(b300.gpus_per_node == 8);
  CHECK(b300.intra.bandwidth_Bps == Approx(900e9).epsilon(1e-12));
  CHECK(b300.network.bandwidth_Bps == Approx(100e9).epsilon(1e-12));
  CHECK(b300.gpu.scalar_matmul_efficiency(Precision::bf16) == Approx(1769.0 / 2250 * 0.805).epsilon(1e-3));
  // fp8 is fitted on the MoE records (tests/validation/guard_test.cpp checks it against the fit)
  CHECK(b300.gpu.scalar_matmul_efficiency(Precision::fp8) == Approx(0.627).epsilon(1e-3));
  // Hopper has no FP4 tensor cores: no peak, so the precision is unsupported there
  auto h200 = ptdsim::io::load_hardware(dir + "dgx-h200.yaml");
  CHECK(h200.gpu.peak_flops[index(Precision::fp4)] == 0);
}

TEST_CASE("shipped data: no shipped file names a path outside the repository", "[data]") {
  // the dataset, its converter and the hardware files once cited a build machine's shared folder
  // (the pattern is assembled so that this file does not match `grep -rn` for it)
  const std::string outside = std::string("/") + "work" + "/";
  for (const char* dir : {"hardware", "scenarios", "models", "docs", "src", "include", "calibrate"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(PTDSIM_SOURCE_DIR) / dir)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      INFO(e.path().string());
      CHECK(ss.str().find(outside) == std::string::npos);
    }
  }
}

TEST_CASE("shipped data: every scenario loads and passes the cross-field checks", "[data]") {
  const auto files = yaml_files("scenarios");
  REQUIRE(files.size() >= 9);  // default + at least eight published runs
  for (const auto& f : files) {
    INFO(f);
    ptdsim::core::Scenario s;
    REQUIRE_NOTHROW(s = ptdsim::io::load_scenario(f));
    CHECK(s.parallel.tp * s.parallel.cp * s.parallel.pp * s.parallel.dp == s.gpus);
  }
}

TEST_CASE("shipped data: the default scenario is the README's", "[data]") {
  auto s = ptdsim::io::load_scenario(std::string(PTDSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  CHECK(s.gpus == 1024);
  CHECK(s.parallel.tp == 8);
  CHECK(s.parallel.pp == 16);
  CHECK(s.parallel.dp == 8);
  CHECK(s.parallel.zero == 1);
  CHECK(s.parallel.sequence_parallel);
  CHECK(s.training.recompute == ptdsim::core::Recompute::selective);
  // 1536 / (1 * 8) = 192 micro-batches
  CHECK(s.num_microbatches() == 192);
}

TEST_CASE("shipped data: the validation dataset keeps all 80 published records", "[data]") {
  std::vector<ptdsim::io::Record> records;
  REQUIRE_NOTHROW(records = ptdsim::io::load_dataset(dataset_path()));
  REQUIRE(records.size() == 80);

  int modelled = 0, fit = 0, holdout = 0;
  std::set<std::string> names;
  for (const auto& r : records) {
    INFO(r.name);
    names.insert(r.name);
    CHECK_FALSE(r.source.empty());
    if (r.scenario) {
      ++modelled;
      CHECK(r.not_modelled.empty());
      CHECK_FALSE(r.scenario->training.framework.empty());  // every modelled record names its framework
      (r.split == "fit" ? fit : holdout)++;
      CHECK((r.measured.step_s || r.measured.tflops_per_gpu || r.measured.peak_memory_bytes));
    } else {
      CHECK_FALSE(r.not_modelled.empty());
    }
  }
  CHECK(names.size() == 80);
  // docs/data.md: 69 modelled, 11 not modelled, split 35/34
  CHECK(modelled == 69);
  CHECK(fit == 35);
  CHECK(holdout == 34);
}

TEST_CASE("shipped data: a dataset record carries the published figures", "[data]") {
  auto records = ptdsim::io::load_dataset(dataset_path());
  auto find = [&](const std::string& name) -> const ptdsim::io::Record& {
    auto it = std::find_if(records.begin(), records.end(), [&](const auto& r) { return r.name == name; });
    REQUIRE(it != records.end());
    return *it;
  };
  // Korthikanti et al. 2022 Table 5: 175B, sequence parallel + selective recompute, 13.75 s
  const auto& k = find("korthikanti2022_t5_175B_seqsel");
  REQUIRE(k.scenario.has_value());
  CHECK(*k.measured.step_s == Approx(13.75).epsilon(1e-12));
  CHECK(k.flops_convention == "megatron72");
  CHECK(k.scenario->parallel.vpp == 3);
  CHECK(k.scenario->parallel.sequence_parallel);
  CHECK(k.scenario->training.recompute == ptdsim::core::Recompute::selective);
  // BLOOM production run: stage_layers 5 + 10*6 + 5 = 70, 104.7 s, ZeRO-1
  const auto& b = find("bloom176b_final_384gpu");
  REQUIRE(b.scenario.has_value());
  CHECK(b.scenario->parallel.stage_layers.size() == 12);
  CHECK(*b.measured.step_s == Approx(104.7).epsilon(1e-12));
  CHECK(b.scenario->parallel.zero == 1);
  // BLOOM best-fp16 20B: peak 67 GiB
  const auto& m = find("bloom_prequel_best_fp16_20B_8gpu");
  REQUIRE(m.measured.peak_memory_bytes.has_value());
  CHECK(*m.measured.peak_memory_bytes == Approx(67.0 * 1024 * 1024 * 1024).epsilon(1e-12));
  // NeMo Llama 3 70B: FP8, CP 2, interleaved with 5 virtual stages
  const auto& n = find("nemo2407_Llama3_70B_64gpu");
  REQUIRE(n.scenario.has_value());
  CHECK(n.scenario->training.precision == ptdsim::core::Precision::fp8);
  CHECK(n.scenario->parallel.cp == 2);
  CHECK(n.scenario->parallel.vpp == 5);
  CHECK(n.flops_convention == "model");
  // ... run by NeMo 24.07, whose performance recipes overlap the TP communication (unstated in the table)
  CHECK(n.scenario->training.framework == "nemo-24.07");
  CHECK(n.scenario->training.overlap.tp);
  // Narayanan Table 2: DeepSpeed ZeRO-3 without model parallelism, 529.6B on 640 GPUs, 138 TFLOP/s
  const auto& z = find("narayanan2021_t2_zero3_529.6B_640gpu");
  REQUIRE(z.scenario.has_value());
  CHECK(z.scenario->parallel.zero == 3);
  CHECK(z.scenario->parallel.dp == 640);
  CHECK(z.scenario->training.framework == "deepspeed-0.3");  // the ZeRO-3 of spring 2021
  CHECK(z.scenario->parallel.sharding.sync);
  CHECK(*z.measured.tflops_per_gpu == Approx(138).epsilon(1e-12));
  // llm-foundry MPT-7B on 8 A100 at 64K context: step = 16 x 65536 tokens / 8108 tokens/s = 129.3261 s
  const auto& f = find("llmfoundry_mpt7b_a100_80gb_amp_bf16_seq65536_8gpu");
  REQUIRE(f.scenario.has_value());
  CHECK(f.scenario->parallel.zero == 3);
  CHECK(f.scenario->training.framework == "llm-foundry");
  CHECK(*f.measured.step_s == Approx(129.3261).epsilon(1e-9));
}

TEST_CASE("shipped data: each fabric reaches the nodes its reference architecture says", "[data][fabric]") {
  const std::string dir = std::string(PTDSIM_SOURCE_DIR) + "/hardware/";
  // hardware/FACTS.md section 8: the DGX SuperPOD's 32-node scalable unit under a leaf, 4 SUs under
  // a spine group (the 4-SU, 127-node RA), 64 x 128 nodes under the core
  const auto h100 = ptdsim::analytic::tier_reach(ptdsim::io::load_hardware(dir + "dgx-h100.yaml"));
  CHECK(h100[0] == 32);
  CHECK(h100[1] == 128);
  CHECK(h100[2] == 8192);
  // DeepSeek-V3's 8 planes of two tiers: 64 x 32 = 2,048 nodes, the "16,384 GPUs" of the paper
  const auto h800 = ptdsim::analytic::tier_reach(ptdsim::io::load_hardware(dir + "hgx-h800.yaml"));
  CHECK(h800[0] == 32);
  CHECK(h800[1] == 2048);
  // the GB200 SuperPOD's SU: 8 NVL72 racks
  CHECK(ptdsim::analytic::tier_reach(ptdsim::io::load_hardware(dir + "gb200-nvl72.yaml"))[0] == 8);
}

TEST_CASE("shipped data: the cloud instances carry their providers' NICs and fabrics", "[data][fabric]") {
  const std::string dir = std::string(PTDSIM_SOURCE_DIR) + "/hardware/";
  // hardware/FACTS.md HF8.9: p5.48xlarge, 32 EFA cards x 100 Gb/s = 3,200 Gb/s a node; over 8 H100s
  // 400 Gb/s = 50 GB/s per GPU; AWS documents no rails and a nonblocking network: one tier, every node
  const auto p5 = ptdsim::io::load_hardware(dir + "aws-p5.yaml");
  CHECK(p5.gpus_per_node == 8);
  CHECK(p5.nics_per_node() == 32);
  CHECK(p5.network.bandwidth_Bps * p5.gpus_per_node * 8 == Approx(3200e9).epsilon(1e-12));
  CHECK(p5.topology == ptdsim::core::Topology::fat_tree);
  CHECK(ptdsim::analytic::tier_count(p5) == 1);
  CHECK(ptdsim::analytic::tier_reach(p5)[0] == ptdsim::analytic::kUnboundedReach);
  // HF8.10: a3-megagpu-8g, 8 GPU NICs x 200 Gb/s (GPUDirect-TCPXO) = 25 GB/s per GPU, NIC k on VPC k
  const auto a3 = ptdsim::io::load_hardware(dir + "gcp-a3-mega.yaml");
  CHECK(a3.gpus_per_node == 8);
  CHECK(a3.nics_per_node() == 8);
  CHECK(a3.network.bandwidth_Bps * 8 == Approx(200e9).epsilon(1e-12));
  CHECK(a3.topology == ptdsim::core::Topology::rail_optimized);
  // the same H100 SXM5 as the DGX H100: its peaks and kernel tables
  const auto h100 = ptdsim::io::load_hardware(dir + "dgx-h100.yaml");
  for (const auto* hw : {&p5, &a3}) {
    CHECK(hw->gpu.peak_flops == h100.gpu.peak_flops);
    REQUIRE(hw->gpu.kernels != nullptr);
    CHECK(hw->gpu.kernels->gemm_rows.size() == h100.gpu.kernels->gemm_rows.size());
    CHECK(hw->intra.bandwidth_Bps == h100.intra.bandwidth_Bps);
  }
}
