/* lg_run_state: the state one run carries from its plan to its report,
 * shared by the two halves of the coordinator: lg_run.c (the plan, the
 * watch, the fleet and a salvage) and lg_run_report.c (the
 * merged results judged, reported and written; lg_run_report.h). Private
 * to them: nothing else includes it. lg_run_state.c holds what both halves
 * compute from it. */
#ifndef LG_RUN_STATE_H
#define LG_RUN_STATE_H

#include <stdint.h>

#include "lg_cli.h"
#include "lg_fleet.h"
#include "lg_knee.h"
#include "lg_merge.h"
#include "lg_outputs.h"
#include "lg_plan.h"
#include "lg_report.h"
#include "lg_sched.h"
#include "lg_warmup.h"
#include "rb_host.h"

/* The coordinator's watch of a running fleet. */
typedef struct lg_coord {
    lg_plan *p;
    const lg_opts *o;
    int progress;
    int64_t last_progress_ns;
    int handled_signals;
    /* saturation watch */
    int64_t *stage_expected; /* scheduled arrivals per stage (sweep-until-saturation) */
    int judged;              /* stages judged so far */
    lg_sched *stage_clock;   /* for stage start times */
    lg_knee_watch *knee;     /* saturation by the server, and the knee */
    lg_fleet *fleet;         /* its own watch (under --mpi, the ranks') */

    /* the server's metrics (lg_scrape.h; NULL: off), and from a Prometheus
     * server (lg_promql.h; NULL: none) */
    struct lg_scrape *scrape;
    struct lg_promql *promql;
} lg_coord;

/* A stage's start on the run's clock (absolute ns). */
int64_t lg_coord_stage_start(const lg_coord *c, int s);

/* A run's state from the plan to the report. */
typedef struct lg_runstate {
    lg_opts *o;
    lg_plan plan;
    lg_coord coord;
    lg_outputs out;
    rb_host host;
    char cert_note[512];
    lg_cert_summary cert_sum;
    double safe_rho, budget_us, transport_us;
    int *lost, *lost_sig; /* per worker */
    int num_workers;      /* the report's */
    /* the fleet (lg_fleet.h) and, while its results are reported, the
     * records its processes committed themselves (NULL: the report
     * commits them) */
    lg_fleet *fleet;
    const lg_record_count *records;
    char result_name[600];
    int wrote;               /* the result file was written */
    lg_warmup_result warmup; /* --num-warmups (requested 0: none sent) */
} lg_runstate;

#endif
