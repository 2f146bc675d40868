/* lg_promql: the server's metrics per stage from a Prometheus server's HTTP
 * API, as Inference Perf gets them (its config's `metrics: {type:
 * prometheus, prometheus: {url, scrape_interval}}`; its code:
 * inference_perf/client/metricsclient/prometheus_client/base.py). After
 * the run the coordinator waits until the last stage's end + the scrape
 * interval + 2 s (Inference Perf's buffer), then for each stage evaluates,
 * at that stage's end + interval + 2 s and over the window from the stage's
 * start to then, Inference Perf's PromQL of each metric: a gauge's
 * avg_over_time and max_over_time, a counter's sum(increase) and sum(rate),
 * a histogram's mean (rate of _sum over rate of _count) and
 * histogram_quantile of its summed bucket rates; and the same over the
 * whole run. A query answered with several series is summed over them; one
 * with none is null. A Prometheus that does not answer its readiness probe
 * before the run is reported so, and then not waited for. Queries that
 * fail are counted (with the last message) and never fail the run.
 *
 * lg_promql_query and lg_promql_value are pure; the rest is the shell
 * (libcurl, blocking, each query bounded by 5 s), the coordinator's only. */
#ifndef LG_PROMQL_H
#define LG_PROMQL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* The PromQL of op ("mean", "max", "increase", "rate", "p50", "p90",
 * "p99") of metric, of kind 'g' (gauge), 'c' (counter) or 'h' (histogram),
 * over duration_s (rounded to whole seconds, at least 1). Returns 0, or
 * -EINVAL for an op the kind has not or a query that does not fit. */
int lg_promql_query(char *buf, size_t cap, const char *metric, char kind, const char *op,
                    double duration_s);

/* The number in an /api/v1/query answer (an instant vector: the sum of its
 * series' values; a scalar: its value). Returns 0 with *v, -ENOENT for an
 * empty vector (no data), or -EINVAL with err saying what is wrong
 * (status "error" with Prometheus's message, not JSON, another shape). */
int lg_promql_value(const char *json, size_t len, double *v, char *err, size_t errlen);

typedef struct lg_promql lg_promql;

/* The client of the Prometheus at url (its origin: /api/v1/query is
 * added), probed for readiness now (at most 2 s). NULL on out of memory. */
lg_promql *lg_promql_new(const char *url, int64_t scrape_interval_ns);
void lg_promql_free(lg_promql *q);
/* Sets the windows from the stages' wall-clock starts and ends (s since the
 * epoch; n at most 64), waits for the scrape that follows the last one,
 * and runs the queries. */
void lg_promql_collect(lg_promql *q, const double *start_s, const double *end_s, int n);
/* Stage i's {eval_time_s, window_s, metrics: {name: {op: value}}} (NULL:
 * none). */
cJSON *lg_promql_stage_json(const lg_promql *q, int i);
/* The run's top-level "prometheus": {url, scrape_interval_s, ready,
 * queries, failed_queries, last_error, eval_time_s, window_s, metrics}. */
cJSON *lg_promql_json(const lg_promql *q);

#endif
