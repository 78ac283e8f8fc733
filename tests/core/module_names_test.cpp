#include <catch2/catch.hpp>

#include "ptdsim/core/join.hpp"
#include "ptdsim/core/names.hpp"

// The module enums' spellings (core/names.cpp) and the one rule for which modules a run recomputes
// (TrainingSpec::names, recomputes_under in core/scenario.hpp).
using namespace ptdsim;
using core::Recompute;
using core::RecomputeModule;

TEST_CASE("module spellings: every one parses back, in the table's order, joined for messages") {
  const auto mods = core::spellings<RecomputeModule>();
  REQUIRE(mods.size() == static_cast<std::size_t>(core::kRecomputeModuleCount));
  for (const auto& m : mods) CHECK(core::name(*core::parse<RecomputeModule>(m)) == m);
  CHECK(core::spelling_list<RecomputeModule>() == "core_attn, mla_up_proj, mlp, moe, moe_act, layernorm, shared_experts");
  CHECK(core::spelling_list<core::OffloadModule>() == "expert_fc1, moe_act");
}

TEST_CASE("recompute modules: Megatron-Core's core_attn by default, the named ones otherwise, selective only") {
  core::TrainingSpec t;
  t.recompute = Recompute::selective;
  CHECK(t.recomputes(RecomputeModule::core_attn));  // no list: --recompute-modules' default ["core_attn"]
  CHECK_FALSE(t.recomputes(RecomputeModule::mlp));
  CHECK_FALSE(t.names(RecomputeModule::core_attn));
  t.recompute_modules = 1u << static_cast<unsigned>(RecomputeModule::mlp);
  CHECK(t.names(RecomputeModule::mlp));
  CHECK(t.recomputes(RecomputeModule::mlp));
  CHECK_FALSE(t.recomputes(RecomputeModule::core_attn));  // a list replaces the default
  CHECK_FALSE(t.recomputes_under(Recompute::full, RecomputeModule::mlp));  // full and none read no list
  CHECK_FALSE(t.recomputes_under(Recompute::none, RecomputeModule::mlp));
  t.recompute = Recompute::none;
  CHECK_FALSE(t.recomputes(RecomputeModule::mlp));
  CHECK(t.recomputes_under(Recompute::selective, RecomputeModule::mlp));
}

TEST_CASE("joined: the items with the separator between them, none before the first") {
  CHECK(core::joined(std::vector<std::string>{}).empty());
  CHECK(core::joined(std::vector<std::string>{"p2p"}) == "p2p");
  CHECK(core::joined(std::vector<std::string>{"a", "", "c"}) == "a, , c");  // an empty item keeps its place
  CHECK(core::joined(std::vector<std::string_view>{"tp", "dp"}, " x ") == "tp x dp");
}
