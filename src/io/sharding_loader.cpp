#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/units.hpp"
#include "schema.hpp"

// parallel.sharding: how a ZeRO-3 / FSDP framework runs its sharded parameters (docs/inputs.md).
namespace ptdsim::io::detail {

core::Sharding convert_sharding(const Node& node, const Mark& where) {
  Fields sh(node, where, "parallel.sharding", "parallel.sharding", section_keys("parallel.sharding"));
  core::Sharding z;
  z.unit_layers = sh.number("unit_layers", 1.0);
  z.reshard_after_forward = sh.boolean("reshard_after_forward", true);
  z.pipeline_accumulates = sh.boolean("pipeline_accumulates", false);
  z.regather_on_recompute = sh.boolean("regather_on_recompute", false);
  const std::string dtype = sh.choice("reduce_dtype", {"fp32", "bf16", "fp16"}).value_or("fp32");
  z.reduce_bytes = dtype == "fp32" ? 4 : 2;
  z.prefetch_units = static_cast<int>(sh.integer("prefetch_units", 1));
  z.backward_prefetch = sh.boolean("backward_prefetch", true);
  z.max_live_params = sh.number("max_live_params", 0.0);
  z.sync = sh.boolean("sync", false);
  z.overhead_s = sh.number("overhead_us", 0.0) * core::kMicro;
  z.overhead_per_rank_s = sh.number("overhead_per_rank_us", 0.0) * core::kMicro;
  z.shard_ranks = static_cast<int>(sh.integer("shard_ranks", 0));
  return z;
}

}  // namespace ptdsim::io::detail
