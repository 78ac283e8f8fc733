#include <cmath>

#include "fuzz_target.hpp"
#include "ptdsim/analytic/evaluate.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/sim/simulate.hpp"

using namespace ptdsim;

// A scenario file, its includes resolved against the shipped scenarios/ (so "../models/x.yaml"
// seeds reach the converters). What loads must evaluate to finite, non-negative numbers: the
// analytic engine always, the simulator when the step is small enough to keep the fuzzer fast.
PTDSIM_FUZZ_TARGET(scenario) {
  core::Scenario s;
  try {
    s = io::load_scenario_from_string(input, "fuzz.yaml", {}, PTDSIM_SOURCE_DIR "/scenarios");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
    return;
  }
  if (const std::string bad = report::report_problem(analytic::evaluate(s)); !bad.empty())
    throw fuzz::Finding("analytic report of an accepted scenario: " + bad);
  const long long passes = 1LL * s.num_microbatches() * s.parallel.pp * s.parallel.vpp;
  if (passes <= 512 && s.model.layers <= 512) {
    if (const std::string bad = report::report_problem(sim::simulate(s)); !bad.empty())
      throw fuzz::Finding("simulated report of an accepted scenario: " + bad);
  }
}
