/* Unit tests for rb_proc: children run their function and exit with its
 * code, are reaped with their statuses by index, follow the signal policy,
 * are signalled, and die with their parent. Every wait is bounded: a child
 * that would wait for ever has an alarm, and the parent's waits are for
 * children that end by themselves or are killed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rb_proc.h"

static int exit_with_index_code(void *ctx, int i)
{
    const int *codes = ctx;
    return codes[i];
}

typedef struct {
    int seen[8];
    int status[8];
    int calls;
} ends;

static void on_end(void *ctx, int i, int status)
{
    ends *e = ctx;
    e->seen[i]++;
    e->status[i] = status;
    e->calls++;
}

static void children_exit_with_their_codes_and_are_reaped_by_index(void **state)
{
    (void)state;
    int codes[3] = {0, 3, 0};
    rb_procs ps;
    assert_int_equal(rb_procs_init(&ps, 3), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(rb_procs_spawn(&ps, i, 0, exit_with_index_code, codes), 0);
    assert_int_equal(ps.alive, 3);
    ends e = {0};
    int alive = 3;
    while (alive > 0)
        alive = rb_procs_reap(&ps, 1, on_end, &e);
    assert_int_equal(e.calls, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(e.seen[i], 1);
        assert_true(ps.reaped[i]);
        assert_int_equal(ps.pid[i], 0);
        assert_true(WIFEXITED(e.status[i]));
        assert_int_equal(WEXITSTATUS(e.status[i]), codes[i]);
        assert_int_equal(rb_proc_status_ok(ps.status[i]), codes[i] == 0);
    }
    /* A slot that ran is not started again. */
    assert_int_equal(rb_procs_spawn(&ps, 1, 0, exit_with_index_code, codes), -EINVAL);
    assert_int_equal(rb_procs_spawn(&ps, 3, 0, exit_with_index_code, codes), -EINVAL);
    rb_procs_free(&ps);
}

static int raise_term_then_7(void *ctx, int i)
{
    (void)ctx;
    (void)i;
    raise(SIGTERM);
    return 7;
}

static void the_stop_signals_are_ignored_only_when_asked(void **state)
{
    (void)state;
    rb_procs ps;
    assert_int_equal(rb_procs_init(&ps, 2), 0);
    assert_int_equal(rb_procs_spawn(&ps, 0, RB_PROC_IGNORE_STOP_SIGNALS, raise_term_then_7, NULL),
                     0);
    assert_int_equal(rb_procs_spawn(&ps, 1, 0, raise_term_then_7, NULL), 0);
    while (rb_procs_reap(&ps, 1, NULL, NULL) > 0)
        ;
    assert_true(WIFEXITED(ps.status[0]));
    assert_int_equal(WEXITSTATUS(ps.status[0]), 7);
    assert_true(WIFSIGNALED(ps.status[1]));
    assert_int_equal(WTERMSIG(ps.status[1]), SIGTERM);
    rb_procs_free(&ps);
}

static int wait_for_a_signal(void *ctx, int i)
{
    (void)ctx;
    (void)i;
    alarm(20); /* the bound, should the parent never signal */
    for (;;)
        pause();
    return 0;
}

static void a_signal_reaches_every_live_child_and_reap_does_not_block(void **state)
{
    (void)state;
    rb_procs ps;
    assert_int_equal(rb_procs_init(&ps, 2), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            rb_procs_spawn(&ps, i, RB_PROC_IGNORE_STOP_SIGNALS, wait_for_a_signal, NULL), 0);
    /* Both wait: a reap without blocking returns at once with both alive. */
    assert_int_equal(rb_procs_reap(&ps, 0, NULL, NULL), 2);
    /* SIGTERM is ignored by their policy; SIGKILL is not. */
    rb_procs_signal(&ps, SIGKILL);
    while (rb_procs_reap(&ps, 1, NULL, NULL) > 0)
        ;
    for (int i = 0; i < 2; i++) {
        assert_true(WIFSIGNALED(ps.status[i]));
        assert_int_equal(WTERMSIG(ps.status[i]), SIGKILL);
    }
    rb_procs_free(&ps);
}

static int say_ready_then_wait(void *ctx, int i)
{
    (void)i;
    int fd = *(int *)ctx; /* rb_procs_spawn has set the death signal by now */
    char b = 1;
    if (write(fd, &b, 1) != 1) return 1;
    close(fd);
    alarm(20); /* the bound, should the parent's death not kill it */
    for (;;)
        pause();
    return 0;
}

static void a_child_dies_with_its_parent(void **state)
{
    (void)state;
    /* This test process adopts orphans, so the grandchild's end is ours to
     * see (not init's), with its status. */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int pfd[2], rfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(pipe(rfd), 0);
    pid_t mid = fork();
    assert_true(mid >= 0);
    if (mid == 0) { /* the parent of the fleet: starts one child, then dies */
        close(pfd[0]);
        rb_procs ps;
        if (rb_procs_init(&ps, 1) || rb_procs_spawn(&ps, 0, 0, say_ready_then_wait, &rfd[1]))
            _exit(2);
        close(rfd[1]);
        char b;
        if (read(rfd[0], &b, 1) != 1) _exit(3); /* the child runs, its death signal set */
        if (write(pfd[1], &ps.pid[0], sizeof ps.pid[0]) != (ssize_t)sizeof ps.pid[0]) _exit(4);
        _exit(0); /* without reaping: the kernel must end the child */
    }
    close(pfd[1]);
    close(rfd[0]);
    close(rfd[1]);
    pid_t grandchild = 0;
    assert_int_equal(read(pfd[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    close(pfd[0]);
    int st;
    assert_int_equal(waitpid(mid, &st, 0), mid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    /* The grandchild was killed by its parent's death, not by its alarm:
     * SIGKILL (PR_SET_PDEATHSIG), where the alarm would be SIGALRM. */
    assert_int_equal(waitpid(grandchild, &st, 0), grandchild);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGKILL);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* /proc/PID/stat read past the name: this process runs, a child that has
 * exited and is not yet reaped is a zombie, a reaped one is gone */
static void the_stat_line_gives_the_state_after_the_name(void **state)
{
    (void)state;
    char buf[1024];
    const char *st = rb_proc_stat(getpid(), buf, sizeof buf);
    assert_non_null(st);
    assert_int_equal(st[1], 'R'); /* reading it, this process runs */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(0);
    /* not reaped yet: the state turns to Z once the child has exited */
    int z = 0;
    for (int i = 0; i < 2000 && !z; i++) {
        st = rb_proc_stat(pid, buf, sizeof buf);
        assert_non_null(st);
        z = st[1] == 'Z';
        if (!z) usleep(1000);
    }
    assert_true(z);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_null(rb_proc_stat(pid, buf, sizeof buf));
    assert_null(rb_proc_stat(0, buf, sizeof buf));
    assert_null(rb_proc_stat(getpid(), buf, 1)); /* no room */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(children_exit_with_their_codes_and_are_reaped_by_index),
        cmocka_unit_test(the_stop_signals_are_ignored_only_when_asked),
        cmocka_unit_test(a_signal_reaches_every_live_child_and_reap_does_not_block),
        cmocka_unit_test(a_child_dies_with_its_parent),
        cmocka_unit_test(the_stat_line_gives_the_state_after_the_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
