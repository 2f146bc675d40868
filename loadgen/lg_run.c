/* lg_run: the coordinator. Builds the plan (schedule spec, prompt pool,
 * pre-rendered bodies), maps the shared region, forks the workers, watches
 * their live counters (progress, saturation, signals, deadlines), then
 * merges their blocks exactly and writes the report. */

#include "lg_run.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lg_bias.h"
#include "lg_cert.h"
#include "lg_dryrun.h"
#include "lg_export.h"
#include "lg_knee.h"
#include "lg_progress.h"
#include "lg_report.h"
#include "mdl_queue.h"
#include "mdl_stats.h"
#include "mdl_verdict.h"
#include "rb_clock.h"
#include "rb_file.h"
#include "rb_host.h"

#define PAGE 4096
#define ALIGN_UP(x) (((x) + PAGE - 1) & ~(size_t)(PAGE - 1))

static volatile sig_atomic_t g_signals;
static volatile sig_atomic_t g_last_signal;

static void on_signal(int sig)
{
    g_signals++;
    g_last_signal = sig;
}

/* ---- the shared region ------------------------------------------------ */

static size_t slot_header_bytes(void)
{
    return ALIGN_UP(sizeof(lg_slot));
}

static size_t slot_bytes(int n_stages)
{
    return slot_header_bytes() + (size_t)n_stages * lg_stats_block_bytes() +
           ALIGN_UP(LG_SAMPLE_PER_WORKER * sizeof(lg_dispatch_sample));
}

lg_shared *lg_plan_shared(const lg_plan *p)
{
    return (lg_shared *)p->shm;
}

lg_slot *lg_plan_slot(const lg_plan *p, int w)
{
    return (lg_slot *)((char *)p->shm + PAGE + (size_t)w * p->slot_bytes);
}

lg_stage_stats *lg_plan_stats(const lg_plan *p, int w, int stage)
{
    return (lg_stage_stats *)((char *)lg_plan_slot(p, w) + slot_header_bytes() +
                              (size_t)stage * lg_stats_block_bytes());
}

lg_dispatch_sample *lg_plan_sample(const lg_plan *p, int w)
{
    return (lg_dispatch_sample *)((char *)lg_plan_slot(p, w) + slot_header_bytes() +
                                  (size_t)p->n_stages * lg_stats_block_bytes());
}

int lg_plan_worker_cap(const lg_plan *p, int w)
{
    int c = p->o->max_concurrency;
    if (!c) return 0;
    return c / p->k + (w < c % p->k ? 1 : 0);
}

/* ---- building the plan ------------------------------------------------ */

static int build_pool(lg_plan *p, char *err, size_t errlen)
{
    const lg_opts *o = p->o;
    int rc = -EINVAL;
    size_t pool = o->prompt_pool_size > 0 ? (size_t)o->prompt_pool_size : 1; /* lg_cli_finish */
    switch (o->dataset) {
    case LG_DS_RANDOM: {
        lg_random_spec rs = {.seed = o->seed,
                             .n = pool,
                             .input_len = o->random_input_len,
                             .output_len = o->random_output_len,
                             .range_ratio = o->random_range_ratio,
                             .dist = o->random_len_dist};
        if (o->random_range_ratio == 0.0) rs.dist = LG_LEN_FIXED;
        rc = lg_dataset_random(&rs, &p->ds, err, errlen);
        break;
    }
    case LG_DS_PREFIX: {
        lg_prefix_spec ps = {.seed = o->seed,
                             .groups = o->prefix_groups,
                             .prompts_per_group = o->prefix_prompts_per_group,
                             .system_prompt_len = o->prefix_system_len,
                             .question_len = o->prefix_question_len,
                             .output_len = o->random_output_len};
        rc = lg_dataset_shared_prefix(&ps, &p->ds, err, errlen);
        break;
    }
    case LG_DS_SHAREGPT:
        rc = lg_dataset_load_sharegpt(o->dataset_path, pool, &p->ds, err, errlen);
        break;
    case LG_DS_TRACE:
        rc = lg_trace_load(o->dataset_path, &p->trace, &p->n_trace, err, errlen);
        if (rc == 0 && p->n_trace == 0) {
            snprintf(err, errlen, "--dataset-path: the trace has no rows");
            rc = -EINVAL;
        }
        return rc;
    }
    if (rc) return rc;
    if (p->ds.n == 0) {
        snprintf(err, errlen, "--dataset-path: the dataset has no usable prompts");
        return -EINVAL;
    }
    p->bodies = calloc(p->ds.n, sizeof *p->bodies);
    p->body_len = calloc(p->ds.n, sizeof *p->body_len);
    if (!p->bodies || !p->body_len) return -ENOMEM;
    for (size_t i = 0; i < p->ds.n; i++) {
        rc = lg_body_render(o, p->ds.items[i].text, p->ds.items[i].output_tokens, &p->bodies[i],
                            &p->body_len[i]);
        if (rc) return rc;
    }
    return 0;
}

static void free_plan(lg_plan *p)
{
    if (p->bodies)
        for (size_t i = 0; i < p->ds.n; i++)
            free(p->bodies[i]);
    free(p->bodies);
    free(p->body_len);
    lg_dataset_free(&p->ds);
    free(p->trace);
    if (p->shm) munmap(p->shm, p->shm_bytes);
}

static const char *load_mode(const lg_opts *o)
{
    if (!o->max_concurrency) return "open";
    if (o->n_closed_stages) return "closed"; /* --closed-stage */
    return o->rate_given || o->n_stages > 1 ? "open-capped" : "closed";
}

/* ---- watching the run ------------------------------------------------- */

typedef struct lg_coord {
    lg_plan *p;
    const lg_opts *o;
    int progress;
    int64_t last_progress_ns;
    int handled_signals;
    /* saturation watch */
    int64_t *stage_expected; /* scheduled arrivals per stage (sweep-until-saturation) */
    int judged;              /* stages judged so far */
    lg_sched *stage_clock;   /* for stage start times */
    lg_knee_watch *knee;     /* saturation by the server, and the knee */
} lg_coord;

static int64_t stage_start_abs(const lg_coord *c, int s)
{
    if (!c->stage_clock) return lg_plan_shared(c->p)->t0_ns;
    int64_t st = lg_sched_stage_start_ns(c->stage_clock, s);
    return lg_plan_shared(c->p)->t0_ns + (st < 0 ? 0 : st);
}

static void watch_saturation(lg_coord *c, int64_t now)
{
    lg_plan *p = c->p;
    lg_shared *sh = lg_plan_shared(p);
    if (!c->stage_expected || sh->stop) return;
    while (c->judged < p->n_stages) {
        int s = c->judged;
        int64_t end = stage_start_abs(c, s) + p->spec.stages[s].duration_ns;
        /* Anything of this stage not dispatched by then is late by more
         * than the lag bound. */
        if (now < end + p->lag_bound_ns + 20000000LL) return;
        uint64_t disp = 0, over = 0;
        for (int w = 0; w < p->k; w++) {
            lg_stage_stats *ss = lg_plan_stats(p, w, s);
            disp += lg_stats_live_load(&ss->dispatched);
            over += lg_stats_live_load(&ss->lag_over);
        }
        double expected = (double)c->stage_expected[s];
        int sat = (expected > 0 && (double)disp < 0.95 * expected) ||
                  (disp > 0 && (double)over > 0.01 * (double)disp);
        c->judged++;
        if (sat) {
            __atomic_store_n(&sh->saturated_stage, s, __ATOMIC_RELAXED);
            __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
            if (c->progress) fputc('\n', stderr);
            fprintf(stderr,
                    "loadgen: stage %d (%.1f requests/s) saturated: %llu of %.0f dispatched, "
                    "%llu past the %.1f ms lag bound; stopping\n",
                    s, p->spec.stages[s].rate_per_s, (unsigned long long)disp, expected,
                    (unsigned long long)over, (double)p->lag_bound_ns / 1e6);
            return;
        }
    }
}

static void show_progress(lg_coord *c, int64_t now)
{
    lg_progress_print(c->p, c->stage_clock, now);
}

static void coord_tick(void *ctx)
{
    lg_coord *c = ctx;
    lg_shared *sh = lg_plan_shared(c->p);
    int sigs = g_signals;
    if (sigs > c->handled_signals) {
        c->handled_signals = sigs;
        if (!sh->interrupted) {
            __atomic_store_n(&sh->interrupted, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
            if (c->progress) fputc('\n', stderr);
            fprintf(stderr,
                    "loadgen: %s: stopping, draining in-flight requests (up to %.1f s; "
                    "again to cancel them)\n",
                    g_last_signal == SIGINT   ? "SIGINT"
                    : g_last_signal == SIGHUP ? "SIGHUP"
                                              : "SIGTERM",
                    (double)c->o->drain_timeout_ns / 1e9);
        } else {
            __atomic_store_n(&sh->stop, 2, __ATOMIC_RELAXED);
        }
    }
    int64_t now = rb_now_ns();
    watch_saturation(c, now);
    lg_knee_watch_tick(c->knee, now);
    if (c->progress && now - c->last_progress_ns >= 250000000LL && now >= sh->t0_ns) {
        c->last_progress_ns = now;
        show_progress(c, now);
    }
}

/* ---- the end: merging and judging ------------------------------------- */

static int cmp_sample_index(const void *a, const void *b)
{
    const lg_dispatch_sample *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* The workers' dispatch samples sorted by global index and cut to the
 * complete prefix of the stream: every worker kept its first arrivals, so
 * indices are contiguous up to where one worker's sample ends. */
static lg_dispatch_sample *gather_samples(const lg_plan *p, const int *lost, size_t *count)
{
    size_t n = 0;
    *count = 0;
    for (int w = 0; w < p->k; w++)
        if (!lost[w]) n += lg_plan_slot(p, w)->n_sample;
    lg_dispatch_sample *all = malloc((n ? n : 1) * sizeof *all);
    if (!all) return NULL;
    size_t m = 0;
    for (int w = 0; w < p->k; w++) {
        if (lost[w]) continue;
        const lg_dispatch_sample *s = lg_plan_sample(p, w);
        for (uint64_t i = 0; i < lg_plan_slot(p, w)->n_sample; i++)
            all[m++] = s[i];
    }
    qsort(all, m, sizeof *all, cmp_sample_index);
    size_t c = 0;
    while (c < m && all[c].index == all[0].index + (int64_t)c)
        c++;
    *count = c;
    return all;
}

/* Why the run's arrivals cannot be tested (NULL: they can), and the
 * process that was asked for. */
static const char *arrival_skip(const lg_plan *p, char *model, size_t cap)
{
    const lg_opts *o = p->o;
    if (isinf(o->burstiness))
        snprintf(model, cap, "constant");
    else
        snprintf(model, cap, "gamma(shape=%g)", o->burstiness);
    if (p->closed) return "closed loop: no arrival process to test";
    if (p->n_trace) return "trace replay: arrival times come from the trace";
    if (isinf(p->spec.stages[0].rate_per_s)) return "infinite rate: all requests at once";
    return NULL;
}

static void arrival_test(const lg_plan *p, const lg_dispatch_sample *all, size_t m, int stage,
                         lg_arrival_test *t)
{
    char model[64];
    const char *skip = arrival_skip(p, model, sizeof model);
    if (skip || !all) {
        memset(t, 0, sizeof *t);
        t->statistic = t->p_value = t->below_share = NAN;
        snprintf(t->model, sizeof t->model, "%s", model);
        snprintf(t->note, sizeof t->note, "%s", skip ? skip : "out of memory");
        return;
    }
    lg_bias_arrival_test(all, m, stage, model, t);
}

static void worker_bias(const lg_plan *p, int w, lg_worker_bias *b)
{
    const lg_slot *s = lg_plan_slot(p, w);
    b->worker = w;
    double el_ns = (double)(s->window_end_ns - s->window_start_ns);
    if (el_ns <= 0) el_ns = NAN;
    double rho = 1.0 - (double)s->idle_ns / el_ns;
    if (rho < 0) rho = 0;
    if (rho > 1) rho = 1;
    b->rho = rho;
    b->callbacks = (double)s->callbacks;
    double el_s = el_ns / 1e9;
    b->callback_rate_per_s = (double)s->callbacks / el_s;
    double es = s->callbacks ? s->svc_sum_ns / (double)s->callbacks / 1e9 : NAN;
    double es2 = s->callbacks ? s->svc_sumsq_ns2 / (double)s->callbacks / 1e18 : NAN;
    b->mean_service_us = es * 1e6;
    b->second_moment_us2 = es2 * 1e12;
    b->events = (double)s->events;
    b->event_rate_per_s = (double)s->events / el_s;
    b->predicted_wq_us = mdl_mg1_wq(b->callback_rate_per_s, es, es2) * 1e6;
    b->preemptions = (double)s->nivcsw;
}

static void default_result_name(const lg_opts *o, char *buf, size_t cap)
{
    char rate[32], when[32];
    if (o->n_stages > 1)
        snprintf(rate, sizeof rate, "stages");
    else if (isinf(o->request_rate))
        snprintf(rate, sizeof rate, "inf");
    else
        snprintf(rate, sizeof rate, "%g", o->request_rate);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    const char *model = strrchr(o->model, '/');
    model = model ? model + 1 : o->model;
    char conc[48] = "";
    if (o->max_concurrency) snprintf(conc, sizeof conc, "-concurrency%d", o->max_concurrency);
    snprintf(buf, cap, "loadgen-%sqps%s-%s-%s.json", rate, conc, model, when);
}

/* ---- the result files ------------------------------------------------ */

/* The run's output files, all derived from the result name. */
typedef struct lg_outputs {
    char json[2048];    /* the result */
    char jsonl[2100];   /* the per-request records, when complete */
    char partial[2200]; /* ... when some were lost */
    int lock_fd;        /* rb_lock_take on json (-1: none) */
    /* the workers' parts: "<dir>/.<name>.w<N>.<pid>.part", unique per run */
    char (*part)[2200];
    int *part_fd;
    int k;
} lg_outputs;

/* How the per-request records fared. */
typedef struct lg_record_count {
    uint64_t written;  /* in the committed JSONL */
    uint64_t lost;     /* write failures (workers' parts or the JSONL) */
    uint64_t left_out; /* a lost worker's records: its requests are not in the report */
    int err;           /* the first write error */
    const char *path;  /* the committed file (NULL: none) */
} lg_record_count;

static void outputs_init(lg_outputs *out, const char *result_path)
{
    memset(out, 0, sizeof *out);
    out->lock_fd = -1;
    snprintf(out->json, sizeof out->json, "%s", result_path);
    size_t n = strlen(result_path);
    int stem = n > 5 && strcmp(result_path + n - 5, ".json") == 0 ? (int)(n - 5) : (int)n;
    snprintf(out->jsonl, sizeof out->jsonl, "%.*s.jsonl", stem, result_path);
    snprintf(out->partial, sizeof out->partial, "%.*s.partial.jsonl", stem, result_path);
}

/* Removes the parts still there (a run that stops early) and frees. */
static void outputs_free(lg_outputs *out)
{
    for (int w = 0; w < out->k; w++) {
        if (out->part_fd && out->part_fd[w] >= 0) close(out->part_fd[w]);
        if (out->part && out->part[w][0]) unlink(out->part[w]);
    }
    free(out->part);
    free(out->part_fd);
    out->part = NULL;
    out->part_fd = NULL;
    rb_lock_release(out->json, out->lock_fd);
    out->lock_fd = -1;
}

/* Refuses, before the first request, a result name the run could not write
 * at its end: '.', '..', a path, an existing directory, a name too long for
 * the file system once the temporary suffix is added. Returns 0 or 2. */
static int check_outputs(const lg_opts *o, const char *name, const lg_outputs *out)
{
    if (!strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/')) {
        fprintf(stderr,
                "loadgen: --result-filename '%s': must be a file name (not '.' or '..', no '/'; "
                "the folder is --result-dir)\n",
                name);
        return 2;
    }
    const char *paths[3] = {out->json, out->jsonl, out->partial};
    int n = o->save_detailed ? 3 : 1;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr, "loadgen: --result-filename: '%s' exists and is %s\n", paths[i],
                    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
            return 2;
        }
        /* The temporary it is written under is the longest name. */
        rb_afile f;
        int rc = rb_afile_open(&f, paths[i]);
        if (rc) {
            fprintf(stderr, "loadgen: --result-filename: cannot create '%s': %s\n", f.tmp,
                    rb_file_strerror(rc));
            return 2;
        }
        rb_afile_abort(&f);
    }
    return 0;
}

/* Takes the result's lock and creates the workers' parts. Returns 0 or 2. */
static int open_outputs(const lg_opts *o, int k, const char *dir, const char *name, lg_outputs *out)
{
    long holder = 0;
    out->lock_fd = rb_lock_take(out->json, &holder);
    if (out->lock_fd < 0) {
        if (out->lock_fd == -EWOULDBLOCK)
            fprintf(stderr,
                    "loadgen: --result-filename: another run (pid %ld) is writing '%s'; refused "
                    "(give each concurrent run its own name)\n",
                    holder, out->json);
        else
            fprintf(stderr, "loadgen: --result-filename: cannot lock '%s.lock': %s\n", out->json,
                    rb_file_strerror(out->lock_fd));
        return 2;
    }
    if (!o->save_detailed) return 0;
    out->k = k;
    out->part = calloc((size_t)k, sizeof *out->part);
    out->part_fd = malloc((size_t)k * sizeof *out->part_fd);
    if (!out->part || !out->part_fd) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 2;
    }
    for (int w = 0; w < k; w++)
        out->part_fd[w] = -1;
    for (int w = 0; w < k; w++) {
        snprintf(out->part[w], sizeof out->part[w], "%s/.%s.w%d.%ld.part", dir, name, w,
                 (long)getpid());
        out->part_fd[w] =
            open(out->part[w], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (out->part_fd[w] < 0) {
            int e = errno;
            fprintf(stderr, "loadgen: --save-detailed: cannot create '%s': %s\n", out->part[w],
                    strerror(e));
            out->part[w][0] = '\0';
            return 2;
        }
    }
    return 0;
}

/* Copies the whole records of one part into the JSONL (or, for a lost
 * worker, only counts them). */
static void copy_part(int fd, int lost, rb_recfile *dst, lg_record_count *c)
{
    static char buf[1 << 16];
    char line[2048];
    size_t ll = 0;
    int64_t off = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        off += n;
        for (ssize_t i = 0; i < n; i++) {
            if (ll < sizeof line) line[ll] = buf[i];
            ll++;
            if (buf[i] != '\n') continue;
            if (ll > sizeof line)
                c->lost++; /* no record is this long: a torn write */
            else if (lost)
                c->left_out++;
            else
                rb_rec_add(dst, line, ll);
            ll = 0;
        }
    }
    /* A half record at the end: a worker killed inside its write. */
    if (ll && !lost) c->lost++;
}

/* Joins the parts into the JSONL: under its own name only when no record
 * was lost; else what survived goes to the ".partial" name and the loss is
 * counted. A lost worker's records are left out (its requests are left out
 * of the report) and counted. The parts are removed as they are read. */
static void commit_records(lg_outputs *out, const lg_plan *p, const int *lost, lg_record_count *c)
{
    memset(c, 0, sizeof *c);
    for (int w = 0; w < p->k; w++) {
        const lg_slot *sl = lg_plan_slot(p, w);
        if (lost[w]) continue;
        c->lost += sl->detailed_lost;
        if (!c->err) c->err = sl->detailed_err;
    }
    rb_afile f;
    int rc = rb_afile_open(&f, out->jsonl);
    rb_recfile r;
    int have = rc == 0 && rb_rec_init(&r, fileno(f.fp), 1 << 20) == 0;
    if (!have && rc == 0) rb_afile_abort(&f);
    if (!have && !c->err) c->err = rc ? rc : -ENOMEM;
    for (int w = 0; w < out->k; w++) {
        if (have) copy_part(out->part_fd[w], lost[w], &r, c);
        close(out->part_fd[w]);
        out->part_fd[w] = -1;
        unlink(out->part[w]); /* frees its space before the next is copied */
        out->part[w][0] = '\0';
    }
    if (!have) return;
    rb_rec_flush(&r);
    c->written = r.written;
    c->lost += r.lost;
    if (!c->err) c->err = r.err;
    rb_rec_free(&r);
    if (c->lost == 0) {
        rc = rb_afile_commit(&f);
        if (rc == 0) {
            c->path = out->jsonl;
            unlink(out->partial); /* a previous run's */
            return;
        }
        c->err = rc;
        c->lost += c->written; /* all of it: the file is not there */
        c->written = 0;
        return;
    }
    /* The complete name must not pair an old run's records with this report. */
    unlink(out->jsonl);
    if (c->written && rb_afile_commit_to(&f, out->partial) == 0) {
        c->path = out->partial;
        return;
    }
    if (f.fp) rb_afile_abort(&f);
    c->lost += c->written;
    c->written = 0;
}

/* ---- the run ---------------------------------------------------------- */

static int check_certificate(const lg_opts *o, const rb_host *host, int k, char *note, size_t cap,
                             double *safe_rho, double *budget_us, double *transport_us)
{
    char *txt = NULL;
    size_t len = 0;
    char err[256];
    int rc = rb_read_file(o->certificate, 1 << 22, &txt, &len);
    if (rc) {
        fprintf(stderr, "loadgen: --certificate: cannot read '%s': %s\n", o->certificate,
                rb_file_strerror(rc));
        return 2;
    }
    lg_cert cert;
    rc = lg_cert_parse(txt, len, &cert, err, sizeof err);
    free(txt);
    if (rc) {
        fprintf(stderr, "loadgen: --certificate %s: %s\n", o->certificate, err);
        return 2;
    }
    double rate = 0;
    int closed = (o->max_concurrency && !o->rate_given && o->n_stages <= 1) || o->n_closed_stages;
    for (int i = 0; i < o->n_stages; i++)
        if (o->stages[i].rate_per_s > rate) rate = o->stages[i].rate_per_s;
    if (o->dataset == LG_DS_TRACE) rate = NAN; /* rate unknown until replayed */
    if (closed) rate = NAN;
    lg_cert_decision d;
    /* a version 2 certificate predicts the plan's rho from its token count */
    double tokens = o->dataset == LG_DS_RANDOM ? (double)o->random_output_len : NAN;
    lg_cert_check_plan(&cert, host, k, rate, tokens, &d);
    if (d.warning[0]) fprintf(stderr, "loadgen: warning: %s\n", d.warning);
    if (d.entry) {
        *safe_rho = d.entry->safe_rho;
        *transport_us = d.entry->transport_us;
        if (!isnan(cert.budget_us)) *budget_us = cert.budget_us;
    }
    size_t used = (size_t)snprintf(note, cap, "%s", d.message);
    if (d.warning[0] && used < cap) snprintf(note + used, cap - used, "; %.400s", d.warning);
    lg_cert_free(&cert);
    if (!d.ok) {
        if (!o->force) {
            fprintf(stderr, "loadgen: refused: %s (pass --force to run anyway)\n", d.message);
            return 2;
        }
        fprintf(stderr, "loadgen: warning: --force: %s\n", d.message);
    }
    return 0;
}

int lg_run(lg_opts *o)
{
    char err[512] = "";
    int exit_code = 0;
    rb_host host;
    rb_host_read(&host);
    int k = o->num_workers > 0 ? o->num_workers : 1;
    double safe_rho = NAN, budget_us = 100.0, transport_us = NAN;
    char cert_note[512] = "";
    if (o->certificate[0]) {
        int rc = check_certificate(o, &host, k, cert_note, sizeof cert_note, &safe_rho, &budget_us,
                                   &transport_us);
        if (rc) return rc;
    }
    char result_name[600] = "", result_path[2048] = "";
    if (o->save_result) {
        int rc = rb_dir_check_writable(o->result_dir);
        if (rc) {
            fprintf(stderr, "loadgen: --result-dir: '%s' is not writable: %s\n", o->result_dir,
                    strerror(-rc));
            return 2;
        }
        if (o->result_filename[0])
            snprintf(result_name, sizeof result_name, "%s", o->result_filename);
        else
            default_result_name(o, result_name, sizeof result_name);
        snprintf(result_path, sizeof result_path, "%s/%s", o->result_dir, result_name);
    }
    lg_outputs out;
    outputs_init(&out, result_path);
    if (o->save_result && check_outputs(o, result_name, &out)) return 2;

    lg_plan plan = {.o = o, .k = k, .forked = o->num_workers > 0};
    lg_plan *p = &plan;
    p->closed =
        o->max_concurrency && !o->rate_given && o->n_stages <= 1 && o->dataset != LG_DS_TRACE;
    p->closed |= o->n_closed_stages > 0; /* --closed-stage: closed stages in turn */
    p->capped = o->max_concurrency && !p->closed;
    p->lag_bound_ns = (int64_t)(o->saturation_lag_ms * 1e6);
    p->stamps = o->sim_stamps != LG_STAMPS_OFF;
    {
        size_t bl = strlen(o->base_url);
        while (bl > 0 && o->base_url[bl - 1] == '/')
            bl--;
        snprintf(p->url, sizeof p->url, "%.*s%s", (int)bl, o->base_url, o->endpoint);
    }
    if (build_pool(p, err, sizeof err)) {
        fprintf(stderr, "loadgen: %s\n", err[0] ? err : "cannot build the dataset");
        free_plan(p);
        return 2;
    }
    p->spec =
        (lg_sched_spec){.seed = o->seed,
                        .burstiness = o->burstiness,
                        .stages = o->stages,
                        .n_stages = (size_t)o->n_stages,
                        .pause_ns = o->stage_pause_ns,
                        .trace = p->trace,
                        .n_trace = p->n_trace,
                        .trace_speedup = o->trace_speedup,
                        .max_requests = p->n_trace && o->num_prompts_given ? o->num_prompts : 0};
    p->n_stages = p->n_trace ? 1 : (o->n_stages > 0 ? o->n_stages : 1);
    lg_coord coord = {.p = p, .o = o, .judged = 0};
    if (!p->closed) {
        coord.stage_clock = lg_sched_new(&p->spec, err, sizeof err);
        if (!coord.stage_clock) {
            fprintf(stderr, "loadgen: schedule: %s\n", err);
            free_plan(p);
            return 2;
        }
    }
    if (o->sweep_until_saturation && coord.stage_clock) {
        /* The scheduled count of each stage is the target the achieved
         * count is compared with (not rate x duration: no Poisson noise). */
        coord.stage_expected = calloc((size_t)p->n_stages, sizeof *coord.stage_expected);
        lg_sched *it = lg_sched_new(&p->spec, err, sizeof err);
        lg_arrival a;
        while (it && coord.stage_expected && lg_sched_next(it, &a))
            if (a.stage >= 0 && a.stage < p->n_stages) coord.stage_expected[a.stage]++;
        lg_sched_free(it);
    }
    /* Total scheduled length, for the hard deadline and the send window. */
    int64_t total_dur = 0;
    int bounded_by_time = !p->n_trace;
    for (int i = 0; i < o->n_stages && !p->n_trace; i++) {
        if (o->stages[i].duration_ns == 0) bounded_by_time = 0;
        total_dur += o->stages[i].duration_ns + (i ? o->stage_pause_ns : 0);
    }
    if (p->n_trace) {
        total_dur = (int64_t)((double)p->trace[p->n_trace - 1].t_ns / o->trace_speedup);
        bounded_by_time = 1;
    }
    if (o->save_result && open_outputs(o, k, o->result_dir, result_name, &out)) {
        outputs_free(&out);
        lg_sched_free(coord.stage_clock);
        free(coord.stage_expected);
        free_plan(p);
        return 2;
    }
    p->detailed_fd = out.part_fd;

    p->slot_bytes = slot_bytes(p->n_stages);
    p->shm_bytes = PAGE + (size_t)k * p->slot_bytes;
    p->shm = mmap(NULL, p->shm_bytes, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p->shm == MAP_FAILED) {
        p->shm = NULL;
        fprintf(stderr, "loadgen: cannot map %zu bytes of shared memory: %s\n", p->shm_bytes,
                strerror(errno));
        lg_sched_free(coord.stage_clock);
        free(coord.stage_expected);
        free_plan(p);
        outputs_free(&out);
        return 1;
    }
    lg_shared *sh = lg_plan_shared(p);
    sh->saturated_stage = -1;
    for (int w = 0; w < k; w++)
        for (int s = 0; s < p->n_stages; s++)
            lg_stats_init(lg_plan_stats(p, w, s), 1);

    coord.progress = o->progress >= 0 ? o->progress : isatty(STDERR_FILENO);
    coord.knee = lg_knee_watch_new(p, coord.progress);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A hang-up (the terminal or the ssh session gone) ends the run like
     * SIGTERM: drain, then a partial report marked interrupted. */
    struct sigaction old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    int64_t margin = p->forked ? 30000000LL + 5000000LL * k : 5000000LL;
    sh->t0_ns = rb_now_ns() + margin;
    if (bounded_by_time) {
        p->end_deadline_ns = sh->t0_ns + total_dur + o->drain_timeout_ns + o->request_timeout_ns;
    } else {
        /* Bounded by count: every request ends within --request-timeout, and
         * at most C run at once, so N requests end within the last intended
         * start plus ceil(N / C) timeouts; past that (a worker stuck in the
         * kernel, say) the same deadline and watchdog as a timed run apply. */
        int64_t n = p->spec.max_requests, last_ns = 0, c = 0;
        for (size_t i = 0; i < p->spec.n_stages && n <= 0; i++)
            n += p->spec.stages[i].max_requests;
        for (int w = 0; w < k; w++) {
            int cw = lg_plan_worker_cap(p, w);
            c += cw > 0 && cw <= o->max_conn_per_worker ? cw : o->max_conn_per_worker;
        }
        if (!p->closed && coord.stage_clock) {
            lg_sched *it = lg_sched_new(&p->spec, err, sizeof err);
            lg_arrival a;
            while (it && lg_sched_next(it, &a))
                last_ns = a.t_ns;
            lg_sched_free(it);
        }
        if (n > 0 && c > 0)
            p->end_deadline_ns = sh->t0_ns + last_ns + ((n + c - 1) / c) * o->request_timeout_ns +
                                 o->drain_timeout_ns;
        if (o->n_closed_stages) /* in turn: each worker's share, its slots of each stage */
            p->end_deadline_ns = sh->t0_ns + lg_closed_stages_bound_ns(o, k);
    }
    pid_t *pids = calloc((size_t)k, sizeof *pids);
    int *lost = calloc((size_t)k, sizeof *lost);
    int *lost_sig = calloc((size_t)k, sizeof *lost_sig);
    if (!pids || !lost || !lost_sig) {
        fprintf(stderr, "loadgen: out of memory\n");
        exit_code = 1;
        goto cleanup;
    }
    fflush(stdout);
    fflush(stderr);
    if (p->forked) {
        pid_t parent = getpid();
        for (int w = 0; w < k; w++) {
            pid_t pid = fork();
            if (pid < 0) {
                fprintf(stderr, "loadgen: fork: %s\n", strerror(errno));
                sh->stop = 2;
                lost[w] = 1;
                exit_code = 1;
                continue;
            }
            if (pid == 0) {
                /* The coordinator decides when to stop; a worker must not
                 * outlive it. */
                signal(SIGINT, SIG_IGN);
                signal(SIGTERM, SIG_IGN);
                signal(SIGHUP, SIG_IGN);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent) _exit(1);
                int rc = lg_worker_run(p, w);
                lg_sched_free(coord.stage_clock);
                free(coord.stage_expected);
                lg_knee_watch_free(coord.knee);
                free(pids);
                free(lost);
                free(lost_sig);
                free_plan(p);
                /* the coordinator's to remove (a worker must not) */
                free(out.part);
                free(out.part_fd);
                curl_global_cleanup();
                exit(rc);
            }
            pids[w] = pid;
        }
        int alive = 0;
        for (int w = 0; w < k; w++)
            alive += pids[w] > 0;
        int64_t kill_at = p->end_deadline_ns ? p->end_deadline_ns + 2000000000LL : 0;
        while (alive > 0) {
            coord_tick(&coord);
            for (int w = 0; w < k; w++) {
                if (pids[w] <= 0) continue;
                int st;
                pid_t r = waitpid(pids[w], &st, WNOHANG);
                if (r != pids[w]) continue;
                pids[w] = 0;
                alive--;
                if (WIFSIGNALED(st)) {
                    lost[w] = 1;
                    lost_sig[w] = WTERMSIG(st);
                } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
                    lost[w] = 1;
                    if (lg_plan_slot(p, w)->error[0])
                        fprintf(stderr, "loadgen: worker %d: %s\n", w, lg_plan_slot(p, w)->error);
                }
            }
            if (kill_at && rb_now_ns() > kill_at) {
                for (int w = 0; w < k; w++)
                    if (pids[w] > 0) kill(pids[w], SIGKILL);
                kill_at = 0;
            }
            struct timespec ts = {0, 20000000L};
            nanosleep(&ts, NULL);
        }
    } else {
        p->tick = coord_tick;
        p->tick_ctx = &coord;
        int rc = lg_worker_run(p, 0);
        if (rc) {
            lost[0] = 1;
            if (lg_plan_slot(p, 0)->error[0])
                fprintf(stderr, "loadgen: worker 0: %s\n", lg_plan_slot(p, 0)->error);
        }
    }
    if (coord.progress) fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    /* Merge: per stage across workers, and the total across stages. */
    {
        lg_stage_stats *total = lg_stats_new();
        lg_stage_stats **stages = calloc((size_t)p->n_stages, sizeof *stages);
        lg_stage_view *views = calloc((size_t)p->n_stages, sizeof *views);
        lg_worker_bias *bias = calloc((size_t)k, sizeof *bias);
        char lost_note[512] = "";
        if (!total || !stages || !views || !bias) {
            fprintf(stderr, "loadgen: out of memory merging results\n");
            exit_code = 1;
            free(total);
            free(stages);
            free(views);
            free(bias);
            goto cleanup;
        }
        int n_views = 0;
        int stamps = 0;
        for (int s = 0; s < p->n_stages; s++) {
            stages[s] = lg_stats_new();
            if (!stages[s]) continue;
            for (int w = 0; w < k; w++)
                if (!lost[w]) lg_stats_merge(stages[s], lg_plan_stats(p, w, s));
            lg_stats_merge(total, stages[s]);
            views[s] =
                (lg_stage_view){.rate_per_s = p->n_trace ? NAN : o->stages[s].rate_per_s,
                                .start_ns = p->closed && s > 0 ? stages[s]->first_intended_ns
                                                               : stage_start_abs(&coord, s),
                                .duration_ns = p->n_trace ? total_dur : o->stages[s].duration_ns,
                                .stats = stages[s]};
            if (stages[s]->dispatched) n_views = s + 1;
        }
        double max_rho = 0, worst_wq = NAN;
        for (int w = 0; w < k; w++) {
            worker_bias(p, w, &bias[w]);
            if (lost[w]) {
                bias[w].lost = 1;
                bias[w].signal = lost_sig[w];
                size_t n = strlen(lost_note);
                if (lost_sig[w])
                    snprintf(lost_note + n, sizeof lost_note - n,
                             "%sworker %d killed by signal %d (%s)", n ? "; " : "", w, lost_sig[w],
                             strsignal(lost_sig[w]));
                else
                    snprintf(lost_note + n, sizeof lost_note - n, "%sworker %d failed",
                             n ? "; " : "", w);
                exit_code = 1;
                continue;
            }
            if (lg_plan_slot(p, w)->saw_stamps) stamps = 1;
            if (bias[w].rho > max_rho) max_rho = bias[w].rho;
            if (!isnan(bias[w].predicted_wq_us) &&
                (isnan(worst_wq) || bias[w].predicted_wq_us > worst_wq))
                worst_wq = bias[w].predicted_wq_us;
        }
        if (lost_note[0]) fprintf(stderr, "loadgen: %s; its results are left out\n", lost_note);
        lg_report rep = {
            .o = o,
            .load_mode = load_mode(o),
            .num_workers = o->num_workers,
            .request_rate = p->n_trace ? NAN : (o->n_stages == 1 ? o->stages[0].rate_per_s : NAN),
            .t0_ns = sh->t0_ns,
            .total = total,
            .total_duration_ns = bounded_by_time ? total_dur : 0,
            .stages = views,
            .n_stages = n_views,
            .interrupted = sh->interrupted,
            .saturated_stage = sh->saturated_stage,
            .workers = bias,
            .n_workers = k,
            .stamps_seen = stamps,
            .predicted_wq_us = worst_wq,
            .max_rho = max_rho,
            .host = host,
            .lost_note = lost_note[0] ? lost_note : NULL,
            .prompt_pool_size = p->ds.n,
        };
        if (p->closed) rep.request_rate = NAN;
        lg_knee_verdict *sat = calloc((size_t)p->n_stages, sizeof *sat);
        if (sat && coord.knee) {
            lg_knee_watch_finish(coord.knee, (const lg_stage_stats *const *)stages, n_views,
                                 sh->saturated_stage, sat, &rep.knee);
            rep.sat = sat;
        }
        snprintf(rep.certificate_note, sizeof rep.certificate_note, "%s", cert_note);
        /* The client's bias, stage by stage; the run's verdict is the worst
         * stage's. */
        lg_bias_stage *sb = calloc((size_t)(n_views > 0 ? n_views : 1), sizeof *sb);
        const lg_stage_stats **blocks = calloc((size_t)k, sizeof *blocks);
        lg_bias_stage *run_b = calloc(1, sizeof *run_b);
        size_t n_samples = 0;
        lg_dispatch_sample *samples = gather_samples(p, lost, &n_samples);
        lg_bias_budget bud = {
            .safe_rho = safe_rho,
            .mean_us =
                o->certificate[0] && isfinite(budget_us) ? budget_us : o->bias_budget_mean_us,
            .p99_us = o->bias_budget_p99_us,
            .transport_us = transport_us,
        };
        if (!sb || !blocks || !run_b) {
            fprintf(stderr, "loadgen: out of memory judging the run\n");
            exit_code = 1;
        } else {
            int worst = -1;
            for (int s = 0; s < n_views; s++) {
                for (int w = 0; w < k; w++)
                    blocks[w] = lost[w] ? NULL : lg_plan_stats(p, w, s);
                lg_bias_stage_figures(blocks, k, stages[s], p->closed, &sb[s]);
                arrival_test(p, samples, n_samples, s, &sb[s].arrival);
                lg_bias_judge(&sb[s], &bud);
                /* The worst stage decides; among equals, the busiest loop
                 * (an all-OK sweep names its hardest stage, not its first). */
                if (worst < 0 || sb[s].verdict.level > sb[worst].verdict.level ||
                    (sb[s].verdict.level == sb[worst].verdict.level &&
                     sb[s].max_rho > sb[worst].max_rho))
                    worst = s;
            }
            /* The whole run: the loop over the whole send window. */
            lg_bias_stage_figures(blocks, 0, total, p->closed, run_b);
            run_b->max_rho = max_rho;
            run_b->predicted_wq_us = worst_wq;
            for (int w = 0; w < k; w++) {
                if (lost[w]) continue;
                const lg_slot *sl = lg_plan_slot(p, w);
                int64_t rd = 0, win = sl->window_end_ns - sl->window_start_ns;
                for (int s = 0; s < p->n_stages; s++)
                    rd += lg_plan_stats(p, w, s)->run_delay_ns;
                double share = win > 0 ? (double)rd / (double)win : NAN;
                if (isfinite(share) && !(share <= run_b->run_delay_share))
                    run_b->run_delay_share = share;
                if (sl->clock_spread_ns > rep.clock_spread_ns)
                    rep.clock_spread_ns = sl->clock_spread_ns;
                if (sl->clock_width_ns > rep.clock_width_ns)
                    rep.clock_width_ns = sl->clock_width_ns;
                rep.clock_steps += sl->clock_steps;
                rep.rx_enable_failed += sl->rx_enable_failed;
            }
            arrival_test(p, samples, n_samples, -1, &run_b->arrival);
            lg_bias_judge(run_b, &bud);
            if (worst >= 0) {
                run_b->verdict = sb[worst].verdict;
                if (n_views > 1) {
                    char *dst = run_b->verdict.reason;
                    int n = sb[worst].verdict.level == MDL_VERDICT_OK
                                ? snprintf(dst, sizeof run_b->verdict.reason,
                                           "all %d stages; the busiest, stage %d: ", n_views, worst)
                                : snprintf(dst, sizeof run_b->verdict.reason, "stage %d: ", worst);
                    if (n > 0 && (size_t)n < sizeof run_b->verdict.reason)
                        snprintf(dst + n, sizeof run_b->verdict.reason - (size_t)n, "%.*s",
                                 (int)(sizeof run_b->verdict.reason - (size_t)n - 1),
                                 sb[worst].verdict.reason);
                }
            }
            rep.verdict_stage = n_views > 1 ? worst : -1;
            rep.stage_bias = sb;
            rep.run_bias = run_b;
            rep.verdict = run_b->verdict;
            rep.achieved_ratio = run_b->achieved_ratio;
        }
        if (!o->quiet) lg_report_summary(&rep, stdout);
        fflush(stdout);
        if (o->save_result) {
            /* The records first: the report says how they fared. */
            lg_record_count rc_ = {0};
            if (o->save_detailed) {
                commit_records(&out, p, lost, &rc_);
                if (rc_.lost) {
                    fprintf(stderr, "loadgen: %llu of %llu per-request records lost (%s); %s%s\n",
                            (unsigned long long)rc_.lost,
                            (unsigned long long)(rc_.lost + rc_.written),
                            rb_file_strerror(rc_.err ? rc_.err : -EIO),
                            rc_.path ? "the rest are in " : "no JSONL written",
                            rc_.path ? rc_.path : "");
                    exit_code = 1;
                }
                if (rc_.left_out)
                    fprintf(stderr,
                            "loadgen: %llu records of lost workers left out of the JSONL, as "
                            "their requests are of the report\n",
                            (unsigned long long)rc_.left_out);
            }
            cJSON *j = lg_report_json(&rep);
            if (j && o->save_detailed) {
                const char *base = rc_.path ? strrchr(rc_.path, '/') : NULL;
                if (rc_.path)
                    cJSON_AddStringToObject(j, "detailed_file", base ? base + 1 : rc_.path);
                else
                    cJSON_AddNullToObject(j, "detailed_file");
                cJSON_AddNumberToObject(j, "detailed_records", (double)rc_.written);
                cJSON_AddNumberToObject(j, "detailed_records_lost", (double)rc_.lost);
                cJSON_AddNumberToObject(j, "detailed_records_left_out", (double)rc_.left_out);
            }
            char *txt = j ? cJSON_Print(j) : NULL;
            int rc = txt ? rb_write_file_atomic(out.json, txt, strlen(txt)) : -ENOMEM;
            if (rc) {
                fprintf(stderr, "loadgen: cannot write %s: %s\n", out.json, rb_file_strerror(rc));
                exit_code = 1;
            } else {
                fprintf(stderr, "loadgen: wrote %s\n", out.json);
                if (lg_export_run(o, out.json, rc_.path)) exit_code = 1; /* --report-format */
            }
            free(txt);
            cJSON_Delete(j);
        }
        if (sh->interrupted && exit_code == 0) exit_code = 128 + (int)g_last_signal;
        free(sb);
        free(blocks);
        free(run_b);
        free(samples);
        for (int s = 0; s < p->n_stages; s++)
            free(stages[s]);
        free(stages);
        free(views);
        free(bias);
        free(total);
        free(sat);
    }
cleanup:
    outputs_free(&out);
    free(pids);
    free(lost);
    free(lost_sig);
    lg_sched_free(coord.stage_clock);
    free(coord.stage_expected);
    lg_knee_watch_free(coord.knee);
    free_plan(p);
    return exit_code;
}
