#pragma once
#include <string>
#include <vector>

#include "yaml_fields.hpp"
#include "import_yaml.hpp"
#include "ptdsim/core/model.hpp"

// `ptdsim import hf` of the mixture-of-experts and MLA architectures (docs/inputs.md "Importing"):
// the fields beyond the dense decoder's, read into the model and its lines (each line naming the
// config.json field it came from). What a config describes that ptdsim cannot model is an error at
// that field. The field names and defaults are those of transformers' DeepseekV3Config,
// Qwen2MoeConfig, Qwen3MoeConfig, Glm4MoeConfig, GptOssConfig and Llama4TextConfig.
namespace ptdsim::io::detail {

// DeepseekV3ForCausalLM (and DeepseekV2ForCausalLM: `v2`): MoE with shared experts, dense first
// layers, the router's scoring and group-limited routing, MLA, the MTP modules.
void read_hf_deepseek(const Fields& f, bool v2, core::ModelSpec& m, ModelLines& lines,
                      std::vector<std::string>& warnings);
// Glm4MoeForCausalLM (GLM-4.5 and later): DeepSeek-V3's MoE layers with GQA attention.
void read_hf_glm4_moe(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings);
// Qwen3MoeForCausalLM and (v2) Qwen2MoeForCausalLM: experts every decoder_sparse_step layers,
// mlp_only_layers as dense first layers; Qwen2-MoE adds one shared expert.
void read_hf_qwen_moe(const Fields& f, bool v2, core::ModelSpec& m, ModelLines& lines,
                      std::vector<std::string>& warnings);
// GptOssForCausalLM: experts in every layer, sliding-window layers by layer_types, attention sinks.
void read_hf_gpt_oss(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings);
// Llama 4's text config: experts every interleave_moe_layer_step layers with a shared expert,
// chunked attention on the RoPE layers.
void read_hf_llama4(const Fields& f, core::ModelSpec& m, ModelLines& lines, std::vector<std::string>& warnings);

// Every config.json field the functions above read (for the misspelling check).
const std::vector<std::string>& hf_moe_read_keys();

}  // namespace ptdsim::io::detail
