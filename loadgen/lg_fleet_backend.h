/* lg_fleet_backend: the fleet's inside, below its interface (lg_fleet.h):
 * the types the interface and the back-ends share, the table each back-end
 * fills (lg_fleet.c calls through it), and the back-ends' entry points,
 * defined in lg_fleet_fork.c and lg_fleet_mpi.c. Only the fleet's own
 * files call what it declares; the coordinator sees its types through
 * lg_fleet.h. */
#ifndef LG_FLEET_BACKEND_H
#define LG_FLEET_BACKEND_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"
#include "lg_merge.h"
#include "lg_outputs.h"
#include "lg_plan.h"
#include "lg_sched.h"

typedef struct lg_fleet lg_fleet;

/* Where this process stands in the fleet. */
typedef struct lg_fleet_place {
    int k;        /* the run's workers; 0: --num-workers decides */
    int first;    /* this process's first slot (the plan's slot_base) */
    int n_slots;  /* slots this process holds; 0: all k */
    int reporter; /* this process judges and writes the report */
    int live;     /* the coordinator reads every worker's live counters:
                   * the saturation watch, the knee, the server's metrics */
    int salvage;  /* no run: the ranks' snapshots are read instead */
    int per_rank; /* a lost worker is a lost rank (the report says so) */
} lg_fleet_place;

/* The coordinator's part in running the fleet. */
typedef struct lg_fleet_job {
    lg_plan *p;
    /* the coordinator's watch: signals, progress, saturation; called about
     * every 20 ms while the workers run */
    void (*tick)(void *ctx);
    void *ctx;
    /* in a forked worker before it exits: frees the coordinator's memory */
    void (*child_exit)(void *ctx);
    /* out, per slot this process holds (n_slots each, zeroed by the
     * caller): 1 when worker w failed or was killed, and the signal */
    int *lost;
    int *lost_sig;
} lg_fleet_job;

/* Every worker's results, at the reporter. */
typedef struct lg_fleet_results {
    int k;
    const lg_slot **slots;         /* [k] */
    const lg_stage_stats **blocks; /* [k * n_stages], worker-major */
    lg_merged *merged;             /* merged over the workers kept */
    int *lost, *lost_sig;          /* [k]: the workers lost (the job's, or the ranks') */
    /* the records the processes committed themselves (NULL: the report
     * commits them from the parts) */
    const lg_record_count *records;
    /* what the fork back-end allocated for the above (the mpi back-end's
     * are its exchange's) */
    lg_merged merged_;
    lg_record_count records_;
    int own;
} lg_fleet_results;

typedef struct lg_fleet_ops {
    int (*agree)(lg_fleet *f, int rc);
    void (*share)(lg_fleet *f, void *buf, size_t n);
    int (*workers_here)(const lg_fleet *f, int k);
    void (*set_certificate)(lg_fleet *f, const char *note);
    int (*forks)(const lg_fleet *f, const lg_opts *o);
    int (*progress)(const lg_fleet *f, const lg_opts *o);
    void (*outputs)(const lg_fleet *f, lg_outputs *out);
    int64_t (*start)(lg_fleet *f, const lg_plan *p, int k);
    int (*watch)(lg_fleet *f, const lg_plan *p, const lg_sched *stage_clock, int show,
                 int64_t now_ns);
    int (*collect)(lg_fleet *f, const lg_opts *o, lg_plan *p, lg_outputs *out,
                   const char *result_name, const lg_fleet_job *job, lg_fleet_results *res);
    void (*report_json)(const lg_fleet *f, const lg_plan *p, const int *lost, int k, cJSON *j);
    int (*salvage)(lg_fleet *f, lg_plan *p, const char *dir, const char *result_name, int *lost);
    void (*salvage_clean)(lg_fleet *f, const lg_plan *p, const char *dir, const char *result_name);
    void (*close)(lg_fleet *f);
} lg_fleet_ops;

struct lg_fleet {
    lg_fleet_place place;
    const lg_fleet_ops *ops;
    void *be; /* the back-end's own state (the mpi back-end's: lg_fleet_mpi.c) */
};

/* Each back-end's opening (lg_fleet_open chooses): *f zeroed; 0 or the
 * exit code (2: refused, on stderr). */
int lg_fleet_fork_open(lg_fleet *f, const lg_opts *o);
int lg_fleet_mpi_open(lg_fleet *f, const lg_opts *o);
int lg_fleet_salvage_open(lg_fleet *f, const lg_opts *o);
/* The fork back-end's collect, which a salvage's shares: the slots of this
 * process's region merged. */
/* The workers run (lg_fleet_run's), forked or in this process: both
 * back-ends'. */
int lg_fleet_fork_run(lg_fleet_job *job);
int lg_fleet_fork_collect(lg_fleet *f, const lg_opts *o, lg_plan *p, lg_outputs *out,
                          const char *result_name, const lg_fleet_job *job, lg_fleet_results *res);

#endif
