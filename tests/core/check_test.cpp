#include <catch2/catch.hpp>

#include <algorithm>

#include "ptdsim/core/check.hpp"
#include "ptdsim/core/split.hpp"

using namespace ptdsim::core;

namespace {
// GPT-3 175B on 1024 GPUs, tp 8 pp 16 dp 8: a legal layout.
Scenario gpt3() {
  Scenario s;
  s.model.name = "gpt3";
  s.model.layers = 96;
  s.model.hidden = 12288;
  s.model.heads = 96;
  s.model.kv_heads = 96;
  s.model.ffn_hidden = 49152;
  s.model.vocab = 51200;
  s.hardware.gpu.name = "A100";
  s.hardware.gpu.peak_flops[index(Precision::bf16)] = 312e12;
  s.gpus = 1024;
  s.parallel.tp = 8;
  s.parallel.pp = 16;
  s.parallel.dp = 8;
  s.training.seq_len = 2048;
  s.training.global_batch = 1536;
  return s;
}
std::vector<std::string> keys(const std::vector<Problem>& ps) {
  std::vector<std::string> k;
  for (const auto& p : ps) k.push_back(p.key + ":" + p.reason);
  return k;
}
}  // namespace

TEST_CASE("core: a legal layout has no problems", "[core][check]") { CHECK(check(gpt3()).empty()); }

TEST_CASE("core: cross-field problems are collected together", "[core][check]") {
  auto s = gpt3();
  s.parallel.tp = 3;            // divides neither 1024 GPUs nor 96... it does divide 96 heads
  s.training.global_batch = 1001;  // not a multiple of micro_batch*dp = 8
  auto ps = check(s);
  // tp*cp*pp = 48 does not divide 1024; 3 does not divide ffn_hidden 49152? 49152 = 3*16384: it does.
  CHECK(keys(ps) == std::vector<std::string>{"parallel.tp:divisibility", "training.global_batch:batch"});
  CHECK(ps[0].message == "tp*cp*pp = 3*1*16 = 48 does not divide the 1024 GPUs");
}

TEST_CASE("core: pipeline, batch and expert rules", "[core][check]") {
  SECTION("layers that do not divide over pp*vpp get a chosen split; too many stages are an error") {
    auto s = gpt3();
    s.parallel.vpp = 5;  // 80 virtual stages for 96 layers: split for it (core/split.cpp)
    s.parallel.schedule = Schedule::interleaved;
    s.training.global_batch = 8 * 32;
    CHECK(check(s).empty());
    s.parallel.vpp = 7;  // 112 virtual stages
    auto ps = check(s);
    REQUIRE(!ps.empty());
    CHECK(ps[0].key == "parallel.vpp");
    CHECK(ps[0].message == "pp*vpp = 16*7 = 112 virtual stages but the model has only 96 layers");
  }
  SECTION("interleaving needs the micro-batch count to be a multiple of pp") {
    auto s = gpt3();
    s.parallel.vpp = 2;
    s.parallel.schedule = Schedule::interleaved;
    s.training.global_batch = 8 * 20;  // m = 20, not a multiple of 16
    CHECK(keys(check(s)) == std::vector<std::string>{"training.global_batch:batch"});
  }
  SECTION("ep needs experts") {
    auto s = gpt3();
    s.parallel.ep = 2;
    CHECK(keys(check(s)) == std::vector<std::string>{"parallel.ep:unsupported"});
  }
  SECTION("fp4 is a peak rate, not a training precision, even where the GPU has one") {
    auto s = gpt3();
    s.hardware.gpu.peak_flops[index(Precision::fp4)] = 9000e12;
    s.training.precision = Precision::fp4;
    CHECK(keys(check(s)) == std::vector<std::string>{"training.precision:unsupported"});
  }
  SECTION("gqa: tp must divide kv_heads") {
    auto s = gpt3();
    s.model.kv_heads = 4;
    CHECK(keys(check(s)) == std::vector<std::string>{"parallel.tp:divisibility"});
  }
}

TEST_CASE("core: first_problem is the reason of check()'s first problem", "[core][check]") {
  // A grid of layouts that break one rule, several or none (tp 3 and 5 divide neither 1024 nor the
  // heads, vpp 7 over-splits, the batches break micro_batch*dp, ep without experts, cp with an odd
  // share of the sequence): first_problem must name check()'s first reason, "" where check() is empty.
  const Scenario base = gpt3();
  int with_problems = 0, without = 0;
  for (int tp : {1, 3, 5, 8})
    for (int pp : {1, 4, 16})
      for (int vpp : {1, 2, 7})
        for (int cp : {1, 2, 3})
          for (long long batch : {1536LL, 1001LL})
            for (int ep : {1, 2}) {
              Scenario s = base;
              s.parallel.tp = tp;
              s.parallel.pp = pp;
              s.parallel.vpp = vpp;
              s.parallel.schedule = vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
              s.parallel.cp = cp;
              s.parallel.ep = ep;
              s.parallel.dp = std::max(1, 1024 / (tp * pp * cp));
              s.training.global_batch = batch;
              const auto all = check(s);
              CHECK(first_problem(s, pipeline_split(s)) == (all.empty() ? std::string() : all.front().reason));
              ++(all.empty() ? without : with_problems);
            }
  CHECK(with_problems > 0);
  CHECK(without > 0);
}
