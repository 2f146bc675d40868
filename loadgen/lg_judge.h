/* lg_judge: the verdict's inputs from a run's merged results, stage by
 * stage and for the whole run. Pure: it reads the workers' slot headers and
 * blocks and the merged blocks it is given, and fills figures; no clocks,
 * no I/O, no plan. */
#ifndef LG_JUDGE_H
#define LG_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "lg_bias.h"
#include "lg_report.h"
#include "lg_slots.h"

typedef struct lg_judge_in {
    int k;           /* workers */
    int n_stages;    /* blocks per worker */
    int n_views;     /* stages figured: up to the last that dispatched anything */
    int n_cut;       /* of them, the last n_cut were cut short by the sweep's stop: figured, never
                      * judged (lg_judge_cut) */
    int closed;      /* a closed loop (no schedule to judge) */
    const int *lost; /* [k]: 1 for a lost worker (left out) */
    const lg_slot *const *slots;         /* [k]: every worker's slot header */
    const lg_stage_stats *const *blocks; /* [k * n_stages], worker-major */
    const lg_stage_stats *const *stages; /* [n_stages]: merged over the workers kept */
    const lg_stage_stats *total;         /* merged over the stages */
    const lg_dispatch_sample *samples;   /* sorted by index, contiguous (NULL: none) */
    size_t n_samples;
    const char *arrival_model; /* the process asked for: "constant", "gamma(shape=1)" */
    const char *arrival_skip;  /* why the arrivals cannot be tested (NULL: they can) */
    lg_bias_budget budget;
} lg_judge_in;

/* The per-worker figures: b[w] for every worker (lost ones too: their
 * figures as far as they got), max rho and the worst predicted W_q over the
 * workers kept, and whether any kept worker saw the server's stamps. */
void lg_judge_workers(const lg_judge_in *in, lg_worker_bias *b, double *max_rho,
                      double *worst_wq_us, int *stamps);

/* How many of the n_used stages that dispatched anything a sweep's stop cut
 * short: every stage after stopped_stage, the one whose end stopped the sweep
 * (-1: no stop). That stage ran to its planned end (both watches judge a
 * stage after it) and caused the stop, so it keeps its verdict; the next
 * one only dispatched in the moments before the stop and its window holds
 * the stopped stage's tail, so its figures say nothing of its own load. */
int lg_judge_cut(int n_used, int stopped_stage);

/* The run's judgement: sb[0..n_views) per stage (a cut stage's figures,
 * with no verdict: its level stays OK and its reason says it was cut), run for the whole send
 * window (its verdict is the worst stage's; among equals the busiest),
 * and the receive clock's health folded into the report. Returns the stage
 * that decided the verdict (-1: a single stage or none). */
int lg_judge_run(const lg_judge_in *in, double max_rho, double worst_wq_us, lg_bias_stage *sb,
                 lg_bias_stage *run, lg_report *rep);

/* One arrival test of the samples (stage < 0: every stage). */
void lg_judge_arrivals(const lg_judge_in *in, int stage, lg_arrival_test *t);

#endif
