/* lg_scrape: the coordinator's scraper of the server's /metrics
 * (--server-metrics). The workers never scrape: a scrape costs them
 * nothing.
 *
 * One libcurl easy handle on a multi handle, driven from the coordinator's
 * 20 ms watch (lg_scrape_tick): it starts a scrape every interval (none
 * while one is in flight), and each tick advances it with
 * curl_multi_perform, which never blocks, so a slow or dead /metrics never
 * delays a stage boundary or the watch. Each scrape is bounded by a
 * timeout (the interval, at least 1 s and at most 10 s) and its body by
 * 16 MiB. A scrape's time is its first response byte (the moment the
 * server rendered it). A baseline scrape before the run and a final one
 * after it (lg_scrape_once, each bounded by its timeout) bound the first
 * and the last stage.
 *
 * A scrape that fails (connect, an HTTP status other than 200, a timeout,
 * a body too large, text that is not the exposition format) is counted by
 * kind with its last message, and never fails the run. Not thread-safe;
 * the coordinator's alone. */
#ifndef LG_SCRAPE_H
#define LG_SCRAPE_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "lg_srvm.h"

typedef struct lg_scrape lg_scrape;

/* Scrapes url every interval_ns into m (which it then owns). NULL on out of
 * memory (m freed). */
lg_scrape *lg_scrape_new(const char *url, int64_t interval_ns, lg_srvm *m);

struct lg_opts;
/* The run's scraper from its options (--server-metrics, its interval,
 * --server-metric), with its baseline scrape taken; NULL when off, out of
 * memory, or when the coordinator is the worker (forked 0: --num-workers 0,
 * where a scrape would cost the worker; said on stderr when the URL was
 * given). */
lg_scrape *lg_scrape_for_run(const struct lg_opts *o, int forked);
/* The stages' windows (lg_srvm_windows). */
int lg_scrape_windows(lg_scrape *s, const int64_t *start_ns, const int64_t *end_ns, int n);
void lg_scrape_free(lg_scrape *s);
/* Starts a scrape when one is due and advances the one in flight; never
 * blocks. */
void lg_scrape_tick(lg_scrape *s, int64_t now_ns);
/* One scrape now (the one in flight first, if any), waiting at most its
 * timeout. */
void lg_scrape_once(lg_scrape *s);
/* The final scrape, after the run: every window still open ends at it. */
void lg_scrape_final(lg_scrape *s);
/* The per-stage figures (after lg_scrape_once's final scrape). */
lg_srvm *lg_scrape_metrics(lg_scrape *s);
/* The run's top-level "server_metrics": {url, interval_s, scrapes,
 * failed_scrapes, failures_by_kind, last_error, metrics}. */
cJSON *lg_scrape_json(const lg_scrape *s, const double *pct, int n_pct);
/* "42 scrapes of URL, 0 failed" for the summary. */
void lg_scrape_line(const lg_scrape *s, char *buf, size_t cap);

#endif
