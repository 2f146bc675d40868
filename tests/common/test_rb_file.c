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
#include <sys/stat.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(atomic_write_is_invisible_until_commit),
        cmocka_unit_test(abort_leaves_nothing),
        cmocka_unit_test(read_file_enforces_its_bound),
        cmocka_unit_test(dir_check_creates_and_refuses),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
