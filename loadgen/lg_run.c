/* lg_run: a whole run along its data flow: the plan (lg_plan.h), the fleet
 * that runs the workers (lg_fleet.h) under this coordinator's watch
 * (progress, saturation, signals), the exact merge (lg_merge.h), the
 * verdict's inputs (lg_judge.h) and the report with its files. */

#include "lg_run.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lg_bias.h"
#include "lg_cert.h"
#include "lg_export.h"
#include "lg_fleet.h"
#include "lg_judge.h"
#include "lg_knee.h"
#include "lg_merge.h"
#include "lg_mpi.h"
#include "lg_progress.h"
#include "lg_report.h"
#include "mdl_stats.h"
#include "mdl_verdict.h"
#include "rb_clock.h"
#include "rb_file.h"
#include "rb_host.h"

static volatile sig_atomic_t g_signals;
static volatile sig_atomic_t g_last_signal;

static void on_signal(int sig)
{
    g_signals++;
    g_last_signal = sig;
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
    lg_mpi *mpi;             /* --mpi: rank 0 notes the ranks gone from its host */
    int mpi_progress;        /* --mpi --progress: this rank sends, rank 0 shows */
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
    if (c->mpi) lg_mpi_watch(c->mpi, now);
    if (c->mpi_progress && now >= sh->t0_ns) {
        uint64_t mine[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)],
            all[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)];
        unsigned char is_max[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)];
        int n = LG_PROGRESS_NCOUNTS(c->p->n_stages);
        lg_progress_counts(c->p, mine);
        lg_progress_counts_max(c->p->n_stages, is_max);
        if (lg_mpi_progress(c->mpi, mine, n, is_max, all, now) && c->progress)
            lg_progress_print_counts(c->p, c->stage_clock, now, all);
        return;
    }
    if (c->progress && now - c->last_progress_ns >= 250000000LL && now >= sh->t0_ns) {
        c->last_progress_ns = now;
        lg_progress_print(c->p, c->stage_clock, now);
    }
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
/* Part files of this result name that a killed run left behind (its
 * coordinator died before it could merge them): with the name's lock held,
 * no live run writes them, so the ones of dead pids are removed, and said. */
static void remove_stale_parts(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    if (!d) return;
    size_t nl = strlen(name);
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *f = e->d_name, *rest;
        char *end;
        if (f[0] != '.' || strncmp(f + 1, name, nl) != 0 || strncmp(f + 1 + nl, ".w", 2) != 0)
            continue;
        rest = f + 3 + nl;
        strtol(rest, &end, 10); /* the worker */
        if (end == rest || *end != '.') continue;
        rest = end + 1;
        long pid = strtol(rest, &end, 10);
        if (end == rest || strcmp(end, ".part") != 0 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to tell */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, f);
        if (unlink(path) == 0) removed++;
    }
    closedir(d);
    if (removed)
        fprintf(stderr,
                "loadgen: note: removed %d per-request part file%s of '%s' left by a run that was "
                "killed before it merged them\n",
                removed, removed == 1 ? "" : "s", name);
}

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
    remove_stale_parts(dir, name);
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
static void commit_records(lg_outputs *out, int k, const lg_slot *const *slots, const int *lost,
                           lg_record_count *c)
{
    memset(c, 0, sizeof *c);
    for (int w = 0; w < k; w++) {
        const lg_slot *sl = slots[w];
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
                             double *safe_rho, double *budget_us, double *transport_us,
                             lg_cert_summary *sum)
{
    char err[512];
    lg_cert cert;
    if (lg_cert_load(o->certificate, &cert, err, sizeof err)) {
        fprintf(stderr, "loadgen: %s\n", err);
        return 2;
    }
    double rate, tokens; /* a version 2 certificate predicts rho from the tokens */
    lg_plan_cert_inputs(o, &rate, &tokens);
    lg_cert_decision d;
    lg_cert_check_plan(&cert, host, k, rate, tokens, &d);
    if (d.warning[0]) fprintf(stderr, "loadgen: warning: %s\n", d.warning);
    if (d.entry) {
        *safe_rho = d.entry->safe_rho;
        *transport_us = d.entry->transport_us;
        if (!isnan(cert.budget_us)) *budget_us = cert.budget_us;
    }
    *sum = (lg_cert_summary){.checked = 1,
                             .ok = d.ok,
                             .forced = !d.ok && o->force,
                             .workers = k,
                             .certified_workers = d.entry ? d.entry->workers : 0,
                             .planned_rate = rate,
                             .output_tokens = tokens,
                             .predicted_rho = d.predicted_rho,
                             .safe_rho = d.entry ? d.entry->safe_rho : NAN,
                             .certified_max_rate = NAN};
    if (isfinite(rate) && d.predicted_rho > 0 && isfinite(sum->safe_rho))
        sum->certified_max_rate =
            rate * sum->safe_rho / d.predicted_rho; /* rho is linear in rate */
    else if (cert.version < 2 && d.entry && isfinite(rate) &&
             isfinite(d.entry->safe_rate_per_worker))
        sum->certified_max_rate = d.entry->safe_rate_per_worker * k; /* compared by rate */
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

/* ---- the run ---------------------------------------------------------- */

/* A run's state from the plan to the report. */
typedef struct lg_runstate {
    lg_opts *o;
    lg_plan plan;
    lg_coord coord;
    lg_outputs out;
    rb_host host;
    char cert_note[512];
    lg_cert_summary cert_sum;
    double safe_rho, budget_us, transport_us;
    int *lost, *lost_sig; /* per worker */
    int num_workers;      /* the report's */
    /* --mpi: the back-end, this rank's place, and at rank 0 the fleet's
     * results and the records the ranks committed */
    lg_mpi *mpi;
    int rank, n_ranks;
    lg_mpi_fleet mf;
    const lg_record_count *records;
    char result_name[600];
    int salvage; /* --mpi-salvage N: N ranks' snapshots instead of a run */
    int wrote;   /* the result file was written */
} lg_runstate;

/* Under --mpi every rank takes the worst of every rank's code, so all
 * leave together (or none does). */
static int agree(lg_runstate *r, int rc)
{
    return r->mpi ? lg_mpi_max(r->mpi, rc) : rc;
}

static void coord_free(lg_coord *c)
{
    lg_sched_free(c->stage_clock);
    free(c->stage_expected);
    lg_knee_watch_free(c->knee);
    c->stage_clock = NULL;
    c->stage_expected = NULL;
    c->knee = NULL;
}

static void run_tick(void *ctx)
{
    coord_tick(&((lg_runstate *)ctx)->coord);
}

/* In a forked worker: the coordinator's memory, but not its files (the
 * parts are the coordinator's to remove). */
static void child_exit(void *ctx)
{
    lg_runstate *r = ctx;
    coord_free(&r->coord);
    free(r->lost);
    free(r->lost_sig);
    /* Not the plan: its prompt pool (up to 512 MiB) is the coordinator's
     * memory, shared copy-on-write, and freeing it here would copy every
     * page of it just before the exit. It stays reachable through r. */
    free(r->out.part);
    free(r->out.part_fd);
}

/* "worker 1 killed by signal 9 (Killed); ..." for the lost workers. */
static void lost_note_of(const lg_runstate *r, int k, char *note, size_t cap)
{
    note[0] = '\0';
    for (int w = 0; w < k; w++) {
        if (!r->lost[w]) continue;
        size_t n = strlen(note);
        if (r->mpi || r->salvage)
            snprintf(note + n, cap - n, "%srank %d lost", n ? "; " : "", w);
        else if (r->lost_sig[w])
            snprintf(note + n, cap - n, "%sworker %d killed by signal %d (%s)", n ? "; " : "", w,
                     r->lost_sig[w], strsignal(r->lost_sig[w]));
        else
            snprintf(note + n, cap - n, "%sworker %d failed", n ? "; " : "", w);
    }
}

/* The merged results judged and reported: the summary on stdout and, with
 * --save-result, the records and the result file. slots and blocks are
 * every worker's (k of them; blocks worker-major, n_stages each). Returns
 * 0 or 1. */
static int report_run(lg_runstate *r, int k, const lg_slot *const *slots,
                      const lg_stage_stats *const *blocks, lg_merged *m)
{
    lg_opts *o = r->o;
    lg_plan *p = &r->plan;
    lg_shared *sh = lg_plan_shared(p);
    int exit_code = 0;
    lg_stage_view *views = calloc((size_t)p->n_stages, sizeof *views);
    lg_worker_bias *bias = calloc((size_t)k, sizeof *bias);
    char lost_note[512] = "";
    if (!views || !bias) {
        fprintf(stderr, "loadgen: out of memory merging results\n");
        free(views);
        free(bias);
        return 1;
    }
    int n_views = m->n_used;
    for (int s = 0; s < p->n_stages; s++)
        views[s] =
            (lg_stage_view){.rate_per_s = p->n_trace ? NAN : o->stages[s].rate_per_s,
                            .start_ns = p->closed && s > 0 ? m->stages[s]->first_intended_ns
                                                           : stage_start_abs(&r->coord, s),
                            .duration_ns = p->n_trace ? p->total_dur_ns : o->stages[s].duration_ns,
                            .stats = m->stages[s]};
    char model[64];
    lg_judge_in jin = {
        .k = k,
        .n_stages = p->n_stages,
        .n_views = n_views,
        .closed = p->closed,
        .lost = r->lost,
        .slots = slots,
        .blocks = blocks,
        .stages = (const lg_stage_stats *const *)m->stages,
        .total = m->total,
        .samples = m->samples,
        .n_samples = m->n_samples,
        .budget = {.safe_rho = r->safe_rho,
                   .mean_us = o->certificate[0] && isfinite(r->budget_us) ? r->budget_us
                                                                          : o->bias_budget_mean_us,
                   .p99_us = o->bias_budget_p99_us,
                   .transport_us = r->transport_us},
    };
    jin.arrival_skip = arrival_skip(p, model, sizeof model);
    jin.arrival_model = model;
    double max_rho, worst_wq;
    int stamps;
    lg_judge_workers(&jin, bias, &max_rho, &worst_wq, &stamps);
    for (int w = 0; w < k; w++) {
        if (!r->lost[w]) continue;
        bias[w].signal = r->lost_sig[w];
        exit_code = 1;
    }
    lost_note_of(r, k, lost_note, sizeof lost_note);
    if (lost_note[0]) fprintf(stderr, "loadgen: %s; its results are left out\n", lost_note);
    lg_report rep = {
        .o = o,
        .load_mode = lg_load_mode(o),
        .num_workers = r->num_workers,
        .request_rate = p->n_trace ? NAN : (o->n_stages == 1 ? o->stages[0].rate_per_s : NAN),
        .t0_ns = sh->t0_ns,
        .total = m->total,
        .total_duration_ns = p->bounded_by_time ? p->total_dur_ns : 0,
        .stages = views,
        .n_stages = n_views,
        .interrupted = sh->interrupted,
        .saturated_stage = sh->saturated_stage,
        .workers = bias,
        .n_workers = k,
        .stamps_seen = stamps,
        .predicted_wq_us = worst_wq,
        .max_rho = max_rho,
        .host = r->host,
        .lost_note = lost_note[0] ? lost_note : NULL,
        .prompt_pool_size = p->ds.n,
    };
    if (p->closed) rep.request_rate = NAN;
    lg_knee_verdict *sat = calloc((size_t)p->n_stages, sizeof *sat);
    if (sat && r->coord.knee) {
        lg_knee_watch_finish(r->coord.knee, (const lg_stage_stats *const *)m->stages, n_views,
                             sh->saturated_stage, sat, &rep.knee);
        rep.sat = sat;
    }
    snprintf(rep.certificate_note, sizeof rep.certificate_note, "%s", r->cert_note);
    rep.cert = r->cert_sum;
    /* The client's bias, stage by stage; the run's verdict is the worst
     * stage's. */
    lg_bias_stage *sb = calloc((size_t)(n_views > 0 ? n_views : 1), sizeof *sb);
    lg_bias_stage *run_b = calloc(1, sizeof *run_b);
    if (!sb || !run_b) {
        fprintf(stderr, "loadgen: out of memory judging the run\n");
        exit_code = 1;
    } else {
        rep.verdict_stage = lg_judge_run(&jin, max_rho, worst_wq, sb, run_b, &rep);
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
        if (r->records) {
            rc_ = *r->records; /* each rank committed its own (see lg_run_mpi) */
            exit_code |= rc_.lost > 0;
        } else if (o->save_detailed) {
            commit_records(&r->out, k, slots, r->lost, &rc_);
            if (rc_.lost) {
                fprintf(stderr, "loadgen: %llu of %llu per-request records lost (%s); %s%s\n",
                        (unsigned long long)rc_.lost, (unsigned long long)(rc_.lost + rc_.written),
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
        if (j && r->salvage) {
            cJSON_AddBoolToObject(j, "degraded", 1);
            cJSON *m = cJSON_AddObjectToObject(j, "mpi");
            cJSON *lr = m ? cJSON_AddArrayToObject(m, "lost_ranks") : NULL;
            cJSON *la = m ? cJSON_AddArrayToObject(m, "lost_arrivals") : NULL;
            if (m) {
                cJSON_AddNumberToObject(m, "ranks", k);
                cJSON_AddBoolToObject(m, "salvaged", 1);
            }
            for (int w = 0; w < k && lr && la; w++) {
                if (!r->lost[w]) continue;
                cJSON_AddItemToArray(lr, cJSON_CreateNumber(w));
                cJSON_AddItemToArray(la, lg_mpi_lost_arrivals(p, w, k, sh->t0_ns, 0));
            }
        }
        if (j && r->mpi) {
            int degraded = 0;
            for (int w = 0; w < k; w++)
                degraded |= r->lost[w];
            if (degraded) cJSON_AddBoolToObject(j, "degraded", 1);
            cJSON_AddItemToObject(j, "mpi", lg_mpi_json(r->mpi, &r->mf, p));
        }
        char *txt = j ? cJSON_Print(j) : NULL;
        int rc = txt ? rb_write_file_atomic(r->out.json, txt, strlen(txt)) : -ENOMEM;
        if (rc) {
            fprintf(stderr, "loadgen: cannot write %s: %s\n", r->out.json, rb_file_strerror(rc));
            exit_code = 1;
        } else {
            fprintf(stderr, "loadgen: wrote %s\n", r->out.json);
            r->wrote = 1;
            if (lg_export_run(o, r->out.json, rc_.path)) exit_code = 1; /* --report-format */
        }
        free(txt);
        cJSON_Delete(j);
    }
    free(sb);
    free(run_b);
    free(views);
    free(bias);
    free(sat);
    return exit_code;
}

/* The fork back-end's results: the slots of the plan's own region. */
static int collect_and_report(lg_runstate *r)
{
    lg_plan *p = &r->plan;
    int k = p->k;
    lg_merged m;
    const lg_slot **slots = calloc((size_t)k, sizeof *slots);
    const lg_stage_stats **blocks = calloc((size_t)k * (size_t)p->n_stages, sizeof *blocks);
    int exit_code = 0;
    if (!slots || !blocks || lg_merge_workers(p, r->lost, &m)) {
        fprintf(stderr, "loadgen: out of memory merging results\n");
        exit_code = 1;
    } else {
        for (int w = 0; w < k; w++) {
            slots[w] = lg_plan_slot(p, w);
            for (int s = 0; s < p->n_stages; s++)
                blocks[(size_t)w * (size_t)p->n_stages + (size_t)s] = lg_plan_stats(p, w, s);
        }
        lg_merge_samples(p, r->lost, &m);
        exit_code = report_run(r, k, slots, blocks, &m);
    }
    lg_merged_free(&m);
    free(slots);
    free(blocks);
    return exit_code;
}

/* Under --mpi each rank's files: its records are "<stem>.rank<r>.jsonl"
 * (written where the rank runs: no record crosses the network, and the
 * result folder need not be shared), and a rank other than 0 locks
 * "<stem>.rank<r>.json", which it never writes. */
static void outputs_for_rank(lg_outputs *out, int rank)
{
    size_t n = strlen(out->json);
    int stem = n > 5 && strcmp(out->json + n - 5, ".json") == 0 ? (int)(n - 5) : (int)n;
    char json[2048];
    snprintf(json, sizeof json, "%s", out->json);
    snprintf(out->jsonl, sizeof out->jsonl, "%.*s.rank%d.jsonl", stem, json, rank);
    snprintf(out->partial, sizeof out->partial, "%.*s.rank%d.partial.jsonl", stem, json, rank);
    if (rank) snprintf(out->json, sizeof out->json, "%.*s.rank%d.json", stem, json, rank);
}

/* --mpi after the run: each rank commits its records, the exchange brings
 * everything to rank 0, which judges and reports. */
static int finish_mpi(lg_runstate *r)
{
    lg_plan *p = &r->plan;
    const lg_opts *o = r->o;
    int exit_code = 0;
    lg_record_count rec = {0};
    const lg_slot *mine = lg_plan_slot(p, r->rank);
    if (o->save_detailed) {
        commit_records(&r->out, 1, &mine, r->lost, &rec);
        if (rec.lost) {
            fprintf(stderr, "loadgen: rank %d: %llu of %llu per-request records lost (%s)\n",
                    r->rank, (unsigned long long)rec.lost,
                    (unsigned long long)(rec.lost + rec.written),
                    rb_file_strerror(rec.err ? rec.err : -EIO));
            exit_code = 1;
        }
    }
    /* This rank's final slot, for a salvage if the exchange never happens. */
    char snap[2200] = "";
    lg_shared *sh = lg_plan_shared(p);
    if (o->save_result) {
        lg_mpi_to_root_clock(r->mpi, p);
        lg_mpi_snap_path(o->result_dir, r->result_name, r->rank, snap, sizeof snap);
        int src = lg_mpi_snap_write(snap, p, r->rank, r->n_ranks, lg_mpi_t0_root(r->mpi),
                                    sh->interrupted);
        if (src) {
            fprintf(stderr, "loadgen: rank %d: cannot write %s: %s\n", r->rank, snap,
                    rb_file_strerror(src));
            snap[0] = '\0';
        }
    }
    /* Every rank says it is done; the exchange runs over the survivors. */
    int gone = lg_mpi_survivors(r->mpi, p->end_deadline_ns ? p->end_deadline_ns + 3000000000LL : 0);
    if (gone == -EIO)
        fprintf(stderr, "loadgen: rank %d: cannot form the survivors' group\n", r->rank);
    if (gone < 0) return 1;
    uint64_t counts[3] = {rec.written, rec.lost, rec.left_out};
    lg_mpi_sum_u64(r->mpi, counts, 3);
    sh->interrupted = lg_mpi_max(r->mpi, sh->interrupted);
    sh->saturated_stage = -1;
    int rc = lg_mpi_collect(r->mpi, p, r->lost[0], &r->mf);
    if (snap[0]) unlink(snap); /* the exchange happened */
    if (r->rank != 0) return exit_code;
    if (rc) {
        fprintf(stderr, "loadgen: out of memory merging results\n");
        return 1;
    }
    /* A lost rank of this host left its part: its records are counted
     * as left out (its requests are left out of the report) and removed. */
    for (int w = 1; w < r->n_ranks && o->save_detailed; w++) {
        long pid = lg_mpi_local_pid(r->mpi, w);
        if (!r->mf.lost[w] || !pid) continue;
        char part[2200];
        snprintf(part, sizeof part, "%s/.%s.w0.%ld.part", o->result_dir, r->result_name, pid);
        int fd = open(part, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        lg_record_count c = {0};
        copy_part(fd, 1, NULL, &c);
        close(fd);
        unlink(part);
        counts[2] += c.left_out;
    }
    for (int w = 1; w < r->n_ranks && o->save_result; w++) {
        if (!r->mf.lost[w]) continue;
        lg_mpi_snap_path(o->result_dir, r->result_name, w, snap, sizeof snap);
        unlink(snap); /* a rank lost after its snapshot: this report is the run's */
        if (!lg_mpi_local_pid(r->mpi, w)) continue;
        lg_outputs theirs;
        outputs_init(&theirs, r->out.json);
        outputs_for_rank(&theirs, w);
        snprintf(snap, sizeof snap, "%s.lock", theirs.json);
        unlink(snap); /* its lock, left by its death */
    }
    lg_record_count all = {.written = counts[0],
                           .lost = counts[1],
                           .left_out = counts[2],
                           .err = rec.err,
                           .path = rec.path};
    r->records = o->save_detailed ? &all : NULL;
    free(r->lost);
    free(r->lost_sig);
    r->lost = r->mf.lost;
    r->lost_sig = r->mf.lost_sig;
    rc = report_run(r, r->n_ranks, r->mf.slots, r->mf.blocks, &r->mf.merged);
    r->lost = r->lost_sig = NULL;
    r->records = NULL;
    return rc | exit_code;
}

/* --mpi-salvage N: the ranks' final snapshots of a run whose exchange never
 * happened, merged as that run's rank 0 would have (a rank without one is
 * lost), then removed. */
static int salvage(lg_runstate *r)
{
    lg_plan *p = &r->plan;
    const lg_opts *o = r->o;
    lg_shared *sh = lg_plan_shared(p);
    int k = p->k, found = 0;
    r->lost = calloc((size_t)k, sizeof *r->lost);
    r->lost_sig = calloc((size_t)k, sizeof *r->lost_sig);
    if (!r->lost || !r->lost_sig) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    char path[2200];
    for (int w = 0; w < k; w++) {
        lg_mpi_snap_path(o->result_dir, r->result_name, w, path, sizeof path);
        int64_t t0 = 0;
        int intr = 0;
        int rc = lg_mpi_snap_read(path, p, w, k, &t0, &intr);
        if (rc) {
            if (rc != -ENOENT)
                fprintf(stderr, "loadgen: --mpi-salvage: %s: %s\n", path,
                        rc == -EINVAL ? "not a snapshot of this run's shape (ranks, stages)"
                                      : rb_file_strerror(rc));
            r->lost[w] = 1;
            continue;
        }
        found++;
        sh->t0_ns = t0;
        sh->interrupted |= intr;
        r->lost[w] = lg_plan_slot(p, w)->exit_code != 0;
    }
    if (!found) {
        fprintf(stderr, "loadgen: --mpi-salvage: no snapshot of '%s' in %s\n", r->result_name,
                o->result_dir);
        return 2;
    }
    int rc = collect_and_report(r);
    if (!r->wrote) return 1;
    for (int w = 0; w < k; w++) {
        lg_mpi_snap_path(o->result_dir, r->result_name, w, path, sizeof path);
        unlink(path);
    }
    /* the lost ranks' record parts (".<name>.w0.<pid>.part"; the lock
     * keeps any other run of this name away) */
    char prefix[700];
    int np = snprintf(prefix, sizeof prefix, ".%s.w0.", r->result_name);
    DIR *d = opendir(o->result_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, (size_t)np) || n < 5 || strcmp(e->d_name + n - 5, ".part"))
            continue;
        snprintf(path, sizeof path, "%s/%s", o->result_dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    return rc ? rc : 1; /* a salvaged run is never a whole one */
}

int lg_run(lg_opts *o)
{
    char err[512] = "";
    int exit_code = 0;
    lg_runstate *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    r->o = o;
    lg_outputs *out = &r->out;
    lg_plan *p = &r->plan;
    lg_coord *coord = &r->coord;
    outputs_init(out, "");
    r->n_ranks = 1;
    if (o->mpi) {
        /* Each rank is one worker (--num-workers has no say). */
        if (o->sweep_until_saturation) {
            fprintf(stderr, "loadgen: --mpi: --sweep-until-saturation needs every worker's live "
                            "counters, which --mpi keeps off the network during the run\n");
            free(r);
            return 2;
        }
        if (!(r->mpi = lg_mpi_init())) {
            free(r);
            return 2;
        }
        r->rank = lg_mpi_rank(r->mpi);
        r->n_ranks = lg_mpi_size(r->mpi);
        if (o->max_concurrency && o->max_concurrency < r->n_ranks) {
            if (r->rank == 0)
                fprintf(stderr,
                        "loadgen: --mpi: --max-concurrency %d is fewer than the %d ranks (each "
                        "needs at least one)\n",
                        o->max_concurrency, r->n_ranks);
            exit_code = 2;
            goto done;
        }
    }
    rb_host_read(&r->host);
    if (o->mpi_salvage > 0 && !o->mpi) {
        r->salvage = 1;
        o->save_detailed = 0; /* the ranks' records are already in their files */
        if (!o->save_result) {
            fprintf(stderr, "loadgen: --mpi-salvage: give the run's --save-result, --result-dir "
                            "and --result-filename\n");
            free(r);
            return 2;
        }
    }
    int k = r->mpi ? r->n_ranks
                   : (r->salvage ? o->mpi_salvage : (o->num_workers > 0 ? o->num_workers : 1));
    r->num_workers = r->mpi || r->salvage ? k : o->num_workers;
    r->safe_rho = NAN;
    r->budget_us = 100.0;
    r->transport_us = NAN;
    /* Under --mpi each host checks its own ranks against its own certificate. */
    if (o->certificate[0])
        exit_code = check_certificate(o, &r->host, r->mpi ? lg_mpi_ranks_here(r->mpi) : k,
                                      r->cert_note, sizeof r->cert_note, &r->safe_rho,
                                      &r->budget_us, &r->transport_us, &r->cert_sum);
    if ((exit_code = agree(r, exit_code))) goto done;
    if (r->mpi) lg_mpi_set_certificate(r->mpi, r->cert_note);
    char result_name[600] = "", result_path[2048] = "";
    if (o->save_result) {
        int rc = rb_dir_check_writable(o->result_dir);
        if (rc) {
            fprintf(stderr, "loadgen: --result-dir: '%s' is not writable: %s\n", o->result_dir,
                    strerror(-rc));
            exit_code = 2;
        }
        if (o->result_filename[0])
            snprintf(result_name, sizeof result_name, "%s", o->result_filename);
        else
            default_result_name(o, result_name, sizeof result_name);
        if (r->mpi) lg_mpi_bcast(r->mpi, result_name, sizeof result_name);
        snprintf(r->result_name, sizeof r->result_name, "%s", result_name);
        snprintf(result_path, sizeof result_path, "%s/%s", o->result_dir, result_name);
    }
    outputs_init(out, result_path);
    if (r->mpi) outputs_for_rank(out, r->rank);
    if (!exit_code && o->save_result && check_outputs(o, result_name, out)) exit_code = 2;
    if ((exit_code = agree(r, exit_code))) goto done;
    if (lg_plan_build(p, o, k, !r->mpi && !r->salvage && o->num_workers > 0, err, sizeof err)) {
        fprintf(stderr, "loadgen: %s\n", err[0] ? err : "cannot build the dataset");
        exit_code = 2;
    }
    *coord = (lg_coord){.p = p, .o = o, .judged = 0, .mpi = r->mpi};
    if (!exit_code && !p->closed) {
        coord->stage_clock = lg_sched_new(&p->spec, err, sizeof err);
        if (!coord->stage_clock) {
            fprintf(stderr, "loadgen: schedule: %s\n", err);
            exit_code = 2;
        }
    }
    if (!exit_code && o->sweep_until_saturation && coord->stage_clock) {
        /* The scheduled count of each stage is the target the achieved
         * count is compared with (not rate x duration: no Poisson noise). */
        coord->stage_expected = calloc((size_t)p->n_stages, sizeof *coord->stage_expected);
        lg_sched *it = lg_sched_new(&p->spec, err, sizeof err);
        lg_arrival a;
        while (it && coord->stage_expected && lg_sched_next(it, &a))
            if (a.stage >= 0 && a.stage < p->n_stages) coord->stage_expected[a.stage]++;
        lg_sched_free(it);
    }
    /* Under --mpi this process holds one slot: its rank's worker. */
    int n_slots = r->mpi ? 1 : k;
    if (!exit_code && o->save_result && open_outputs(o, n_slots, o->result_dir, result_name, out))
        exit_code = 2;
    if ((exit_code = agree(r, exit_code))) goto done;
    p->detailed_fd = out->part_fd;
    int mrc = lg_plan_map(p, r->mpi ? r->rank : 0, n_slots);
    if (mrc) {
        fprintf(stderr, "loadgen: cannot map %zu bytes of shared memory: %s\n", p->shm_bytes,
                strerror(-mrc));
        exit_code = 1;
    }
    if ((exit_code = agree(r, exit_code))) goto done;
    lg_shared *sh = lg_plan_shared(p);
    if (r->salvage) {
        exit_code = salvage(r);
        goto done;
    }

    /* Under --mpi the progress line is asked for (--progress: every rank
     * reads the same flags, and mpirun's stderr is no terminal): each rank
     * sends its counters once a second, rank 0 shows their combination
     * (lg_mpi_progress). No knee watch: it would need every rank's
     * histograms live, and MPI stays off the run's hot path. */
    if (r->mpi) coord->mpi_progress = o->progress == 1;
    coord->progress = r->mpi             ? coord->mpi_progress && lg_mpi_rank(r->mpi) == 0
                      : o->progress >= 0 ? o->progress
                                         : isatty(STDERR_FILENO);
    coord->knee = r->mpi ? NULL : lg_knee_watch_new(p, coord->progress);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A hang-up (the terminal or the ssh session gone) ends the run like
     * SIGTERM: drain, then a partial report marked interrupted. */
    struct sigaction old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    r->lost = calloc((size_t)k, sizeof *r->lost);
    r->lost_sig = calloc((size_t)k, sizeof *r->lost_sig);
    if (!r->lost || !r->lost_sig) {
        fprintf(stderr, "loadgen: out of memory\n");
        exit_code = 1;
    }
    if ((exit_code = agree(r, exit_code))) goto done;
    if (r->mpi) {
        /* about 1 s ahead: the clock sync and every rank's last setup fit */
        sh->t0_ns = lg_mpi_start(r->mpi, 1000000000LL);
    } else {
        int64_t margin = p->forked ? 30000000LL + 5000000LL * k : 5000000LL;
        sh->t0_ns = rb_now_ns() + margin;
    }
    p->end_deadline_ns = lg_plan_end_deadline(p, sh->t0_ns);
    fflush(stdout);
    fflush(stderr);
    lg_fleet fleet = {.p = p,
                      .tick = run_tick,
                      .ctx = r,
                      .child_exit = child_exit,
                      .lost = r->lost,
                      .lost_sig = r->lost_sig};
    exit_code = lg_fleet_fork_run(&fleet);
    if (coord->progress) fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    if (r->mpi ? finish_mpi(r) : collect_and_report(r)) exit_code = 1;
    if (sh->interrupted && exit_code == 0) exit_code = 128 + (int)g_last_signal;
done:
    outputs_free(out);
    free(r->lost);
    free(r->lost_sig);
    coord_free(coord);
    lg_plan_free(p);
    if (r->mpi) {
        lg_mpi_fleet_free(&r->mf);
        lg_mpi_finish(r->mpi);
    }
    free(r);
    return exit_code;
}
