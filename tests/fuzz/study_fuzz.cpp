#include "fuzz_target.hpp"
#include "ptdsim/io/study.hpp"
#include "ptdsim/report/study.hpp"

using namespace ptdsim;

// A study file, its bases resolved against tests/data/study/ (the tests' small base), and the same
// bytes as a journal's record line. An accepted study must decompose every point it counts into
// values of its knobs, and print (with no point run) without throwing; a record that decodes must
// encode back to a record that decodes the same.
PTDSIM_FUZZ_TARGET(study) {
  if (const auto r = io::decode_record(input)) {
    const auto again = io::decode_record(io::encode_record(*r));
    if (!again || io::encode_record(*again) != io::encode_record(*r))
      throw fuzz::Finding("a decoded record does not survive its own encoding");
  }
  io::StudySpec s;
  try {
    s = io::load_study_from_string(input, "fuzz.yaml", PTDSIM_SOURCE_DIR "/tests/data/study");
  } catch (const core::ConfigError& e) {
    fuzz::expect_clean(e, input);
    return;
  }
  const std::uint64_t n = s.points();
  if (n == 0 || n > io::kMaxStudyPoints) throw fuzz::Finding("an accepted study with no point or too many");
  std::vector<io::StudyRecord> records;
  for (std::uint64_t i = 0; i < n && i < 64; ++i) {
    const auto p = s.point(i);
    if (p.base >= s.bases.size()) throw fuzz::Finding("a point beyond the bases");
    for (std::size_t k = 0; k < s.vary.size(); ++k)
      if (p.value[k] >= s.vary[k].values.size()) throw fuzz::Finding("a point beyond a knob's values");
    if (s.overrides(p).size() != s.set.size() + s.vary.size()) throw fuzz::Finding("a point's overrides miscounted");
    io::StudyRecord r;
    r.point = i;
    r.failed = "not run";
    records.push_back(r);
  }
  (void)report::study_csv(s, records);
  (void)report::study_table(s, records);
}
