/* lg_fleet: starts a plan's workers, watches them until each has ended, and
 * says which were lost. The fork back-end (lg_fleet_fork.c, the default):
 * k child processes on one host sharing the plan's region, or one worker
 * in-process. The mpi back-end runs the same in-process path on every rank
 * (the plan's slot_base is the rank: this process holds that one worker's
 * slot) and lg_mpi.h's exchange then brings every rank's slot to rank 0.
 * After a fleet has run, the slots hold the results the merge (lg_merge.h)
 * reads. */
#ifndef LG_FLEET_H
#define LG_FLEET_H

#include "lg_plan.h"

typedef struct lg_fleet {
    lg_plan *p;
    /* the coordinator's watch: signals, progress, saturation; called about
     * every 20 ms while the workers run */
    void (*tick)(void *ctx);
    void *ctx;
    /* in a forked worker before it exits: frees the coordinator's memory */
    void (*child_exit)(void *ctx);
    /* out, per worker (k each, zeroed by the caller): 1 when worker w failed
     * or was killed, and the signal that killed it */
    int *lost;
    int *lost_sig;
} lg_fleet;

/* The fork back-end. Forks the plan's k workers (or, when the plan is not
 * forked, runs worker slot_base in this process with the watch on its
 * timer; lost[0] is then its mark), calls
 * the watch until all have ended, and kills those still running 2 s past the
 * plan's end deadline. Returns 0, or 1 when a worker could not be started
 * (the others are stopped and reaped). */
int lg_fleet_fork_run(lg_fleet *f);

#endif
