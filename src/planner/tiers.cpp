#include "ptdsim/planner/tiers.hpp"

#include <fmt/format.h>

#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/core/comm_kind.hpp"

namespace ptdsim::planner {
namespace {

GroupTiers tiers_of(const char* name, int degree, const analytic::Group& g, const core::HardwareSpec& hw) {
  GroupTiers t;
  t.group = name;
  t.degree = degree;
  t.ranks = g.ranks;
  t.nodes = g.span.nodes;
  if (g.scope == core::Scope::intra || g.span.nodes <= 1) return t;
  t.top = g.span.top;
  t.crosses.push_back("NVLink domain");
  const auto& tiers = hw.fabric.tiers;
  for (int k = 0; k <= t.top && k < static_cast<int>(tiers.size()); ++k) t.crosses.push_back(tiers[k].name);
  return t;
}

// The boundary the group of the higher top crosses and the other's does not: the NVLink domain when
// the other stays inside it, else the highest switch tier only the first crosses.
std::string boundary(const GroupTiers& more, const GroupTiers& less) {
  if (less.top < 0) return "the NVLink domain";
  return "the " + more.crosses.back();
}

std::string upper(const char* s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(c - 'a' + 'A');
  return u;
}

}  // namespace

std::vector<GroupTiers> group_tiers(const core::Scenario& s) {
  const auto g = analytic::step_groups(s);
  const auto& p = s.parallel;
  const auto& hw = s.hardware;
  // the groups whose traffic makes each report bucket: TP and CP collectives, the EP all-to-all,
  // the pipeline sends between neighbouring stages, the dense gradient reduction over dp*cp
  return {tiers_of("tp", p.tp, g.tp, hw), tiers_of("cp", p.cp, g.cp, hw), tiers_of("ep", p.ep, g.ep, hw),
          tiers_of("pp", p.pp, g.pp_hop, hw), tiers_of("dp", p.dp, g.dp, hw)};
}

std::string tier_difference(const core::Report& a, const GroupTiers& x, const core::Report& b, const GroupTiers& y,
                            int kind, int rank_b) {
  if (x.top == y.top || kind < 0 || kind >= core::kCommBucketCount) return "";
  const bool a_more = x.top > y.top;
  const auto& more = a_more ? x : y;
  const auto& less = a_more ? y : x;
  const core::Report& rm = a_more ? a : b;
  const core::Report& rl = a_more ? b : a;
  const std::string who_more = a_more ? "" : fmt::format("#{}'s ", rank_b);
  const std::string who_less = a_more ? fmt::format("#{}'s ", rank_b) : "#1's ";
  const double exposed = rm.comm[kind].exposed_s - rl.comm[kind].exposed_s;
  const double total = rm.comm[kind].time_s - rl.comm[kind].time_s;
  const std::string name = upper(more.group);
  return fmt::format("{}{} {} crosses {} where {}{} {} does not: {:+.1f} ms of exposed {} comm per step "
                     "({:+.1f} ms of {} collectives)",
                     who_more, more.group, more.degree, boundary(more, less), who_less, less.group, less.degree,
                     1e3 * exposed, name, 1e3 * total, name);
}

}  // namespace ptdsim::planner
