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

// Collects problems instead of stopping at the first (docs/inputs.md "Errors"): while a Collector
// lives on this thread, Fields records every unknown key and every bad or missing value it reads
// and carries on as if the value were absent (a required one takes a placeholder), so one run
// reports them all; run() then throws everything collected, with whatever stopped the loader
// last. Collectors nest: the innermost collects. A mapping that is not a mapping, a missing section
// and the loaders' own cross-key checks still stop the loader at once, since what follows would
// only repeat them.
class Collector {
 public:
  Collector();
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  static Collector* current();  // null when nothing collects
  void add(const std::vector<core::Diagnostic>& ds);
  bool empty() const { return problems_.empty(); }
  // Throws what was collected, if anything (file by file in the order first seen, by position).
  void throw_if_any() const;

  // f() with this collector current; its result, or a ConfigError of everything collected.
  template <class F>
  auto run(F&& f) -> decltype(f()) {
    std::optional<core::ConfigError> stopped;
    try {
      auto result = f();
      throw_if_any();
      return result;
    } catch (const core::ConfigError& e) {
      stopped = e;
    }
    add(stopped->diagnostics());
    throw_if_any();
    throw *stopped;  // not reached: f stopped with an error, or with none beside a collected one
  }

 private:
  std::vector<core::Diagnostic> problems_;
  Collector* outer_;
};

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
  // Whether the mapping had keys it may not hold (collected, when a Collector is active): a check
  // such as "give at least one" is then left to the user's fix of that key.
  bool has_unknown() const { return !suggested_.empty() || unknown_; }
  // A JSON file's fields: a quoted scalar is a string, refused where a number or a boolean is read
  // (Python's json gives a str, which transformers would not take for one); YAML's "8" stays 8.
  void json_types() { json_ = true; }

  // Integers and numbers in the range bound_of(path(key)) gives.
  std::optional<long long> integer(std::string_view key) const;
  long long integer(std::string_view key, long long fallback) const;
  long long required_integer(std::string_view key) const;
  // An imported file's field that becomes the ptdsim key `as` (config.json's num_hidden_layers is
  // model.layers): read in `as`'s range, named by its own key in messages.
  std::optional<long long> integer_as(std::string_view key, std::string_view as) const;
  long long required_integer_as(std::string_view key, std::string_view as) const;
  std::optional<double> number(std::string_view key) const;
  double number(std::string_view key, double fallback) const;
  double required_number(std::string_view key) const;

  // A count such as training.tokens: a number or one with a K/M/B/T suffix (core::parse_count), >= 1.
  std::optional<double> count(std::string_view key) const;

  std::optional<bool> boolean(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback) const { return boolean(key).value_or(fallback); }
  std::optional<std::string> string(std::string_view key) const;
  std::string required_string(std::string_view key) const;

  // One of `choices`; "x must be one of a, b, got "c"; did you mean 'b'?"
  std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& choices) const;
  // The same as its index in `choices`; -1 when the key is absent.
  int choice_index(std::string_view key, const std::vector<std::string>& choices) const;

  std::string required_choice(std::string_view key, const std::vector<std::string>& choices) const;

  template <class E>
  std::optional<E> enumeration(std::string_view key, int count) const {
    auto s = choice(key, core::names_of<E>(count));
    if (!s) return std::nullopt;
    return core::parse<E>(*s);
  }
  template <class E>
  E required_enumeration(std::string_view key, int count) const {
    return *core::parse<E>(required_choice(key, core::names_of<E>(count)));
  }

 private:
  std::string choice_of(const Entry& e, std::string_view key, const std::vector<std::string>& choices) const;
  // read(), or, while a Collector collects, `fallback` with read()'s problem recorded.
  template <class T, class Read>
  T collected(Read&& read, T fallback) const {
    Collector* c = Collector::current();
    if (!c) return read();
    try {
      return read();
    } catch (const core::ConfigError& e) {
      c->add(e.diagnostics());
      return fallback;
    }
  }

  const Node& node_;
  Mark where_;
  bool unknown_ = false;
  bool json_ = false;
  // A JSON string where a number or a boolean is read: failed (collected) at it.
  bool json_string(const Node& n, std::string_view key, const char* wanted) const;
  // An integer field's value: read_json_integer() in a JSON file, read_integer() otherwise.
  long long read(const Node& n, const std::string& path, std::string_view range_of) const;
  std::vector<std::string> suggested_;  // what unknown keys were taken for ("did you mean 'x'")
  std::string prefix_;
  std::string section_;
};

// Reads scalar `n` as the value of the key at dotted `path` (its name in messages, "[N]" included),
// in the range bound_of(path) gives.
long long read_integer(const Node& n, const std::string& path);
// The same, in the range of the key `range_of` (an importer's field read as the key it becomes).
long long read_integer(const Node& n, const std::string& path, std::string_view range_of);
// The same for a JSON value: a number with a fraction or an exponent (8192.0, 1e3) is a float to
// Python's json, which transformers' config classes keep where they declare an int, so it is
// refused even when integral; so is a string ("8192").
long long read_json_integer(const Node& n, const std::string& path, std::string_view range_of);
// The whole text as a YAML number, or nothing (strtod alone accepts "8abc", leading blanks, "nan"
// and hex).
std::optional<double> parse_number(const std::string& text);
double read_number(const Node& n, const std::string& path);

// Fails unless `n` is a mapping: "<what> must be a mapping, got a list".
void expect_map(const Node& n, const Mark& where, const std::string& what);

// "unknown key 'x' in <section>" plus "; did you mean 'y'?" when one is close.
std::string unknown_key_message(const std::string& key, const std::string& section,
                                const std::vector<std::string>& candidates);

}  // namespace ptdsim::io::detail
