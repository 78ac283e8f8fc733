#pragma once
#include <array>
#include <string>
#include <vector>

namespace ptdsim::core {

enum class Schedule { gpipe, one_f_one_b, interleaved, zb_h1 };
enum class Recompute { none, selective, full };

// The parallel dimensions, in the order a placement string names them.
enum class Dim { tp, cp, ep, dp, pp };
inline constexpr int kDimCount = 5;

struct ParallelSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int vpp = 1;
  bool sequence_parallel = false;
  int zero = 0;  // 0 none, 1 optimizer states, 2 + gradients, 3 + parameters
  Schedule schedule = Schedule::one_f_one_b;
  // rank order, innermost (fastest-varying) first; default tp-cp-ep-dp-pp
  std::array<Dim, kDimCount> placement{Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
  // How the layers are split over the pipeline (core::pipeline_split): explicit layers per stage
  // (pp entries) or per virtual stage (pp*vpp entries, in pipeline order); or Megatron-LM's first
  // and last stage sizes (0 = not given; the middle stages split the rest evenly); or Megatron-LM's
  // accounting for the embedding and the loss as one layer each in the even split.
  std::vector<int> stage_layers;
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool embedding_in_split = false;
  bool loss_in_split = false;
};

}  // namespace ptdsim::core
