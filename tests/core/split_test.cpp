#include <catch2/catch.hpp>

#include "ptdsim/core/split.hpp"

// How layers split over virtual stages (core/split.cpp): Megatron-LM's rules and the chosen split.
using namespace ptdsim;
using core::SplitMethod;

namespace {

core::Scenario model(int layers, int pp, int vpp = 1) {
  core::Scenario s;
  s.model.layers = layers;
  s.parallel.pp = pp;
  s.parallel.vpp = vpp;
  return s;
}

std::vector<int> runs(std::initializer_list<std::pair<int, int>> r) {  // {count, layers}
  std::vector<int> out;
  for (auto [n, l] : r) out.insert(out.end(), n, l);
  return out;
}

}  // namespace

TEST_CASE("core: the pipeline split", "[core][split]") {
  SECTION("even when the layers divide") {
    const auto sp = core::pipeline_split(model(96, 16));
    CHECK(sp.method == SplitMethod::even);
    CHECK(sp.layers == std::vector<int>(16, 6));
    CHECK_FALSE(sp.chosen);
  }
  SECTION("Llama 3 405B over pp 16: the embedding and the loss take a layer's slot each") {
    // (126 + 2) / 16 = 8 per stage; the first and the last hold 7 transformer layers
    const auto sp = core::pipeline_split(model(126, 16));
    CHECK(sp.method == SplitMethod::embedding_loss);
    CHECK(sp.chosen);
    CHECK(sp.embedding_slot);
    CHECK(sp.loss_slot);
    CHECK(sp.layers == runs({{1, 7}, {14, 8}, {1, 7}}));
    CHECK(core::describe_layers(sp.layers) == "7, 8 x 14, 7");
  }
  SECTION("and over pp 16 x vpp 2: 128 / 32 = 4 per virtual stage") {
    const auto sp = core::pipeline_split(model(126, 16, 2));
    CHECK(sp.layers == runs({{1, 3}, {30, 4}, {1, 3}}));
  }
  SECTION("and over pp 16 x vpp 8, Meta's own layout: the first chunk holds only the embedding, the last only the loss") {
    // 128 / 128 = 1 slot each (Dubey et al. 2024, section 3.3.2)
    const auto sp = core::pipeline_split(model(126, 16, 8));
    CHECK(sp.method == SplitMethod::embedding_loss);
    CHECK(sp.layers == runs({{1, 0}, {126, 1}, {1, 0}}));
  }
  SECTION("the loss alone when layers + 1 divides") {
    // 11 + 1 = 12 over 4: 3 each, the last holds 2 and the loss
    const auto sp = core::pipeline_split(model(11, 4));
    CHECK(sp.method == SplitMethod::embedding_loss);
    CHECK_FALSE(sp.embedding_slot);
    CHECK(sp.layers == std::vector<int>{3, 3, 3, 2});
  }
  SECTION("else the remainder to the latest middle stages") {
    // 9 over 4: 2 each and 1 left, for stage 2 (9 + 1 and 9 + 2 do not divide by 4)
    const auto sp = core::pipeline_split(model(9, 4));
    CHECK(sp.method == SplitMethod::balanced);
    CHECK(sp.layers == std::vector<int>{2, 2, 3, 2});
    // 23 over 8: 2 each and 7 left: the six middle stages and the first
    CHECK(core::pipeline_split(model(23, 8)).layers == std::vector<int>{3, 3, 3, 3, 3, 3, 3, 2});
  }
  SECTION("Megatron-LM's first and last stage sizes; the middle stages split the rest") {
    auto s = model(126, 16);
    s.parallel.first_stage_layers = 7;
    s.parallel.last_stage_layers = 7;
    auto sp = core::pipeline_split(s);
    CHECK(sp.method == SplitMethod::first_last);
    CHECK(sp.layers == runs({{1, 7}, {14, 8}, {1, 7}}));
    s.parallel.last_stage_layers = 6;  // 113 over 14 middle stages
    sp = core::pipeline_split(s);
    CHECK(sp.layers.empty());
    CHECK(sp.key == "parallel.first_stage_layers");
    CHECK(sp.problem ==
          "first_stage_layers 7 and last_stage_layers 6 leave 113 of the 126 layers to 14 middle stages x vpp 1: "
          "not an even split");
    s = model(126, 16, 2);
    s.parallel.first_stage_layers = 7;
    s.parallel.last_stage_layers = 7;
    sp = core::pipeline_split(s);
    CHECK(sp.problem == "first_stage_layers 7 does not split over vpp 2 chunks");
  }
  SECTION("explicit layers per stage, or per virtual stage with interleaving") {
    auto s = model(8, 2, 2);
    s.parallel.stage_layers = {5, 3};  // per stage: each over its 2 chunks
    auto sp = core::pipeline_split(s);
    CHECK(sp.layers.empty());
    CHECK(sp.problem == "stage 0's 5 layers do not split over vpp 2 chunks (give pp*vpp = 4 entries instead)");
    s.parallel.stage_layers = {1, 2, 3, 2};  // per virtual stage
    CHECK(core::pipeline_split(s).layers == std::vector<int>{1, 2, 3, 2});
    s.parallel.stage_layers = {4, 4};
    CHECK(core::pipeline_split(s).layers == std::vector<int>{2, 2, 2, 2});
  }
  SECTION("Megatron's accounting asked for explicitly must divide") {
    auto s = model(96, 16);
    s.parallel.embedding_in_split = true;
    const auto sp = core::pipeline_split(s);
    CHECK(sp.key == "parallel.embedding_in_split");
    CHECK(sp.problem ==
          "layers 96 + 1 (embedding and loss counted as layers) do not split evenly over pp*vpp = 16 virtual stages");
  }
}
