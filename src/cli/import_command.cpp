#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/count.hpp"
#include "ptdsim/core/framework.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/io/import.hpp"

// `ptdsim import hf CONFIG.json` and `ptdsim import megatron "ARGUMENTS"`: a model file, or with
// --hardware and a GPU count a scenario file (docs/inputs.md "Importing").
namespace ptdsim::cli {
namespace {

struct ImportArgs {
  std::string source;  // the config.json path, or the Megatron arguments
  std::string name;
  io::ImportScenario scenario;
  std::string out;
};

void write(const ImportArgs& a, const io::Imported& imported) {
  emit(OutputOptions{"yaml", a.out}, imported.yaml);
  print_warnings(imported.warnings);
}

// The options both importers take: the model's name, and what a scenario needs beyond the source.
void add_scenario_options(CLI::App* cmd, ImportArgs& a) {
  cmd->add_option("--name", a.name, "the model's name (default: the config's folder, or megatron-model)");
  auto& s = a.scenario;
  cmd->add_option("--hardware", s.hardware,
                  "write a scenario on this hardware: a shipped name (dgx-h100) or a hardware file");
  cmd->add_option("--gpus", s.gpus, "the scenario's GPU count")->check(kPositiveCount);
  cmd->add_option("--nodes", s.nodes, "or its node count")->check(kPositiveCount)->excludes("--gpus");
  cmd->add_option("--seq-len", s.seq_len, "training sequence length (Megatron: --seq-length)")->check(kPositiveCount);
  cmd->add_option("--global-batch", s.global_batch, "global batch in sequences (Megatron: --global-batch-size)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--micro-batch", s.micro_batch, "micro-batch (default 1)")->check(kPositiveCount);
  cmd->add_option("--precision", s.precision, "training precision (default bf16)")
      ->check(CLI::IsMember(core::trainable_spellings()));
  add_tokens_option(cmd, s.tokens);
  add_gpu_hour_option(cmd, s.gpu_hour);
  // checked here so that a bad name is told against the flag, not the generated file
  cmd->add_option("--framework", s.framework, "training.framework, whose defaults fill the unset switches")
      ->check(CLI::IsMember(core::framework_names()));
  cmd->add_option("-o,--output", a.out, "write the YAML to FILE (whole or not at all); default stdout");
}

}  // namespace

void add_import(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "write a model or scenario YAML from a Hugging Face config.json or a "
                                           "Megatron-LM command line");
  cmd->require_subcommand(1);

  auto hf = std::make_shared<ImportArgs>();
  auto* hf_cmd = cmd->add_subcommand(
      "hf", "a Hugging Face config.json (architectures read: " + core::joined(io::hf_architectures()) +
                "): a model, or a scenario with --hardware, --gpus, --seq-len and --global-batch");
  hf_cmd->add_option("config", hf->source, "the model's config.json")->required();
  add_scenario_options(hf_cmd, *hf);
  hf_cmd->callback([hf] { write(*hf, io::import_hf(hf->source, hf->name, hf->scenario)); });

  auto mg = std::make_shared<ImportArgs>();
  auto* mg_cmd = cmd->add_subcommand(
      "megatron", "a Megatron-LM command line (its arguments, best quoted as one): a model, or a scenario with "
                  "--hardware and --gpus. Flags read: " + core::joined(io::megatron_flags(), " ") + "; flags that change the "
                  "model or the step but are not modelled (--optimizer, --cpu-offloading, ...) are refused; others are named in a warning "
                  "(docs/inputs.md)");
  // The arguments, quoted as one or not, are what ptdsim's own options leave: a quoted string
  // starting with "--" would otherwise be taken for an option of ours
  mg_cmd->allow_extras();
  add_scenario_options(mg_cmd, *mg);
  mg_cmd->callback([mg, mg_cmd] {
    std::string arguments;
    for (const auto& a : mg_cmd->remaining()) arguments += (arguments.empty() ? "" : " ") + a;
    if (arguments.empty())
      throw CLI::ValidationError("import megatron", "give the Megatron-LM arguments, quoted: \"--num-layers 80 ...\"");
    write(*mg, io::import_megatron(arguments, mg->name, mg->scenario));
  });
}

}  // namespace ptdsim::cli
