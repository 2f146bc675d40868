/* lg_probe: Inference Perf's sweep, as its load generator defines it
 * (inference_perf/loadgen/load_generator.py, `preprocess`, read at
 * 7de5ef2). A saturation probe sends --sweep-probe-requests at a constant
 * rate over 5 s; the coordinator samples the requests in flight every 0.5 s
 * (lg_probe_sample); the burn-down rates sampled before the probe's timeout
 * give, at --sweep-probe-percentile, the saturation rate; the sweep's
 * stages are then placed from 1 request/s up to it (lg_sweep.h) and run as
 * any sweep, each judged by the knee and the client's verdict. The probe is
 * a run of its own (its report, with --save-result, beside the sweep's as
 * NAME-probe.json), and the sweep's report carries what it found
 * ("sweep_probe"). */
#ifndef LG_PROBE_H
#define LG_PROBE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "lg_cli.h"

typedef struct lg_probe {
    /* the sampler, fed by the probe run's coordinator */
    int64_t t0_ns;      /* the probe's start instant (0: not yet) */
    int64_t timeout_ns; /* samples from t0 + timeout on do not count */
    int64_t next_ns;    /* the next sample's time */
    int n, cap;
    int64_t *t_ns, *in_flight;
    uint64_t dispatched, done, failed; /* the probe's counts at its last sample */
    /* what it found */
    int64_t requests;
    double rate_per_s, percentile, saturation_rate;
    int64_t window_ns;
    int n_rates;
    double *rates; /* the burn-down rates, sorted */
    int n_stages;
    double stage_rates[LG_MAX_STAGES];
    int64_t stage_duration_ns;
    lg_sweep_kind kind;
    char result_file[1600]; /* the probe's report ("" without --save-result) */
} lg_probe;

/* The coordinator's tick during the probe: a sample of in_flight at now
 * when the last one is 0.5 s old, from the start instant t0_ns on. */
void lg_probe_sample(lg_probe *p, int64_t now_ns, int64_t t0_ns, uint64_t dispatched, uint64_t done,
                     uint64_t failed);

/* The probe, then the sweep it places (o->sweep_probe): the exit code of
 * the probe when it failed or was interrupted (no sweep then), 1 when it
 * sampled too few falls to place a sweep, else the sweep's. */
int lg_probe_run(lg_opts *o);

/* The report's "sweep_probe": what the probe sent and found (null for a
 * run without one). */
void lg_probe_json(cJSON *j, const lg_probe *p);

#endif
