#pragma once
#include <vector>

#include "ptdsim/study/study.hpp"

// A study over MPI ranks (docs/study.md "Across machines"): rank 0 hands out points one at a time
// and writes what comes back; every other rank runs the points it is given. Built only where CMake
// finds an MPI (PTDSIM_CALIBRATE_MPI, as for ptdsim-calibrate); elsewhere a world of one.
namespace ptdsim::study {

struct MpiWorld {
  int rank = 0;
  int size = 1;
};

// Whether this ptdsim was built with MPI.
bool built_with_mpi();
// Starts MPI when built with it and started by an MPI launcher (mpirun, mpiexec, srun: their
// environment says so); otherwise, or run alone, the world of one, with MPI not started.
MpiWorld mpi_start();
// Ends MPI if mpi_start started it (call once, on every rank, after the study).
void mpi_finish();
// Ends every rank at once with `code` (a rank that failed: the others would wait for it forever).
[[noreturn]] void mpi_abort(int code);

// The study over the world's ranks: on rank 0 every record, by point, each appended to the journal
// as it arrives; on the others none. Each rank runs one point at a time, its sweep on
// options.threads threads (0: 1). Every rank must have loaded the same study (its hash is checked).
std::vector<io::StudyRecord> run_study_mpi(const io::StudySpec& spec, const RunOptions& options, const MpiWorld& world);

}  // namespace ptdsim::study
