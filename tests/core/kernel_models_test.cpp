#include <catch2/catch.hpp>

#include <cmath>

#include "ptdsim/core/hardware.hpp"

using namespace ptdsim;

namespace {
core::GemmModel model(double knee) {
  core::GemmModel m;
  m.rate_flops = 800e12;
  m.epilogue_Bps = 4e12;
  m.floor_s = 20e-6;
  m.knee = knee;
  m.tail = 0.25;
  m.tile_m = m.tile_n = 128;
  return m;
}
}  // namespace

TEST_CASE("core: the GEMM model counts waves of output tiles over the SMs", "[core][kernels]") {
  const auto m = model(1);
  // 4096 x 4224: 32 x 33 = 1056 tiles = 8 full waves of 132
  CHECK(m.waves(132, 4096, 4224) == Approx(8.0).epsilon(1e-15));
  // 1024 x 2048: 8 x 16 = 128 tiles, one partial wave: 0.25 + 0.75 * 128/132 = 0.977273
  CHECK(m.waves(132, 1024, 2048) == Approx(0.25 + 0.75 * 128 / 132.0).epsilon(1e-15));
  // a ragged edge counts a whole tile: 1000 x 2000 is still 8 x 16 tiles
  CHECK(m.waves(132, 1000, 2000) == m.waves(132, 1024, 2048));
  // 133 tiles: one full wave and a partial one of 1 tile: 1 + 0.25 + 0.75/132
  CHECK(m.waves(132, 128 * 133, 128) == Approx(1.25 + 0.75 / 132).epsilon(1e-15));
}

TEST_CASE("core: the GEMM model's time is a smooth maximum of its floor and its work", "[core][kernels]") {
  // per output: 2k/R + 2 bytes/B_e = 8192/8e14 + 2/4e12 = 1.074e-11 s (k = 4096)
  // work of 1024 x 2048: 0.977273 waves x 132 x 16384 outputs x 1.074e-11 s = 22.699 us
  SECTION("knee 1: the floor adds") {
    CHECK(model(1).time(132, 1024, 2048, 4096) == Approx(20e-6 + 22.699376640e-6).epsilon(1e-9));
  }
  SECTION("knee 2: the root of the sum of squares, 30.253 us") {
    CHECK(model(2).time(132, 1024, 2048, 4096) == Approx(std::sqrt(20e-6 * 20e-6 + 22.699376640e-6 * 22.699376640e-6)).epsilon(1e-9));
  }
  SECTION("a sharp knee is the maximum, without overflow or underflow of the powers") {
    CHECK(model(400).time(132, 1024, 2048, 4096) == Approx(22.699376640e-6).epsilon(1e-3));
    CHECK(model(400).time(132, 1, 1, 1) == Approx(20e-6).epsilon(1e-3));  // the floor
  }
  SECTION("large GEMMs approach the work: 8 waves x 132 x 16384 x 1.074e-11 = 185.818 us, floor 20 us at knee 8") {
    CHECK(model(8).time(132, 4096, 4224, 4096) == Approx(185.81815296e-6).epsilon(1e-6));
  }
}

TEST_CASE("core: the attention core's FLOPs and model time", "[core][kernels]") {
  core::AttentionShape a;
  a.batch = 2;
  a.heads = 16;
  a.kv_heads = 4;
  a.head_dim = 128;
  a.seq_q = a.seq_k = 1024;
  // 4 x 2 x 16 x 1024 x 1024 x 128 = 17,179,869,184, halved when causal
  CHECK(a.flops() == 8589934592.0);
  a.causal = false;
  CHECK(a.flops() == 17179869184.0);
  a.causal = true;
  core::AttentionModel m;
  m.rate_flops = 500e12;
  m.q_Bps = 2e12;
  m.kv_Bps = 1e12;
  // forward: 8.5899e9 / 5e14 = 17.180 us; query rows 2 bytes x 2 x 128 x 1024 x 16 / 2e12 = 4.194 us;
  // key/value rows 2 x 2 x 128 x 1024 x 4 / 1e12 = 2.097 us: 23.471 us
  CHECK(m.time(a, false) == Approx(8589934592.0 / 500e12 + 8388608.0 / 2e12 + 2097152.0 / 1e12).epsilon(1e-12));
  // backward: 2.5x the FLOPs, the same per-row terms: 42.950 + 4.194 + 2.097 = 49.241 us
  CHECK(m.time(a, true) == Approx(2.5 * 8589934592.0 / 500e12 + 8388608.0 / 2e12 + 2097152.0 / 1e12).epsilon(1e-12));
  m.q_Bps = m.kv_Bps = 0;  // no per-row terms: FLOPs alone
  CHECK(m.time(a, false) == Approx(8589934592.0 / 500e12).epsilon(1e-12));
}
