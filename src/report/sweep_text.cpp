// The sweep's table, JSON and CSV (include/ptdsim/report/sweep.hpp).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "format.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/planner/near_ties.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/report/sweep.hpp"

namespace ptdsim::report {
namespace {

using core::kGiB;

std::string degrees(const planner::Candidate& c, bool moe) {
  return fmt::format("{:>3} {:>3} {:>4} {:>3}{} {:>3} {:>3} {:>4} {:>9} {:>3} {:>11}", c.tp, c.pp,
                     c.dp, c.cp, moe ? fmt::format(" {:>3} {:>3}", c.ep, c.etp > 0 ? c.etp : c.tp) : std::string(), c.vpp,
                     c.micro_batch, c.zero, core::name(c.recompute), c.sequence_parallel ? "on" : "off",
                     core::name(c.schedule));
}

// "2.74M": GPU-hours and costs in a column
std::string big(double x) {
  if (x >= 1e12) return fmt::format("{:.3g}T", x / 1e12);
  if (x >= 1e9) return fmt::format("{:.3g}B", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.3g}M", x / 1e6);
  if (x >= 1e3) return fmt::format("{:.3g}K", x / 1e3);
  return fmt::format("{:.3g}", x);
}

// The inputs the sweep does not vary, so a saved table says what it ranked: precision, switches,
// framework, and the searched switches beside the degrees.
std::string fixed_line(const core::Scenario& base, const planner::Space& space) {
  const auto& t = base.training;
  auto on = [](bool b) { return b ? "on" : "off"; };
  auto overlap = [&](const char* name, const std::vector<bool>& values, bool v) {
    return values.size() > 1 ? fmt::format("{} searched", name) : fmt::format("{} {}", name, on(v));
  };
  return fmt::format(
      "  fixed: {}, flash attention {}, optimizer {}, {} main gradients, framework {}; overlap {}, {}, {}, "
      "ZeRO-3 prefetch {}; placement {}\n",
      core::name(t.precision), report::flash_attention_text(t, base.hardware.gpu), core::name(t.optimizer), core::name(t.main_grads),
      t.framework.empty() ? "-" : t.framework, overlap("tp", space.overlap_tp(), t.overlap.tp),
      overlap("pp", space.overlap_pp(), t.overlap.pp), overlap("dp", space.overlap_dp(), t.overlap.dp),
      on(t.overlap.zero3_prefetch), core::placement_text(base.parallel)) +
         (space.offload().size() > 1 ? "  CPU offload searched (none, optimizer from ZeRO-1, optimizer_params at ZeRO-3)\n"
          : t.offload != core::Offload::none
              ? fmt::format("  CPU offload {}, fraction {:g}\n", core::name(t.offload), t.offload_fraction)
              : std::string());
}

std::string counts_line_of(const planner::SweepResult& r) {
  std::string out = fmt::format(
      "{} candidates: {} feasible ({} simulated, {} pruned: cannot reach the top K)", r.evaluated,
      r.feasible, r.simulated, r.pruned);
  if (!r.rejected.empty()) {
    out += "; rejected:";
    bool first = true;
    for (const auto& [reason, n] : r.rejected) {
      out += fmt::format("{} {} {}", first ? "" : ",", reason, n);
      first = false;
    }
  }
  return out + "\n";
}

// How the scenario's layout compares with #1 on the objective's own number.
std::string versus_best(const core::Report& r, const core::Report& best, std::string_view objective) {
  if (objective == "memory")
    return fmt::format("peak {:.1f} GiB ({:+.1f}% vs #1)", r.peak_bytes / kGiB,
                       100 * (r.peak_bytes / best.peak_bytes - 1));
  if (objective == "mfu")
    return fmt::format("MFU {:.1f}% ({:+.1f} points vs #1)", 100 * r.mfu, 100 * (r.mfu - best.mfu));
  return fmt::format("step {:.3f} s ({:+.1f}% vs #1)", r.step_s, 100 * (r.step_s / best.step_s - 1));
}

// "scenario's layout: tp8 pp16 ... rank 882 of 13160 feasible, step 19.997 s (+19.0% vs #1): ...".
std::string scenario_line_of(const planner::SweepResult& r, std::string_view objective) {
  if (!r.scenario) return "";
  const auto& sr = *r.scenario;
  if (!sr.ranked) return "scenario's layout: not ranked: " + sr.why_not + "\n";
  std::string rank = fmt::format("rank {} of {} feasible", sr.rank, r.feasible);
  if (sr.rank_is_lower_bound)
    rank = fmt::format("rank {} to {} of {} feasible (--rank-limit {} at most for the exact rank)", sr.rank,
                       sr.rank + sr.unresolved, r.feasible, sr.simulated + sr.unresolved);
  if (sr.rank == 1 && !sr.rank_is_lower_bound)
    return fmt::format("scenario's layout: {}: {} (the best)\n", planner::label(sr.candidate), rank);
  return fmt::format("scenario's layout: {}: {}, {}: {}\n", planner::label(sr.candidate), rank,
                     versus_best(sr.report, r.results.front().report, objective),
                     sr.slower_because.empty() ? "tie" : sr.slower_because);
}

// Near-ties (planner/near_ties.hpp) ride with the row they tie, the first three in rank order named:
// "also vpp 16 (+0.03%), vpp 27 (+0.10%), mb 2 (+0.12%) and 2 more".
std::vector<std::string> near_tie_notes(const planner::SweepResult& r) {
  constexpr int kNamed = 3;
  std::vector<std::string> also(r.results.size());
  std::vector<int> ties(r.results.size(), 0);
  for (const auto& x : r.results) {
    if (x.near_tie_of < 0) continue;
    const auto row_at = static_cast<std::size_t>(x.near_tie_of);
    const auto& row = r.results[row_at];
    if (++ties[row_at] > kNamed) continue;
    const bool by_vpp = planner::near_tie(x.candidate, x.report.step_s, row.candidate, row.report.step_s) ==
                        planner::TieBy::vpp;
    std::string& a = also[row_at];
    a += fmt::format("{}{} {} ({:+.2f}%)", a.empty() ? "; also " : ", ", by_vpp ? "vpp" : "mb",
                     by_vpp ? x.candidate.vpp : x.candidate.micro_batch, 100 * (x.report.step_s / row.report.step_s - 1));
  }
  for (std::size_t i = 0; i < also.size(); ++i)
    if (ties[i] > kNamed) also[i] += fmt::format(" and {} more", ties[i] - kNamed);
  return also;
}

// The best layout's groups against the topology and the tiers that set it apart from a runner-up
// (planner/tiers.hpp; docs/planner.md "Groups against the topology").
std::string group_place(const planner::GroupTiers& g) {
  std::string what = fmt::format("{} {}", g.group, g.degree);
  if (g.ranks != g.degree && std::string_view(g.group) == "dp") what += fmt::format(" ({} ranks with cp)", g.ranks);
  if (g.crosses.empty()) return what + " inside one NVLink domain";
  std::string tiers;
  for (std::size_t i = 1; i < g.crosses.size(); ++i) tiers += (i > 1 ? ", " : "") + g.crosses[i];
  return what + fmt::format(" across {} nodes through {}", g.nodes, tiers);
}

std::string topology_lines(const planner::SweepResult& r) {
  std::string out;
  std::string groups;
  for (const auto& g : r.best_tiers) {
    if (g.degree <= 1) continue;
    groups += (groups.empty() ? "" : "; ") + group_place(g);
  }
  if (!groups.empty()) out += "best's groups: " + groups + "\n";
  for (const auto& line : r.tier_notes) out += "  " + line + "\n";
  return out;
}

nlohmann::ordered_json topology_json(const planner::SweepResult& r) {
  nlohmann::ordered_json j;
  j["groups"] = nlohmann::ordered_json::array();
  for (const auto& g : r.best_tiers) {
    nlohmann::ordered_json e;
    e["group"] = g.group;
    e["degree"] = g.degree;
    e["ranks"] = g.ranks;
    e["nodes"] = g.nodes;
    e["crosses"] = g.crosses;
    j["groups"].push_back(std::move(e));
  }
  j["differences"] = r.tier_notes;
  return j;
}

std::string table_of(const core::Scenario& base, const planner::Space& space, const planner::SweepResult& r,
                  std::string_view objective, double min_free_gib) {
  const bool moe = base.model.moe.has_value();
  const bool switches = space.overlap_tp().size() > 1 || space.overlap_dp().size() > 1 || space.overlap_pp().size() > 1 ||
                        space.offload().size() > 1;
  std::string out = fmt::format(
      "sweep: {} on {} x {}, global batch {}, seq {}, objective {}{}\n", core::printable(base.model.name), r.gpus,
      core::printable(base.hardware.gpu.name.empty() ? base.hardware.name : base.hardware.gpu.name),
      base.training.global_batch, base.training.seq_len, objective,
      min_free_gib > 0 ? fmt::format(", at least {:g} GiB left free per GPU", min_free_gib) : std::string());
  out += fixed_line(base, space);
  if (base.training.tokens > 0)
    out += fmt::format("  to train on {} tokens{}\n", big(base.training.tokens),
                       base.cost.gpu_hour > 0 ? fmt::format(" at {:g} per GPU-hour", base.cost.gpu_hour)
                                              : std::string(" (no price: cost.gpu_hour)"));
  out += counts_line_of(r);
  if (r.results.empty() && r.evaluated == 0)  // nothing to reject: say what left the space empty
    return out + "no candidate: " + r.no_candidate + "\n" + scenario_line_of(r, objective);
  if (r.results.empty()) {
    out += "no layout fits: see the rejection counts above";
    out += r.rejected_example.empty() ? "\n" : "; the first candidate each rule rejected:\n";
    for (const auto& [reason, p] : r.rejected_example)
      out += fmt::format("  {} ({}): {}\n", reason, r.rejected.at(reason), core::describe(p));
    return out + scenario_line_of(r, objective);
  }
  // days, GPU-hours, energy and cost when a token budget is given; each only when it is known
  const auto& first = r.results.front().report;
  const bool days = first.to_train.known(), energy = first.to_train.has_energy(),
             cost = first.to_train.has_cost(first.scenario);
  out += "\n";
  out += fmt::format("{:>4} {:>3} {:>3} {:>4} {:>3}{} {:>3} {:>3} {:>4} {:>9} {:>3} {:>11}{} {:>9} {:>6} {:>10} "
                     "{:>8} {:>8}{}{}{}{}  {}\n",
                     "rank", "tp", "pp", "dp", "cp", moe ? "  ep etp" : "", "vpp", "mb", "zero", "recompute",
                     "sp", "schedule", switches ? fmt::format(" {:<22}", "switches") : std::string(), "step_s",
                     "MFU", "tokens/s", "peak_GiB", "free_GiB", days ? fmt::format(" {:>7} {:>7}", "days", "GPU-h") : "",
                     energy ? fmt::format(" {:>7}", "MWh") : "", cost ? fmt::format(" {:>7}", "cost") : "", "",
                     objective == "memory"   ? "uses more than #1 for"
                     : objective == "energy" ? "energy per step vs #1"
                                             : "slower than #1 because");
  const std::vector<std::string> also = near_tie_notes(r);
  int folded = 0;
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const auto& x = r.results[i];
    const auto& rep = x.report;
    const auto& tt = rep.to_train;
    if (x.near_tie_of >= 0) {
      ++folded;
      continue;
    }
    const int rank = x.rank;
    out += fmt::format("{:>4} {}{} {:>9.3f} {:>5.1f}% {:>10.0f} {:>8.1f} {:>8.1f}{}{}{}  {}{}\n", rank,
                       degrees(x.candidate, moe),
                       switches ? fmt::format(" {:<22}", planner::switches(x.candidate)) : std::string(),
                       rep.step_s, 100 * rep.mfu, rep.tokens_per_s, rep.peak_bytes / kGiB,
                       (rep.capacity_bytes - rep.peak_bytes) / kGiB,
                       days ? fmt::format(" {:>7.1f} {:>7}", tt.days(), big(tt.gpu_hours)) : "",
                       energy ? fmt::format(" {:>7.4g}", tt.energy_j / 3.6e9) : "",
                       cost ? fmt::format(" {:>7}", big(tt.cost)) : "",
                       rank == 1                 ? std::string("(best)")
                       : objective == "energy"   ? fmt::format("{:+.2f}%", 100 * (planner::step_energy_j(rep) /
                                                                                    planner::step_energy_j(first) - 1))
                       : x.slower_because.empty() ? std::string("tie")
                                                 : x.slower_because,
                       also[i]);
  }
  if (folded > 0)
    out += fmt::format("({} near-tie{} shown with the row {} tie{}: the same layout but for its vpp or micro-batch, "
                       "within {:g}% of that row's step; --top counts the rows)\n",
                       folded, folded == 1 ? "" : "s", folded == 1 ? "it" : "they", folded == 1 ? "s" : "", 100 * planner::kNearTie);
  const auto& best = r.results.front().report;
  out += '\n';
  out += scenario_line_of(r, objective);
  out += fmt::format("best: step {:.3f} s, bounded by {}; `--emit FILE` writes it as a scenario, "
                     "`ptdsim evaluate FILE` gives the full breakdown\n",
                     best.step_s, best.bounded_by.empty() ? std::string("-") : core::describe(best.bounded_by));
  out += topology_lines(r);
  return out;
}

nlohmann::ordered_json scenario_json(const planner::SweepResult& r) {
  nlohmann::ordered_json j;
  if (!r.scenario || !r.scenario->ranked) {
    j["rank"] = nullptr;
    j["reason"] = r.scenario ? r.scenario->why_not : "not computed (--no-scenario-rank)";
    return j;
  }
  const auto& sr = *r.scenario;
  j["rank"] = sr.rank;
  j["rank_is_lower_bound"] = sr.rank_is_lower_bound;
  j["rank_at_most"] = sr.rank + sr.unresolved;
  j["of"] = r.feasible;
  j["simulated"] = sr.simulated;
  j["slower_because"] = sr.slower_because;
  j["result"] = nlohmann::ordered_json::parse(report::report_json(sr.report));
  return j;
}

std::string json_of(const planner::SweepResult& r, std::string_view objective) {
  nlohmann::ordered_json j;
  j["gpus"] = r.gpus;
  j["evaluated"] = r.evaluated;
  j["feasible"] = r.feasible;
  j["rejected"] = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : r.rejected) j["rejected"][reason] = n;
  j["rejected_example"] = nlohmann::ordered_json::object();
  for (const auto& [reason, p] : r.rejected_example)
    j["rejected_example"][reason] = {{"key", p.key}, {"message", p.message}};
  j["simulated"] = r.simulated;
  j["pruned"] = r.pruned;
  j["objective"] = objective;
  j["results"] = nlohmann::ordered_json::array();
  // the rows; each carries its near-ties (planner/near_ties.hpp), which share its rank
  auto entry = [](const planner::Ranked& x) {
    auto e = nlohmann::ordered_json::parse(report::report_json(x.report));
    e["rank"] = x.rank;
    e["slower_because"] = x.slower_because;
    return e;
  };
  std::vector<std::size_t> at(r.results.size());
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const auto& x = r.results[i];
    if (x.near_tie_of >= 0) {
      j["results"][at[static_cast<std::size_t>(x.near_tie_of)]]["near_ties"].push_back(entry(x));
      continue;
    }
    at[i] = j["results"].size();
    auto e = entry(x);
    e["near_ties"] = nlohmann::ordered_json::array();
    j["results"].push_back(std::move(e));
  }
  j["scenario_layout"] = scenario_json(r);
  j["topology"] = topology_json(r);
  return j.dump(2) + "\n";
}

}  // namespace

std::string sweep_table(const core::Scenario& base, const planner::Space& space, const planner::SweepResult& r,
                        std::string_view objective, double min_free_gib) {
  return table_of(base, space, r, objective, min_free_gib);
}
std::string sweep_json(const planner::SweepResult& r, std::string_view objective) { return json_of(r, objective); }
std::string sweep_csv_header() { return "rank,index,status,lower_bound_s," + report_csv_header(); }
std::string sweep_csv_ranked(const planner::SweepResult& r) {
  std::string out;
  for (const auto& x : r.results)
    out += fmt::format("{},{},{},,", x.rank, x.candidate.index, x.near_tie_of >= 0 ? "near_tie" : "ranked") +
           report_csv_row(x.report);
  return out;
}
std::string sweep_csv_row(const planner::Row& row) {
  // every digit: the shortest text that reads back as the same double
  return fmt::format(",{},{},{},", row.candidate.index, row.status, row.lower_bound_s) + report_csv_row(row.report);
}
std::string sweep_counts_line(const planner::SweepResult& r) { return counts_line_of(r); }
std::string sweep_scenario_line(const planner::SweepResult& r, std::string_view objective) {
  return scenario_line_of(r, objective);
}

}  // namespace ptdsim::report
