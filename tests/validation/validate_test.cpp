#include <catch2/catch.hpp>

#include "../common/scenarios.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "ptdsim/validation/validate.hpp"

// Every record's outcome (predicted, or not modelled with the reason), the memory flag, the counts
// and --strict.
using namespace ptdsim;

namespace {

io::Record record(const std::string& name, std::optional<core::Scenario> s, double step_s) {
  io::Record r;
  r.name = name;
  r.source = "synthetic, T1";
  r.split = "fit";
  r.scenario = std::move(s);
  r.measured.step_s = step_s;
  return r;
}

}  // namespace

TEST_CASE("validation: a record that does not fit is predicted, scored and flagged", "[validation]") {
  auto s = testing::gpt3_1024();
  const double peak_gib = sim::simulate(s).peak_bytes / core::kGiB;  // about 21 GiB: fits in 80
  REQUIRE(peak_gib > 10);
  s.hardware.gpu.memory_bytes = 10 * core::kGiB;  // the same layout on a 10 GiB GPU does not
  const auto r = validation::validate_record(record("small-gpu", s, 10.0));
  CHECK(r.predicted());
  CHECK_FALSE(r.fits);
  CHECK(r.capacity_gib == Approx(10.0).epsilon(1e-12));
  CHECK(r.predicted_peak_gib == Approx(peak_gib).epsilon(1e-9));  // memory does not depend on capacity
  CHECK(r.step_s.complete());  // still scored: the run it stands for did fit
  char expected[64];
  std::snprintf(expected, sizeof expected, "does not fit: %.1f GiB of 10.0 GiB", peak_gib);
  CHECK(r.memory_flag() == expected);

  const auto ok = validation::validate_record(record("a100", testing::gpt3_1024(), 10.0));
  CHECK(ok.fits);
  CHECK(ok.memory_flag().empty());

  const auto sum = validation::summarize({r, ok});
  CHECK(sum.predicted == 2);
  CHECK(sum.does_not_fit == 1);
  CHECK(sum.by_quantity.at("step_s").count == 2);
}

TEST_CASE("validation: a peak is compared with the figure the record gives", "[validation][memory]") {
  const auto s = testing::gpt3_1024();
  const core::Report rep = sim::simulate(s);
  // nvidia-smi's peak (peak_memory_gib) against the device's figure: the reserve, context and NCCL
  auto device = record("device", s, 10.0);
  device.measured.peak_memory_bytes = 30 * core::kGiB;
  const auto d = validation::validate_record(device);
  CHECK_FALSE(d.memory_reserved);
  CHECK(*d.peak_memory_gib.predicted == Approx(rep.peak_device_bytes / core::kGiB).epsilon(1e-12));
  // the allocator's (peak_reserved_gib, torchtitan's log) against the reserve alone: 1573 MiB of
  // context and 5 x 688 MiB of NCCL buffers less (memory_test.cpp's first stage, the peak here)
  auto reserved = record("reserved", s, 10.0);
  reserved.measured.peak_reserved_bytes = 25 * core::kGiB;
  const auto r = validation::validate_record(reserved);
  CHECK(r.memory_reserved);
  CHECK(*r.peak_memory_gib.measured == Approx(25.0).epsilon(1e-12));
  CHECK(*r.peak_memory_gib.predicted * core::kGiB ==
        Approx(rep.peak_device_bytes - (1573.0 + 5 * 688.0) * 1024 * 1024).epsilon(1e-12));
  CHECK(rep.peak_reserved_bytes >= rep.peak_allocated_bytes);
}

TEST_CASE("validation: every record gets an outcome and the counts add up", "[validation]") {
  auto declared = record("no-shape", std::nullopt, 1.0);
  declared.not_modelled = "shape not stated";
  auto failed = record("bad-layout", std::nullopt, 1.0);
  failed.not_modelled = "data.yaml:9:5: tp 3 does not divide heads 96";
  const auto sum = validation::validate({record("ok", testing::gpt3_1024(), 10.0), declared, failed});
  REQUIRE(sum.records.size() == 3);
  CHECK(sum.records[0].predicted());
  CHECK_FALSE(sum.records[1].predicted());
  CHECK(sum.records[1].not_modelled == "shape not stated");
  CHECK(sum.records[2].not_modelled == "data.yaml:9:5: tp 3 does not divide heads 96");
  CHECK(sum.records[2].memory_flag().empty());
  CHECK(sum.predicted == 1);
  CHECK(sum.not_modelled == 2);
  CHECK(sum.does_not_fit == 0);
}

TEST_CASE("validation: --strict fails at the first record that is not predicted", "[validation]") {
  const auto records = io::load_dataset_from_string(
      "- name: ok\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: 1}\n"
      "- name: later\n  source: s\n  not_modelled: layout not stated\n",
      "data.yaml", PTDSIM_TEST_DATA "/good");
  const auto sum = validation::validate(records);
  CHECK(sum.predicted == 1);
  CHECK_THROWS_WITH(validation::require_all_predicted(records, sum),
                    "data.yaml:7:17: error: record 'later' is not modelled: layout not stated\n"
                    "  not_modelled: layout not stated\n"
                    "                ^");
  // a dataset whose records are all predicted passes
  const std::vector<io::Record> first(records.begin(), records.begin() + 1);
  CHECK_NOTHROW(validation::require_all_predicted(first, validation::validate(first)));
}
