#include <catch2/catch.hpp>

#include <cmath>

#include "ptdsim/analytic/capacity.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/units.hpp"
#include "../common/scenarios.hpp"

using namespace ptdsim;

// GPT-3 175B on 1024 A100 80GB (tp 8, pp 16, dp 8, micro-batch 1, global batch 1536): stage 0 peaks.
// Its activations (16 micro-batches in flight) and the embedding's scale with the micro-batch, the
// rest (weights, gradients, optimizer states, buffers, context) does not, so micro-batch b needs
// total(1) + (b - 1) * (activations + embedding activations). The largest b dividing 1536/8 = 192
// under 80 GiB: hand-worked from the report's own numbers below (25.35 GiB at b = 1, 9.56 GiB of
// activations a micro-batch: b <= 6.7, so 6; 8 is the next divisor and does not fit).
TEST_CASE("analytic: the largest micro-batch that fits", "[analytic][capacity]") {
  const core::Scenario s = testing::gpt3_1024();
  REQUIRE(core::check(s).empty());
  const core::Report r = analytic::evaluate(s);
  const auto& st = r.stages[static_cast<std::size_t>(r.peak_stage)];
  const double per_mb = st.activations + st.embedding_activations;
  const double bound = 1 + (r.capacity_bytes - r.peak_bytes) / per_mb;
  int want = 0;
  for (int b = 1; b <= 192; ++b)
    if (192 % b == 0 && b <= bound) want = b;
  CHECK(want == 6);
  const analytic::Capacity c = analytic::capacity(s);
  CHECK(c.micro_batch == want);
  // and it is the boundary by the engine itself: 6 fits, 8 does not
  core::Scenario t = s;
  t.training.micro_batch = 6;
  CHECK(analytic::evaluate(t).fits);
  t.training.micro_batch = 8;
  CHECK_FALSE(analytic::evaluate(t).fits);
}

// GPT-3's learned positions stop at 2048 tokens (max_seq_len): no longer sequence is a valid
// scenario, whatever the memory. With positions widened to 64K the longest
// sequence (to 64K positions) is where memory runs out: it fits, 256 tokens more do not.
TEST_CASE("analytic: the longest sequence that fits", "[analytic][capacity]") {
  core::Scenario s = testing::gpt3_1024();
  CHECK(analytic::capacity(s).seq_len == 2048);
  s.model.max_seq_len = 65536;
  const int n = analytic::capacity(s).seq_len;
  REQUIRE(n > 2048);
  CHECK(n % 256 == 0);
  core::Scenario t = s;
  t.training.seq_len = n;
  CHECK((core::check(t).empty() && analytic::evaluate(t).fits));
  t.training.seq_len = n + 256;
  CHECK_FALSE((core::check(t).empty() && analytic::evaluate(t).fits));
}
