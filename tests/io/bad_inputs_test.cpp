#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ptdsim/calibrate/kernel_tables.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/import.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/study.hpp"

// The malformed-input corpus, tests/data/bad/: one file per case, each pinned to its whole
// rendered message. The file's prefix says how it is loaded (model_, hardware_, scenario_,
// dataset_, the last as `validate --strict` reads it; study_ as `ptdsim study` reads a study file;
// hf_ as `ptdsim import hf` reads a config.json; csv_<table>__ for the measured kernel tables of
// `ptdsim calibrate import-kernels`); include_* files are not cases of their own but are included
// by scenario_* cases.
using namespace ptdsim;

namespace {

struct Case {
  const char* file;
  const char* expected;  // "{data}" stands for PTDSIM_TEST_DATA
};

const Case kCases[] = {
    {"study_bad_range.yaml",
     "{data}/bad/study_bad_range.yaml:4:17: error: vary.cluster.gpus: a range 'FIRST..LAST xF' needs F above 1 and FIRST above 0, got '1024..16384 x1'\n"
     "  cluster.gpus: 1024..16384 x1\n"
     "                ^"},
    {"study_bad_value.yaml",
     "{data}/bad/study_bad_value.yaml:4:22: error: cluster.gpus must be a positive integer, got \"many\"\n"
     "  cluster.gpus: [16, many]\n"
     "                     ^"},
    {"study_degrees.yaml",
     "{data}/bad/study_degrees.yaml:4:15: error: degrees.tp: positive integers and ranges such as 4,8 or 4..16, got \"0..x\"\n"
     "degrees: {tp: \"0..x\"}\n"
     "              ^"},
    {"study_missing_base.yaml",
     "{data}/bad/study_missing_base.yaml:2:7: error: cannot open file '{data}/study/missing.yaml'\n"
     "base: ../study/missing.yaml\n"
     "      ^"},
    {"study_no_vary.yaml",
     "{data}/bad/study_no_vary.yaml: error: a study needs 'vary': keys --set takes and their values"},
    {"study_objective.yaml",
     "{data}/bad/study_objective.yaml:4:12: error: objective: one of time, memory, mfu, days, gpu_hours, energy, cost; got \"fastest\"\n"
     "objective: fastest\n"
     "           ^"},
    {"study_unknown_key.yaml",
     "{data}/bad/study_unknown_key.yaml:4:3: error: vary: unknown key 'hardware.network.bandwith_gbs'; did you mean 'hardware.network.bandwidth_gbs'?\n"
     "  hardware.network.bandwith_gbs: [25, 50]\n"
     "  ^"},
    {"study_zip_lengths.yaml",
     "{data}/bad/study_zip_lengths.yaml:6:21: error: zip: 'hardware.gpu.memory_gib' has 2 values and 'cluster.gpus' 3; zipped keys need as many each\n"
     "zip: [cluster.gpus, hardware.gpu.memory_gib]\n"
     "                    ^"},
    {"csv_attention__backward_not_positive.csv",
     "{data}/bad/csv_attention__backward_not_positive.csv:2:39: error: fwd_bwd_s must exceed fwd_s (the backward is their difference)\n"
     "bf16,8,8,128,1024,16,True,8.56928e-05,8.5e-05\n"
     "                                      ^"},
    {"csv_contention__fraction_blocks.csv",
     "{data}/bad/csv_contention__fraction_blocks.csv:2:16: error: blocks must be a positive integer, got '16.5'\n"
     "8192,8192,8192,16.5,0.00160326,0.00189367\n"
     "               ^"},
    {"csv_cross_entropy__short_row.csv",
     "{data}/bad/csv_cross_entropy__short_row.csv:2:1: error: row has 4 columns, the header (line 1) has 5\n"
     "32000,1,8192,0.002135\n"
     "^"},
    {"csv_elementwise__unknown_op.csv",
     "{data}/bad/csv_elementwise__unknown_op.csv:3:1: error: op must be one of layernorm, rmsnorm, gelu_tanh, gelu, swiglu, dropout, residual_add, got 'softmax'\n"
     "softmax,8192,2048,33554432,3.78816e-05,0.000169034\n"
     "^"},
    {"csv_gemm__missing_column.csv",
     "{data}/bad/csv_gemm__missing_column.csv:1:1: error: missing column 'k'\n"
     "precision,hidden,tp,op,m,n,time_s\n"
     "^"},
    {"csv_gemm__not_a_number.csv",
     "{data}/bad/csv_gemm__not_a_number.csv:3:20: error: time_s must be a positive number, got 'fast'\n"
     "fp8,1024,6144,2048,fast\n"
     "                   ^"},
    {"csv_gemm__precision.csv",
     "{data}/bad/csv_gemm__precision.csv:3:1: error: precision must be one of bf16, fp8, got 'fp16'\n"
     "fp16,1024,6144,2048,3.9e-05\n"
     "^"},
    {"csv_gemm__short_row.csv",
     "{data}/bad/csv_gemm__short_row.csv:3:1: error: row has 5 columns, the header (line 1) has 6\n"
     "bf16,2048,6144,2048,7.19552e-05\n"
     "^"},
    {"csv_attention__kv_heads_not_dividing.csv",
     "{data}/bad/csv_attention__kv_heads_not_dividing.csv:2:8: error: kv_heads 3 must divide heads 8\n"
     "bf16,8,3,128,1024,16,True,8.8e-05,0.00053\n"
     "       ^"},
    {"csv_gemm__duplicate_column.csv",
     "{data}/bad/csv_gemm__duplicate_column.csv:1:24: error: column 'm' appears twice (first at column 11): which one holds the values?\n"
     "precision,m,n,k,time_s,m\n"
     "                       ^"},
    {"csv_gemm__side_huge.csv",
     "{data}/bad/csv_gemm__side_huge.csv:2:6: error: m must be from 1 to 1.09951e+12, got '9223372036854775808'\n"
     "bf16,9223372036854775808,1024,1024,0.001\n"
     "     ^"},
    {"csv_gemm__unclosed_quote.csv",
     "{data}/bad/csv_gemm__unclosed_quote.csv:2:21: error: unclosed quote: this field has no closing '\"'\n"
     "bf16,1024,1024,1024,\"0.001\n"
     "                    ^"},
    {"csv_optimizer__time_nan.csv",
     "{data}/bad/csv_optimizer__time_nan.csv:2:28: error: time_s must be a positive number, got 'nan'\n"
     "adamw_fused_fp32,100000000,nan,28\n"
     "                           ^"},
    {"csv_optimizer__time_tiny.csv",
     "{data}/bad/csv_optimizer__time_tiny.csv:2:28: error: time_s must be from 1e-08 to 1000, got '1e-300'\n"
     "adamw_fused_fp32,100000000,1e-300,28\n"
     "                           ^"},
    {"csv_optimizer__empty.csv",
     "{data}/bad/csv_optimizer__empty.csv:1:1: error: empty file: expected a header line naming the columns"},
    {"dataset_bad_split.yaml",
     "{data}/bad/dataset_bad_split.yaml:3:10: error: split must be one of fit, holdout, got \"train\"\n"
     "  split: train\n"
     "         ^"},
    {"dataset_flops_convention.yaml",
     "{data}/bad/dataset_flops_convention.yaml:3:21: error: flops_convention must be one of megatron96, megatron72, megatron, "
     "megatron-2024, model, unstated, got \"megatron2025\"; did you mean 'megatron-2024'?\n"
     "  flops_convention: megatron2025\n"
     "                    ^"},
    {"dataset_two_peaks.yaml",
     "{data}/bad/dataset_two_peaks.yaml:5:3: error: measured gives peak_memory_gib and peak_reserved_gib: give one (the source's)\n"
     "  measured: {peak_memory_gib: 70, peak_reserved_gib: 68}\n"
     "  ^"},
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
    {"hardware_bandwidth_in_bytes.yaml",
     "{data}/bad/hardware_bandwidth_in_bytes.yaml:7:26: error: hardware.network.bandwidth_gbs must be at most 100000000 GB/s, got \"25e9\"\n"
     "network: {bandwidth_gbs: 25e9, latency_us: 10}\n"
     "                         ^"},
    {"hardware_collective_bad_scope.yaml",
     "{data}/bad/hardware_collective_bad_scope.yaml:6:15: error: hardware.collectives.all_reduce[0].scope must be one of intra, inter, got \"global\"\n"
     "    - {scope: global, ranks: 8, alpha_us: 20, busbw_gbs: 230}\n"
     "              ^"},
    {"hardware_collective_unknown_algorithm.yaml",
     "{data}/bad/hardware_collective_unknown_algorithm.yaml:6:63: error: hardware.collectives.all_reduce[0].algorithm must be one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat, got \"hypercube\"\n"
     "    - {scope: inter, ranks: 16, ranks_per_node: 8, algorithm: hypercube, alpha_us: 40, busbw_gbs: 190}\n"
     "                                                              ^"},
    {"hardware_collective_algorithm_p2p.yaml",
     "{data}/bad/hardware_collective_algorithm_p2p.yaml:6:62: error: hardware.collectives.all_to_all[0].protocol names an NCCL protocol, but all_to_all runs point-to-point, outside NCCL's algorithms and protocols\n"
     "    - {scope: inter, ranks: 16, ranks_per_node: 8, protocol: simple, alpha_us: 40, busbw_gbs: 20}\n"
     "                                                             ^"},
    {"hardware_collective_not_list.yaml",
     "{data}/bad/hardware_collective_not_list.yaml:5:15: error: hardware.collectives.all_gather must be a list, got a mapping\n"
     "  all_gather: {scope: intra, ranks: 8, alpha_us: 20, busbw_gbs: 230}\n"
     "              ^"},
    {"hardware_collective_unknown_op.yaml",
     "{data}/bad/hardware_collective_unknown_op.yaml:5:3: error: unknown key 'allreduce' in hardware.collectives; did you mean 'all_reduce'?\n"
     "  allreduce:\n"
     "  ^"},
    {"hardware_collective_intra_per_node.yaml",
     "{data}/bad/hardware_collective_intra_per_node.yaml:6:48: error: hardware.collectives.all_reduce[0].ranks_per_node must equal ranks (8) for scope intra\n"
     "    - {scope: intra, ranks: 8, ranks_per_node: 4, alpha_us: 20, busbw_gbs: 230}\n"
     "                                               ^"},
    {"hardware_collective_ranks_per_node.yaml",
     "{data}/bad/hardware_collective_ranks_per_node.yaml:6:49: error: hardware.collectives.all_reduce[0].ranks_per_node must divide ranks (16)\n"
     "    - {scope: inter, ranks: 16, ranks_per_node: 3, alpha_us: 40, busbw_gbs: 190}\n"
     "                                                ^"},
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
    {"hardware_kernels_attention_one_direction.yaml",
     "{data}/bad/hardware_kernels_attention_one_direction.yaml:9:5: error: missing required key 'backward' in hardware.gpu.kernels.attention\n"
     "    attention:\n"
     "    ^"},
    {"hardware_kernels_flash2_zero_rate.yaml",
     "{data}/bad/hardware_kernels_flash2_zero_rate.yaml:10:26: error: hardware.gpu.kernels.attention_flash2.backward.tflops must be a positive number, got \"0\"\n"
     "      backward: {tflops: 0, q_gbs: 113, kv_gbs: 323}\n"
     "                         ^"},
    {"hardware_kernels_contention_share.yaml",
     "{data}/bad/hardware_kernels_contention_share.yaml:9:26: error: hardware.gpu.kernels.contention.factor times hardware.gpu.comm_sms / hardware.gpu.sms must stay below 1, got 1.030303\n"
     "    contention: {factor: 8.5}\n"
     "                         ^"},
    {"hardware_kernels_duplicate_row.yaml",
     "{data}/bad/hardware_kernels_duplicate_row.yaml:13:11: error: hardware.gpu.kernels.gemm.rows[2] measures the same shape as hardware.gpu.kernels.gemm.rows[0]\n"
     "        - {precision: bf16, m: 1024, n: 1024, k: 1024, time_us: 21}\n"
     "          ^"},
    {"hardware_kernels_fp8_kernel_unknown.yaml",
     "{data}/bad/hardware_kernels_fp8_kernel_unknown.yaml:10:9: error: unknown key 'fastaccum' in hardware.gpu.kernels.gemm.fp8_kernels; did you mean 'fast_accum'?\n"
     "        fastaccum: {tflops: 1500, epilogue_gbs: 4280, floor_us: 18.5, knee: 1.8, tail: 0.12, tile_m: 256, tile_n: 128}\n"
     "        ^"},
    {"hardware_kernels_fp8_kernels_without_sms.yaml",
     "{data}/bad/hardware_kernels_fp8_kernels_without_sms.yaml:8:7: error: hardware.gpu.kernels.gemm.fp8_kernels needs hardware.gpu.sms: the model counts waves of tiles over the SMs\n"
     "      fp8_kernels:\n"
     "      ^"},
    {"hardware_kernels_model_without_sms.yaml",
     "{data}/bad/hardware_kernels_model_without_sms.yaml:8:7: error: hardware.gpu.kernels.gemm.model needs hardware.gpu.sms: the model counts waves of tiles over the SMs\n"
     "      model:\n"
     "      ^"},
    {"hardware_kernels_negative_rate.yaml",
     "{data}/bad/hardware_kernels_negative_rate.yaml:10:50: error: hardware.gpu.kernels.memory_bound.rmsnorm.backward_gbs must be a positive number, got \"-838\"\n"
     "      rmsnorm: {forward_gbs: 1850, backward_gbs: -838}\n"
     "                                                 ^"},
    {"hardware_kernels_overhead_factor_zero.yaml",
     "{data}/bad/hardware_kernels_overhead_factor_zero.yaml:9:51: error: hardware.gpu.kernels.overhead.memory_bound_factor must be a positive number, got \"0\"\n"
     "    overhead: {layer_us: 40, memory_bound_factor: 0}\n"
     "                                                  ^"},
    {"hardware_kernels_row_precision.yaml",
     "{data}/bad/hardware_kernels_row_precision.yaml:11:23: error: hardware.gpu.kernels.gemm.rows[0].precision must be one of bf16, fp8, got \"fp16\"; did you mean 'bf16'?\n"
     "        - {precision: fp16, m: 1024, n: 1024, k: 1024, time_us: 20}\n"
     "                      ^"},
    {"hardware_kernels_rows_not_list.yaml",
     "{data}/bad/hardware_kernels_rows_not_list.yaml:10:13: error: hardware.gpu.kernels.gemm.rows must be a list, got a mapping\n"
     "      rows: {precision: bf16, m: 1024, n: 1024, k: 1024, time_us: 20}\n"
     "            ^"},
    {"hardware_kernels_tail_range.yaml",
     "{data}/bad/hardware_kernels_tail_range.yaml:11:82: error: hardware.gpu.kernels.gemm.model.bf16.tail must be at most 1, got \"1.5\"\n"
     "        bf16: {tflops: 718, epilogue_gbs: 4759, floor_us: 19.3, knee: 2.6, tail: 1.5, tile_m: 128, tile_n: 128}\n"
     "                                                                                 ^"},
    {"hardware_kernels_unknown_key.yaml",
     "{data}/bad/hardware_kernels_unknown_key.yaml:10:7: error: unknown key 'modle' in hardware.gpu.kernels.gemm; did you mean 'model'?\n"
     "      modle: {}\n"
     "      ^"},
    {"hardware_latency_nan.yaml",
     "{data}/bad/hardware_latency_nan.yaml:2:57: error: hardware.node.intra.latency_us must be a non-negative number, got \".nan\"\n"
     "node: {gpus: 8, intra: {bandwidth_gbs: 300, latency_us: .nan}}\n"
     "                                                        ^"},
    {"hardware_latency_seconds.yaml",
     "{data}/bad/hardware_latency_seconds.yaml:7:42: error: hardware.network.latency_us must be at most 1000000 us, got \"1e308\"\n"
     "network: {bandwidth_gbs: 25, latency_us: 1e308}\n"
     "                                         ^"},
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
    {"hardware_topology_unknown.yaml",
     "{data}/bad/hardware_topology_unknown.yaml:4:56: error: hardware.network.topology must be one of fat-tree, "
     "rail-optimized, got \"dragonfly\"\n"
     "network: {bandwidth_gbs: 25, latency_us: 10, topology: dragonfly}\n"
     "                                                       ^"},
    {"hardware_placement_unknown.yaml",
     "{data}/bad/hardware_placement_unknown.yaml:4:57: error: hardware.network.placement must be one of dense, "
     "fragmented, got \"scattered\"\n"
     "network: {bandwidth_gbs: 25, latency_us: 10, placement: scattered}\n"
     "                                                        ^"},
    {"hardware_nics_per_node_uneven.yaml",
     "{data}/bad/hardware_nics_per_node_uneven.yaml:3:61: error: hardware.network.nics_per_node must divide or be a multiple of hardware.node.gpus (8)\n"
     "network: {bandwidth_gbs: 50, latency_us: 10, nics_per_node: 3}\n"
     "                                                            ^"},
    {"hardware_planes_zero.yaml",
     "{data}/bad/hardware_planes_zero.yaml:3:54: error: hardware.network.planes must be a positive integer, got \"0\"\n"
     "network: {bandwidth_gbs: 50, latency_us: 10, planes: 0}\n"
     "                                                     ^"},
    {"hardware_tier_name_empty.yaml",
     "{data}/bad/hardware_tier_name_empty.yaml:7:14: error: hardware.network.tiers[0].name must not be empty\n"
     "    - {name: \"\", radix: 64, bandwidth_gbs: 50, latency_us: 0.6}\n"
     "             ^"},
    {"hardware_tier_nodes_not_multiple.yaml",
     "{data}/bad/hardware_tier_nodes_not_multiple.yaml:8:28: error: hardware.network.tiers[1].nodes must be a multiple of the tier below's 32 nodes\n"
     "    - {name: spine, nodes: 48, bandwidth_gbs: 50, latency_us: 0.6}\n"
     "                           ^"},
    {"hardware_tier_oversubscription_below_one.yaml",
     "{data}/bad/hardware_tier_oversubscription_below_one.yaml:7:85: error: hardware.network.tiers[0].oversubscription must be a number of at least 1, got \"0.5\"\n"
     "    - {name: leaf, radix: 64, bandwidth_gbs: 50, latency_us: 0.6, oversubscription: 0.5}\n"
     "                                                                                    ^"},
    {"hardware_tier_radix_one.yaml",
     "{data}/bad/hardware_tier_radix_one.yaml:7:27: error: hardware.network.tiers[0].radix must be an integer of at least 2, got \"1\"\n"
     "    - {name: leaf, radix: 1, bandwidth_gbs: 50, latency_us: 0.6}\n"
     "                          ^"},
    {"hardware_tier_unbounded_below_top.yaml",
     "{data}/bad/hardware_tier_unbounded_below_top.yaml:7:7: error: hardware.network.tiers[0] needs radix or nodes: only the top tier may reach every node\n"
     "    - {name: leaf, bandwidth_gbs: 50, latency_us: 0.6}\n"
     "      ^"},
    {"hardware_tier_unknown_key.yaml",
     "{data}/bad/hardware_tier_unknown_key.yaml:7:31: error: unknown key 'bandwith_gbs' in hardware.network.tiers[0]; did you mean 'bandwidth_gbs'?\n"
     "    - {name: leaf, radix: 64, bandwith_gbs: 50, latency_us: 0.6}\n"
     "                              ^"},
    {"hardware_tiers_empty.yaml",
     "{data}/bad/hardware_tiers_empty.yaml:6:3: error: hardware.network.tiers must list 1 to 4 switch tiers, got 0\n"
     "  tiers: []\n"
     "  ^"},
    {"hardware_tiers_not_list.yaml",
     "{data}/bad/hardware_tiers_not_list.yaml:6:10: error: hardware.network.tiers must be a list, got a mapping\n"
     "  tiers: {name: leaf, radix: 64, bandwidth_gbs: 50, latency_us: 0.6}\n"
     "         ^"},
    {"hardware_peak_empty.yaml",
     "{data}/bad/hardware_peak_empty.yaml:5:3: error: hardware.gpu.peak_tflops must give at least one precision\n"
     "  peak_tflops: {}\n"
     "  ^"},
    {"hardware_peak_tiny.yaml",
     "{data}/bad/hardware_peak_tiny.yaml:5:23: error: hardware.gpu.peak_tflops.bf16 must be at least 0.001 TFLOP/s, got \"5e-324\"\n"
     "  peak_tflops: {bf16: 5e-324}\n"
     "                      ^"},
    {"hardware_peak_unknown_precision.yaml",
     "{data}/bad/hardware_peak_unknown_precision.yaml:5:17: error: unknown key 'bf61' in hardware.gpu.peak_tflops; did you mean 'bf16'?\n"
     "  peak_tflops: {bf61: 312}\n"
     "                ^"},
    {"hardware_idle_above_tdp.yaml",
     "{data}/bad/hardware_idle_above_tdp.yaml:7:11: error: hardware.gpu.idle_w must be below hardware.gpu.tdp_w (400)\n"
     "  idle_w: 450\n"
     "          ^"},
    {"hardware_sustained_clock_above_one.yaml",
     "{data}/bad/hardware_sustained_clock_above_one.yaml:6:20: error: hardware.gpu.sustained_clock must be a number in "
     "(0, 1], got \"1.2\"\n"
     "  sustained_clock: 1.2\n"
     "                   ^"},
    {"hardware_memory_bound_factor_with_tables.yaml",
     "{data}/bad/hardware_memory_bound_factor_with_tables.yaml:6:24: error: hardware.gpu.memory_bound_factor applies only "
     "without kernel tables; with hardware.gpu.kernels set hardware.gpu.kernels.overhead.memory_bound_factor\n"
     "  memory_bound_factor: 2.0\n"
     "                       ^"},
    {"hardware_memory_bound_factor_zero.yaml",
     "{data}/bad/hardware_memory_bound_factor_zero.yaml:6:24: error: hardware.gpu.memory_bound_factor must be a "
     "positive number, got \"0\"\n"
     "  memory_bound_factor: 0\n"
     "                       ^"},
    {"hf_bad_values.json",
     "{data}/bad/hf_bad_values.json:4:18: error: hidden_size must be a JSON number, got the string \"4096\"\n"
     "  \"hidden_size\": \"4096\",\n"
     "                 ^\n"
     "{data}/bad/hf_bad_values.json:5:26: error: num_attention_heads must be a positive integer, got \"32.5\"\n"
     "  \"num_attention_heads\": 32.5,\n"
     "                         ^"},
    {"hf_integral_float.json",
     "{data}/bad/hf_integral_float.json:9:18: error: num_experts must be a JSON integer, got \"128.0\", which Python's "
     "json reads as a float (transformers' config declares an int): write it without a fraction or an exponent\n"
     "  \"num_experts\": 128.0,\n"
     "                 ^\n"
     "{data}/bad/hf_integral_float.json:11:23: error: mlp_only_layers[0] must be a JSON integer, got the string "
     "\"0\"\n"
     "  \"mlp_only_layers\": [\"0\"],\n"
     "                      ^\n"
     "{data}/bad/hf_integral_float.json:13:30: error: max_position_embeddings must be a JSON integer, got \"4.096e4\", "
     "which Python's json reads as a float (transformers' config declares an int): write it without a fraction or "
     "an exponent\n"
     "  \"max_position_embeddings\": 4.096e4\n"
     "                             ^"},
    {"hf_byte_order_mark.json",
     "{data}/bad/hf_byte_order_mark.json:1:1: error: invalid JSON: the file starts with a UTF-8 byte-order mark, "
     "which Python's json refuses (transformers could not read it): save it without one\n"
     "\xEF\xBB\xBF{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2, \"hidden_size\": 64, "
     "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100}\n"
     "^"},
    {"hf_string_boolean.json",
     "{data}/bad/hf_string_boolean.json:8:26: error: tie_word_embeddings must be a JSON boolean, got the string "
     "\"false\"\n"
     "  \"tie_word_embeddings\": \"false\"\n"
     "                         ^"},
    {"hf_deepseek_moe_layer_freq.json",
     "{data}/bad/hf_deepseek_moe_layer_freq.json:20:21: error: moe_layer_freq 2 is not modelled: DeepSeek's MoE layers past first_k_dense_replace are those with i % moe_layer_freq == 0, ptdsim's (moe.every) those with (i + 1) % every == 0; only 1 agrees\n"
     "  \"moe_layer_freq\": 2,\n"
     "                    ^"},
    {"hf_gpt_oss_layer_types.json",
     "{data}/bad/hf_gpt_oss_layer_types.json:15:18: error: layer_types is not modelled: ptdsim's full-attention layers are those with (i + 1) % sliding_window.full_every == 0, the rest windowed\n"
     "  \"layer_types\": [\n"
     "                 ^"},
    {"hf_llama4_no_rope_flag.json",
     "{data}/bad/hf_llama4_no_rope_flag.json:35:7: error: no_rope_layers[3] must be an integer from 0 to 1, got \"2\"\n"
     "      2,\n"
     "      ^"},
    {"hf_glm4_moe_no_experts.json",
     "{data}/bad/hf_glm4_moe_no_experts.json:26:23: error: n_routed_experts must be a positive integer, got \"0\"\n"
     "  \"n_routed_experts\": 0,\n"
     "                      ^"},
    {"hf_qwen2_moe_shared_negative.json",
     "{data}/bad/hf_qwen2_moe_shared_negative.json:27:38: error: shared_expert_intermediate_size must be a non-negative integer, got \"-20480\"\n"
     "  \"shared_expert_intermediate_size\": -20480,\n"
     "                                     ^"},
    {"hf_number_overflow.json",
     "{data}/bad/hf_number_overflow.json:3:18: error: invalid JSON: number overflow parsing '1e999'\n"
     "  \"hidden_size\": 1e999\n"
     "                 ^"},
    {"hf_syntax.json",
     "{data}/bad/hf_syntax.json:3:15: error: invalid JSON: syntax error while parsing object - unexpected string literal; expected '}'\n"
     "  \"hidden_size\": 4096\n"
     "              ^"},
    {"hf_unsupported_architecture.json",
     "{data}/bad/hf_unsupported_architecture.json:2:21: error: architecture 'FalconForCausalLM' is not supported (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM, GPTNeoXForCausalLM, DeepseekV3ForCausalLM, DeepseekV2ForCausalLM, Qwen3MoeForCausalLM, GptOssForCausalLM, Llama4ForConditionalGeneration, Llama4ForCausalLM, Qwen3ForCausalLM, Qwen2MoeForCausalLM, Glm4MoeForCausalLM)\n"
     "  \"architectures\": [\"FalconForCausalLM\"],\n"
     "                    ^"},
    {"model_qk_norm_not_bool.yaml",
     "{data}/bad/model_qk_norm_not_bool.yaml:5:10: error: model.qk_norm must be true or false, got \"1\"\n"
     "qk_norm: 1\n"
     "         ^"},
    {"scenario_qk_norm_mla.yaml",
     "{data}/bad/scenario_qk_norm_mla.yaml:8:3: error: MLA normalises its latents (DeepSeek-V2/V3), not each head's "
     "query and key: set qk_norm: false\n"
     "  qk_norm: true\n"
     "  ^"},
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
     "{data}/bad/model_hidden_huge.yaml:2:9: error: model.hidden must be at most 262144, got \"1e30\"\n"
     "hidden: 1e30\n"
     "        ^"},
    {"model_is_list.yaml",
     "{data}/bad/model_is_list.yaml:1:1: error: model must be a mapping, got a list\n"
     "- layers: 4\n"
     "^"},
    {"model_layers_beyond_physics.yaml",
     "{data}/bad/model_layers_beyond_physics.yaml:2:9: error: model.layers must be at most 8192, got \"268435456\"\n"
     "layers: 268435456\n"
     "        ^"},
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
    {"model_mla_missing_kv_lora.yaml",
     "{data}/bad/model_mla_missing_kv_lora.yaml:6:1: error: missing required key 'kv_lora_rank' in model.mla\n"
     "mla:\n"
     "^"},
    {"model_moe_router_unknown.yaml",
     "{data}/bad/model_moe_router_unknown.yaml:8:11: error: model.moe.router must be one of softmax, sigmoid, got \"sigmoidal\"; did you mean 'sigmoid'?\n"
     "  router: sigmoidal\n"
     "          ^"},
    {"model_moe_shared_negative.yaml",
     "{data}/bad/model_moe_shared_negative.yaml:7:19: error: model.moe.shared_experts must be a non-negative integer, got \"-1\"\n"
     "  shared_experts: -1\n"
     "                  ^"},
    {"model_moe_missing_experts.yaml",
     "{data}/bad/model_moe_missing_experts.yaml:5:1: error: missing required key 'experts' in model.moe\n"
     "moe:\n"
     "^"},
    {"model_stray_comma.yaml",
     "{data}/bad/model_stray_comma.yaml:2:1: error: invalid YAML: unexpected ','\n"
     ", layers: 4\n"
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
     "{data}/bad/scenario_hardware_name_unknown.yaml:2:11: error: no shipped hardware named 'dgx-h10'; did you mean 'dgx-h100'? (shipped: aws-p5, dgx-a100-40g, dgx-a100-80g, dgx-b200, dgx-b300, dgx-h100, dgx-h200, gb200-nvl72, gb300-nvl72, gcp-a3-mega, grand-teton-h100, hgx-h800; a path with '/' or ending in .yaml names any file)\n"
     "hardware: dgx-h10\n"
     "          ^"},
    {"scenario_attention_kernel_unknown.yaml",
     "{data}/bad/scenario_attention_kernel_unknown.yaml:4:63: error: training.attention_kernel must be one of cudnn, flash2, got \"flash3\"; did you mean 'flash2'?\n"
     "training: {seq_len: 4096, global_batch: 64, attention_kernel: flash3}\n"
     "                                                              ^"},
    {"scenario_cp_comm_unknown.yaml",
     "{data}/bad/scenario_cp_comm_unknown.yaml:5:54: error: training.cp_comm must be one of p2p, allgather, a2a, a2a_p2p, got \"ring\"\n"
     "training: {seq_len: 4096, global_batch: 64, cp_comm: ring}\n"
     "                                                     ^"},
    {"scenario_overlap_cp_not_bool.yaml",
     "{data}/bad/scenario_overlap_cp_not_bool.yaml:5:59: error: training.overlap.cp must be true or false, got \"later\"\n"
     "training: {seq_len: 4096, global_batch: 64, overlap: {cp: later}}\n"
     "                                                          ^"},
    {"scenario_repeat_kv_not_bool.yaml",
     "{data}/bad/scenario_repeat_kv_not_bool.yaml:5:56: error: training.repeat_kv must be true or false, got \"4\"\n"
     "training: {seq_len: 4096, global_batch: 64, repeat_kv: 4}\n"
     "                                                       ^"},
    {"scenario_cp_comm_a2a_heads.yaml",
     "{data}/bad/scenario_cp_comm_a2a_heads.yaml:13:3: error: cp_comm a2a splits each rank's heads over 4 context-parallel ranks: heads/tp = 8 and kv heads per rank 2 must both be multiples of 4\n"
     "  cp_comm: a2a\n"
     "  ^"},
    {"scenario_offload_unknown.yaml",
     "{data}/bad/scenario_offload_unknown.yaml:4:54: error: training.offload must be one of none, optimizer, optimizer_params, got \"nvme\"; did you mean 'none'?\n"
     "training: {seq_len: 4096, global_batch: 64, offload: nvme}\n"
     "                                                     ^"},
    {"scenario_offload_fraction_range.yaml",
     "{data}/bad/scenario_offload_fraction_range.yaml:5:83: error: training.offload_fraction must be at most 1, got \"1.5\"\n"
     "training: {seq_len: 4096, global_batch: 64, offload: optimizer, offload_fraction: 1.5}\n"
     "                                                                                  ^"},
    {"scenario_offload_without_zero.yaml",
     "{data}/bad/scenario_offload_without_zero.yaml:7:3: error: training.offload optimizer needs parallel.zero >= 1 (each data-parallel rank offloads its optimizer shard)\n"
     "  offload: optimizer\n"
     "  ^"},
    {"scenario_offload_without_host.yaml",
     "{data}/bad/scenario_offload_without_host.yaml:8:3: error: training.offload needs the hardware's host: hardware.host.link_gbs, memory_gib and memory_gbs (hgx-h800 gives none of them)\n"
     "  offload: optimizer_params\n"
     "  ^"},
    {"hardware_host_unknown_key.yaml",
     "{data}/bad/hardware_host_unknown_key.yaml:8:8: error: unknown key 'link_gb' in hardware.host; did you mean 'link_gbs'?\n"
     "host: {link_gb: 64, memory_gib: 2048, memory_gbs: 614.4}\n"
     "       ^"},
    {"hardware_jitter_above_range.yaml",
     "{data}/bad/hardware_jitter_above_range.yaml:8:19: error: hardware.jitter.compute must be at most 0.5, got \"1.5\"\n"
     "jitter: {compute: 1.5, link: 0}\n"
     "                  ^"},
    {"hardware_jitter_unknown_key.yaml",
     "{data}/bad/hardware_jitter_unknown_key.yaml:8:25: error: unknown key 'links' in hardware.jitter; did you mean 'link'?\n"
     "jitter: {compute: 0.01, links: 0}\n"
     "                        ^"},
    {"hardware_host_link_not_positive.yaml",
     "{data}/bad/hardware_host_link_not_positive.yaml:8:18: error: hardware.host.link_gbs must be a positive number, got \"0\"\n"
     "host: {link_gbs: 0, memory_gib: 2048, memory_gbs: 614.4}\n"
     "                 ^"},
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
     "{data}/bad/scenario_tokens_bad.yaml:4:53: error: training.tokens must be a count of at least 1 and at most 1e+18 (a number, or one with a suffix K, M, B or T such as 15T), got \"15 trillion\"\n"
     "training: {seq_len: 4096, global_batch: 64, tokens: 15 trillion}\n"
     "                                                    ^"},
    {"scenario_alias_cycle.yaml",
     "{data}/bad/scenario_alias_cycle.yaml:3:11: error: an alias names the node it is inside of (a cycle)\n"
     "name: &x [*x]\n"
     "          ^"},
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
    {"scenario_etp_without_experts.yaml",
     "{data}/bad/scenario_etp_without_experts.yaml:10:3: error: etp > 1 needs a mixture-of-experts model (model.moe)\n"
     "  etp: 2\n"
     "  ^"},
    {"scenario_etp_folding.yaml",
     "{data}/bad/scenario_etp_folding.yaml:9:26: error: etp*ep = 4*4 = 16 must divide tp*cp*dp = 8 (the experts fold over the attention's ranks)\n"
     "parallel: {tp: 2, ep: 4, etp: 4}\n"
     "                         ^"},
    {"scenario_ep_over_tp.yaml",
     "{data}/bad/scenario_ep_over_tp.yaml:9:19: error: ep 8 must divide dp*cp = 4 (experts are spread over data-parallel "
     "ranks: Megatron-Core's expert groups, etp*ep*edp*pp = world; with etp = tp 2 that is etp*ep = 16 dividing "
     "tp*cp*dp = 8; a smaller parallel.etp folds ep over tensor-parallel ranks)\n"
     "parallel: {tp: 2, ep: 8}\n"
     "                  ^"},
    {"scenario_recompute_module_unknown.yaml",
     "{data}/bad/scenario_recompute_module_unknown.yaml:10:90: error: training.recompute_modules entries must be one of "
     "core_attn, mla_up_proj, mlp, moe, moe_act, layernorm, shared_experts, got \"mhc\" (Megatron-Core's other "
     "modules are not modelled)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: selective, recompute_modules: [moe, mhc]}\n"
     "                                                                                         ^"},
    {"scenario_recompute_module_mla.yaml",
     "{data}/bad/scenario_recompute_module_mla.yaml:9:65: error: recompute module mla_up_proj needs MLA attention (model.mla)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: selective, recompute_modules: [mla_up_proj]}\n"
     "                                                                ^"},
    {"scenario_recompute_module_shared_experts.yaml",
     "{data}/bad/scenario_recompute_module_shared_experts.yaml:10:65: error: recompute module shared_experts needs "
     "shared experts (model.moe.shared_experts)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: selective, recompute_modules: [moe_act, shared_experts]}\n"
     "                                                                ^"},
    {"scenario_recompute_module_moe_act_dense.yaml",
     "{data}/bad/scenario_recompute_module_moe_act_dense.yaml:9:65: error: recompute module moe_act needs a "
     "mixture-of-experts model (model.moe)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: selective, recompute_modules: [moe_act]}\n"
     "                                                                ^"},
    {"scenario_recompute_module_layernorm_dense.yaml",
     "{data}/bad/scenario_recompute_module_layernorm_dense.yaml:9:65: error: recompute module layernorm recomputes "
     "nothing on this model: Megatron-Core fuses a dense layer's norms into the following GEMM (TransformerEngine's "
     "LayerNormLinear); it recomputes an MoE layer's pre-MLP norm and MLA's input norm\n"
     "training: {seq_len: 512, global_batch: 8, recompute: selective, recompute_modules: [core_attn, layernorm]}\n"
     "                                                                ^"},
    {"scenario_recompute_module_fp8_delayed.yaml",
     "{data}/bad/scenario_recompute_module_fp8_delayed.yaml:10:81: error: recompute modules moe_act and layernorm need "
     "an FP8 recipe other than delayed (as Megatron-Core requires): set training.fp8_recipe\n"
     "training: {seq_len: 512, global_batch: 8, precision: fp8, recompute: selective, recompute_modules: [moe_act]}\n"
     "                                                                                ^"},
    {"scenario_offload_modules_dense.yaml",
     "{data}/bad/scenario_offload_modules_dense.yaml:9:60: error: offload modules expert_fc1 and moe_act need a "
     "mixture-of-experts model (model.moe)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: none, offload_modules: [expert_fc1]}\n"
     "                                                           ^"},
    {"scenario_offload_modules_unknown.yaml",
     "{data}/bad/scenario_offload_modules_unknown.yaml:10:87: error: training.offload_modules entries must be one of "
     "expert_fc1, moe_act, got \"core_attn\" (Megatron-Core's other modules are not modelled)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: none, offload_modules: [moe_act, core_attn]}\n"
     "                                                                                      ^"},
    {"scenario_offload_modules_moe_recompute.yaml",
     "{data}/bad/scenario_offload_modules_moe_recompute.yaml:10:91: error: offload modules expert_fc1 and moe_act "
     "cannot be offloaded while recompute module moe recomputes the whole MoE block (as Megatron-Core asserts): "
     "remove one of them\n"
     "training: {seq_len: 512, global_batch: 8, recompute: selective, recompute_modules: [moe], offload_modules: "
     "[moe_act]}\n"
     "                                                                                          ^"},
    {"scenario_offload_modules_no_host.yaml",
     "{data}/bad/scenario_offload_modules_no_host.yaml:10:60: error: activation offloading needs the hardware's host: "
     "hardware.host.link_gbs, memory_gib and memory_gbs (tiny-box gives none of them)\n"
     "training: {seq_len: 512, global_batch: 8, recompute: none, offload_modules: [moe_act]}\n"
     "                                                           ^"},
    {"scenario_recompute_op_moe.yaml",
     "{data}/bad/scenario_recompute_op_moe.yaml:10:43: error: recompute op (torchtitan's per-op checkpointing) is "
     "modelled for dense models without MLA: use none, selective or full\n"
     "training: {seq_len: 512, global_batch: 8, recompute: op}\n"
     "                                          ^"},
    {"scenario_moe_dispatcher_unknown.yaml",
     "{data}/bad/scenario_moe_dispatcher_unknown.yaml:13:21: error: training.moe.dispatcher must be one of alltoall, allgather, flex, got \"deepep\"\n"
     "  moe: {dispatcher: deepep}\n"
     "                    ^"},
    {"scenario_overlap_ep_not_bool.yaml",
     "{data}/bad/scenario_overlap_ep_not_bool.yaml:13:17: error: training.overlap.ep must be true or false, got \"1f1b\"\n"
     "  overlap: {ep: 1f1b}\n"
     "                ^"},
    {"scenario_nccl_algo_unknown.yaml",
     "{data}/bad/scenario_nccl_algo_unknown.yaml:12:16: error: training.nccl.algo must be one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat, got \"double_tree\"\n"
     "  nccl: {algo: double_tree}\n"
     "               ^"},
    {"scenario_nccl_proto_unknown.yaml",
     "{data}/bad/scenario_nccl_proto_unknown.yaml:12:29: error: training.nccl.proto must be one of ll, ll128, simple, got \"LL128\"; did you mean 'll128'?\n"
     "  nccl: {algo: ring, proto: LL128}\n"
     "                            ^"},
    {"scenario_nccl_unknown_key.yaml",
     "{data}/bad/scenario_nccl_unknown_key.yaml:12:10: error: unknown key 'algorithm' in training.nccl\n"
     "  nccl: {algorithm: ring}\n"
     "         ^"},
    {"scenario_moe_imbalance_below_one.yaml",
     "{data}/bad/scenario_moe_imbalance_below_one.yaml:13:25: error: training.moe.load_imbalance must be a number of at least 1, got \"0.8\"\n"
     "  moe: {load_imbalance: 0.8}\n"
     "                        ^"},
    {"scenario_framework_unknown.yaml",
     "{data}/bad/scenario_framework_unknown.yaml:7:14: error: training.framework must be one of megatron-lm-2021, "
     "megatron-core-0.8, nemo-24.07, megatron-core-0.8-distopt, megatron-fsdp, deepspeed, deepspeed-0.3, "
     "pytorch-fsdp, pytorch-fsdp2, llm-foundry, torchtitan, torchtitan-compile, megatron-bridge, got "
     "\"megatron-core-08\"; did "
     "you mean "
     "'megatron-core-0.8'?\n"
     "  framework: megatron-core-08\n"
     "             ^"},
    {"scenario_fp8_recipe_mxfp8_hopper.yaml",
     "{data}/bad/scenario_fp8_recipe_mxfp8_hopper.yaml:11:3: error: fp8_recipe mxfp8 needs Blackwell's MX tensor "
     "cores; H has none (no fp4 peak): use delayed, current, rowwise or blockwise\n"
     "  fp8_recipe: mxfp8\n"
     "  ^"},
    {"scenario_fusion_grouped_mlp_dense.yaml",
     "{data}/bad/scenario_fusion_grouped_mlp_dense.yaml:12:12: error: training.fusion.grouped_mlp fused "
     "(TransformerEngine's MXFP8 grouped MLP) needs a mixture-of-experts model (model.moe)\n"
     "  fusion: {grouped_mlp: fused}\n"
     "           ^"},
    {"scenario_fusion_unknown.yaml",
     "{data}/bad/scenario_fusion_unknown.yaml:7:40: error: training.fusion.cross_entropy must be one of eager, "
     "vocab_parallel, fused, loss_parallel, got \"vocab-parallel\"; did you mean 'vocab_parallel'?\n"
     "  fusion: {norm: fused, cross_entropy: vocab-parallel}\n"
     "                                       ^"},
    {"scenario_fusion_projections_unknown.yaml",
     "{data}/bad/scenario_fusion_projections_unknown.yaml:7:38: error: training.fusion.projections must be one of "
     "eager, fused, got \"separate\"\n"
     "  fusion: {rope: eager, projections: separate}\n"
     "                                     ^"},
    {"scenario_fusion_fp8_cast_unknown.yaml",
     "{data}/bad/scenario_fusion_fp8_cast_unknown.yaml:7:35: error: training.fusion.fp8_cast must be one of "
     "eager, fused, got \"producer\"\n"
     "  fusion: {norm: fused, fp8_cast: producer}\n"
     "                                  ^"},
    {"scenario_fusion_wgrad_unknown.yaml",
     "{data}/bad/scenario_fusion_wgrad_unknown.yaml:7:32: error: training.fusion.wgrad_accumulation must be one of "
     "fused, separate, none, got \"fp32\"\n"
     "  fusion: {wgrad_accumulation: fp32}\n"
     "                               ^"},
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
     "{data}/bad/scenario_layers_pp_vpp.yaml:6:3: error: pp*vpp = 2*4 = 8 virtual stages but the model has only 4 layers\n"
     "  vpp: 4\n"
     "  ^"},
    {"scenario_first_last_split.yaml",
     "{data}/bad/scenario_first_last_split.yaml:4:19: error: first_stage_layers 2 and last_stage_layers 1 leave 1 "
     "of the 4 layers to 2 middle stages x vpp 1: not an even split\n"
     "parallel: {pp: 4, first_stage_layers: 2, last_stage_layers: 1}\n"
     "                  ^"},
    {"scenario_loss_in_split.yaml",
     "{data}/bad/scenario_loss_in_split.yaml:6:3: error: layers 4 + 1 (embedding and loss counted as layers) do not "
     "split evenly over pp*vpp = 4 virtual stages\n"
     "  loss_in_split: true\n"
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
     "{data}/bad/scenario_nodes_overflow.yaml:3:18: error: cluster.nodes * hardware.node.gpus = 8000000 GPUs is more than 4194304\n"
     "cluster: {nodes: 2000000}\n"
     "                 ^"},
    {"scenario_non_string_key.yaml",
     "{data}/bad/scenario_non_string_key.yaml:4:1: error: mapping keys must be plain strings\n"
     "[a, b]: 1\n"
     "^"},
    {"scenario_pipeline_passes.yaml",
     "{data}/bad/scenario_pipeline_passes.yaml:7:3: error: 524288 micro-batches x 4 pipeline chunks (pp*vpp) = 2097152 pipeline passes per step, more than the 262144 the simulator takes\n"
     "  global_batch: 1048576\n"
     "  ^"},
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
    {"scenario_sharding_not_map.yaml",
     "{data}/bad/scenario_sharding_not_map.yaml:4:31: error: parallel.sharding must be a mapping, got \"2\"\n"
     "parallel: {zero: 3, sharding: 2}\n"
     "                              ^"},
    {"scenario_sharding_overhead_negative.yaml",
     "{data}/bad/scenario_sharding_overhead_negative.yaml:4:54: error: parallel.sharding.overhead_per_rank_us must be a non-negative number, got \"-1\"\n"
     "parallel: {zero: 3, sharding: {overhead_per_rank_us: -1}}\n"
     "                                                     ^"},
    {"scenario_sharding_prefetch_units.yaml",
     "{data}/bad/scenario_sharding_prefetch_units.yaml:4:48: error: parallel.sharding.prefetch_units must be at most 64, got \"65\"\n"
     "parallel: {zero: 3, sharding: {prefetch_units: 65}}\n"
     "                                               ^"},
    {"scenario_sharding_reduce_dtype.yaml",
     "{data}/bad/scenario_sharding_reduce_dtype.yaml:4:46: error: parallel.sharding.reduce_dtype must be one of fp32, bf16, fp16, got \"fp8\"; did you mean 'fp32'?\n"
     "parallel: {zero: 3, sharding: {reduce_dtype: fp8}}\n"
     "                                             ^"},
    {"scenario_sharding_shard_ranks.yaml",
     "{data}/bad/scenario_sharding_shard_ranks.yaml:4:32: error: shard_ranks 3 must divide dp*cp = 8 (each shard group is replicated dp*cp/shard_ranks times)\n"
     "parallel: {zero: 3, sharding: {shard_ranks: 3}}\n"
     "                               ^"},
    {"scenario_sharding_pipeline_accumulates.yaml",
     "{data}/bad/scenario_sharding_pipeline_accumulates.yaml:4:68: error: parallel.sharding.pipeline_accumulates must "
     "be true or false, got \"last\"\n"
     "parallel: {zero: 3, pp: 2, dp: 4, sharding: {pipeline_accumulates: last}}\n"
     "                                                                   ^"},
    {"scenario_sharding_sync_not_bool.yaml",
     "{data}/bad/scenario_sharding_sync_not_bool.yaml:4:38: error: parallel.sharding.sync must be true or false, got \"yes\"\n"
     "parallel: {zero: 3, sharding: {sync: yes}}\n"
     "                                     ^"},
    {"scenario_sharding_unit_layers.yaml",
     "{data}/bad/scenario_sharding_unit_layers.yaml:4:45: error: parallel.sharding.unit_layers must be a positive number, got \"0\"\n"
     "parallel: {zero: 3, sharding: {unit_layers: 0}}\n"
     "                                            ^"},
    {"scenario_sharding_unknown_key.yaml",
     "{data}/bad/scenario_sharding_unknown_key.yaml:4:32: error: unknown key 'unit_layer' in parallel.sharding; did you mean 'unit_layers'?\n"
     "parallel: {zero: 3, sharding: {unit_layer: 2}}\n"
     "                               ^"},
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
     "{data}/bad/scenario_tp_huge.yaml:5:7: error: parallel.tp must be at most 4194304, got \"1e30\"\n"
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
    } else if (starts_with(file, "study_")) {
      io::load_study(path);
    } else if (starts_with(file, "csv_")) {
      // csv_<table>__<case>.csv is read as <table>.csv
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      const std::string table = file.substr(4, file.find("__") - 4);
      if (table == "gemm") calibrate::parse_gemm_csv(text.str(), path);
      else if (table == "attention") calibrate::parse_attention_csv(text.str(), path);
      else if (table == "elementwise") calibrate::parse_elementwise_csv(text.str(), path);
      else if (table == "cross_entropy") calibrate::parse_cross_entropy_csv(text.str(), path);
      else if (table == "optimizer") calibrate::parse_optimizer_csv(text.str(), path);
      else if (table == "contention") calibrate::parse_contention_csv(text.str(), path);
      else return "(unknown table)";
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
