/* lg_dryrun: `loadgen --dry-run`, the plan of a run without the run. After
 * the options are checked (lg_cli_finish), it reads what the run would read
 * (a trace, a ShareGPT file, the certificate), draws the same seeded
 * schedule the workers will follow (lg_sched) and prints: the target, the
 * load mode, the workers and their concurrency, each stage's rate, length
 * and expected requests (the schedule's exact count, per worker too), the
 * scheduled duration, and with --certificate the predicted rho per worker
 * of each stage (lg_cert_predict_rho) and the certificate's decision. No
 * socket is opened. Like k6's `inspect`. */
#ifndef LG_DRYRUN_H
#define LG_DRYRUN_H

#include <stdint.h>
#include <stdio.h>

#include "lg_cli.h"
#include "lg_sched.h"

/* Arrivals counted at most (a bigger plan is said to be "more than" this). */
#define LG_DRYRUN_MAX_COUNT 50000000LL

/* The schedule's arrivals per stage and per worker. */
typedef struct lg_dryrun_counts {
    int64_t per_stage[LG_MAX_STAGES];
    int64_t first_ns[LG_MAX_STAGES], last_ns[LG_MAX_STAGES]; /* intended, -1: none */
    int64_t total;
    int truncated; /* stopped at LG_DRYRUN_MAX_COUNT */
} lg_dryrun_counts;

/* Counts spec's arrivals (k workers: worker w takes index % k == w; per_worker
 * may be NULL, else k entries). Pure. Returns 0 or -EINVAL (err: the bad
 * field, as lg_sched_new says it). */
int lg_dryrun_count(const lg_sched_spec *spec, int k, int64_t *per_worker, lg_dryrun_counts *c,
                    char *err, size_t errlen);

/* The whole dry run of checked options: the plan to out. Returns the exit
 * code: 0, or 2 (an input the run would refuse: unreadable dataset or trace,
 * a certificate that refuses the plan without --force). */
int lg_dryrun(const lg_opts *o, FILE *out);

#endif
