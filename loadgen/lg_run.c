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
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lg_cert.h"
#include "lg_report.h"
#include "mdl_queue.h"
#include "mdl_stats.h"
#include "mdl_verdict.h"
#include "rb_clock.h"
#include "rb_file.h"
#include "rb_host.h"

#define PAGE 4096
#define ALIGN_UP(x) (((x) + PAGE - 1) & ~(size_t)(PAGE - 1))
#define POOL_MAX 1024

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

void lg_plan_detailed_part(const lg_plan *p, int w, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/.%s.w%d.part", p->detailed_dir, p->detailed_base, w);
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
    size_t pool = POOL_MAX;
    if (o->num_prompts > 0 && (size_t)o->num_prompts < pool) pool = (size_t)o->num_prompts;
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
        rc = lg_dataset_load_sharegpt(o->dataset_path,
                                      o->num_prompts > 0 ? (size_t)o->num_prompts : 100000, &p->ds,
                                      err, errlen);
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
    lg_plan *p = c->p;
    uint64_t disp = 0, fail = 0, inflight = 0, lag = 0;
    for (int w = 0; w < p->k; w++) {
        lg_slot *sl = lg_plan_slot(p, w);
        inflight += __atomic_load_n(&sl->in_flight, __ATOMIC_RELAXED);
        uint64_t l = __atomic_load_n(&sl->lag_p99_ns, __ATOMIC_RELAXED);
        if (l > lag) lag = l;
        for (int s = 0; s < p->n_stages; s++) {
            lg_stage_stats *ss = lg_plan_stats(p, w, s);
            disp += lg_stats_live_load(&ss->dispatched);
            fail += lg_stats_live_load(&ss->failed);
        }
    }
    double el = (double)(now - lg_plan_shared(p)->t0_ns) / 1e9;
    fprintf(stderr,
            "\r[loadgen] %6.1fs sent %llu (%.1f/s) in flight %llu lag p99 %.3f ms errors %llu   ",
            el, (unsigned long long)disp, el > 0 ? (double)disp / el : 0.0,
            (unsigned long long)inflight, (double)lag / 1e6, (unsigned long long)fail);
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
                    g_last_signal == SIGINT ? "SIGINT" : "SIGTERM",
                    (double)c->o->drain_timeout_ns / 1e9);
        } else {
            __atomic_store_n(&sh->stop, 2, __ATOMIC_RELAXED);
        }
    }
    int64_t now = rb_now_ns();
    watch_saturation(c, now);
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

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void arrival_test(const lg_plan *p, const int *lost, lg_arrival_test *t)
{
    const lg_opts *o = p->o;
    memset(t, 0, sizeof *t);
    if (p->closed) {
        snprintf(t->note, sizeof t->note, "closed loop: no arrival process to test");
        return;
    }
    if (p->n_trace) {
        snprintf(t->note, sizeof t->note, "trace replay: arrival times come from the trace");
        return;
    }
    double rate = p->spec.stages[0].rate_per_s;
    if (isinf(rate)) {
        snprintf(t->note, sizeof t->note, "infinite rate: all requests at once");
        return;
    }
    size_t n = 0;
    for (int w = 0; w < p->k; w++)
        if (!lost[w]) n += lg_plan_slot(p, w)->n_sample;
    lg_dispatch_sample *all = malloc((n ? n : 1) * sizeof *all);
    int64_t *times = malloc((n ? n : 1) * sizeof *times);
    double *gaps = malloc((n ? n : 1) * sizeof *gaps);
    if (!all || !times || !gaps) {
        snprintf(t->note, sizeof t->note, "out of memory");
        goto out;
    }
    size_t m = 0;
    for (int w = 0; w < p->k; w++) {
        if (lost[w]) continue;
        const lg_dispatch_sample *s = lg_plan_sample(p, w);
        for (uint64_t i = 0; i < lg_plan_slot(p, w)->n_sample; i++)
            if (s[i].stage == 0) all[m++] = s[i];
    }
    qsort(all, m, sizeof *all, cmp_sample_index);
    /* The complete prefix of the global stream: every worker kept its first
     * arrivals, so indices are contiguous up to where one worker's sample
     * ends. */
    size_t c = 0;
    while (c < m && all[c].index == all[0].index + (int64_t)c)
        c++;
    for (size_t i = 0; i < c; i++)
        times[i] = all[i].dispatch_ns;
    qsort(times, c, sizeof *times, cmp_i64);
    size_t ng = c > 0 ? c - 1 : 0;
    for (size_t i = 0; i < ng; i++)
        gaps[i] = (double)(times[i + 1] - times[i]) / 1e9;
    if (ng < 20) {
        snprintf(t->note, sizeof t->note, "too few dispatches (%zu gaps) to test", ng);
        goto out;
    }
    t->n = ng;
    if (isinf(o->burstiness)) {
        t->tested = 1;
        t->test = "cv2";
        snprintf(t->model, sizeof t->model, "constant");
        t->statistic = mdl_cv2(gaps, ng);
        t->p_value = NAN;
    } else {
        double d, pv;
        double scale = 1.0 / (rate * o->burstiness);
        if (mdl_ks_gamma(gaps, ng, o->burstiness, scale, &d, &pv) == 0) {
            t->tested = 1;
            t->test = "ks";
            snprintf(t->model, sizeof t->model, "gamma(shape=%g)", o->burstiness);
            t->statistic = d;
            t->p_value = pv;
        } else {
            snprintf(t->note, sizeof t->note, "KS test failed");
        }
    }
out:
    free(all);
    free(times);
    free(gaps);
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

static int concat_detailed(const lg_plan *p, const char *out_path)
{
    rb_afile f;
    int rc = rb_afile_open(&f, out_path);
    if (rc) return rc;
    char buf[65536];
    for (int w = 0; w < p->k; w++) {
        char part[2048];
        lg_plan_detailed_part(p, w, part, sizeof part);
        FILE *in = fopen(part, "r");
        if (!in) continue;
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, f.fp);
        fclose(in);
        unlink(part);
    }
    return rb_afile_commit(&f);
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
                strerror(-rc));
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
    int closed = o->max_concurrency && !o->rate_given && o->n_stages <= 1;
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

    lg_plan plan = {.o = o, .k = k, .forked = o->num_workers > 0};
    lg_plan *p = &plan;
    p->closed =
        o->max_concurrency && !o->rate_given && o->n_stages <= 1 && o->dataset != LG_DS_TRACE;
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
    if (o->save_result && o->save_detailed) {
        snprintf(p->detailed_dir, sizeof p->detailed_dir, "%s", o->result_dir);
        snprintf(p->detailed_base, sizeof p->detailed_base, "%s", result_name);
    }

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
        return 1;
    }
    lg_shared *sh = lg_plan_shared(p);
    sh->saturated_stage = -1;
    for (int w = 0; w < k; w++)
        for (int s = 0; s < p->n_stages; s++)
            lg_stats_init(lg_plan_stats(p, w, s), 1);

    coord.progress = o->progress >= 0 ? o->progress : isatty(STDERR_FILENO);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int64_t margin = p->forked ? 30000000LL + 5000000LL * k : 5000000LL;
    sh->t0_ns = rb_now_ns() + margin;
    if (bounded_by_time)
        p->end_deadline_ns = sh->t0_ns + total_dur + o->drain_timeout_ns + o->request_timeout_ns;
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
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent) _exit(1);
                int rc = lg_worker_run(p, w);
                lg_sched_free(coord.stage_clock);
                free(coord.stage_expected);
                free(pids);
                free(lost);
                free(lost_sig);
                free_plan(p);
                curl_global_cleanup();
                exit(rc);
            }
            pids[w] = pid;
        }
        int alive = 0;
        for (int w = 0; w < k; w++)
            alive += pids[w] > 0;
        int64_t kill_at = bounded_by_time ? p->end_deadline_ns + 2000000000LL : 0;
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
                                .start_ns = stage_start_abs(&coord, s),
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
        };
        if (p->closed) rep.request_rate = NAN;
        snprintf(rep.certificate_note, sizeof rep.certificate_note, "%s", cert_note);
        arrival_test(p, lost, &rep.arrival);
        /* The verdict's inputs. */
        const mdl_hist *ov = lg_stats_hist_c(total, LG_H_OVERHEAD);
        double achieved_ratio = NAN;
        if (!p->closed && !p->n_trace && total->dispatched > 1) {
            /* Stretch of the dispatch span over the intended span: noise-free,
             * unlike dispatched / (rate x window). */
            double span_i = (double)(total->last_intended_ns - total->first_intended_ns);
            double span_d = (double)(total->last_dispatch_ns - total->first_intended_ns);
            if (span_i > 0 && span_d > 0) achieved_ratio = span_i / span_d;
            if (achieved_ratio > 1) achieved_ratio = 1;
        }
        rep.achieved_ratio = achieved_ratio;
        mdl_verdict_input vi = {
            .max_rho = max_rho,
            .predicted_wq_us = worst_wq,
            .overhead_p99_us = ov->total ? (double)mdl_hist_percentile(ov, 99.0) / 1e3 : NAN,
            .overhead_mean_us = ov->total ? mdl_hist_mean(ov) / 1e3 : NAN,
            .transport_us = transport_us,
            .lag_p99_us =
                p->closed
                    ? NAN
                    : (double)mdl_hist_percentile(lg_stats_hist_c(total, LG_H_LAG), 99.0) / 1e3,
            .achieved_ratio = achieved_ratio,
            .arrival_p_value = rep.arrival.tested && strcmp(rep.arrival.test, "ks") == 0
                                   ? rep.arrival.p_value
                                   : NAN,
            .arrival_d = rep.arrival.tested && strcmp(rep.arrival.test, "ks") == 0
                             ? rep.arrival.statistic
                             : NAN,
            .safe_rho = safe_rho,
            .budget_us = budget_us,
        };
        mdl_verdict_judge(&vi, &rep.verdict);
        if (!o->quiet) lg_report_summary(&rep, stdout);
        fflush(stdout);
        if (o->save_result) {
            cJSON *j = lg_report_json(&rep);
            char *txt = j ? cJSON_Print(j) : NULL;
            int rc = txt ? rb_write_file_atomic(result_path, txt, strlen(txt)) : -ENOMEM;
            if (rc) {
                fprintf(stderr, "loadgen: cannot write %s: %s\n", result_path, strerror(-rc));
                exit_code = 1;
            } else {
                fprintf(stderr, "loadgen: wrote %s\n", result_path);
            }
            free(txt);
            cJSON_Delete(j);
            if (o->save_detailed) {
                char dpath[2100];
                size_t n = strlen(result_path);
                if (n > 5 && strcmp(result_path + n - 5, ".json") == 0)
                    snprintf(dpath, sizeof dpath, "%.*s.jsonl", (int)(n - 5), result_path);
                else
                    snprintf(dpath, sizeof dpath, "%s.jsonl", result_path);
                rc = concat_detailed(p, dpath);
                if (rc) {
                    fprintf(stderr, "loadgen: cannot write %s: %s\n", dpath, strerror(-rc));
                    exit_code = 1;
                }
            }
        }
        if (sh->interrupted && exit_code == 0) exit_code = g_last_signal == SIGTERM ? 143 : 130;
        for (int s = 0; s < p->n_stages; s++)
            free(stages[s]);
        free(stages);
        free(views);
        free(bias);
        free(total);
    }
cleanup:
    free(pids);
    free(lost);
    free(lost_sig);
    lg_sched_free(coord.stage_clock);
    free(coord.stage_expected);
    free_plan(p);
    return exit_code;
}
