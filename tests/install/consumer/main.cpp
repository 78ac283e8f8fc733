// step_time SCENARIO.yaml: the step time ptdsim evaluate reports, through the installed public API.
#include <cstdio>

#include "ptdsim/api.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: step_time SCENARIO.yaml\n");
    return 2;
  }
  try {
    const ptdsim::core::Scenario s = ptdsim::api::load(argv[1]);
    const ptdsim::core::Report r = ptdsim::api::evaluate(s);
    std::printf("%.17g\n", r.step_s);  // every digit, to compare with the CLI's JSON
    return 0;
  } catch (const ptdsim::core::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
