#include "ptdsim/planner/near_ties.hpp"

#include <cmath>

namespace ptdsim::planner {

bool same_tie_class(const Candidate& c, const Candidate& d) {
  return c.tp == d.tp && c.pp == d.pp && c.dp == d.dp && c.cp == d.cp && c.ep == d.ep && c.etp == d.etp &&
         c.zero == d.zero && c.shard_ranks == d.shard_ranks && c.recompute == d.recompute &&
         c.sequence_parallel == d.sequence_parallel && c.schedule == d.schedule && c.overlap_tp == d.overlap_tp &&
         c.overlap_dp == d.overlap_dp && c.overlap_pp == d.overlap_pp && c.offload == d.offload;
}

std::uint64_t tie_class(const Candidate& c) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the fields same_tie_class compares
  auto mix = [&h](auto v) {
    h ^= static_cast<std::uint64_t>(v);
    h *= 0x100000001b3ULL;
  };
  mix(c.tp), mix(c.pp), mix(c.dp), mix(c.cp), mix(c.ep), mix(c.etp), mix(c.zero), mix(c.shard_ranks);
  mix(c.recompute), mix(c.sequence_parallel), mix(c.schedule), mix(c.overlap_tp), mix(c.overlap_dp);
  mix(c.overlap_pp), mix(c.offload);
  return h;
}

TieBy near_tie(const Candidate& c, double later_s, const Candidate& d, double earlier_s) {
  if (!same_tie_class(c, d) || std::abs(later_s - earlier_s) > kNearTie * earlier_s) return TieBy::none;
  if (c.vpp != d.vpp && c.micro_batch == d.micro_batch) return TieBy::vpp;
  if (c.micro_batch != d.micro_batch && c.vpp == d.vpp) return TieBy::micro_batch;
  return TieBy::none;
}

void fold_near_ties(const std::vector<const Candidate*>& layouts, const std::vector<double>& steps,
                    std::vector<int>& tie_of) {
  tie_of.assign(layouts.size(), -1);
  for (std::size_t i = 1; i < layouts.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (tie_of[j] >= 0) continue;
      if (near_tie(*layouts[i], steps[i], *layouts[j], steps[j]) != TieBy::none) {
        tie_of[i] = static_cast<int>(j);
        break;
      }
    }
  }
}

}  // namespace ptdsim::planner
