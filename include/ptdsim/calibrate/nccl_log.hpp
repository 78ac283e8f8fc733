#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/core/alpha_beta.hpp"
#include "ptdsim/core/hardware.hpp"

// Reading nccl-tests output (github.com/NVIDIA/nccl-tests): the 2017, 2019-2022 and 2022+ column
// layouts, srun/Open MPI prefixes, noise lines, several runs per file and "tail-only" pastes that
// lost their header. Everything that is not a result table is skipped. Format notes:
// tests/data/nccl-tests/README.md; the rules: docs/calibration.md "Reading nccl-tests logs".
//
// Bad input: parse_nccl_tests and read_nccl_tests throw core::ConfigError (file:line:col and the
// offending line) and nothing else for any text whatsoever -- a result table cut short, wrong
// elements, a number out of range, a table no collective can be attributed to. Their memory and
// time grow linearly with the text. A fuzzer may call parse_nccl_tests(text, name) directly.
namespace ptdsim::calibrate {

// The largest rank index a log may name (the same bound as a hardware file's GPU counts). A
// larger "Rank" or root is refused rather than overflowing an int.
inline constexpr int kMaxRanks = 1 << 24;

// One half of a result row (out-of-place or in-place), in SI units.
struct NcclMeasure {
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
};

struct NcclRow {
  int line = 0;            // 1-based line in the file
  double size_bytes = 0;   // nccl-tests' "size" (the full buffer for all_gather/reduce_scatter/alltoall)
  double count = 0;        // elements per rank
  std::string type;        // float, half, bfloat16, ...
  std::string redop;       // sum, ..., or "none"
  int root = -1;           // -1 when the collective has no root
  NcclMeasure out_of_place;
  NcclMeasure in_place;
  // The time the fit uses: the faster of the two halves. Interference (another job, a page fault,
  // a clock change) only ever slows an iteration down, so the minimum is the reproducible value;
  // it also drops one-off outliers such as the broadcast fixture's in-place 288 us at 1 MiB. A
  // half printed as 0 measured nothing and is passed over; 0 when both are.
  double time_s() const;
};

// One result table with what the log says (or the options decide) about where it ran.
struct NcclRun {
  std::string file;
  int line = 0;                 // where the run starts: its "# nThread" line, else its first row
  std::string binary;           // "all_reduce_perf" when the log names it, else ""
  core::Collective op = core::Collective::all_reduce;
  int ranks = 0;
  core::Scope scope = core::Scope::intra;
  int hosts = 0;                // distinct hosts in the device list; 0 when there is none
  int listed_ranks = 0;         // "# Rank" lines; fewer than `ranks` when the paste cut the list
  int ranks_per_node = 0;       // GPUs of the run on each node; 0 when the log does not tell
  std::string gpu;              // the GPU name of the device list, "" when there is none
  bool tail_only = false;       // no table header: the layout was inferred from the row width
  // The NCCL algorithm and protocol the run was forced to (core::nccl_algo_names /
  // nccl_proto_names indices), -1 when NCCL picked: from NCCL_ALGO= / NCCL_PROTO= on a line
  // before the table (a command line, an export, the fixtures' "##" command) or NCCL's own
  // "NCCL_ALGO set by environment to X" INFO line; a list or an exclusion ("Ring,Tree", "^NVLS")
  // is not one algorithm and leaves it -1, with a note (docs/calibration.md "Rows per algorithm").
  int algo = -1;
  int proto = -1;
  std::vector<NcclRow> rows;
  std::vector<std::string> notes;     // how op, ranks or scope were decided when the log did not say
  std::vector<std::string> warnings;  // "file:line:col: warning: ..." (e.g. a missing footer)
};

// What the user knows that a log may not say (tail-only logs have no device list). Where the log
// does say, op and ranks must agree with it; scope overrides the log (a multi-node NVLink domain
// spans hosts but is one "node" to the hardware file).
struct ParseOptions {
  std::optional<core::Collective> op;
  std::optional<int> ranks;
  std::optional<core::Scope> scope;
  std::optional<int> ranks_per_node;
};

// `file` names the text in messages.
std::vector<NcclRun> parse_nccl_tests(const std::string& text, const std::string& file,
                                      const ParseOptions& options = {});
std::vector<NcclRun> read_nccl_tests(const std::string& path, const ParseOptions& options = {});

// The lines ptdsim-calibrate writes before each of its tables, so that the reader above knows what
// NCCL was told for it: "# NCCL_ALGO=<value>" where the variable is set, "# unset NCCL_ALGO" where
// not (a value an earlier table of a joined log stated ends there), and the same for NCCL_PROTO.
// `env` gives a variable's value or nullptr (std::getenv).
std::string nccl_setting_lines(const char* (*env)(const char*));

// core::bus_factor (core/alpha_beta.hpp): the bus factor the fit divides by.

// nccl-tests' names of the collectives, in core::Collective's order: its binaries are these with
// "_perf" ("alltoall_perf" for all_to_all, "sendrecv_perf" for send_recv).
const std::vector<std::string>& nccl_tests_names();
// "all_reduce_perf" -> all_reduce, "alltoall_perf" -> all_to_all, ...; empty when unknown.
std::optional<core::Collective> collective_of_binary(const std::string& binary);
// A collective named by ptdsim ("all_to_all") or by nccl-tests ("alltoall"); empty when neither.
std::optional<core::Collective> collective_of_name(const std::string& name);
// Every spelling collective_of_name takes, ptdsim's first: the choices of `calibrate import --op`.
std::vector<std::string> collective_spellings();

}  // namespace ptdsim::calibrate
