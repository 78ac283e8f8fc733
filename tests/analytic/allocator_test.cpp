#include <catch2/catch.hpp>

#include "ptdsim/analytic/allocator.hpp"
#include "ptdsim/analytic/memory.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;
using namespace ptdsim::analytic;

namespace {
constexpr double MiB = 1024.0 * 1024;
}

TEST_CASE("analytic: the caching allocator's blocks and segments", "[analytic][memory][allocator]") {
  // round_size: 512-byte multiples, 512 at least
  CHECK(allocator_block_bytes(1) == 512);
  CHECK(allocator_block_bytes(512) == 512);
  CHECK(allocator_block_bytes(513) == 1024);
  CHECK(allocator_block_bytes(3 * MiB + 1) == 3 * MiB + 512);
  // get_allocation_size: up to 1 MiB a 2 MiB small segment; to 10 MiB a 20 MiB one; from 10 MiB the
  // request in 2 MiB steps
  CHECK(allocator_segment_bytes(100) == 2 * MiB);
  CHECK(allocator_segment_bytes(MiB) == 2 * MiB);
  CHECK(allocator_segment_bytes(MiB + 1) == 20 * MiB);
  CHECK(allocator_segment_bytes(10 * MiB - 1) == 20 * MiB);
  CHECK(allocator_segment_bytes(10 * MiB) == 10 * MiB);
  CHECK(allocator_segment_bytes(10 * MiB + 1) == 12 * MiB);
  CHECK(allocator_segment_bytes(15 * MiB) == 16 * MiB);
}

TEST_CASE("analytic: the eager loss's buffers and the reserve, GPT-3 175B's last stage by hand",
          "[analytic][memory][allocator]") {
  auto s = testing::gpt3_1024();  // tp 8, pp 16, SP + selective, cross-entropy eager (the default)
  const auto st = stage_memory(s);
  const auto& l = st[15];
  // the fp32 logits 4 s b V / t = 4 * 2048 * 51200 / 8 = 52,428,800 (50 MiB), and the backward's two
  // gradients of their size: 104,857,600
  CHECK(l.logits == Approx(52428800.0).epsilon(1e-12));
  CHECK(l.loss_buffers == Approx(104857600.0).epsilon(1e-12));
  // what the step frees: 6 layers x 1 micro-batch x 34 sbh/t (106,954,752) + the loss's 157,286,400;
  // no buffers (Megatron's fp32 main gradients), no step copies
  const double churn = 6 * 106954752.0 + 157286400.0;
  CHECK(churn_bytes(l) == Approx(churn).epsilon(1e-12));
  // 50 MiB is a whole number of 2 MiB steps: no rounding
  CHECK(l.reserved == Approx(l.allocated() + 0.10 * churn).epsilon(1e-12));
  CHECK(l.device() == Approx(l.reserved + l.context + l.nccl).epsilon(1e-12));
  CHECK(l.reserved >= l.allocated());

  SECTION("a vocabulary of 50257: each of the three fp32 tensors rounded up to 2 MiB") {
    s.model.vocab = 50257;
    const auto v = stage_memory(s)[15];  // (a copy: the vector is a temporary)
    // 4 * 2048 * 50257 / 8 = 51,463,168 bytes, 24.54 steps of 2 MiB: a 25-step segment, 52,428,800;
    // 965,632 bytes more for each of the logits and their two gradients
    CHECK(v.logits == Approx(51463168.0).epsilon(1e-12));
    const double churn50257 = 6 * 106954752.0 + 3 * 51463168.0;
    CHECK(v.reserved ==
          Approx(v.allocated() + 3 * 965632.0 + 0.10 * churn50257).epsilon(1e-12));
    CHECK(v.required() == Approx(v.allocated() + 3 * 965632.0 + v.context + v.nccl).epsilon(1e-12));
  }
  SECTION("what must fit: the cache, which the allocator frees before a cudaMalloc fails, left out") {
    CHECK(l.cache == Approx(kAllocatorCachedShare * churn).epsilon(1e-12));
    CHECK(l.required() == Approx(l.allocated() + l.context + l.nccl).epsilon(1e-12));  // no rounding here
    // the reserve does not depend on the GPU's capacity
    s.hardware.gpu.memory_bytes = 10 * core::kGiB;
    CHECK(stage_memory(s)[15].reserved == l.reserved);
  }
  SECTION("a fused loss keeps only the logits") {
    s.training.fusion.cross_entropy = core::LossFusion::fused;
    CHECK(stage_memory(s)[15].loss_buffers == 0);
  }
  SECTION("PyTorch's loss_parallel: the saved output, the zeros, the exponentials and their sum") {
    s.training.fusion.cross_entropy = core::LossFusion::loss_parallel;
    const auto v = stage_memory(s)[15];
    // three fp32 tensors of the logits' size beside them: 3 * 52,428,800, each rounded as one
    CHECK(v.loss_buffers == Approx(157286400.0).epsilon(1e-12));
    CHECK(v.reserved == Approx(v.allocated() + 0.10 * (6 * 106954752.0 + 4 * 52428800.0)).epsilon(1e-12));
    // on one rank nothing is sharded: F.cross_entropy itself, as eager
    s.parallel.tp = 1;
    s.parallel.dp = 64;
    s.parallel.sequence_parallel = false;
    const auto one = stage_memory(s)[15];
    CHECK(one.loss_buffers == Approx(2 * one.logits).epsilon(1e-12));
    CHECK(one.logits == Approx(8 * 52428800.0).epsilon(1e-12));
  }
}
