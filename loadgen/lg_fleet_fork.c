/* lg_fleet_fork: the fork back-end of lg_fleet.h (its table, lg_fleet_backend.h),
 * and the workers' run, which both back-ends use (lg_fleet_fork_run). The workers share the plan's
 * anonymous region; their lifecycle is common/rb_proc's, and the
 * coordinator reaps them without blocking every 20 ms. One process holds
 * every slot: it agrees with itself, shares nothing, and merges the slots
 * itself. */

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lg_fleet_backend.h"
#include "lg_signals.h"
#include "lg_worker.h"
#include "rb_clock.h"
#include "rb_proc.h"

static int run_in_process(lg_fleet_job *f)
{
    lg_plan *p = f->p;
    p->tick = f->tick;
    p->tick_ctx = f->ctx;
    int w = p->slot_base; /* 0, or this rank's worker under --mpi */
    int rc = lg_worker_run(p, w);
    if (rc) {
        f->lost[0] = 1;
        if (lg_plan_slot(p, w)->error[0])
            fprintf(stderr, "loadgen: worker %d: %s\n", w, lg_plan_slot(p, w)->error);
    }
    return 0;
}

/* A forked worker's body (rb_procs_spawn exits with its code). */
static int worker_main(void *ctx, int w)
{
    lg_fleet_job *f = ctx;
    int rc = lg_worker_run(f->p, w);
    if (f->child_exit) f->child_exit(f->ctx);
    curl_global_cleanup();
    return rc;
}

static void worker_ended(void *ctx, int w, int st)
{
    lg_fleet_job *f = ctx;
    if (WIFSIGNALED(st)) {
        f->lost[w] = 1;
        f->lost_sig[w] = WTERMSIG(st);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        f->lost[w] = 1;
        if (lg_plan_slot(f->p, w)->error[0])
            fprintf(stderr, "loadgen: worker %d: %s\n", w, lg_plan_slot(f->p, w)->error);
    }
}

int lg_fleet_fork_run(lg_fleet_job *f)
{
    lg_plan *p = f->p;
    int k = p->k, exit_code = 0;
    if (!p->forked) return run_in_process(f);
    rb_procs ps;
    if (rb_procs_init(&ps, k)) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    lg_shared *sh = lg_plan_shared(p);
    for (int w = 0; w < k; w++) {
        /* The coordinator decides when to stop (the region's stop flag);
         * a worker ignores the stop signals and dies with it (rb_proc.h). */
        int rc = rb_procs_spawn(&ps, w, RB_PROC_IGNORE_STOP_SIGNALS, worker_main, f);
        if (rc < 0) {
            fprintf(stderr, "loadgen: fork: %s\n", strerror(-rc));
            sh->stop = 2;
            f->lost[w] = 1;
            exit_code = 1;
        }
    }
    int64_t kill_at = p->end_deadline_ns ? p->end_deadline_ns + 2000000000LL : 0;
    while (ps.alive > 0) {
        f->tick(f->ctx);
        rb_procs_reap(&ps, 0, worker_ended, f);
        if (kill_at && rb_now_ns() > kill_at) {
            rb_procs_signal(&ps, SIGKILL);
            kill_at = 0;
        }
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
    rb_procs_free(&ps);
    return exit_code;
}

static int fork_forks(const lg_fleet *f, const lg_opts *o)
{
    (void)f;
    return o->num_workers > 0;
}

static int fork_progress(const lg_fleet *f, const lg_opts *o)
{
    (void)f;
    return o->progress >= 0 ? o->progress : isatty(STDERR_FILENO);
}

static int64_t fork_start(lg_fleet *f, const lg_plan *p, int k)
{
    (void)f;
    int64_t margin = p->forked ? 30000000LL + 5000000LL * k : 5000000LL;
    return rb_now_ns() + margin;
}

/* Every slot is in this process's region: merged exactly, in place. */
int lg_fleet_fork_collect(lg_fleet *f, const lg_opts *o, lg_plan *p, lg_outputs *out,
                          const char *result_name, const lg_fleet_job *job, lg_fleet_results *res)
{
    (void)f, (void)o, (void)out, (void)result_name;
    int k = p->k;
    res->own = 1;
    res->slots = calloc((size_t)k, sizeof *res->slots);
    res->blocks = calloc((size_t)k * (size_t)p->n_stages, sizeof *res->blocks);
    lg_signals_phase("merge");
    if (!res->slots || !res->blocks || lg_merge_workers(p, job->lost, &res->merged_)) {
        fprintf(stderr, "loadgen: out of memory merging results\n");
        return 1;
    }
    for (int w = 0; w < k; w++) {
        res->slots[w] = lg_plan_slot(p, w);
        for (int s = 0; s < p->n_stages; s++)
            res->blocks[(size_t)w * (size_t)p->n_stages + (size_t)s] = lg_plan_stats(p, w, s);
    }
    lg_merge_samples(p, job->lost, &res->merged_);
    res->k = k;
    res->merged = &res->merged_;
    res->lost = job->lost;
    res->lost_sig = job->lost_sig;
    return 0;
}

static const lg_fleet_ops fork_ops = {
    .forks = fork_forks,
    .progress = fork_progress,
    .start = fork_start,
    .collect = lg_fleet_fork_collect,
};

int lg_fleet_fork_open(lg_fleet *f, const lg_opts *o)
{
    f->ops = &fork_ops;
    f->place = (lg_fleet_place){.k = 0, .first = 0, .n_slots = 0, .reporter = 1, .live = 1};
    (void)o;
    return 0;
}
