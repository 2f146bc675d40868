/* lg_plan: everything a worker needs, built once before the workers start
 * and read-only after: the schedule spec, the prompt pool with its
 * pre-rendered bodies, the URL, the loop's mode and deadlines, and where
 * the worker's slots are (lg_slots.h). Every back-end of the fleet
 * (lg_fleet.h) runs workers on a plan. */
#ifndef LG_PLAN_H
#define LG_PLAN_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#include "lg_body.h"
#include "lg_cert.h"
#include "lg_cli.h"
#include "lg_dataset.h"
#include "lg_sched.h"
#include "lg_slots.h"
#include "lg_stats.h"

typedef struct lg_plan {
    const lg_opts *o;
    int k;      /* workers of the whole run (>= 1): worker w takes arrivals w, w+k, ... */
    int forked; /* 0: the single worker runs in the coordinator */
    lg_sched_spec spec;
    int closed;          /* closed loop (lg_closed_loop): intended = dispatch */
    int capped;          /* open loop with a concurrency cap */
    int n_stages;        /* stats blocks per worker */
    lg_dataset ds;       /* the prompt pool (empty for a trace) */
    char **bodies;       /* pre-rendered request body per pool entry */
    lg_random_gen *rgen; /* o->prompt_per_request: each prompt made when sent (ds holds one) */
    struct rb_tok *tok;  /* --tokenizer (lg_dataset_set_tokenizer), or NULL */
    size_t *body_len;
    lg_trace_row *trace;
    size_t n_trace;
    char url[1200];
    int stamps; /* send X-Sim-Stamp: 1 */
    int64_t lag_bound_ns;
    int64_t total_dur_ns;    /* the scheduled length (stages and pauses, or the trace's) */
    int bounded_by_time;     /* every stage has a duration (or a trace) */
    int64_t end_deadline_ns; /* absolute: cancel whatever is left (0: none) */
    /* per worker: its JSONL part, opened by the coordinator before the
     * workers start (NULL or -1: no records); indexed from slot_base */
    const int *detailed_fd;
    /* the region of lg_slots.h: this process holds the slots of workers
     * slot_base .. slot_base + n_slots - 1 */
    void *shm;
    size_t shm_bytes;
    int slot_base, n_slots;
    /* in-process mode: the coordinator's watch, called from the worker's
     * housekeeping timer */
    void (*tick)(void *ctx);
    void *tick_ctx;
} lg_plan;

/* Closed loop: a concurrency cap with no rate, one stage, no trace; each
 * worker's C slots send again as soon as a request ends, so intended =
 * dispatch and there is no arrival process. The one definition. */
int lg_closed_loop(const lg_opts *o);
/* The users of multi-turn sessions (--prefix-multi-turn: groups x prompts
 * per group; lg_session.h), 0 without them: the schedule's session_users. */
int64_t lg_plan_session_users(const lg_opts *o);
/* The report's load mode: "open", "open-capped" or "closed". */
const char *lg_load_mode(const lg_opts *o);
/* What the certificate check compares for a plan: its highest stage's
 * request rate (NAN in a closed loop or a trace replay: not known before the
 * run) and its workload: output tokens per request (NAN unless the random
 * dataset fixes them), one event per delivery (the costliest), streamed or
 * not. */
void lg_plan_cert_inputs(const lg_opts *o, double *rate, lg_cert_workload *w);

/* Builds the plan for k workers (pool, bodies, spec, URL, mode, length).
 * Returns 0, or -errno with a message in err; free with lg_plan_free either way. */
int lg_plan_build(lg_plan *p, const lg_opts *o, int k, int forked, char *err, size_t errlen);
/* Maps a zeroed shared region for n_slots slots from slot_base and
 * initialises their stats blocks. Returns 0 or -errno. */
int lg_plan_map(lg_plan *p, int slot_base, int n_slots);
void lg_plan_free(lg_plan *p);

/* The hard deadline of a run, as an offset from its start: the scheduled
 * length (or, for a run bounded by count, ceil(N / C) request timeouts
 * after the last intended start) plus the drain and request timeouts.
 * 0: none. A count-bounded open run walks its whole schedule for the last
 * start, so it is called before the start instant is fixed; once *cancel
 * is nonzero (a signal: the run stops) the walk ends early and the offset
 * is short. cancel may be NULL. */
int64_t lg_plan_end_offset(const lg_plan *p, const volatile sig_atomic_t *cancel);

lg_shared *lg_plan_shared(const lg_plan *p);
lg_slot *lg_plan_slot(const lg_plan *p, int w);
lg_stage_stats *lg_plan_stats(const lg_plan *p, int w, int stage);
lg_dispatch_sample *lg_plan_sample(const lg_plan *p, int w);
/* Worker w's JSONL part (-1: none). */
int lg_plan_detailed_fd(const lg_plan *p, int w);

/* The concurrency slots of worker w (C split over k). */
int lg_plan_worker_cap(const lg_plan *p, int w);

/* An upper bound on a run of closed stages (--closed-stage), from its
 * start: per stage, a worker's share of the requests one after another on
 * each of its slots, every one taking up to --request-timeout, plus the
 * pauses and the drain. The run's deadline. */
int64_t lg_closed_stages_bound_ns(const lg_opts *o, int k);

#endif
