/* rb_proc: the one process lifecycle of the suite's multi-process programs,
 * simserver's workers and loadgen's forked workers: fork n children that
 * each run a function and exit with its code, die with their parent, and
 * are reaped with their statuses; a stop is forwarded as a signal; past a
 * deadline the rest are killed.
 *
 * Where the two programs differ, and why (the flags say it at the call):
 * - loadgen's workers ignore SIGINT, SIGTERM and SIGHUP
 *   (RB_PROC_IGNORE_STOP_SIGNALS): the coordinator decides when they stop,
 *   through the stop flag of their shared region, so every worker drains the
 *   same way and at the same instant; a terminal's ^C reaches the whole
 *   process group, and must not stop a worker behind the coordinator's back.
 * - simserver's workers keep their own SIGTERM handler: each one drains its
 *   streams for its grace time when the parent forwards the signal
 *   (rb_procs_signal); they share no region with the parent to carry a flag.
 * - loadgen polls (rb_procs_reap without blocking) every 20 ms, since its
 *   coordinator also shows progress and watches saturation; simserver's
 *   parent has nothing else to do and blocks (block = 1), waking on signals.
 * - loadgen kills the workers left past the run's end deadline
 *   (rb_procs_signal with SIGKILL); simserver's workers bound their own
 *   drain, so its parent has no deadline of its own.
 * Both kinds die with their parent (PR_SET_PDEATHSIG, SIGKILL): a worker
 * must not outlive the process that reaps it and owns its results or port.
 *
 * Single-threaded: call from the parent's one thread. */
#ifndef RB_PROC_H
#define RB_PROC_H

#include <sys/types.h>

enum {
    RB_PROC_IGNORE_STOP_SIGNALS = 1, /* the child ignores SIGINT, SIGTERM, SIGHUP */
};

typedef struct rb_procs {
    int n;        /* slots */
    pid_t *pid;   /* [n]: > 0 while the child runs; 0 never started or reaped */
    int *status;  /* [n]: waitpid's status once reaped */
    int *reaped;  /* [n]: 1 once reaped */
    int alive;    /* children started and not yet reaped */
    pid_t parent; /* the parent's pid, for the child's check */
} rb_procs;

/* The child's body: runs in child i; its return value is the exit code. */
typedef int (*rb_proc_main)(void *ctx, int i);

/* Returns 0 or -ENOMEM. */
int rb_procs_init(rb_procs *ps, int n);
void rb_procs_free(rb_procs *ps);

/* Forks child i (0 <= i < n, not started yet): it sets the signal policy of
 * flags and PR_SET_PDEATHSIG, exits at once if the parent already died, runs
 * fn(ctx, i), frees ps and calls exit (not _exit: atexit handlers and the
 * leak checker run) with fn's code. Returns 0 in the parent, or a negative
 * errno (fork's). */
int rb_procs_spawn(rb_procs *ps, int i, unsigned flags, rb_proc_main fn, void *ctx);

/* Reaps the children that ended: without blocking (block 0), or waiting for
 * one first (block 1: any child of the process, for a caller that has no
 * others; a signal's EINTR returns at once, so the caller can act on it).
 * Without blocking only ps's own pids are waited for. on_end(ctx, i,
 * status), if given, is called per reaped child. Returns the children still
 * alive. */
int rb_procs_reap(rb_procs *ps, int block, void (*on_end)(void *ctx, int i, int status), void *ctx);

/* Sends sig to every child still alive. */
void rb_procs_signal(const rb_procs *ps, int sig);

/* 1 if status is a clean exit (code 0). */
int rb_proc_status_ok(int status);

/* Reads /proc/PID/stat into buf[0..cap) and returns the text after the
 * process name's closing parenthesis (the name may hold spaces and
 * parentheses): " S 1 ..." from the state field on; NULL when the process
 * is gone or the file is malformed. */
const char *rb_proc_stat(pid_t pid, char *buf, size_t cap);

#endif
