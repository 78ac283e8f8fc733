#include <algorithm>
#include <memory>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "schema.hpp"

namespace ptdsim::io {

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw core::ConfigError(core::SourceLocation{"--set", 0, 0},
                            "expected KEY=VALUE (e.g. parallel.tp=4), got \"" + text + "\"");
  }
  return Override{text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace ptdsim::io

namespace ptdsim::io::detail {

// The overrides form a small virtual file named "--set", one line per override ("key=value"), so
// their errors read like any other: "--set:2:11: error: parallel.tp must be a positive integer".
void apply_overrides(Node& root, const std::vector<Override>& overrides) {
  if (overrides.empty()) return;
  std::string text;
  for (const auto& o : overrides) text += o.key + "=" + o.value + "\n";
  SourcePtr src = make_source("--set", "", text);
  const auto& paths = all_paths();

  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const Override& o = overrides[i];
    int line = static_cast<int>(i) + 1;
    Mark at{src, line, 1};
    int value_column = static_cast<int>(o.key.size()) + 2;
    if (o.origin) {
      // written in a file: its problems point there, at the value
      auto file = std::make_shared<SourceText>();
      file->name = o.origin->file;
      file->dir = o.origin->dir;
      file->lines.assign(static_cast<std::size_t>(std::max(o.origin->line, 1)), std::string());
      file->lines.back() = o.origin->source_line;
      line = o.origin->line;
      value_column = o.origin->column;
      at = Mark{file, line, value_column};
    }
    if (std::find(paths.begin(), paths.end(), o.key) == paths.end()) {
      std::string msg = "unknown key '" + o.key + "'";
      std::string best = core::closest_match(o.key, paths);
      if (!best.empty()) msg += "; did you mean '" + best + "'?";
      // every unknown --set at once when collecting; the override itself is left out
      Collector* c = Collector::current();
      if (!c) fail(at, msg);
      c->add({diagnostic(at, msg)});
      continue;
    }
    NodePtr value = parse_fragment(o.value, at.src, line, value_column);
    put_path(root, o.key, value, at, /*replace=*/true);
  }
}

bool put_path(Node& root, const std::string& key, const NodePtr& value, const Mark& at, bool replace) {
  Node* cur = &root;
  std::string path;
  std::size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    path += (path.empty() ? "" : ".") + part;
    Entry* e = cur->find(part);
    if (dot == std::string::npos) {
      if (!e) {
        cur->entries.push_back(Entry{part, at, value});
      } else if (replace || e->value->kind == Node::Kind::null) {
        e->value = value;
        e->key_mark = at;  // cross-field problems about this key now point at the new value's origin
      } else {
        return false;
      }
      return true;
    }
    if (!e) {
      cur->entries.push_back(Entry{part, at, std::make_shared<Node>()});
      e = &cur->entries.back();
    }
    if (e->value->kind == Node::Kind::null) {
      e->value = std::make_shared<Node>();
      e->value->kind = Node::Kind::map;
      e->value->mark = at;
    } else if (e->value->kind == Node::Kind::scalar && (path == "model" || path == "hardware")) {
      resolve_include(*e);
    }
    expect_map(*e->value, e->key_mark, path);
    cur = e->value.get();
    start = dot + 1;
  }
}

}  // namespace ptdsim::io::detail
