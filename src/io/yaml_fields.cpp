#include "yaml_fields.hpp"

#include "ptdsim/core/count.hpp"
#include "ptdsim/core/join.hpp"

#include <cerrno>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <limits>
#include <map>

namespace ptdsim::io::detail {

std::optional<double> parse_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  if (text == ".inf" || text == ".Inf" || text == ".INF" || text == "+.inf")
    return std::numeric_limits<double>::infinity();
  // "nan", "inf", "infinity" and hex floats are not YAML numbers
  for (char c : text) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' ||
          c == '-'))
      return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  if (errno == ERANGE && std::isinf(v)) return v;  // "1e999": a number, out of every range
  return v;
}

namespace {

const Mark& value_mark(const Node& n, const Mark& key_mark) {
  return n.mark.line > 0 ? n.mark : key_mark;
}

std::string integer_kind(long long min, long long max) {
  if (max - min < 16) return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return "an integer of at least " + std::to_string(min);
}

std::string number_kind(Bound::Kind k) {
  switch (k) {
    case Bound::Kind::positive: return "a positive number";
    case Bound::Kind::non_negative: return "a non-negative number";
    case Bound::Kind::fraction: return "a number in (0, 1]";
    case Bound::Kind::at_least_one: return "a number of at least 1";
    case Bound::Kind::integer: break;
  }
  return "a number";
}

// 8192, 0.001, 1e+08: whole numbers in full, the rest as %g
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 0x1p53) return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string with_unit(double v, const char* unit) {
  return number_text(v) + (*unit ? std::string(" ") + unit : std::string());
}

}  // namespace

std::string unknown_key_message(const std::string& key, const std::string& section,
                                const std::vector<std::string>& candidates) {
  std::string msg = "unknown key '" + key + "' in " + section;
  std::string best = core::closest_match(key, candidates);
  if (!best.empty()) msg += "; did you mean '" + best + "'?";
  return msg;
}

void expect_map(const Node& n, const Mark& where, const std::string& what) {
  if (n.kind != Node::Kind::map) fail(value_mark(n, where), what + " must be a mapping, got " + describe(n));
}

long long read_integer(const Node& n, const std::string& path) { return read_integer(n, path, path); }

long long read_json_integer(const Node& n, const std::string& path, std::string_view range_of) {
  if (n.kind == Node::Kind::scalar && n.quoted)
    fail(n.mark, path + " must be a JSON integer, got the string " + describe(n));
  // (a fraction that is not zero gets read_integer()'s message: no integer at all)
  if (const auto v = n.kind == Node::Kind::scalar && !n.quoted ? parse_number(n.text) : std::nullopt;
      v && n.text.find_first_of(".eE") != std::string::npos && *v == std::floor(*v))
    fail(n.mark, path + " must be a JSON integer, got " + describe(n) + ", which Python's json reads as a float (" +
                     "transformers' config declares an int): write it without a fraction or an exponent");
  return read_integer(n, path, range_of);
}

long long read_integer(const Node& n, const std::string& path, std::string_view range_of) {
  const Bound& b = bound_of(range_of);
  const auto min = static_cast<long long>(b.min), max = static_cast<long long>(b.max);
  std::optional<double> v;
  if (n.kind == Node::Kind::scalar) v = parse_number(n.text);
  const std::string got = ", got " + describe(n);
  if (!v || *v != std::floor(*v) || *v < b.min || (std::isinf(*v) && *v < 0))
    fail(n.mark, path + " must be " + integer_kind(min, max) + got);
  if (*v > b.max) {
    if (max - min < 16) fail(n.mark, path + " must be " + integer_kind(min, max) + got);
    fail(n.mark, path + " must be at most " + number_text(b.max) + got);
  }
  return static_cast<long long>(*v);
}

double read_number(const Node& n, const std::string& path) {
  const Bound& b = bound_of(path);
  std::optional<double> v;
  if (n.kind == Node::Kind::scalar) v = parse_number(n.text);
  bool ok = v.has_value() && (b.infinity_ok ? !std::isnan(*v) && *v != -INFINITY : std::isfinite(*v));
  if (ok) {
    switch (b.kind) {
      case Bound::Kind::positive: ok = *v > 0; break;
      case Bound::Kind::non_negative: ok = *v >= 0; break;
      case Bound::Kind::fraction: ok = *v > 0 && *v <= 1; break;
      case Bound::Kind::at_least_one: ok = *v >= 1; break;
      case Bound::Kind::integer: break;
    }
  }
  const std::string got = ", got " + describe(n);
  if (!ok) fail(n.mark, path + " must be " + number_kind(b.kind) + got);
  if (*v < b.min) fail(n.mark, path + " must be at least " + with_unit(b.min, b.unit) + got);
  if (*v > b.max && !(b.infinity_ok && std::isinf(*v)))
    fail(n.mark, path + " must be at most " + with_unit(b.max, b.unit) + got);
  return *v;
}

namespace {
thread_local Collector* current_collector = nullptr;
}  // namespace

Collector::Collector() : outer_(current_collector) { current_collector = this; }
Collector::~Collector() { current_collector = outer_; }
Collector* Collector::current() { return current_collector; }

void Collector::add(const std::vector<core::Diagnostic>& ds) {
  for (const auto& d : ds) {
    const bool seen = std::any_of(problems_.begin(), problems_.end(), [&](const core::Diagnostic& p) {
      return p.where.file == d.where.file && p.where.line == d.where.line &&
             p.where.column == d.where.column && p.message == d.message;
    });
    if (!seen) problems_.push_back(d);
  }
}

void Collector::throw_if_any() const {
  if (problems_.empty()) return;
  std::map<std::string, std::size_t> file_order;
  for (const auto& p : problems_) file_order.emplace(p.where.file, file_order.size());
  std::vector<core::Diagnostic> sorted = problems_;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const core::Diagnostic& a, const core::Diagnostic& b) {
    const auto fa = file_order.at(a.where.file), fb = file_order.at(b.where.file);
    if (fa != fb) return fa < fb;
    if (a.where.line != b.where.line) return a.where.line < b.where.line;
    return a.where.column < b.where.column;
  });
  throw core::ConfigError(std::move(sorted));
}

Fields::Fields(const Node& node, const Mark& where, std::string prefix, std::string section,
               std::vector<std::string> keys)
    : node_(node), where_(where), prefix_(std::move(prefix)), section_(std::move(section)) {
  expect_map(node, where, prefix_.empty() ? section_ : prefix_);
  // every unknown key of the mapping at once
  std::vector<core::Diagnostic> unknown;
  for (const auto& e : node.entries) {
    bool known = false;
    for (const auto& k : keys) known = known || k == e.key;
    if (known) continue;
    unknown.push_back(diagnostic(e.key_mark, unknown_key_message(e.key, section_, keys)));
    unknown_ = true;
    if (std::string best = core::closest_match(e.key, keys); !best.empty()) suggested_.push_back(best);
  }
  if (unknown.empty()) return;
  if (Collector* c = Collector::current()) {
    c->add(unknown);
  } else {
    throw core::ConfigError(std::move(unknown));
  }
}

std::string Fields::path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

const Entry* Fields::get(std::string_view key) const {
  const Entry* e = node_.find(key);
  if (!e || e->value->kind == Node::Kind::null) return nullptr;
  return e;
}

const Entry& Fields::require(std::string_view key) const {
  const Entry* e = node_.find(key);
  if (e) return *e;
  // "unknown key 'layres'; did you mean 'layers'?" already says it: no second message
  if (Collector::current() && std::find(suggested_.begin(), suggested_.end(), key) != suggested_.end())
    throw core::ConfigError(std::vector<core::Diagnostic>{});
  fail(where_, "missing required key '" + std::string(key) + "' in " + section_);
}

bool Fields::json_string(const Node& n, std::string_view key, const char* wanted) const {
  if (!json_ || !n.quoted) return false;
  collected<bool>([&]() -> bool { fail(n.mark, path(key) + " must be a JSON " + wanted + ", got the string " + describe(n)); },
                  false);
  return true;
}

long long Fields::read(const Node& n, const std::string& path, std::string_view range_of) const {
  return json_ ? read_json_integer(n, path, range_of) : read_integer(n, path, range_of);
}

std::optional<long long> Fields::integer(std::string_view key) const {
  const Entry* e = get(key);
  if (!e || json_string(*e->value, key, "number")) return std::nullopt;
  return collected<std::optional<long long>>([&] { return read(*e->value, path(key), path(key)); }, std::nullopt);
}
long long Fields::integer(std::string_view key, long long fallback) const {
  return integer(key).value_or(fallback);
}
long long Fields::required_integer(std::string_view key) const {
  // the placeholder is inside the key's range: it is never used, the collected problem is thrown first
  const auto placeholder = static_cast<long long>(std::max(1.0, bound_of(path(key)).min));
  if (const Entry* e = get(key); e && json_string(*e->value, key, "number")) return placeholder;
  return collected<long long>([&] { return read(*require(key).value, path(key), path(key)); }, placeholder);
}

std::optional<long long> Fields::integer_as(std::string_view key, std::string_view as) const {
  const Entry* e = get(key);
  if (!e || json_string(*e->value, key, "number")) return std::nullopt;
  return collected<std::optional<long long>>([&] { return read(*e->value, path(key), as); }, std::nullopt);
}
long long Fields::required_integer_as(std::string_view key, std::string_view as) const {
  const auto placeholder = static_cast<long long>(std::max(1.0, bound_of(as).min));
  if (const Entry* e = get(key); e && json_string(*e->value, key, "number")) return placeholder;
  return collected<long long>([&] { return read(*require(key).value, path(key), as); }, placeholder);
}

std::optional<double> Fields::number(std::string_view key) const {
  const Entry* e = get(key);
  if (!e || json_string(*e->value, key, "number")) return std::nullopt;
  return collected<std::optional<double>>([&] { return read_number(*e->value, path(key)); }, std::nullopt);
}
double Fields::number(std::string_view key, double fallback) const {
  return number(key).value_or(fallback);
}
double Fields::required_number(std::string_view key) const {
  // the placeholder is inside the key's range: it is never used, the collected problem is thrown first
  return collected<double>([&] { return read_number(*require(key).value, path(key)); },
                           std::max(1.0, bound_of(path(key)).min));
}

std::optional<double> Fields::count(std::string_view key) const {
  const Entry* e = get(key);
  if (!e) return std::nullopt;
  return collected<std::optional<double>>(
      [&]() -> std::optional<double> {
        const Node& n = *e->value;
        std::optional<double> v;
        if (n.kind == Node::Kind::scalar) v = core::parse_count(n.text);
        const Bound& bound = bound_of(path(key));
        if (!v || *v < 1 || *v > bound.max)
          fail(n.mark, path(key) + " must be a count of at least 1 and at most " + number_text(bound.max) +
                           " (a number, or one with a suffix K, M, B or T such as 15T), got " + describe(n));
        return v;
      },
      std::nullopt);
}

std::optional<bool> Fields::boolean(std::string_view key) const {
  const Entry* e = get(key);
  if (!e || json_string(*e->value, key, "boolean")) return std::nullopt;
  const Node& n = *e->value;
  if (n.kind == Node::Kind::scalar) {
    if (n.text == "true" || n.text == "True" || n.text == "TRUE") return true;
    if (n.text == "false" || n.text == "False" || n.text == "FALSE") return false;
  }
  return collected<std::optional<bool>>(
      [&]() -> std::optional<bool> { fail(n.mark, path(key) + " must be true or false, got " + describe(n)); },
      std::nullopt);
}

std::optional<std::string> Fields::string(std::string_view key) const {
  const Entry* e = get(key);
  if (!e) return std::nullopt;
  return collected<std::optional<std::string>>(
      [&]() -> std::optional<std::string> {
        if (e->value->kind != Node::Kind::scalar)
          fail(value_mark(*e->value, e->key_mark), path(key) + " must be a string, got " + describe(*e->value));
        return e->value->text;
      },
      std::nullopt);
}

std::string Fields::required_string(std::string_view key) const {
  return collected<std::string>(
      [&] {
        const Entry& e = require(key);
        if (e.value->kind != Node::Kind::scalar)
          fail(value_mark(*e.value, e.key_mark), path(key) + " must be a string, got " + describe(*e.value));
        return e.value->text;
      },
      std::string());
}

std::optional<std::string> Fields::choice(std::string_view key, const std::vector<std::string>& choices) const {
  const Entry* e = get(key);
  if (!e) return std::nullopt;
  return collected<std::optional<std::string>>([&] { return choice_of(*e, key, choices); }, std::nullopt);
}

int Fields::choice_index(std::string_view key, const std::vector<std::string>& choices) const {
  const std::optional<std::string> c = choice(key, choices);
  return c ? static_cast<int>(std::find(choices.begin(), choices.end(), *c) - choices.begin()) : -1;
}

std::string Fields::required_choice(std::string_view key, const std::vector<std::string>& choices) const {
  return collected<std::string>([&] { return choice_of(require(key), key, choices); }, choices.front());
}

std::string Fields::choice_of(const Entry& e, std::string_view key,
                              const std::vector<std::string>& choices) const {
  const Node& n = *e.value;
  if (n.kind == Node::Kind::scalar) {
    for (const auto& c : choices)
      if (c == n.text) return c;
  }
  std::string msg = path(key) + " must be one of " + core::joined(choices) + ", got " + describe(n);
  if (n.kind == Node::Kind::scalar) {
    std::string best = core::closest_match(n.text, choices);
    if (!best.empty()) msg += "; did you mean '" + best + "'?";
  }
  fail(value_mark(n, e.key_mark), msg);
}

}  // namespace ptdsim::io::detail
