// CPU offload (docs/analytic.md "CPU offload"): one hand-worked case per mode on GPT-3 175B over
// 1024 A100s (tp 8, pp 16, dp 8; testing::gpt3_1024), with the DGX A100's host of hardware/FACTS.md
// section 7: PCIe Gen4 x16 at 32 GB/s per direction, 1 TB per node, 2 x 204.8 GB/s of CPU memory.
#include <catch2/catch.hpp>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/analytic/layer_costs.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "ptdsim/analytic/offload.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/check.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

namespace {

core::Scenario offloaded(core::Offload mode, int zero) {
  auto s = testing::gpt3_1024();
  s.hardware.host.link_Bps = 32e9;
  s.hardware.host.memory_bytes = 1024 * core::kGiB;
  s.hardware.host.memory_Bps = 409.6e9;
  s.parallel.zero = zero;
  s.training.offload = mode;
  return s;
}

// A first-stage GPU holds 1,463,270,400 parameters (tests/analytic/plan_test.cpp); its optimizer
// shard over dp 8 is 182,908,800 of them.
constexpr double kStage0 = 1463270400.0, kShard = kStage0 / 8;

}  // namespace

TEST_CASE("offload: ZeRO-Offload of the optimizer, Megatron's fp32 main gradients (ZeRO-1)", "[analytic][offload]") {
  const auto s = offloaded(core::Offload::optimizer, 1);
  REQUIRE(core::check(s).empty());
  CHECK(optimizer_shard_params(s, 0, pipeline_layers(s), layer_costs(s)) == Approx(kShard).epsilon(1e-12));
  const OffloadStep o = offload_step(s, kShard, kShard);
  // down: 182,908,800 fp32 gradients = 731,635,200 B at 32 GB/s = 22.86 ms
  CHECK(o.down_bytes == Approx(4 * kShard).epsilon(1e-12));
  CHECK(o.down_s == Approx(4 * kShard / 32e9).epsilon(1e-12));
  // up: the 16-bit weights, 365,817,600 B = 11.43 ms
  CHECK(o.up_s == Approx(2 * kShard / 32e9).epsilon(1e-12));
  // the CPU: 8 GPUs' shards, 1,463,270,400 parameters x 34 B / 409.6 GB/s = 121.5 ms
  CHECK(o.cpu_s == Approx(8 * kShard * 34 / 409.6e9).epsilon(1e-12));
  CHECK(o.gpu_params == 0);

  const auto plan = plan_step(s);
  const StagePlan& st = plan.stages[0];
  // the gradients go down beside the last backward, bucket by bucket: 6 buckets (plan_test), the
  // stage's backward (tens of ms a micro-batch) hides all but the last bucket's copy, 3.81 ms
  REQUIRE(st.dp_bucket_count == 6);
  CHECK(st.offload_down_s == Approx(o.down_s / 6).epsilon(1e-12));
  CHECK(st.offload_cpu_s == Approx(o.cpu_s).epsilon(1e-12));
  CHECK(st.offload_up_s == Approx(o.up_s).epsilon(1e-12));
  CHECK(st.offload_s == Approx(o.down_s / 6 + o.cpu_s + o.up_s).epsilon(1e-12));  // 136.7 ms
  CHECK(st.optimizer_s == 0);  // all of it on the CPU

  // memory: the optimizer states leave the GPU (12 B a parameter of the shard, 2.04 GiB); the fp32
  // main gradients stay (Megatron keeps its DDP buffer)
  const auto none = testing::gpt3_1024();
  const auto m0 = stage_memory(none)[0], m1 = stage_memory(s)[0];
  CHECK(m0.optimizer == Approx(12 * kShard).epsilon(1e-12));
  CHECK(m1.optimizer == 0);
  CHECK(m1.gradients == m0.gradients);
  CHECK(m1.weights == m0.weights);
  // the host: (12 + 4) B a parameter of the shard; the node's 8 GPUs (the busiest stage's shard each)
  CHECK(host_bytes(s, kShard) == Approx(16 * kShard).epsilon(1e-12));  // 2.73 GiB
  const core::Report r = evaluate(s);
  CHECK(r.host_bytes_per_node == Approx(8 * r.host_bytes_per_gpu).epsilon(1e-12));
  CHECK(r.host_bytes_per_gpu >= host_bytes(s, kShard));
  CHECK(r.host_fits);
  // the step: the closed form adds the phase; the critical path names it and still adds up
  CHECK(r.offload_s == Approx(st.offload_s).epsilon(1e-9));
  double parts = 0, offload_part = 0;
  for (const auto& p : r.critical_path) {
    parts += p.seconds;
    if (p.cause == core::PathCause::offload) offload_part += p.seconds;
  }
  CHECK(parts == Approx(r.step_s).epsilon(1e-9));
  CHECK(offload_part == Approx(r.offload_s).epsilon(1e-12));
  // against no offload: the GPU's 3.59 ms optimizer step traded for the 136.7 ms phase
  const core::Report base = evaluate(none);
  CHECK(r.step_s - base.step_s == Approx(r.offload_s - base.optimizer_s).epsilon(1e-6));
}

TEST_CASE("offload: Megatron-Core --optimizer-cpu-offload with --optimizer-offload-fraction 0.5", "[analytic][offload]") {
  auto s = offloaded(core::Offload::optimizer, 1);
  s.training.offload_fraction = 0.5;
  s.training.overlap.offload = false;  // HybridDeviceOptimizer copies the gradients in step()
  const OffloadStep o = offload_step(s, kShard, kShard);
  CHECK(o.down_s == Approx(0.5 * 4 * kShard / 32e9).epsilon(1e-12));  // 11.43 ms
  CHECK(o.up_s == Approx(0.5 * 2 * kShard / 32e9).epsilon(1e-12));    // 5.72 ms
  CHECK(o.cpu_s == Approx(0.5 * 8 * kShard * 34 / 409.6e9).epsilon(1e-12));  // 60.7 ms
  CHECK(o.gpu_params == Approx(0.5 * kShard).epsilon(1e-12));
  const auto plan = plan_step(s);
  const StagePlan& st = plan.stages[0];
  CHECK(st.offload_down_s == Approx(o.down_s).epsilon(1e-12));  // nothing hides it
  CHECK(st.offload_s == Approx(o.down_s + o.cpu_s + o.up_s).epsilon(1e-12));
  // the GPU steps the other half: 34 B x 91,454,400 / (0.85 x 2039 GB/s) = 1.79 ms
  CHECK(st.optimizer_s == Approx(34 * 0.5 * kShard / (2039e9 * 0.85)).epsilon(1e-12));
  const auto m0 = stage_memory(testing::gpt3_1024())[0], m1 = stage_memory(s)[0];
  CHECK(m1.optimizer == Approx(0.5 * m0.optimizer).epsilon(1e-12));
  CHECK(host_bytes(s, kShard) == Approx(0.5 * 16 * kShard).epsilon(1e-12));
}

TEST_CASE("offload: DeepSpeed ZeRO-2 offload holds its 16-bit gradient partition on the host", "[analytic][offload]") {
  auto s = offloaded(core::Offload::optimizer, 2);
  s.training.main_grads = core::MainGrads::bit16;
  const OffloadStep o = offload_step(s, kShard, kShard);
  CHECK(o.down_s == Approx(2 * kShard / 32e9).epsilon(1e-12));  // 16-bit gradients: 11.43 ms
  const auto m = stage_memory(s)[0];
  CHECK(m.gradients == 0);     // the partition lives in pinned host memory
  CHECK(m.step_buffers == 0);  // the fp32 copy is made on the host
  CHECK(m.optimizer == 0);
}

TEST_CASE("offload: ZeRO-Infinity offloads the parameter shard too (ZeRO-3)", "[analytic][offload]") {
  const auto s = offloaded(core::Offload::optimizer_params, 3);
  REQUIRE(core::check(s).empty());
  auto plain = s;
  plain.training.offload = core::Offload::none;
  const StepWork w = step_work(s), w0 = step_work(plain);
  const ChunkWork& c = w.chunks[1], &c0 = w0.chunks[1];  // a middle stage: 6 layers, a unit each
  REQUIRE(c.zero3_units == 6);
  // each unit's 16-bit shard comes up before its all-gather: unit / 8 parameters x 2 B at 32 GB/s
  const double unit_shard = c.zero3_unit_params / 8;
  CHECK(c.zero3_gather_s - c0.zero3_gather_s == Approx(2 * unit_shard / 32e9).epsilon(1e-9));
  // and each reduce-scattered gradient shard goes down (fp32, sharding.reduce_dtype's default)
  CHECK(c.zero3_reduce_s - c0.zero3_reduce_s == Approx(4 * unit_shard / 32e9).epsilon(1e-9));
  // the step's end: no gradient left to copy, no parameters to send up; the CPU step on the shard
  const double P = optimizer_shard_params(s, 1, pipeline_layers(s), layer_costs(s));
  CHECK(w.stages[1].offload_down_s == 0);
  CHECK(w.stages[1].offload_up_s == 0);
  CHECK(w.stages[1].offload_cpu_s == Approx(8 * P * 34 / 409.6e9).epsilon(1e-12));
  // memory: no weights on the GPU beyond the gathered units; the host holds 12 + 4 + 2 B a parameter
  CHECK(stage_memory(s)[1].weights == 0);
  CHECK(stage_memory(s)[1].buffers == stage_memory(plain)[1].buffers);
  CHECK(host_bytes(s, P) == Approx(18 * P).epsilon(1e-12));
}

TEST_CASE("offload: the checks and the host's limit", "[analytic][offload]") {
  auto s = offloaded(core::Offload::optimizer, 0);
  auto problems = core::check(s);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == "training.offload");
  s = offloaded(core::Offload::optimizer_params, 1);
  problems = core::check(s);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].message.find("zero 3") != std::string::npos);
  s = offloaded(core::Offload::optimizer, 1);
  s.hardware.host = {};
  REQUIRE(core::check(s).size() == 1);
  // a host of 8 GiB: 8 x 2.7 GiB does not fit, and the layout does not either
  s = offloaded(core::Offload::optimizer, 1);
  s.hardware.host.memory_bytes = 8 * core::kGiB;
  const core::Report r = evaluate(s);
  CHECK_FALSE(r.host_fits);
  CHECK_FALSE(r.fits);
  CHECK(r.peak_bytes <= r.capacity_bytes);
}
