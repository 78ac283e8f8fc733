#pragma once
#include <string>
#include <vector>

#include "ptdsim/core/scenario.hpp"

// How a model's transformer layers are split over the pipeline's virtual stages (docs/inputs.md
// "Pipeline split"). One rule, read by core::check, the analytic engine (params.cpp) and the report.
namespace ptdsim::core {

enum class SplitMethod {
  even,            // layers / (pp * vpp) each
  stage_layers,    // parallel.stage_layers, as given
  first_last,      // Megatron-LM --decoder-first/last-pipeline-num-layers; the middle split evenly
  embedding_loss,  // Megatron-LM --account-for-embedding/loss-in-pipeline-split: the embedding and the
                   // loss take a layer's slot in the first and the last virtual stage
  balanced,        // layers / (pp * vpp) each and one more for the middle stages holding the remainder
};

struct PipelineSplit {
  // Transformer layers of each virtual stage (pp * vpp of them, in pipeline order: rank r holds
  // virtual stages r, r + pp, r + 2 pp, ...). Empty when the parallel spec cannot be split; `problem`
  // says why and `key` where.
  std::vector<int> layers;
  SplitMethod method = SplitMethod::even;
  bool embedding_slot = false;  // the embedding counted as a layer of the first virtual stage
  bool loss_slot = false;       // the loss counted as a layer of the last
  bool chosen = false;          // the scenario asked for no split: this one was chosen for it
  std::string key;
  std::string problem;
};

// The split a scenario asks for. When it asks for none and the layers do not divide over pp * vpp,
// the split chosen for it, in this order: Megatron-LM's embedding and loss accounting when
// layers + 2 divides; the loss alone when layers + 1 does (the last stage also holds the logits,
// the heaviest end); else one layer more for the latest middle stages, as many as the remainder
// (the first and the last, which hold the embedding and the logits, keep the fewest).
PipelineSplit pipeline_split(const Scenario& s);

std::string_view name(SplitMethod m);
// "the embedding and the loss counted as layers (Megatron-LM)": the method in words.
std::string describe(const PipelineSplit& split);
// "7, 8 x 14, 7": a split's layers, runs of equal counts folded.
std::string describe_layers(const std::vector<int>& layers);

}  // namespace ptdsim::core
