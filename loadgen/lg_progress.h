/* lg_progress: the live progress line. lg_progress_format is pure (the
 * text from lg_progress_in); lg_progress_print gathers the live counters. */
#ifndef LG_PROGRESS_H
#define LG_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct lg_progress_in {
    double elapsed_s;  /* since the run's start */
    int stage;         /* 0-based current stage */
    int n_stages;      /* >= 1 */
    double stage_rate; /* requested rate of the stage (INFINITY, NAN: none, e.g. closed loop) */
    double stage_elapsed_s; /* since the stage's start (< 0: not started) */
    uint64_t stage_dispatched;
    uint64_t dispatched, completed, failed, in_flight;
    double lag_p99_ms;
    double total_s;  /* scheduled length of the run (0: bounded by count) */
    int64_t planned; /* requests planned when bounded by count (<= 0: unknown) */
} lg_progress_in;

/* "[loadgen] stage 2/5 100.0/s (achieved 98.7/s) 12.3s sent 1200 completed 1178 failed 2
 * in flight 20 lag p99 0.120 ms ETA 37s": the ETA is to the scheduled end, or
 * for a run bounded by count the rest at the rate so far ("ETA ?": unknown). */
void lg_progress_format(const lg_progress_in *in, char *buf, size_t cap);

/* The coordinator's side: gathers the live counters of the plan's workers
 * and writes the line to stderr ("\r", no newline). clock gives the stage
 * start times (NULL: closed loop). */
struct lg_plan;
struct lg_sched;
void lg_progress_print(const struct lg_plan *p, const struct lg_sched *clock, int64_t now_ns);

/* The same line's live counters as an array, so that they can travel (under
 * --mpi every rank's, combined at rank 0: lg_mpi_progress): the entries
 * below, then each stage's dispatched. */
enum {
    LG_PC_IN_FLIGHT,
    LG_PC_LAG_P99_NS, /* the workers' largest */
    LG_PC_STAGE,      /* the furthest worker's current stage */
    LG_PC_DISPATCHED,
    LG_PC_FAILED,
    LG_PC_DONE,
    LG_PC_STAGE_DISPATCHED /* [n_stages] */
};
#define LG_PROGRESS_MAX_STAGES 64 /* lg_cli's LG_MAX_STAGES */
#define LG_PROGRESS_NCOUNTS(n_stages) (LG_PC_STAGE_DISPATCHED + (n_stages))
/* The counters of the plan's mapped workers into c[LG_PROGRESS_NCOUNTS]. */
void lg_progress_counts(const struct lg_plan *p, uint64_t *c);
/* is_max[i]: 1 where the combination over workers is the maximum, not the sum. */
void lg_progress_counts_max(int n_stages, unsigned char *is_max);
/* The line from counters (lg_progress_counts', or their combination). */
void lg_progress_print_counts(const struct lg_plan *p, const struct lg_sched *clock, int64_t now_ns,
                              const uint64_t *c);

#endif
