/* lg_report: turns merged results into the result JSON (vLLM's bench keys
 * plus ours) and the summary table. Pure: builds a cJSON tree and writes
 * text to a FILE the caller owns. */
#ifndef LG_REPORT_H
#define LG_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "lg_bias.h"
#include "lg_cli.h"
#include "lg_knee.h"
#include "lg_stats.h"
#include "mdl_verdict.h"
#include "rb_host.h"

typedef struct lg_worker_bias {
    int worker;
    int lost; /* crashed or killed: its results are left out */
    int signal;
    double rho;
    double callbacks, callback_rate_per_s;
    double mean_service_us, second_moment_us2;
    double events, event_rate_per_s;
    double predicted_wq_us;
    double preemptions; /* involuntary context switches in the window */
    /* its receive clock and capture interface (the slot's; "": not known),
     * and the share of its tokens timed from a captured segment (NAN: none) */
    const char *receive_clock, *capture_interface;
    const char *receive_clock_fallback; /* why not wire ("": it was, or not asked) */
    const char *cpus;                   /* the CPUs it may run on (the slot's) */
    /* --cpu-latency-us (the slot's): 1 held, 0 refused, -1 not asked; the
     * host's limit it read (us; -1: unread); its description */
    int cpu_latency_held, cpu_latency_us;
    const char *cpu_latency;
    double wire_share;
} lg_worker_bias;

typedef struct lg_stage_view {
    double rate_per_s;   /* requested */
    int64_t start_ns;    /* absolute intended start */
    int64_t duration_ns; /* 0: bounded by count */
    const lg_stage_stats *stats;
} lg_stage_view;

/* What --certificate's check compared, for the report's certificate_check. */
typedef struct lg_cert_summary {
    int checked, ok, forced, workers, certified_workers;
    double planned_rate;        /* requests/s, the highest stage's (NAN: closed loop, trace) */
    double output_tokens;       /* per request (NAN: not known) */
    double predicted_rho;       /* per worker (NAN: compared by rate, version 1) */
    double safe_rho;            /* the entry's (NAN: none) */
    double certified_max_rate;  /* this plan's rate at safe_rho (NAN: not known) */
    double busy_per_request_us; /* the model's, per worker, its k scale in (NAN: none) */
} lg_cert_summary;

typedef struct lg_report {
    const lg_opts *o;
    const char *load_mode; /* "open", "closed", "open-capped" */
    int num_workers;
    double request_rate; /* requested (INFINITY allowed; NAN: stages differ) */
    int64_t t0_ns;
    const lg_stage_stats *total;
    int64_t total_duration_ns; /* scheduled send time of all stages (0: bounded by count) */
    const lg_stage_view *stages;
    int n_stages;
    int interrupted;
    const struct lg_warmup_result *warmup; /* --num-warmups (NULL: none sent) */
    int saturated_stage;                   /* -1: none */
    const lg_worker_bias *workers;
    int n_workers;
    int stamps_seen;
    double achieved_ratio; /* dispatch span vs intended span (NAN: closed loop) */
    double predicted_wq_us, max_rho;
    mdl_verdict verdict;             /* the worst stage's */
    int verdict_stage;               /* which stage decided it (-1: a single stage) */
    const lg_bias_stage *stage_bias; /* [n_stages] (NULL: not judged) */
    int n_cut; /* the last n_cut stages were cut short by the sweep's stop: no verdict */
    const lg_bias_stage *run_bias;           /* the whole run (NULL: not judged) */
    int64_t clock_spread_ns, clock_width_ns; /* the receive clock's map, worst worker */
    uint64_t clock_steps, rx_enable_failed;
    uint64_t ticks, ticks_overrun;    /* --batch-tick, over the workers */
    int64_t sess_waited, sess_capped; /* multi-turn (lg_session.h), over the workers */
    rb_host host;
    char certificate_note[512];
    lg_cert_summary cert;       /* what --certificate's check compared (checked 0: none) */
    const char *lost_note;      /* "worker 1 killed by signal 9; ..." or NULL */
    size_t prompt_pool_size;    /* distinct prompts (0: a trace, no pool) */
    int prompt_per_request;     /* no pool: each prompt made when sent, none repeated */
    const lg_knee_verdict *sat; /* per stage (NULL: not judged, closed loop or trace) */
    lg_knee knee;
} lg_report;

/* The metric keys of one block (vLLM's plus ours) added to obj. start_ns is
 * the window's start; window_min_ns the scheduled length of the window. */
void lg_report_metrics(cJSON *obj, const lg_stage_stats *s, const lg_opts *o, int64_t start_ns,
                       int64_t window_min_ns, double request_rate);
cJSON *lg_report_json(const lg_report *r);
/* Requests that reused a prompt of the pool (request i uses prompt i mod n). */
uint64_t lg_report_repeats(const lg_report *r);
void lg_report_summary(const lg_report *r, FILE *out);
/* vLLM's percentile key word: 99 -> "99", 99.9 -> "99.9". */
void lg_report_pword(double p, char *buf, size_t cap);

#endif
