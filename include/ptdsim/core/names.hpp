#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptdsim/core/join.hpp"

#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/model.hpp"
#include "ptdsim/core/parallel.hpp"
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

// The spellings of enums in YAML, JSON and tables: one table each, both directions.
namespace ptdsim::core {

std::string_view name(Precision);
std::string_view name(Collective);
std::string_view name(Scope);
std::string_view name(Schedule);
std::string_view name(Recompute);
std::string_view name(RecomputeModule);
std::string_view name(OffloadModule);
std::string_view name(Dim);
std::string_view name(Mlp);
std::string_view name(Norm);
std::string_view name(Position);
std::string_view name(Router);
std::string_view name(Optimizer);
std::string_view name(Topology);
std::string_view name(NodePlacement);
std::string_view name(MainGrads);
std::string_view name(AttentionKernel);
std::string_view name(Fusion);
std::string_view name(LossFusion);
std::string_view name(WgradAccumulation);
std::string_view name(Fp8Recipe);
std::string_view name(Dispatcher);
std::string_view name(CpComm);
std::string_view name(Offload);
std::string_view name(EngineKind);
std::string_view name(CommKind);  // "TP", "PP p2p", "ZeRO-3 all-gather"
std::string_view name(BoundKind);

// parallel.placement as a scenario writes it: "tp-cp-ep-dp-pp".
std::string placement_text(const ParallelSpec& p);

// bounded_by in words: "stage 15 compute (82%), then TP (10%)".
std::string describe(const std::vector<BoundPart>& parts);
std::string_view name(MemoryOp);
std::string_view name(Fp8Kernel);
std::string_view name(Operator);
std::string_view name(OperatorKind);
std::string_view name(TimeSource);

template <class E>
std::optional<E> parse(std::string_view text);  // specialised for each enum above
// Every spelling of E, in its table's order (a command line's choices).
template <class E>
std::vector<std::string> spellings();  // specialised for Precision, AttentionKernel, Fp8Kernel and the modules
// The same, as "a, b, c" for a message.
template <class E>
std::string spelling_list() {
  return joined(spellings<E>());
}
// The names of E's first `count` values (an enum counted from 0), in order: a key's choices.
template <class E>
std::vector<std::string> names_of(int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.emplace_back(name(static_cast<E>(i)));
  return out;
}

}  // namespace ptdsim::core
