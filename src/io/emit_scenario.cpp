#include "ptdsim/io/emit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "loaders.hpp"
#include "ptdsim/core/names.hpp"
#include "yaml_tree.hpp"

namespace ptdsim::io {
namespace {

using detail::Node;

// A scalar as YAML reads it back: plain where that is unambiguous, else double-quoted.
std::string scalar(const std::string& s) {
  constexpr std::string_view special = ":#{}[],&*!|>'\"%@`\\\n\t";
  const bool plain = !s.empty() && s.find_first_of(special) == std::string::npos && s.front() != ' ' &&
                     s.back() != ' ' && s.front() != '-' && s.front() != '?';
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + "\"";
}

void write_map(const Node& n, int indent, std::string& out);

// A value after "key:" (or "- "), block style.
void write_value(const Node& v, int indent, std::string& out) {
  switch (v.kind) {
    case Node::Kind::null: out += "\n"; return;
    case Node::Kind::scalar:
      out += ' ';
      out += scalar(v.text);
      out += '\n';
      return;
    case Node::Kind::list: {
      if (std::all_of(v.items.begin(), v.items.end(), [](const auto& i) { return i->kind == Node::Kind::scalar; })) {
        std::string items;
        for (const auto& i : v.items) {
          if (!items.empty()) items += ", ";
          items += scalar(i->text);
        }
        out += " [";
        out += items;
        out += "]\n";
        return;
      }
      out += "\n";
      const std::string pad(static_cast<std::size_t>(indent), ' ');
      for (const auto& i : v.items) {
        out += pad + "-";
        if (i->kind == Node::Kind::map) {
          out += "\n";
          write_map(*i, indent + 2, out);
        } else {
          write_value(*i, indent + 2, out);
        }
      }
      return;
    }
    case Node::Kind::map:
      out += "\n";
      write_map(v, indent, out);
      return;
  }
}

void write_map(const Node& n, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const auto& e : n.entries) {
    out += pad;
    out += scalar(e.key);
    out += ':';
    write_value(*e.value, indent + 2, out);
  }
}

void remove(Node& root, const std::string& section, const std::string& key) {
  if (detail::Entry* s = root.find(section); s && s->value->kind == Node::Kind::map) {
    auto& entries = s->value->entries;
    entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const auto& e) { return e.key == key; }),
                  entries.end());
  }
}

}  // namespace

std::string scenario_yaml(const std::string& path, const std::vector<Override>& overrides,
                          const core::Scenario& layout, const std::string& header) {
  detail::NodePtr root = detail::parse_file(path, detail::Mark{});
  if (root->kind != Node::Kind::map) detail::fail(detail::Mark{root->mark.src, 0, 0}, "a scenario must be a mapping");
  detail::apply_overrides(*root, overrides);
  // an included model or hardware file by path: absolute, as the loader resolved it
  for (const char* k : {"model", "hardware"})
    if (detail::Entry* e = root->find(k); e && e->value->kind == Node::Kind::scalar && !detail::is_library_name(e->value->text))
      e->value->text = std::filesystem::absolute(detail::resolve_path(
                                                     e->value->mark.src ? e->value->mark.src->dir : std::string("."),
                                                     e->value->text))
                           .lexically_normal()
                           .string();

  const auto& p = layout.parallel;
  const auto& t = layout.training;
  auto b = [](bool x) { return std::string(x ? "true" : "false"); };
  std::vector<Override> set{
      {"parallel.tp", std::to_string(p.tp)},
      {"parallel.pp", std::to_string(p.pp)},
      {"parallel.dp", std::to_string(p.dp)},
      {"parallel.cp", std::to_string(p.cp)},
      {"parallel.ep", std::to_string(p.ep)},
      {"parallel.vpp", std::to_string(p.vpp)},
      {"parallel.zero", std::to_string(p.zero)},
      {"parallel.sequence_parallel", b(p.sequence_parallel)},
      {"parallel.schedule", std::string(core::name(p.schedule))},
      {"training.micro_batch", std::to_string(t.micro_batch)},
      {"training.recompute", std::string(core::name(t.recompute))},
      {"training.overlap.tp", b(t.overlap.tp)},
      {"training.overlap.dp", b(t.overlap.dp)},
      {"training.overlap.pp", b(t.overlap.pp)},
      {"cluster.gpus", std::to_string(layout.gpus)},
  };
  if (p.etp > 0) set.push_back({"parallel.etp", std::to_string(p.etp)});
  // CPU offload (`sweep --search offload`): written where the layout offloads or the scenario says
  {
    const detail::Entry* tr = root->find("training");
    const bool written = tr && tr->value->kind == Node::Kind::map && tr->value->find("offload");
    if (t.offload != core::Offload::none || written)
      set.push_back({"training.offload", std::string(core::name(t.offload))});
  }
  if (p.sharding.shard_ranks > 0) set.push_back({"parallel.sharding.shard_ranks", std::to_string(p.sharding.shard_ranks)});
  remove(*root, "cluster", "nodes");  // cluster.gpus says it
  if (p.sharding.shard_ranks == 0)
    if (detail::Entry* par = root->find("parallel"); par && par->value->kind == Node::Kind::map)
      if (detail::Entry* sh = par->value->find("sharding"); sh && sh->value->kind == Node::Kind::map) {
        auto& en = sh->value->entries;
        en.erase(std::remove_if(en.begin(), en.end(), [](const auto& e) { return e.key == "shard_ranks"; }), en.end());
      }
  // a split the layout dropped (not valid for its pp and vpp: planner::apply)
  if (p.stage_layers.empty()) remove(*root, "parallel", "stage_layers");
  if (p.first_stage_layers == 0) remove(*root, "parallel", "first_stage_layers");
  if (p.last_stage_layers == 0) remove(*root, "parallel", "last_stage_layers");
  if (!p.embedding_in_split) remove(*root, "parallel", "embedding_in_split");
  if (!p.loss_in_split) remove(*root, "parallel", "loss_in_split");
  detail::apply_overrides(*root, set);

  std::string out = header;
  write_map(*root, 0, out);
  return out;
}

}  // namespace ptdsim::io
