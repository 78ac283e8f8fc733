#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ptdsim/core/check.hpp"
#include "ptdsim/core/parallel.hpp"

// Pipeline schedules as strategies: each schedule answers every question the engines ask of it
// (the order of passes on a stage, the micro-batches whose activations a stage holds, the bubble,
// the shapes it can run) in one file of src/core/schedule/. Adding a schedule means one such file,
// a row in core::Schedule and its name table (names.cpp), the case in schedule_rules() and tests.
namespace ptdsim::core {

// One pass of one micro-batch through one virtual chunk of a pipeline rank. F forward; B the
// backward (input and weight gradients together, or only the input gradients when the schedule
// splits the weight gradients off); W the weight gradients (only then).
enum class Pass : std::uint8_t { F, B, W };
struct PassRef {
  Pass pass = Pass::F;
  int chunk = 0;
  int microbatch = 0;
  bool operator==(const PassRef&) const = default;
};

// p pipeline ranks, v virtual chunks per rank, m micro-batches per step.
struct PipelineShape {
  int p = 1;
  int v = 1;
  int m = 1;
};

struct ScheduleRules {
  Schedule id;
  bool splits_weight_grad;  // W runs apart from B (ZB-H1)
  bool interleaved;         // virtual chunks (vpp > 1); the others run vpp == 1 only
  // The compute order of stage `stage`, appended to `out` (cleared first). Assumes check() passed.
  void (*order)(const PipelineShape& shape, int stage, std::vector<PassRef>& out);
  // Micro-batches whose activations stage `stage` holds at its peak (a fraction with interleaving:
  // chunks in flight / v).
  double (*in_flight)(const PipelineShape& shape, int stage);
  // The pipeline's idle time on a stage, seconds, given one micro-batch's forward, backward (B,
  // recomputation included) and weight-gradient time on that stage (whole stage, all chunks).
  double (*bubble_s)(const PipelineShape& shape, double t_f, double t_b, double t_w);
  // What the schedule cannot run, appended to `out` as core::check's problems. shape.m is 0 when the
  // micro-batch count is not a whole number (core::check reports that itself).
  void (*check)(const PipelineShape& shape, std::vector<Problem>& out);
};

// The rules of a schedule. Every Schedule has a row; a missing one is a compile error (-Wswitch).
const ScheduleRules& schedule_rules(Schedule s);

// The defined schedules, one file each (src/core/schedule/<name>.cpp).
extern const ScheduleRules kGpipe;
extern const ScheduleRules kOneFOneB;
extern const ScheduleRules kInterleaved;
extern const ScheduleRules kZbH1;

}  // namespace ptdsim::core
