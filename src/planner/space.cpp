#include "ptdsim/planner/space.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "ptdsim/core/names.hpp"
#include "ptdsim/core/split.hpp"

namespace ptdsim::planner {
namespace {

// The default list of a dimension cut at `max` (0: unbounded), or the user's pinned list
// intersected with the default (a pinned value the structure forbids, e.g. tp 3 with 96 heads
// on 1024 GPUs, simply yields no candidates). Pins win over maxima.
std::vector<int> choose(const std::vector<int>& allowed, const std::vector<int>& pinned, int max) {
  std::vector<int> out;
  if (pinned.empty()) {
    for (int v : allowed)
      if (max <= 0 || v <= max) out.push_back(v);
    return out;
  }
  for (int v : allowed)
    if (std::find(pinned.begin(), pinned.end(), v) != pinned.end()) out.push_back(v);
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

}  // namespace

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

void apply(const Candidate& c, core::Scenario& s) {
  auto& p = s.parallel;
  p.tp = c.tp;
  p.pp = c.pp;
  p.dp = c.dp;
  p.cp = c.cp;
  p.ep = c.ep;
  p.vpp = c.vpp;
  p.zero = c.zero;
  p.sharding.shard_ranks = c.shard_ranks;
  p.sequence_parallel = c.sequence_parallel;
  p.schedule = c.schedule;
  // A split the scenario gives explicitly survives where it is valid for the candidate's pipeline;
  // elsewhere the candidate takes the split chosen for it (core::pipeline_split).
  if (core::pipeline_split(s).layers.empty()) {
    p.stage_layers.clear();
    p.first_stage_layers = p.last_stage_layers = 0;
    p.embedding_in_split = p.loss_in_split = false;
  }
  s.training.micro_batch = c.micro_batch;
  s.training.recompute = c.recompute;
}

Space::Space(const core::Scenario& base, const SearchSpace& b)
    : gpus_(base.gpus), gpus_per_node_(std::max(1, base.hardware.gpus_per_node)) {
  const auto& m = base.model;
  const std::vector<int> gpu_divisors = gpus_ > 0 ? divisors(gpus_) : std::vector<int>{};

  // tp must divide the heads (Megatron splits attention by heads); kv_heads and ffn_hidden are
  // left to core::check so that such layouts are counted as `divisibility`, not hidden.
  std::vector<int> tp_allowed;
  for (int d : gpu_divisors)
    if (m.heads > 0 && m.heads % d == 0) tp_allowed.push_back(d);
  tp_ = choose(tp_allowed, b.tp, b.max_tp);
  pp_ = choose(gpu_divisors, b.pp, b.max_pp);
  cp_ = choose(gpu_divisors, b.cp, b.max_cp);

  std::vector<int> ep_allowed{1};
  if (m.moe && m.moe->experts > 0) {
    ep_allowed.clear();
    for (int d : divisors(m.moe->experts))
      if (gpus_ > 0 && gpus_ % d == 0) ep_allowed.push_back(d);
  }
  ep_ = choose(ep_allowed, b.ep, b.max_ep);

  // vpp divides the layers, or the layers with the embedding and the loss counted as layers (the
  // splits that matter, core::pipeline_split), and leaves every virtual stage of a pipeline (pp >= 2)
  // a layer or an end's slot; vpp 1 is the plain schedules, vpp > 1 interleaved.
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
      if (interleaved == (v > 1)) pipeline_.emplace_back(sched, v);
    }
  }

  if (b.micro_batch.empty()) {
    // a micro-batch that does not divide the global batch divides no micro_batch*dp either: the
    // list is bounded by the batch, not by the flag (--max-micro-batch 1000000 on a batch of 1536
    // lists its 20 divisors, not a million values)
    for (int v : divisors(std::max(1, base.training.global_batch)))
      if (v <= std::max(1, b.max_micro_batch)) micro_batch_.push_back(v);
  } else {
    for (int v : b.micro_batch)
      if (v > 0) micro_batch_.push_back(v);
    std::sort(micro_batch_.begin(), micro_batch_.end());
    micro_batch_.erase(std::unique(micro_batch_.begin(), micro_batch_.end()), micro_batch_.end());
  }
  zero_ = choose({0, 1, 2, 3}, b.zero, 0);
  recompute_ = or_default(b.recompute, {core::Recompute::none, core::Recompute::selective,
                                        core::Recompute::full});
  sequence_parallel_ = or_default(b.sequence_parallel, {false, true});
  dp_filter_ = b.dp;
  // ZeRO-3 shards over all of dp*cp, or (HSDP, ZeRO++'s hpZ, MiCS) within a node
  shard_ranks_ = b.shard_ranks.empty() ? std::vector<int>{0} : b.shard_ranks;
  if (b.shard_ranks.empty() && gpus_per_node_ > 1 && gpus_ > gpus_per_node_ &&
      std::find(zero_.begin(), zero_.end(), 3) != zero_.end())
    shard_ranks_.push_back(gpus_per_node_);

  radix_ = {tp_.size(),          pp_.size(),   cp_.size(),        ep_.size(),
            pipeline_.size(),    micro_batch_.size(), zero_.size(), recompute_.size(),
            sequence_parallel_.size(), shard_ranks_.size()};
  size_ = 1;
  for (auto r : radix_) size_ *= r;
}

std::optional<Candidate> Space::at(std::uint64_t index) const {
  if (index >= size_) return std::nullopt;
  std::uint64_t digit[10];
  std::uint64_t rest = index;
  for (int i = 9; i >= 0; --i) {
    digit[i] = rest % radix_[i];
    rest /= radix_[i];
  }
  Candidate c;
  c.index = index;
  c.tp = tp_[digit[0]];
  c.pp = pp_[digit[1]];
  c.cp = cp_[digit[2]];
  const long long model_parallel = 1LL * c.tp * c.pp * c.cp;
  if (gpus_ % model_parallel != 0) return std::nullopt;
  c.dp = static_cast<int>(gpus_ / model_parallel);
  if (!dp_filter_.empty() && std::find(dp_filter_.begin(), dp_filter_.end(), c.dp) == dp_filter_.end())
    return std::nullopt;
  c.ep = ep_[digit[3]];
  std::tie(c.schedule, c.vpp) = pipeline_[digit[4]];
  if (c.pp == 1 && c.schedule != core::Schedule::one_f_one_b) return std::nullopt;
  c.micro_batch = micro_batch_[digit[5]];
  c.zero = zero_[digit[6]];
  c.recompute = recompute_[digit[7]];
  c.sequence_parallel = sequence_parallel_[digit[8]];
  if (c.sequence_parallel && c.tp == 1) return std::nullopt;
  // a shard group smaller than dp*cp only for ZeRO-3, and only one that divides it
  c.shard_ranks = shard_ranks_[digit[9]];
  const int dpcp = c.dp * c.cp;
  if (c.shard_ranks >= dpcp) c.shard_ranks = 0;
  if (c.shard_ranks > 0 && (c.zero != 3 || dpcp % c.shard_ranks != 0)) return std::nullopt;
  if (c.shard_ranks == 0 && shard_ranks_[digit[9]] > 0) return std::nullopt;  // the same as full sharding
  return c;
}

std::uint64_t Space::count_candidates() const {
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < size_; ++i)
    if (at(i)) ++n;
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
  if (!dp_filter_.empty() && !position(dp_filter_, p.dp)) return no(outside("dp", p.dp, dp_filter_));
  if (p.pp == 1 && p.schedule != core::Schedule::one_f_one_b)
    return no("pp 1 with the " + std::string(core::name(p.schedule)) +
              " schedule is outside the space (it lists pp 1 only as 1f1b)");

  // Most significant digit first, as at() decodes them; the messages are built for the one miss.
  const int dpcp = p.dp * p.cp;
  const int shard = p.zero == 3 && p.sharding.shard_ranks > 0 && p.sharding.shard_ranks < dpcp ? p.sharding.shard_ranks : 0;
  const std::pair<std::optional<std::uint64_t>, std::string> lookups[10] = {
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
      {position(shard_ranks_, shard), outside("shard_ranks", shard, shard_ranks_)},
  };
  std::uint64_t index = 0;
  for (int i = 0; i < 10; ++i) {
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
    if (key == "parallel.tp") b.tp = {p.tp};
    else if (key == "parallel.pp") b.pp = {p.pp};
    else if (key == "parallel.dp") b.dp = {p.dp};
    else if (key == "parallel.cp") b.cp = {p.cp};
    else if (key == "parallel.ep") b.ep = {p.ep};
    else if (key == "parallel.vpp") b.vpp = {p.vpp};
    else if (key == "parallel.zero") b.zero = {p.zero};
    else if (key == "parallel.sequence_parallel") b.sequence_parallel = {p.sequence_parallel};
    else if (key == "parallel.schedule") b.schedule = {p.schedule};
    else if (key == "training.micro_batch") b.micro_batch = {s.training.micro_batch};
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
         " vpp" + std::to_string(c.vpp) + " mb" + std::to_string(c.micro_batch) + " zero" +
         std::to_string(c.zero) + (c.shard_ranks > 0 ? " hsdp" + std::to_string(c.shard_ranks) : std::string()) +
         " " + std::string(core::name(c.recompute)) +
         (c.sequence_parallel ? " sp " : " nosp ") + std::string(core::name(c.schedule));
}

}  // namespace ptdsim::planner
