#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ptdsim/io/study.hpp"

// Running a co-design study (docs/study.md): each point of the grid is the base scenario with the
// point's overrides, laid out by the planner's sweep with the study's objective and bounds; its best
// K layouts, or why it has none, make its record. The points run on threads of this process, as one
// shard of N (job arrays), or over MPI ranks (mpi.hpp); whichever, each point's record is the same,
// so every output is byte-identical.
namespace ptdsim::study {

// One point: never throws for the point's own problems (a layout that cannot fit, hardware the model
// cannot run on, an objective without its budget): those make a failed record with the reason.
// `threads`: the sweep's (1: the calling thread alone).
io::StudyRecord run_point(const io::StudySpec& spec, std::uint64_t point, int threads = 1);

struct Progress {
  std::uint64_t done = 0;     // points finished, resumed ones included
  std::uint64_t total = 0;    // points of this shard
  std::uint64_t resumed = 0;  // found in the journal
  double elapsed_s = 0;
};

struct RunOptions {
  int threads = 0;  // points run at once, each sweep on one thread (0: every core)
  int shard = 1, count = 1;  // this shard's points: shard_of(point, count) == shard
  std::string journal;  // where finished points are appended and resumed from ("" none)
  // Called from the calling thread after each point and about every second.
  std::function<void(const Progress&)> on_progress;
};

// This shard's records, by point. The journal's records are not run again.
std::vector<io::StudyRecord> run_study(const io::StudySpec& spec, const RunOptions& options);

// "1/3" -> {1, 3}; false for anything but 1 <= I <= N.
bool parse_shard(const std::string& text, int& shard, int& count);

// The records of a study's shard files, checked to be one study (the hash of `spec`), every shard
// of one N once, every point present: throws ConfigError naming the file that does not fit.
std::vector<io::StudyRecord> merge_shards(const io::StudySpec& spec, const std::vector<io::ShardFile>& shards,
                                          const std::vector<std::string>& paths);

}  // namespace ptdsim::study
