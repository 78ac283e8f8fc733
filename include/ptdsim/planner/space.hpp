#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ptdsim/core/parallel.hpp"
#include "ptdsim/core/scenario.hpp"

// The search space of `ptdsim sweep`: every parallel layout of a model on a number of GPUs,
// enumerated by a mixed-radix counter over per-dimension value lists (docs/planner.md).
namespace ptdsim::planner {

// The values a dimension may take: listed values and inclusive ranges (the command line's "4,8",
// "4..16", "1,8..32"). Empty: every value the dimension allows.
struct Choice {
  std::vector<int> values;
  std::vector<std::pair<int, int>> ranges;
  Choice() = default;
  Choice(std::initializer_list<int> v) : values(v) {}
  Choice(std::vector<int> v) : values(std::move(v)) {}
  bool empty() const { return values.empty() && ranges.empty(); }
  // A binary search once normal(), else a scan.
  bool admits(int v) const;
  // Values sorted without repeats, ranges sorted and merged where they overlap or touch.
  void normalize();
  bool normal = false;
};

// Most items (values and ranges) one list may hold: a list is typed or generated, and 65536 items
// is 6x the divisors of any GPU count the schema allows.
inline constexpr std::size_t kMaxChoiceItems = 65536;

// "4,8", "4..16", "1,8..32": integers from `least` (1 for degrees and micro-batches, 0 for ZeRO
// stages) to 2^30, and ranges lo..hi (lo <= hi), separated by commas, at most kMaxChoiceItems items;
// nullopt for anything else. The result is normal: values sorted without repeats, ranges sorted and
// merged, so admits() is a binary search and a list's cost grows with its distinct values only.
std::optional<Choice> parse_choice(const std::string& text, int least = 1);

// What the user fixes or bounds. An empty choice means "every value the dimension allows"; a
// choice pins the dimension to the values it admits (one value fixes it). A max of 0 means
// unbounded. Choices are still intersected with the structural rules (tp divides heads, degrees
// divide the GPU count).
struct SearchSpace {
  Choice tp, pp, cp, ep, vpp, micro_batch, zero;
  // Expert tensor parallel degrees (--etp); empty: the base scenario's parallel.etp only (unset:
  // etp follows each candidate's tp, Megatron-Core's default)
  Choice etp;
  // ZeRO-3's shard group: 0 all of dp*cp; gpus_per_node the hybrid variant (shard within a node,
  // replicate across), which the space adds for ZeRO-3 layouts whose dp*cp spans several nodes
  std::vector<int> shard_ranks;
  Choice dp;  // a filter: dp is derived as gpus / (tp*pp*cp)
  std::vector<core::Recompute> recompute;
  std::vector<bool> sequence_parallel;
  std::vector<core::Schedule> schedule;
  // Switches the sweep keeps at the base scenario's value unless asked to search them (`--search
  // overlap.tp`): then the values listed here, {false, true} for a full search.
  std::vector<bool> overlap_tp, overlap_dp, overlap_pp;
  // CPU offload (`--search offload`): the modes to try; empty: the base scenario's alone. Modes a
  // layout's ZeRO stage cannot run (optimizer below ZeRO-1, optimizer_params below ZeRO-3) are skipped.
  std::vector<core::Offload> offload;

  int max_tp = 0;
  int max_pp = 0;
  int max_cp = 0;
  int max_ep = 0;
  int max_vpp = 0;
  int max_micro_batch = 8;  // the micro-batches are the global batch's divisors up to this
};

// One point of the space: a complete parallel layout plus the training knobs the sweep varies.
struct Candidate {
  std::uint64_t index = 0;  // position in the space, the final tie-break of every ranking
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1;
  int etp = 0;  // parallel.etp (0: the same as tp)
  int micro_batch = 1;
  int zero = 0;
  int shard_ranks = 0;  // ZeRO-3 hybrid sharding: the shard group (0: all of dp*cp)
  core::Recompute recompute = core::Recompute::selective;
  bool sequence_parallel = false;
  core::Schedule schedule = core::Schedule::one_f_one_b;
  bool overlap_tp = false, overlap_dp = true, overlap_pp = true;
  core::Offload offload = core::Offload::none;
  // which overlap switches the space varies (kSearched* bits): label() names only those
  std::uint8_t searched = 0;
  static constexpr std::uint8_t kSearchedTp = 1, kSearchedDp = 2, kSearchedPp = 4, kSearchedOffload = 8;
};

// Writes the candidate's degrees and knobs into a scenario (everything else is kept; an explicit
// pipeline split survives only where it is valid for the candidate's pp and vpp, else the split
// core::pipeline_split chooses applies).
void apply(const Candidate& c, core::Scenario& s);
// The same with own_split_fits() for the candidate's pp and vpp given (the sweep keeps it per pp
// and vpp: a million candidates share a few dozen answers).
void apply(const Candidate& c, core::Scenario& s, bool split_fits);
// Whether the pipeline split the scenario gives itself (parallel.stage_layers, first/last_stage_layers,
// embedding/loss_in_split) is valid for its pp and vpp; true when it gives none. It reads the
// model's layers, pp, vpp and those fields alone.
bool own_split_fits(const core::Scenario& s);

// The concrete space for a base scenario (its model, hardware and gpus) and the user's bounds.
// Dimensions, most significant digit first: tp, pp, cp, ep, pipeline (schedule with its vpp),
// micro_batch, zero, recompute, sequence_parallel, overlap.tp, overlap.dp, overlap.pp (the last
// three one value, the base's, unless searched), shard_ranks, etp (the base's unless --etp), offload (the base's unless
// --search offload). Index i decodes to digits by repeated
// division, so any index range is a chunk of work with no shared state.
class Space {
 public:
  Space(const core::Scenario& base, const SearchSpace& bounds);

  // Product of the radices: the number of indices, not all of them candidates.
  std::uint64_t size() const { return size_; }

  // The candidate at `index`, or nullopt when that point is a duplicate or has no integer dp:
  // tp*pp*cp not dividing the GPUs (or dp outside a pinned list), sequence parallel with tp 1,
  // or a schedule other than plain 1f1b with pp 1 (without a pipeline every schedule is the same
  // run). Such points are not candidates and are not counted anywhere.
  std::optional<Candidate> at(std::uint64_t index) const;

  // fn(candidate) for every candidate of the indices [begin, end), in index order: at() of each,
  // with the digits of `begin` decoded once and then counted up instead of divided out per index
  // (the sweep's first tier walks every index of the space).
  template <class Fn>
  void for_each(std::uint64_t begin, std::uint64_t end, Fn&& fn) const {
    end = end < size_ ? end : size_;
    if (begin >= end) return;
    Digits d = digits(begin);
    for (std::uint64_t i = begin; i < end; ++i, next(d))
      if (const auto c = candidate(i, d)) fn(*c);
  }

  int gpus() const { return gpus_; }
  const std::vector<int>& tp() const { return tp_; }
  const std::vector<int>& pp() const { return pp_; }
  const std::vector<int>& cp() const { return cp_; }
  const std::vector<int>& ep() const { return ep_; }
  const std::vector<int>& etp() const { return etp_; }
  const std::vector<std::pair<core::Schedule, int>>& pipeline() const { return pipeline_; }
  const std::vector<int>& micro_batch() const { return micro_batch_; }
  const std::vector<int>& zero() const { return zero_; }
  const std::vector<core::Recompute>& recompute() const { return recompute_; }
  const std::vector<bool>& sequence_parallel() const { return sequence_parallel_; }
  const std::vector<int>& shard_ranks() const { return shard_ranks_; }
  const std::vector<bool>& overlap_tp() const { return overlap_tp_; }
  const std::vector<bool>& overlap_dp() const { return overlap_dp_; }
  const std::vector<bool>& overlap_pp() const { return overlap_pp_; }
  const std::vector<core::Offload>& offload() const { return offload_; }

  // Where the space has no candidate because a dimension has no value: the first such dimension's
  // option (--tp, --max-tp, ...) and why, in words ("no value of 3 divides both the 1024 GPUs and the
  // model's 96 attention heads"); both empty when every dimension has values.
  const std::string& empty_option() const { return empty_option_; }
  const std::string& empty_why() const { return empty_why_; }
  // Why a space that enumerated no candidate has none: "--tp: no value of 3 divides ...", or, every
  // dimension having values, "no combination of the degrees lays out the 1024 GPUs (tp*pp*cp*dp)".
  std::string why_no_candidate() const;

  // The number of candidates (indices for which at() has a value); walks the whole space.
  std::uint64_t count_candidates() const;

  // The candidate whose layout a scenario is written with, or why no candidate has it: its degrees
  // lay out another GPU count, a value lies outside a dimension's bounds or pins, or pp 1 comes
  // with a schedule other than 1f1b (the space lists pp 1 once; the engines do not run the other
  // schedules the same). Sequence parallel with tp 1 is found as the candidate without it, the
  // same run. Costs one lookup per dimension, not a walk of the space.
  struct Located {
    std::optional<Candidate> candidate;
    std::string why_not;  // when there is no candidate
  };
  Located locate(const core::Scenario& s) const;

 private:
  static constexpr int kDigits = 15;
  using Digits = std::array<std::uint64_t, kDigits>;
  Digits digits(std::uint64_t index) const;  // index < size_
  std::optional<Candidate> candidate(std::uint64_t index, const Digits& d) const;
  void name_empty_dimension(const core::Scenario& base, const SearchSpace& b);  // empty_option_, empty_why_
  void next(Digits& d) const {  // the digits of the next index (odometer order)
    for (int i = kDigits - 1; i >= 0; --i) {
      if (++d[i] < radix_[i]) return;
      d[i] = 0;
    }
  }
  int gpus_ = 0;
  int gpus_per_node_ = 1;
  std::vector<int> tp_, pp_, cp_, ep_, micro_batch_, zero_, shard_ranks_, etp_;
  Choice dp_filter_;
  std::vector<std::pair<core::Schedule, int>> pipeline_;
  std::vector<core::Recompute> recompute_;
  std::vector<bool> sequence_parallel_, overlap_tp_, overlap_dp_, overlap_pp_;
  std::vector<core::Offload> offload_;
  std::uint8_t searched_ = 0;
  std::string empty_option_, empty_why_;
  std::vector<std::uint64_t> radix_;  // per digit, least significant last
  std::uint64_t size_ = 0;
};

// Pins the dimensions a user set explicitly (`--set parallel.zero=1`): each key that names a
// dimension of the space (parallel.tp, .pp, .dp, .cp, .ep, .vpp, .zero, .sequence_parallel,
// .schedule, .sharding.shard_ranks, training.micro_batch, training.recompute) fixes that dimension to the value `s`
// holds, unless the user already chose its values (`--tp 4,8`: the choice wins, the --set only
// makes the base scenario valid). Other keys only change the base scenario. Returns the keys that
// pinned something.
std::vector<std::string> pin_dimensions(const core::Scenario& s, const std::vector<std::string>& keys,
                                        SearchSpace& bounds);

// The names `--search` takes, and what each searches: overlap.tp, overlap.dp, overlap.pp ({false,
// true} instead of the base's value), recompute, sequence_parallel, zero, schedule (every value,
// even when a --set pinned it). Returns the names not known, for the caller's error.
std::vector<std::string> search_switches(const std::vector<std::string>& names, SearchSpace& bounds);
const std::vector<std::string>& searchable_switches();

// Positive divisors of n in increasing order.
std::vector<int> divisors(int n);

// "tp8 pp16 dp8 cp1 vpp1 mb1 zero1 selective sp 1f1b": a compact label for messages and tests,
// with the searched overlap switches after it (" ovl-tp+ ovl-dp-": on, off).
std::string label(const Candidate& c);
// The searched overlap switches alone: " ovl-tp+ ovl-dp-", "" when none was searched.
std::string switches(const Candidate& c);

}  // namespace ptdsim::planner
