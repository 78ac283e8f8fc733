#include "fuzz_target.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/io/import.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;

// A Megatron-LM command line (`ptdsim import megatron`), as a model and as a scenario on a shipped
// hardware: refused with a clean ConfigError, or written as a file that loads and that evaluate's
// checks (core::check) accept. An import that writes what evaluate refuses is a finding.
PTDSIM_FUZZ_TARGET(import_megatron) {
  try {
    const io::Imported m = io::import_megatron(input, "", {});
    io::load_model_from_string(m.yaml, "imported.yaml");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
  }
  io::ImportScenario s;
  s.hardware = "dgx-h100";
  s.gpus = 16;
  s.seq_len = 2048;
  s.global_batch = 32;
  std::string yaml;
  try {
    yaml = io::import_megatron(input, "", s).yaml;
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
    return;
  }
  try {
    const auto problems = core::check(io::load_scenario_from_string(yaml, "imported.yaml"));
    if (!problems.empty())
      throw fuzz::Finding("import megatron wrote a scenario evaluate refuses: " + problems.front().message);
  } catch (const core::ConfigError& e) {
    throw fuzz::Finding(std::string("import megatron wrote a scenario that does not load: ") + e.what());
  }
}
