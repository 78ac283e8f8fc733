#include <catch2/catch.hpp>

#include "ptdsim/core/framework.hpp"
#include "ptdsim/core/split.hpp"

// Which layouts a named framework can be told to run (core/framework_layout.cpp): Megatron-LM's
// --num-layers-per-virtual-pipeline-stage and its pp rule for the interleaved schedule.
using namespace ptdsim;

namespace {

core::Scenario layout(const char* framework, int layers, int pp, int vpp, bool p2p_overlap = true) {
  core::Scenario s;
  s.model.layers = layers;
  s.parallel.pp = pp;
  s.parallel.vpp = vpp;
  s.training.framework = framework;
  s.training.overlap.pp = p2p_overlap;
  return s;
}

std::string problem(const core::Scenario& s) { return core::framework_layout_problem(s, core::pipeline_split(s)); }
bool expresses(const core::Scenario& s) { return core::framework_expresses(s, core::pipeline_split(s)); }

}  // namespace

TEST_CASE("core: layouts a framework cannot express", "[core][framework]") {
  SECTION("Llama 3 70B, 80 layers, pp 4 vpp 5: 80 / 4 / 5 = 4 layers per virtual stage, expressible") {
    const auto s = layout("megatron-core-0.8", 80, 4, 5);
    CHECK(expresses(s));
    CHECK(problem(s).empty());
  }
  SECTION("80 layers, pp 2 vpp 27: 54 virtual stages of 1 or 2 layers, not expressible") {
    // 80 = 54 + 26: no even split; ptdsim's own split gives 26 middle virtual stages a second layer
    const auto s = layout("megatron-core-0.8", 80, 2, 27);
    CHECK(core::pipeline_split(s).method == core::SplitMethod::balanced);
    CHECK_FALSE(expresses(s));
    CHECK(problem(s).find("--num-layers-per-virtual-pipeline-stage") != std::string::npos);
  }
  SECTION("30 layers, pp 4 vpp 2: the embedding and the loss take a slot each, not expressible") {
    // 30 / 8 is not whole, (30 + 2) / 8 = 4 is: 3, 4 x 6, 3 layers, which one per-stage count cannot name
    const auto s = layout("nemo-24.07", 30, 4, 2);
    CHECK(core::pipeline_split(s).method == core::SplitMethod::embedding_loss);
    CHECK_FALSE(expresses(s));
    CHECK(expresses(layout("nemo-24.07", 32, 4, 2)));  // 32 / 8 = 4 each
  }
  SECTION("pp 2 interleaved: Megatron-Core needs the p2p overlap, Megatron-LM 2021 pp > 2") {
    CHECK(expresses(layout("megatron-core-0.8", 8, 2, 2, true)));
    const auto off = layout("megatron-core-0.8-distopt", 8, 2, 2, false);
    CHECK_FALSE(expresses(off));
    CHECK(problem(off).find("training.overlap.pp") != std::string::npos);
    CHECK_FALSE(expresses(layout("megatron-lm-2021", 8, 2, 2, true)));
    CHECK(expresses(layout("megatron-lm-2021", 12, 3, 2, false)));
  }
  SECTION("schedules: Megatron runs 1f1b and interleaved, DeepSpeed's pipeline 1f1b with ZeRO 0 or 1") {
    auto s = layout("megatron-core-0.8", 80, 4, 1);
    s.parallel.schedule = core::Schedule::zb_h1;
    CHECK_FALSE(expresses(s));
    CHECK(problem(s) == "megatron-core-0.8 has no zb-h1 schedule (1f1b and interleaved only)");
    s.parallel.schedule = core::Schedule::gpipe;
    CHECK_FALSE(expresses(s));
    s.parallel.schedule = core::Schedule::one_f_one_b;
    CHECK(expresses(s));
    auto d = layout("deepspeed", 80, 4, 1);
    d.parallel.schedule = core::Schedule::one_f_one_b;
    d.parallel.zero = 1;
    CHECK(expresses(d));
    d.parallel.zero = 2;
    CHECK(problem(d) == "deepspeed runs no ZeRO stage 2 with pipeline parallelism (ZeRO 0 or 1)");
    d.parallel.pp = 1;  // no pipeline engine: every ZeRO stage
    CHECK(expresses(d));
    d.parallel.pp = 4;
    d.parallel.zero = 0;
    d.parallel.schedule = core::Schedule::zb_h1;
    CHECK(problem(d) == "deepspeed has no zb-h1 schedule (1f1b only)");
  }
  SECTION("no limit without vpp, without a framework, or for a framework with uneven splits") {
    CHECK(expresses(layout("megatron-core-0.8", 80, 2, 1)));
    CHECK(expresses(layout("", 80, 2, 27)));
    CHECK(expresses(layout("megatron-fsdp", 80, 2, 27)));
    CHECK(expresses(layout("deepspeed", 80, 2, 27)));
  }
}

TEST_CASE("core: the recompute modes a framework runs", "[core][framework]") {
  using R = core::Recompute;
  // torchtitan: activation_checkpoint none, full or selective "op" (or every n-th layer); no
  // attention-core-only recompute
  auto s = layout("torchtitan", 32, 1, 1);
  s.training.recompute = R::selective;
  CHECK_FALSE(expresses(s));
  CHECK(problem(s) == "torchtitan has no recompute selective (it runs none, full, op)");
  for (R r : {R::none, R::op, R::full}) {
    s.training.recompute = r;
    CHECK(expresses(s));
  }
  CHECK(core::framework_recompute_modes("torchtitan-compile") == std::vector<R>{R::none, R::op, R::full});
  // Megatron's rows have no torchtitan policy; PyTorch FSDP's and no framework may run it
  auto m = layout("megatron-core-0.8", 32, 1, 1);
  m.training.recompute = R::op;
  CHECK(problem(m) == "megatron-core-0.8 has no recompute op (it runs none, selective, full)");
  CHECK(core::framework_runs_recompute("pytorch-fsdp2", R::op));
  CHECK(core::framework_runs_recompute("", R::op));
  CHECK(core::framework_recompute_modes("") == std::vector<R>{R::none, R::selective, R::full});
}
