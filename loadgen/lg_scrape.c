/* lg_scrape: the coordinator's scraper of the server's /metrics (see
 * lg_scrape.h). */
#include "lg_scrape.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_tls.h"
#include "rb_buf.h"
#include "rb_clock.h"
#include "rb_json.h"

#define BODY_MAX (16u << 20)

enum { F_CONNECT, F_TIMEOUT, F_HTTP, F_TOO_LARGE, F_PARSE, F_N };
static const char *const FAIL_NAMES[F_N] = {"connect", "timeout", "http", "too_large", "parse"};

struct lg_scrape {
    char *url;
    int64_t interval_ns, timeout_ns;
    lg_srvm *m;
    CURLM *multi;
    CURL *easy;
    rb_buf body;
    int busy;
    int64_t started_ns, next_ns;
    uint64_t scrapes, ok, failed[F_N];
    char last_error[256];
    lg_tls tls; /* the run's TLS options (lg_tls.h; its strings not owned) */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ctx)
{
    lg_scrape *s = ctx;
    return rb_buf_add(&s->body, p, sz * n) ? 0 : sz * n; /* past the cap: a write error */
}

lg_scrape *lg_scrape_new(const char *url, int64_t interval_ns, lg_srvm *m)
{
    lg_scrape *s = calloc(1, sizeof *s);
    if (!s || !(s->url = strdup(url)) || !(s->multi = curl_multi_init()) ||
        !(s->easy = curl_easy_init())) {
        if (s) {
            free(s->url);
            if (s->multi) curl_multi_cleanup(s->multi);
            free(s);
        }
        lg_srvm_free(m);
        return NULL;
    }
    s->m = m;
    s->interval_ns = interval_ns;
    s->timeout_ns = interval_ns < 1000000000LL    ? 1000000000LL
                    : interval_ns > 10000000000LL ? 10000000000LL
                                                  : interval_ns;
    s->body = (rb_buf)RB_BUF_INIT(BODY_MAX);
    return s;
}

void lg_scrape_free(lg_scrape *s)
{
    if (!s) return;
    if (s->busy) curl_multi_remove_handle(s->multi, s->easy);
    curl_easy_cleanup(s->easy);
    curl_multi_cleanup(s->multi);
    rb_buf_free(&s->body);
    lg_srvm_free(s->m);
    free(s->url);
    free(s);
}

static void start(lg_scrape *s, int64_t now)
{
    CURL *e = s->easy;
    rb_buf_free(&s->body);
    s->body = (rb_buf)RB_BUF_INIT(BODY_MAX);
    curl_easy_setopt(e, CURLOPT_URL, s->url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(s->timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(s->timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    lg_tls_apply(e, &s->tls);
    if (curl_multi_add_handle(s->multi, e) != CURLM_OK) {
        s->failed[F_CONNECT]++;
        s->scrapes++;
        snprintf(s->last_error, sizeof s->last_error, "cannot start a transfer");
        return;
    }
    s->busy = 1;
    s->started_ns = now;
}

static void fail(lg_scrape *s, int kind, const char *fmt, const char *what)
{
    s->failed[kind]++;
    snprintf(s->last_error, sizeof s->last_error, fmt, what);
}

/* The transfer ended with rc: its body parsed and added, or the failure
 * counted. */
static void done(lg_scrape *s, CURLcode rc)
{
    curl_multi_remove_handle(s->multi, s->easy);
    s->busy = 0;
    s->scrapes++;
    long code = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    if (rc == CURLE_OPERATION_TIMEDOUT) return fail(s, F_TIMEOUT, "%s", curl_easy_strerror(rc));
    if (rc == CURLE_WRITE_ERROR && s->body.err == -EMSGSIZE)
        return fail(s, F_TOO_LARGE, "%s", "the body passed 16 MiB");
    if (rc != CURLE_OK) return fail(s, F_CONNECT, "%s", curl_easy_strerror(rc));
    if (code != 200) {
        char c[32];
        snprintf(c, sizeof c, "%ld", code);
        return fail(s, F_HTTP, "HTTP status %s", c);
    }
    lg_prom p;
    char err[200];
    int prc = lg_prom_parse(s->body.data ? s->body.data : "", s->body.len, &p, err, sizeof err);
    if (prc) {
        fail(s, F_PARSE, "%s", prc == -ENOMEM ? "out of memory" : err);
        lg_prom_free(&p);
        return;
    }
    curl_off_t ttfb_us = 0;
    curl_easy_getinfo(s->easy, CURLINFO_STARTTRANSFER_TIME_T, &ttfb_us);
    if (lg_srvm_add(s->m, s->started_ns + (int64_t)ttfb_us * 1000, &p))
        fail(s, F_PARSE, "%s", "out of memory");
    else
        s->ok++;
    lg_prom_free(&p);
}

static void advance(lg_scrape *s)
{
    int running = 0;
    curl_multi_perform(s->multi, &running);
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(s->multi, &left)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == s->easy) done(s, msg->data.result);
}

void lg_scrape_tick(lg_scrape *s, int64_t now_ns)
{
    if (!s) return;
    if (!s->busy && now_ns >= s->next_ns) {
        s->next_ns = s->next_ns && now_ns - s->next_ns < s->interval_ns
                         ? s->next_ns + s->interval_ns
                         : now_ns + s->interval_ns;
        start(s, now_ns);
    }
    if (s->busy) advance(s);
}

/* Waits for the scrape in flight, at most its timeout (and a margin for
 * curl's last poll). */
static void wait_done(lg_scrape *s)
{
    int64_t until = s->started_ns + s->timeout_ns + 200000000LL;
    while (s->busy && rb_now_ns() < until) {
        advance(s);
        if (s->busy) curl_multi_poll(s->multi, NULL, 0, 20, NULL);
    }
    if (!s->busy) return;
    curl_multi_remove_handle(s->multi, s->easy);
    s->busy = 0;
    s->scrapes++;
    fail(s, F_TIMEOUT, "%s", "no answer within the scrape's timeout");
}

void lg_scrape_once(lg_scrape *s)
{
    if (!s) return;
    if (s->busy) wait_done(s);
    start(s, rb_now_ns());
    if (s->busy) wait_done(s);
}

void lg_scrape_final(lg_scrape *s)
{
    if (!s) return;
    lg_scrape_once(s);
    lg_srvm_finish(s->m);
}

lg_scrape *lg_scrape_for_run(const lg_opts *o, int forked)
{
    char url[600];
    lg_server_metrics_url(o, url, sizeof url);
    if (!url[0]) return NULL;
    if (!forked) {
        if (o->server_metrics[0])
            fprintf(stderr, "loadgen: --num-workers 0: the server's metrics are not scraped (the "
                            "coordinator is the worker, and a scrape would cost it)\n");
        return NULL;
    }
    lg_srvm *m = lg_srvm_new(o->server_metric, o->n_server_metric);
    lg_scrape *s = m ? lg_scrape_new(url, o->server_metrics_interval_ns, m) : NULL;
    if (!s) {
        fprintf(stderr, "loadgen: out of memory: the server's metrics are not scraped\n");
        return NULL;
    }
    s->tls = LG_TLS_OF(o);
    lg_scrape_once(s); /* the baseline */
    return s;
}

int lg_scrape_windows(lg_scrape *s, const int64_t *start_ns, const int64_t *end_ns, int n)
{
    return s ? lg_srvm_windows(s->m, start_ns, end_ns, n) : 0;
}

lg_srvm *lg_scrape_metrics(lg_scrape *s)
{
    return s ? s->m : NULL;
}

cJSON *lg_scrape_json(const lg_scrape *s, const double *pct, int n_pct)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !s) return o;
    cJSON_AddStringToObject(o, "url", s->url);
    cJSON_AddNumberToObject(o, "interval_s", (double)s->interval_ns / 1e9);
    cJSON_AddNumberToObject(o, "timeout_s", (double)s->timeout_ns / 1e9);
    cJSON_AddNumberToObject(o, "scrapes", (double)s->scrapes);
    uint64_t failed = 0;
    cJSON *by = cJSON_AddObjectToObject(o, "failures_by_kind");
    for (int k = 0; k < F_N; k++) {
        failed += s->failed[k];
        cJSON_AddNumberToObject(by, FAIL_NAMES[k], (double)s->failed[k]);
    }
    cJSON_AddNumberToObject(o, "failed_scrapes", (double)failed);
    if (s->last_error[0])
        cJSON_AddStringToObject(o, "last_error", s->last_error);
    else
        cJSON_AddNullToObject(o, "last_error");
    cJSON *m = lg_srvm_json(s->m, lg_srvm_run_window(s->m), pct, n_pct);
    if (m) cJSON_AddItemToObject(o, "metrics", m);
    return o;
}

void lg_scrape_line(const lg_scrape *s, char *buf, size_t cap)
{
    uint64_t failed = 0;
    for (int k = 0; k < F_N; k++)
        failed += s->failed[k];
    snprintf(buf, cap, "%llu scrapes of %s, %llu failed%s%s", (unsigned long long)s->scrapes,
             s->url, (unsigned long long)failed, failed ? ": " : "", failed ? s->last_error : "");
}
