/* Unit tests for rb_file: atomic writes and the writable-directory check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rb_file.h"

static char dir[256];

static int make_dir(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/rb_file_test.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void atomic_write_is_invisible_until_commit(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/report.json", dir);
    rb_afile f;
    assert_int_equal(rb_afile_open(&f, path), 0);
    fputs("{\"a\":1}", f.fp);
    assert_int_equal(access(path, F_OK), -1); /* not there yet */
    assert_int_equal(rb_afile_commit(&f), 0);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(rb_read_file(path, 1 << 20, &buf, &len), 0);
    assert_string_equal(buf, "{\"a\":1}");
    assert_int_equal(len, 7);
    free(buf);
    assert_int_equal(access(f.tmp, F_OK), -1); /* temporary gone */
}

static void abort_leaves_nothing(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/never.json", dir);
    rb_afile f;
    assert_int_equal(rb_afile_open(&f, path), 0);
    fputs("partial", f.fp);
    rb_afile_abort(&f);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(f.tmp, F_OK), -1);
}

static void read_file_enforces_its_bound(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/big", dir);
    char big[10000];
    memset(big, 'x', sizeof big);
    assert_int_equal(rb_write_file_atomic(path, big, sizeof big), 0);
    char *buf = NULL;
    assert_int_equal(rb_read_file(path, 100, &buf, NULL), -EFBIG);
    assert_int_equal(rb_read_file("/nonexistent/file", 100, &buf, NULL), -ENOENT);
}

static void dir_check_creates_and_refuses(void **state)
{
    char sub[300];
    snprintf(sub, sizeof sub, "%s/a/b/c", dir);
    assert_int_equal(rb_dir_check_writable(sub), 0);
    struct stat st;
    assert_int_equal(stat(sub, &st), 0);
    char file[300];
    snprintf(file, sizeof file, "%s/plainfile", dir);
    assert_int_equal(rb_write_file_atomic(file, "x", 1), 0);
    assert_int_not_equal(rb_dir_check_writable(file), 0);
    if (geteuid() != 0) { /* root writes anywhere; the check is for others */
        char ro[300];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        assert_int_equal(mkdir(ro, 0500), 0);
        assert_int_equal(rb_dir_check_writable(ro), -EACCES);
    }
}

/* A FIFO or a device is refused without waiting for a writer or reading it
 * (the alarm turns a hang into a failure); an oversized file by its size,
 * before a byte is read: a 2 GB sparse file comes back at once. */
static void read_file_refuses_what_is_not_a_regular_file(void **state)
{
    char fifo[300], sparse[300];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sparse, sizeof sparse, "%s/sparse", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *buf = NULL;
    alarm(10);
    assert_int_equal(rb_read_file(fifo, 1 << 20, &buf, NULL), -RB_ENOTREG);
    assert_int_equal(rb_read_file("/dev/zero", 1 << 20, &buf, NULL), -RB_ENOTREG);
    assert_int_equal(rb_read_file(dir, 1 << 20, &buf, NULL), -EISDIR);
    int fd = open(sparse, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)2 << 30), 0);
    close(fd);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    assert_int_equal(rb_read_file(sparse, (size_t)1 << 30, &buf, NULL), -EFBIG);
    getrusage(RUSAGE_SELF, &after);
    alarm(0);
    /* not read: the resident set did not grow by the file (kB) */
    assert_true(after.ru_maxrss - before.ru_maxrss < 64 * 1024);
    assert_string_equal(rb_file_strerror(-RB_ENOTREG),
                        "not a regular file (a FIFO, device or socket)");
}

/* A write that fails is not committed: /dev/full fails every write with
 * ENOSPC, and the temporary then never becomes the file. */
static void failed_write_is_never_committed(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/full.json", dir);
    rb_afile f;
    assert_int_equal(rb_afile_open(&f, path), 0);
    FILE *full = fopen("/dev/full", "w");
    assert_non_null(full);
    /* the stream's error flag, as a buffered write to a full disk leaves it */
    fclose(f.fp);
    f.fp = full;
    fputs("{\"a\":1}", f.fp);
    assert_int_not_equal(rb_afile_commit(&f), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(f.tmp, F_OK), -1);
}

/* Records reach the file whole or are counted lost: on /dev/full all are
 * lost; past a file-size limit the record that straddles it is cut back and
 * counted, the ones before are kept whole, and the file holds no half line. */
static void records_are_whole_or_counted_lost(void **state)
{
    int fd = open("/dev/full", O_WRONLY);
    assert_true(fd >= 0);
    rb_recfile r;
    assert_int_equal(rb_rec_init(&r, fd, 4096), 0);
    for (int i = 0; i < 10; i++)
        rb_rec_add(&r, "{\"i\":1}\n", 8);
    assert_int_equal(rb_rec_flush(&r), -ENOSPC);
    assert_int_equal(r.lost, 10);
    assert_int_equal(r.written, 0);
    assert_int_equal(r.err, -ENOSPC);
    rb_rec_free(&r);
    close(fd);

    char path[300];
    snprintf(path, sizeof path, "%s/limited.jsonl", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* 100 bytes: 12 records of 8 fit, the 13th straddles the limit */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {100, 100};
        setrlimit(RLIMIT_FSIZE, &rl);
        int f2 = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        rb_recfile q;
        if (f2 < 0 || rb_rec_init(&q, f2, 24) != 0) _exit(10);
        for (int i = 0; i < 20; i++)
            rb_rec_add(&q, "{\"i\":2}\n", 8);
        rb_rec_flush(&q);
        _exit(q.written == 12 && q.lost == 8 && q.err == -EFBIG ? 0 : 11);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(rb_read_file(path, 1 << 20, &buf, &len), 0);
    assert_int_equal(len, 96);
    assert_int_equal(buf[len - 1], '\n');
    free(buf);
}

/* One holder at a time: a second taker is refused and told the pid; after
 * release the lock file is gone and the lock can be taken again. */
static void lock_refuses_a_second_holder(void **state)
{
    char path[300], lp[320];
    snprintf(path, sizeof path, "%s/run.json", dir);
    snprintf(lp, sizeof lp, "%s.lock", path);
    long holder = -1;
    int fd = rb_lock_take(path, &holder);
    assert_true(fd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long h = 0;
        int rc = rb_lock_take(path, &h);
        _exit(rc == -EWOULDBLOCK && h == (long)getppid() ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    rb_lock_release(path, fd);
    assert_int_equal(access(lp, F_OK), -1);
    fd = rb_lock_take(path, &holder);
    assert_true(fd >= 0);
    rb_lock_release(path, fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(atomic_write_is_invisible_until_commit),
        cmocka_unit_test(abort_leaves_nothing),
        cmocka_unit_test(read_file_enforces_its_bound),
        cmocka_unit_test(dir_check_creates_and_refuses),
        cmocka_unit_test(read_file_refuses_what_is_not_a_regular_file),
        cmocka_unit_test(failed_write_is_never_committed),
        cmocka_unit_test(records_are_whole_or_counted_lost),
        cmocka_unit_test(lock_refuses_a_second_holder),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
