/* rb_proc: see rb_proc.h. */
#include "rb_proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int rb_procs_init(rb_procs *ps, int n)
{
    *ps = (rb_procs){.n = n, .parent = getpid()};
    if (n <= 0) return 0;
    ps->pid = calloc((size_t)n, sizeof *ps->pid);
    ps->status = calloc((size_t)n, sizeof *ps->status);
    ps->reaped = calloc((size_t)n, sizeof *ps->reaped);
    if (!ps->pid || !ps->status || !ps->reaped) {
        rb_procs_free(ps);
        return -ENOMEM;
    }
    return 0;
}

void rb_procs_free(rb_procs *ps)
{
    free(ps->pid);
    free(ps->status);
    free(ps->reaped);
    ps->pid = NULL;
    ps->status = NULL;
    ps->reaped = NULL;
    ps->n = ps->alive = 0;
}

int rb_procs_spawn(rb_procs *ps, int i, unsigned flags, rb_proc_main fn, void *ctx)
{
    if (i < 0 || i >= ps->n || ps->pid[i] > 0 || ps->reaped[i]) return -EINVAL;
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        if (flags & RB_PROC_IGNORE_STOP_SIGNALS) {
            signal(SIGINT, SIG_IGN);
            signal(SIGTERM, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
        }
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != ps->parent) _exit(1); /* the parent died before the line above */
        int rc = fn(ctx, i);
        rb_procs_free(ps);
        exit(rc);
    }
    ps->pid[i] = pid;
    ps->alive++;
    return 0;
}

static int index_of(const rb_procs *ps, pid_t pid)
{
    for (int i = 0; i < ps->n; i++)
        if (ps->pid[i] == pid) return i;
    return -1;
}

static void ended(rb_procs *ps, int i, int st, void (*on_end)(void *, int, int), void *ctx)
{
    ps->pid[i] = 0;
    ps->status[i] = st;
    ps->reaped[i] = 1;
    ps->alive--;
    if (on_end) on_end(ctx, i, st);
}

int rb_procs_reap(rb_procs *ps, int block, void (*on_end)(void *ctx, int i, int status), void *ctx)
{
    if (block && ps->alive > 0) { /* one wait, for any of them */
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        int i = pid > 0 ? index_of(ps, pid) : -1;
        if (i >= 0) ended(ps, i, st, on_end, ctx);
    }
    /* Then each of ours that ended, by its own pid: another child of the
     * process (not ours) is never reaped here. */
    for (int i = 0; i < ps->n && ps->alive > 0; i++) {
        if (ps->pid[i] <= 0) continue;
        int st;
        if (waitpid(ps->pid[i], &st, WNOHANG) == ps->pid[i]) ended(ps, i, st, on_end, ctx);
    }
    return ps->alive;
}

void rb_procs_signal(const rb_procs *ps, int sig)
{
    for (int i = 0; i < ps->n; i++)
        if (ps->pid[i] > 0) kill(ps->pid[i], sig);
}

int rb_proc_status_ok(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

const char *rb_proc_stat(pid_t pid, char *buf, size_t cap)
{
    if (pid <= 0 || cap < 2) return NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f) return NULL;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' ? paren + 1 : NULL;
}
