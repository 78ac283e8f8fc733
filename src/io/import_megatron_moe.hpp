#pragma once
#include <string>
#include <vector>

#include "megatron_arguments.hpp"
#include "ptdsim/core/model.hpp"

// `ptdsim import megatron`'s mixture-of-experts and MLA flags (docs/inputs.md "Importing a
// Megatron-LM command line"), Megatron-LM's defaults where a flag is absent and its checks of them
// (megatron/training/arguments.py, megatron/core/transformer/transformer_config.py).
namespace ptdsim::io::megatron {

// The MoE and MLA flags (docs/inputs.md "Importing a Megatron-LM command line"), Megatron-LM's
// defaults where a flag is absent (megatron/training/arguments.py). The parallel ones (expert
// tensor parallelism, the token dispatcher) are the scenario's.
// With them the attention variants: sliding windows (--window-size, --window-attn-skip-freq) and
// learned attention sinks (--softmax-type learnable); what has no effect, in `warnings`.
void read_moe_and_mla(const Arguments& a, core::ModelSpec& m, detail::ModelLines& model,
                      std::vector<std::string>& warnings);
// The MoE flags as argparse takes them, before any of TransformerConfig's rules: the capacity
// factor a number, the balancing types among its choices (one or several, their auxiliary losses
// summed), the coefficients numbers. The balancing changes no step's time; it is checked so that a
// command Megatron-LM refuses is refused here.
void moe_arguments(const Arguments& a);
// An MoE layer's keys (training.moe) from Megatron-Core's MoE flags, with TransformerConfig's checks
// of them: the dispatcher (unset: the framework row's allgather, Megatron-Core's default; alltoall_seq
// is alltoall over a sequence-split layout, the same traffic; DeepEP's and HybridEP's fused dispatch
// and combine are ptdsim's flex), token dropping, and a force-balanced router.
void moe_line(const Arguments& a, detail::ScenarioLines& lines, std::vector<std::string>& warnings);
// --overlap-moe-expert-parallel-comm (Megatron-Core's combined 1F1B, training.overlap.ep), refused
// where TransformerConfig asserts against it.
bool moe_overlap(const Arguments& a, int layers);

}  // namespace ptdsim::io::megatron
