#pragma once
#include <cstdint>
#include <vector>

#include "ptdsim/planner/space.hpp"

// Near-ties among ranked layouts (docs/planner.md "Near-ties"): a layout that differs from one
// ranked before it in its vpp or micro-batch alone, with a step within kNearTie of that one's, is
// not a different answer. The sweep's top K counts the rows that are not near-ties of another, and
// every report shows with each row its near-ties among the layouts the sweep simulated.
namespace ptdsim::planner {

inline constexpr double kNearTie = 0.005;

enum class TieBy { none, vpp, micro_batch };

// Whether `later` (step `later_s`) is a near-tie of `earlier` (step `earlier_s`), and by what.
TieBy near_tie(const Candidate& later, double later_s, const Candidate& earlier, double earlier_s);

// What a near-tie shares with its row: every field of the layout but vpp and micro-batch. Layouts
// of K different tie classes are at least K rows, whatever ties among them.
bool same_tie_class(const Candidate& a, const Candidate& b);
// A hash of those fields: equal classes hash equal (a collision can only merge two classes).
std::uint64_t tie_class(const Candidate& c);

// For each of `layouts` in ranked order (their steps in `steps`), the index of the earlier one it is
// a near-tie of: the first that is not itself a near-tie; -1 for a row of its own.
void fold_near_ties(const std::vector<const Candidate*>& layouts, const std::vector<double>& steps,
                    std::vector<int>& tie_of);

}  // namespace ptdsim::planner
