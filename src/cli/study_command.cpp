// `ptdsim study STUDY.yaml` and `ptdsim study merge SHARD...` (docs/study.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/core/version.hpp"
#include "ptdsim/io/study.hpp"
#include "ptdsim/report/study.hpp"
#include "ptdsim/study/mpi.hpp"
#include "ptdsim/study/study.hpp"

namespace ptdsim::cli {
namespace {

struct StudyArgs {
  std::string study;
  int threads = 0;
  std::string shard;
  std::string journal;
  OutputOptions out;
};

struct MergeArgs {
  std::vector<std::string> shards;
  std::string study;
  OutputOptions out;
};

// Points done of the total, the rate of those run here and the time left: on a terminal one line
// rewritten, in a log a line every 30 s.
class StudyProgress {
 public:
  StudyProgress() : tty_(isatty(STDERR_FILENO) == 1) {}
  void operator()(const study::Progress& p) {
    const double run = static_cast<double>(p.done - p.resumed);
    const double rate = p.elapsed_s > 0 ? run / p.elapsed_s : 0;
    const double left = static_cast<double>(p.total - p.done);
    const std::string eta = rate > 0 ? fmt::format("{:.0f} s", left / rate) : std::string("-");
    const std::string line = fmt::format("study: {}/{} points ({} resumed), {:.3g} points/s, ETA {}", p.done, p.total,
                                         p.resumed, rate, eta);
    if (tty_) {
      std::cerr << "\r" << line << "   " << std::flush;
      shown_ = true;
    } else if (p.elapsed_s >= next_) {
      std::cerr << line << "\n";
      next_ = p.elapsed_s + 30;
    }
  }
  ~StudyProgress() {
    if (shown_) std::cerr << "\r" << std::string(78, ' ') << "\r" << std::flush;
  }

 private:
  bool tty_;
  bool shown_ = false;
  double next_ = 30;
};

std::string render(const io::StudySpec& spec, const std::vector<io::StudyRecord>& records, const std::string& format,
                   const std::string& input) {
  if (format == "csv") return report::study_csv(spec, records);
  if (format == "json") return report::study_json(spec, records);
  if (format == "html") return report::study_html(spec, records, report::PageInfo{core::kVersion, input});
  return report::study_table(spec, records);
}

void summary(const std::vector<io::StudyRecord>& records, double seconds, std::uint64_t resumed) {
  std::uint64_t failed = 0;
  for (const auto& r : records) failed += r.layouts.empty() ? 1 : 0;
  const double run = static_cast<double>(records.size() - resumed);
  std::cerr << fmt::format("study: {} points ({} resumed, {} without a layout) in {:.1f} s, {:.3g} points/s\n",
                           records.size(), resumed, failed, seconds, seconds > 0 ? run / seconds : 0.0);
}

// The journal: --journal, else beside an output file. None for standard output, a device or a FIFO
// (`-o /dev/null` must not leave /dev/null.journal behind).
std::string journal_of(const StudyArgs& a) {
  if (!a.journal.empty()) return a.journal;
  if (a.out.to_stdout()) return "";
  std::error_code ec;
  const auto status = std::filesystem::status(a.out.path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) return "";
  return a.out.path + ".journal";
}

void run(const StudyArgs& a, const study::MpiWorld& world) {
  int shard = 1, count = 1;
  if (!a.shard.empty()) {
    if (!study::parse_shard(a.shard, shard, count))
      throw core::ConfigError(core::SourceLocation{"--shard", 0, 0}, "expected I/N with 1 <= I <= N, got " + a.shard);
    if (world.size > 1)
      throw core::ConfigError(core::SourceLocation{"--shard", 0, 0},
                              "--shard splits a study between separate runs; under MPI the ranks split it");
  }
  const io::StudySpec spec = io::load_study(a.study);
  study::RunOptions opt;
  opt.threads = a.threads;
  opt.shard = shard;
  opt.count = count;
  opt.journal = journal_of(a);
  StudyProgress progress;
  std::uint64_t resumed = 0;
  opt.on_progress = [&](const study::Progress& p) {
    resumed = p.resumed;
    progress(p);
  };
  const auto start = std::chrono::steady_clock::now();
  const auto records = study::run_study_mpi(spec, opt, world);
  if (world.rank != 0) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!a.shard.empty()) {
    emit(a.out, io::shard_text(spec, shard, count, records));
  } else {
    emit(a.out, render(spec, records, a.out.format, a.study));
  }
  // written whole: the journal has served
  if (!opt.journal.empty()) std::remove(opt.journal.c_str());
  summary(records, seconds, resumed);
}

void merge(const MergeArgs& a) {
  std::vector<io::ShardFile> shards;
  for (const auto& path : a.shards) shards.push_back(io::read_shard(path));
  const io::StudySpec spec = io::load_study(a.study.empty() ? shards.front().study : a.study);
  const auto records = study::merge_shards(spec, shards, a.shards);
  emit(a.out, render(spec, records, a.out.format, spec.file));
}

}  // namespace

void add_study(CLI::App& app) {
  auto args = std::make_shared<StudyArgs>();
  auto margs = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand(
      "study", "co-design study: a layout sweep at every point of a grid of scenario keys (docs/study.md)");
  cmd->add_option("study", args->study, "study YAML file: base scenarios and the keys that vary");
  cmd->add_option("--threads", args->threads,
                  "points run at once (default: all cores); under MPI, each rank's sweep threads (default 1)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--shard", args->shard, "run the I-th of N shards (a job array's task), written for `study merge`")
      ->type_name("I/N");
  cmd->add_option("--journal", args->journal,
                  "where finished points are kept for a rerun to skip (default: the output's name + .journal)");
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});

  auto* m = cmd->add_subcommand("merge", "join the shard files of `study --shard I/N` into one output");
  m->add_option("shards", margs->shards, "every shard file of the study")->required();
  m->add_option("--study", margs->study, "the study file (default: as the shards name it)");
  add_output_options(m, margs->out, {"table", "json", "csv", "html"});
  m->callback([margs] { merge(*margs); });

  cmd->callback([args, m] {
    if (m->parsed()) return;
    if (args->study.empty())
      throw core::ConfigError(core::SourceLocation{"study", 0, 0}, "expected a study file: ptdsim study STUDY.yaml");
    if (!args->shard.empty() && args->out.format != "table")
      throw core::ConfigError(core::SourceLocation{"--shard", 0, 0},
                              "a shard's output is for `study merge`, which takes --format");
    const study::MpiWorld world = study::mpi_start();
    try {
      run(*args, world);
    } catch (const core::ConfigError& e) {
      if (world.size <= 1) {
        study::mpi_finish();
        throw;
      }
      // every rank read the same input: one says so, all stop
      if (world.rank == 0) std::cerr << e.what() << "\n" << std::flush;
      study::mpi_abort(2);
    } catch (const std::exception& e) {
      if (world.size <= 1) {
        study::mpi_finish();
        throw;
      }
      std::cerr << fmt::format("ptdsim: error (rank {}): {}\n", world.rank, e.what()) << std::flush;
      study::mpi_abort(1);
    }
    study::mpi_finish();
  });
}

}  // namespace ptdsim::cli
