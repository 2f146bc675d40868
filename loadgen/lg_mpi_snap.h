/* lg_mpi_snap: a rank's final slot on disk, for --mpi-salvage, and a lost
 * rank's arrivals (the mpi back-end's second file; lg_mpi.h has the
 * exchange). No MPI here: a salvage runs without mpirun. */
#ifndef LG_MPI_SNAP_H
#define LG_MPI_SNAP_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_plan.h"

/* A lost rank r's stripe of the N-rank stream (a pure function of seed, N
 * and r) as {rank, stride, count, first_index, last_index, gone_after_s,
 * never_offered}: never_offered lists the arrivals due after died_ns (rank
 * 0's clock, when it saw the rank gone; 0: not known, then null). */
cJSON *lg_mpi_lost_arrivals(const lg_plan *p, int r, int n, int64_t t0_root_ns, int64_t died_ns);

/* Salvage (no MPI needed). Each rank writes its slot, final, once its worker
 * has ended and before the exchange, to "<dir>/.<name>.rank<r>.snap"
 * (atomically); a run whose exchange completes removes them. When the
 * exchange never happened (mpirun ended every rank, or rank 0 was lost),
 * `loadgen --mpi-salvage N` with the run's flags merges the snapshots there:
 * ranks without one are lost. Times are in rank 0's clock. */
void lg_mpi_snap_path(const char *dir, const char *name, int rank, char *buf, size_t cap);
int lg_mpi_snap_write(const char *path, const lg_plan *p, int rank, int ranks, int64_t t0_root_ns,
                      int interrupted);
/* Fills rank's slot of p (mapped for ranks slots from 0). Returns 0, -errno,
 * or -EINVAL for a snapshot of another run's shape. */
int lg_mpi_snap_read(const char *path, const lg_plan *p, int rank, int ranks, int64_t *t0_root_ns,
                     int *interrupted);

#endif
