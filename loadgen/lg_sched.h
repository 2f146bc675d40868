/* lg_sched: the one global arrival schedule of a run. Arrival times are fixed
 * before the run from a seed, so the offered load is identical for any number
 * of workers: worker i of k takes arrivals i, i+k, i+2k, ... by iterating the
 * same stream and skipping the others' (lg_sched_next_for); with multi-turn
 * sessions a user's arrivals all go to the same worker instead. Pure: no clocks
 * (times are offsets from the run's start), no I/O; GSL's generator is
 * seeded from spec->seed. One iterator per owner; not thread-safe. */
#ifndef LG_SCHED_H
#define LG_SCHED_H

#include <stddef.h>
#include <stdint.h>

/* A stage's rate may move from arrival to arrival over its N arrivals (its
 * max_requests, or the global cap for the last stage), as vLLM's ramp-up:
 * arrival j (from 0) comes after a gap drawn at rate r(j), with p = j /
 * max(N - 1, 1), r(j) = a + (b - a) p (linear) or a (b / a)^p
 * (exponential), a the stage's rate_per_s and b its ramp_end_per_s. */
typedef enum { LG_RAMP_NONE = 0, LG_RAMP_LINEAR, LG_RAMP_EXPONENTIAL } lg_ramp;

typedef struct lg_stage {
    double rate_per_s;     /* > 0, or INFINITY: all at once (vLLM's inf); a ramp's start */
    int64_t duration_ns;   /* the stage ends after this long (0: unbounded) */
    int64_t max_requests;  /* ... or after this many arrivals (0: unbounded) */
    lg_ramp ramp;          /* LG_RAMP_NONE: rate_per_s throughout */
    double ramp_end_per_s; /* a ramp's rate at its last arrival (> 0, finite) */
} lg_stage;

/* Stage st's rate for its arrival j (from 0) of n (lg_ramp). */
double lg_stage_rate_at(const lg_stage *st, int64_t j, int64_t n);
/* Its highest rate: a ramp's larger end, else rate_per_s. */
double lg_stage_peak_rate(const lg_stage *st);

typedef struct lg_trace_row {
    int64_t t_ns; /* offset from the trace's first row */
    int32_t input_tokens, output_tokens;
} lg_trace_row;

typedef struct lg_sched_spec {
    uint64_t seed;
    double burstiness;      /* gamma shape: 1 Poisson, INFINITY constant rate */
    const lg_stage *stages; /* at least one, unless trace is set */
    size_t n_stages;
    int64_t pause_ns;          /* idle time between stages */
    const lg_trace_row *trace; /* replay these times instead (stages ignored) */
    size_t n_trace;
    double trace_speedup; /* trace times are divided by this (default 1) */
    int64_t max_requests; /* global cap over all stages (0: none) */
    /* Multi-turn sessions (lg_session.h): arrival j of a stage belongs to
     * user j % session_users, and a user's arrivals all go to one worker,
     * user % k (lg_sched_owner). 0: no sessions, arrival i to worker i % k. */
    int64_t session_users;
} lg_sched_spec;

typedef struct lg_arrival {
    int64_t index;         /* global arrival number, from 0 */
    int64_t t_ns;          /* intended send time, offset from run start */
    int stage;             /* stage index */
    int32_t input_tokens;  /* from the trace, else -1 */
    int32_t output_tokens; /* from the trace, else -1 */
    int64_t in_stage;      /* its number within its stage, from 0 */
} lg_arrival;

typedef struct lg_sched lg_sched;

/* Validates the spec and returns an iterator, or NULL with a message in err
 * naming the bad field ("stages[2].rate: must be > 0, got -5"). The spec's
 * arrays must outlive the iterator. */
lg_sched *lg_sched_new(const lg_sched_spec *spec, char *err, size_t errlen);
void lg_sched_free(lg_sched *s);
/* The next arrival of the global stream: returns 1 and fills *a, or 0 at the end. */
int lg_sched_next(lg_sched *s, lg_arrival *a);
/* The worker of k that arrival a belongs to: index % k, or with sessions
 * its user's worker, (in_stage % session_users) % k. */
int lg_sched_owner(const lg_sched_spec *spec, const lg_arrival *a, int k);
/* The next arrival that belongs to worker `worker` of `k` (lg_sched_owner). */
int lg_sched_next_for(lg_sched *s, int worker, int k, lg_arrival *a);
/* Counts what is left of worker `worker`'s arrivals (of k), per stage, into
 * per_stage[0 .. n_stages) (added to), and ends the iterator. The rest of a
 * stage bounded by count alone (no duration) is counted by arithmetic, at
 * any size; a timed stage's or a trace's arrivals are drawn one by one, at
 * most max_walk of them. Returns 1 when everything left was counted, 0 when
 * the walk stopped at max_walk (the counts are then lower bounds). */
int lg_sched_rest_for(lg_sched *s, int worker, int k, int64_t *per_stage, size_t n_stages,
                      int64_t max_walk);
/* The time at which stage `stage` starts (offset from run start), known from
 * lg_sched_new on; -1 for a stage that the global max_requests never lets
 * start, or no such stage. */
int64_t lg_sched_stage_start_ns(const lg_sched *s, int stage);

/* A 32-bit generator seed (MT19937 takes 32 bits) for sub-stream `stream` of
 * `seed`: distinct streams of one seed are independent. Used by the schedule
 * (one stream per stage) and the datasets. */
unsigned long lg_seed32(uint64_t seed, uint64_t stream);

#endif
