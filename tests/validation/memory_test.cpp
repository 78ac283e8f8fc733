#include <catch2/catch.hpp>

#include <cmath>

#include "ptdsim/io/load.hpp"
#include "ptdsim/validation/validate.hpp"

// Every measured peak memory: the three records of the shipped dataset that are modelled, and the
// seven it keeps as not modelled, which tests/data/bloom_prequel_peaks.yaml models for memory with
// the head count the source gives elsewhere (docs/validation.md "Peak memory"). The target of issue
// 16: each within 10%.
using namespace ptdsim;

namespace {

std::vector<validation::RecordResult> peaks_of(const std::string& path) {
  std::vector<io::Record> with_peak;
  for (auto& r : io::load_dataset(path))
    if (r.measured.peak_memory_bytes) with_peak.push_back(std::move(r));
  return validation::validate(with_peak).records;
}

}  // namespace

TEST_CASE("validation: every measured peak memory is within 10%", "[validation][memory]") {
  auto results = peaks_of(PTDSIM_SOURCE_DIR "/scenarios/published/dataset.yaml");
  int shipped_predicted = 0;
  for (const auto& r : results) shipped_predicted += r.predicted();
  // the dataset's ten peaks: three modelled, seven not (no head count in their section)
  CHECK(results.size() == 10);
  CHECK(shipped_predicted == 3);
  for (auto& r : peaks_of(PTDSIM_TEST_DATA "/bloom_prequel_peaks.yaml")) results.push_back(std::move(r));
  int scored = 0;
  for (const auto& r : results) {
    if (!r.predicted()) continue;
    INFO(r.name << ": predicted " << *r.peak_memory_gib.predicted << " GiB, measured " << *r.peak_memory_gib.measured);
    REQUIRE(r.peak_memory_gib.complete());
    CHECK(std::abs(r.peak_memory_gib.error()) <= 0.10);
    ++scored;
  }
  CHECK(scored == 10);
}
