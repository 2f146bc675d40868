/* lg_knee: which stages of a run were saturated, by whom, and the run's knee
 * (its first saturated stage).
 *
 * A stage is saturated by the CLIENT when the client could not offer the
 * load: fewer than 95% of the stage's scheduled arrivals dispatched by its
 * end, or more than 1% of them later than the lag bound. It is saturated by
 * the SERVER when the client offered the load but the server did not keep
 * up: either the responses completed in the stage's second half (the first
 * half absorbs the change of rate) fall short of what was sent in it (< 95%)
 * while the requests in flight grew beyond their noise (a queue building up)
 * or failed (a server shedding load), or TTFT's median rose past a knee:
 * above `ttft_factor` times the lowest median of the earlier unsaturated
 * stages, and above it by more than the larger of `ttft_floor_ms` and half
 * that stage's E2E median (requests then wait in a queue for a good part of
 * their own service time). The order: the client's count first (a load
 * the client did not offer says nothing about the server), then the
 * server's rules, then the client's lag (a stage offered in full but with
 * some late dispatches, whose server fell behind anyway, is the server's).
 *
 * The judging (lg_knee_judge, lg_knee_find) is pure. The watch
 * (lg_knee_watch_*) takes the live snapshots it needs (at each stage's middle
 * and end) in
 * the coordinator, stops a --sweep-until-saturation run at a server knee,
 * and judges every stage from the merged results at the end. */
#ifndef LG_KNEE_H
#define LG_KNEE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lg_stats.h"

typedef enum { LG_SAT_NONE = 0, LG_SAT_CLIENT, LG_SAT_SERVER } lg_sat_by;

typedef struct lg_knee_rules {
    double min_ratio;      /* 0.95: completed (server) or dispatched (client) share */
    double lag_over_share; /* 0.01: dispatches past the lag bound (client) */
    double ttft_factor;    /* 2: TTFT p50 over the baseline's (0: the rule is off) */
    double ttft_floor_ms;  /* 10: and at least this far above it */
} lg_knee_rules;
#define LG_KNEE_RULES_DEFAULT ((lg_knee_rules){0.95, 0.01, 2.0, 10.0})

/* What is known of one stage. */
typedef struct lg_knee_obs {
    double rate_per_s;                /* offered (requested) */
    uint64_t scheduled;               /* arrivals the schedule put in the stage (0: unknown) */
    uint64_t dispatched;              /* the stage's own requests sent */
    uint64_t lag_over;                /* of them, later than the lag bound */
    int have_window;                  /* the snapshots at the window's two ends were taken */
    double window_s;                  /* the window: the stage's second half */
    uint64_t sent_in;                 /* requests (of any stage) sent in the window */
    uint64_t completed_in, failed_in; /* responses (of any stage) that ended in it */
    int64_t in_flight_start, in_flight_end;
    double ttft_p50_ms, e2el_p50_ms; /* the stage's medians (NAN: none) */
} lg_knee_obs;

typedef struct lg_knee_verdict {
    int saturated;
    lg_sat_by by;
    double completed_rate; /* completed_in / window_s (NAN: no window) */
    char criterion[200];   /* the rule that fired, with its numbers ("" when none) */
} lg_knee_verdict;

typedef struct lg_knee {
    int found;
    int stage;
    double rate_per_s; /* the first saturated stage's offered rate */
    lg_sat_by cause;
    char criterion[200];
} lg_knee;

/* Judges stage s from obs[0..s]; v[0..s-1] are the earlier stages' verdicts
 * (for the TTFT baseline). */
void lg_knee_judge(const lg_knee_rules *r, const lg_knee_obs *obs, const lg_knee_verdict *v, int s,
                   lg_knee_verdict *out);
/* The first saturated of n stages. */
void lg_knee_find(const lg_knee_obs *obs, const lg_knee_verdict *v, int n, lg_knee *k);
const char *lg_sat_name(lg_sat_by by); /* "client", "server", or NULL */

/* Report keys: per stage "saturated", "saturated_by", "saturation_criterion",
 * "completed_rate"; at the top "knee": {rate, cause, criterion, stage} or null. */
void lg_knee_stage_json(cJSON *stage, const lg_knee_verdict *v);
void lg_knee_json(cJSON *top, const lg_knee *k);
/* The summary's "Knee:" line and its criterion (nothing when none). */
void lg_knee_summary(const lg_knee *k, FILE *f);

/* ---- the coordinator's watch ---- */
struct lg_plan;
typedef struct lg_knee_watch lg_knee_watch;

/* NULL for a run without stages to judge (closed loop, trace) or out of memory. */
lg_knee_watch *lg_knee_watch_new(const struct lg_plan *p, int progress_line);
/* Takes the end-of-stage snapshots that are due; with --sweep-until-saturation,
 * stops the run (like the client watch) after a stage saturated by the server. */
void lg_knee_watch_tick(lg_knee_watch *w, int64_t now_ns);
/* Judges the n stages from the merged blocks; client_stage is the stage
 * after which the client watch stopped the run (-1: none). */
void lg_knee_watch_finish(lg_knee_watch *w, const lg_stage_stats *const *stages, int n,
                          int stopped_stage, lg_knee_verdict *v, lg_knee *k);
void lg_knee_watch_free(lg_knee_watch *w);

#endif
