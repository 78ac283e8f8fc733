#include <catch2/catch.hpp>

#include <string>

#include "ptdsim/core/comm_kind.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/report.hpp"

using namespace ptdsim::core;

TEST_CASE("core: every communication kind has one report bucket, one name and one path cause", "[core][comm]") {
  // the report's five totals (docs/analytic.md): pipeline sends are pp; every data-parallel and
  // ZeRO transfer is dp
  CHECK(bucket(CommKind::tp) == CommBucket::tp);
  CHECK(bucket(CommKind::cp) == CommBucket::cp);
  CHECK(bucket(CommKind::ep) == CommBucket::ep);
  CHECK(bucket(CommKind::p2p) == CommBucket::pp);
  CHECK(bucket(CommKind::dp_reduce) == CommBucket::dp);
  CHECK(bucket(CommKind::dp_gather) == CommBucket::dp);
  CHECK(bucket(CommKind::zero3_gather) == CommBucket::dp);
  CHECK(bucket(CommKind::zero3_reduce) == CommBucket::dp);
  CHECK(std::string(kCommBucketNames[static_cast<int>(CommBucket::pp)]) == "pp");

  // the critical path's CSV columns: ZeRO-3 reduce-scatters are gradient reductions, its
  // all-gathers waits for parameters
  CHECK(path_cause(CommKind::p2p) == PathCause::pp);
  CHECK(path_cause(CommKind::zero3_reduce) == PathCause::dp_reduce);
  CHECK(path_cause(CommKind::zero3_gather) == PathCause::dp_gather_wait);
  CHECK(path_cause(CommKind::dp_gather) == PathCause::dp_gather_wait);

  // only a pipeline send leaves the SMs to compute (docs/simulator.md "SM contention")
  int holding = 0;
  for (int k = 0; k < kCommKindCount; ++k) {
    const auto c = static_cast<CommKind>(k);
    CHECK(name(c) != "?");  // every kind is in the name table
    holding += holds_sms(c);
  }
  CHECK(holding == kCommKindCount - 1);
  CHECK(!holds_sms(CommKind::p2p));
  CHECK(name(CommKind::p2p) == "PP p2p");
  CHECK(name(CommKind::zero3_reduce) == "ZeRO-3 reduce-scatter");
}

TEST_CASE("core: a part of the step that is communication reads as its kind", "[core][comm]") {
  BoundPart tp;
  tp.kind = BoundKind::comm;
  tp.comm = CommKind::tp;
  tp.share = 0.10;
  BoundPart dp;
  dp.kind = BoundKind::dp;
  dp.share = 0.05;
  BoundPart stage;
  stage.kind = BoundKind::compute;
  stage.stage = 3;
  stage.share = 0.85;
  CHECK(describe({stage, tp, dp}) == "stage 3 compute (85%), then TP (10%), then DP (5%)");
}
