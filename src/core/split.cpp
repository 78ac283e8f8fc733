#include "ptdsim/core/split.hpp"

#include <numeric>

namespace ptdsim::core {
namespace {

std::string str(long long v) { return std::to_string(v); }

PipelineSplit fail(PipelineSplit out, std::string key, std::string problem) {
  out.layers.clear();
  out.key = std::move(key);
  out.problem = std::move(problem);
  return out;
}

// Megatron-LM's accounting (transformer_block.py get_num_layers_to_build): layers + e + l split
// evenly over the virtual stages, the first losing e of its share and the last l.
PipelineSplit ends_as_layers(int L, int V, bool e, bool l) {
  PipelineSplit out;
  out.method = SplitMethod::embedding_loss;
  out.embedding_slot = e;
  out.loss_slot = l;
  const int per = (L + e + l) / V;
  out.layers.assign(V, per);
  out.layers.front() -= e;
  out.layers.back() -= l;
  return out;
}

}  // namespace

std::string_view name(SplitMethod m) {
  switch (m) {
    case SplitMethod::even: return "even";
    case SplitMethod::stage_layers: return "stage_layers";
    case SplitMethod::first_last: return "first_last";
    case SplitMethod::embedding_loss: return "embedding_loss";
    case SplitMethod::balanced: return "balanced";
  }
  return "?";
}

std::string describe(const PipelineSplit& split) {
  switch (split.method) {
    case SplitMethod::even: return "even";
    case SplitMethod::stage_layers: return "as parallel.stage_layers gives them";
    case SplitMethod::first_last: return "Megatron-LM's first and last stage sizes, the middle split evenly";
    case SplitMethod::embedding_loss:
      return split.embedding_slot && split.loss_slot
                 ? "the embedding and the loss counted as a layer each (Megatron-LM)"
                 : split.loss_slot ? "the loss counted as a layer (Megatron-LM)"
                                   : "the embedding counted as a layer (Megatron-LM)";
    case SplitMethod::balanced: return "one layer more for the latest middle stages";
  }
  return "?";
}

std::string describe_layers(const std::vector<int>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j < layers.size() && layers[j] == layers[i]) ++j;
    if (!out.empty()) out += ", ";
    out += str(layers[i]);
    if (j - i > 1) out += " x " + str(static_cast<long long>(j - i));
    i = j;
  }
  return out;
}

namespace {

// The pipeline to split: L layers over pp stages of v chunks each, V = pp*v virtual stages.
struct Shape {
  int L, pp, v;
  long long V;
};

// parallel.stage_layers: one entry per virtual stage, or per stage with interleaving (each
// stage's layers split evenly over its chunks).
PipelineSplit split_stage_layers(const ParallelSpec& p, const Shape& shape) {
  const auto [L, pp, v, V] = shape;
  PipelineSplit out;
  out.method = SplitMethod::stage_layers;
  const auto n = static_cast<long long>(p.stage_layers.size());
  if (n != pp && n != V)
    return fail(out, "parallel.stage_layers",
                "stage_layers has " + str(n) + " entries but pp is " + str(pp) +
                    (v > 1 ? " and pp*vpp " + str(V) : std::string()));
  const long long sum = std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), 0LL);
  if (sum != L)
    return fail(out, "parallel.stage_layers",
                "stage_layers add up to " + str(sum) + " but the model has " + str(L) + " layers");
  if (n == V) {
    out.layers = p.stage_layers;
    return out;
  }
  // one entry per stage with interleaving: each stage's layers split evenly over its chunks
  out.layers.assign(V, 0);
  for (int r = 0; r < pp; ++r) {
    if (p.stage_layers[r] % v != 0)
      return fail(out, "parallel.stage_layers",
                  "stage " + str(r) + "'s " + str(p.stage_layers[r]) + " layers do not split over vpp " + str(v) +
                      " chunks (give pp*vpp = " + str(V) + " entries instead)");
    for (int k = 0; k < v; ++k) out.layers[k * pp + r] = p.stage_layers[r] / v;
  }
  return out;
}

// Megatron-LM: the given ends, and the middle stages split the rest evenly, each stage's
// layers over its vpp chunks.
PipelineSplit split_first_last(const ParallelSpec& p, const Shape& shape) {
  const auto [L, pp, v, V] = shape;
  PipelineSplit out;
  out.method = SplitMethod::first_last;
  const int f = p.first_stage_layers, l = p.last_stage_layers;
  const int middle_stages = pp - (f > 0) - (l > 0);
  const long long middle = 1LL * L - f - l;
  const bool even = middle_stages == 0 ? middle == 0
                                       : middle > 0 && middle % (1LL * middle_stages * v) == 0;
  if (pp < 2 || !even)
    return fail(out, f > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers",
                "first_stage_layers " + str(f) + " and last_stage_layers " + str(l) + " leave " + str(middle) +
                    " of the " + str(L) + " layers to " + str(middle_stages) + " middle stages x vpp " + str(v) +
                    ": not an even split");
  for (auto [n, key] : {std::pair{f, "parallel.first_stage_layers"}, std::pair{l, "parallel.last_stage_layers"}})
    if (n > 0 && n % v != 0)
      return fail(out, key, std::string(key).substr(9) + " " + str(n) + " does not split over vpp " + str(v) + " chunks");
  out.layers.assign(V, middle_stages > 0 ? static_cast<int>(middle / (1LL * middle_stages * v)) : 0);
  for (int k = 0; k < v; ++k) {
    if (f > 0) out.layers[k * pp] = f / v;
    if (l > 0) out.layers[k * pp + pp - 1] = l / v;
  }
  return out;
}

// The embedding and the loss counted as layers (embedding_in_split, loss_in_split): an even split
// of the layers with them.
PipelineSplit split_ends_as_layers(const ParallelSpec& p, int L, long long V) {
  PipelineSplit out;
  const int extra = p.embedding_in_split + p.loss_in_split;
  if ((L + extra) % V != 0)
    return fail(out, p.embedding_in_split ? "parallel.embedding_in_split" : "parallel.loss_in_split",
                "layers " + str(L) + " + " + str(extra) + " (embedding and loss counted as layers) do not split "
                "evenly over pp*vpp = " + str(V) + " virtual stages");
  out = ends_as_layers(L, static_cast<int>(V), p.embedding_in_split, p.loss_in_split);
  if (out.layers.front() < 0 || out.layers.back() < 0)
    return fail(out, "parallel.pp", "too many virtual stages for " + str(L) + " layers");
  return out;
}

// No split given: even, else with the embedding and the loss in a virtual stage's slot, else
// balanced (the remainder to the middle stages).
PipelineSplit split_chosen(int L, long long V) {
  PipelineSplit out;
  if (L % V == 0) {
    out.layers.assign(V, static_cast<int>(L / V));
    return out;
  }
  PipelineSplit chosen;
  if ((L + 2) % V == 0)
    chosen = ends_as_layers(L, static_cast<int>(V), true, true);
  else if ((L + 1) % V == 0)
    chosen = ends_as_layers(L, static_cast<int>(V), false, true);
  else {
    chosen.method = SplitMethod::balanced;
    const int base = static_cast<int>(L / V), rest = static_cast<int>(L % V);
    chosen.layers.assign(V, base);
    // The remainder goes to the middle virtual stages, the latest first: under 1F1B a later stage
    // holds fewer micro-batches' activations, so an extra layer costs it the least memory. The
    // ends hold the embedding and the logits; only when the remainder outnumbers the middle stages
    // does the first take one too.
    const int last = static_cast<int>(V) - 1;
    int left = rest;
    for (int i = last - 1; i >= 1 && left > 0; --i, --left) chosen.layers[i] += 1;
    if (left > 0) chosen.layers[0] += 1;
  }
  chosen.chosen = true;
  return chosen;
}

}  // namespace

PipelineSplit pipeline_split(const Scenario& s) {
  const auto& p = s.parallel;
  const int L = s.model.layers, pp = p.pp, v = p.vpp;
  PipelineSplit out;
  if (pp < 1 || v < 1 || L < 1) return fail(out, "parallel.pp", "no pipeline to split");
  const long long V = 1LL * pp * v;
  // the embedding and the loss may each take a virtual stage's slot (Megatron-LM's accounting)
  const bool auto_split = p.stage_layers.empty() && p.first_stage_layers == 0 && p.last_stage_layers == 0 &&
                          !p.embedding_in_split && !p.loss_in_split;
  const int ends = auto_split && (L + 2) % V == 0 ? 2 : p.embedding_in_split + p.loss_in_split;
  if (V > L + ends)
    return fail(out, v > 1 ? "parallel.vpp" : "parallel.pp",
                "pp*vpp = " + str(pp) + "*" + str(v) + " = " + str(V) + " virtual stages but the model has only " +
                    str(L) + " layers");

  if (!p.stage_layers.empty()) return split_stage_layers(p, Shape{L, pp, v, V});
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) return split_first_last(p, Shape{L, pp, v, V});
  if (p.embedding_in_split || p.loss_in_split) return split_ends_as_layers(p, L, V);
  return split_chosen(L, V);
}

}  // namespace ptdsim::core
