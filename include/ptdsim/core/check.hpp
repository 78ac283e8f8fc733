#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/scenario.hpp"

namespace ptdsim::core {

// One cross-field problem of a scenario. `key` is the dotted path it is reported against
// (io maps it to a file position); `reason` is a short stable word the planner counts by
// (divisibility, batch, range, unsupported).
struct Problem {
  std::string key;
  std::string reason;
  std::string message;
};
// "key: message", or the message alone where it names the key first (a sweep's rejection notes)
std::string describe(const Problem& p);

// Pipeline passes per step the simulator may expand into tasks: micro-batches x pp x vpp (x layers
// instead of pp x vpp under ZeRO-3, which splits every pass per layer). The task graph, its memory
// (~3.5 KB a pass) and its time (~11 us a pass) grow with it. 2^18 is 8x the largest published run
// (Megatron 1T: 512 micro-batches x 64 stages = 32768) and simulates in about 3 s.
inline constexpr long long kMaxPipelinePasses = 1LL << 18;

// Every cross-field problem of a scenario, not only the first: tp*cp*pp*dp == gpus, tp divides
// heads and kv_heads, layers split over pp*vpp, global batch divides by micro_batch*dp, ep divides
// experts, the pipeline passes within kMaxPipelinePasses (reason "size"), ... Empty when the
// scenario can be evaluated. Pure, cheap: the sweep calls it per candidate.
std::vector<Problem> check(const Scenario& s);

// Whether ptdsim models training at precision p on any GPU: every one but fp4, a peak rate only
// (4-bit training is not modelled, and no file gives an fp4 efficiency). `ptdsim import
// --precision` offers these.
bool trainable(Precision p);
std::vector<std::string> trainable_spellings();
// Whether ptdsim times work at precision p on a GPU: p is trainable and the hardware file gives a
// peak rate there. check() applies it to training.precision, `ptdsim kernel` to --precision.
bool precision_ok(const GpuSpec& g, Precision p);
// Why not ("" when precision_ok): "fp8 has no peak rate on A100-SXM4-80GB".
std::string precision_problem(const GpuSpec& g, Precision p);
struct PipelineSplit;
// The reason of check(s)'s first problem ("" when it has none), by the same rules without building
// any message: what the sweep counts a rejected candidate under. `split` is pipeline_split(s),
// which the sweep keeps per pp and vpp.
std::string first_problem(const Scenario& s, const PipelineSplit& split);

}  // namespace ptdsim::core
