#include <catch2/catch.hpp>

#include <set>
#include <tuple>

#include "ptdsim/calibrate/gemm_shapes.hpp"
#include "ptdsim/calibrate/measured_tables.hpp"
#include "ptdsim/core/layer_gemms.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;

TEST_CASE("calibrate: a layer's GEMMs under tensor parallelism are the measured tables' shapes",
          "[calibrate][gemm]") {
  // Llama 3 70B (hidden 8192, ffn 28672, 64 heads, 8 KV heads) at 4096 tokens: the rows of
  // calibrate/data/h100/gemm.csv for hidden 8192. tp 1: qkv (64 + 2*8) * 128 = 10240 outputs;
  // tp 8: 1280 = 10240 / 8, proj k = 8192 / 8 = 1024, fc1 3584, fc1_gated 7168, fc2 k 3584.
  const auto m = io::load_model(std::string(PTDSIM_SOURCE_DIR) + "/models/llama3-70b.yaml");
  auto tp1 = calibrate::layer_gemms(m, 1, 4096);
  REQUIRE(tp1.size() == 5);
  CHECK((tp1[0].op == "qkv" && tp1[0].m == 4096 && tp1[0].n == 10240 && tp1[0].k == 8192));
  CHECK((tp1[3].op == "fc1_gated" && tp1[3].n == 57344 && tp1[3].k == 8192));
  auto tp8 = calibrate::layer_gemms(m, 8, 4096);
  REQUIRE(tp8.size() == 5);
  CHECK((tp8[0].n == 1280 && tp8[0].k == 8192));
  CHECK((tp8[1].op == "proj" && tp8[1].n == 8192 && tp8[1].k == 1024));
  CHECK((tp8[2].op == "fc1" && tp8[2].n == 3584));
  CHECK((tp8[3].op == "fc1_gated" && tp8[3].n == 7168));
  CHECK((tp8[4].op == "fc2" && tp8[4].n == 8192 && tp8[4].k == 3584));
  CHECK(tp8[4].kv_heads == 8);
  SECTION("fewer KV heads than TP ranks: each rank keeps one copy, (heads/tp + 2) x head_dim") {
    auto m2 = m;
    m2.kv_heads = 4;  // tp 8: 64/8 + 2 = 10 heads of 128
    CHECK(calibrate::layer_gemms(m2, 8, 4096)[0].n == 1280);
    m2.kv_heads = 2;
    CHECK(calibrate::layer_gemms(m2, 8, 4096)[0].n == 1280);
  }
  SECTION("a tp that does not divide the heads gives nothing") { CHECK(calibrate::layer_gemms(m, 3, 4096).empty()); }
}

TEST_CASE("calibrate: the default shapes cover every shipped model, one row per (m, n, k)", "[calibrate][gemm]") {
  std::vector<core::ModelSpec> models;
  for (const char* name : {"gpt3-175b", "llama3-70b", "llama3-8b", "llama2-7b"})
    models.push_back(io::load_model(std::string(PTDSIM_SOURCE_DIR) + "/models/" + name + ".yaml"));
  const auto shapes = calibrate::gemm_shapes(models, {1, 2, 4, 8}, {1024, 4096});
  std::set<std::tuple<long long, long long, long long>> distinct;
  for (const auto& s : shapes) distinct.insert({s.m, s.n, s.k});
  CHECK(distinct.size() == shapes.size());
  // GPT-3 (GELU, 12288 wide): 4 ops; the three SwiGLU models: 5 ops; 4 tp x 2 token counts each,
  // shapes two models share counted once (Llama 2 7B and Llama 3 8B are both 4096 wide)
  CHECK(shapes.size() <= (4 + 5 * 3) * 4 * 2);
  CHECK(shapes.size() > 100);
  SECTION("--hidden lists: the classic shapes, qkv 3h/t, fc1 4h/t") {
    auto plain = calibrate::gemm_shapes({calibrate::plain_model(4096)}, {2}, {4096});
    REQUIRE(plain.size() == 4);
    CHECK((plain[0].n == 6144 && plain[1].k == 2048 && plain[2].n == 8192 && plain[3].k == 8192));
  }
}

TEST_CASE("calibrate: the kernel tables are written in the measured tables' columns", "[calibrate][gemm]") {
  calibrate::GemmRow r;
  r.precision = core::Precision::bf16;
  r.shape = calibrate::layer_gemms(calibrate::plain_model(2048), 1, 1024)[1];  // proj 1024 x 2048 x 2048
  r.time_s = 2.05216e-05;
  r.gpu = "NVIDIA H100 80GB HBM3";
  // 2 * 1024 * 2048 * 2048 / 2.05216e-05 s = 418.58 TFLOP/s (the H100 table's row)
  CHECK(calibrate::gemm_csv({r}) ==
        "precision,hidden,ffn,heads,kv_heads,tp,op,m,n,k,time_s,tflops,gpu\n"
        "bf16,2048,8192,16,16,1,proj,1024,2048,2048,2.05216e-05,418.58,NVIDIA H100 80GB HBM3\n");
  calibrate::ContentionRow c;
  c.m = c.n = c.k = 8192;
  c.blocks = 16;
  c.gemm_alone_s = 0.00160326;
  c.gemm_with_copy_s = 0.00189367;
  c.copy_alone_Bps = 453.506e9;
  c.copy_with_gemm_Bps = 406.703e9;
  c.gpu = "GPU, with a comma";
  // slowdown 0.00189367 / 0.00160326 = 1.18114 (the H100 table's row)
  CHECK(calibrate::contention_csv({c}) ==
        "m,n,k,blocks,gemm_alone_s,gemm_with_copy_s,slowdown,copy_alone_GBps,copy_with_gemm_GBps,gpu\n"
        "8192,8192,8192,16,0.00160326,0.00189367,1.18114,453.506,406.703,\"GPU, with a comma\"\n");
}

TEST_CASE("calibrate: the measured QKV shape is the one the compute model times", "[calibrate][gemm]") {
  // one statement of the widths (core/layer_gemms.hpp): with 2 KV heads under tp 8 both say
  // (64/8 + 2) x 128 = 1280; with 8, (8192 + 2 x 8 x 128) / 8 = 1280 too; with 16, 1536
  auto m = io::load_model(std::string(PTDSIM_SOURCE_DIR) + "/models/llama3-70b.yaml");
  for (int kv : {2, 8, 16}) {
    m.kv_heads = kv;
    const auto shapes = calibrate::layer_gemms(m, 8, 4096);
    REQUIRE(!shapes.empty());
    CHECK(shapes[0].op == "qkv");
    CHECK(shapes[0].n == core::qkv_width(m, 8));
  }
  CHECK(core::qkv_width(m, 8) == 1536);
}
