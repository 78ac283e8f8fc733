#include "ptdsim/planner/space.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <string_view>
#include <string>
#include <tuple>

#include "ptdsim/core/framework.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/split.hpp"

namespace ptdsim::planner {
namespace {

// The default list of a dimension cut at `max` (0: unbounded), or the user's pinned list
// intersected with the default (a pinned value the structure forbids, e.g. tp 3 with 96 heads
// on 1024 GPUs, simply yields no candidates). Pins win over maxima.
std::vector<int> choose(const std::vector<int>& allowed, const Choice& pinned, int max) {
  std::vector<int> out;
  if (pinned.empty()) {
    for (int v : allowed)
      if (max <= 0 || v <= max) out.push_back(v);
    return out;
  }
  Choice normal = pinned;
  if (!normal.normal) normal.normalize();
  for (int v : allowed)
    if (normal.admits(v)) out.push_back(v);
  return out;
}

// A choice as the options write it: "4,8,16..64".
std::string text(const Choice& c) {
  std::string out;
  auto add = [&](const std::string& x) {
    if (!out.empty()) out += ',';
    out += x;
  };
  for (int v : c.values) add(std::to_string(v));
  for (const auto& [lo, hi] : c.ranges) add(std::to_string(lo) + ".." + std::to_string(hi));
  // a message quotes a list, not 20,000 values of it
  if (out.size() > 60) out = out.substr(0, out.rfind(',', 60)) + ",...";
  return out;
}

// A switch's values: the base scenario's alone, or the searched list in a fixed order.
std::vector<bool> switch_values(const std::vector<bool>& searched, bool base) {
  if (searched.empty()) return {base};
  std::vector<bool> out;
  for (bool v : {false, true})
    if (std::find(searched.begin(), searched.end(), v) != searched.end()) out.push_back(v);
  return out;
}

template <class T>
std::vector<T> or_default(const std::vector<T>& pinned, std::vector<T> all) {
  if (pinned.empty()) return all;
  std::vector<T> out;
  for (const T& v : all)
    if (std::find(pinned.begin(), pinned.end(), v) != pinned.end()) out.push_back(v);
  return out;
}

template <class T>
std::optional<std::uint64_t> position(const std::vector<T>& values, const T& v) {
  const auto it = std::find(values.begin(), values.end(), v);
  if (it == values.end()) return std::nullopt;
  return static_cast<std::uint64_t>(it - values.begin());
}

// "tp 8 is outside the space (tp 1 2 4)": the values say which bound or pin excluded it.
std::string outside(const char* dim, int v, const std::vector<int>& values) {
  std::string out = dim;
  out += ' ';
  out += std::to_string(v);
  out += " is outside the space (";
  out += dim;
  for (int x : values) {
    out += ' ';
    out += std::to_string(x);
  }
  out += ')';
  return out;
}

// tp must divide the heads (Megatron splits attention by heads); kv_heads and ffn_hidden are
// left to core::check so that such layouts are counted as `divisibility`, not hidden.
std::vector<int> tp_values(const core::ModelSpec& m, const std::vector<int>& gpu_divisors, const SearchSpace& b) {
  std::vector<int> tp_allowed;
  for (int d : gpu_divisors)
    if (m.heads > 0 && m.heads % d == 0) tp_allowed.push_back(d);
  return choose(tp_allowed, b.tp, b.max_tp);
}

// ep divides the experts and the GPUs; a model without experts has ep 1.
std::vector<int> ep_values(const core::ModelSpec& m, int gpus, const SearchSpace& b) {
  std::vector<int> ep_allowed{1};
  if (m.moe && m.moe->experts > 0) {
    ep_allowed.clear();
    for (int d : divisors(m.moe->experts))
      if (gpus > 0 && gpus % d == 0) ep_allowed.push_back(d);
  }
  return choose(ep_allowed, b.ep, b.max_ep);
}

// etp splits each expert's FFN: a divisor of the GPUs and of the experts' ffn_hidden (the rest of
// Megatron-Core's rules, etp*ep dividing tp*cp*dp, are core::check's)
std::vector<int> etp_values(const core::ModelSpec& m, int base_etp, const std::vector<int>& gpu_divisors,
                            const SearchSpace& b) {
  if (b.etp.empty()) return {base_etp};
  std::vector<int> etp_allowed;
  if (m.moe && m.expert_ffn_hidden() > 0)
    for (int d : gpu_divisors)
      if (m.expert_ffn_hidden() % d == 0) etp_allowed.push_back(d);
  return choose(etp_allowed, b.etp, 0);
}

// vpp divides the layers, or the layers with the embedding and the loss counted as layers (the
// splits that matter, core::pipeline_split), and leaves every virtual stage of a pipeline (pp >= 2)
// a layer or an end's slot; vpp 1 is the plain schedules, vpp > 1 interleaved.
std::vector<std::pair<core::Schedule, int>> pipeline_values(const core::ModelSpec& m, const SearchSpace& b) {
  std::vector<std::pair<core::Schedule, int>> out;
  std::vector<int> vpp_divisors{1};
  for (int extra = 0; extra <= 2 && m.layers > 0; ++extra)
    for (int d : divisors(m.layers + extra))
      if (d <= (m.layers + extra) / 2) vpp_divisors.push_back(d);
  std::sort(vpp_divisors.begin(), vpp_divisors.end());
  vpp_divisors.erase(std::unique(vpp_divisors.begin(), vpp_divisors.end()), vpp_divisors.end());
  const std::vector<int> vpp_values = choose(vpp_divisors, b.vpp, b.max_vpp);
  const auto schedules = or_default(
      b.schedule, {core::Schedule::one_f_one_b, core::Schedule::gpipe, core::Schedule::zb_h1,
                   core::Schedule::interleaved});
  for (auto sched : schedules) {
    for (int v : vpp_values) {
      const bool interleaved = sched == core::Schedule::interleaved;
      if (interleaved == (v > 1)) out.emplace_back(sched, v);
    }
  }
  return out;
}

// The micro-batches: the global batch's divisors, up to --max-micro-batch or among those listed.
std::vector<int> micro_batch_values(int global_batch, const SearchSpace& b) {
  std::vector<int> out;
  if (b.micro_batch.empty()) {
    // a micro-batch that does not divide the global batch divides no micro_batch*dp either: the
    // list is bounded by the batch, not by the flag (--max-micro-batch 1000000 on a batch of 1536
    // lists its 20 divisors, not a million values)
    for (int v : divisors(std::max(1, global_batch)))
      if (v <= std::max(1, b.max_micro_batch)) out.push_back(v);
  } else {
    // only a divisor of the global batch divides it into micro_batch*dp pieces: the others could
    // only be rejected, once per layout (1.4 ms a value with a 20,000-value list), so the list is
    // cut to the batch's divisors it admits (an empty result is told by --micro-batch, Space::name_empty_dimension)
    Choice listed = b.micro_batch;
    listed.normalize();
    for (int v : divisors(std::max(1, global_batch)))
      if (listed.admits(v)) out.push_back(v);
  }
  return out;
}

}  // namespace

bool Choice::admits(int v) const {
  if (normal) {
    if (std::binary_search(values.begin(), values.end(), v)) return true;
    auto it = std::upper_bound(ranges.begin(), ranges.end(), std::make_pair(v, std::numeric_limits<int>::max()));
    return it != ranges.begin() && std::prev(it)->second >= v;
  }
  if (std::find(values.begin(), values.end(), v) != values.end()) return true;
  return std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first <= v && v <= r.second; });
}

void Choice::normalize() {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<int, int>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && static_cast<long long>(r.first) <= merged.back().second + 1LL)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  ranges = std::move(merged);
  normal = true;
}

std::optional<Choice> parse_choice(const std::string& text, int least) {
  // integers from `least` to 2^30: anything larger is no degree, micro-batch or ZeRO stage
  auto number = [least](std::string_view t) -> std::optional<int> {
    if (t.empty() || t.size() > 10 || t.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    long long v = 0;
    for (char ch : t) v = v * 10 + (ch - '0');
    if (v > (1LL << 30) || v < least) return std::nullopt;
    return static_cast<int>(v);
  };
  Choice c;
  std::size_t start = 0, items = 0;
  while (true) {
    if (++items > kMaxChoiceItems) return std::nullopt;
    const auto comma = text.find(',', start);
    const std::string_view item =
        std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (const auto dots = item.find(".."); dots != std::string_view::npos) {
      const auto lo = number(item.substr(0, dots)), hi = number(item.substr(dots + 2));
      if (!lo || !hi || *lo > *hi) return std::nullopt;
      c.ranges.emplace_back(*lo, *hi);
    } else {
      const auto v = number(item);
      if (!v) return std::nullopt;
      c.values.push_back(*v);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  c.normalize();
  return c;
}

const std::vector<std::string>& searchable_switches() {
  static const std::vector<std::string> names{"overlap.tp", "overlap.dp",        "overlap.pp", "recompute",
                                              "zero",       "sequence_parallel", "schedule",   "offload"};
  return names;
}

std::vector<std::string> search_switches(const std::vector<std::string>& names, SearchSpace& b) {
  std::vector<std::string> unknown;
  for (const auto& n : names) {
    if (n == "overlap.tp") b.overlap_tp = {false, true};
    else if (n == "overlap.dp") b.overlap_dp = {false, true};
    else if (n == "overlap.pp") b.overlap_pp = {false, true};
    else if (n == "recompute") b.recompute.clear();
    else if (n == "zero") b.zero = {};
    else if (n == "sequence_parallel") b.sequence_parallel.clear();
    else if (n == "schedule") b.schedule.clear();
    else if (n == "offload") b.offload = {core::Offload::none, core::Offload::optimizer, core::Offload::optimizer_params};
    else unknown.push_back(n);
  }
  return unknown;
}

std::vector<int> divisors(int n) {
  // pairs (d, n/d) up to sqrt(n): a 4M-GPU cluster costs 2048 steps, not 4M
  std::vector<int> low, high;
  for (int d = 1; 1LL * d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

bool own_split_fits(const core::Scenario& s) {
  const auto& p = s.parallel;
  const bool gives_none = p.stage_layers.empty() && p.first_stage_layers == 0 && p.last_stage_layers == 0 &&
                          !p.embedding_in_split && !p.loss_in_split;
  return gives_none || !core::pipeline_split(s).layers.empty();
}

void apply(const Candidate& c, core::Scenario& s) {
  s.parallel.pp = c.pp;
  s.parallel.vpp = c.vpp;
  apply(c, s, own_split_fits(s));
}

void apply(const Candidate& c, core::Scenario& s, bool split_fits) {
  auto& p = s.parallel;
  p.tp = c.tp;
  p.pp = c.pp;
  p.dp = c.dp;
  p.cp = c.cp;
  p.ep = c.ep;
  p.etp = c.etp;
  p.vpp = c.vpp;
  p.zero = c.zero;
  p.sharding.shard_ranks = c.shard_ranks;
  p.sequence_parallel = c.sequence_parallel;
  p.schedule = c.schedule;
  // A split the scenario gives explicitly survives where it is valid for the candidate's pipeline;
  // elsewhere the candidate takes the split chosen for it (core::pipeline_split).
  if (!split_fits) {
    p.stage_layers.clear();
    p.first_stage_layers = p.last_stage_layers = 0;
    p.embedding_in_split = p.loss_in_split = false;
  }
  s.training.micro_batch = c.micro_batch;
  s.training.recompute = c.recompute;
  s.training.overlap.tp = c.overlap_tp;
  s.training.overlap.dp = c.overlap_dp;
  s.training.overlap.pp = c.overlap_pp;
  s.training.offload = c.offload;
}

Space::Space(const core::Scenario& base, const SearchSpace& b)
    : gpus_(base.gpus), gpus_per_node_(std::max(1, base.hardware.gpus_per_node)) {
  const auto& m = base.model;
  const std::vector<int> gpu_divisors = gpus_ > 0 ? divisors(gpus_) : std::vector<int>{};
  tp_ = tp_values(m, gpu_divisors, b);
  pp_ = choose(gpu_divisors, b.pp, b.max_pp);
  cp_ = choose(gpu_divisors, b.cp, b.max_cp);
  ep_ = ep_values(m, gpus_, b);
  etp_ = etp_values(m, base.parallel.etp, gpu_divisors, b);
  pipeline_ = pipeline_values(m, b);
  micro_batch_ = micro_batch_values(base.training.global_batch, b);
  std::vector<int> stages;
  for (int z = 0; z <= core::kMaxZeroStage; ++z) stages.push_back(z);
  zero_ = choose(stages, b.zero, 0);
  recompute_ = or_default(b.recompute, core::framework_recompute_modes(base.training.framework));
  sequence_parallel_ = or_default(b.sequence_parallel, {false, true});
  dp_filter_ = b.dp;
  dp_filter_.normalize();  // admits() runs per candidate: a binary search, whatever the list's length
  const auto& ov = base.training.overlap;
  overlap_tp_ = switch_values(b.overlap_tp, ov.tp);
  overlap_dp_ = switch_values(b.overlap_dp, ov.dp);
  overlap_pp_ = switch_values(b.overlap_pp, ov.pp);
  if (!b.overlap_tp.empty()) searched_ |= Candidate::kSearchedTp;
  if (!b.overlap_dp.empty()) searched_ |= Candidate::kSearchedDp;
  if (!b.overlap_pp.empty()) searched_ |= Candidate::kSearchedPp;
  // CPU offload needs the hardware's host (core::check); without it only the base's mode is tried
  offload_ = b.offload.empty() || !base.hardware.host.known() ? std::vector<core::Offload>{base.training.offload}
                                                              : b.offload;
  if (offload_.size() > 1) searched_ |= Candidate::kSearchedOffload;
  // ZeRO-3 shards over all of dp*cp, or (HSDP, ZeRO++'s hpZ, MiCS) within a node
  shard_ranks_ = b.shard_ranks.empty() ? std::vector<int>{0} : b.shard_ranks;
  if (b.shard_ranks.empty() && gpus_per_node_ > 1 && gpus_ > gpus_per_node_ &&
      std::find(zero_.begin(), zero_.end(), 3) != zero_.end())
    shard_ranks_.push_back(gpus_per_node_);

  name_empty_dimension(base, b);

  radix_ = {tp_.size(),        pp_.size(),          cp_.size(),         ep_.size(),
            pipeline_.size(),  micro_batch_.size(), zero_.size(),       recompute_.size(),
            sequence_parallel_.size(), overlap_tp_.size(), overlap_dp_.size(), overlap_pp_.size(),
            shard_ranks_.size(), etp_.size(),
            offload_.size()};
  size_ = 1;
  for (auto r : radix_) size_ *= r;
}

// A dimension left with no value: named by the option that emptied it, with the rule.
void Space::name_empty_dimension(const core::Scenario& base, const SearchSpace& b) {
  const auto& m = base.model;
  const std::string n_gpus = std::to_string(gpus_) + " GPUs";
  auto empty = [&](bool none, const Choice& asked, int max, const char* option, const char* max_option,
                   const std::string& rule) {
    if (!none || !empty_option_.empty()) return;
    empty_option_ = asked.empty() && max > 0 ? max_option : option;
    empty_why_ = (asked.empty() ? max > 0 ? "no value up to " + std::to_string(max) : std::string("no value")
                                : "no value of " + text(asked)) +
                 " " + rule;
  };
  empty(tp_.empty(), b.tp, b.max_tp, "--tp", "--max-tp",
        "divides both the " + n_gpus + " and the model's " + std::to_string(m.heads) + " attention heads");
  empty(pp_.empty(), b.pp, b.max_pp, "--pp", "--max-pp", "divides the " + n_gpus);
  empty(cp_.empty(), b.cp, b.max_cp, "--cp", "--max-cp", "divides the " + n_gpus);
  empty(ep_.empty(), b.ep, b.max_ep, "--ep", "--max-ep",
        m.moe && m.moe->experts > 0
            ? "divides both the " + n_gpus + " and the model's " + std::to_string(m.moe->experts) + " experts"
            : std::string("is 1, the only degree of a model without experts"));
  empty(etp_.empty(), b.etp, 0, "--etp", "--etp",
        m.moe ? "divides both the " + n_gpus + " and the experts' ffn_hidden " + std::to_string(m.expert_ffn_hidden())
              : std::string("needs a model with experts"));
  empty(pipeline_.empty(), b.vpp, b.max_vpp, "--vpp", "--max-vpp",
        "is 1 (the plain schedules) or, with the interleaved schedule, divides the model's " +
            std::to_string(m.layers) + " layers (or those with the embedding and the loss counted as layers) "
            "into virtual stages of two or more");
  empty(micro_batch_.empty(), b.micro_batch, b.max_micro_batch, "--micro-batch", "--max-micro-batch",
        "divides the global batch " + std::to_string(base.training.global_batch));
  empty(zero_.empty(), b.zero, 0, "--zero", "--zero", "is a ZeRO stage, 0 to " + std::to_string(core::kMaxZeroStage));
}


std::string Space::why_no_candidate() const {
  if (!empty_option_.empty()) return empty_option_ + ": " + empty_why_;
  return "no combination of the degrees lays out the " + std::to_string(gpus_) + " GPUs (tp*pp*cp*dp)";
}

Space::Digits Space::digits(std::uint64_t index) const {
  Digits digit{};
  std::uint64_t rest = index;
  for (int i = kDigits - 1; i >= 0; --i) {
    digit[i] = rest % radix_[i];
    rest /= radix_[i];
  }
  return digit;
}

std::optional<Candidate> Space::at(std::uint64_t index) const {
  if (index >= size_) return std::nullopt;
  return candidate(index, digits(index));
}

std::optional<Candidate> Space::candidate(std::uint64_t index, const Digits& digit) const {
  Candidate c;
  c.index = index;
  c.tp = tp_[digit[0]];
  c.pp = pp_[digit[1]];
  c.cp = cp_[digit[2]];
  const long long model_parallel = 1LL * c.tp * c.pp * c.cp;
  if (gpus_ % model_parallel != 0) return std::nullopt;
  c.dp = static_cast<int>(gpus_ / model_parallel);
  if (!dp_filter_.empty() && !dp_filter_.admits(c.dp)) return std::nullopt;
  c.ep = ep_[digit[3]];
  std::tie(c.schedule, c.vpp) = pipeline_[digit[4]];
  if (c.pp == 1 && c.schedule != core::Schedule::one_f_one_b) return std::nullopt;
  c.micro_batch = micro_batch_[digit[5]];
  c.zero = zero_[digit[6]];
  c.recompute = recompute_[digit[7]];
  c.sequence_parallel = sequence_parallel_[digit[8]];
  if (c.sequence_parallel && c.tp == 1) return std::nullopt;
  c.overlap_tp = overlap_tp_[digit[9]];
  c.overlap_dp = overlap_dp_[digit[10]];
  c.overlap_pp = overlap_pp_[digit[11]];
  // TP overlap without TP, PP overlap without a pipeline: the same run as without
  if (c.overlap_tp && c.tp == 1 && (searched_ & Candidate::kSearchedTp)) return std::nullopt;
  if (c.overlap_pp && c.pp == 1 && (searched_ & Candidate::kSearchedPp)) return std::nullopt;
  c.searched = searched_;
  // a shard group smaller than dp*cp only for ZeRO-3, and only one that divides it
  c.shard_ranks = shard_ranks_[digit[12]];
  const int dpcp = c.dp * c.cp;
  if (c.shard_ranks >= dpcp) c.shard_ranks = 0;
  if (c.shard_ranks > 0 && (c.zero != 3 || dpcp % c.shard_ranks != 0)) return std::nullopt;
  if (c.shard_ranks == 0 && shard_ranks_[digit[12]] > 0) return std::nullopt;  // the same as full sharding
  c.etp = etp_[digit[13]];
  c.offload = offload_[digit[14]];
  // offload below the ZeRO stage it needs (core::check), when searched: not a layout to offer
  if ((searched_ & Candidate::kSearchedOffload) &&
      ((c.offload != core::Offload::none && c.zero < 1) || (c.offload == core::Offload::optimizer_params && c.zero < 3)))
    return std::nullopt;
  return c;
}

std::uint64_t Space::count_candidates() const {
  std::uint64_t n = 0;
  for_each(0, size_, [&n](const Candidate&) { ++n; });
  return n;
}

Space::Located Space::locate(const core::Scenario& s) const {
  const auto& p = s.parallel;
  const auto& t = s.training;
  auto no = [](std::string why) { return Located{std::nullopt, std::move(why)}; };
  const long long laid_out = 1LL * p.tp * p.pp * p.cp * p.dp;
  if (laid_out != gpus_)
    return no("its degrees lay out " + std::to_string(laid_out) + " GPUs (tp*pp*cp*dp); the sweep lays out " +
              std::to_string(gpus_));
  if (!dp_filter_.empty() && !dp_filter_.admits(p.dp)) {
    // the filter as given: "dp 8 is outside the space (dp 4 16..64)"
    std::string why = "dp " + std::to_string(p.dp) + " is outside the space (dp";
    // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on chained temporaries
    for (int v : dp_filter_.values) why.append(" ").append(std::to_string(v));
    for (const auto& [lo, hi] : dp_filter_.ranges)
      why.append(" ").append(std::to_string(lo)).append("..").append(std::to_string(hi));
    return no(why + ")");
  }
  if (p.pp == 1 && p.schedule != core::Schedule::one_f_one_b)
    return no("pp 1 with the " + std::string(core::name(p.schedule)) +
              " schedule is outside the space (it lists pp 1 only as 1f1b)");

  // Most significant digit first, as at() decodes them; the messages are built for the one miss.
  const int dpcp = p.dp * p.cp;
  // an unset etp is tp's: found as that value when the space lists values (--etp)
  const int etp = p.etp == 0 && !position(etp_, 0) ? p.tp : p.etp;
  const int shard = p.zero == 3 && p.sharding.shard_ranks > 0 && p.sharding.shard_ranks < dpcp ? p.sharding.shard_ranks : 0;
  const std::pair<std::optional<std::uint64_t>, std::string> lookups[kDigits] = {
      {position(tp_, p.tp), outside("tp", p.tp, tp_)},
      {position(pp_, p.pp), outside("pp", p.pp, pp_)},
      {position(cp_, p.cp), outside("cp", p.cp, cp_)},
      {position(ep_, p.ep), outside("ep", p.ep, ep_)},
      {position(pipeline_, {p.schedule, p.vpp}),
       "the " + std::string(core::name(p.schedule)) + " schedule with vpp " + std::to_string(p.vpp) +
           " is outside the space"},
      {position(micro_batch_, t.micro_batch), outside("micro_batch", t.micro_batch, micro_batch_)},
      {position(zero_, p.zero), outside("zero", p.zero, zero_)},
      {position(recompute_, t.recompute),
       "recompute " + std::string(core::name(t.recompute)) + " is outside the space"},
      {position(sequence_parallel_, p.sequence_parallel && p.tp > 1),
       std::string("sequence parallel ") + (p.sequence_parallel ? "on" : "off") + " is outside the space"},
      // a searched switch that makes no difference (tp 1, pp 1) is listed as off
      {position(overlap_tp_, t.overlap.tp && !(p.tp == 1 && (searched_ & Candidate::kSearchedTp))),
       std::string("overlap.tp ") + (t.overlap.tp ? "on" : "off") + " is outside the space"},
      {position(overlap_dp_, t.overlap.dp),
       std::string("overlap.dp ") + (t.overlap.dp ? "on" : "off") + " is outside the space"},
      {position(overlap_pp_, t.overlap.pp && !(p.pp == 1 && (searched_ & Candidate::kSearchedPp))),
       std::string("overlap.pp ") + (t.overlap.pp ? "on" : "off") + " is outside the space"},
      {position(shard_ranks_, shard), outside("shard_ranks", shard, shard_ranks_)},
      {position(etp_, etp), outside("etp", etp, etp_)},
      {position(offload_, t.offload), "CPU offload " + std::string(core::name(t.offload)) + " is outside the space"},
  };
  std::uint64_t index = 0;
  for (int i = 0; i < kDigits; ++i) {
    if (!lookups[i].first) return no(lookups[i].second);
    index = index * radix_[i] + *lookups[i].first;
  }
  auto c = at(index);
  if (!c) return no("its layout is not a candidate of the space");
  return Located{c, ""};
}

std::vector<std::string> pin_dimensions(const core::Scenario& s, const std::vector<std::string>& keys,
                                        SearchSpace& b) {
  std::vector<std::string> pinned;
  const auto& p = s.parallel;
  for (const auto& key : keys) {
    bool hit = true;
    // a dimension the user chose values for (--tp 4,8) keeps them
    auto pin = [](Choice& c, int v) {
      if (c.empty()) c = {v};
    };
    if (key == "parallel.tp") pin(b.tp, p.tp);
    else if (key == "parallel.pp") pin(b.pp, p.pp);
    else if (key == "parallel.dp") pin(b.dp, p.dp);
    else if (key == "parallel.cp") pin(b.cp, p.cp);
    else if (key == "parallel.ep") pin(b.ep, p.ep);
    else if (key == "parallel.etp" && p.etp > 0) pin(b.etp, p.etp);
    else if (key == "parallel.vpp") pin(b.vpp, p.vpp);
    else if (key == "parallel.zero") pin(b.zero, p.zero);
    else if (key == "parallel.sequence_parallel") b.sequence_parallel = {p.sequence_parallel};
    else if (key == "parallel.schedule") b.schedule = {p.schedule};
    else if (key == "training.micro_batch") pin(b.micro_batch, s.training.micro_batch);
    else if (key == "training.recompute") b.recompute = {s.training.recompute};
    else if (key == "parallel.sharding.shard_ranks") b.shard_ranks = {p.sharding.shard_ranks};
    else hit = false;
    if (hit && std::find(pinned.begin(), pinned.end(), key) == pinned.end()) pinned.push_back(key);
  }
  return pinned;
}

std::string label(const Candidate& c) {
  return "tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp) + " dp" + std::to_string(c.dp) +
         " cp" + std::to_string(c.cp) + (c.ep > 1 ? " ep" + std::to_string(c.ep) : std::string()) +
         (c.etp > 0 && c.etp != c.tp ? " etp" + std::to_string(c.etp) : std::string()) +
         " vpp" + std::to_string(c.vpp) + " mb" + std::to_string(c.micro_batch) + " zero" +
         std::to_string(c.zero) + (c.shard_ranks > 0 ? " hsdp" + std::to_string(c.shard_ranks) : std::string()) +
         " " + std::string(core::name(c.recompute)) +
         (c.sequence_parallel ? " sp " : " nosp ") + std::string(core::name(c.schedule)) + switches(c);
}

std::string switches(const Candidate& c) {
  std::string out;
  auto add = [&](std::uint8_t bit, const char* name, bool on) {
    if (c.searched & bit) out += std::string(" ") + name + (on ? "+" : "-");
  };
  add(Candidate::kSearchedTp, "ovl-tp", c.overlap_tp);
  add(Candidate::kSearchedDp, "ovl-dp", c.overlap_dp);
  add(Candidate::kSearchedPp, "ovl-pp", c.overlap_pp);
  if (c.searched & Candidate::kSearchedOffload) out += " offload-" + std::string(core::name(c.offload));
  return out;
}

}  // namespace ptdsim::planner
