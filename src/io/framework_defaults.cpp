#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/framework.hpp"
#include "schema.hpp"

namespace ptdsim::io::detail {

// The framework's row becomes a small virtual file named "framework <name>", one "key=value" line
// per default, so its values are read by the very code that reads a scenario's own (and a value
// the table got wrong would be reported like any other bad value).
std::vector<std::string> apply_framework(Node& root) {
  std::vector<std::string> filled;
  Entry* te = root.kind == Node::Kind::map ? root.find("training") : nullptr;
  if (!te || te->value->kind != Node::Kind::map) return filled;  // the converter reports these
  if (!te->value->find("framework")) return filled;
  const Fields training(*te->value, te->key_mark, "training", "training", section_keys("training"));
  const auto name = training.choice("framework", core::framework_names());
  if (!name) return filled;
  const core::Framework& fw = *core::find_framework(*name);
  const Mark at = training.get("framework")->value->mark;

  std::string text;
  for (const auto& d : fw.defaults) text.append(d.key).append("=").append(d.value).append("\n");
  const SourcePtr src = make_source("framework " + *name, "", text);
  // a key the scenario (or a --set) wrote, as text; "" when absent
  auto written = [&](std::string_view dotted) -> std::string {
    const Node* n = &root;
    std::size_t start = 0;
    while (n && n->kind == Node::Kind::map) {
      const std::size_t dot = dotted.find('.', start);
      const Entry* e = n->find(std::string(dotted.substr(start, dot == std::string_view::npos ? dot : dot - start)));
      if (!e) return {};
      if (dot == std::string_view::npos) return e->value->kind == Node::Kind::scalar ? e->value->text : std::string();
      n = e->value.get();
      start = dot + 1;
    }
    return {};
  };
  int line = 0;
  for (const auto& d : fw.defaults) {
    ++line;
    if (!d.when.empty()) {
      const std::string v = written(d.when);
      if (v.empty() || v == "none" || v == "~" || v == "null") continue;
    }
    const std::string key(d.key);
    NodePtr value = parse_fragment(std::string(d.value), src, line, static_cast<int>(key.size()) + 2);
    if (put_path(root, key, value, at, /*replace=*/false)) filled.push_back(key);
  }
  return filled;
}

}  // namespace ptdsim::io::detail
