// The study file's reader (docs/study.md "The study file"): base scenarios, `set`, `vary` with
// lists and ranges, `zip`, and the sweep's options. Every problem is collected and thrown together,
// each at its line:col of the study file.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "schema.hpp"
#include "ptdsim/core/version.hpp"
#include "ptdsim/io/study.hpp"

namespace ptdsim::io {
namespace {

using detail::Mark;
using detail::Node;

const std::vector<std::string> kTopKeys{"base",    "set",     "vary",   "zip",    "objective",
                                        "top",     "min_free_gib", "degrees", "search", "heatmap"};
const std::vector<std::string> kObjectives{"time", "memory", "mfu", "days", "gpu_hours", "energy", "cost"};
// sweep's degree options, without their dashes
const std::vector<std::string> kDegreeKeys{"tp",     "pp",     "cp",     "ep",     "dp",      "vpp",
                                           "micro_batch", "zero", "max_tp", "max_pp", "max_cp", "max_ep",
                                           "max_vpp", "max_micro_batch"};
const std::vector<std::string> kSearchable{"overlap.tp", "overlap.dp", "overlap.pp", "recompute", "zero",
                                           "sequence_parallel", "schedule"};

struct Problems {
  std::vector<core::Diagnostic> list;
  void add(const Mark& at, const std::string& message) { list.push_back(detail::diagnostic(at, message)); }
};

std::uint64_t fnv1a(std::uint64_t h, std::string_view text) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::optional<double> number_of(std::string_view t) {
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "80" or "1e3": as written; a value a range computed: an integer without a decimal point, else
// the shortest text that reads back as the same double.
std::string text_of(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// "1024..16384 x2" (times 2), "10..50 +10" (plus 10), "1..8" (plus 1): every value from the first
// up to the last, inclusive. nullopt with a reason in `why` for text that is a range but a bad one;
// nullopt with `why` empty for text that is no range.
std::optional<std::vector<double>> expand_range(const std::string& text, std::string& why) {
  const auto dots = text.find("..");
  if (dots == std::string::npos) return std::nullopt;
  const std::string lo_text = trim(std::string_view(text).substr(0, dots));
  std::string rest = trim(std::string_view(text).substr(dots + 2));
  std::string step_text;
  char op = '+';
  if (const auto sp = rest.find(' '); sp != std::string::npos) {
    step_text = trim(std::string_view(rest).substr(sp + 1));
    rest = trim(std::string_view(rest).substr(0, sp));
    if (step_text.empty() || (step_text[0] != 'x' && step_text[0] != '+')) {
      why = "a range's step is 'xF' (times F) or '+S' (plus S), e.g. '1024..16384 x2', got '" + step_text + "'";
      return std::nullopt;
    }
    op = step_text[0];
    step_text = step_text.substr(1);
  }
  const auto lo = number_of(lo_text), hi = number_of(rest);
  const auto step = step_text.empty() ? std::optional<double>(1.0) : number_of(step_text);
  if (!lo || !hi || !step) {
    why = "a range is 'FIRST..LAST', 'FIRST..LAST xF' or 'FIRST..LAST +S' with numbers, got '" + text + "'";
    return std::nullopt;
  }
  if (*hi < *lo) {
    why = "a range's last value " + rest + " is below its first " + lo_text;
    return std::nullopt;
  }
  if (op == 'x' && (*step <= 1 || *lo <= 0)) {
    why = "a range 'FIRST..LAST xF' needs F above 1 and FIRST above 0, got '" + text + "'";
    return std::nullopt;
  }
  if (op == '+' && *step <= 0) {
    why = "a range's step +S needs S above 0, got '" + text + "'";
    return std::nullopt;
  }
  std::vector<double> values;
  const double tolerance = 1e-9 * std::max(std::fabs(*hi), 1.0);
  double v = *lo;
  for (std::uint64_t k = 0; v <= *hi + tolerance; ++k) {
    if (values.size() >= kMaxRangeValues) {
      why = fmt::format("the range '{}' has more than {} values", text, kMaxRangeValues);
      return std::nullopt;
    }
    values.push_back(v);
    // each value from the first, not from the last, so no rounding error accumulates
    v = op == 'x' ? v * *step : *lo + static_cast<double>(k + 1) * *step;
  }
  return values;
}

std::string source_line(const Mark& m) {
  if (!m.src || m.line <= 0 || m.line > static_cast<int>(m.src->lines.size())) return "";
  return m.src->lines[static_cast<std::size_t>(m.line - 1)];
}

Override positioned(const std::string& key, const std::string& value, const Mark& at) {
  Override o{key, value};
  o.origin = Override::Origin{at.src ? at.src->name : std::string(), at.src ? at.src->dir : std::string(),
                              source_line(at), at.line, at.column};
  return o;
}

// A knob's values: a scalar (one value or a range) or a list of scalars and ranges.
// `check`: the indices of the values worth loading a scenario with, all but a range's inner values
// (the same type, inside its ends' range).
std::vector<Override> values_of(const std::string& key, const Node& n, const Mark& key_mark, Problems& problems,
                                std::vector<std::size_t>& check) {
  std::vector<Override> out;
  auto one = [&](const Node& v) {
    if (v.kind != Node::Kind::scalar) {
      problems.add(v.kind == Node::Kind::null ? key_mark : v.mark,
                   "vary." + key + ": each value is a scalar or a range such as '1024..16384 x2', got " +
                       detail::describe(v));
      return;
    }
    std::string why;
    if (const auto range = expand_range(v.text, why)) {
      check.push_back(out.size());
      for (double x : *range) out.push_back(positioned(key, text_of(x), v.mark));
      if (range->size() > 1) check.push_back(out.size() - 1);
    } else if (!why.empty()) {
      problems.add(v.mark, "vary." + key + ": " + why);
    } else {
      check.push_back(out.size());
      out.push_back(positioned(key, v.text, v.mark));
    }
  };
  if (n.kind == Node::Kind::list) {
    if (n.items.empty()) problems.add(n.mark, "vary." + key + " has no values");
    for (const auto& item : n.items) one(*item);
  } else {
    one(n);
  }
  return out;
}

// sweep's LIST syntax ("4,8", "4..16", "1,8..32"), or for a max_* key one positive integer.
bool degree_ok(const std::string& key, const std::string& text) {
  auto positive = [](std::string_view t) {
    int v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return ec == std::errc() && end == t.data() + t.size() && v >= 0 && v <= (1 << 24);
  };
  if (key.starts_with("max_")) return positive(text) && text != "0";
  if (text.empty()) return false;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto dots = part.find("..");
    if (dots == std::string::npos) {
      if (!positive(part)) return false;
    } else if (!positive(part.substr(0, dots)) || !positive(part.substr(dots + 2))) {
      return false;
    }
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

// base: one scenario or a list of them; where each is written, for a file that does not open.
void read_bases(const Node& root, const Mark& whole, const std::string& dir, StudySpec& spec,
                std::vector<Mark>& base_marks, Problems& problems) {
  const auto* base = root.find("base");
  if (!base || base->value->kind == Node::Kind::null) {
    problems.add(whole, "a study needs 'base': a scenario file, or a list of them");
  } else {
    std::vector<const Node*> items;
    if (base->value->kind == Node::Kind::list) {
      for (const auto& i : base->value->items) items.push_back(i.get());
      if (items.empty()) problems.add(base->key_mark, "base lists no scenario");
    } else {
      items.push_back(base->value.get());
    }
    for (const Node* i : items) {
      if (i->kind != Node::Kind::scalar || i->text.empty()) {
        problems.add(i->kind == Node::Kind::null ? base->key_mark : i->mark,
                     "base: a scenario file's path, got " + detail::describe(*i));
        continue;
      }
      spec.base_names.push_back(i->text);
      base_marks.push_back(i->mark);
      spec.bases.push_back(detail::resolve_path(dir, i->text));
    }
  }
}

// A key --set takes, else a problem naming the nearest.
bool known_key(const std::string& key, const Mark& at, const std::string& section, Problems& problems) {
  const auto& paths = detail::all_paths();
  if (std::find(paths.begin(), paths.end(), key) != paths.end()) return true;
  std::string msg = section + ": unknown key '" + key + "'";
  if (const std::string best = core::closest_match(key, paths); !best.empty()) msg += "; did you mean '" + best + "'?";
  problems.add(at, msg);
  return false;
}

// set: one value per key, on every point.
void read_set(const Node& root, StudySpec& spec, Problems& problems) {
  if (const auto* set = root.find("set"); set && set->value->kind != Node::Kind::null) {
    if (set->value->kind != Node::Kind::map) {
      problems.add(set->key_mark, "set: a mapping of keys --set takes to one value each, got " + detail::describe(*set->value));
    } else {
      for (const auto& e : set->value->entries) {
        if (!known_key(e.key, e.key_mark, "set", problems)) continue;
        if (e.value->kind != Node::Kind::scalar) {
          problems.add(e.value->kind == Node::Kind::null ? e.key_mark : e.value->mark,
                       "set." + e.key + ": one value, got " + detail::describe(*e.value));
          continue;
        }
        spec.set.push_back(positioned(e.key, e.value->text, e.value->mark));
      }
    }
  }
}

// vary: the knobs and their values; per knob, the values a scenario must be loaded with to check
// them. The entry, for a problem about the whole grid (null when absent).
const detail::Entry* read_vary(const Node& root, const Mark& whole, StudySpec& spec,
                               std::vector<std::vector<std::size_t>>& to_check, Problems& problems) {
  const auto* vary = root.find("vary");
  if (!vary || vary->value->kind == Node::Kind::null) {
    problems.add(whole, "a study needs 'vary': keys --set takes and their values");
  } else if (vary->value->kind != Node::Kind::map) {
    problems.add(vary->key_mark, "vary: a mapping of keys to their values, got " + detail::describe(*vary->value));
  } else {
    for (const auto& e : vary->value->entries) {
      if (!known_key(e.key, e.key_mark, "vary", problems)) continue;
      std::vector<std::size_t> check;
      auto values = values_of(e.key, *e.value, e.key_mark, problems, check);
      if (values.empty()) continue;
      spec.vary.push_back(StudyKnob{e.key, std::move(values)});
      to_check.push_back(std::move(check));
    }
  }
  return vary;
}

// zip: groups of knobs that take their values together; then the study's dimensions, a knob or a
// group each, in vary's order.
void read_zip(const Node& root, StudySpec& spec, Problems& problems) {
  std::vector<int> group_of(spec.vary.size(), -1);
  std::vector<std::vector<std::size_t>> groups;
  if (const auto* zip = root.find("zip"); zip && zip->value->kind != Node::Kind::null) {
    std::vector<const Node*> lists;
    if (zip->value->kind == Node::Kind::list && !zip->value->items.empty() &&
        zip->value->items.front()->kind == Node::Kind::scalar) {
      lists.push_back(zip->value.get());  // one group written flat: zip: [a, b]
    } else if (zip->value->kind == Node::Kind::list) {
      for (const auto& g : zip->value->items) lists.push_back(g.get());
    } else {
      problems.add(zip->key_mark, "zip: a list of keys of vary (or a list of such lists), got " + detail::describe(*zip->value));
    }
    for (const Node* g : lists) {
      if (g->kind != Node::Kind::list || g->items.size() < 2) {
        problems.add(g->kind == Node::Kind::null ? zip->key_mark : g->mark,
                     "zip: each group lists at least two keys of vary, got " + detail::describe(*g));
        continue;
      }
      std::vector<std::size_t> group;
      for (const auto& k : g->items) {
        const auto it = std::find_if(spec.vary.begin(), spec.vary.end(),
                                     [&](const StudyKnob& knob) { return k->kind == Node::Kind::scalar && knob.key == k->text; });
        if (it == spec.vary.end()) {
          problems.add(k->mark, "zip: " + detail::describe(*k) + " is not a key of vary");
          continue;
        }
        const auto i = static_cast<std::size_t>(it - spec.vary.begin());
        if (group_of[i] >= 0) {
          problems.add(k->mark, "zip: '" + k->text + "' is already in a group");
          continue;
        }
        if (!group.empty() && spec.vary[i].values.size() != spec.vary[group.front()].values.size()) {
          problems.add(k->mark, fmt::format("zip: '{}' has {} values and '{}' {}; zipped keys need as many each",
                                            k->text, spec.vary[i].values.size(), spec.vary[group.front()].key,
                                            spec.vary[group.front()].values.size()));
          continue;
        }
        group_of[i] = static_cast<int>(groups.size());
        group.push_back(i);
      }
      if (!group.empty()) groups.push_back(std::move(group));
    }
  }
  for (std::size_t i = 0; i < spec.vary.size(); ++i) {
    if (group_of[i] < 0) {
      spec.dims.push_back({i});
    } else if (groups[static_cast<std::size_t>(group_of[i])].front() == i) {
      spec.dims.push_back(groups[static_cast<std::size_t>(group_of[i])]);
    }
  }
}

// objective, top, min_free_gib, degrees, search, heatmap: how each point's sweep runs and is drawn.
void read_options(const Node& root, StudySpec& spec, Problems& problems) {
  if (const auto* o = root.find("objective"); o && o->value->kind != Node::Kind::null) {
    if (o->value->kind != Node::Kind::scalar ||
        std::find(kObjectives.begin(), kObjectives.end(), o->value->text) == kObjectives.end()) {
      problems.add(o->value->mark, "objective: one of time, memory, mfu, days, gpu_hours, energy, cost; got " +
                                       detail::describe(*o->value));
    } else {
      spec.objective = o->value->text;
    }
  }
  if (const auto* t = root.find("top"); t && t->value->kind != Node::Kind::null) {
    const auto v = t->value->kind == Node::Kind::scalar ? number_of(t->value->text) : std::nullopt;
    if (!v || *v != std::floor(*v) || *v < 1 || *v > 1000)
      problems.add(t->value->mark, "top: the layouts kept per point, an integer from 1 to 1000; got " + detail::describe(*t->value));
    else
      spec.top = static_cast<int>(*v);
  }
  if (const auto* m = root.find("min_free_gib"); m && m->value->kind != Node::Kind::null) {
    const auto v = m->value->kind == Node::Kind::scalar ? number_of(m->value->text) : std::nullopt;
    if (!v || *v < 0 || *v > 1e6)
      problems.add(m->value->mark, "min_free_gib: GiB left free on every GPU, from 0 to 1e6; got " + detail::describe(*m->value));
    else
      spec.min_free_gib = *v;
  }
  if (const auto* d = root.find("degrees"); d && d->value->kind != Node::Kind::null) {
    if (d->value->kind != Node::Kind::map) {
      problems.add(d->key_mark, "degrees: a mapping such as {tp: '4,8', pp: '4..16'}, got " + detail::describe(*d->value));
    } else {
      for (const auto& e : d->value->entries) {
        if (std::find(kDegreeKeys.begin(), kDegreeKeys.end(), e.key) == kDegreeKeys.end()) {
          std::string msg = "unknown key '" + e.key + "' in degrees";
          if (const std::string best = core::closest_match(e.key, kDegreeKeys); !best.empty()) msg += "; did you mean '" + best + "'?";
          problems.add(e.key_mark, msg);
        } else if (e.value->kind != Node::Kind::scalar || !degree_ok(e.key, e.value->text)) {
          problems.add(e.value->kind == Node::Kind::null ? e.key_mark : e.value->mark,
                       "degrees." + e.key +
                           (e.key.starts_with("max_") ? ": a positive integer" : ": positive integers and ranges such as 4,8 or 4..16") +
                           ", got " + detail::describe(*e.value));
        } else {
          spec.degrees[e.key] = e.value->text;
        }
      }
    }
  }
  if (const auto* s = root.find("search"); s && s->value->kind != Node::Kind::null) {
    std::vector<const Node*> items;
    if (s->value->kind == Node::Kind::list)
      for (const auto& i : s->value->items) items.push_back(i.get());
    else
      items.push_back(s->value.get());
    for (const Node* i : items) {
      if (i->kind != Node::Kind::scalar || std::find(kSearchable.begin(), kSearchable.end(), i->text) == kSearchable.end())
        problems.add(i->kind == Node::Kind::null ? s->key_mark : i->mark,
                     "search: overlap.tp, overlap.dp, overlap.pp, recompute, zero, sequence_parallel or schedule; got " +
                         detail::describe(*i));
      else
        spec.search.push_back(i->text);
    }
  }
  if (const auto* h = root.find("heatmap"); h && h->value->kind != Node::Kind::null) {
    const Node& n = *h->value;
    if (n.kind != Node::Kind::list || n.items.size() != 2) {
      problems.add(n.mark, "heatmap: two keys of vary, the columns' then the rows', got " + detail::describe(n));
    } else {
      for (const auto& k : n.items) {
        const auto it = std::find_if(spec.vary.begin(), spec.vary.end(), [&](const StudyKnob& knob) {
          return k->kind == Node::Kind::scalar && knob.key == k->text;
        });
        if (it == spec.vary.end())
          problems.add(k->mark, "heatmap: " + detail::describe(*k) + " is not a key of vary");
        else
          spec.heatmap.push_back(static_cast<std::size_t>(it - spec.vary.begin()));
      }
      if (spec.heatmap.size() == 2 && spec.heatmap[0] == spec.heatmap[1])
        problems.add(n.items[1]->mark, "heatmap: two different keys");
    }
  }
}

// Every point's count, capped.
void check_point_count(const StudySpec& spec, const Mark& vary_at) {
  std::uint64_t n = spec.bases.size();
  for (const auto& dim : spec.dims) {
    const std::uint64_t len = spec.vary[dim.front()].values.size();
    if (n > kMaxStudyPoints / len) {
      detail::fail(vary_at, fmt::format("the study has more than {} points", kMaxStudyPoints));
    }
    n *= len;
  }
}

// Each value as --set would read it (types, ranges, files that do not open), and `set` on each base;
// the study's hash, of the version, the bases' paths and texts.
std::uint64_t check_values(const StudySpec& spec, const std::vector<Mark>& base_marks,
                           const std::vector<std::vector<std::size_t>>& to_check, Problems& problems) {
  std::uint64_t h = fnv1a(14695981039346656037ULL, std::string("ptdsim study ") + core::kVersion);
  for (std::size_t b = 0; b < spec.bases.size(); ++b) {
    const std::string& path = spec.bases[b];
    const auto text = detail::read_file(path, base_marks[b]);
    h = fnv1a(fnv1a(h, path), text);
    auto check = [&](std::vector<Override> overrides) {
      try {
        (void)load_scenario(path, overrides, Checks::none);
      } catch (const core::ConfigError& e) {
        // a value wrong for one base is likely wrong for all: said once
        for (const auto& d : e.diagnostics())
          if (std::none_of(problems.list.begin(), problems.list.end(), [&](const core::Diagnostic& x) {
                return x.where.file == d.where.file && x.where.line == d.where.line &&
                       x.where.column == d.where.column && x.message == d.message;
              }))
            problems.list.push_back(d);
      }
    };
    check(spec.set);
    // a value's type and range do not depend on the base: the first one reads them all
    if (b > 0) continue;
    for (std::size_t k = 0; k < spec.vary.size(); ++k)
      for (std::size_t i : to_check[k]) {
        auto overrides = spec.set;
        overrides.push_back(spec.vary[k].values[i]);
        check(std::move(overrides));
      }
  }
  return h;
}

StudySpec read(const Node& root, const Mark& whole, const std::string& name, const std::string& dir) {
  StudySpec spec;
  spec.file = name;
  Problems problems;
  std::vector<Mark> base_marks;  // where each base is written: a file that does not open is told there
  if (root.kind != Node::Kind::map) detail::fail(whole, "a study is a mapping with base and vary, got " + detail::describe(root));
  for (const auto& e : root.entries) {
    if (std::find(kTopKeys.begin(), kTopKeys.end(), e.key) != kTopKeys.end()) continue;
    std::string msg = "unknown key '" + e.key + "' in a study";
    if (const std::string best = core::closest_match(e.key, kTopKeys); !best.empty()) msg += "; did you mean '" + best + "'?";
    problems.add(e.key_mark, msg);
  }

  read_bases(root, whole, dir, spec, base_marks, problems);
  read_set(root, spec, problems);
  std::vector<std::vector<std::size_t>> to_check;  // per knob, the values to load a scenario with
  const auto* vary = read_vary(root, whole, spec, to_check, problems);
  read_zip(root, spec, problems);
  read_options(root, spec, problems);
  if (!problems.list.empty()) throw core::ConfigError(std::move(problems.list));

  check_point_count(spec, vary->key_mark);

  const std::uint64_t h = check_values(spec, base_marks, to_check, problems);
  if (!problems.list.empty()) throw core::ConfigError(std::move(problems.list));
  spec.hash = fmt::format("{:016x}", h);
  return spec;
}

}  // namespace

std::uint64_t StudySpec::points() const {
  std::uint64_t n = bases.size();
  for (const auto& dim : dims) n *= vary[dim.front()].values.size();
  return n;
}

StudySpec::Point StudySpec::point(std::uint64_t index) const {
  Point p;
  p.value.assign(vary.size(), 0);
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    const std::uint64_t len = vary[d->front()].values.size();
    for (std::size_t k : *d) p.value[k] = static_cast<std::size_t>(index % len);
    index /= len;
  }
  p.base = static_cast<std::size_t>(index);
  return p;
}

std::vector<Override> StudySpec::overrides(const Point& p) const {
  std::vector<Override> out = set;
  for (std::size_t k = 0; k < vary.size(); ++k) out.push_back(vary[k].values[p.value[k]]);
  return out;
}

StudySpec load_study(const std::string& path) {
  return detail::guarded(path, [&] {
    const auto text = detail::read_file(path, detail::Mark{});
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return load_study_from_string(text, path, dir.empty() ? "." : dir);
  });
}

StudySpec load_study_from_string(const std::string& text, const std::string& name, const std::string& base_dir) {
  return detail::guarded(name, [&] {
    auto root = detail::parse_yaml(text, detail::make_source(name, base_dir, text));
    StudySpec spec = read(*root, *root->document, name, base_dir);
    // the study's own text in its hash: another objective or top K is another study
    std::uint64_t h = std::stoull(spec.hash, nullptr, 16);
    spec.hash = fmt::format("{:016x}", fnv1a(h, text));
    return spec;
  });
}

}  // namespace ptdsim::io
