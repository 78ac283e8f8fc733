#pragma once
#include <string>
#include <vector>

#include "ptdsim/analytic/groups.hpp"
#include "ptdsim/analytic/nccl_model.hpp"
#include "ptdsim/core/alpha_beta.hpp"
#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/parallel.hpp"
#include "ptdsim/core/scenario.hpp"

namespace ptdsim::analytic {


// The alpha-beta line a collective follows: time = alpha_s + bytes * bus_factor / busbw_Bps.
// From the calibrated `collectives:` table when the hardware has a row for the op and the group's
// scope (the measurement nearest the group: rank count, then GPUs per node, then GPU, then a row
// forced to the algorithm that runs before one NCCL picked for itself; of its rows the size range
// holding `bytes`; a row forced to an algorithm or protocol only where NCCL's pick runs it); else, for the collectives NCCL's tuner models (all-reduce,
// all-gather, reduce-scatter, broadcast, reduce), the line of the algorithm and protocol NCCL picks
// for the group at this size (nccl_line); else (all-to-all, send/recv) the link model.
struct AlphaBeta {
  double alpha_s = 0;
  double busbw_Bps = 0;
};
AlphaBeta collective_line(const core::HardwareSpec& hw, core::Collective op, double bytes,
                          const Group& g);

// The link model: the group's slowest link (NVLink inside a node, the NIC share across nodes) times
// its efficiency, and the measured latency of the smallest group (8 GPUs; 2 nodes) plus NCCL's hop
// latencies for the steps a larger ring or tree adds.
AlphaBeta link_line(const core::HardwareSpec& hw, core::Collective op, const Group& g);

// The (algorithm, protocol) NCCL picks for the group (nccl_comm, nccl_choose, restricted by the
// hardware's `nccl` as NCCL_ALGO / NCCL_PROTO do); invalid for one rank and for the collectives its
// tuner does not model.
NcclChoice nccl_line(const core::HardwareSpec& hw, core::Collective op, double bytes, const Group& g);

// The calibrated row's measurement that times a collective of `bytes` over the group
// (collective_line's first case); null when NCCL's model or the link model times it. A row forced
// to an algorithm or protocol (NCCL_ALGO / NCCL_PROTO in its log) counts only where NCCL's pick
// (nccl_line) runs what it measured.
const core::CollectiveFit* calibrated_row(const core::HardwareSpec& hw, core::Collective op, double bytes,
                                          const Group& g);

// For rows forced to an algorithm or protocol, at one size of one group (named `group` in the
// text): that the nearest such rows were passed over because NCCL's model picks another algorithm
// there (and what times it instead), or that the forced rows in use were measured on another rank
// count, GPUs per node or GPU (as collective_warnings says of the others); "" when nothing is to say.
std::string forced_row_warning(const core::HardwareSpec& hw, core::Collective op, double bytes, const Group& g,
                               const std::string& group);

// Time of one collective moving `bytes` per rank (nccl-tests' "size"), seconds. 0 for one rank.
double collective_time(const core::HardwareSpec& hw, core::Collective op, double bytes,
                       const Group& g);

// One line per calibrated measurement that a communication group of the scenario (tp, cp, ep, the
// dp gradient groups, the pp neighbours) uses although it was measured on another rank count
// (saying what was extrapolated), another number of GPUs per node, or another GPU. Empty when the
// hardware has no calibrated rows or every group matches its rows (docs/calibration.md). Rows
// forced to an algorithm or protocol depend on the size: collective_picks' warnings
// (forced_row_warning) speak for them.
std::vector<std::string> collective_warnings(const core::Scenario& s, const StepGroups& groups);
// The same, resolving the groups (one-off callers and tests; a step passes its Step's).
std::vector<std::string> collective_warnings(const core::Scenario& s);

}  // namespace ptdsim::analytic
