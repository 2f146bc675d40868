/* lg_outputs: the run's file names from the result name (and each rank's),
 * the refusals before a run, the lock, the removal of a killed run's parts,
 * and the join of the workers' parts into the JSONL: complete under its own
 * name, a torn record sending what survived to the ".partial" name, a lost
 * worker's records left out and counted, records with token times as long
 * as their cap allows. Runs in a fresh temporary folder. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "lg_cli.h"
#include "lg_outputs.h"
#include "rb_file.h"

static char g_dir[256];

static int make_dir(void **state)
{
    snprintf(g_dir, sizeof g_dir, "%s/lg-outputs.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void put(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void names_from_the_result_path(void **state)
{
    lg_outputs out;
    lg_outputs_init(&out, "d/r.json");
    assert_string_equal(out.json, "d/r.json");
    assert_string_equal(out.jsonl, "d/r.jsonl");
    assert_string_equal(out.partial, "d/r.partial.jsonl");
    assert_int_equal(out.lock_fd, -1);
    lg_outputs_init(&out, "d/r"); /* no ".json": the stem is the whole name */
    assert_string_equal(out.jsonl, "d/r.jsonl");
    lg_outputs_init(&out, "d/r.json");
    lg_outputs_for_rank(&out, 0); /* rank 0 writes the result itself */
    assert_string_equal(out.json, "d/r.json");
    assert_string_equal(out.jsonl, "d/r.rank0.jsonl");
    lg_outputs_init(&out, "d/r.json");
    lg_outputs_for_rank(&out, 3);
    assert_string_equal(out.json, "d/r.rank3.json");
    assert_string_equal(out.jsonl, "d/r.rank3.jsonl");
    assert_string_equal(out.partial, "d/r.rank3.partial.jsonl");
}

static void the_default_name_says_rate_concurrency_and_model(void **state)
{
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.n_stages = 1;
    o.request_rate = 1.0 / 0.0;
    o.max_concurrency = 4;
    snprintf(o.model, sizeof o.model, "org/small-model");
    char name[600];
    lg_outputs_default_name(&o, name, sizeof name);
    const char *head = "loadgen-infqps-concurrency4-small-model-";
    assert_int_equal(strncmp(name, head, strlen(head)), 0);
    /* then the UTC time, YYYYmmdd-HHMMSS, and ".json" */
    assert_int_equal(strlen(name), strlen(head) + 15 + 5);
    assert_string_equal(name + strlen(name) - 5, ".json");
    o.n_stages = 2;
    o.max_concurrency = 0;
    lg_outputs_default_name(&o, name, sizeof name);
    assert_int_equal(strncmp(name, "loadgen-stagesqps-small-model-", 30), 0);
}

static void names_the_run_cannot_write_are_refused(void **state)
{
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.save_detailed = 1;
    lg_outputs out;
    char path[512];
    const char *bad[] = {".", "..", "a/b"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", g_dir, bad[i]);
        lg_outputs_init(&out, path);
        assert_int_equal(lg_outputs_check(&o, bad[i], &out), 2);
    }
    /* the JSONL's name taken by a folder */
    snprintf(path, sizeof path, "%s/dir.jsonl", g_dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/dir.json", g_dir);
    lg_outputs_init(&out, path);
    assert_int_equal(lg_outputs_check(&o, "dir.json", &out), 2);
    o.save_detailed = 0; /* then only the result's name counts */
    assert_int_equal(lg_outputs_check(&o, "dir.json", &out), 0);
    snprintf(path, sizeof path, "%s/fine.json", g_dir);
    lg_outputs_init(&out, path);
    assert_int_equal(lg_outputs_check(&o, "fine.json", &out), 0);
    assert_false(exists(path)); /* the check creates nothing */
}

static void one_run_holds_a_name(void **state)
{
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.save_detailed = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/held.json", g_dir);
    lg_outputs a, b;
    lg_outputs_init(&a, path);
    lg_outputs_init(&b, path);
    assert_int_equal(lg_outputs_open(&o, 1, g_dir, "held.json", &a), 0);
    assert_int_equal(lg_outputs_open(&o, 1, g_dir, "held.json", &b), 2);
    lg_outputs_free(&b);
    lg_outputs_free(&a);
    assert_int_equal(lg_outputs_open(&o, 1, g_dir, "held.json", &b), 0); /* released */
    lg_outputs_free(&b);
}

/* A part of a pid that no longer runs: a child that has exited. */
static long dead_pid(void)
{
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) _exit(0);
    assert_int_equal(waitpid(p, NULL, 0), p);
    return (long)p;
}

static void a_killed_runs_parts_are_removed(void **state)
{
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.save_detailed = 0;
    char stale[512], other[512], path[512];
    snprintf(stale, sizeof stale, "%s/.s.json.w1.%ld.part", g_dir, dead_pid());
    snprintf(other, sizeof other, "%s/.t.json.w1.%ld.part", g_dir, dead_pid());
    fclose(fopen(stale, "w"));
    fclose(fopen(other, "w"));
    snprintf(path, sizeof path, "%s/s.json", g_dir);
    lg_outputs out;
    lg_outputs_init(&out, path);
    assert_int_equal(lg_outputs_open(&o, 1, g_dir, "s.json", &out), 0);
    assert_false(exists(stale));
    assert_true(exists(other)); /* another name's */
    lg_outputs_free(&out);
    unlink(other);
}

/* Opens k parts for "name", writes text[w] into part w, commits with lost;
 * tt_cap: --save-token-times's cap (0: off). */
static void join_tt(const char *name, int k, const char *const *text, const int *lost,
                    lg_record_count *c, lg_outputs *out, int64_t tt_cap)
{
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.save_detailed = 1;
    o.save_token_times = tt_cap > 0;
    if (tt_cap) o.token_times_cap = tt_cap;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    lg_outputs_init(out, path);
    assert_int_equal(lg_outputs_open(&o, k, g_dir, name, out), 0);
    lg_slot slot[4];
    const lg_slot *slots[4];
    memset(slot, 0, sizeof slot);
    for (int w = 0; w < k; w++) {
        assert_true(exists(out->part[w]));
        put(out->part_fd[w], text[w]);
        slots[w] = &slot[w];
    }
    char parts[4][2200];
    for (int w = 0; w < k; w++)
        snprintf(parts[w], sizeof parts[w], "%s", out->part[w]);
    lg_outputs_commit(out, k, slots, lost, c);
    for (int w = 0; w < k; w++)
        assert_false(exists(parts[w])); /* removed as read */
}

static void join(const char *name, int k, const char *const *text, const int *lost,
                 lg_record_count *c, lg_outputs *out)
{
    join_tt(name, k, text, lost, c, out, 0);
}

/* A line of n bytes, newline included: {"x":"aaa..."} */
static char *long_line(size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, 'a', n);
    memcpy(s, "{\"x\":\"", 6);
    memcpy(s + n - 3, "\"}\n", 3);
    s[n] = '\0';
    return s;
}

/* With token times a record may be as long as lg_record_line_max(cap) (one
 * of 200 times: 2048 + 200 x 21 = 6248 bytes), and longer is torn; without,
 * the bound stays 2048. */
static void records_with_token_times_join_up_to_their_cap(void **state)
{
    char *fits = long_line(6248), *over = long_line(6249), *plain = long_line(2049);
    size_t cat_len = strlen(fits) + strlen(over) + 9;
    char *cat = malloc(cat_len);
    assert_non_null(cat);
    snprintf(cat, cat_len, "%s%s{\"a\":1}\n", fits, over);
    const char *text[] = {cat};
    const int lost[] = {0};
    lg_record_count c;
    lg_outputs out;
    join_tt("tt.json", 1, text, lost, &c, &out, 200);
    assert_int_equal(c.written, 2);
    assert_int_equal(c.lost, 1); /* the one past the bound */
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(rb_read_file(out.partial, 1 << 20, &got, &len), 0);
    assert_int_equal(len, 6248 + 8);
    assert_memory_equal(got, fits, 6248);
    assert_string_equal(got + 6248, "{\"a\":1}\n");
    free(got);
    lg_outputs_free(&out);
    /* off: 2049 bytes are more than any record */
    const char *text2[] = {plain};
    join("pl.json", 1, text2, lost, &c, &out);
    assert_int_equal(c.written, 0);
    assert_int_equal(c.lost, 1);
    lg_outputs_free(&out);
    free(cat);
    free(fits);
    free(over);
    free(plain);
}

static void whole_parts_join_into_the_jsonl(void **state)
{
    const char *text[] = {"{\"a\":1}\n{\"a\":2}\n", "{\"b\":1}\n"};
    const int lost[] = {0, 0};
    lg_record_count c;
    lg_outputs out;
    join("w.json", 2, text, lost, &c, &out);
    assert_int_equal(c.written, 3);
    assert_int_equal(c.lost, 0);
    assert_int_equal(c.left_out, 0);
    assert_non_null(c.path);
    assert_string_equal(c.path, out.jsonl);
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(rb_read_file(out.jsonl, 1 << 20, &got, &len), 0);
    assert_string_equal(got, "{\"a\":1}\n{\"a\":2}\n{\"b\":1}\n");
    free(got);
    assert_false(exists(out.partial));
    lg_outputs_free(&out);
}

static void a_torn_record_sends_the_rest_to_the_partial_name(void **state)
{
    const char *text[] = {"{\"a\":1}\n", "{\"b\":1}\n{\"b\":2"}; /* killed inside a write */
    const int lost[] = {0, 0};
    lg_record_count c;
    lg_outputs out;
    join("t.json", 2, text, lost, &c, &out);
    assert_int_equal(c.written, 2);
    assert_int_equal(c.lost, 1);
    assert_non_null(c.path);
    assert_string_equal(c.path, out.partial);
    assert_false(exists(out.jsonl));
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(rb_read_file(out.partial, 1 << 20, &got, &len), 0);
    assert_string_equal(got, "{\"a\":1}\n{\"b\":1}\n");
    free(got);
    lg_outputs_free(&out);
}

static void a_lost_workers_records_are_left_out_and_counted(void **state)
{
    const char *text[] = {"{\"a\":1}\n", "{\"b\":1}\n{\"b\":2}\n{\"b\":3"};
    const int lost[] = {0, 1};
    lg_record_count c;
    lg_outputs out;
    join("l.json", 2, text, lost, &c, &out);
    assert_int_equal(c.written, 1);
    assert_int_equal(c.left_out, 2); /* its whole records; the torn one is not counted */
    assert_int_equal(c.lost, 0);
    assert_string_equal(c.path, out.jsonl);
    lg_outputs_free(&out);
}

static void a_lost_ranks_part_is_counted_and_removed(void **state)
{
    char part[512], other[512];
    snprintf(part, sizeof part, "%s/.m.json.w0.4242.part", g_dir);
    snprintf(other, sizeof other, "%s/.m.json.w0.4343.part", g_dir);
    FILE *f = fopen(part, "w");
    fputs("{\"r\":1}\n{\"r\":2}\n{\"r\":3}\n", f);
    fclose(f);
    fclose(fopen(other, "w"));
    assert_int_equal(lg_outputs_drop_lost_part(g_dir, "m.json", 4242), 3);
    assert_false(exists(part));
    assert_int_equal(lg_outputs_drop_lost_part(g_dir, "m.json", 4242), 0); /* none left */
    assert_true(exists(other));
    lg_outputs_remove_rank_parts(g_dir, "m.json");
    assert_false(exists(other));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_from_the_result_path),
        cmocka_unit_test(the_default_name_says_rate_concurrency_and_model),
        cmocka_unit_test(names_the_run_cannot_write_are_refused),
        cmocka_unit_test(one_run_holds_a_name),
        cmocka_unit_test(a_killed_runs_parts_are_removed),
        cmocka_unit_test(whole_parts_join_into_the_jsonl),
        cmocka_unit_test(a_torn_record_sends_the_rest_to_the_partial_name),
        cmocka_unit_test(a_lost_workers_records_are_left_out_and_counted),
        cmocka_unit_test(a_lost_ranks_part_is_counted_and_removed),
        cmocka_unit_test(records_with_token_times_join_up_to_their_cap),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
