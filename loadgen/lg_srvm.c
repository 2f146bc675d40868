/* lg_srvm: the server's metrics per stage (see lg_srvm.h). */
#include "lg_srvm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_report.h"
#include "rb_json.h"

typedef struct known {
    const char *name;
    lg_srvm_kind kind;
} known;

/* vLLM's names (V1, and V0's where dashboards still read them), then
 * SGLang's. */
static const known KNOWN[] = {
    {"vllm:num_requests_running", LG_SRVM_GAUGE},
    {"vllm:num_requests_waiting", LG_SRVM_GAUGE},
    {"vllm:kv_cache_usage_perc", LG_SRVM_GAUGE},
    {"vllm:gpu_cache_usage_perc", LG_SRVM_GAUGE},
    {"vllm:num_preemptions_total", LG_SRVM_COUNTER},
    {"vllm:prefix_cache_queries_total", LG_SRVM_COUNTER},
    {"vllm:prefix_cache_hits_total", LG_SRVM_COUNTER},
    {"vllm:gpu_prefix_cache_queries_total", LG_SRVM_COUNTER},
    {"vllm:gpu_prefix_cache_hits_total", LG_SRVM_COUNTER},
    {"vllm:prompt_tokens_total", LG_SRVM_COUNTER},
    {"vllm:generation_tokens_total", LG_SRVM_COUNTER},
    {"vllm:request_success_total", LG_SRVM_COUNTER},
    {"vllm:time_to_first_token_seconds", LG_SRVM_HIST},
    {"vllm:inter_token_latency_seconds", LG_SRVM_HIST},
    {"vllm:time_per_output_token_seconds", LG_SRVM_HIST},
    {"vllm:e2e_request_latency_seconds", LG_SRVM_HIST},
    {"vllm:request_queue_time_seconds", LG_SRVM_HIST},
    {"sglang:num_running_reqs", LG_SRVM_GAUGE},
    {"sglang:num_queue_reqs", LG_SRVM_GAUGE},
    {"sglang:token_usage", LG_SRVM_GAUGE},
    {"sglang:cache_hit_rate", LG_SRVM_GAUGE},
    {"sglang:gen_throughput", LG_SRVM_GAUGE},
    {"sglang:prompt_tokens_total", LG_SRVM_COUNTER},
    {"sglang:generation_tokens_total", LG_SRVM_COUNTER},
    {"sglang:cached_tokens_total", LG_SRVM_COUNTER},
    {"sglang:num_requests_total", LG_SRVM_COUNTER},
    {"sglang:time_to_first_token_seconds", LG_SRVM_HIST},
    {"sglang:inter_token_latency_seconds", LG_SRVM_HIST},
    {"sglang:time_per_output_token_seconds", LG_SRVM_HIST},
    {"sglang:e2e_request_latency_seconds", LG_SRVM_HIST},
};
#define N_KNOWN ((int)(sizeof KNOWN / sizeof KNOWN[0]))
static const char *const WAITING[] = {"vllm:num_requests_waiting", "sglang:num_queue_reqs"};

typedef struct val {
    int has;
    double v;        /* a gauge's or a counter's value */
    lg_prom_hist *h; /* a histogram's (NULL unless the metric may be one) */
} val;

typedef struct snap {
    int set;
    int64_t t_ns;
    val *v; /* [n] */
} snap;

typedef struct gstat {
    int n;
    double min, max, sum;
} gstat;

typedef struct win {
    int64_t start, end;
    snap base, last; /* at its start; at its end */
    gstat *g;        /* [n] */
    int scrapes;
} win;

struct lg_srvm {
    int n; /* metrics */
    char **name;
    lg_srvm_kind *kind;
    snap prev;
    int n_win; /* the stages, then the run's */
    win *w;
    int finished;
};

static int snap_init(snap *s, const lg_srvm *m)
{
    s->set = 0;
    s->v = calloc((size_t)m->n, sizeof *s->v);
    if (!s->v) return -ENOMEM;
    for (int i = 0; i < m->n; i++)
        if (m->kind[i] == LG_SRVM_HIST || m->kind[i] == LG_SRVM_UNKNOWN) {
            s->v[i].h = calloc(1, sizeof *s->v[i].h);
            if (!s->v[i].h) return -ENOMEM;
        }
    return 0;
}

static void snap_free(snap *s, int n)
{
    for (int i = 0; s->v && i < n; i++)
        free(s->v[i].h);
    free(s->v);
    s->v = NULL;
}

static void snap_copy(snap *dst, const snap *src, int n)
{
    dst->set = src->set;
    dst->t_ns = src->t_ns;
    for (int i = 0; i < n; i++) {
        dst->v[i].has = src->v[i].has;
        dst->v[i].v = src->v[i].v;
        if (dst->v[i].h && src->v[i].h) *dst->v[i].h = *src->v[i].h;
    }
}

void lg_srvm_free(lg_srvm *m)
{
    if (!m) return;
    for (int i = 0; i < m->n_win && m->w; i++) {
        snap_free(&m->w[i].base, m->n);
        snap_free(&m->w[i].last, m->n);
        free(m->w[i].g);
    }
    snap_free(&m->prev, m->n);
    for (int i = 0; i < m->n && m->name; i++)
        free(m->name[i]);
    free(m->name);
    free(m->kind);
    free(m->w);
    free(m);
}

lg_srvm *lg_srvm_new(const char *const *extra, int n_extra)
{
    if (n_extra < 0 || n_extra > LG_SRVM_MAX_EXTRA) return NULL;
    lg_srvm *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    int cap = N_KNOWN + n_extra;
    m->name = calloc((size_t)cap, sizeof *m->name);
    m->kind = calloc((size_t)cap, sizeof *m->kind);
    if (!m->name || !m->kind) goto oom;
    for (int i = 0; i < N_KNOWN; i++) {
        if (!(m->name[m->n] = strdup(KNOWN[i].name))) goto oom;
        m->kind[m->n++] = KNOWN[i].kind;
    }
    for (int i = 0; i < n_extra; i++) {
        int dup = 0;
        for (int j = 0; j < m->n; j++)
            dup |= !strcmp(m->name[j], extra[i]);
        if (dup) continue;
        if (!(m->name[m->n] = strdup(extra[i]))) goto oom;
        m->kind[m->n++] = LG_SRVM_UNKNOWN;
    }
    if (snap_init(&m->prev, m)) goto oom;
    return m;
oom:
    lg_srvm_free(m);
    return NULL;
}

int lg_srvm_windows(lg_srvm *m, const int64_t *start_ns, const int64_t *end_ns, int n_win)
{
    if (m->w || n_win < 1) return -EINVAL;
    m->w = calloc((size_t)n_win + 1, sizeof *m->w);
    if (!m->w) return -ENOMEM;
    m->n_win = n_win + 1;
    for (int i = 0; i < m->n_win; i++) {
        win *w = &m->w[i];
        w->start = i < n_win ? start_ns[i] : start_ns[0];
        w->end = i < n_win ? end_ns[i] : INT64_MAX;
        w->g = calloc((size_t)m->n, sizeof *w->g);
        if (!w->g || snap_init(&w->base, m) || snap_init(&w->last, m)) return -ENOMEM;
    }
    return 0;
}

/* A metric's kind, decided by the first scrape that has it. */
static lg_srvm_kind kind_of(const lg_prom *p, const char *name)
{
    lg_prom_type t = lg_prom_type_of(p, name);
    size_t l = strlen(name);
    if (t == LG_PROM_UNTYPED && l > 6 && !strcmp(name + l - 6, "_total")) {
        char fam[512];
        snprintf(fam, sizeof fam, "%.*s", (int)(l - 6), name);
        t = lg_prom_type_of(p, fam);
    }
    return t == LG_PROM_HISTOGRAM ? LG_SRVM_HIST
           : t == LG_PROM_COUNTER ? LG_SRVM_COUNTER
                                  : LG_SRVM_GAUGE;
}

static void extract(lg_srvm *m, const lg_prom *p, snap *s)
{
    for (int i = 0; i < m->n; i++) {
        val *v = &s->v[i];
        v->has = 0;
        if (m->kind[i] == LG_SRVM_UNKNOWN) {
            lg_prom_hist probe;
            int is_hist = lg_prom_type_of(p, m->name[i]) == LG_PROM_HISTOGRAM ||
                          lg_prom_hist_of(p, m->name[i], &probe) == 0;
            if (!is_hist && isnan(lg_prom_sum(p, m->name[i]))) continue; /* not yet seen */
            m->kind[i] = is_hist ? LG_SRVM_HIST : kind_of(p, m->name[i]);
        }
        if (m->kind[i] == LG_SRVM_HIST) {
            v->has = v->h && lg_prom_hist_of(p, m->name[i], v->h) == 0;
        } else {
            v->v = lg_prom_sum(p, m->name[i]);
            v->has = !isnan(v->v);
        }
    }
}

int lg_srvm_add(lg_srvm *m, int64_t t_ns, const lg_prom *scrape)
{
    snap cur;
    if (snap_init(&cur, m)) {
        snap_free(&cur, m->n);
        return -ENOMEM;
    }
    extract(m, scrape, &cur);
    cur.set = 1;
    cur.t_ns = t_ns;
    for (int i = 0; i < m->n_win; i++) {
        win *w = &m->w[i];
        if (!w->base.set && t_ns > w->start)
            snap_copy(&w->base, m->prev.set ? &m->prev : &cur, m->n);
        if (!w->last.set && t_ns > w->end) snap_copy(&w->last, m->prev.set ? &m->prev : &cur, m->n);
        if (t_ns < w->start || t_ns >= w->end) continue;
        w->scrapes++;
        for (int k = 0; k < m->n; k++) {
            if (m->kind[k] != LG_SRVM_GAUGE || !cur.v[k].has) continue;
            gstat *g = &w->g[k];
            double x = cur.v[k].v;
            if (!g->n || x < g->min) g->min = x;
            if (!g->n || x > g->max) g->max = x;
            g->sum += x;
            g->n++;
        }
    }
    snap_copy(&m->prev, &cur, m->n);
    snap_free(&cur, m->n);
    return 0;
}

void lg_srvm_finish(lg_srvm *m)
{
    if (!m || m->finished) return;
    m->finished = 1;
    for (int i = 0; i < m->n_win && m->prev.set; i++) {
        win *w = &m->w[i];
        if (!w->base.set) snap_copy(&w->base, &m->prev, m->n);
        if (!w->last.set) snap_copy(&w->last, &m->prev, m->n);
    }
}

int lg_srvm_scrapes(const lg_srvm *m, int w)
{
    return m && w >= 0 && w < m->n_win ? m->w[w].scrapes : 0;
}

int lg_srvm_run_window(const lg_srvm *m)
{
    return m ? m->n_win - 1 : 0;
}

static int index_of(const lg_srvm *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->name[i], name)) return i;
    return -1;
}

int lg_srvm_waiting(const lg_srvm *m, int w, double *start, double *max)
{
    if (!m || w < 0 || w >= m->n_win) return -ENOENT;
    const win *x = &m->w[w];
    for (size_t k = 0; k < sizeof WAITING / sizeof WAITING[0]; k++) {
        int i = index_of(m, WAITING[k]);
        if (i < 0 || !x->g[i].n) continue;
        *start = x->base.set && x->base.v[i].has ? x->base.v[i].v : x->g[i].min;
        *max = x->g[i].max;
        return 0;
    }
    return -ENOENT;
}

static void hist_json(cJSON *o, const char *name, const lg_prom_hist *a, const lg_prom_hist *b,
                      const double *pct, int n_pct)
{
    lg_prom_hist d;
    int reset = lg_prom_hist_delta(a, b, &d);
    size_t l = strlen(name);
    int secs = l > 8 && !strcmp(name + l - 8, "_seconds");
    double scale = secs ? 1000.0 : 1.0;
    const char *unit = secs ? "_ms" : "";
    char key[48];
    rb_json_put_num(o, "count", d.count);
    snprintf(key, sizeof key, "mean%s", unit);
    rb_json_put_num(o, key, d.count > 0 ? d.sum / d.count * scale : NAN);
    for (int i = 0; i < n_pct; i++) {
        char w[24];
        lg_report_pword(pct[i], w, sizeof w);
        snprintf(key, sizeof key, "p%s%s", w, unit);
        rb_json_put_num(o, key, lg_prom_quantile(&d, pct[i] / 100.0) * scale);
    }
    if (reset) cJSON_AddBoolToObject(o, "reset", 1);
}

cJSON *lg_srvm_json(const lg_srvm *m, int w, const double *pct, int n_pct)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !m || w < 0 || w >= m->n_win) return o;
    const win *x = &m->w[w];
    for (int i = 0; i < m->n; i++) {
        const val *a = &x->base.v[i], *b = &x->last.v[i];
        const gstat *g = &x->g[i];
        cJSON *e = NULL;
        switch (m->kind[i]) {
        case LG_SRVM_GAUGE:
            if (!g->n && !b->has) break;
            e = cJSON_AddObjectToObject(o, m->name[i]);
            cJSON_AddStringToObject(e, "type", "gauge");
            rb_json_put_num(e, "start", a->has ? a->v : NAN);
            rb_json_put_num(e, "min", g->n ? g->min : NAN);
            rb_json_put_num(e, "max", g->n ? g->max : NAN);
            rb_json_put_num(e, "mean", g->n ? g->sum / g->n : NAN);
            rb_json_put_num(e, "end", b->has ? b->v : NAN);
            cJSON_AddNumberToObject(e, "samples", g->n);
            break;
        case LG_SRVM_COUNTER:
            if (!b->has) break;
            e = cJSON_AddObjectToObject(o, m->name[i]);
            cJSON_AddStringToObject(e, "type", "counter");
            {
                double base = a->has ? a->v : 0, d = b->v - base;
                int reset = d < 0;
                rb_json_put_num(e, "start", a->has ? a->v : NAN);
                rb_json_put_num(e, "end", b->v);
                rb_json_put_num(e, "delta", reset ? b->v : d);
                if (reset) cJSON_AddBoolToObject(e, "reset", 1);
            }
            break;
        case LG_SRVM_HIST:
            if (!b->has || !b->h) break;
            e = cJSON_AddObjectToObject(o, m->name[i]);
            cJSON_AddStringToObject(e, "type", "histogram");
            {
                lg_prom_hist zero = {.n = 0, .sum = NAN, .count = NAN};
                hist_json(e, m->name[i], a->has && a->h ? a->h : &zero, b->h, pct, n_pct);
            }
            break;
        default:
            break;
        }
    }
    return o;
}

void lg_srvm_evidence(const lg_srvm *m, int w, int cause, char *buf, size_t cap)
{
    const char *by = cause == 2 ? "server" : "client";
    double start, max;
    if (lg_srvm_waiting(m, w, &start, &max)) {
        snprintf(buf, cap, "by the %s (no server metrics)", by);
        return;
    }
    /* a queue building up, beyond the noise of a stable one (lg_knee.c's
     * rule for the requests in flight) */
    double s = start > 0 ? start : 0;
    int grew = max - s > 3.0 * sqrt(s + (max > 0 ? max : 0)) + 2.0;
    if (cause == 2 && grew)
        snprintf(buf, cap, "by the server (waiting requests %.0f -> %.0f)", start, max);
    else if (cause == 2)
        snprintf(buf, cap,
                 "by the server (its waiting requests %.0f -> %.0f, within a stable queue's noise)",
                 start, max);
    else if (grew)
        snprintf(buf, cap, "by the client (the server's waiting requests also grew, %.0f -> %.0f)",
                 start, max);
    else
        snprintf(buf, cap, "by the client (the server's waiting requests %.0f -> %.0f)", start,
                 max);
}
