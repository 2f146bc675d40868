/* lg_lora: the chooser's shares over 100,000 indices lie within 4 sigma of
 * the split (binomial); the same seed chooses the same, another seed
 * otherwise; a 0 share is never chosen; the parser's even and weighted forms
 * and its refusals; the body's model replaced, the rest byte for byte. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_body.h"
#include "lg_lora.h"
#include "lg_record.h"

static lg_opts parsed(const char *val)
{
    lg_opts o = {0};
    char why[256] = "";
    int rc = lg_lora_parse(&o, val, why, sizeof why);
    if (rc) fail_msg("%s: %s", val, why);
    return o;
}

#define N 100000

static void shares_within_binomial_noise(void **state)
{
    (void)state;
    lg_opts o = parsed("a=0.7,zero=0,b=0.2,c=0.1");
    int64_t count[LG_MAX_LORA] = {0};
    for (int64_t i = 0; i < N; i++)
        count[lg_lora_pick(&o, 42, i)]++;
    assert_int_equal(count[1], 0); /* the 0 share, never */
    for (int k = 0; k < o.n_lora; k++) {
        double p = o.lora_split[k], sd = sqrt(N * p * (1 - p));
        if (fabs((double)count[k] - N * p) > 4 * sd + 1e-9)
            fail_msg("%s: %lld of %d for a share of %g", o.lora_names[k], (long long)count[k], N,
                     p);
    }
}

static void even_split_within_noise(void **state)
{
    (void)state;
    lg_opts o = parsed("x,y,z");
    int64_t count[3] = {0};
    for (int64_t i = 0; i < N; i++)
        count[lg_lora_pick(&o, 7, i)]++;
    double p = 1.0 / 3, sd = sqrt(N * p * (1 - p));
    for (int k = 0; k < 3; k++)
        assert_true(fabs((double)count[k] - N * p) <= 4 * sd);
}

static void seed_decides(void **state)
{
    (void)state;
    lg_opts o = parsed("a,b,c,d");
    int differ = 0;
    for (int64_t i = 0; i < 1000; i++) {
        assert_int_equal(lg_lora_pick(&o, 3, i), lg_lora_pick(&o, 3, i));
        differ += lg_lora_pick(&o, 3, i) != lg_lora_pick(&o, 4, i);
    }
    /* 3/4 of them differ between independent draws: far from none */
    assert_true(differ > 600 && differ < 900);
    o.seed = 3;
    assert_string_equal(lg_lora_model(&o, 17), o.lora_names[lg_lora_pick(&o, 3, 17)]);
    lg_opts none = {0};
    assert_null(lg_lora_model(&none, 17));
}

static void refusals(void **state)
{
    (void)state;
    const char *bad[] = {"a=0.5,b=0.4", "a=-0.5,b=1.5", "a,,b", "=1", "a=1,b", "a,a", "",
                         "a=x",         "a=nan,b=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lg_opts o = {0};
        char why[256] = "";
        if (lg_lora_parse(&o, bad[i], why, sizeof why) == 0) fail_msg("'%s' accepted", bad[i]);
        assert_true(why[0]);
    }
    lg_opts o = parsed("a=0.3333333,b=0.6666667");
    assert_int_equal(o.n_lora, 2);
    assert_string_equal(o.lora_names[1], "b");
}

/* vLLM's form: names as separate values join one even list; shares, or
 * bare names after a list with shares, replace it; a name twice is refused */
static void separate_values(void **state)
{
    (void)state;
    lg_opts o = {0};
    char why[256] = "";
    const char *vals[] = {"a", "b", "c,d"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(lg_lora_parse(&o, vals[i], why, sizeof why), 0);
    assert_int_equal(o.n_lora, 4);
    assert_string_equal(o.lora_names[2], "c");
    for (int i = 0; i < 4; i++)
        assert_true(o.lora_split[i] == 0.25);
    assert_int_equal(lg_lora_parse(&o, "x=0.5,y=0.5", why, sizeof why), 0);
    assert_int_equal(o.n_lora, 2);
    assert_int_equal(lg_lora_parse(&o, "z", why, sizeof why), 0);
    assert_int_equal(o.n_lora, 1);
    assert_true(o.lora_split[0] == 1);
    assert_int_equal(lg_lora_parse(&o, "z", why, sizeof why), -1);
    assert_non_null(strstr(why, "twice"));
}

static void body_model_replaced(void **state)
{
    (void)state;
    lg_opts o = {0};
    strcpy(o.model, "m\"q");
    o.stream = 1;
    char *body, *out;
    size_t len, n;
    assert_int_equal(lg_body_render(&o, "hi \"there\"", 5, &body, &len), 0);
    assert_int_equal(lg_body_with_model(body, len, "ad-\"b", &out, &n), 0);
    strcpy(o.model, "ad-\"b");
    char *want;
    size_t wn;
    assert_int_equal(lg_body_render(&o, "hi \"there\"", 5, &want, &wn), 0);
    assert_int_equal(n, wn);
    assert_memory_equal(out, want, n);
    assert_int_equal(lg_body_with_model("{\"prompt\":1}", 12, "x", &out, &n) != 0, 1);
    free(body);
    free(want);
    free(out);
}

/* The longest record (every field at its widest, the server's timings, the
 * wire clock, a 127-byte model of control bytes: 6 bytes each escaped) fits
 * LG_RECORD_MAX; a record with a model still parses (the key skipped). */
static void record_with_the_longest_model_fits(void **state)
{
    (void)state;
    char model[LG_LORA_NAME];
    memset(model, 1, LG_LORA_NAME - 1);
    model[LG_LORA_NAME - 1] = '\0';
    lg_record r = {.index = INT64_MIN,
                   .worker = INT32_MIN,
                   .stage = INT32_MIN,
                   .intended_ns = INT64_MIN,
                   .dispatch_ns = INT64_MIN,
                   .first_byte_ns = INT64_MIN,
                   .first_token_ns = INT64_MIN,
                   .end_ns = INT64_MIN,
                   .input_tokens = INT64_MIN,
                   .output_tokens = INT64_MIN,
                   .status = INT32_MIN,
                   .has_truth = 1,
                   .queue_ns = INT64_MIN,
                   .prefill_ns = INT64_MIN,
                   .decode_ns = INT64_MIN,
                   .has_sent = 1,
                   .sent_wire_ns = INT64_MIN,
                   .sent_wire_last_ns = INT64_MIN,
                   .model = model};
    memset(r.cls, 1, sizeof r.cls - 1);
    char buf[LG_RECORD_MAX], err[256] = "";
    int n = lg_record_format(&r, buf, sizeof buf);
    assert_true(n > 0);
    assert_non_null(strstr(buf, ",\"model\":\"\\u0001"));
    lg_record small = {.index = 7, .cls = "ok", .model = model}, back;
    n = lg_record_format(&small, buf, sizeof buf);
    assert_true(n > 0);
    if (lg_record_parse(buf, (size_t)n, &back, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(back.index, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares_within_binomial_noise),
        cmocka_unit_test(even_split_within_noise),
        cmocka_unit_test(seed_decides),
        cmocka_unit_test(refusals),
        cmocka_unit_test(separate_values),
        cmocka_unit_test(body_model_replaced),
        cmocka_unit_test(record_with_the_longest_model_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
