#include "yaml_tree.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace ptdsim::io::detail {
namespace {

// Deeper than any real input; stops alias cycles (`a: &x [*x]`) and stack exhaustion.
constexpr int kMaxDepth = 64;
// Aliases let a short text expand exponentially ("billion laughs"); real inputs have a few hundred nodes.
constexpr long kMaxNodes = 200000;
// 4 MiB: 50x the largest shipped input (the 79 KB validation dataset) and about the text of
// kMaxNodes nodes. yaml-cpp builds ~80 bytes of tree per byte of a row-like text at ~1 MB/s (a
// 27 MB file took 25 s and 2.2 GB), so larger texts are refused before parsing; files are read no
// further (an input of /dev/zero ends here too).
constexpr std::size_t kMaxTextBytes = std::size_t{4} << 20;

std::string too_large() {
  return "input too large: more than " + std::to_string(kMaxTextBytes) + " bytes (inputs are a few KB)";
}

std::string shorten(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= 40) {
      out += "...";
      break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

struct Converter {
  SourcePtr src;
  int line_offset;
  int column_offset;
  long nodes = 0;

  Mark mark_of(const YAML::Mark& m) const {
    if (m.line < 0 || m.column < 0) return Mark{src, 0, 0};
    return Mark{src, m.line + 1 + line_offset, m.column + 1 + (m.line == 0 ? column_offset : 0)};
  }

  NodePtr convert(const YAML::Node& y, int depth, const Mark& fallback) {
    auto n = std::make_shared<Node>();
    n->mark = mark_of(y.Mark());
    if (n->mark.line == 0) n->mark = fallback;
    if (depth > kMaxDepth) fail(n->mark, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    if (++nodes > kMaxNodes)
      fail(n->mark, "document too large (more than " + std::to_string(kMaxNodes) + " nodes after aliases)");
    switch (y.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        n->kind = Node::Kind::null;
        n->mark = fallback;  // yaml-cpp puts an empty value on the next token; the key is clearer
        break;
      case YAML::NodeType::Scalar:
        n->kind = Node::Kind::scalar;
        n->text = y.Scalar();
        break;
      case YAML::NodeType::Sequence:
        n->kind = Node::Kind::list;
        for (const auto& item : y) n->items.push_back(convert(item, depth + 1, n->mark));
        break;
      case YAML::NodeType::Map: {
        n->kind = Node::Kind::map;
        // key -> its entry, so the duplicate check stays linear (100k keys: a quadratic scan took 19 s)
        std::unordered_map<std::string, std::size_t> seen;
        for (const auto& kv : y) {
          Mark km = mark_of(kv.first.Mark());
          if (km.line == 0) km = n->mark;
          std::string key;
          if (kv.first.IsScalar()) {
            key = kv.first.Scalar();
          } else if (!kv.first.IsNull()) {
            fail(km, "mapping keys must be plain strings");
          }
          if (auto [it, fresh] = seen.emplace(key, n->entries.size()); !fresh) {
            fail(km, "duplicate key '" + shorten(key) + "' (first at line " +
                         std::to_string(n->entries[it->second].key_mark.line) + ")");
          }
          Entry e;
          e.key = key;
          e.key_mark = km;
          e.value = convert(kv.second, depth + 1, km);
          n->entries.push_back(std::move(e));
        }
        break;
      }
    }
    return n;
  }
};

}  // namespace

SourcePtr make_source(std::string name, std::string dir, const std::string& text) {
  auto s = std::make_shared<SourceText>();
  s->name = std::move(name);
  s->dir = std::move(dir);
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    s->lines.push_back(line);
  }
  return s;
}

// Control bytes (binary input, NULs in a yaml-cpp message) would garble a terminal; one '?'
// each keeps the caret under the right column.
static std::string printable(std::string s) {
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) c = '?';
  }
  return s;
}

core::Diagnostic diagnostic(const Mark& at, std::string message) {
  core::Diagnostic d;
  d.where.file = at.src ? at.src->name : std::string("<input>");
  d.where.line = at.line;
  d.where.column = at.column;
  d.message = printable(std::move(message));
  if (at.src && at.line > 0 && at.line <= static_cast<int>(at.src->lines.size())) {
    d.source_line = printable(at.src->lines[static_cast<std::size_t>(at.line - 1)]);
  }
  return d;
}

void fail(const Mark& at, std::string message) {
  throw core::ConfigError(std::vector<core::Diagnostic>{diagnostic(at, std::move(message))});
}

Entry* Node::find(std::string_view key) {
  for (auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}
const Entry* Node::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const Mark& where_of(const Entry& e) {
  return e.value->document ? *e.value->document : e.key_mark;
}

namespace {
NodePtr parse(const std::string& text, const SourcePtr& src, int line_offset, int column_offset,
              const Mark& whole) {
  if (text.size() > kMaxTextBytes) fail(whole, too_large());
  Converter c{src, line_offset, column_offset};
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard against stack exhaustion trips first on flow nesting ("[[[[..."); its
    // message is "bad file"
    fail(c.mark_of(e.mark), "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  } catch (const YAML::Exception& e) {
    Mark m = c.mark_of(e.mark);
    if (m.line == 0) m = Mark{src, 1 + line_offset, 1 + column_offset};
    if (m.line > static_cast<int>(src->lines.size()) && !src->lines.empty()) {
      // at the end of the text: point just past the last line, where the missing ']' would go
      m.line = static_cast<int>(src->lines.size());
      m.column = static_cast<int>(src->lines.back().size()) + 1;
    }
    std::string msg = "invalid YAML: " + e.msg;
    // yaml-cpp reports a tab in indentation as some other error further on; say what it is
    if (m.line >= 1 && m.line <= static_cast<int>(src->lines.size())) {
      const std::string& l = src->lines[static_cast<std::size_t>(m.line - 1)];
      const auto indent = l.find_first_not_of(" \t");
      if (l.substr(0, indent).find('\t') != std::string::npos)
        msg = "invalid YAML: a tab in the indentation (YAML indents with spaces only)";
    }
    fail(m, msg);
  } catch (const std::exception& e) {
    fail(Mark{src, 0, 0}, std::string("invalid YAML: ") + e.what());
  }
  if (docs.empty()) {
    auto n = std::make_shared<Node>();
    n->mark = whole;
    n->document = whole;
    return n;
  }
  if (docs.size() > 1) {
    Mark m = c.mark_of(docs[1].Mark());
    fail(m, "expected one YAML document, found " + std::to_string(docs.size()));
  }
  try {
    NodePtr root = c.convert(docs[0], 0, whole);
    root->document = whole;
    return root;
  } catch (const core::ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    fail(whole, std::string("invalid YAML: ") + e.what());
  }
}
}  // namespace

NodePtr parse_yaml(const std::string& text, const SourcePtr& src) {
  return parse(text, src, 0, 0, Mark{src, 0, 0});
}

NodePtr parse_fragment(const std::string& text, const SourcePtr& src, int line, int column) {
  return parse(text, src, line - 1, column - 1, Mark{src, line, column});
}

std::string read_file(const std::string& path, const Mark& from) {
  std::error_code ec;
  bool ok = !std::filesystem::is_directory(path, ec);
  std::string content;
  if (ok) {
    std::ifstream in(path, std::ios::binary);
    ok = static_cast<bool>(in);
    if (ok) {
      // one byte past the limit says "too large" without reading the rest
      content.resize(kMaxTextBytes + 1);
      in.read(content.data(), static_cast<std::streamsize>(content.size()));
      ok = !in.bad();
      content.resize(static_cast<std::size_t>(in.gcount()));
    }
  }
  const Mark whole = from.src ? from : Mark{make_source(path, "", ""), 0, 0};
  if (!ok) fail(whole, from.src ? "cannot open file '" + path + "'" : std::string("cannot open file"));
  if (content.size() > kMaxTextBytes)
    fail(whole, from.src ? "'" + path + "': " + too_large() : too_large());
  return content;
}

NodePtr parse_file(const std::string& path, const Mark& from) {
  std::string text = read_file(path, from);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_yaml(text, make_source(path, dir.empty() ? "." : dir, text));
}

std::string resolve_path(const std::string& dir, const std::string& written) {
  std::filesystem::path p(written);
  if (p.is_absolute() || dir.empty() || dir == ".") return p.lexically_normal().string();
  return (std::filesystem::path(dir) / p).lexically_normal().string();
}

std::string describe(const Node& n) {
  switch (n.kind) {
    case Node::Kind::null: return "nothing";
    case Node::Kind::list: return "a list";
    case Node::Kind::map: return "a mapping";
    case Node::Kind::scalar: break;
  }
  return "\"" + shorten(n.text) + "\"";
}

}  // namespace ptdsim::io::detail
