#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptdsim/core/error.hpp"

// A YAML document as a small owned tree that remembers, for every node and every mapping key,
// the file and 1-based line:col it came from. yaml-cpp stays behind this header: the loaders,
// the override code and the cross-field error mapping all work on this tree, so a model file
// included from a scenario (or a value given with --set) keeps its own file name in messages.
namespace ptdsim::io::detail {

struct SourceText {
  std::string name;                // as shown in messages
  std::string dir;                 // relative paths written in this text resolve against it
  std::vector<std::string> lines;  // for the source line under a diagnostic
};
using SourcePtr = std::shared_ptr<const SourceText>;

SourcePtr make_source(std::string name, std::string dir, const std::string& text);

struct Mark {
  SourcePtr src;
  int line = 0;  // 0: the file as a whole
  int column = 0;
};

core::Diagnostic diagnostic(const Mark& at, std::string message);
[[noreturn]] void fail(const Mark& at, std::string message);

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Entry {
  std::string key;
  Mark key_mark;
  NodePtr value;
};

struct Node {
  enum class Kind { null, scalar, list, map };
  Kind kind = Kind::null;
  std::string text;             // scalars
  bool quoted = false;          // a scalar written in quotes: a string, where a JSON file is read
  std::vector<NodePtr> items;   // lists
  std::vector<Entry> entries;   // mappings, in file order
  Mark mark;
  // Set on the root of a parsed document: the position that stands for the whole of it (line 0
  // of a file, or the --set that gave it), blamed for keys missing from it.
  std::optional<Mark> document;

  Entry* find(std::string_view key);
  const Entry* find(std::string_view key) const;
};

// The position to blame for the mapping under `e` as a whole: the document when `e` holds an
// included file's root, else the key.
const Mark& where_of(const Entry& e);

// Parses one YAML document. Syntax errors, duplicate keys, non-string keys, nesting deeper than a
// fixed limit (aliases can make cycles) and documents that expand past a size limit all throw
// ConfigError. An empty text gives a null node.
NodePtr parse_yaml(const std::string& text, const SourcePtr& src);
// The same for a one-line fragment (the value of a --set) starting at `line`:`column` of `src`.
NodePtr parse_fragment(const std::string& text, const SourcePtr& src, int line, int column);

// Reads a whole file; throws ConfigError "cannot open file '<path>'" at `from` (line 0 of `path`
// itself when from.src is null).
std::string read_file(const std::string& path, const Mark& from);

// Parses a file into a tree whose marks name `path`; relative paths inside resolve against its
// directory.
NodePtr parse_file(const std::string& path, const Mark& from);

// `written` relative to `dir` (unless absolute), lexically normalised for messages.
std::string resolve_path(const std::string& dir, const std::string& written);

// For "got ...": a quoted, shortened scalar, or "a list", "a mapping", "nothing".
std::string describe(const Node& n);

}  // namespace ptdsim::io::detail
