/* lg_mpi: the mpi back-end of the fleet (lg_fleet.h), in two files:
 * lg_mpi.c (the exchange), declared here, and lg_mpi_snap.c (each rank's
 * snapshot and the lost ranks' arrivals, for salvage: lg_mpi_snap.h). Under mpirun (or srun)
 * each rank runs one worker of a k = N plan: rank r takes arrivals r, r+N,
 * ... of the one seeded stream, exactly as fork worker r of k = N would.
 * MPI is used only around the run, never on its hot path: before it, the
 * clock sync (rank 0 estimates each rank's CLOCK_MONOTONIC offset by
 * ping-pong, keeping the sample with the smallest round trip, and hands
 * every rank the common start instant in its own clock); after it, one
 * exact exchange to rank 0 (MPI_Reduce of the stats blocks by their own
 * exact merge, gathers of the slot headers, the stage headers and the
 * dispatch samples) and a second clock measurement for the drift. A rank
 * that has finished waits for the others sleeping between MPI_Test calls:
 * it must not spin on a CPU that a rank still running needs; the exchange
 * proper starts only once every survivor has arrived (lg_mpi_survivors).
 *
 * Built with -DRHOBENCH_MPI=ON; without it lg_mpi_init says so. */
#ifndef LG_MPI_H
#define LG_MPI_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_merge.h"
#include "lg_plan.h"

typedef struct lg_mpi lg_mpi;

/* Whether this build has the mpi back-end. */
int lg_mpi_available(void);

/* MPI_Init and this rank's place. Returns NULL with a message on stderr. */
lg_mpi *lg_mpi_init(void);
int lg_mpi_rank(const lg_mpi *m);
int lg_mpi_size(const lg_mpi *m);
/* Ranks on this rank's host (shared memory), for its certificate. */
int lg_mpi_ranks_here(const lg_mpi *m);

/* The largest of every rank's v (an agreement: any rank's refusal is all's). */
int lg_mpi_max(lg_mpi *m, int v);
/* Rank 0's n bytes at buf, to every rank. */
void lg_mpi_bcast(lg_mpi *m, void *buf, size_t n);
/* A sum over the ranks of n uint64_t, at rank 0 (in place there). */
void lg_mpi_sum_u64(lg_mpi *m, uint64_t *v, int n);

/* Measures the clock offsets and returns the run's start in this rank's
 * clock: rank 0's now + lead_ns, converted. */
int64_t lg_mpi_start(lg_mpi *m, int64_t lead_ns);

/* Rank 0, from the coordinator's watch during the run (no MPI: a signal 0
 * to each rank on its host, every 100 ms): notes when a rank is gone. */
void lg_mpi_watch(lg_mpi *m, int64_t now_ns);
/* Live progress with no MPI call on the hot path (from the coordinator's
 * 20 ms tick, not per event): each rank other than 0 sends rank 0 its n
 * counters once a second without blocking (a send waits for its
 * predecessor's completion and is skipped while that is pending); rank 0
 * takes what arrived (a non-blocking probe) and keeps every rank's latest
 * (a lost rank's stay as it last sent them) and writes into out the
 * combination over the ranks, its own included: the sum, or the maximum
 * where is_max[i]; the others' counters are up to a second old. Returns 1
 * when rank 0 has a new out (four times a second), else 0. Point to
 * point, not a non-blocking reduce: a reduce needs every rank to issue the
 * same sequence of calls, and a lost rank would leave it pending for ever. */
int lg_mpi_progress(lg_mpi *m, const uint64_t *mine, int n, const unsigned char *is_max,
                    uint64_t *out, int64_t now_ns);

/* Once this rank's worker has ended: every rank tells rank 0 it is done;
 * a rank gone from rank 0's host, or silent past deadline_ns (rank 0's
 * clock; 0: none), is lost, and the exchange that follows runs over the
 * survivors only. Open MPI 4.1 has no ULFM: without mpirun --enable-recovery
 * it ends every rank when one dies, and no report is written. A rank that
 * hears nothing from rank 0 by 10 s past the deadline gives up (rank 0 is
 * lost: there is no report). Returns the number of ranks lost, -EIO, or
 * -ETIMEDOUT (then lg_mpi_finish skips MPI_Finalize). */
int lg_mpi_survivors(lg_mpi *m, int64_t deadline_ns);
/* The note of the certificate this rank was checked against (its host's),
 * listed per host in the report. */
void lg_mpi_set_certificate(lg_mpi *m, const char *note);
/* Rank 0: rank r's process id when it runs on this host (else 0). */
long lg_mpi_local_pid(const lg_mpi *m, int r);

/* Rank 0's view of the whole fleet after the exchange. */
typedef struct lg_mpi_fleet {
    int k, n_stages;
    lg_slot *slot;                 /* [k] every rank's slot header */
    lg_stage_stats *head;          /* [k * n_stages] its stage blocks' headers (no histograms) */
    const lg_slot **slots;         /* [k] pointers into slot */
    const lg_stage_stats **blocks; /* [k * n_stages] pointers into head */
    int *lost, *lost_sig;          /* [k] */
    lg_merged merged;              /* reduced over the ranks kept */
} lg_mpi_fleet;

/* The exchange, on every survivor after lg_mpi_survivors (lost: its worker
 * failed).
 * At rank 0 fills f; elsewhere leaves it empty. Then measures the clocks
 * again. Returns 0 or -ENOMEM (at rank 0). */
int lg_mpi_collect(lg_mpi *m, const lg_plan *p, int lost, lg_mpi_fleet *f);
void lg_mpi_fleet_free(lg_mpi_fleet *f);
/* The exact sum of every rank's blocks src[0..n) into rank 0's dst[0..n)
 * (initialised blocks; NULL elsewhere): MPI_Reduce with lg_stats_merge as
 * its operation, since a plain MPI_SUM/MIN/MAX would not do (first times
 * use 0 for "none"; histograms merge by their own rule). */
void lg_mpi_reduce_blocks(lg_mpi *m, const lg_stage_stats *const *src, lg_stage_stats **dst, int n);

/* The report's "mpi" object: {ranks, hosts, clock_sync, start_skew_ns,
 * merge_ns, certificates, lost_ranks, lost_arrivals}. */
cJSON *lg_mpi_json(const lg_mpi *m, const lg_mpi_fleet *f, const lg_plan *p);

/* This rank's times in rank 0's clock (once; the exchange and a snapshot
 * both need them so). */
void lg_mpi_to_root_clock(lg_mpi *m, const lg_plan *p);
int64_t lg_mpi_t0_root(const lg_mpi *m);

/* MPI_Finalize and free. */
void lg_mpi_finish(lg_mpi *m);

#endif
