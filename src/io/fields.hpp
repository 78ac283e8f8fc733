#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptdsim/core/names.hpp"
#include "schema.hpp"
#include "yaml_tree.hpp"

// Typed, range-checked reads of one YAML mapping. Every key of the mapping must be in the
// section's key list (else "unknown key 'x' in <section>; did you mean 'y'?"); a required key is
// checked for presence before it is read (yaml-cpp's own missing-node error has no position);
// a null value reads as absent. Messages name keys by their dotted path ("parallel.tp"). Numbers
// are checked against their key's Bound in the schema (bound_of): the one place ranges are stated.
namespace ptdsim::io::detail {

class Fields {
 public:
  // `where`: the position to blame for the mapping as a whole (its key in the parent, or the file).
  // `prefix`: the dotted path of the mapping ("" at a scenario's root). `section`: its name in
  // "unknown key ... in <section>".
  Fields(const Node& node, const Mark& where, std::string prefix, std::string section,
         std::vector<std::string> keys);

  const Entry* get(std::string_view key) const;  // null when absent or null
  const Entry& require(std::string_view key) const;
  std::string path(std::string_view key) const;
  const Mark& where() const { return where_; }

  // Integers and numbers in the range bound_of(path(key)) gives.
  std::optional<long long> integer(std::string_view key) const;
  long long integer(std::string_view key, long long fallback) const;
  long long required_integer(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;
  double number(std::string_view key, double fallback) const;
  double required_number(std::string_view key) const;

  std::optional<bool> boolean(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback) const { return boolean(key).value_or(fallback); }
  std::optional<std::string> string(std::string_view key) const;
  std::string required_string(std::string_view key) const;

  // One of `choices`; "x must be one of a, b, got "c"; did you mean 'b'?"
  std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& choices) const;

  std::string required_choice(std::string_view key, const std::vector<std::string>& choices) const;

  template <class E>
  std::optional<E> enumeration(std::string_view key, int count) const {
    auto s = choice(key, names_of<E>(count));
    if (!s) return std::nullopt;
    return core::parse<E>(*s);
  }
  template <class E>
  E required_enumeration(std::string_view key, int count) const {
    return *core::parse<E>(required_choice(key, names_of<E>(count)));
  }

 private:
  template <class E>
  static std::vector<std::string> names_of(int count) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.emplace_back(core::name(static_cast<E>(i)));
    return names;
  }
  std::string choice_of(const Entry& e, std::string_view key, const std::vector<std::string>& choices) const;

  const Node& node_;
  Mark where_;
  std::string prefix_;
  std::string section_;
};

// Reads scalar `n` as the value of the key at dotted `path` (its name in messages, "[N]" included),
// in the range bound_of(path) gives.
long long read_integer(const Node& n, const std::string& path);
double read_number(const Node& n, const std::string& path);

// Fails unless `n` is a mapping: "<what> must be a mapping, got a list".
void expect_map(const Node& n, const Mark& where, const std::string& what);

// "unknown key 'x' in <section>" plus "; did you mean 'y'?" when one is close.
std::string unknown_key_message(const std::string& key, const std::string& section,
                                const std::vector<std::string>& candidates);

}  // namespace ptdsim::io::detail
