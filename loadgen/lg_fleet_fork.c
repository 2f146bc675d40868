/* lg_fleet_fork: the fork back-end of lg_fleet.h. The workers share the
 * plan's anonymous region; the coordinator polls waitpid every 20 ms. */

#include "lg_fleet.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lg_worker.h"
#include "rb_clock.h"

static int run_in_process(lg_fleet *f)
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

int lg_fleet_fork_run(lg_fleet *f)
{
    lg_plan *p = f->p;
    int k = p->k, exit_code = 0;
    if (!p->forked) return run_in_process(f);
    pid_t *pids = calloc((size_t)k, sizeof *pids);
    if (!pids) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    lg_shared *sh = lg_plan_shared(p);
    pid_t parent = getpid();
    for (int w = 0; w < k; w++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "loadgen: fork: %s\n", strerror(errno));
            sh->stop = 2;
            f->lost[w] = 1;
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
            free(pids);
            if (f->child_exit) f->child_exit(f->ctx);
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
        f->tick(f->ctx);
        for (int w = 0; w < k; w++) {
            if (pids[w] <= 0) continue;
            int st;
            pid_t r = waitpid(pids[w], &st, WNOHANG);
            if (r != pids[w]) continue;
            pids[w] = 0;
            alive--;
            if (WIFSIGNALED(st)) {
                f->lost[w] = 1;
                f->lost_sig[w] = WTERMSIG(st);
            } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
                f->lost[w] = 1;
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
    free(pids);
    return exit_code;
}
