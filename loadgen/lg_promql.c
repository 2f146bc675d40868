/* lg_promql: the server's metrics from a Prometheus server's HTTP API (see
 * lg_promql.h). */
#include "lg_promql.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rb_buf.h"
#include "rb_json.h"

#define BUFFER_S 2.0 /* Inference Perf's PROMETHEUS_SCRAPE_BUFFER_SEC */
#define MAX_WIN 65

int lg_promql_query(char *buf, size_t cap, const char *m, char kind, const char *op,
                    double duration_s)
{
    double d = floor(duration_s + 0.5);
    if (!(d >= 1)) d = 1;
    int n = -1;
    if (kind == 'g' && !strcmp(op, "mean"))
        n = snprintf(buf, cap, "avg_over_time(%s[%.0fs])", m, d);
    else if (kind == 'g' && !strcmp(op, "max"))
        n = snprintf(buf, cap, "max_over_time(%s[%.0fs])", m, d);
    else if (kind == 'c' && !strcmp(op, "increase"))
        n = snprintf(buf, cap, "sum(increase(%s[%.0fs]))", m, d);
    else if (kind == 'c' && !strcmp(op, "rate"))
        n = snprintf(buf, cap, "sum(rate(%s[%.0fs]))", m, d);
    else if (kind == 'h' && !strcmp(op, "mean"))
        n = snprintf(buf, cap, "sum(rate(%s_sum[%.0fs])) / (sum(rate(%s_count[%.0fs])) > 0)", m, d,
                     m, d);
    else if (kind == 'h' && (!strcmp(op, "p50") || !strcmp(op, "p90") || !strcmp(op, "p99")))
        n = snprintf(buf, cap, "histogram_quantile(0.%s, sum(rate(%s_bucket[%.0fs])) by (le))",
                     op + 1, m, d);
    return n < 0 || (size_t)n >= cap ? -EINVAL : 0;
}

static int num_of(const cJSON *pair, double *v)
{
    const cJSON *s = cJSON_GetArrayItem(pair, 1);
    if (cJSON_GetArraySize(pair) != 2 || !cJSON_IsString(s)) return -1;
    char *e;
    *v = strtod(s->valuestring, &e);
    return *e || e == s->valuestring ? -1 : 0;
}

int lg_promql_value(const char *json, size_t len, double *v, char *err, size_t errlen)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    int rc = -EINVAL;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "status");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "resultType");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(data, "result");
    if (!root) {
        snprintf(err, errlen, "the answer is not JSON");
    } else if (!cJSON_IsString(st) || strcmp(st->valuestring, "success")) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
        snprintf(err, errlen, "status %.40s: %.160s", cJSON_IsString(st) ? st->valuestring : "?",
                 cJSON_IsString(e) ? e->valuestring : "no message");
    } else if (!cJSON_IsString(type)) {
        snprintf(err, errlen, "no data.resultType");
    } else if (!strcmp(type->valuestring, "scalar")) {
        rc = num_of(res, v)
                 ? (snprintf(err, errlen, "a scalar that is not [time, \"value\"]"), -EINVAL)
                 : 0;
    } else if (!strcmp(type->valuestring, "vector") && cJSON_IsArray(res)) {
        double sum = 0;
        int n = 0, bad = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, res)
        {
            double x;
            if (num_of(cJSON_GetObjectItemCaseSensitive(e, "value"), &x))
                bad = 1;
            else
                sum += x, n++;
        }
        if (bad)
            snprintf(err, errlen, "a series without [time, \"value\"]");
        else if (!n)
            rc = -ENOENT;
        else
            *v = sum, rc = 0;
    } else {
        snprintf(err, errlen, "resultType %.40s is not a vector or a scalar", type->valuestring);
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- the shell ---------------------------------------------------------- */

typedef struct qmetric {
    const char *name;
    char kind;
    const char *ops;
} qmetric;

static const qmetric METRICS[] = {
    {"vllm:num_requests_waiting", 'g', "mean max"},
    {"vllm:num_requests_running", 'g', "mean max"},
    {"vllm:kv_cache_usage_perc", 'g', "mean max"},
    {"vllm:prompt_tokens_total", 'c', "increase rate"},
    {"vllm:generation_tokens_total", 'c', "increase rate"},
    {"vllm:request_success_total", 'c', "increase rate"},
    {"vllm:num_preemptions_total", 'c', "increase"},
    {"vllm:time_to_first_token_seconds", 'h', "mean p50 p90 p99"},
    {"vllm:inter_token_latency_seconds", 'h', "mean p50 p99"},
    {"vllm:e2e_request_latency_seconds", 'h', "mean p50 p99"},
    {"sglang:num_queue_reqs", 'g', "mean max"},
    {"sglang:num_running_reqs", 'g', "mean max"},
    {"sglang:token_usage", 'g', "mean max"},
    {"sglang:prompt_tokens_total", 'c', "increase rate"},
    {"sglang:generation_tokens_total", 'c', "increase rate"},
    {"sglang:time_to_first_token_seconds", 'h', "mean p50 p90 p99"},
};

struct lg_promql {
    char *base; /* the origin, no trailing '/' */
    double interval_s;
    int ready;
    CURL *easy;
    rb_buf body;
    uint64_t queries, failed;
    char last_error[256];
    int n_win;
    cJSON *win[MAX_WIN]; /* the stages', then the run's */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ctx)
{
    return rb_buf_add(ctx, p, sz * n) ? 0 : sz * n;
}

/* GET base + path; 0 with the body, or -1 with last_error set. */
static int get(lg_promql *q, const char *path, long timeout_ms)
{
    char url[4096];
    if ((size_t)snprintf(url, sizeof url, "%s%s", q->base, path) >= sizeof url) {
        snprintf(q->last_error, sizeof q->last_error, "the query's URL is too long");
        return -1;
    }
    rb_buf_free(&q->body);
    q->body = (rb_buf)RB_BUF_INIT(4u << 20);
    curl_easy_setopt(q->easy, CURLOPT_URL, url);
    curl_easy_setopt(q->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(q->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(q->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, &q->body);
    curl_easy_setopt(q->easy, CURLOPT_PROXY, "");
    CURLcode rc = curl_easy_perform(q->easy);
    long code = 0;
    curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK) {
        snprintf(q->last_error, sizeof q->last_error, "%s", curl_easy_strerror(rc));
        return -1;
    }
    if (code != 200 && code != 400 && code != 422) { /* 400, 422: a JSON error */
        snprintf(q->last_error, sizeof q->last_error, "HTTP status %ld", code);
        return -1;
    }
    return 0;
}

lg_promql *lg_promql_new(const char *url, int64_t scrape_interval_ns)
{
    lg_promql *q = calloc(1, sizeof *q);
    if (!q || !(q->base = strdup(url)) || !(q->easy = curl_easy_init())) {
        if (q) free(q->base);
        free(q);
        return NULL;
    }
    size_t l = strlen(q->base);
    while (l && q->base[l - 1] == '/')
        q->base[--l] = '\0';
    q->interval_s = (double)scrape_interval_ns / 1e9;
    q->ready = get(q, "/-/ready", 2000) == 0;
    if (!q->ready)
        fprintf(stderr,
                "loadgen: Prometheus at %s is not ready (%s): its metrics will not be queried\n",
                q->base, q->last_error);
    return q;
}

void lg_promql_free(lg_promql *q)
{
    if (!q) return;
    for (int i = 0; i < q->n_win; i++)
        cJSON_Delete(q->win[i]);
    curl_easy_cleanup(q->easy);
    rb_buf_free(&q->body);
    free(q->base);
    free(q);
}

static double query(lg_promql *q, const char *promql, double eval_s)
{
    char *esc = curl_easy_escape(q->easy, promql, 0);
    char path[3000];
    snprintf(path, sizeof path, "/api/v1/query?query=%s&time=%.3f", esc ? esc : "", eval_s);
    curl_free(esc);
    q->queries++;
    double v = NAN;
    char err[200];
    if (get(q, path, 5000)) {
        q->failed++;
        return NAN;
    }
    int rc = lg_promql_value(q->body.data ? q->body.data : "", q->body.len, &v, err, sizeof err);
    if (rc == -ENOENT) return NAN; /* no data for it: not a failure */
    if (rc) {
        q->failed++;
        snprintf(q->last_error, sizeof q->last_error, "%.120s: %.120s", promql, err);
        return NAN;
    }
    return v;
}

static cJSON *window(lg_promql *q, double start_s, double end_s)
{
    double eval = end_s + q->interval_s + BUFFER_S, dur = eval - start_s;
    cJSON *w = cJSON_CreateObject();
    if (!w) return NULL;
    cJSON_AddNumberToObject(w, "eval_time_s", eval);
    cJSON_AddNumberToObject(w, "window_s", floor(dur + 0.5));
    cJSON *ms = cJSON_AddObjectToObject(w, "metrics");
    for (size_t i = 0; i < sizeof METRICS / sizeof METRICS[0]; i++) {
        const qmetric *m = &METRICS[i];
        cJSON *e = NULL;
        char ops[64], promql[1024];
        snprintf(ops, sizeof ops, "%s", m->ops);
        for (char *save, *op = strtok_r(ops, " ", &save); op; op = strtok_r(NULL, " ", &save)) {
            if (lg_promql_query(promql, sizeof promql, m->name, m->kind, op, dur)) continue;
            double v = query(q, promql, eval);
            if (isnan(v) && !e) continue;
            if (!e) e = cJSON_AddObjectToObject(ms, m->name);
            char key[24];
            int secs = m->kind == 'h';
            snprintf(key, sizeof key, "%s%s", op, secs ? "_ms" : "");
            rb_json_put_num(e, key, secs ? v * 1e3 : v);
        }
    }
    return w;
}

void lg_promql_collect(lg_promql *q, const double *start_s, const double *end_s, int n)
{
    if (!q || !q->ready || n < 1) return;
    if (n > MAX_WIN - 1) n = MAX_WIN - 1;
    /* Prometheus has scraped past the last stage's end by then */
    double until = end_s[n - 1] + q->interval_s + BUFFER_S;
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        double left = until - ((double)now.tv_sec + (double)now.tv_nsec / 1e9);
        if (left <= 0) break;
        if (left > 0.1) left = 0.1;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < n; i++)
        q->win[q->n_win++] = window(q, start_s[i], end_s[i]);
    q->win[q->n_win++] = window(q, start_s[0], end_s[n - 1]);
}

cJSON *lg_promql_stage_json(const lg_promql *q, int i)
{
    if (!q || i < 0 || i >= q->n_win - 1 || !q->win[i]) return NULL;
    return cJSON_Duplicate(q->win[i], 1);
}

cJSON *lg_promql_json(const lg_promql *q)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !q) return o;
    cJSON_AddStringToObject(o, "url", q->base);
    cJSON_AddNumberToObject(o, "scrape_interval_s", q->interval_s);
    cJSON_AddBoolToObject(o, "ready", q->ready);
    cJSON_AddNumberToObject(o, "queries", (double)q->queries);
    cJSON_AddNumberToObject(o, "failed_queries", (double)q->failed);
    if (q->last_error[0] && (q->failed || !q->ready))
        cJSON_AddStringToObject(o, "last_error", q->last_error);
    else
        cJSON_AddNullToObject(o, "last_error");
    const cJSON *run = q->n_win ? q->win[q->n_win - 1] : NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, run) cJSON_AddItemToObject(o, c->string, cJSON_Duplicate(c, 1));
    return o;
}
