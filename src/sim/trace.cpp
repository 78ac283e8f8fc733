#include "ptdsim/sim/trace.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptdsim::sim {
namespace {

const char* pass_word(int pass) {
  switch (pass) {
    case 0: return "forward";
    case 1: return "backward";
    case 2: return "weight gradients";
    default: return "";
  }
}
const char* pass_letter(int pass) {
  switch (pass) {
    case 0: return "F";
    case 1: return "B";
    case 2: return "W";
    default: return "";
  }
}

using Timed = std::vector<std::pair<double, std::string>>;

// Each rank a process ("stage s"), each stream it uses a thread of it (named for ZeRO-3's
// per-unit collectives where it carries them).
nlohmann::json track_names(const StepGraph& g) {
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
  return events;
}

// Each task a complete event ("X"), a compute task's folded TP drawn on the TP track after it.
void task_slices(const StepGraph& g, Timed& timed) {
  const Engine& e = g.engine;
  for (std::size_t i = 0; i < e.size(); ++i) {
    const TaskId t = static_cast<TaskId>(i);
    const TaskSpec sp = e.spec(t);
    // "TP B mb3 L12-17": a collective says the pass it serves, so forward and backward differ
    std::string label(name(sp.kind));
    if (!is_compute(sp.kind) && sp.pass >= 0) label += std::string(" ") + pass_letter(sp.pass);
    std::string args;  // the members, each with its leading comma
    if (sp.pass >= 0) args += fmt::format(",\"pass\":\"{}\"", pass_word(sp.pass));
    if (sp.microbatch >= 0) {
      label += " mb" + std::to_string(sp.microbatch);
      args += fmt::format(",\"microbatch\":{}", sp.microbatch);
    }
    if (g.vpp > 1 && sp.microbatch >= 0) {
      label += " c" + std::to_string(sp.chunk);
      args += fmt::format(",\"chunk\":{}", sp.chunk);
    }
    // " L12-17" and its member: the layers a slice covers
    auto layer_range = [](int first, int count, std::string& lab, std::string& members) {
      if (count <= 0) return;
      const std::string layers =
          count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
      lab += " L" + layers;
      members += fmt::format(",\"layers\":\"{}\"", layers);
    };
    auto complete = [&](const std::string& nm, std::string_view cat, int tid, double ts, double dur,
                        const std::string& members) {
      return fmt::format("{{\"ph\":\"X\",\"name\":\"{}\",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
                         "\"args\":{{{}}}}}",
                         nm, cat, sp.rank, tid, ts * 1e6, dur * 1e6, members.empty() ? members : members.substr(1));
    };
    const double start = e.start(t);
    const double end = e.finish(t) - sp.folded_tp_s;
    if (sp.folded_tp_s > 0 && sp.layer_count > 1) {
      // A pass of many layers with its serial TP collectives folded in runs, layer by layer, a
      // layer's compute then its TP: drawn so, each layer an equal share of the pass's compute and of
      // its TP (the layers of a stage are alike; the ends' embedding and logits are spread over
      // them). Drawing only: the task is one task to the simulation, start to finish.
      const int n = sp.layer_count;
      const double compute_s = (end - start) / n, tp_s = sp.folded_tp_s / n;
      for (int j = 0; j < n; ++j) {
        std::string lab = label, members = args;
        layer_range(sp.layer_first + j, 1, lab, members);
        members += fmt::format(",\"share\":\"layer {} of {}\"", j + 1, n);
        const double at = start + j * (compute_s + tp_s);
        timed.emplace_back(at + compute_s,
                           complete(std::string(name(TaskKind::tp)) + " " + lab, name(TaskKind::tp),
                                    static_cast<int>(StreamKind::tp), at + compute_s, tp_s,
                                    members + fmt::format(",\"bytes\":{}", sp.folded_tp_bytes / n)));
        if (sp.flops > 0) members += fmt::format(",\"flops\":{}", sp.flops / n);
        if (sp.bytes > 0) members += fmt::format(",\"bytes\":{}", sp.bytes / n);
        timed.emplace_back(at, complete(lab, name(sp.kind), static_cast<int>(sp.stream), at, compute_s, members));
      }
      continue;
    }
    layer_range(sp.layer_first, sp.layer_count, label, args);
    if (sp.folded_tp_s > 0) {
      // the serial TP collectives folded into this task, drawn on the TP track after it
      timed.emplace_back(end, complete(std::string(name(TaskKind::tp)) + " " + label, name(TaskKind::tp),
                                       static_cast<int>(StreamKind::tp), end, sp.folded_tp_s,
                                       args + fmt::format(",\"bytes\":{}", sp.folded_tp_bytes)));
    }
    if (sp.flops > 0) args += fmt::format(",\"flops\":{}", sp.flops);
    if (sp.bytes > 0) args += fmt::format(",\"bytes\":{}", sp.bytes);
    timed.emplace_back(start, complete(label, name(sp.kind), static_cast<int>(sp.stream), start, end - start, args));
  }
}

// Flow arrows for what a transfer hands on: a pipeline send to the pass that waits for it on the
// next stage, a collective to the task on another stream that waits for it. Each starts inside
// the transfer's slice and ends at the start of the waiting task's slice ("bp": "e" binds it to
// that slice, as Perfetto's JSON importer reads flow v1 events).
void flow_arrows(const Engine& e, Timed& timed) {
  std::vector<std::pair<TaskId, TaskId>> edges;
  e.all_edges(edges);
  long long id = 0;
  for (const auto& [from, to] : edges) {
    const TaskKind ka = e.kind(from);
    if (is_compute(ka)) continue;
    const int ra = e.rank(from), rb = e.rank(to);
    const TaskSpec a = e.spec(from), b = e.spec(to);
    if (is_compute(ka) || (ra == rb && a.stream == b.stream)) continue;
    const char* cat = ka == TaskKind::p2p ? "p2p" : "collective";
    const double at = e.start(from), until = e.start(to);
    ++id;
    timed.emplace_back(at, fmt::format("{{\"ph\":\"s\",\"id\":{},\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},"
                                       "\"tid\":{},\"ts\":{}}}",
                                       id, cat, name(ka), ra, static_cast<int>(a.stream), at * 1e6));
    timed.emplace_back(until, fmt::format("{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"cat\":\"{}\",\"name\":\"{}\","
                                          "\"pid\":{},\"tid\":{},\"ts\":{}}}",
                                          id, cat, name(ka), rb, static_cast<int>(b.stream), until * 1e6));
  }
}

// Memory in use per stage over the step: what the stage holds throughout (weights, gradients,
// optimizer states, buffers) plus its activations, a chunk's share of a micro-batch's from the
// start of its forward to the end of the pass that frees them, as the summary counts them in
// flight; at the peak it reads the stage's reported total.
void memory_counters(const StepGraph& g, const std::vector<core::StageMemory>& memory, Timed& timed) {
  const Engine& e = g.engine;
  for (int r = 0; r < e.ranks(); ++r) {
    const int stage = g.ranks[r].stage;
    if (stage < 0 || stage >= static_cast<int>(memory.size())) continue;
    const core::StageMemory& m = memory[static_cast<std::size_t>(stage)];
    const double fixed = m.total() - m.activations;
    const double per = m.in_flight > 0 ? m.activations / m.in_flight : 0.0;
    std::vector<std::pair<double, int>> change;  // (time, +1 acquire / -1 release)
    for (const auto& [first, last] : g.activations[r]) {
      change.emplace_back(e.start(first), +1);
      change.emplace_back(e.finish(last), -1);
    }
    std::sort(change.begin(), change.end());
    auto counter = [&](double at, int held) {
      timed.emplace_back(at, fmt::format("{{\"ph\":\"C\",\"name\":\"memory in use (GiB)\",\"pid\":{},\"ts\":{},"
                                         "\"args\":{{\"GiB\":{}}}}}",
                                         r, at * 1e6, (fixed + per * held / g.vpp) / (1024.0 * 1024 * 1024)));
    };
    counter(0.0, 0);
    int held = 0;
    for (std::size_t i = 0; i < change.size();) {
      const double at = change[i].first;
      for (; i < change.size() && change[i].first == at; ++i) held += change[i].second;
      counter(at, held);
    }
  }
}

}  // namespace

std::string chrome_trace(const StepGraph& g, const std::vector<core::StageMemory>* memory) {
  const Engine& e = g.engine;
  const nlohmann::json events = track_names(g);
  // the timed events, sorted by time below (Perfetto's importer and chrome://tracing read them in
  // any order, but a reader of the file expects time order). Written with fmt, not as JSON objects:
  // the 1T step has 360k of them, and a JSON object each would cost most of the trace's time. Their
  // strings are the program's own (kinds, numbers, layer ranges): nothing to escape.
  Timed timed;
  timed.reserve(e.size() + e.size() / 2);
  task_slices(g, timed);
  flow_arrows(e, timed);
  if (memory) memory_counters(g, *memory, timed);
  std::stable_sort(timed.begin(), timed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string out = "{\"traceEvents\":[";
  std::size_t size = out.size() + 64;
  size += 256 * events.size();
  for (const auto& [at, ev] : timed) size += ev.size() + 1;
  out.reserve(size);
  bool first = true;
  for (const auto& ev : events) {
    if (!first) out += ',';
    first = false;
    out += ev.dump();
  }
  for (const auto& [at, ev] : timed) {
    if (!first) out += ',';
    first = false;
    out += ev;
  }
  out += "],\"displayTimeUnit\":\"ms\"}";
  return out;
}

}  // namespace ptdsim::sim
