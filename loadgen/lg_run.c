/* lg_run: a whole run along its data flow: the plan (lg_plan.h), the fleet
 * that runs the workers and collects their results (lg_fleet.h: fork, or
 * --mpi's ranks; it also salvages a run that never collected) under this
 * coordinator's watch (progress, saturation, signals); the merged results
 * are judged and reported in
 * lg_run_report.c, the run's files are lg_outputs.h's. The certificate's
 * check (check_certificate) stays here: it is the run's first gate, turning
 * the certificate's decision (lg_cert.h) into a refusal, a warning or the
 * figures the report carries, and it has no other caller. */

#include "lg_run.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lg_capture.h"
#include "lg_cert.h"
#include "lg_fleet.h"
#include "lg_knee.h"
#include "lg_merge.h"
#include "lg_outputs.h"
#include "lg_probe.h"
#include "lg_progress.h"
#include "lg_report.h"
#include "lg_run_report.h"
#include "lg_run_state.h"
#include "lg_signals.h"
#include "lg_promql.h"
#include "lg_scrape.h"
#include "rb_clock.h"
#include "rb_file.h"
#include "rb_host.h"

/* ---- watching the run ------------------------------------------------- */

static void watch_saturation(lg_coord *c, int64_t now)
{
    lg_plan *p = c->p;
    lg_shared *sh = lg_plan_shared(p);
    if (!c->stage_expected || sh->stop) return;
    while (c->judged < p->n_stages) {
        int s = c->judged;
        int64_t end = lg_coord_stage_start(c, s) + p->spec.stages[s].duration_ns;
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

/* --sweep-probe's probe run: the requests in flight, sampled
 * (lg_probe_sample keeps one every 0.5 s). */
static void probe_tick(lg_coord *c, int64_t now)
{
    lg_plan *p = c->p;
    uint64_t disp = 0, done = 0, failed = 0;
    for (int w = 0; w < p->k; w++)
        for (int s = 0; s < p->n_stages; s++) {
            lg_stage_stats *ss = lg_plan_stats(p, w, s);
            disp += lg_stats_live_load(&ss->dispatched);
            done += lg_stats_live_load(&ss->done);
            failed += lg_stats_live_load(&ss->failed);
        }
    lg_probe_sample(c->o->probe, now, lg_plan_shared(p)->t0_ns, disp, done, failed);
}

static void coord_tick(void *ctx)
{
    lg_coord *c = ctx;
    lg_shared *sh = lg_plan_shared(c->p);
    int sigs = *lg_signals_count();
    if (sigs > c->handled_signals) {
        c->handled_signals = sigs;
        if (!sh->interrupted) {
            __atomic_store_n(&sh->interrupted, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
            if (c->progress) fputc('\n', stderr);
            fprintf(stderr,
                    "loadgen: %s: stopping, draining in-flight requests (up to %.1f s; "
                    "again to cancel them)\n",
                    lg_signals_name(lg_signals_last()), (double)c->o->drain_timeout_ns / 1e9);
        } else {
            __atomic_store_n(&sh->stop, 2, __ATOMIC_RELAXED);
        }
    }
    int64_t now = rb_now_ns();
    watch_saturation(c, now);
    if (c->o->probe) probe_tick(c, now);
    lg_knee_watch_tick(c->knee, now);
    lg_scrape_tick(c->scrape, now);
    if (lg_fleet_watch(c->fleet, c->p, c->stage_clock, c->progress, now)) return;
    if (c->progress && now - c->last_progress_ns >= 250000000LL && now >= sh->t0_ns) {
        c->last_progress_ns = now;
        lg_progress_print(c->p, c->stage_clock, now);
    }
}

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
    double rate; /* a version 2 certificate predicts rho from the workload */
    lg_cert_workload w;
    lg_plan_cert_inputs(o, &rate, &w);
    lg_cert_decision d;
    lg_cert_check_plan(&cert, host, k, rate, &w, &d);
    lg_cert_note_cpu_latency(&cert, o->cpu_latency_us, &d);
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
                             .output_tokens = w.output_tokens,
                             .predicted_rho = d.predicted_rho,
                             .safe_rho = d.entry ? d.entry->safe_rho : NAN,
                             .certified_max_rate = NAN,
                             .busy_per_request_us = lg_cert_busy_us(&cert, k, &w)};
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
            return LG_EXIT_CERT_REFUSED;
        }
        fprintf(stderr, "loadgen: warning: --force: %s\n", d.message);
    }
    return 0;
}

/* ---- the run ---------------------------------------------------------- */

/* Each worker holds up to its connection cap of sockets, plus its own few
 * (epoll, timers, its part file, curl's): with a soft descriptor limit
 * below that, the soft limit is raised to the hard one, and if that is still
 * short the run is warned that requests past it fail as client_fd_limit. */
static void check_fd_limit(const lg_plan *p)
{
    int64_t need = 0;
    for (int w = 0; w < p->k; w++) {
        int64_t c = lg_plan_worker_cap(p, w);
        if (c <= 0 || c > p->o->max_conn_per_worker) c = p->o->max_conn_per_worker;
        if (c > need) need = c;
    }
    need += 64;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        (int64_t)rl.rlim_cur >= need)
        return;
    if (rl.rlim_max > rl.rlim_cur) {
        struct rlimit up = {.rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) rl = up;
    }
    if (rl.rlim_cur == RLIM_INFINITY || (int64_t)rl.rlim_cur >= need) return;
    fprintf(stderr,
            "loadgen: warning: --max-connections-per-worker %d needs about %lld descriptors per "
            "worker, but the limit is %llu (ulimit -n, hard limit %llu): requests past it fail "
            "as client_fd_limit\n",
            p->o->max_conn_per_worker, (long long)need, (unsigned long long)rl.rlim_cur,
            (unsigned long long)rl.rlim_max);
}

/* Every process of the fleet takes the worst of every one's code, so all
 * leave together (or none does). */
static int agree(lg_runstate *r, int rc)
{
    return lg_fleet_agree(r->fleet, rc);
}

/* The server's metrics per stage: stage s from its start to the next one's
 * (the last to the final scrape), so the counters' deltas add up to the
 * run's. A closed-loop run's stages have no start times: only the run's. */
static void scrape_windows(lg_coord *c)
{
    int n = c->p->closed || c->p->n_stages > LG_MAX_STAGES ? 1 : c->p->n_stages;
    int64_t start[LG_MAX_STAGES], end[LG_MAX_STAGES];
    for (int s = 0; s < n; s++) {
        start[s] = lg_coord_stage_start(c, s);
        end[s] = s + 1 < n ? lg_coord_stage_start(c, s + 1) : INT64_MAX;
    }
    if (c->scrape && lg_scrape_windows(c->scrape, start, end, n)) {
        fprintf(stderr, "loadgen: out of memory: the server's metrics are not scraped\n");
        lg_scrape_free(c->scrape);
        c->scrape = NULL;
    }
}

/* After the run: each stage's wall-clock window (a timed stage's scheduled
 * end, the last one's the run's end) for the Prometheus queries. */
static void promql_collect(lg_coord *c)
{
    if (!c->promql) return;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    int64_t mono = rb_now_ns();
    double real_now = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9;
    int n = c->p->closed || c->p->n_stages > LG_MAX_STAGES ? 1 : c->p->n_stages;
    double start[LG_MAX_STAGES], end[LG_MAX_STAGES];
    for (int s = 0; s < n; s++) {
        int64_t st = lg_coord_stage_start(c, s), d = c->o->stages[s].duration_ns;
        start[s] = real_now - (double)(mono - st) / 1e9;
        end[s] = s + 1 < n && d > 0 ? start[s] + (double)d / 1e9 : real_now;
    }
    lg_promql_collect(c->promql, start, end, n);
}

static void coord_free(lg_coord *c)
{
    lg_sched_free(c->stage_clock);
    free(c->stage_expected);
    lg_knee_watch_free(c->knee);
    lg_scrape_free(c->scrape);
    lg_promql_free(c->promql);
    c->scrape = NULL;
    c->promql = NULL;
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
    lg_outputs_forget(&r->out);
}

/* The fleet's results, at the reporter, judged and reported (lg_run_report);
 * elsewhere (the other ranks) only this process's part of the collect. */
static int collect_and_report(lg_runstate *r)
{
    lg_fleet_results res = {0};
    lg_fleet_job job = {.p = &r->plan, .lost = r->lost, .lost_sig = r->lost_sig};
    int rc = lg_fleet_collect(r->fleet, r->o, &r->plan, &r->out, r->result_name, &job, &res);
    if (res.k) {
        int *lost = r->lost, *lost_sig = r->lost_sig;
        r->lost = res.lost;
        r->lost_sig = res.lost_sig;
        r->records = res.records;
        rc |= lg_run_report(r, res.k, res.slots, res.blocks, res.merged);
        r->lost = lost;
        r->lost_sig = lost_sig;
        r->records = NULL;
    }
    lg_fleet_results_free(&res);
    return rc;
}

/* --mpi-salvage N: the ranks' snapshots (lg_fleet_salvage) merged and
 * reported as the run's rank 0 would have, then removed. */
static int salvage(lg_runstate *r)
{
    lg_plan *p = &r->plan;
    const lg_opts *o = r->o;
    int rc = lg_fleet_salvage(r->fleet, p, o->result_dir, r->result_name, r->lost);
    if (rc) return rc;
    rc = collect_and_report(r);
    if (!r->wrote) return 1;
    lg_fleet_salvage_clean(r->fleet, p, o->result_dir, r->result_name);
    return rc ? rc : 1; /* a salvaged run is never a whole one */
}

/* The result's name and path (rank 0's, under --mpi), its directory
 * writable and its files free to take. Returns 0 or 2. */
static int run_result_name(lg_runstate *r, char *result_name, size_t name_cap, char *result_path,
                           size_t path_cap)
{
    const lg_opts *o = r->o;
    lg_outputs *out = &r->out;
    int exit_code = 0;
    if (o->save_result) {
        int rc = rb_dir_check_writable(o->result_dir);
        if (rc) {
            fprintf(stderr, "loadgen: --result-dir: '%s' is not writable: %s\n", o->result_dir,
                    strerror(-rc));
            exit_code = 2;
        }
        if (o->result_filename[0])
            snprintf(result_name, name_cap, "%s", o->result_filename);
        else
            lg_outputs_default_name(o, result_name, name_cap);
        lg_fleet_share(r->fleet, result_name, name_cap);
        snprintf(r->result_name, sizeof r->result_name, "%s", result_name);
        snprintf(result_path, path_cap, "%s/%s", o->result_dir, result_name);
    }
    lg_outputs_init(out, result_path);
    lg_fleet_outputs(r->fleet, out);
    if (!exit_code && o->save_result && lg_outputs_check(o, result_name, out)) exit_code = 2;
    return exit_code;
}

/* The plan (lg_plan.h) and the watch's view of its schedule: the stage
 * clock, and under --sweep-until-saturation each stage's scheduled count.
 * Returns 0 or 2. */
static int run_plan(lg_runstate *r, int k, char *err, size_t errlen)
{
    lg_opts *o = r->o;
    lg_plan *p = &r->plan;
    lg_coord *coord = &r->coord;
    int exit_code = 0;
    if (lg_plan_build(p, o, k, lg_fleet_forks(r->fleet, o), err, errlen)) {
        fprintf(stderr, "loadgen: %s\n", err[0] ? err : "cannot build the dataset");
        exit_code = 2;
    }
    *coord = (lg_coord){.p = p, .o = o, .judged = 0, .fleet = r->fleet};
    if (!exit_code && !p->closed) {
        coord->stage_clock = lg_sched_new(&p->spec, err, errlen);
        if (!coord->stage_clock) {
            fprintf(stderr, "loadgen: schedule: %s\n", err);
            exit_code = 2;
        }
    }
    if (!exit_code && o->sweep_until_saturation && coord->stage_clock) {
        /* The scheduled count of each stage is the target the achieved
         * count is compared with (not rate x duration: no Poisson noise). */
        coord->stage_expected = calloc((size_t)p->n_stages, sizeof *coord->stage_expected);
        lg_sched *it = lg_sched_new(&p->spec, err, errlen);
        lg_arrival a;
        while (it && coord->stage_expected && lg_sched_next(it, &a))
            if (a.stage >= 0 && a.stage < p->n_stages) coord->stage_expected[a.stage]++;
        lg_sched_free(it);
    }
    return exit_code;
}

/* The coordinator's watch: the progress line, the knee, the server's
 * metrics, and the lost workers' tables. Returns 0 or 1 (no memory). */
static int run_watch(lg_runstate *r, int k)
{
    const lg_opts *o = r->o;
    lg_plan *p = &r->plan;
    lg_coord *coord = &r->coord;
    int exit_code = 0;
    /* Where the coordinator cannot read every worker's live counters (under
     * --mpi), no knee watch and no scrape. */
    int live = lg_fleet_where(r->fleet)->live;
    coord->progress = lg_fleet_progress(r->fleet, o);
    coord->knee = live ? lg_knee_watch_new(p, coord->progress) : NULL;
    coord->scrape = live ? lg_scrape_for_run(o, p->forked) : NULL;
    if (live && o->prometheus_url[0])
        coord->promql = lg_promql_new(o->prometheus_url, o->prometheus_scrape_interval_ns);
    r->lost = calloc((size_t)k, sizeof *r->lost);
    r->lost_sig = calloc((size_t)k, sizeof *r->lost_sig);
    if (!r->lost || !r->lost_sig) {
        fprintf(stderr, "loadgen: out of memory\n");
        exit_code = 1;
    }
    return exit_code;
}

/* The last steps before the start instant: the fd limit, the warm-up, the
 * deadline's walk of the schedule, the start instant itself (--mpi: agreed
 * by the clock sync) and the scrape windows. */
static void run_start(lg_runstate *r, int k)
{
    const lg_opts *o = r->o;
    lg_plan *p = &r->plan;
    lg_shared *sh = lg_plan_shared(p);
    check_fd_limit(p);
    /* The warm-up (one process, the reporter: under --mpi the others wait
     * in the clock sync) comes before the start instant, so it delays no arrival. */
    if (o->num_warmups && lg_fleet_where(r->fleet)->reporter && p->ds.n && p->bodies) {
        if (lg_warmup_run(o, p->url, p->bodies[0], p->body_len[0], p->stamps, lg_signals_count(),
                          &r->warmup))
            fprintf(stderr, "loadgen: warm-up: could not set up its requests\n");
        else if (!o->quiet)
            fprintf(stderr, "loadgen: warm-up: %d requests, %d failed%s%s%s, %.2f s\n",
                    r->warmup.requested, r->warmup.failed, r->warmup.first_error[0] ? " (" : "",
                    r->warmup.first_error, r->warmup.first_error[0] ? ")" : "", r->warmup.seconds);
    }
    /* The deadline's walk of the schedule (as long as the run's arrivals:
     * seconds for 10^8) comes before the start instant is fixed, so that
     * it does not make the first requests late; a signal cuts it short. */
    lg_signals_phase("walk");
    int64_t end_offset = lg_plan_end_offset(p, lg_signals_count());
    sh->t0_ns = lg_fleet_start(r->fleet, p, k);
    p->end_deadline_ns = end_offset ? sh->t0_ns + end_offset : 0;
    scrape_windows(&r->coord);
    fflush(stdout);
    fflush(stderr);
}

int lg_run(lg_opts *o)
{
    char err[512] = "";
    int exit_code = 0, handlers = 0;
    lg_signals_saved old_handlers;
    lg_runstate *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    r->o = o;
    lg_outputs *out = &r->out;
    lg_plan *p = &r->plan;
    lg_coord *coord = &r->coord;
    lg_outputs_init(out, "");
    if (!(r->fleet = lg_fleet_open(o, &exit_code))) {
        free(r);
        return exit_code;
    }
    const lg_fleet_place *at = lg_fleet_where(r->fleet);
    rb_host_read(&r->host);
    if (at->salvage) o->save_detailed = 0; /* the ranks' records are already in their files */
    int k = at->k ? at->k : (o->num_workers > 0 ? o->num_workers : 1);
    r->num_workers = at->k ? k : o->num_workers;
    /* The receive clock: wire where this host may capture (each rank its own). */
    if (!at->salvage && (exit_code = agree(r, lg_capture_resolve(o, k)))) goto done;
    r->safe_rho = NAN;
    r->budget_us = 100.0;
    r->transport_us = NAN;
    /* Each host checks its own workers against its own certificate. */
    if (o->certificate[0])
        exit_code = check_certificate(o, &r->host, lg_fleet_workers_here(r->fleet, k), r->cert_note,
                                      sizeof r->cert_note, &r->safe_rho, &r->budget_us,
                                      &r->transport_us, &r->cert_sum);
    if ((exit_code = agree(r, exit_code))) goto done;
    lg_fleet_set_certificate(r->fleet, r->cert_note);
    char result_name[600] = "", result_path[2048] = "";
    exit_code =
        run_result_name(r, result_name, sizeof result_name, result_path, sizeof result_path);
    if ((exit_code = agree(r, exit_code))) goto done;
    exit_code = run_plan(r, k, err, sizeof err);
    /* From before the run's first file is created until its last is
     * written, a signal is counted, not fatal: during the set-up it stops
     * the run before its first request (the workers count every arrival as
     * not dispatched, the partial report is written and the parts and the
     * lock removed); during the run the workers drain; after it the files
     * are written all the same (lg_signals_phase). A hang-up (the terminal or
     * the ssh session gone) is taken as SIGTERM. */
    if (!exit_code) {
        lg_signals_install(&old_handlers);
        handlers = 1;
    }
    /* Under --mpi this process holds one slot: its rank's worker. */
    int n_slots = at->n_slots ? at->n_slots : k;
    if (!exit_code && o->save_result &&
        lg_outputs_open(o, n_slots, o->result_dir, result_name, out))
        exit_code = 2;
    if ((exit_code = agree(r, exit_code))) goto done;
    p->detailed_fd = out->part_fd;
    int mrc = lg_plan_map(p, at->first, n_slots);
    if (mrc) {
        fprintf(stderr, "loadgen: cannot map %zu bytes of shared memory: %s\n", p->shm_bytes,
                strerror(-mrc));
        exit_code = 1;
    }
    if ((exit_code = agree(r, exit_code))) goto done;
    lg_shared *sh = lg_plan_shared(p);
    exit_code = run_watch(r, k);
    if ((exit_code = agree(r, exit_code))) goto done;
    if (at->salvage) {
        exit_code = salvage(r);
        goto done;
    }
    run_start(r, k);
    lg_fleet_job job = {.p = p,
                        .tick = run_tick,
                        .ctx = r,
                        .child_exit = child_exit,
                        .lost = r->lost,
                        .lost_sig = r->lost_sig};
    exit_code = lg_fleet_run(r->fleet, &job);
    if (coord->progress) fputc('\n', stderr);
    /* A signal before the workers started that no watch tick saw (an
     * in-process worker ends at once on it): the run is interrupted. */
    if (*lg_signals_count() > coord->handled_signals) sh->interrupted = 1;
    lg_signals_workers_ended();

    lg_scrape_final(coord->scrape);
    promql_collect(coord);
    if (collect_and_report(r)) exit_code = 1;
    if ((sh->interrupted || lg_signals_late()) && exit_code == 0)
        exit_code = 128 + lg_signals_last();
done:
    lg_outputs_free(out);
    if (handlers) lg_signals_restore(&old_handlers);
    free(r->lost);
    free(r->lost_sig);
    coord_free(coord);
    lg_plan_free(p);
    lg_fleet_close(r->fleet);
    free(r);
    return exit_code;
}
