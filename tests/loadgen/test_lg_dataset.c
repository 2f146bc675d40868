/* Unit tests for lg_dataset: the token counting rule, synthetic prompts whose
 * counted length is exactly the drawn one, shared-prefix groups, ShareGPT
 * and the Azure-style trace CSV, with errors that say where. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lg_custom.h"
#include "lg_dataset.h"
#include "rb_buf.h"

static int32_t count(const char *s)
{
    return lg_count_tokens(s, strlen(s));
}

static void tokens_are_runs_of_non_space(void **state)
{
    assert_int_equal(count(""), 0);
    assert_int_equal(count(" \t\r\n\v\f"), 0);
    assert_int_equal(count("a"), 1);
    assert_int_equal(count(" a  b\tc\n"), 3);
    assert_int_equal(count("a\r\nb"), 2);
    assert_int_equal(count("caf\xc3\xa9 au lait"), 3);
    assert_int_equal(count("x,y;z!"), 1);
    assert_int_equal(lg_count_tokens("one two", 3), 1);
}

/* Every prompt's text counts to its input_tokens, lengths are >= 1. */
static void check_pool(const lg_dataset *d)
{
    for (size_t i = 0; i < d->n; i++) {
        const lg_prompt *p = &d->items[i];
        assert_non_null(p->text);
        assert_true(p->input_tokens >= 1);
        assert_true(p->output_tokens >= 1);
        if (count(p->text) != p->input_tokens)
            fail_msg("prompt %zu: counted %d tokens, says %d", i, count(p->text), p->input_tokens);
    }
}

static lg_dataset must_random(lg_random_spec sp)
{
    lg_dataset d;
    char err[256] = "";
    if (lg_dataset_random(&sp, &d, err, sizeof err)) fail_msg("lg_dataset_random: %s", err);
    assert_int_equal(d.n, sp.n);
    check_pool(&d);
    return d;
}

static void mean_in(const lg_dataset *d, double lo_in, double hi_in, double lo_out, double hi_out)
{
    double in = 0, out = 0;
    for (size_t i = 0; i < d->n; i++) {
        in += d->items[i].input_tokens;
        out += d->items[i].output_tokens;
    }
    in /= (double)d->n;
    out /= (double)d->n;
    if (!(in >= lo_in && in <= hi_in && out >= lo_out && out <= hi_out))
        fail_msg("means %g (want %g..%g) and %g (want %g..%g)", in, lo_in, hi_in, out, lo_out,
                 hi_out);
}

static void random_fixed_lengths_are_exact(void **state)
{
    lg_dataset d = must_random((lg_random_spec){
        .seed = 1, .n = 50, .input_len = 100, .output_len = 20, .dist = LG_LEN_FIXED});
    for (size_t i = 0; i < d.n; i++) {
        assert_int_equal(d.items[i].input_tokens, 100);
        assert_int_equal(d.items[i].output_tokens, 20);
    }
    /* The prompts differ from each other (no accidental prefix sharing). */
    assert_true(strcmp(d.items[0].text, d.items[1].text) != 0);
    lg_dataset_free(&d);
    assert_null(d.items);
}

/* Token ids: each prompt is input_len decimal ids in [0, vocab), every id
 * of a small vocabulary drawn (uniform), the same for the same seed; the
 * per-request generator and shared-prefix make ids too. */
static void check_ids(const char *text, int32_t want_n, int32_t vocab, int *seen)
{
    int32_t n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) fail_msg("not an id at '%.20s'", p);
        assert_true(v >= 0 && v < vocab);
        if (seen) seen[v] = 1;
        n++;
        p = end;
        if (*p == ' ') p++;
    }
    assert_int_equal(n, want_n);
    assert_int_equal(lg_count_tokens(text, strlen(text)), want_n);
}

static void token_id_prompts_lie_in_the_vocabulary(void **state)
{
    (void)state;
    lg_random_spec sp = {.seed = 4,
                         .n = 20,
                         .input_len = 300,
                         .output_len = 5,
                         .range_ratio = 0.5,
                         .dist = LG_LEN_UNIFORM,
                         .vocab = 37};
    lg_dataset d = must_random(sp), e = must_random(sp);
    int seen[37] = {0};
    for (size_t i = 0; i < d.n; i++) {
        check_ids(d.items[i].text, d.items[i].input_tokens, 37, seen);
        assert_string_equal(d.items[i].text, e.items[i].text);
    }
    for (int v = 0; v < 37; v++)
        assert_true(seen[v]);
    lg_dataset_free(&d);
    lg_dataset_free(&e);
    char err[256];
    lg_random_gen *g = lg_random_gen_new(&sp, err, sizeof err);
    assert_non_null(g);
    lg_prompt pr;
    assert_int_equal(lg_random_gen_at(g, 9, &pr), 0);
    check_ids(pr.text, pr.input_tokens, 37, NULL);
    free(pr.text);
    lg_random_gen_free(g);
    lg_prefix_spec ps = {.seed = 1,
                         .groups = 2,
                         .prompts_per_group = 3,
                         .system_prompt_len = 40,
                         .question_len = 8,
                         .output_len = 4,
                         .vocab = 1000};
    lg_dataset p;
    assert_int_equal(lg_dataset_shared_prefix(&ps, &p, err, sizeof err), 0);
    for (size_t i = 0; i < p.n; i++) {
        check_ids(p.items[i].text, 48, 1000, NULL);
        assert_int_equal(p.items[i].input_tokens, 48);
    }
    lg_dataset_free(&p);
    sp.vocab = -1;
    assert_null(lg_random_gen_new(&sp, err, sizeof err));
    assert_non_null(strstr(err, "vocab"));
}

/* Inference Perf's distributions: its example config-random.yml (mean 50,
 * std_dev 10 in [10, 100]) over 2,000 prompts has its mean and std within
 * 5% (about 3 standard errors), as do a lognormal's, and every type keeps
 * to [min, max]; the spec string's errors name the
 * key. */
static void inference_perf_distributions(void **state)
{
    (void)state;
    char why[256];
    lg_random_spec sp = {.seed = 11, .n = 2000, .input_len = 50, .output_len = 50};
    assert_int_equal(
        lg_len_ip_parse("min:10,max:100,mean:50,std_dev:10", &sp.in_ip, why, sizeof why), 0);
    assert_int_equal(lg_len_ip_parse("type:lognormal,mean:200,std_dev:40,min:20,max:2000",
                                     &sp.out_ip, why, sizeof why),
                     0);
    lg_dataset d = must_random(sp);
    double s[2] = {0}, s2[2] = {0};
    int32_t lo[2] = {INT32_MAX, INT32_MAX}, hi[2] = {0};
    for (size_t i = 0; i < d.n; i++) {
        int32_t v[2] = {d.items[i].input_tokens, d.items[i].output_tokens};
        for (int k = 0; k < 2; k++) {
            s[k] += v[k];
            s2[k] += (double)v[k] * v[k];
            if (v[k] < lo[k]) lo[k] = v[k];
            if (v[k] > hi[k]) hi[k] = v[k];
        }
    }
    const double want_mean[2] = {50, 200}, want_sd[2] = {10, 40};
    for (int k = 0; k < 2; k++) {
        double mean = s[k] / (double)d.n, sd = sqrt(s2[k] / (double)d.n - mean * mean);
        if (fabs(mean - want_mean[k]) > 0.05 * want_mean[k] ||
            fabs(sd - want_sd[k]) > 0.05 * want_sd[k])
            fail_msg("distribution %d: mean %.2f sd %.2f", k, mean, sd);
    }
    assert_true(lo[0] >= 10 && hi[0] <= 100);
    assert_true(lo[1] >= 20 && hi[1] <= 2000);
    lg_dataset_free(&d);
    /* uniform: in [min, max], both ends reached; fixed: the mean, truncated */
    assert_int_equal(lg_len_ip_parse("type:uniform,mean:5,min:3,max:7", &sp.in_ip, why, sizeof why),
                     0);
    assert_int_equal(lg_len_ip_parse("type:fixed,mean:42.9", &sp.out_ip, why, sizeof why), 0);
    d = must_random(sp);
    int seen[8] = {0};
    for (size_t i = 0; i < d.n; i++) {
        assert_true(d.items[i].input_tokens >= 3 && d.items[i].input_tokens <= 7);
        seen[d.items[i].input_tokens] = 1;
        assert_int_equal(d.items[i].output_tokens, 42);
    }
    assert_true(seen[3] && seen[7]);
    lg_dataset_free(&d);
    /* a normal that the bounds clip on both sides: clipped, both ends hit */
    assert_int_equal(lg_len_ip_parse("mean:10,std_dev:10,min:5,max:20", &sp.in_ip, why, sizeof why),
                     0);
    d = must_random(sp);
    int at_min = 0, at_max = 0;
    for (size_t i = 0; i < d.n; i++) {
        assert_true(d.items[i].input_tokens >= 5 && d.items[i].input_tokens <= 20);
        at_min += d.items[i].input_tokens == 5;
        at_max += d.items[i].input_tokens == 20;
    }
    assert_true(at_min > 100 && at_max > 50);
    lg_dataset_free(&d);
    lg_len_ip x;
    assert_int_equal(lg_len_ip_parse("std_dev:3", &x, why, sizeof why), -1);
    assert_non_null(strstr(why, "mean"));
    assert_int_equal(lg_len_ip_parse("mean:5,type:zipf", &x, why, sizeof why), -1);
    assert_non_null(strstr(why, "zipf"));
    assert_int_equal(lg_len_ip_parse("mean:500,min:10,max:100", &x, why, sizeof why), -1);
    assert_non_null(strstr(why, "outside"));
    assert_int_equal(lg_len_ip_parse("mean:5,min:9,max:3", &x, why, sizeof why), -1);
    assert_int_equal(lg_len_ip_parse("mean:5,skew:2", &x, why, sizeof why), -1);
    assert_non_null(strstr(why, "skew"));
}

/* 4000 draws: the standard errors of the means are under 1 token for these
 * spreads; tolerances are about 5 SE. */
static void random_distributions_have_their_means(void **state)
{
    lg_dataset d = must_random((lg_random_spec){.seed = 2,
                                                .n = 4000,
                                                .input_len = 100,
                                                .output_len = 50,
                                                .range_ratio = 0.5,
                                                .dist = LG_LEN_UNIFORM});
    for (size_t i = 0; i < d.n; i++) {
        assert_true(d.items[i].input_tokens >= 50 && d.items[i].input_tokens <= 150);
        assert_true(d.items[i].output_tokens >= 25 && d.items[i].output_tokens <= 75);
    }
    mean_in(&d, 97, 103, 48.5, 51.5);
    lg_dataset_free(&d);
    d = must_random((lg_random_spec){.seed = 3,
                                     .n = 4000,
                                     .input_len = 100,
                                     .output_len = 50,
                                     .range_ratio = 0.2,
                                     .dist = LG_LEN_NORMAL});
    mean_in(&d, 98.5, 101.5, 49.2, 50.8);
    lg_dataset_free(&d);
    d = must_random((lg_random_spec){.seed = 4,
                                     .n = 4000,
                                     .input_len = 100,
                                     .output_len = 50,
                                     .range_ratio = 0.5,
                                     .dist = LG_LEN_LOGNORMAL});
    mean_in(&d, 96, 104, 48, 52);
    lg_dataset_free(&d);
    /* A wide normal is clamped to >= 1 (check_pool). */
    d = must_random((lg_random_spec){.seed = 5,
                                     .n = 500,
                                     .input_len = 10,
                                     .output_len = 10,
                                     .range_ratio = 5,
                                     .dist = LG_LEN_NORMAL});
    int ones = 0;
    for (size_t i = 0; i < d.n; i++)
        ones += d.items[i].input_tokens == 1;
    assert_true(ones > 100); /* about 42 % of N(10, 50) is below 1 */
    lg_dataset_free(&d);
}

static void random_pool_is_fixed_by_the_seed(void **state)
{
    lg_random_spec sp = {.seed = 7,
                         .n = 20,
                         .input_len = 30,
                         .output_len = 5,
                         .range_ratio = 0.3,
                         .dist = LG_LEN_LOGNORMAL};
    lg_dataset a = must_random(sp), b = must_random(sp);
    sp.seed = 8;
    lg_dataset c = must_random(sp);
    int same_as_c = 0;
    for (size_t i = 0; i < a.n; i++) {
        assert_string_equal(a.items[i].text, b.items[i].text);
        assert_int_equal(a.items[i].output_tokens, b.items[i].output_tokens);
        same_as_c += strcmp(a.items[i].text, c.items[i].text) == 0;
    }
    assert_int_equal(same_as_c, 0);
    lg_dataset_free(&a);
    lg_dataset_free(&b);
    lg_dataset_free(&c);
}

static void expect_random_error(lg_random_spec sp, const char *want)
{
    lg_dataset d = {(void *)1, 99};
    char err[256] = "";
    assert_int_equal(lg_dataset_random(&sp, &d, err, sizeof err), -EINVAL);
    assert_null(d.items);
    assert_int_equal(d.n, 0);
    if (!strstr(err, want)) fail_msg("error '%s' does not contain '%s'", err, want);
}

static void random_spec_errors_name_the_field(void **state)
{
    lg_random_spec ok = {.seed = 1, .n = 5, .input_len = 10, .output_len = 10};
    lg_random_spec sp = ok;
    sp.n = 0;
    expect_random_error(sp, "n: must be in [1,");
    sp = ok;
    sp.input_len = 0;
    expect_random_error(sp, "input_len: must be in [1,");
    sp = ok;
    sp.output_len = -4;
    expect_random_error(sp, "got -4");
    sp = ok;
    sp.range_ratio = 1.5;
    sp.dist = LG_LEN_UNIFORM;
    expect_random_error(sp, "range_ratio: must be in [0, 1], got 1.5");
    sp.range_ratio = NAN;
    sp.dist = LG_LEN_NORMAL;
    expect_random_error(sp, "range_ratio");
}

static void shared_prefix_groups_share_their_system_prompt(void **state)
{
    lg_prefix_spec sp = {.seed = 3,
                         .groups = 3,
                         .prompts_per_group = 4,
                         .system_prompt_len = 20,
                         .question_len = 5,
                         .output_len = 7};
    lg_dataset d;
    char err[256] = "";
    assert_int_equal(lg_dataset_shared_prefix(&sp, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 12);
    check_pool(&d);
    /* The prefix is the text up to the 20th word. */
    size_t plen[12];
    for (size_t i = 0; i < 12; i++) {
        assert_int_equal(d.items[i].input_tokens, 25);
        assert_int_equal(d.items[i].output_tokens, 7);
        const char *t = d.items[i].text;
        size_t at = 0;
        for (int w = 0; w < 20; w++) {
            at += strspn(t + at, " ");
            at += strcspn(t + at, " ");
        }
        plen[i] = at;
    }
    for (size_t i = 0; i < 12; i++)
        for (size_t j = 0; j < 12; j++) {
            int same_group = i / 4 == j / 4;
            int same_prefix =
                plen[i] == plen[j] && memcmp(d.items[i].text, d.items[j].text, plen[i]) == 0;
            assert_int_equal(same_prefix, same_group);
            if (i != j) assert_true(strcmp(d.items[i].text, d.items[j].text) != 0);
        }
    lg_dataset_free(&d);
    /* No system prompt: every prompt is just its question. */
    sp.system_prompt_len = 0;
    assert_int_equal(lg_dataset_shared_prefix(&sp, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 12);
    check_pool(&d);
    for (size_t i = 0; i < d.n; i++)
        assert_int_equal(d.items[i].input_tokens, 5);
    lg_dataset_free(&d);
    sp.system_prompt_len = -1;
    assert_int_equal(lg_dataset_shared_prefix(&sp, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "system_prompt_len: must be in [0,"));
    sp.system_prompt_len = 20;
    sp.question_len = 0;
    assert_int_equal(lg_dataset_shared_prefix(&sp, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "question_len: must be in [1,"));
    sp.question_len = 5;
    sp.groups = 100000;
    sp.prompts_per_group = 1000;
    assert_int_equal(lg_dataset_shared_prefix(&sp, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "groups x prompts_per_group"));
}

static const char SHAREGPT[] =
    "[\n"
    "  {\"id\": \"a\", \"conversations\": [\n"
    "    {\"from\": \"human\", \"value\": \"What is the capital of France?\"},\n"
    "    {\"from\": \"gpt\", \"value\": \"The capital of France is Paris.\"}]},\n"
    "  {\"id\": \"no-gpt\", \"conversations\": [{\"from\": \"human\", \"value\": \"hello\"}]},\n"
    "  {\"id\": \"system-first\", \"conversations\": [\n"
    "    {\"from\": \"system\", \"value\": \"be brief\"},\n"
    "    {\"from\": \"human\", \"value\": \"two words\"},\n"
    "    {\"from\": \"gpt\", \"value\": \"\"}]},\n"
    "  {\"id\": \"empty-human\", \"conversations\": [\n"
    "    {\"from\": \"human\", \"value\": \"   \"}, {\"from\": \"gpt\", \"value\": \"x\"}]},\n"
    "  42,\n"
    "  {\"id\": \"no-conversations\"},\n"
    "  {\"conversations\": [{\"from\": \"human\", \"value\": 5}, {\"from\": \"gpt\", \"value\": "
    "\"x\"}]},\n"
    "  {\"conversations\": [{\"from\": \"user\", \"value\": \"a b c\"},\n"
    "                     {\"from\": \"assistant\", \"value\": \"d e\"}]}\n"
    "]\n";

static void sharegpt_keeps_human_gpt_pairs(void **state)
{
    lg_dataset d;
    char err[256] = "";
    assert_int_equal(
        lg_dataset_sharegpt_parse(SHAREGPT, sizeof SHAREGPT - 1, 0, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 3);
    check_pool(&d);
    assert_string_equal(d.items[0].text, "What is the capital of France?");
    assert_int_equal(d.items[0].input_tokens, 6);
    assert_int_equal(d.items[0].output_tokens, 6);
    assert_string_equal(d.items[1].text, "two words");
    assert_int_equal(d.items[1].output_tokens, 1); /* an empty answer still asks for one */
    assert_string_equal(d.items[2].text, "a b c");
    assert_int_equal(d.items[2].output_tokens, 2);
    lg_dataset_free(&d);
    assert_int_equal(
        lg_dataset_sharegpt_parse(SHAREGPT, sizeof SHAREGPT - 1, 2, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 2);
    lg_dataset_free(&d);
    /* Reading stops once max_n prompts are in: what follows is not read. */
    const char early[] = "\xef\xbb\xbf[{\"conversations\":[{\"from\":\"human\",\"value\":\"a\"},"
                         "{\"from\":\"gpt\",\"value\":\"b c\"}]}, this is not JSON";
    assert_int_equal(lg_dataset_sharegpt_parse(early, sizeof early - 1, 1, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.items[0].output_tokens, 2);
    lg_dataset_free(&d);
    assert_int_equal(lg_dataset_sharegpt_parse(early, sizeof early - 1, 2, &d, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "sharegpt: line 1: not valid JSON"));
}

/* vLLM's sampling: the entries shuffled from the seed, then its length
 * filters (is_valid_sequence), checked here against the rule written out
 * again: prompt in [4, 1024], output >= 4 (unless --sharegpt-output-len),
 * prompt + output <= 2048. */
static void add_entry(rb_buf *b, int32_t in, int32_t out)
{
    rb_buf_puts(b, b->len > 1 ? ",{\"conversations\":[{\"from\":\"human\",\"value\":\""
                              : "{\"conversations\":[{\"from\":\"human\",\"value\":\"");
    for (int32_t i = 0; i < in; i++)
        rb_buf_puts(b, i ? " w" : "w");
    rb_buf_puts(b, "\"},{\"from\":\"gpt\",\"value\":\"");
    for (int32_t i = 0; i < out; i++)
        rb_buf_puts(b, i ? " w" : "w");
    rb_buf_puts(b, "\"}]}");
}

static int vllm_valid(int32_t in, int32_t out, int32_t fixed_out)
{
    if (fixed_out) out = fixed_out;
    return in >= 4 && (fixed_out || out >= 4) && in <= 1024 && in + out <= 2048;
}

static void sharegpt_sampled_as_vllm(void **state)
{
    (void)state;
    const int32_t lens[][2] = {{3, 10},  {4, 4},   {5, 3}, {1025, 5}, {1000, 1049}, {1000, 1048},
                               {10, 20}, {20, 10}, {7, 2}, {4, 1},    {1024, 10}};
    const size_t n = sizeof lens / sizeof lens[0];
    rb_buf b = {0};
    rb_buf_puts(&b, "[");
    for (size_t i = 0; i < n; i++)
        add_entry(&b, lens[i][0], lens[i][1]);
    rb_buf_puts(&b, "]");
    char err[256];
    for (int fixed = 0; fixed <= 100; fixed += 100) {
        size_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += (size_t)vllm_valid(lens[i][0], lens[i][1], fixed);
        lg_dataset d, e;
        assert_int_equal(lg_dataset_sharegpt_parse(b.data, b.len, 0, &d, err, sizeof err), 0);
        assert_int_equal(lg_dataset_sharegpt_parse(b.data, b.len, 0, &e, err, sizeof err), 0);
        lg_sharegpt_spec sp = {.seed = 5, .output_len = fixed, .shuffle = 1, .filter = 1};
        assert_int_equal(lg_dataset_sharegpt_sample(&d, &sp, err, sizeof err), 0);
        assert_int_equal(lg_dataset_sharegpt_sample(&e, &sp, err, sizeof err), 0);
        assert_int_equal(d.n, want);
        for (size_t i = 0; i < d.n; i++) {
            /* every kept entry is a valid one, and the same seed keeps the same order */
            int32_t in = d.items[i].input_tokens, out = d.items[i].output_tokens;
            assert_true(vllm_valid(in, out, fixed));
            if (fixed) assert_int_equal(out, fixed);
            assert_string_equal(d.items[i].text, e.items[i].text);
        }
        lg_dataset_free(&d);
        lg_dataset_free(&e);
    }
    /* the shuffle moves entries: over seeds, the first kept is not always
     * the file's first valid one; max_n keeps that many */
    int moved = 0;
    for (uint64_t seed = 0; seed < 8; seed++) {
        lg_dataset d;
        assert_int_equal(lg_dataset_sharegpt_parse(b.data, b.len, 0, &d, err, sizeof err), 0);
        lg_sharegpt_spec sp = {.seed = seed, .max_n = 2, .shuffle = 1, .filter = 1};
        assert_int_equal(lg_dataset_sharegpt_sample(&d, &sp, err, sizeof err), 0);
        assert_int_equal(d.n, 2);
        moved += d.items[0].input_tokens != 4;
        lg_dataset_free(&d);
    }
    assert_true(moved > 0);
    /* in order and unfiltered: the file as it is */
    lg_dataset d;
    assert_int_equal(lg_dataset_sharegpt_parse(b.data, b.len, 0, &d, err, sizeof err), 0);
    lg_sharegpt_spec none = {.seed = 1};
    assert_int_equal(lg_dataset_sharegpt_sample(&d, &none, err, sizeof err), 0);
    assert_int_equal(d.n, n);
    assert_int_equal(d.items[0].input_tokens, 3);
    lg_dataset_free(&d);
    /* nothing left: the error says so */
    rb_buf_reset(&b);
    rb_buf_puts(&b, "[");
    add_entry(&b, 2, 2);
    rb_buf_puts(&b, "]");
    assert_int_equal(lg_dataset_sharegpt_parse(b.data, b.len, 0, &d, err, sizeof err), 0);
    lg_sharegpt_spec sp = {.seed = 1, .shuffle = 1, .filter = 1};
    assert_int_equal(lg_dataset_sharegpt_sample(&d, &sp, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "1 dropped"));
    lg_dataset_free(&d);
    rb_buf_free(&b);
}

static void expect_sharegpt_error(const char *json, const char *want)
{
    lg_dataset d;
    char err[256] = "";
    assert_int_equal(lg_dataset_sharegpt_parse(json, strlen(json), 0, &d, err, sizeof err),
                     -EINVAL);
    assert_int_equal(d.n, 0);
    if (!strstr(err, want)) fail_msg("error '%s' does not contain '%s'", err, want);
}

static void sharegpt_errors_say_where(void **state)
{
    expect_sharegpt_error("[\n{\"conversations\": [\n{\"from\": \"human\" \"value\": 1}]}]",
                          "sharegpt: line 3: not valid JSON");
    expect_sharegpt_error("{\"conversations\": []}", "top level must be a JSON array");
    expect_sharegpt_error("[]", "no entry has a human turn followed by a gpt turn (0 entries)");
    expect_sharegpt_error("[{}, 1]", "(2 entries)");
    expect_sharegpt_error("[]\n\n]", "sharegpt: line 3: unexpected text");
    expect_sharegpt_error("", "not valid JSON");
    expect_sharegpt_error("[{}\n{}]", "sharegpt: line 2: expected ',' or ']' after an entry");
    expect_sharegpt_error("[{},]", "not valid JSON");
    expect_sharegpt_error("[{}", "line 1: expected ',' or ']' after an entry");
    /* a byte order mark belongs at the file's start only (cJSON would skip
     * one before every entry it is handed) */
    expect_sharegpt_error("[{},\n\xef\xbb\xbf{}]",
                          "sharegpt: line 2: not valid JSON (near byte 5)");
    expect_sharegpt_error("[\xef\xbb\xbf{}]", "sharegpt: line 1: not valid JSON (near byte 1)");
}

/* A temporary file with the given content; the caller unlinks it. */
static void temp_file(char *path, size_t cap, const char *content)
{
    snprintf(path, cap, "/tmp/lg_dataset_test.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(content);
    assert_int_equal(write(fd, content, n), (ssize_t)n);
    close(fd);
}

static void loaders_read_files_and_name_them(void **state)
{
    char path[64], err[512] = "";
    temp_file(path, sizeof path, SHAREGPT);
    lg_dataset d;
    assert_int_equal(lg_dataset_load_sharegpt(path, 0, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 3);
    lg_dataset_free(&d);
    unlink(path);
    temp_file(path, sizeof path, "[1,\n2,,]");
    assert_int_equal(lg_dataset_load_sharegpt(path, 0, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "line 2"));
    unlink(path);
    assert_int_equal(lg_dataset_load_sharegpt("/nonexistent/sg.json", 0, &d, err, sizeof err),
                     -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/sg.json"));

    temp_file(path, sizeof path, "TIMESTAMP,ContextTokens,GeneratedTokens\n2.5,10,20\n1,3,4\n");
    lg_trace_row *rows;
    size_t n;
    assert_int_equal(lg_trace_load(path, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[1].t_ns, 1500000000);
    free(rows);
    unlink(path);
    temp_file(path, sizeof path, "TIMESTAMP,ContextTokens\n1,2\n");
    assert_int_equal(lg_trace_load(path, &rows, &n, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "GeneratedTokens"));
    unlink(path);
    assert_int_equal(lg_trace_load("/nonexistent/t.csv", &rows, &n, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/t.csv"));
}

static void azure_trace_is_sorted_and_relative(void **state)
{
    /* The public Azure LLM inference trace's layout, rows out of order, a
     * CRLF line, a blank line and an extra column. */
    const char csv[] = "\"TIMESTAMP\",ContextTokens,GeneratedTokens,extra\r\n"
                       "2023-11-16 18:15:46.6805900,374,44,x\r\n"
                       "2023-11-16 18:15:46.0000001,396,109,y\n"
                       "\n"
                       "2023-11-16 18:16:00,879,0,z\n"
                       "2023-11-17T00:00:00.5,1,2,w\n"
                       "2023-11-16 18:15:46.0000001,7,8,tie\n";
    lg_trace_row *rows;
    size_t n;
    char err[256] = "";
    assert_int_equal(lg_trace_parse(csv, sizeof csv - 1, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(rows[0].t_ns, 0);
    assert_int_equal(rows[0].input_tokens, 396);
    assert_int_equal(rows[1].t_ns, 0); /* the tie keeps file order */
    assert_int_equal(rows[1].input_tokens, 7);
    assert_int_equal(rows[2].t_ns, 680589900); /* .68059 - .0000001 s */
    assert_int_equal(rows[2].output_tokens, 44);
    assert_int_equal(rows[3].t_ns, 13999999900LL);
    assert_int_equal(rows[3].output_tokens, 1); /* 0 generated tokens asks for one */
    /* Across midnight: 00:00:00.5 next day - 18:15:46.0000001. */
    assert_int_equal(rows[4].t_ns, (int64_t)(5 * 3600 + 44 * 60 + 14) * 1000000000 + 499999900);
    free(rows);
}

static void numeric_trace_lowercase_header(void **state)
{
    const char csv[] = "timestamp , generatedtokens,CONTEXTTOKENS\n10.25, 5, 6\n10,1,2";
    lg_trace_row *rows;
    size_t n;
    char err[256] = "";
    assert_int_equal(lg_trace_parse(csv, sizeof csv - 1, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].t_ns, 0);
    assert_int_equal(rows[0].input_tokens, 2);
    assert_int_equal(rows[0].output_tokens, 1);
    assert_int_equal(rows[1].t_ns, 250000000);
    assert_int_equal(rows[1].input_tokens, 6);
    assert_int_equal(rows[1].output_tokens, 5);
    free(rows);
}

static void expect_trace_error(const char *csv, const char *want)
{
    lg_trace_row *rows = (void *)1;
    size_t n = 7;
    char err[256] = "";
    assert_int_equal(lg_trace_parse(csv, strlen(csv), &rows, &n, err, sizeof err), -EINVAL);
    assert_null(rows);
    assert_int_equal(n, 0);
    if (!strstr(err, want)) fail_msg("error '%s' does not contain '%s'", err, want);
}

static void trace_errors_name_line_and_field(void **state)
{
    const char *h = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    char csv[256];
    expect_trace_error("", "trace: empty");
    expect_trace_error(h, "trace: no rows after the header");
    expect_trace_error("TIMESTAMP,Context,GeneratedTokens\n1,2,3\n",
                       "trace: line 1: the header has no ContextTokens column");
    snprintf(csv, sizeof csv, "%s1,2,3\n\nsoon,2,3\n", h);
    expect_trace_error(csv, "trace: line 4: TIMESTAMP: must be seconds >= 0 or YYYY-MM-DD");
    snprintf(csv, sizeof csv, "%s1,2,3\n2023-02-30 00:00:00,2,3\n", h);
    expect_trace_error(csv, "line 3: TIMESTAMP");
    snprintf(csv, sizeof csv, "%s1,2,3\n-1,2,3\n", h);
    expect_trace_error(csv, "line 3: TIMESTAMP");
    snprintf(csv, sizeof csv, "%s1,2.5,3\n", h);
    expect_trace_error(csv, "line 2: ContextTokens: must be a whole number >= 0, got '2.5'");
    snprintf(csv, sizeof csv, "%s1,2,-3\n", h);
    expect_trace_error(csv, "line 2: GeneratedTokens: must be a whole number >= 0, got '-3'");
    snprintf(csv, sizeof csv, "%s1,2,\n", h);
    expect_trace_error(csv, "got ''");
    snprintf(csv, sizeof csv, "%s1,2\n", h);
    expect_trace_error(csv, "line 2: 2 fields, but the header has 3");
    snprintf(csv, sizeof csv, "%s2023-01-01 00:00:00,1,1\n\n0,1,1\n", h);
    expect_trace_error(
        csv, "trace: line 2: TIMESTAMP: more than 10 years after the earliest row (line 4)");
    /* A NUL byte must not hide the rest of a field (found by fuzz_dataset). */
    static const char nul[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n\0\0003,1,1\n";
    lg_trace_row *rows;
    size_t n;
    char err[256] = "";
    assert_int_equal(lg_trace_parse(nul, sizeof nul - 1, &rows, &n, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "line 2: TIMESTAMP"));
}

static void pool_is_sized_to_the_run_within_memory(void **state)
{
    /* The estimate is at least what a real prompt and its body take. */
    lg_random_spec rs = {.seed = 1, .n = 4, .input_len = 1024, .output_len = 8};
    lg_dataset d;
    char err[128];
    assert_int_equal(lg_dataset_random(&rs, &d, err, sizeof err), 0);
    size_t per = lg_pool_bytes_per_prompt(1024);
    for (size_t i = 0; i < d.n; i++)
        assert_true(2 * strlen(d.items[i].text) < per);
    assert_true(per < 4 * strlen(d.items[0].text) + 1024);
    lg_dataset_free(&d);
    /* One prompt per arrival while memory allows, the memory bound beyond. */
    assert_int_equal(lg_pool_size_for(2325, per, LG_POOL_BUDGET_BYTES), 2325);
    assert_int_equal(lg_pool_size_for(0, per, LG_POOL_BUDGET_BYTES), 1);
    size_t cap = LG_POOL_BUDGET_BYTES / per;
    assert_int_equal(lg_pool_size_for(100000000, per, LG_POOL_BUDGET_BYTES), cap);
    assert_int_equal(lg_pool_size_for(-1, per, LG_POOL_BUDGET_BYTES), cap);
    assert_int_equal(lg_pool_size_for(-1, 1, LG_POOL_BUDGET_BYTES), LG_POOL_MAX);
    assert_int_equal(lg_pool_size_for(5, per, 10), 1);
}

/* The pool-less generator: request i's prompt depends on (seed, i) alone
 * (two generators agree, in any order of asking), prompts differ from one
 * request to the next, each has its drawn number of tokens, and the lengths
 * follow the spec's distribution as the pool's do. */
static void random_per_request_prompts_are_fixed_by_seed_and_index(void **state)
{
    (void)state;
    lg_random_spec spec = {
        .seed = 9, .input_len = 100, .output_len = 50, .range_ratio = 0.5, .dist = LG_LEN_UNIFORM};
    char err[128];
    lg_random_gen *a = lg_random_gen_new(&spec, err, sizeof err);
    lg_random_gen *b = lg_random_gen_new(&spec, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    enum { N = 4000 };
    double sum_in = 0, sum_out = 0;
    char *prev = NULL;
    int same_as_prev = 0;
    for (int i = 0; i < N; i++) {
        lg_prompt p, q;
        assert_int_equal(lg_random_gen_at(a, (uint64_t)i, &p), 0);
        /* b asks in reverse order: the same prompt for the same index */
        assert_int_equal(lg_random_gen_at(b, (uint64_t)(N - 1 - i), &q), 0);
        free(q.text);
        assert_int_equal(lg_random_gen_at(b, (uint64_t)i, &q), 0);
        assert_string_equal(p.text, q.text);
        assert_int_equal(p.input_tokens, q.input_tokens);
        assert_int_equal(p.output_tokens, q.output_tokens);
        assert_int_equal(lg_count_tokens(p.text, strlen(p.text)), p.input_tokens);
        assert_true(p.input_tokens >= 50 && p.input_tokens <= 150);
        assert_true(p.output_tokens >= 25 && p.output_tokens <= 75);
        sum_in += p.input_tokens;
        sum_out += p.output_tokens;
        same_as_prev += prev && strcmp(prev, p.text) == 0;
        free(prev);
        prev = p.text;
        free(q.text);
    }
    free(prev);
    assert_int_equal(same_as_prev, 0);
    assert_true(sum_in / N > 97 && sum_in / N < 103);
    assert_true(sum_out / N > 48.5 && sum_out / N < 51.5);
    /* another seed, another prompt for the same index */
    lg_random_spec other = spec;
    other.seed = 10;
    lg_random_gen *c = lg_random_gen_new(&other, err, sizeof err);
    lg_prompt p, q;
    assert_int_equal(lg_random_gen_at(a, 7, &p), 0);
    assert_int_equal(lg_random_gen_at(c, 7, &q), 0);
    assert_string_not_equal(p.text, q.text);
    free(p.text);
    free(q.text);
    lg_random_gen_free(a);
    lg_random_gen_free(b);
    lg_random_gen_free(c);
    /* a spec the pool would refuse is refused, naming the field */
    spec.input_len = 0;
    assert_null(lg_random_gen_new(&spec, err, sizeof err));
    assert_non_null(strstr(err, "input_len"));
}

/* vLLM's --random-prefix-len: one prefix, the same in the pool and in the
 * per-request prompts, before each prompt's own part; the input length
 * counts it; 0 leaves the prompts as they were. */
static void random_prefix_is_shared_and_counted(void **state)
{
    (void)state;
    char err[128];
    for (int32_t vocab = 0; vocab <= 1000; vocab += 1000) {
        lg_random_spec spec = {.seed = 4,
                               .n = 50,
                               .input_len = 30,
                               .output_len = 8,
                               .range_ratio = 0.5,
                               .dist = LG_LEN_UNIFORM,
                               .vocab = vocab,
                               .prefix_len = 20};
        lg_dataset d;
        assert_int_equal(lg_dataset_random(&spec, &d, err, sizeof err), 0);
        lg_random_gen *g = lg_random_gen_new(&spec, err, sizeof err);
        assert_non_null(g);
        lg_prompt q;
        assert_int_equal(lg_random_gen_at(g, 3, &q), 0);
        /* the prefix: the first 20 words of the first prompt */
        const char *e = d.items[0].text;
        for (int w = 0; w < 20; w++)
            e = strchr(e, ' ') + 1;
        size_t plen = (size_t)(e - d.items[0].text);
        int distinct_rest = 0;
        for (size_t i = 0; i < d.n; i++) {
            const lg_prompt *p = &d.items[i];
            assert_memory_equal(p->text, d.items[0].text, plen);
            assert_int_equal(count(p->text), p->input_tokens);
            assert_true(p->input_tokens >= 20 + 15 && p->input_tokens <= 20 + 45);
            distinct_rest += i && strcmp(p->text + plen, d.items[i - 1].text + plen) != 0;
        }
        assert_true(distinct_rest > 40);
        assert_memory_equal(q.text, d.items[0].text, plen);
        assert_int_equal(count(q.text), q.input_tokens);
        assert_true(q.input_tokens >= 35);
        free(q.text);
        lg_random_gen_free(g);
        /* without a prefix, the same seed gives the prompts it always gave:
         * the prefix draws from a stream of its own */
        lg_dataset d0, d1;
        spec.prefix_len = 0;
        assert_int_equal(lg_dataset_random(&spec, &d0, err, sizeof err), 0);
        spec.prefix_len = 20;
        assert_int_equal(lg_dataset_random(&spec, &d1, err, sizeof err), 0);
        for (size_t i = 0; i < d0.n; i++) {
            assert_string_equal(d1.items[i].text + plen, d0.items[i].text);
            assert_int_equal(d1.items[i].input_tokens, d0.items[i].input_tokens + 20);
        }
        lg_dataset_free(&d0);
        lg_dataset_free(&d1);
        lg_dataset_free(&d);
    }
    lg_random_spec bad = {.seed = 1, .n = 1, .input_len = 5, .output_len = 5, .prefix_len = -1};
    expect_random_error(bad, "prefix_len");
}

/* vLLM's custom dataset: a prompt per line, output_tokens per line or one
 * length for all, blank lines skipped, shuffled from the seed. */
static void custom_jsonl_as_vllm_reads_it(void **state)
{
    (void)state;
    char err[256];
    const char *f = "{\"prompt\": \"one two three\", \"output_tokens\": 7}\n"
                    "\n"
                    "  {\"prompt\": \"four\", \"output_tokens\": 2, \"other\": [1]}  \n"
                    "{\"prompt\": \"five six\", \"output_tokens\": 1}";
    lg_custom_spec in_order = {.seed = 1, .output_len = -1};
    lg_dataset d;
    assert_int_equal(lg_custom_parse("custom t", f, strlen(f), &in_order, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 3);
    assert_string_equal(d.items[0].text, "one two three");
    assert_int_equal(d.items[0].input_tokens, 3);
    assert_int_equal(d.items[0].output_tokens, 7);
    assert_string_equal(d.items[1].text, "four");
    assert_int_equal(d.items[1].output_tokens, 2);
    assert_int_equal(d.items[2].input_tokens, 2);
    assert_int_equal(d.items[2].output_tokens, 1);
    lg_dataset_free(&d);
    /* one length for every request, the first max_n kept */
    lg_custom_spec fixed = {.seed = 1, .output_len = 256, .max_n = 2};
    assert_int_equal(lg_custom_parse("custom t", f, strlen(f), &fixed, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.items[0].output_tokens, 256);
    assert_int_equal(d.items[1].output_tokens, 256);
    lg_dataset_free(&d);
    /* shuffled: a permutation fixed by the seed, not the file's order */
    rb_buf b = {0};
    for (int i = 0; i < 200; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "{\"prompt\": \"p%d\"}\n", i);
        assert_int_equal(rb_buf_add(&b, line, (size_t)n), 0);
    }
    lg_custom_spec sh = {.seed = 5, .output_len = 10, .shuffle = 1};
    lg_dataset x, y;
    assert_int_equal(lg_custom_parse("custom t", b.data, b.len, &sh, &x, err, sizeof err), 0);
    assert_int_equal(lg_custom_parse("custom t", b.data, b.len, &sh, &y, err, sizeof err), 0);
    assert_int_equal(x.n, 200);
    int moved = 0, seen[200] = {0};
    for (size_t i = 0; i < x.n; i++) {
        assert_string_equal(x.items[i].text, y.items[i].text);
        int k = atoi(x.items[i].text + 1);
        assert_true(k >= 0 && k < 200 && !seen[k]);
        seen[k] = 1;
        moved += k != (int)i;
    }
    assert_true(moved > 150);
    lg_dataset_free(&x);
    lg_dataset_free(&y);
    rb_buf_free(&b);
}

static void expect_custom_error(const char *f, int32_t output_len, const char *want)
{
    char err[256] = "";
    lg_dataset d;
    lg_custom_spec sp = {.seed = 1, .output_len = output_len};
    assert_int_equal(lg_custom_parse("custom t", f, strlen(f), &sp, &d, err, sizeof err), -EINVAL);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
    assert_null(d.items);
}

static void custom_errors_name_the_line(void **state)
{
    (void)state;
    expect_custom_error("{\"prompt\": \"a\"}\n{\"prompt\": \"b\"", 5, "line 2: not valid JSON");
    expect_custom_error("{\"prompt\": \"a\"}\n\n{\"text\": \"b\"}\n", 5,
                        "line 3: has no \"prompt\"");
    expect_custom_error("{\"prompt\": \"\"}\n", 5, "line 1: \"prompt\" must be a non-empty");
    expect_custom_error("{\"prompt\": 3}\n", 5, "\"prompt\" must be a non-empty string");
    expect_custom_error("[1, 2]\n", 5, "line 1: must be a JSON object");
    expect_custom_error("{\"prompt\": \"a\"} {\"prompt\": \"b\"}\n", 5, "one object per line");
    expect_custom_error("{\"prompt\": \"a\", \"output_tokens\": 2.5}\n", 5, "output_tokens");
    expect_custom_error("{\"prompt\": \"a\", \"output_tokens\": 0}\n", -1, "output_tokens");
    expect_custom_error("{\"prompt\": \"a\", \"output_tokens\": 3}\n{\"prompt\": \"b\"}\n", -1,
                        "line 2: has no \"output_tokens\"");
    expect_custom_error("\n \n", 5, "no prompt (2 lines");
    expect_custom_error("{\"prompt\": \"a\"}\n", 0, "output_len");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tokens_are_runs_of_non_space),
        cmocka_unit_test(random_fixed_lengths_are_exact),
        cmocka_unit_test(random_distributions_have_their_means),
        cmocka_unit_test(random_pool_is_fixed_by_the_seed),
        cmocka_unit_test(random_per_request_prompts_are_fixed_by_seed_and_index),
        cmocka_unit_test(random_spec_errors_name_the_field),
        cmocka_unit_test(random_prefix_is_shared_and_counted),
        cmocka_unit_test(custom_jsonl_as_vllm_reads_it),
        cmocka_unit_test(custom_errors_name_the_line),
        cmocka_unit_test(token_id_prompts_lie_in_the_vocabulary),
        cmocka_unit_test(inference_perf_distributions),
        cmocka_unit_test(shared_prefix_groups_share_their_system_prompt),
        cmocka_unit_test(sharegpt_keeps_human_gpt_pairs),
        cmocka_unit_test(sharegpt_sampled_as_vllm),
        cmocka_unit_test(sharegpt_errors_say_where),
        cmocka_unit_test(loaders_read_files_and_name_them),
        cmocka_unit_test(azure_trace_is_sorted_and_relative),
        cmocka_unit_test(numeric_trace_lowercase_header),
        cmocka_unit_test(trace_errors_name_line_and_field),
        cmocka_unit_test(pool_is_sized_to_the_run_within_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
