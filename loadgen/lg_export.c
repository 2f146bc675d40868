/* lg_export: rhobench's result files in vLLM's and Inference Perf's layouts
 * (see lg_export.h for the sources of each tool's key names): Inference
 * Perf's layout and the files here, vLLM's layout in lg_export_vllm.c, the
 * records they read in lg_xrecs.c. */
#include "lg_export.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lg_record.h"
#include "rb_file.h"
#include "rb_json.h"

int lg_export_parse_format(const char *s)
{
    if (strcmp(s, "rhobench") == 0) return 0;
    if (strcmp(s, "vllm") == 0) return LG_EXPORT_VLLM;
    if (strcmp(s, "inference-perf") == 0 || strcmp(s, "inference_perf") == 0) return LG_EXPORT_IP;
    if (strcmp(s, "both") == 0) return LG_EXPORT_VLLM | LG_EXPORT_IP;
    return -1;
}

/* ---- helpers ------------------------------------------------------------ */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The percentiles the result carries, from its "pNN_<metric>_ms" keys
 * (50 always: Inference Perf's "median"). Ascending, at most cap. */
static int result_pcts(const cJSON *result, double *p, int cap)
{
    int n = 0;
    p[n++] = 50.0;
    const cJSON *it;
    cJSON_ArrayForEach(it, result)
    {
        const char *k = it->string;
        if (!k || k[0] != 'p' || !strstr(k, "_ms") || strstr(k, "_dispatch")) continue;
        char *end;
        double v = strtod(k + 1, &end);
        if (end == k + 1 || *end != '_' || !(v > 0.0 && v < 100.0)) continue;
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= p[i] == v;
        if (!seen && n < cap) p[n++] = v;
    }
    for (int i = 1; i < n; i++) /* insertion sort: a handful */
        for (int j = i; j > 0 && p[j - 1] > p[j]; j--) {
            double t = p[j];
            p[j] = p[j - 1];
            p[j - 1] = t;
        }
    return n;
}

/* Inference Perf's percentile key: 50 -> "median", 99 -> "p99", 99.9 -> "p99.9". */
static void ip_pkey(double p, char *buf, size_t cap)
{
    if (p == 50.0)
        snprintf(buf, cap, "median");
    else
        snprintf(buf, cap, "p%g", p);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's default percentile (linear between closest ranks) of sorted v. */
static double pct_sorted(const double *v, size_t n, double p)
{
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* Inference Perf's summarize() of values v (sorted here): mean, min, max,
 * then the percentiles; null when there are none. */
static void summ_values(cJSON *parent, const char *k, double *v, size_t n, const double *p, int np)
{
    if (!n) {
        cJSON_AddNullToObject(parent, k);
        return;
    }
    qsort(v, n, sizeof *v, cmp_d);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    cJSON *o = cJSON_AddObjectToObject(parent, k);
    rb_json_put_num(o, "mean", sum / (double)n);
    rb_json_put_num(o, "min", v[0]);
    rb_json_put_num(o, "max", v[n - 1]);
    char key[32];
    for (int i = 0; i < np; i++) {
        ip_pkey(p[i], key, sizeof key);
        rb_json_put_num(o, key, pct_sorted(v, n, p[i]));
    }
}

/* The same from the result's "<stat>_<m>_ms" keys, in seconds: min and max
 * unknown (null); null when the result has no mean (not measured). */
static void summ_block(cJSON *parent, const char *k, const cJSON *blk, const char *m,
                       const double *p, int np)
{
    char key[64], pk[32];
    snprintf(key, sizeof key, "mean_%s_ms", m);
    double mean = rb_json_num(blk, key);
    if (isnan(mean)) {
        cJSON_AddNullToObject(parent, k);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(parent, k);
    rb_json_put_num(o, "mean", mean / 1e3);
    snprintf(key, sizeof key, "max_%s_ms", m); /* only the schedule lag has one */
    cJSON_AddNullToObject(o, "min");
    rb_json_put_num(o, "max", rb_json_num(blk, key) / 1e3);
    for (int i = 0; i < np; i++) {
        char w[24];
        snprintf(w, sizeof w, "%g", p[i]);
        if (p[i] == 50.0)
            snprintf(key, sizeof key, "median_%s_ms", m);
        else
            snprintf(key, sizeof key, "p%s_%s_ms", w, m);
        ip_pkey(p[i], pk, sizeof pk);
        rb_json_put_num(o, pk, rb_json_num(blk, key) / 1e3);
    }
}

/* The records of a block: all (stage -1) or one stage's. */
static int in_block(const lg_record *r, int stage)
{
    return stage < 0 || r->stage == stage;
}

/* Inference Perf's short label of a failure (reportgen's make_concise_label:
 * the HTTP code with its name, else the kind of error). */
static void ip_label(const char *cls, char *buf, size_t cap)
{
    static const struct {
        int code;
        const char *name;
    } names[] = {{429, "Rate Limit"},
                 {500, "Internal Server Error"},
                 {502, "Bad Gateway"},
                 {503, "Service Unavailable"},
                 {504, "Gateway Timeout"}};
    int code;
    if (sscanf(cls, "http_%d", &code) == 1) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (names[i].code == code) {
                snprintf(buf, cap, "%d - %s", code, names[i].name);
                return;
            }
        snprintf(buf, cap, "%d - other", code);
    } else if (strcmp(cls, "timeout") == 0) {
        snprintf(buf, cap, "Timeout");
    } else if (strcmp(cls, "connect") == 0) {
        snprintf(buf, cap, "Connection Error");
    } else {
        snprintf(buf, cap, "%s", cls);
    }
}

static void label_add(cJSON *by, const char *cls, double count)
{
    char label[64];
    ip_label(cls, label, sizeof label);
    cJSON *e = cJSON_GetObjectItemCaseSensitive(by, label);
    if (!e) {
        e = cJSON_AddObjectToObject(by, label);
        cJSON_AddNumberToObject(e, "count", 0);
        /* rhobench keeps no error text: the class is the message */
        cJSON_AddArrayToObject(e, "messages");
    }
    cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "count");
    cJSON_SetNumberValue(c, c->valuedouble + count);
    cJSON *msgs = cJSON_GetObjectItemCaseSensitive(e, "messages");
    int have = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) have |= strcmp(cJSON_GetStringValue(get(m, "message")), cls) == 0;
    if (!have) {
        cJSON *mo = cJSON_CreateObject();
        cJSON_AddStringToObject(mo, "message", cls);
        cJSON_AddItemToArray(msgs, mo);
    }
}

/* ---- Inference Perf ----------------------------------------------------- */

/* One summary from the records (ok: 1 successes, 0 failures, -1 all). */
static void summ_recs(cJSON *parent, const char *k, const lg_xrecs *x, int stage, int ok, int what,
                      double *buf, const double *p, int np)
{
    size_t n = 0;
    for (size_t i = 0; i < x->n; i++) {
        const lg_record *r = &x->r[i];
        if (!in_block(r, stage) || (ok >= 0 && lg_xrec_ok(r) != ok)) continue;
        double v = lg_xrec_value(r, what);
        if (!isnan(v)) buf[n++] = v;
    }
    summ_values(parent, k, buf, n, p, np);
}

/* A latency of successes.latency: from the records when there are, else
 * from the result (null when the result did not measure it). */
static void ip_latency(cJSON *lat, const char *k, const cJSON *blk, const char *m,
                       const lg_xrecs *x, int stage, int what, double *buf, const double *p, int np)
{
    char key[64];
    snprintf(key, sizeof key, "mean_%s_ms", m);
    if (x && what >= 0 && cJSON_IsNumber(get(blk, key)))
        summ_recs(lat, k, x, stage, 1, what, buf, p, np);
    else
        summ_block(lat, k, blk, m, p, np);
}

static void ip_rhobench(cJSON *ip, const cJSON *result, const cJSON *blk, const char *source,
                        int have_recs)
{
    cJSON *rb = cJSON_AddObjectToObject(ip, "rhobench");
    cJSON_AddStringToObject(rb, "source", source);
    cJSON_AddStringToObject(rb, "latency_from",
                            "the intended send time (Inference Perf's start_time is the dispatch; "
                            "from_dispatch below)");
    cJSON_AddStringToObject(rb, "distributions",
                            have_recs ? "per-request records (inter_token_latency: the result's "
                                        "histogram, min and max unknown)"
                                      : "the result's histograms (min and max unknown)");
    rb_json_copy(rb, result, "load_mode");
    rb_json_copy(rb, result, "num_workers");
    cJSON *d = cJSON_AddObjectToObject(rb, "from_dispatch");
    const cJSON *it;
    cJSON_ArrayForEach(it, blk)
    {
        if (it->string && strstr(it->string, "_dispatch_ms"))
            cJSON_AddItemToObject(d, it->string, cJSON_Duplicate(it, 1));
    }
    static const char *const keep[] = {"mean_ntpot_ms",
                                       "median_ntpot_ms",
                                       "p99_ntpot_ms",
                                       "ntpot_breakdown_ms",
                                       "ttft_truth_ms",
                                       "not_dispatched",
                                       "not_dispatched_is_lower_bound",
                                       "intended_span_s",
                                       "client_bias",
                                       "saturated"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        rb_json_copy(rb, blk, keep[i]);
    if (blk != result) return;
    rb_json_copy(rb, result, "saturated_stage");
    rb_json_copy(rb, result, "certificate");
    rb_json_copy(rb, result, "interrupted");
}

cJSON *lg_export_ip(const cJSON *result, const lg_xrecs *recs, int stage, const char *source)
{
    const cJSON *blk = result;
    if (stage >= 0) {
        blk = cJSON_GetArrayItem(get(result, "stages"), stage);
        if (!cJSON_IsObject(blk)) return NULL;
    }
    if (recs && !recs->n) recs = NULL;
    double p[LG_MAX_PERCENTILES + 1];
    int np = result_pcts(result, p, LG_MAX_PERCENTILES + 1);
    double *buf = recs ? malloc(recs->n * sizeof *buf) : NULL;
    if (recs && !buf) return NULL;
    cJSON *ip = cJSON_CreateObject();
    rb_json_put_num(ip, "benchmark_time_seconds", rb_json_num(blk, "duration"));

    cJSON *ls = cJSON_AddObjectToObject(ip, "load_summary");
    rb_json_put_num(ls, "count", rb_json_num(blk, "dispatched"));
    if (recs)
        summ_recs(ls, "schedule_delay", recs, stage, -1, LG_X_LAG, buf, p, np);
    else
        summ_block(ls, "schedule_delay", blk, "schedule_lag", p, np);
    if (stage >= 0) { /* a stage's summary also has its rates (no rate: null) */
        rb_json_put_num(ls, "send_duration", rb_json_num(blk, "send_window_s"));
        rb_json_put_num(ls, "requested_rate", rb_json_num(blk, "request_rate"));
        rb_json_put_num(ls, "achieved_rate", rb_json_num(blk, "achieved_rate"));
        const cJSON *lm = get(result, "load_mode");
        if (cJSON_IsString(lm) && strcmp(lm->valuestring, "closed") == 0) /* a stage's own */
            rb_json_put_num(ls, "concurrency",
                            get(blk, "concurrency") ? rb_json_num(blk, "concurrency")
                                                    : rb_json_num(result, "max_concurrency"));
    }

    cJSON *s = cJSON_AddObjectToObject(ip, "successes");
    double completed = rb_json_num(blk, "completed");
    rb_json_put_num(s, "count", completed);
    cJSON *lat = cJSON_AddObjectToObject(s, "latency");
    ip_latency(lat, "request_latency", blk, "e2el", recs, stage, LG_X_LAT, buf, p, np);
    ip_latency(lat, "normalized_time_per_output_token", blk, "ntpot", recs, stage, LG_X_NTPOT, buf,
               p, np);
    ip_latency(lat, "time_per_output_token", blk, "tpot", recs, stage, LG_X_TPOT, buf, p, np);
    ip_latency(lat, "time_to_first_token", blk, "ttft", recs, stage, LG_X_TTFT, buf, p, np);
    ip_latency(lat, "inter_token_latency", blk, "itl", NULL, stage, -1, buf, p, np);
    cJSON *th = cJSON_AddObjectToObject(s, "throughput");
    double dur = rb_json_num(blk, "duration");
    double in = rb_json_num(blk, "total_input_tokens"),
           out = rb_json_num(blk, "total_output_tokens");
    rb_json_put_num(th, "input_tokens_per_sec", dur > 0 ? in / dur : 0.0);
    rb_json_put_num(th, "output_tokens_per_sec", dur > 0 ? out / dur : 0.0);
    rb_json_put_num(th, "total_tokens_per_sec", dur > 0 ? (in + out) / dur : 0.0);
    rb_json_put_num(th, "requests_per_sec", dur > 0 ? completed / dur : 0.0);
    cJSON *pt = cJSON_AddObjectToObject(s, "prompt_tokens");
    rb_json_put_num(pt, "total", in);
    double share = rb_json_num(blk, "cached_prompt_tokens_share");
    rb_json_put_num(pt, "cached", isnan(share) ? 0.0 : round(share * in));
    rb_json_put_num(pt, "uncached", isnan(share) ? in : in - round(share * in));
    cJSON *dist = cJSON_CreateObject();
    if (recs) {
        summ_recs(dist, "prompt", recs, stage, 1, LG_X_IN, buf, p, np);
        summ_recs(dist, "output", recs, stage, 1, LG_X_OUT, buf, p, np);
        const cJSON *it;
        cJSON_ArrayForEach(it, get(dist, "prompt"))
            cJSON_AddItemToObject(pt, it->string, cJSON_Duplicate(it, 1));
        cJSON_AddItemToObject(s, "output_len", cJSON_Duplicate(get(dist, "output"), 1));
    } else {
        cJSON_AddNullToObject(s, "output_len");
    }
    cJSON *ot = cJSON_AddObjectToObject(s, "output_tokens");
    rb_json_put_num(ot, "total", out);
    if (recs) {
        const cJSON *it;
        cJSON_ArrayForEach(it, get(dist, "output"))
            cJSON_AddItemToObject(ot, it->string, cJSON_Duplicate(it, 1));
    }
    cJSON_Delete(dist);
    double good = rb_json_num(blk, "request_goodput"), thr = rb_json_num(blk, "request_throughput");
    if (!isnan(good)) {
        /* Both are counts over the same duration: their ratio is good/completed. */
        cJSON *g = cJSON_AddObjectToObject(s, "goodput_metrics");
        double pctg = thr > 0 ? 100.0 * good / thr : 0.0;
        rb_json_put_num(g, "goodput_percentage", pctg);
        rb_json_put_num(g, "request_goodput", good);
        rb_json_put_num(g, "good_requests", round(pctg * completed / 100.0));
        rb_json_put_num(g, "total_requests", completed);
    }

    cJSON *f = cJSON_AddObjectToObject(ip, "failures");
    rb_json_put_num(f, "count", rb_json_num(blk, "failed"));
    cJSON *by = cJSON_CreateObject();
    if (recs) {
        summ_recs(f, "request_latency", recs, stage, 0, LG_X_LAT, buf, p, np);
        for (size_t i = 0; i < recs->n; i++)
            if (in_block(&recs->r[i], stage) && !lg_xrec_ok(&recs->r[i]))
                label_add(by, recs->r[i].cls, 1);
    } else {
        const cJSON *fl = get(blk, "failed_latency");
        if (rb_json_num(fl, "n") > 0) {
            cJSON *o = cJSON_AddObjectToObject(f, "request_latency");
            rb_json_put_num(o, "mean", rb_json_num(fl, "mean_ms") / 1e3);
            cJSON_AddNullToObject(o, "min");
            rb_json_put_num(o, "max", rb_json_num(fl, "max_ms") / 1e3);
            rb_json_put_num(o, "median", rb_json_num(fl, "median_ms") / 1e3);
            rb_json_put_num(o, "p99", rb_json_num(fl, "p99_ms") / 1e3);
        } else {
            cJSON_AddNullToObject(f, "request_latency");
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, get(blk, "failures_by_class"))
        {
            if (cJSON_IsNumber(it)) label_add(by, it->string, it->valuedouble);
        }
    }
    cJSON_AddItemToObject(f, "by_label", by);
    free(buf);
    ip_rhobench(ip, result, blk, source, recs != NULL);
    return ip;
}

/* ---- the files ---------------------------------------------------------- */

/* "<dir>/<stem>" of a result path ("x/r.json" -> "x/r"). */
static void stem_of(const char *path, char *buf, size_t cap)
{
    size_t n = strlen(path);
    int stem = n > 5 && strcmp(path + n - 5, ".json") == 0 ? (int)(n - 5) : (int)n;
    snprintf(buf, cap, "%.*s", stem, path);
}

static int write_json(const char *path, cJSON *j)
{
    char *txt = j ? cJSON_Print(j) : NULL;
    int rc = txt ? rb_write_file_atomic(path, txt, strlen(txt)) : -ENOMEM;
    free(txt);
    if (rc)
        fprintf(stderr, "loadgen: --report-format: cannot write %s: %s\n", path,
                rb_file_strerror(rc));
    return rc ? 1 : 0;
}

static int write_ip(const cJSON *result, const lg_xrecs *recs, const char *stem, const char *source)
{
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s.inference-perf", stem);
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "loadgen: --report-format: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    /* An existing name must be a folder, not a link planted to another. */
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "loadgen: --report-format: %s is not a folder (a link is not followed)\n",
                dir);
        return 1;
    }
    int bad = 0;
    snprintf(path, sizeof path, "%s/summary_lifecycle_metrics.json", dir);
    cJSON *j = lg_export_ip(result, recs, -1, source);
    bad |= write_json(path, j);
    cJSON_Delete(j);
    int n = cJSON_GetArraySize(get(result, "stages"));
    for (int s = 0; s < LG_MAX_STAGES && !bad; s++) {
        snprintf(path, sizeof path, "%s/stage_%d_lifecycle_metrics.json", dir, s);
        /* As Inference Perf: a file per stage that sent requests (a sweep cut
         * short has stages without); an earlier run's extra stage files go. */
        const cJSON *st = cJSON_GetArrayItem(get(result, "stages"), s);
        if (s >= n || !(rb_json_num(st, "dispatched") > 0)) {
            if (unlink(path) && errno != ENOENT)
                fprintf(stderr, "loadgen: --report-format: cannot remove %s: %s\n", path,
                        strerror(errno));
            continue;
        }
        j = lg_export_ip(result, recs, s, source);
        bad |= write_json(path, j);
        cJSON_Delete(j);
    }
    if (!bad) fprintf(stderr, "loadgen: wrote %s/ (Inference Perf's lifecycle metrics)\n", dir);
    return bad;
}

static int write_vllm(const cJSON *result, const lg_xrecs *recs, const char *metadata,
                      const char *stem, const char *source)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.vllm.json", stem);
    rb_afile af;
    int rc = rb_afile_open(&af, path);
    if (rc == 0 && lg_export_vllm(af.fp, result, recs, metadata, source)) {
        rb_afile_abort(&af);
        rc = -ENOMEM;
    } else if (rc == 0) {
        rc = rb_afile_commit(&af);
    }
    if (rc) {
        fprintf(stderr, "loadgen: --report-format: cannot write %s: %s\n", path,
                rb_file_strerror(rc));
        return 1;
    }
    fprintf(stderr, "loadgen: wrote %s (vLLM's result layout)\n", path);
    return 0;
}

int lg_export_run(const lg_opts *o, const char *result_path, const char *jsonl_path)
{
    if (!o->report_formats) return 0;
    char *txt = NULL, err[512];
    size_t len = 0;
    int rc = rb_read_file(result_path, (size_t)1 << 30, &txt, &len);
    if (rc) {
        fprintf(stderr, "loadgen: --report-format: cannot read %s: %s\n", result_path,
                rb_file_strerror(rc));
        return 1;
    }
    cJSON *result = cJSON_ParseWithLength(txt, len);
    free(txt);
    if (!cJSON_IsObject(result)) {
        fprintf(stderr, "loadgen: --report-format: %s is not a result JSON\n", result_path);
        cJSON_Delete(result);
        return 1;
    }
    lg_xrecs x = {0};
    int bad = 0;
    if (jsonl_path && lg_xrecs_read(&x, jsonl_path, 1, err, sizeof err)) {
        fprintf(stderr, "loadgen: --report-format: %s; the per-request arrays are left out\n", err);
        lg_xrecs_free(&x);
        bad = 1;
    }
    const lg_xrecs *recs = jsonl_path && !bad ? &x : NULL;
    char stem[4096];
    stem_of(result_path, stem, sizeof stem);
    const char *base = strrchr(result_path, '/');
    base = base ? base + 1 : result_path;
    if (o->report_formats & LG_EXPORT_VLLM)
        bad |= write_vllm(result, recs, o->metadata, stem, base);
    if (o->report_formats & LG_EXPORT_IP) bad |= write_ip(result, recs, stem, base);
    lg_xrecs_free(&x);
    cJSON_Delete(result);
    return bad;
}
