#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "ptdsim/core/error.hpp"
#include "ptdsim/io/import.hpp"
#include "ptdsim/io/load.hpp"

// The malformed-input corpus, tests/data/bad/: one file per case, each pinned to its whole
// rendered message. The file's prefix says how it is loaded (model_, hardware_, scenario_,
// dataset_, the last as `validate --strict` reads it; hf_ as `ptdsim import hf` reads a
// config.json); include_* files are not cases of their own but are included by scenario_* cases.
using namespace ptdsim;

namespace {

struct Case {
  const char* file;
  const char* expected;  // "{data}" stands for PTDSIM_TEST_DATA
};

const Case kCases[] = {
    {"dataset_bad_split.yaml",
     "{data}/bad/dataset_bad_split.yaml:3:10: error: split must be one of fit, holdout, got \"train\"\n"
     "  split: train\n"
     "         ^"},
    {"dataset_missing_source.yaml",
     "{data}/bad/dataset_missing_source.yaml:1:3: error: missing required key 'source' in record\n"
     "- name: r\n"
     "  ^"},
    {"dataset_not_list.yaml",
     "{data}/bad/dataset_not_list.yaml:1:1: error: a dataset must be a list of records, got a mapping\n"
     "name: r\n"
     "^"},
    {"dataset_scenario_problem.yaml",
     "{data}/bad/dataset_scenario_problem.yaml:8:30: error: global_batch 9 is not a multiple of micro_batch*dp = 1*4 = 4\n"
     "    training: {seq_len: 512, global_batch: 9}\n"
     "                             ^"},
    {"hardware_collective_bad_scope.yaml",
     "{data}/bad/hardware_collective_bad_scope.yaml:6:15: error: hardware.collectives.all_reduce[0].scope must be one of intra, inter, got \"global\"\n"
     "    - {scope: global, ranks: 8, alpha_us: 20, busbw_gbs: 230}\n"
     "              ^"},
    {"hardware_collective_not_list.yaml",
     "{data}/bad/hardware_collective_not_list.yaml:5:15: error: hardware.collectives.all_gather must be a list, got a mapping\n"
     "  all_gather: {scope: intra, ranks: 8, alpha_us: 20, busbw_gbs: 230}\n"
     "              ^"},
    {"hardware_collective_unknown_op.yaml",
     "{data}/bad/hardware_collective_unknown_op.yaml:5:3: error: unknown key 'allreduce' in hardware.collectives; did you mean 'all_reduce'?\n"
     "  allreduce:\n"
     "  ^"},
    {"hardware_comm_sms_above_sms.yaml",
     "{data}/bad/hardware_comm_sms_above_sms.yaml:7:13: error: hardware.gpu.comm_sms must be below hardware.gpu.sms (108)\n"
     "  comm_sms: 108\n"
     "            ^"},
    {"hardware_comm_sms_without_sms.yaml",
     "{data}/bad/hardware_comm_sms_without_sms.yaml:6:13: error: hardware.gpu.comm_sms needs hardware.gpu.sms\n"
     "  comm_sms: 16\n"
     "            ^"},
    {"hardware_efficiency_range.yaml",
     "{data}/bad/hardware_efficiency_range.yaml:5:19: error: hardware.gpu.hbm_efficiency must be a number in (0, 1], got \"1.5\"\n"
     "  hbm_efficiency: 1.5\n"
     "                  ^"},
    {"hardware_latency_nan.yaml",
     "{data}/bad/hardware_latency_nan.yaml:2:57: error: hardware.node.intra.latency_us must be a non-negative number, got \".nan\"\n"
     "node: {gpus: 8, intra: {bandwidth_gbs: 300, latency_us: .nan}}\n"
     "                                                        ^"},
    {"hardware_matmul_row_missing.yaml",
     "{data}/bad/hardware_matmul_row_missing.yaml:7:7: error: missing required key 'k' in hardware.gpu.matmul_efficiency[0]\n"
     "    - {precision: bf16, m: 1024, n: 1024, efficiency: 0.7}\n"
     "      ^"},
    {"hardware_max_bytes_below_min.yaml",
     "{data}/bad/hardware_max_bytes_below_min.yaml:6:90: error: hardware.collectives.all_reduce[0].max_bytes must be larger than min_bytes 4096\n"
     "    - {scope: intra, ranks: 8, alpha_us: 20, busbw_gbs: 230, min_bytes: 4096, max_bytes: 1024}\n"
     "                                                                                         ^"},
    {"hardware_memory_negative.yaml",
     "{data}/bad/hardware_memory_negative.yaml:3:15: error: hardware.gpu.memory_gib must be a positive number, got \"-80\"\n"
     "  memory_gib: -80\n"
     "              ^"},
    {"hardware_missing_gpu.yaml",
     "{data}/bad/hardware_missing_gpu.yaml: error: missing required key 'gpu' in hardware"},
    {"hardware_node_gpus_string.yaml",
     "{data}/bad/hardware_node_gpus_string.yaml:2:14: error: hardware.node.gpus must be a positive integer, got \"eight\"\n"
     "node: {gpus: eight, intra: {bandwidth_gbs: 300, latency_us: 5}}\n"
     "             ^"},
    {"hardware_oversubscription_below_one.yaml",
     "{data}/bad/hardware_oversubscription_below_one.yaml:3:64: error: hardware.network.oversubscription must be a number of at least 1, got \"0.5\"\n"
     "network: {bandwidth_gbs: 25, latency_us: 10, oversubscription: 0.5}\n"
     "                                                               ^"},
    {"hardware_peak_empty.yaml",
     "{data}/bad/hardware_peak_empty.yaml:5:3: error: hardware.gpu.peak_tflops must give at least one precision\n"
     "  peak_tflops: {}\n"
     "  ^"},
    {"hardware_peak_unknown_precision.yaml",
     "{data}/bad/hardware_peak_unknown_precision.yaml:5:17: error: unknown key 'bf61' in hardware.gpu.peak_tflops; did you mean 'bf16'?\n"
     "  peak_tflops: {bf61: 312}\n"
     "                ^"},
    {"hardware_idle_above_tdp.yaml",
     "{data}/bad/hardware_idle_above_tdp.yaml:7:11: error: hardware.gpu.idle_w must be below hardware.gpu.tdp_w (400)\n"
     "  idle_w: 450\n"
     "          ^"},
    {"hf_bad_values.json",
     "{data}/bad/hf_bad_values.json:5:26: error: num_attention_heads must be a positive integer, got \"32.5\"\n"
     "  \"num_attention_heads\": 32.5,\n"
     "                         ^"},
    {"hf_syntax.json",
     "{data}/bad/hf_syntax.json:3:15: error: invalid JSON: syntax error while parsing object - unexpected string literal; expected '}'\n"
     "  \"hidden_size\": 4096\n"
     "              ^"},
    {"hf_unsupported_architecture.json",
     "{data}/bad/hf_unsupported_architecture.json:2:21: error: architecture 'FalconForCausalLM' is not supported (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM, GPTNeoXForCausalLM)\n"
     "  \"architectures\": [\"FalconForCausalLM\"],\n"
     "                    ^"},
    {"model_bias_not_bool.yaml",
     "{data}/bad/model_bias_not_bool.yaml:5:7: error: model.bias must be true or false, got \"yes\"\n"
     "bias: yes\n"
     "      ^"},
    {"model_binary.yaml",
     "{data}/bad/model_binary.yaml:1:10: error: invalid YAML: unknown escape character: ?\n"
     "\?ELF\?\?\?\?\?\?\?\?\?\?\?\?\?\?>\?\?\?\?\?\?\?\n"
     "         ^"},
    {"model_duplicate_key.yaml",
     "{data}/bad/model_duplicate_key.yaml:4:1: error: duplicate key 'layers' (first at line 1)\n"
     "layers: 8\n"
     "^"},
    {"model_empty.yaml",
     "{data}/bad/model_empty.yaml: error: model must be a mapping, got nothing"},
    {"model_heads_fraction.yaml",
     "{data}/bad/model_heads_fraction.yaml:3:8: error: model.heads must be a positive integer, got \"2.5\"\n"
     "heads: 2.5\n"
     "       ^"},
    {"model_hidden_huge.yaml",
     "{data}/bad/model_hidden_huge.yaml:2:9: error: model.hidden must be at most 268435456, got \"1e30\"\n"
     "hidden: 1e30\n"
     "        ^"},
    {"model_is_list.yaml",
     "{data}/bad/model_is_list.yaml:1:1: error: model must be a mapping, got a list\n"
     "- layers: 4\n"
     "^"},
    {"model_layers_negative.yaml",
     "{data}/bad/model_layers_negative.yaml:1:9: error: model.layers must be a positive integer, got \"-4\"\n"
     "layers: -4\n"
     "        ^"},
    {"model_layers_string.yaml",
     "{data}/bad/model_layers_string.yaml:2:9: error: model.layers must be a positive integer, got \"four\"\n"
     "layers: four\n"
     "        ^"},
    {"model_layers_zero.yaml",
     "{data}/bad/model_layers_zero.yaml:1:9: error: model.layers must be a positive integer, got \"0\"\n"
     "layers: 0\n"
     "        ^"},
    {"model_missing_layers.yaml",
     "{data}/bad/model_missing_layers.yaml: error: missing required key 'layers' in model"},
    {"model_mlp_unknown.yaml",
     "{data}/bad/model_mlp_unknown.yaml:5:6: error: model.mlp must be one of gelu, swiglu, got \"swiglo\"; did you mean 'swiglu'?\n"
     "mlp: swiglo\n"
     "     ^"},
    {"model_moe_list.yaml",
     "{data}/bad/model_moe_list.yaml:5:6: error: model.moe must be a mapping, got a list\n"
     "moe: [8, 2]\n"
     "     ^"},
    {"model_moe_missing_experts.yaml",
     "{data}/bad/model_moe_missing_experts.yaml:5:1: error: missing required key 'experts' in model.moe\n"
     "moe:\n"
     "^"},
    {"model_tabs.yaml",
     "{data}/bad/model_tabs.yaml:3:9: error: invalid YAML: a tab in the indentation (YAML indents with spaces only)\n"
     "\texperts: 8\n"
     "\t       ^"},
    {"model_truncated.yaml",
     "{data}/bad/model_truncated.yaml:5:1: error: invalid YAML: end of map flow not found\n"
     "moe: {experts: 8, top_k\n"
     "^"},
    {"model_unknown_key.yaml",
     "{data}/bad/model_unknown_key.yaml:2:1: error: unknown key 'layres' in model; did you mean 'layers'?\n"
     "layres: 4\n"
     "^"},
    {"scenario_cost_not_positive.yaml",
     "{data}/bad/scenario_cost_not_positive.yaml:5:18: error: cost.gpu_hour must be a positive number, got \"-2.5\"\n"
     "cost: {gpu_hour: -2.5}\n"
     "                 ^"},
    {"scenario_cost_unknown_key.yaml",
     "{data}/bad/scenario_cost_unknown_key.yaml:5:8: error: unknown key 'gpu_hours' in cost; did you mean 'gpu_hour'?\n"
     "cost: {gpu_hours: 2.5}\n"
     "       ^"},
    {"scenario_hardware_name_unknown.yaml",
     "{data}/bad/scenario_hardware_name_unknown.yaml:2:11: error: no shipped hardware named 'dgx-h10'; did you mean 'dgx-h100'? (shipped: dgx-a100-40g, dgx-a100-80g, dgx-b200, dgx-h100, dgx-h200, gb200-nvl72, gb300-nvl72; a path with '/' or ending in .yaml names any file)\n"
     "hardware: dgx-h10\n"
     "          ^"},
    {"scenario_main_grads_unknown.yaml",
     "{data}/bad/scenario_main_grads_unknown.yaml:4:57: error: training.main_grads must be one of fp32, 16bit, got \"fp16\"; did you mean 'fp32'?\n"
     "training: {seq_len: 4096, global_batch: 64, main_grads: fp16}\n"
     "                                                        ^"},
    {"scenario_many_problems.yaml",
     "{data}/bad/scenario_many_problems.yaml:3:20: error: unknown key 'gpuz' in cluster; did you mean 'gpus'?\n"
     "cluster: {gpus: 8, gpuz: 8}\n"
     "                   ^\n"
     "{data}/bad/scenario_many_problems.yaml:5:7: error: parallel.tp must be a positive integer, got \"eight\"\n"
     "  tp: eight\n"
     "      ^\n"
     "{data}/bad/scenario_many_problems.yaml:6:3: error: unknown key 'ppp' in parallel; did you mean 'pp'?\n"
     "  ppp: 2\n"
     "  ^\n"
     "{data}/bad/scenario_many_problems.yaml:7:22: error: parallel.sequence_parallel must be true or false, got \"maybe\"\n"
     "  sequence_parallel: maybe\n"
     "                     ^\n"
     "{data}/bad/scenario_many_problems.yaml:11:14: error: training.precision must be one of bf16, fp16, fp8, fp32, tf32, fp4, got \"bf61\"; did you mean 'bf16'?\n"
     "  precision: bf61\n"
     "             ^\n"
     "{data}/bad/scenario_many_problems.yaml:12:3: error: unknown key 'micro_bach' in training; did you mean 'micro_batch'?\n"
     "  micro_bach: 2\n"
     "  ^"},
    {"scenario_tokens_bad.yaml",
     "{data}/bad/scenario_tokens_bad.yaml:4:53: error: training.tokens must be a count of at least 1 (a number, or one with a suffix K, M, B or T such as 15T), got \"15 trillion\"\n"
     "training: {seq_len: 4096, global_batch: 64, tokens: 15 trillion}\n"
     "                                                    ^"},
    {"scenario_alias_cycle.yaml",
     "{data}/bad/scenario_alias_cycle.yaml:3:7: error: nesting deeper than 64 levels\n"
     "name: &x [*x]\n"
     "      ^"},
    {"scenario_batch.yaml",
     "{data}/bad/scenario_batch.yaml:8:3: error: global_batch 12 is not a multiple of micro_batch*dp = 2*4 = 8\n"
     "  global_batch: 12\n"
     "  ^"},
    {"scenario_bool_number.yaml",
     "{data}/bad/scenario_bool_number.yaml:4:31: error: parallel.sequence_parallel must be true or false, got \"1\"\n"
     "parallel: {sequence_parallel: 1}\n"
     "                              ^"},
    {"scenario_cluster_both.yaml",
     "{data}/bad/scenario_cluster_both.yaml:3:20: error: give cluster.gpus or cluster.nodes, not both\n"
     "cluster: {gpus: 8, nodes: 2}\n"
     "                   ^"},
    {"scenario_cluster_neither.yaml",
     "{data}/bad/scenario_cluster_neither.yaml:3:1: error: missing required key 'gpus' (or 'nodes') in cluster\n"
     "cluster: {}\n"
     "^"},
    {"scenario_deep_nesting.yaml",
     "{data}/bad/scenario_deep_nesting.yaml:3:71: error: nesting deeper than 64 levels\n"
     "name: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
     "                                                                      ^"},
    {"scenario_dp_bucket_zero.yaml",
     "{data}/bad/scenario_dp_bucket_zero.yaml:4:61: error: training.dp_bucket_params must be a number of at least 1, got \"0\"\n"
     "training: {seq_len: 512, global_batch: 8, dp_bucket_params: 0}\n"
     "                                                            ^"},
    {"scenario_ep_experts.yaml",
     "{data}/bad/scenario_ep_experts.yaml:10:3: error: ep 4 does not divide the 6 experts\n"
     "  ep: 4\n"
     "  ^"},
    {"scenario_framework_unknown.yaml",
     "{data}/bad/scenario_framework_unknown.yaml:7:14: error: training.framework must be one of megatron-lm-2021, "
     "megatron-core-0.8, nemo-24.07, deepspeed, pytorch-fsdp, llm-foundry, got \"megatron-core-08\"; did you mean "
     "'megatron-core-0.8'?\n"
     "  framework: megatron-core-08\n"
     "             ^"},
    {"scenario_gpu_count.yaml",
     "{data}/bad/scenario_gpu_count.yaml:6:3: error: tp*cp*pp*dp = 16 but the cluster has 8 GPUs (dp would be 4)\n"
     "  dp: 8\n"
     "  ^"},
    {"scenario_include_cross_field.yaml",
     "{data}/bad/include_model_hidden_heads.yaml:3:1: error: hidden 250 is not a multiple of heads 8\n"
     "hidden: 250\n"
     "^"},
    {"scenario_include_list.yaml",
     "{data}/bad/model_is_list.yaml:1:1: error: model must be a mapping, got a list\n"
     "- layers: 4\n"
     "^"},
    {"scenario_include_malformed.yaml",
     "{data}/bad/model_layers_string.yaml:2:9: error: model.layers must be a positive integer, got \"four\"\n"
     "layers: four\n"
     "        ^"},
    {"scenario_is_scalar.yaml",
     "{data}/bad/scenario_is_scalar.yaml:1:1: error: scenario must be a mapping, got \"just some text\"\n"
     "just some text\n"
     "^"},
    {"scenario_layers_pp_vpp.yaml",
     "{data}/bad/scenario_layers_pp_vpp.yaml:6:3: error: pp*vpp = 2*3 = 6 virtual stages but the model has only 4 layers\n"
     "  vpp: 3\n"
     "  ^"},
    {"scenario_list_not_map.yaml",
     "{data}/bad/scenario_list_not_map.yaml:4:11: error: parallel must be a mapping, got a list\n"
     "parallel: [2, 2]\n"
     "          ^"},
    {"scenario_missing_include.yaml",
     "{data}/bad/scenario_missing_include.yaml:1:8: error: cannot open file '{data}/good/no-such-model.yaml'\n"
     "model: ../good/no-such-model.yaml\n"
     "       ^"},
    {"scenario_missing_training.yaml",
     "{data}/bad/scenario_missing_training.yaml: error: missing required key 'training' in scenario"},
    {"scenario_nodes_overflow.yaml",
     "{data}/bad/scenario_nodes_overflow.yaml:3:18: error: cluster.nodes * hardware.node.gpus = 40000000 GPUs is more than 16777216\n"
     "cluster: {nodes: 10000000}\n"
     "                 ^"},
    {"scenario_non_string_key.yaml",
     "{data}/bad/scenario_non_string_key.yaml:4:1: error: mapping keys must be plain strings\n"
     "[a, b]: 1\n"
     "^"},
    {"scenario_placement_bad.yaml",
     "{data}/bad/scenario_placement_bad.yaml:4:23: error: parallel.placement must name tp, cp, ep, dp and pp once each, joined by '-', got \"tp-dp-pp\"\n"
     "parallel: {placement: tp-dp-pp}\n"
     "                      ^"},
    {"scenario_precision_fp4.yaml",
     "{data}/bad/scenario_precision_fp4.yaml:7:3: error: fp4 is a peak rate only: 4-bit training is not modelled (use fp8 or bf16)\n"
     "  precision: fp4\n"
     "  ^"},
    {"scenario_precision_unsupported.yaml",
     "{data}/bad/scenario_precision_unsupported.yaml:7:3: error: fp8 has no peak rate on T-1\n"
     "  precision: fp8\n"
     "  ^"},
    {"scenario_schedule_unknown.yaml",
     "{data}/bad/scenario_schedule_unknown.yaml:4:29: error: parallel.schedule must be one of gpipe, 1f1b, interleaved, zb-h1, got \"1f1\"; did you mean '1f1b'?\n"
     "parallel: {pp: 2, schedule: 1f1}\n"
     "                            ^"},
    {"scenario_seq_len_positions.yaml",
     "{data}/bad/scenario_seq_len_positions.yaml:4:12: error: seq_len 4096 exceeds the model's learned positions (max_seq_len 2048)\n"
     "training: {seq_len: 4096, global_batch: 8}\n"
     "           ^"},
    {"scenario_stage_layers_bad.yaml",
     "{data}/bad/scenario_stage_layers_bad.yaml:4:37: error: parallel.stage_layers[1] must be a positive integer, got \"two\"\n"
     "parallel: {pp: 2, stage_layers: [2, two]}\n"
     "                                    ^"},
    {"scenario_stage_layers_sum.yaml",
     "{data}/bad/scenario_stage_layers_sum.yaml:4:19: error: stage_layers add up to 5 but the model has 4 layers\n"
     "parallel: {pp: 2, stage_layers: [2, 3]}\n"
     "                  ^"},
    {"scenario_tp_heads.yaml",
     "{data}/bad/scenario_tp_heads.yaml:5:3: error: tp 3 does not divide heads 8\n"
     "  tp: 3\n"
     "  ^\n"
     "{data}/bad/scenario_tp_heads.yaml:5:3: error: tp 3 does not divide ffn_hidden 1024\n"
     "  tp: 3\n"
     "  ^"},
    {"scenario_tp_huge.yaml",
     "{data}/bad/scenario_tp_huge.yaml:5:7: error: parallel.tp must be at most 16777216, got \"1e30\"\n"
     "  tp: 1e30\n"
     "      ^"},
    {"scenario_tp_string.yaml",
     "{data}/bad/scenario_tp_string.yaml:5:7: error: parallel.tp must be a positive integer, got \"eight\"\n"
     "  tp: eight\n"
     "      ^"},
    {"scenario_two_documents.yaml",
     "{data}/bad/scenario_two_documents.yaml:6:1: error: expected one YAML document, found 2\n"
     "cluster: {gpus: 16}\n"
     "^"},
    {"scenario_unknown_key.yaml",
     "{data}/bad/scenario_unknown_key.yaml:4:1: error: unknown key 'paralel' in scenario; did you mean 'parallel'?\n"
     "paralel:\n"
     "^"},
    {"scenario_unknown_nested_key.yaml",
     "{data}/bad/scenario_unknown_nested_key.yaml:6:3: error: unknown key 'micro_bach' in training; did you mean 'micro_batch'?\n"
     "  micro_bach: 2\n"
     "  ^"},
    {"scenario_zero_range.yaml",
     "{data}/bad/scenario_zero_range.yaml:4:18: error: parallel.zero must be an integer from 0 to 3, got \"4\"\n"
     "parallel: {zero: 4}\n"
     "                 ^"},
};

std::string expand(std::string s) {
  const std::string key = "{data}";
  for (auto pos = s.find(key); pos != std::string::npos; pos = s.find(key))
    s.replace(pos, key.size(), PTDSIM_TEST_DATA);
  return s;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The rendered ConfigError, "(no error)", or what else was thrown.
std::string load(const std::string& file) {
  const std::string path = std::string(PTDSIM_TEST_DATA "/bad/") + file;
  try {
    if (starts_with(file, "model_")) {
      io::load_model(path);
    } else if (starts_with(file, "hardware_")) {
      io::load_hardware(path);
    } else if (starts_with(file, "scenario_")) {
      io::load_scenario(path);
    } else if (starts_with(file, "hf_")) {
      io::import_hf(path, "", {});
    } else if (starts_with(file, "dataset_")) {
      // as `validate --strict` reads it: a record that cannot be modelled fails the file
      io::require_all_modelled(io::load_dataset(path));
    } else {
      return "(unknown prefix)";
    }
  } catch (const core::ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(other exception) ") + e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("io: every malformed input gives its exact message", "[io][errors][corpus]") {
  for (const auto& c : kCases) {
    DYNAMIC_SECTION(c.file) { CHECK(load(c.file) == expand(c.expected)); }
  }
}

TEST_CASE("io: the corpus table and tests/data/bad agree", "[io][errors][corpus]") {
  std::set<std::string> listed;
  for (const auto& c : kCases) listed.insert(c.file);
  std::set<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(PTDSIM_TEST_DATA "/bad")) {
    const std::string name = e.path().filename().string();
    if (!starts_with(name, "include_")) on_disk.insert(name);
  }
  CHECK(listed == on_disk);
  CHECK(listed.size() >= 35);
}

TEST_CASE("io: an include_ helper of the corpus is valid on its own", "[io][errors][corpus]") {
  // its only fault is cross-field (hidden 250 over 8 heads), which a model file alone cannot show
  CHECK(io::load_model(PTDSIM_TEST_DATA "/bad/include_model_hidden_heads.yaml").hidden == 250);
}
