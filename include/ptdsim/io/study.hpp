#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/io/load.hpp"

// A co-design study (`ptdsim study`, docs/study.md): base scenarios and the keys that vary over
// them, each point of the grid one layout sweep. This header holds what io does for it: the study
// file's reader (every key and value checked, problems at the study file's line:col), the points of
// the grid, the record of one finished point, and the journal and shard files those records live
// in. Running the points is the study library's (src/study), printing them io_report's.
namespace ptdsim::io {

// One varied key: a key `--set` takes and its values, each an Override positioned at the study
// file (a range such as `1024..16384 x2` gives every one of its values the range's position).
struct StudyKnob {
  std::string key;
  std::vector<Override> values;
};

struct StudySpec {
  std::string file;                // as named on the command line
  std::vector<std::string> bases;  // scenario paths, relative ones resolved against the study's directory
  std::vector<std::string> base_names;  // as written, for the `base` column
  std::vector<Override> set;       // every point's overrides before its knobs' (`set:`)
  std::vector<StudyKnob> vary;     // in file order
  // The grid's dimensions after the base: groups of knobs (indices into `vary`) that take their
  // values together (`zip:`), or one knob each, in the order of their first knob.
  std::vector<std::vector<std::size_t>> dims;
  std::string objective = "time";  // as sweep --objective
  int top = 1;                     // layouts kept per point
  double min_free_gib = 0;         // as sweep --min-free-gib
  // sweep's degree options by name without the dashes: "tp" -> "4,8", "max_pp" -> "16"
  std::map<std::string, std::string> degrees;
  std::vector<std::string> search;  // as sweep --search
  // the page's heat map: two knobs of `vary` (indices; `heatmap:`), else the first two that vary
  std::vector<std::size_t> heatmap;
  std::string hash;  // 16 hex digits: FNV-1a 64 of the version, the study file and its base files

  // Points: bases x the product of each dimension's length. Point i's digits are i in mixed radix,
  // the base most significant, the last dimension least (the file's order, the last key fastest).
  std::uint64_t points() const;
  struct Point {
    std::size_t base = 0;
    std::vector<std::size_t> value;  // per knob of `vary`, the index of its value
  };
  Point point(std::uint64_t index) const;
  // The base's overrides, `set` then each knob's value at the point.
  std::vector<Override> overrides(const Point& p) const;
};

// Reads a study file: its keys, values and ranges, the zip groups, and each value loaded into the
// first base scenario (types and ranges, as --set checks them: `file:line:col: error: ...` at the
// value; of a range its ends), `set` into every base.
// Cross-field problems of a point (a layout that cannot fit, hardware the model cannot run on) are
// the point's to report, not the file's. Throws ConfigError with every problem found.
StudySpec load_study(const std::string& path);
StudySpec load_study_from_string(const std::string& text, const std::string& name, const std::string& base_dir);

// The most points a study may have (a typo in a range should not promise a year of work).
inline constexpr std::uint64_t kMaxStudyPoints = 1ULL << 24;
// The most values one range may expand to.
inline constexpr std::uint64_t kMaxRangeValues = 1ULL << 16;

// One of a point's best layouts, with what the study prints of it.
struct StudyLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1, micro_batch = 1, zero = 0;
  std::string recompute, schedule;
  bool sequence_parallel = false;
  double step_s = 0, mfu = 0, tokens_per_s = 0;
  double days = 0, gpu_hours = 0, energy_mwh = 0, cost = 0;  // 0 without a token budget (and price, power)
  double peak_gib = 0, capacity_gib = 0;
  std::string bounded_by;  // core::describe of the report's bounded_by
};

// Every field of a layout as (name, member), in the order the outputs print them: the one list the
// journal's encoder and decoder and the JSON output read. `L` is StudyLayout or const StudyLayout.
template <class L, class F>
void visit_layout(L& l, F&& f) {
  f("tp", l.tp), f("pp", l.pp), f("dp", l.dp), f("cp", l.cp), f("ep", l.ep), f("vpp", l.vpp);
  f("micro_batch", l.micro_batch), f("zero", l.zero), f("recompute", l.recompute);
  f("sequence_parallel", l.sequence_parallel), f("schedule", l.schedule);
  f("step_s", l.step_s), f("mfu", l.mfu), f("tokens_per_s", l.tokens_per_s), f("days", l.days);
  f("gpu_hours", l.gpu_hours), f("energy_mwh", l.energy_mwh), f("cost", l.cost);
  f("peak_gib", l.peak_gib), f("capacity_gib", l.capacity_gib), f("bounded_by", l.bounded_by);
}

// A finished point: its best layouts, best first, or why it has none.
struct StudyRecord {
  std::uint64_t point = 0;
  std::string failed;  // "" when the point has layouts
  std::vector<StudyLayout> layouts;
};

// One record as one line of JSON (no newline); nullopt for text that is not one.
std::string encode_record(const StudyRecord& r);
std::optional<StudyRecord> decode_record(const std::string& line);

// The journal a running study appends each finished point to (`OUT.journal`): a header naming the
// study's hash and point count, then one line per point, `<checksum> <record>`. Each line goes out
// in one write(2) as its point finishes, so a killed process loses only the points in flight; a
// line cut short (or not the study's) is dropped when the journal is read again.
class StudyJournal {
 public:
  // Opens `path`, creating it, and reads the records already there. Throws ConfigError when it
  // belongs to another study (another hash or point count).
  StudyJournal(std::string path, const StudySpec& spec);
  ~StudyJournal();
  StudyJournal(const StudyJournal&) = delete;
  StudyJournal& operator=(const StudyJournal&) = delete;
  const std::vector<StudyRecord>& done() const { return done_; }
  void append(const StudyRecord& r);  // not thread-safe: one writer

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<StudyRecord> done_;
};

// A shard's output (`--shard I/N`), read back by `ptdsim study merge`: the journal's form, whole,
// its points in order.
std::string shard_text(const StudySpec& spec, int shard, int count, const std::vector<StudyRecord>& records);
struct ShardFile {
  std::string study;  // the study file as the shard's command named it
  std::string hash;
  std::uint64_t points = 0;
  int shard = 0, count = 0;
  std::vector<StudyRecord> records;
};
ShardFile read_shard(const std::string& path);  // ConfigError for a file that is not one
// Which shard (1..count) a point belongs to: the points are dealt out in turn.
inline int shard_of(std::uint64_t point, int count) { return static_cast<int>(point % static_cast<std::uint64_t>(count)) + 1; }

}  // namespace ptdsim::io
