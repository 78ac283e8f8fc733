#include "yaml_tree.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

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

Mark mark_in(const SourcePtr& src, int line_offset, int column_offset, const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return Mark{src, 0, 0};
  return Mark{src, m.line + 1 + line_offset, m.column + 1 + (m.line == 0 ? column_offset : 0)};
}

// Builds the tree from yaml-cpp's parser events (not through YAML::Node, whose LoadAll loops
// forever on a stray ',' in yaml-cpp 0.7, jbeder/yaml-cpp#1040, and costs ~80 bytes per input byte).
// Keeps each node's and key's mark; refuses duplicate keys (hashed: linear in the keys), non-string
// keys, nesting past kMaxDepth, aliases to a node still open (a cycle) and more than kMaxNodes nodes
// after alias expansion. The first such problem is kept and building stops (the rest of the events
// cost nothing); it is raised once the parse is through, so a syntax error anywhere in the text is
// what gets reported (yaml-cpp emits a few odd events before it notices an unclosed '[').
class Builder : public YAML::EventHandler {
 public:
  Builder(SourcePtr src, int line_offset, int column_offset, Mark whole, const std::string* text = nullptr)
      : src_(std::move(src)), line_offset_(line_offset), column_offset_(column_offset), whole_(std::move(whole)),
        text_(text) {}

  NodePtr root() const { return root_; }
  const std::optional<core::Diagnostic>& problem() const { return problem_; }
  const YAML::Mark& start() const { return start_; }

  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    if (problem_) return;
    auto n = make(Node::Kind::null, fallback());  // yaml-cpp puts an empty value on the next token; the key is clearer
    finish(n, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (problem_) return;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end() || open(it->second))
      return refuse(at(mark), "an alias names the node it is inside of (a cycle)");
    if (auto n = copy(*it->second, depth(), at(mark))) attach(n);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    if (problem_) return;
    // yaml-cpp takes a quote that is never closed (`name: "gpt3`) to run to the end of the text,
    // and the keys after it vanish into the string: said here, at the quote, before any schema error
    if (text_ && mark.pos >= 0 && !closed(static_cast<std::size_t>(mark.pos))) {
      refuse(at(mark), std::string("invalid YAML: unclosed quote: the string starting here has no closing ") +
                           (*text_)[static_cast<std::size_t>(mark.pos)] + " (it ran to the end of the file)");
      return;
    }
    auto n = make(Node::Kind::scalar, at(mark));
    if (!n) return;
    n->text = value;
    if (text_ && mark.pos >= 0 && static_cast<std::size_t>(mark.pos) < text_->size()) {
      const char first = (*text_)[static_cast<std::size_t>(mark.pos)];
      n->quoted = first == '"' || first == '\'';
    }
    finish(n, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    begin(Node::Kind::list, mark, anchor);
  }
  void OnSequenceEnd() override {
    if (!problem_) end();
  }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    begin(Node::Kind::map, mark, anchor);
  }
  void OnMapEnd() override {
    if (!problem_) end();
  }

 private:
  struct Frame {
    NodePtr node;
    bool has_key = false;  // maps: the key of the next value was read
    Entry pending;         // maps: that key
    std::unordered_map<std::string, std::size_t> seen;  // maps: key -> its entry
  };

  Mark at(const YAML::Mark& m) const {
    const Mark out = mark_in(src_, line_offset_, column_offset_, m);
    return out.line > 0 ? out : fallback();
  }
  // Where a node without a position of its own is blamed: its key, its list, or the document.
  Mark fallback() const {
    if (stack_.empty()) return whole_;
    const Frame& f = stack_.back();
    return f.has_key ? f.pending.key_mark : f.node->mark;
  }
  int depth() const { return static_cast<int>(stack_.size()); }
  bool open(const NodePtr& n) const {
    for (const auto& f : stack_)
      if (f.node == n) return true;
    return false;
  }

  // Whether a scalar starting at `pos` is plain, or quoted with its closing quote in the text
  // (double quotes end at an unescaped '"', single quotes at a ' not doubled).
  bool closed(std::size_t pos) const {
    const std::string& t = *text_;
    if (pos >= t.size() || (t[pos] != '"' && t[pos] != '\'')) return true;
    const char q = t[pos];
    for (std::size_t i = pos + 1; i < t.size(); ++i) {
      if (q == '"' && t[i] == '\\') {
        ++i;
      } else if (t[i] == q) {
        if (q == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
          ++i;
          continue;
        }
        return true;
      }
    }
    return false;
  }

  void refuse(const Mark& mark, const std::string& message) {
    if (!problem_) problem_ = diagnostic(mark, message);
  }

  // A new node, or null (and the problem kept) past the depth or node limits.
  NodePtr make(Node::Kind kind, const Mark& mark) {
    if (depth() > kMaxDepth) {
      refuse(mark, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      return nullptr;
    }
    if (++nodes_ > kMaxNodes) {
      refuse(mark, "document too large (more than " + std::to_string(kMaxNodes) + " nodes after aliases)");
      return nullptr;
    }
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->mark = mark;
    return n;
  }

  // An alias is a copy of what its anchor names, counted node by node like the text itself.
  // Null (and the problem kept, blamed on the alias) past the limits.
  NodePtr copy(const Node& from, int at_depth, const Mark& alias) {
    if (at_depth > kMaxDepth) {
      refuse(alias, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      return nullptr;
    }
    if (++nodes_ > kMaxNodes) {
      refuse(alias, "document too large (more than " + std::to_string(kMaxNodes) + " nodes after aliases)");
      return nullptr;
    }
    auto n = std::make_shared<Node>();
    n->kind = from.kind;
    n->text = from.text;
    n->mark = from.mark;
    for (const auto& item : from.items) {
      auto c = copy(*item, at_depth + 1, alias);
      if (!c) return nullptr;
      n->items.push_back(c);
    }
    for (const auto& e : from.entries) {
      auto c = copy(*e.value, at_depth + 1, alias);
      if (!c) return nullptr;
      n->entries.push_back(Entry{e.key, e.key_mark, c});
    }
    return n;
  }

  void begin(Node::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (problem_) return;
    if (!stack_.empty() && stack_.back().node->kind == Node::Kind::map && !stack_.back().has_key)
      return refuse(at(mark), "mapping keys must be plain strings");
    auto n = make(kind, at(mark));
    if (!n) return;
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    stack_.push_back(Frame{n, false, {}, {}});
  }
  void end() {
    NodePtr n = stack_.back().node;
    stack_.pop_back();
    attach(n);
  }
  void finish(const NodePtr& n, YAML::anchor_t anchor) {
    if (!n) return;
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    attach(n);
  }

  // Puts a complete node where the parser is: the root, a list item, a map key or a map value.
  void attach(const NodePtr& n) {
    if (stack_.empty()) {
      root_ = n;
      return;
    }
    Frame& f = stack_.back();
    if (f.node->kind == Node::Kind::list) {
      f.node->items.push_back(n);
      return;
    }
    if (!f.has_key) {
      if (n->kind == Node::Kind::list || n->kind == Node::Kind::map)
        return refuse(n->mark, "mapping keys must be plain strings");
      f.pending = Entry{n->kind == Node::Kind::scalar ? n->text : std::string(), n->mark, nullptr};
      if (n->kind != Node::Kind::scalar) f.pending.key_mark = f.node->mark;  // a null key
      if (auto [it, fresh] = f.seen.emplace(f.pending.key, f.node->entries.size()); !fresh)
        return refuse(f.pending.key_mark, "duplicate key '" + shorten(f.pending.key) + "' (first at line " +
                                              std::to_string(f.node->entries[it->second].key_mark.line) + ")");
      f.has_key = true;
      return;
    }
    f.pending.value = n;
    f.node->entries.push_back(std::move(f.pending));
    f.pending = Entry{};
    f.has_key = false;
  }

  SourcePtr src_;
  int line_offset_;
  int column_offset_;
  Mark whole_;
  const std::string* text_ = nullptr;  // the parsed text, where scalars' quotes are checked
  NodePtr root_;
  YAML::Mark start_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, NodePtr> anchors_;
  long nodes_ = 0;
  std::optional<core::Diagnostic> problem_;
};

// Sees a further document without building it: where it starts, where its first node is.
class Probe : public YAML::EventHandler {
 public:
  YAML::Mark start, first;
  bool has_first = false;
  void OnDocumentStart(const YAML::Mark& m) override { start = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { see(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { see(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { see(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override { see(m); }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    see(m);
  }
  void OnMapEnd() override {}

 private:
  void see(const YAML::Mark& m) {
    if (!has_first) first = m;
    has_first = true;
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
  auto mark_of = [&](const YAML::Mark& m) { return mark_in(src, line_offset, column_offset, m); };
  std::istringstream in(text);
  Builder builder(src, line_offset, column_offset, whole, &text);
  bool any = false;
  int documents = 0;
  Mark second;
  try {
    YAML::Parser parser(in);
    any = parser.HandleNextDocument(builder);
    if (any) {
      documents = 1;
      YAML::Mark previous = builder.start();
      for (Probe p; parser.HandleNextDocument(p); p = Probe{}) {
        // a document that consumed nothing: yaml-cpp 0.7 would return it forever (a stray ',')
        if (p.start.pos == previous.pos) {
          const auto pos = static_cast<std::size_t>(p.start.pos);
          fail(mark_of(p.start), "invalid YAML: unexpected '" +
                                     std::string(1, pos < text.size() ? text[pos] : '?') + "'");
        }
        if (++documents == 2) second = mark_of(p.has_first ? p.first : p.start);
        previous = p.start;
      }
    }
  } catch (const core::ConfigError&) {
    throw;
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard against stack exhaustion (its message is "bad file")
    fail(mark_of(e.mark), "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  } catch (const YAML::Exception& e) {
    Mark m = mark_of(e.mark);
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
  if (builder.problem()) throw core::ConfigError(std::vector<core::Diagnostic>{*builder.problem()});
  if (documents > 1) fail(second, "expected one YAML document, found " + std::to_string(documents));
  NodePtr root = any ? builder.root() : nullptr;
  if (!root) {
    root = std::make_shared<Node>();
    root->mark = whole;
  }
  root->document = whole;
  return root;
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
  // appended, not "\"" + ... + "\"": GCC 12 warns a false -Wrestrict on that once inlined
  std::string out = "\"";
  out += shorten(n.text);
  out += '"';
  return out;
}

}  // namespace ptdsim::io::detail
