/* lg_srvm: the server's own metrics, per stage, from a series of scrapes of
 * its Prometheus /metrics (parsed by lg_prom.h). Pure: no I/O, no clock of
 * its own (the caller gives each scrape's time); single-threaded.
 *
 * The metrics: vLLM's and SGLang's that matter at high load (the table in
 * lg_srvm.c: running and waiting requests, KV-cache usage, preemptions,
 * prefix-cache queries and hits, prompt and generation tokens, request
 * success, the TTFT, ITL, E2E and queue-time histograms), and up to
 * LG_SRVM_MAX_EXTRA more by name (--server-metric), whose kind the first
 * scrape that has them says (TYPE counter: a counter, histogram: a
 * histogram, anything else: a gauge). Each is the sum over its label sets.
 *
 * A window is a stage: [start, end) on the run's clock, the last one ending
 * at the final scrape. Per window, for a gauge the scrapes inside it give
 * min, max, mean and their count, and the value at its start; for a
 * counter and a histogram, the difference between the values at its end
 * and at its start. A boundary's value is the last scrape at or before it
 * (step interpolation: scrapes are some interval apart), so the stages'
 * deltas add up to the run's. A counter that fell
 * (a server restart) counts from zero again (`reset`). One more window, the
 * run's, spans every stage. */
#ifndef LG_SRVM_H
#define LG_SRVM_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "lg_prom.h"

#define LG_SRVM_MAX_EXTRA 16

typedef enum { LG_SRVM_GAUGE, LG_SRVM_COUNTER, LG_SRVM_HIST, LG_SRVM_UNKNOWN } lg_srvm_kind;

typedef struct lg_srvm lg_srvm;

/* The tracked metrics: the known ones and extra[0..n_extra) (names, not
 * owned: copied). No windows yet: scrapes before lg_srvm_windows only set
 * the value the first window starts from (a baseline before the run). NULL
 * on out of memory or a bad count. */
lg_srvm *lg_srvm_new(const char *const *extra, int n_extra);
/* n_win windows (the stages): start_ns[i] and end_ns[i] (INT64_MAX: until
 * the final scrape), and a window for the whole run after them, from
 * start_ns[0] to the end. Once. Returns 0, -EINVAL (called again, or
 * n_win < 1) or -ENOMEM. */
int lg_srvm_windows(lg_srvm *m, const int64_t *start_ns, const int64_t *end_ns, int n_win);
void lg_srvm_free(lg_srvm *m);

/* One scrape, at t_ns (non-decreasing from call to call). Returns 0 or
 * -ENOMEM. */
int lg_srvm_add(lg_srvm *m, int64_t t_ns, const lg_prom *scrape);
/* After the last scrape: the windows still open end at it. */
void lg_srvm_finish(lg_srvm *m);

/* Scrapes taken within window w (w = n_win: the run's). */
int lg_srvm_scrapes(const lg_srvm *m, int w);
/* The run's window: n_win. */
int lg_srvm_run_window(const lg_srvm *m);

/* The server's waiting requests in window w (vLLM's num_requests_waiting,
 * else SGLang's num_queue_reqs): the value at its start and its max.
 * Returns 0, or -ENOENT when the server gave neither. */
int lg_srvm_waiting(const lg_srvm *m, int w, double *start, double *max);

/* Window w's metrics as a JSON object {name: {type, ...}} (only the metrics
 * the server gave); histograms' percentiles are pct[0..n_pct) ("p50", in
 * ms with the _ms suffix for a histogram of seconds). NULL on out of
 * memory. */
cJSON *lg_srvm_json(const lg_srvm *m, int w, const double *pct, int n_pct);

/* The evidence of a knee (lg_knee.h's cause: 1 client, 2 server) from the
 * server's waiting requests in window w: "by the server (waiting requests
 * 0 -> 812)", "by the client (the server's waiting requests 0 -> 0)", and
 * so on; without server metrics "by the client (no server metrics)". */
void lg_srvm_evidence(const lg_srvm *m, int w, int cause, char *buf, size_t cap);

#endif
