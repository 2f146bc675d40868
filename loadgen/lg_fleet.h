/* lg_fleet: the processes that run a plan's workers, behind one interface
 * with two back-ends. The coordinator (lg_run.c) asks the fleet where this
 * process stands, has it agree, start, run and watch the workers, collect
 * their results for the report, and salvage a run that never collected;
 * it never asks which back-end it has.
 * - fork (lg_fleet_fork.c, the default): k child processes on one host
 *   sharing the plan's region, or one worker in-process.
 * - mpi (lg_fleet_mpi.c, --mpi): one worker per rank, the same in-process
 *   path on every rank (the plan's slot_base is the rank: this process
 *   holds that one worker's slot), and lg_mpi.h's exchange then brings
 *   every rank's slot to rank 0. The same back-end, opened for
 *   --mpi-salvage N, reads the ranks' snapshots instead of running.
 * After a fleet has run, the slots hold the results the merge (lg_merge.h)
 * reads. The types the interface and the back-ends share, and what a
 * back-end implements, are lg_fleet_backend.h's. */
#ifndef LG_FLEET_H
#define LG_FLEET_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"
#include "lg_fleet_backend.h"
#include "lg_outputs.h"
#include "lg_plan.h"
#include "lg_sched.h"

/* The back-end the options ask for: mpi under --mpi (MPI_Init; it refuses
 * what it cannot do), mpi's salvage under --mpi-salvage N, else fork.
 * Returns NULL with *rc set (2: refused, the message on stderr). */
lg_fleet *lg_fleet_open(const lg_opts *o, int *rc);
const lg_fleet_place *lg_fleet_where(const lg_fleet *f);
/* The back-end's end (MPI_Finalize) and its memory. NULL is a no-op. */
void lg_fleet_close(lg_fleet *f);

/* The worst of every process's rc (an agreement: any refusal is all's). */
int lg_fleet_agree(lg_fleet *f, int rc);
/* The reporter's n bytes at buf, to every process. */
void lg_fleet_share(lg_fleet *f, void *buf, size_t n);
/* Workers on this host of the run's k, for its certificate. */
int lg_fleet_workers_here(const lg_fleet *f, int k);
/* The certificate's note this process was checked against (the report
 * lists them per host). */
void lg_fleet_set_certificate(lg_fleet *f, const char *note);
/* Whether the plan forks its workers (lg_plan_build's `forked`). */
int lg_fleet_forks(const lg_fleet *f, const lg_opts *o);
/* Whether this process shows the progress line (o->progress: -1 auto). */
int lg_fleet_progress(const lg_fleet *f, const lg_opts *o);
/* This process's files among the run's (its own parts under --mpi). */
void lg_fleet_outputs(const lg_fleet *f, lg_outputs *out);
/* The run's start instant on this process's clock, k workers. */
int64_t lg_fleet_start(lg_fleet *f, const lg_plan *p, int k);

/* Runs this process's workers (forked, or slot `first` in this process with
 * the watch on its timer; lost[0] is then its mark), calls the watch until
 * all have ended, and kills those still running 2 s past the plan's end
 * deadline. Returns 0, or 1 when a worker could not be started (the others
 * are stopped and reaped). */
int lg_fleet_run(lg_fleet *f, lg_fleet_job *job);
/* From the watch's tick: the fleet's own watch (under --mpi rank 0 notes
 * the ranks gone from its host, and the ranks' combined progress line is
 * shown when show). Returns 1 when the fleet showed the progress itself
 * (the coordinator then shows none), else 0. */
int lg_fleet_watch(lg_fleet *f, const lg_plan *p, const lg_sched *stage_clock, int show,
                   int64_t now_ns);

/* The collect after the run: under --mpi each rank commits its records
 * (out), writes its snapshot (result_name in o->result_dir) and joins the
 * exchange. job->lost are this process's marks. At the reporter fills res
 * (*res zeroed by the caller) and returns 0; elsewhere returns 0 with
 * res->k 0, or 1 (records lost, or the exchange failed). */
int lg_fleet_collect(lg_fleet *f, const lg_opts *o, lg_plan *p, lg_outputs *out,
                     const char *result_name, const lg_fleet_job *job, lg_fleet_results *res);
void lg_fleet_results_free(lg_fleet_results *res);
/* The result's back-end sections: "mpi" (ranks, hosts, clock sync, lost
 * ranks and their arrivals; a salvage's) and "degraded" when a rank was
 * lost. Nothing for the fork back-end. */
void lg_fleet_report_json(const lg_fleet *f, const lg_plan *p, const int *lost, int k, cJSON *j);

/* --mpi-salvage N: the ranks' snapshots of result_name (in dir) read into
 * the plan's slots (a rank without one is lost: lost[w] 1). Returns 0, or
 * 2 when there was none. */
int lg_fleet_salvage(lg_fleet *f, lg_plan *p, const char *dir, const char *result_name, int *lost);
/* Once the salvaged report is written: the snapshots and the lost ranks'
 * parts removed. */
void lg_fleet_salvage_clean(lg_fleet *f, const lg_plan *p, const char *dir,
                            const char *result_name);

#endif
