#pragma once
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "yaml_fields.hpp"
#include "import_yaml.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/join.hpp"

// A Megatron-LM command line's arguments as `ptdsim import megatron` reads them: the flags argparse
// would take (megatron/training/arguments.py), each at its column in the argument string, sorted
// into the classes docs/inputs.md "Importing a Megatron-LM command line" lists.
namespace ptdsim::io::megatron {

// Flags that change the model or the step in a way ptdsim does not model: refused, with why, rather
// than written as a file that times another run. (Those it can read in one setting are read there:
// --recompute-method uniform with --recompute-num-layers 1 recomputes every layer, as
// recompute: full does.)
// What a flag the importer does not read takes after it, as argparse's kind says: nothing (a
// switch), one value, or a list (the words up to the next flag).
enum class Takes { nothing, value, list };

struct Refused {
  const char* flag;
  const char* why;
  Takes takes = Takes::value;
};

// Flags that change the step in a way ptdsim does not model but that a run's time does not hinge on
// ptdsim knowing (or that it times one way whatever they say): read as the step without them, each
// with a warning saying what is left out, rather than refused: NVIDIA's own MoE recipes set them all.
struct Unmodelled {
  const char* flag;
  Takes takes;
  const char* why;
};

// Why the CUDA-graph flags are not modelled, one text for them all (nothing is said of them under
// --cuda-graph-impl none).
extern const char kNoHost[];

bool among(const std::vector<std::string>& list, const std::string& s);

struct Flag {
  std::string value;  // "" for a switch or a list
  detail::Mark at;            // the value (or the flag, for a switch or a list)
  struct Item {
    std::string text;
    detail::Mark at;
  };
  std::vector<Item> items;  // a list flag's values, each at its word
};

class Arguments {
 public:
  // The words of `text` (the argument string, as one line of `src`) sorted into the flags read, the
  // ignored, refused, unmodelled and unknown ones; a flag that needs a value and has none fails.
  Arguments(const std::string& text, const detail::SourcePtr& src);

  // A flag's value as a YAML scalar at the flag's position, for the schema's typed readers.
  static detail::Node scalar(const Flag& f) {
    detail::Node n;
    n.kind = detail::Node::Kind::scalar;
    n.text = f.value;
    n.mark = f.at;
    return n;
  }
  bool has(const std::string& flag) const { return flags_.count(flag) > 0; }
  // The values of a flag given again before its last, in order: argparse checks the type and choices
  // of every occurrence, so the typed readers here check them as they check the last.
  const std::vector<Flag>& earlier(const std::string& flag) const {
    static const std::vector<Flag> none;
    auto it = earlier_.find(flag);
    return it == earlier_.end() ? none : it->second;
  }
  // Every occurrence of the flag, the last one last; none when it is absent.
  std::vector<const Flag*> every(const std::string& flag) const {
    std::vector<const Flag*> all;
    if (!get(flag)) return all;
    for (const Flag& e : earlier(flag)) all.push_back(&e);
    all.push_back(get(flag));
    return all;
  }
  const Flag* get(const std::string& flag) const {
    auto it = flags_.find(flag);
    return it == flags_.end() ? nullptr : &it->second;
  }
  // Where the flag's value is, for an error about the key it became; nowhere when it is absent.
  detail::Mark at(const std::string& flag) const { return get(flag) ? get(flag)->at : detail::Mark{}; }
  // A flag's value, in the range of the ptdsim key `as` it becomes (src/io/schema.cpp).
  std::optional<long long> wide(const std::string& flag, std::string_view as) const {
    const Flag* f = get(flag);
    if (!f) return std::nullopt;
    for (const Flag& e : earlier(flag)) detail::read_integer(scalar(e), flag, as);
    return detail::read_integer(scalar(*f), flag, as);
  }
  // A flag's decimal value as the text it was given, in the range of the ptdsim key `as`.
  std::optional<std::string> decimal(const std::string& flag, std::string_view as) const {
    const Flag* f = get(flag);
    if (!f) return std::nullopt;
    for (const Flag& e : earlier(flag)) detail::read_number(scalar(e), std::string(as));
    detail::read_number(scalar(*f), std::string(as));
    return f->value;
  }
  // every `as` key read through here has a range inside int's (src/io/schema.cpp)
  std::optional<int> integer(const std::string& flag, std::string_view as) const {
    if (auto v = wide(flag, as)) return static_cast<int>(*v);
    return std::nullopt;
  }
  // The tokens `value` units of `flag`'s value, failing at the flag when they exceed training.tokens's range.
  std::string tokens(const std::string& flag, long long value, double per_unit) const {
    const double tokens = static_cast<double>(value) * per_unit;
    const double most = detail::bound_of("training.tokens").max;
    if (tokens > most)
    {
      char text[96];
      std::snprintf(text, sizeof text, " gives %.3g tokens, above training.tokens's most (%.3g)", tokens, most);
      detail::fail(get(flag)->at, flag + text);
    }
    return detail::yaml_int(static_cast<long long>(tokens));
  }
  int required(const std::string& flag, std::string_view as) const {
    if (auto v = integer(flag, as)) return *v;
    // a misspelling of it among the unknown flags: named at its place, with the fix
    for (const auto& u : unknown_)
      if (core::closest_match(u.word, {flag}) == flag)
        detail::fail(u.at, "unknown flag " + u.word + ": did you mean " + flag + "? (missing " + flag +
                               ", which a model needs)");
    detail::fail(detail::Mark{src_, 0, 0}, "missing " + flag + " (a model needs it)");
  }
  std::string choice(const std::string& flag, const std::vector<std::string>& choices, const std::string& fallback) const {
    const Flag* f = get(flag);
    if (!f) return fallback;
    for (const Flag* e : every(flag))
      if (!among(choices, e->value))
        detail::fail(e->at, flag + " must be one of " + core::joined(choices) + ", got \"" + e->value + "\"");
    return f->value;
  }
  const std::vector<std::string>& ignored() const { return ignored_; }
  struct Word {
    std::string word;
    detail::Mark at;
  };
  const std::vector<Word>& unknown() const { return unknown_; }
  // A flag given again, at the later one: argparse keeps the last value or list, as here (a refused
  // or unmodelled flag too: its last value is the one refused or warned of).
  const std::vector<Word>& repeated() const { return repeated_; }
  // A refused or unmodelled flag as given: its value (a list's words, blank-separated) and why.
  template <class Why>
  struct Given {
    std::string flag, value;
    detail::Mark at;
    const Why* why;
  };
  using RefusedFlag = Given<Refused>;
  using UnmodelledFlag = Given<Unmodelled>;
  const std::vector<RefusedFlag>& refused_flags() const { return refused_; }
  const RefusedFlag* refused_flag(const std::string& flag) const { return named(refused_, flag); }
  const std::vector<UnmodelledFlag>& unmodelled_flags() const { return unmodelled_; }
  const UnmodelledFlag* unmodelled_flag(const std::string& flag) const { return named(unmodelled_, flag); }

 private:
  template <class Entry>
  static const Entry* named(const std::vector<Entry>& entries, const std::string& flag) {
    for (const auto& e : entries)
      if (e.flag == flag) return &e;
    return nullptr;
  }
  // A flag read given again at `at`: its earlier value kept for the checks, the repeat for the warning.
  void again(const std::string& flag, const detail::Mark& at);
  // A refused or unmodelled flag: given again, its last occurrence replaces the earlier one.
  template <class Entry>
  void last(std::vector<Entry>& entries, Entry entry);

  detail::SourcePtr src_;
  std::map<std::string, Flag> flags_;
  std::vector<std::string> ignored_;
  std::vector<Word> unknown_;
  std::vector<Word> repeated_;
  std::map<std::string, std::vector<Flag>> earlier_;
  std::vector<RefusedFlag> refused_;
  std::vector<UnmodelledFlag> unmodelled_;
};

// A count as YAML writes it.
std::string itext(long long v);
// Python's int() of a flag's text, as argparse's type=int reads it (blanks around, a sign, single
// underscores between digits, leading zeros); nothing when Python refuses it or past 18 digits.
std::optional<long long> python_int(const std::string& text);
// --moe-token-dispatcher-type (arguments.py's choices; unset, Megatron-Core's allgather)
std::string dispatcher(const Arguments& a);
// --transformer-impl local: Megatron-Core's own modules instead of TransformerEngine's
bool local_impl(const Arguments& a);
// Megatron-LM's virtual pipeline degree (arguments.py): the layers a pipeline stage holds (the
// embedding and the loss counted where the split counts them) over --num-layers-per-virtual-pipeline-stage;
// 1 without it (arguments.py then sets none, as it does for a degree of 1).
int virtual_stages(const Arguments& a, int layers);

}  // namespace ptdsim::io::megatron
