// Master-worker over MPI: rank 0's main thread hands out one point at a time to whichever rank asks
// (its own compute thread among them) and writes each record to the journal; a worker's request
// carries its last record. One point at a time per rank keeps the ends even: the last points finish
// within one point's time of each other, whatever the spread of the sweeps' costs
// (docs/performance.md "Study").
#include "ptdsim/study/mpi.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#ifdef PTDSIM_STUDY_MPI
#include <mpi.h>
#endif

namespace ptdsim::study {

#ifndef PTDSIM_STUDY_MPI

bool built_with_mpi() { return false; }
MpiWorld mpi_start() { return {}; }
void mpi_finish() {}
void mpi_abort(int code) { std::exit(code); }
std::vector<io::StudyRecord> run_study_mpi(const io::StudySpec& spec, const RunOptions& options, const MpiWorld&) {
  return run_study(spec, options);
}

#else

namespace {

bool started = false;
constexpr int kResult = 1;  // worker -> 0: the last record ("" for none yet)
constexpr int kAssign = 2;  // 0 -> worker: the next point, or kStop
constexpr unsigned long long kStop = ~0ULL;

// The launchers' own variables: OpenMPI's mpirun, MPICH's and Intel's mpiexec (PMI), Slurm's srun
// (PMI, PMIx).
bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// The journal's records into `records`; the points still to run.
std::vector<std::uint64_t> resume(std::uint64_t points, const std::optional<io::StudyJournal>& journal,
                                  std::vector<io::StudyRecord>& records) {
  std::vector<bool> done(points, false);
  if (journal)
    for (const auto& r : journal->done()) {
      done[r.point] = true;
      records.push_back(r);
    }
  std::vector<std::uint64_t> pending;
  for (std::uint64_t i = 0; i < points; ++i)
    if (!done[i]) pending.push_back(i);
  return pending;
}

// Answers one rank's request, if one waits: `add`s the record it carries and sends it the next
// point `take` gives, or kStop (one worker fewer). Whether a request was answered.
template <class Take, class Add>
bool serve_request(std::uint64_t points, Take& take, Add& add, int& workers) {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, kResult, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (!flag) return false;
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  std::string text(static_cast<std::size_t>(n), '\0');
  check(MPI_Recv(text.data(), n, MPI_CHAR, status.MPI_SOURCE, kResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  if (!text.empty()) {
    auto r = io::decode_record(text);
    if (!r || r->point >= points) throw std::runtime_error("MPI: a rank sent a record that is not one");
    add(std::move(*r));
  }
  const auto p = take();
  unsigned long long assign = p ? *p : kStop;
  check(MPI_Send(&assign, 1, MPI_UNSIGNED_LONG_LONG, status.MPI_SOURCE, kAssign, MPI_COMM_WORLD), "MPI_Send");
  if (!p) --workers;
  return true;
}

std::vector<io::StudyRecord> master(const io::StudySpec& spec, const RunOptions& options, const MpiWorld& world) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<io::StudyJournal> journal;
  if (!options.journal.empty()) journal.emplace(options.journal, spec);
  const std::uint64_t points = spec.points();
  std::vector<io::StudyRecord> records;
  const std::vector<std::uint64_t> pending = resume(points, journal, records);
  Progress progress;
  progress.total = points;
  progress.resumed = progress.done = records.size();
  const int threads = std::max(options.threads, 1);

  std::mutex m;
  std::size_t next = 0;
  auto take = [&]() -> std::optional<std::uint64_t> {
    std::lock_guard lock(m);
    if (next >= pending.size()) return std::nullopt;
    return pending[next++];
  };
  // rank 0's own share, on a thread of its own: the main thread stays free for the other ranks
  std::vector<io::StudyRecord> local;
  bool local_running = true;
  std::exception_ptr error;
  std::thread compute([&] {
    try {
      while (const auto p = take()) {
        auto r = run_point(spec, *p, threads);
        std::lock_guard lock(m);
        local.push_back(std::move(r));
      }
    } catch (...) {
      std::lock_guard lock(m);
      error = std::current_exception();
    }
    std::lock_guard lock(m);
    local_running = false;
  });

  auto add = [&](io::StudyRecord r) {
    if (journal) journal->append(r);
    records.push_back(std::move(r));
    ++progress.done;
  };
  auto last_report = std::chrono::steady_clock::now();
  int workers = world.size - 1;
  try {
    for (;;) {
      std::vector<io::StudyRecord> mine;
      bool running = false;
      {
        std::lock_guard lock(m);
        mine.swap(local);
        running = local_running;
        if (error) std::rethrow_exception(error);
      }
      for (auto& r : mine) add(std::move(r));
      const bool flag = serve_request(points, take, add, workers);
      const auto now = std::chrono::steady_clock::now();
      if (!mine.empty() || flag || now - last_report > std::chrono::seconds(1)) {
        progress.elapsed_s = std::chrono::duration<double>(now - start).count();
        if (options.on_progress) options.on_progress(progress);
        last_report = now;
      }
      if (workers == 0 && !running) {
        std::lock_guard lock(m);
        if (local.empty()) break;
        continue;
      }
      if (!flag && mine.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  } catch (...) {
    {
      std::lock_guard lock(m);
      next = pending.size();
    }
    compute.join();
    throw;
  }
  compute.join();
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.point < b.point; });
  return records;
}

void worker(const io::StudySpec& spec, const RunOptions& options) {
  const int threads = std::max(options.threads, 1);
  std::string last;
  for (;;) {
    check(MPI_Send(last.data(), static_cast<int>(last.size()), MPI_CHAR, 0, kResult, MPI_COMM_WORLD), "MPI_Send");
    unsigned long long p = 0;
    check(MPI_Recv(&p, 1, MPI_UNSIGNED_LONG_LONG, 0, kAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    if (p == kStop) return;
    last = io::encode_record(run_point(spec, p, threads));
  }
}

}  // namespace

bool built_with_mpi() { return true; }

MpiWorld mpi_start() {
  if (!launched()) return {};
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  started = true;
  MpiWorld w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

void mpi_finish() {
  if (started) MPI_Finalize();
  started = false;
}

void mpi_abort(int code) {
  if (started) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

std::vector<io::StudyRecord> run_study_mpi(const io::StudySpec& spec, const RunOptions& options, const MpiWorld& world) {
  if (world.size <= 1) {
    RunOptions one = options;
    return run_study(spec, one);
  }
  // every rank read the same study: rank 0's hash against each one's
  char hash[17] = {};
  std::copy_n(spec.hash.data(), std::min<std::size_t>(spec.hash.size(), 16), hash);
  check(MPI_Bcast(hash, 17, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  int same = std::string(hash) == spec.hash ? 1 : 0, all = 0;
  check(MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (!all)
    throw core::ConfigError(core::SourceLocation{spec.file, 0, 0},
                            "the ranks read different studies (the study or a base file differs between machines)");
  if (world.rank == 0) return master(spec, options, world);
  worker(spec, options);
  return {};
}

#endif

}  // namespace ptdsim::study
