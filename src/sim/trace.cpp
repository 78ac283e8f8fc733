#include "ptdsim/sim/trace.hpp"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <string>

namespace ptdsim::sim {

std::string chrome_trace(const StepGraph& g) {
  const Engine& e = g.engine;
  using nlohmann::json;
  json events = json::array();
  // 1: the stream is used; 2: it carries ZeRO-3's per-unit collectives (named so on its track)
  std::vector<std::uint8_t> used(static_cast<std::size_t>(e.ranks()) * kStreamKinds, 0);
  for (std::size_t i = 0; i < e.size(); ++i) {
    const TaskSpec sp = e.spec(static_cast<TaskId>(i));
    auto& u = used[static_cast<std::size_t>(sp.rank) * kStreamKinds + static_cast<int>(sp.stream)];
    const bool zero3 = sp.kind == TaskKind::zero3_gather || sp.kind == TaskKind::zero3_reduce;
    u = std::max<std::uint8_t>(u, zero3 ? 2 : 1);
    if (sp.folded_tp_s > 0)
      used[static_cast<std::size_t>(sp.rank) * kStreamKinds + static_cast<int>(StreamKind::tp)] = 1;
  }
  for (int r = 0; r < e.ranks(); ++r) {
    const RankRef ref = g.ranks[r];
    std::string pname = "stage " + std::to_string(ref.stage);
    if (ref.replica > 0) pname += " replica " + std::to_string(ref.replica);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", r}, {"args", {{"name", pname}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", r}, {"args", {{"sort_index", r}}}});
    for (int k = 0; k < kStreamKinds; ++k) {
      const std::uint8_t u = used[static_cast<std::size_t>(r) * kStreamKinds + k];
      if (!u) continue;
      std::string track(name(static_cast<StreamKind>(k)));
      if (u == 2)
        track += static_cast<StreamKind>(k) == StreamKind::dp_gather ? " (ZeRO-3 all-gathers)" : " (ZeRO-3 reduce-scatters)";
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", r}, {"tid", k}, {"args", {{"name", track}}}});
    }
  }
  for (std::size_t i = 0; i < e.size(); ++i) {
    const TaskId t = static_cast<TaskId>(i);
    const TaskSpec sp = e.spec(t);
    std::string label(name(sp.kind));
    json args = json::object();
    if (sp.microbatch >= 0) {
      label += " mb" + std::to_string(sp.microbatch);
      args["microbatch"] = sp.microbatch;
    }
    if (g.vpp > 1 && sp.microbatch >= 0) {
      label += " c" + std::to_string(sp.chunk);
      args["chunk"] = sp.chunk;
    }
    if (sp.layer_count > 0) {
      const int last = sp.layer_first + sp.layer_count - 1;
      const std::string layers = sp.layer_count == 1
                                     ? std::to_string(sp.layer_first)
                                     : std::to_string(sp.layer_first) + "-" + std::to_string(last);
      label += " L" + layers;
      args["layers"] = layers;
    }
    if (sp.flops > 0) args["flops"] = sp.flops;
    if (sp.bytes > 0) args["bytes"] = sp.bytes;
    const double end = e.finish(t) - sp.folded_tp_s;
    if (sp.folded_tp_s > 0) {
      // the serial TP collectives folded into this task, drawn on the TP track after it
      std::string tp_label = std::string(name(TaskKind::tp)) + label.substr(label.find(' '));
      json tp_args = args;
      tp_args.erase("flops");
      tp_args["bytes"] = sp.folded_tp_bytes;
      events.push_back({{"ph", "X"},
                        {"name", tp_label},
                        {"cat", std::string(name(TaskKind::tp))},
                        {"pid", sp.rank},
                        {"tid", static_cast<int>(StreamKind::tp)},
                        {"ts", end * 1e6},
                        {"dur", sp.folded_tp_s * 1e6},
                        {"args", std::move(tp_args)}});
    }
    events.push_back({{"ph", "X"},
                      {"name", label},
                      {"cat", std::string(name(sp.kind))},
                      {"pid", sp.rank},
                      {"tid", static_cast<int>(sp.stream)},
                      {"ts", e.start(t) * 1e6},
                      {"dur", (end - e.start(t)) * 1e6},
                      {"args", std::move(args)}});
  }
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return doc.dump();
}

}  // namespace ptdsim::sim
