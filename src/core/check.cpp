#include "ptdsim/core/check.hpp"


#include "ptdsim/core/names.hpp"
#include "ptdsim/core/schedule.hpp"
#include "ptdsim/core/split.hpp"

namespace ptdsim::core {

std::vector<Problem> check(const Scenario& s) {
  std::vector<Problem> out;
  auto fail = [&](const char* key, const char* reason, std::string msg) {
    out.push_back(Problem{key, reason, std::move(msg)});
  };
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& t = s.training;
  auto str = [](long long v) { return std::to_string(v); };

  const long long model_parallel = 1LL * p.tp * p.cp * p.pp;
  if (s.gpus % model_parallel != 0) {
    fail("parallel.tp", "divisibility",
         "tp*cp*pp = " + str(p.tp) + "*" + str(p.cp) + "*" + str(p.pp) + " = " + str(model_parallel) +
             " does not divide the " + str(s.gpus) + " GPUs");
  } else if (model_parallel * p.dp != s.gpus) {
    fail("parallel.dp", "divisibility",
         "tp*cp*pp*dp = " + str(model_parallel * p.dp) + " but the cluster has " + str(s.gpus) +
             " GPUs (dp would be " + str(s.gpus / model_parallel) + ")");
  }
  if (m.hidden % m.heads != 0)
    fail("model.hidden", "divisibility",
         "hidden " + str(m.hidden) + " is not a multiple of heads " + str(m.heads));
  if (m.heads % m.kv_heads != 0)
    fail("model.kv_heads", "divisibility",
         "kv_heads " + str(m.kv_heads) + " does not divide heads " + str(m.heads));
  if (m.heads % p.tp != 0)
    fail("parallel.tp", "divisibility", "tp " + str(p.tp) + " does not divide heads " + str(m.heads));
  if (m.kv_heads != m.heads && m.kv_heads % p.tp != 0)
    fail("parallel.tp", "divisibility",
         "tp " + str(p.tp) + " does not divide kv_heads " + str(m.kv_heads));
  if (m.ffn_hidden % p.tp != 0)
    fail("parallel.tp", "divisibility",
         "tp " + str(p.tp) + " does not divide ffn_hidden " + str(m.ffn_hidden));

  // the pipeline split (core/split.cpp): every virtual stage holds a layer, or the embedding or
  // the loss in its place
  {
    const PipelineSplit split = pipeline_split(s);
    if (split.layers.empty()) {
      fail(split.key.c_str(), "divisibility", split.problem);
    } else {
      for (std::size_t i = 0; i < split.layers.size(); ++i) {
        const bool end_slot = (i == 0 && split.embedding_slot) || (i + 1 == split.layers.size() && split.loss_slot);
        if (split.layers[i] < 0 || (split.layers[i] == 0 && !end_slot)) {
          fail(split.method == SplitMethod::stage_layers ? "parallel.stage_layers" : "parallel.pp", "divisibility",
               "virtual stage " + str(static_cast<long long>(i)) + " of the " + std::string(name(split.method)) +
                   " split holds no layer (" + describe_layers(split.layers) + ")");
          break;
        }
      }
    }
  }

  if (p.vpp > 1 && p.pp == 1)
    fail("parallel.vpp", "unsupported", "vpp > 1 needs pipeline parallelism (pp > 1)");

  // the schedule's own constraints (src/core/schedule/), with the micro-batch count once it is whole
  const long long per_step = 1LL * t.micro_batch * p.dp;
  const bool whole = per_step > 0 && t.global_batch % per_step == 0;
  schedule_rules(p.schedule)
      .check(PipelineShape{p.pp, p.vpp, whole ? static_cast<int>(t.global_batch / per_step) : 0}, out);
  if (!whole && per_step > 0)
    fail("training.global_batch", "batch",
         "global_batch " + str(t.global_batch) + " is not a multiple of micro_batch*dp = " +
             str(t.micro_batch) + "*" + str(p.dp) + " = " + str(per_step));

  if (m.moe) {
    if (m.moe->experts % p.ep != 0)
      fail("parallel.ep", "divisibility",
           "ep " + str(p.ep) + " does not divide the " + str(m.moe->experts) + " experts");
    if (m.moe->top_k > m.moe->experts)
      fail("model.moe.top_k", "range",
           "top_k " + str(m.moe->top_k) + " exceeds the " + str(m.moe->experts) + " experts");
  } else if (p.ep > 1) {
    fail("parallel.ep", "unsupported", "ep > 1 needs a mixture-of-experts model (model.moe)");
  }
  if (p.ep > 1 && (1LL * p.dp * p.cp) % p.ep != 0)
    fail("parallel.ep", "divisibility",
         "ep " + str(p.ep) + " must divide dp*cp = " + str(1LL * p.dp * p.cp) +
             " (experts are spread over data-parallel ranks)");

  // what the simulator expands into tasks, bounded so no accepted scenario outgrows memory and time
  if (per_step > 0 && t.global_batch % per_step == 0) {
    const long long micro_batches = t.global_batch / per_step;
    const bool per_layer = p.zero >= 3;
    const long long chunks = per_layer ? m.layers : 1LL * p.pp * p.vpp;
    if (micro_batches * chunks > kMaxPipelinePasses)
      fail("training.global_batch", "size",
           str(micro_batches) + " micro-batches x " + str(chunks) +
               (per_layer ? " layers (ZeRO-3 runs each pass per layer)" : " pipeline chunks (pp*vpp)") +
               " = " + str(micro_batches * chunks) + " pipeline passes per step, more than the " +
               str(kMaxPipelinePasses) + " the simulator takes");
  }
  if (p.zero == 3 && p.sharding.shard_ranks > 0 && (1LL * p.dp * p.cp) % p.sharding.shard_ranks != 0)
    fail("parallel.sharding.shard_ranks", "divisibility",
         "shard_ranks " + str(p.sharding.shard_ranks) + " must divide dp*cp = " + str(1LL * p.dp * p.cp) +
             " (each shard group is replicated dp*cp/shard_ranks times)");

  if (t.seq_len % (2 * p.cp) != 0 && p.cp > 1)
    fail("parallel.cp", "divisibility",
         "seq_len " + str(t.seq_len) + " must be a multiple of 2*cp = " + str(2 * p.cp) +
             " (each rank takes two balanced chunks)");
  if (p.sequence_parallel && p.tp > 1 && (t.seq_len / p.cp) % p.tp != 0)
    fail("parallel.sequence_parallel", "divisibility",
         "sequence parallel needs seq_len/cp = " + str(t.seq_len / p.cp) + " to be a multiple of tp " +
             str(p.tp));
  if (m.position == Position::learned && t.seq_len > m.max_seq_len)
    fail("training.seq_len", "range",
         "seq_len " + str(t.seq_len) + " exceeds the model's learned positions (max_seq_len " +
             str(m.max_seq_len) + ")");
  if (t.precision == Precision::fp4)
    fail("training.precision", "unsupported",
         "fp4 is a peak rate only: 4-bit training is not modelled (use fp8 or bf16)");
  else if (s.hardware.gpu.peak_flops[static_cast<int>(t.precision)] <= 0)
    fail("training.precision", "unsupported",
         std::string(name(t.precision)) + " has no peak rate on " + s.hardware.gpu.name);
  return out;
}

}  // namespace ptdsim::core
