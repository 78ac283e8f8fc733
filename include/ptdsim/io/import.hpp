#pragma once
#include <string>
#include <vector>

// Inputs people already have, as ptdsim YAML (docs/inputs.md "Importing"): a Hugging Face
// config.json (`ptdsim import hf`) and a Megatron-LM argument string (`ptdsim import megatron`).
// Each writes a model file, or, given a hardware name and a GPU count, a scenario file with the
// model inline. What the source does not say is left to the loader's documented defaults; what
// the importer could not carry over is returned as warnings. Every problem throws core::ConfigError
// positioned in the source (config.json's line:col, the argument string's column).
namespace ptdsim::io {

// For a scenario: the cluster and the batch the source does not give. `hardware` empty: write a
// model file only (the other fields are then not read).
struct ImportScenario {
  std::string hardware;   // a shipped name (dgx-h100) or a path
  int gpus = 0;           // or nodes
  int nodes = 0;
  int seq_len = 0;        // Megatron: --seq-length when 0
  int global_batch = 0;   // Megatron: --global-batch-size when 0
  int micro_batch = 0;    // 0: 1 (Megatron: --micro-batch-size)
  std::string precision;  // "" : bf16 (Megatron: --bf16/--fp16/--fp8-format)
  std::string tokens;     // training.tokens, "15T"; "" : none (Megatron: --train-iters/--train-samples)
  double gpu_hour = 0;    // cost.gpu_hour; 0: none
  std::string framework;  // training.framework; "": none (Megatron: megatron-core-0.8)
};

struct Imported {
  std::string yaml;                   // the file to write
  std::vector<std::string> warnings;  // what was ignored or approximated, one line each
};

// `name` is the model's name ("" : the config's directory name). The architectures it reads are
// import_hf.cpp's kArchitectures (docs/inputs.md "import hf"); any other is an error naming them.
Imported import_hf(const std::string& config_path, const std::string& name, const ImportScenario& scenario);
// The same from the text of a config.json; `file` names it in messages.
Imported import_hf_text(const std::string& text, const std::string& file, const std::string& name,
                        const ImportScenario& scenario);

// A Megatron-LM command line's arguments (pretrain_gpt.py --num-layers 80 ...); `name` as above
// ("" : "megatron-model").
Imported import_megatron(const std::string& arguments, const std::string& name, const ImportScenario& scenario);

// The flags import_megatron understands, for --help and docs.
const std::vector<std::string>& megatron_flags();
// The config.json architectures import_hf reads, for --help.
std::vector<std::string> hf_architectures();

}  // namespace ptdsim::io
