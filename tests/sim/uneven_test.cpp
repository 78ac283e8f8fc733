#include <catch2/catch.hpp>

#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/params.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/split.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "../common/scenarios.hpp"

// An uneven pipeline worked by hand (issue "Model every published layout"): 10 layers over pp 4 do
// not divide; counting the embedding and the loss as layers, 12 / 4 = 3 per stage: 2, 3, 3, 2.
using namespace ptdsim;

namespace {

// GPT-style 10 layers, h 1024, 16 heads, f 4h, vocab 1024, seq 1024, micro-batch 1, m = 8; one GPU
// per stage on A100s with HBM time left out (every second is a GEMM at 0.8 x 312 TFLOP/s) and
// NVLink so fast that a send costs nothing: the times are FLOPs over the rate.
core::Scenario uneven() {
  core::Scenario s;
  s.name = "uneven";
  s.model = testing::gpt3_175b();
  s.model.layers = 10;
  s.model.hidden = 1024;
  s.model.heads = 16;
  s.model.kv_heads = 16;
  s.model.ffn_hidden = 4096;
  s.model.vocab = 1024;
  s.model.max_seq_len = 1024;
  s.hardware = testing::dgx_a100_80g();
  s.hardware.gpu.hbm_Bps = 0;
  s.hardware.intra.bandwidth_Bps = 1e30;
  s.hardware.intra.latency_s = 0;
  s.gpus = 4;
  s.parallel.pp = 4;
  s.parallel.dp = 1;
  s.training.seq_len = 1024;
  s.training.micro_batch = 1;
  s.training.global_batch = 8;
  s.training.recompute = core::Recompute::none;
  return s;
}

}  // namespace

TEST_CASE("sim: an uneven pipeline, worked by hand", "[sim][uneven]") {
  const auto s = uneven();
  REQUIRE(core::check(s).empty());
  const auto split = core::pipeline_split(s);
  CHECK(split.chosen);
  CHECK(split.layers == std::vector<int>{2, 3, 3, 2});

  const auto r = analytic::evaluate(s);
  REQUIRE(r.stages.size() == 4);
  const std::vector<int> layers{2, 3, 3, 2};
  // activations per layer and micro-batch, Korthikanti et al. with flash attention and no
  // recomputation: 34 sbh bytes (sbh = 1024 * 1 * 1024); 1F1B holds 4 - i micro-batches on stage i
  const double act = 34.0 * 1024 * 1024;
  // a layer's parameters: 12 h^2 + 13 h (four weight matrices, their biases, two layernorms)
  const double layer_params = 12.0 * 1024 * 1024 + 13 * 1024;
  for (int i = 0; i < 4; ++i) {
    INFO("stage " << i);
    CHECK(r.stages[i].layers == layers[i]);
    CHECK(r.stages[i].in_flight == 4 - i);
    CHECK(r.stages[i].activations == Approx(layers[i] * (4 - i) * act).epsilon(1e-12));
  }
  // stages 1 and 2 hold three layers' bf16 weights and nothing else
  CHECK(r.stages[1].weights == Approx(2 * 3 * layer_params).epsilon(1e-12));
  CHECK(r.stages[2].weights == Approx(2 * 3 * layer_params).epsilon(1e-12));

  // A layer's forward: 24 T h^2 + 4 T s h FLOPs = 28 * 1024^3 with T = s = h = 1024; the backward
  // twice that. The three-layer stages are the slowest (the last holds two layers and the small
  // logits GEMM, 2 T h V = 2 * 1024^3 a pass), 9 forward-layer times per micro-batch, and 1F1B
  // takes (m + p - 1) of them: 11 * 9 = 99.
  const double lf = 28.0 * 1024 * 1024 * 1024 / (0.8 * 312e12);
  CHECK(r.stage_forward_s == Approx(3 * lf).epsilon(1e-9));
  CHECK(r.stage_backward_s == Approx(6 * lf).epsilon(1e-9));
  CHECK(r.step_s == Approx(99 * lf).epsilon(1e-6));

  // The scheduler runs the real, unequal stages: the three-layer stages set the pace in the steady
  // state, the lighter ends fill and drain faster than the closed form's slowest-stage bubble.
  const auto sim = sim::simulate(s);
  CHECK(sim.step_s <= r.step_s * (1 + 1e-9));
  CHECK(sim.step_s >= 8 * 9 * lf);
  for (int i = 0; i < 4; ++i) CHECK(sim.stages[i].layers == layers[i]);
}
