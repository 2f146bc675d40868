/* Unit tests for lg_sched: the statistics of the arrival processes over many
 * arrivals, determinism by seed, the round-robin split, stages and pauses,
 * trace replay, and validation messages that name the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lg_sched.h"

static lg_sched *must_new(const lg_sched_spec *sp)
{
    char err[256] = "";
    lg_sched *s = lg_sched_new(sp, err, sizeof err);
    if (!s) fail_msg("lg_sched_new: %s", err);
    return s;
}

/* Mean and coefficient of variation of the gaps of the whole stream. */
typedef struct gap_stats {
    int64_t n;
    double mean_ns, cv;
} gap_stats;

static gap_stats stats_of(const lg_sched_spec *sp)
{
    lg_sched *s = must_new(sp);
    lg_arrival a;
    int64_t prev = -1, n = 0;
    double sum = 0, sum2 = 0;
    while (lg_sched_next(s, &a)) {
        if (prev >= 0) {
            double g = (double)(a.t_ns - prev);
            assert_true(g >= 0);
            sum += g;
            sum2 += g * g;
            n++;
        }
        prev = a.t_ns;
    }
    lg_sched_free(s);
    gap_stats st = {.n = n};
    st.mean_ns = sum / (double)n;
    double var = sum2 / (double)n - st.mean_ns * st.mean_ns;
    st.cv = sqrt(var > 0 ? var : 0) / st.mean_ns;
    return st;
}

/* 100k arrivals at 1000/s. The standard error of the mean gap is 0.3 % for
 * Poisson; the CV's is 0.45 % (exponential kurtosis 9); for gamma shape
 * 0.25, CV^2's is 1.6 % (kurtosis 3 + 6/k = 27). Tolerances are 4-6 SE. */
static const lg_stage MANY = {.rate_per_s = 1000, .max_requests = 100001};

static void poisson_gaps_have_the_rate_and_cv_one(void **state)
{
    lg_sched_spec sp = {.seed = 1, .burstiness = 1, .stages = &MANY, .n_stages = 1};
    gap_stats st = stats_of(&sp);
    assert_int_equal(st.n, 100000);
    assert_true(fabs(st.mean_ns / 1e6 - 1) < 0.02);
    assert_true(fabs(st.cv - 1) < 0.02);
}

static void constant_gaps_are_exact(void **state)
{
    lg_sched_spec sp = {.seed = 1, .burstiness = INFINITY, .stages = &MANY, .n_stages = 1};
    gap_stats st = stats_of(&sp);
    assert_int_equal(st.n, 100000);
    assert_true(st.mean_ns == 1e6);
    assert_true(st.cv == 0);
}

/* A constant rate r over D seconds sends r D requests, the j-th at j / r,
 * also where 1e9 / r is no whole number of ns (summing those gaps fell
 * short of D and let one more in). */
static void constant_rate_fills_its_duration_exactly(void **state)
{
    (void)state;
    const double rates[] = {60, 3, 7, 1000.0 / 3};
    const int64_t secs[] = {5, 1, 3, 3};
    const int64_t want[] = {300, 3, 21, 1000};
    for (int c = 0; c < 4; c++) {
        lg_stage st = {.rate_per_s = rates[c], .duration_ns = secs[c] * 1000000000LL};
        lg_sched_spec sp = {.seed = 1, .burstiness = INFINITY, .stages = &st, .n_stages = 1};
        char err[128];
        lg_sched *it = lg_sched_new(&sp, err, sizeof err);
        assert_non_null(it);
        lg_arrival a;
        int64_t n = 0, last = -1;
        while (lg_sched_next(it, &a)) {
            assert_true(llabs(a.t_ns - (int64_t)llround((double)n * 1e9 / rates[c])) <= 1);
            last = a.t_ns;
            n++;
        }
        lg_sched_free(it);
        if (n != want[c])
            fail_msg("rate %g for %lld s: %lld arrivals, expected %lld", rates[c],
                     (long long)secs[c], (long long)n, (long long)want[c]);
        assert_true(last < secs[c] * 1000000000LL);
    }
}

static void gamma_shape_sets_the_cv(void **state)
{
    lg_sched_spec sp = {.seed = 3, .burstiness = 0.25, .stages = &MANY, .n_stages = 1};
    gap_stats st = stats_of(&sp);
    assert_true(fabs(st.mean_ns / 1e6 - 1) < 0.04); /* SE 0.6 % with CV 2 */
    assert_true(fabs(st.cv * st.cv - 4) < 0.4);
    sp.burstiness = 4; /* smoother than Poisson: CV^2 = 1/4 */
    st = stats_of(&sp);
    assert_true(fabs(st.mean_ns / 1e6 - 1) < 0.01);
    assert_true(fabs(st.cv * st.cv - 0.25) < 0.025);
}

static void infinite_rate_sends_all_at_once(void **state)
{
    lg_stage st = {.rate_per_s = INFINITY, .max_requests = 50};
    lg_sched_spec sp = {.seed = 1, .burstiness = 1, .stages = &st, .n_stages = 1};
    lg_sched *s = must_new(&sp);
    lg_arrival a;
    int n = 0;
    while (lg_sched_next(s, &a)) {
        assert_int_equal(a.t_ns, 0);
        assert_int_equal(a.index, n);
        assert_int_equal(a.input_tokens, -1);
        n++;
    }
    assert_int_equal(n, 50);
    assert_int_equal(lg_sched_next(s, &a), 0); /* stays at the end */
    lg_sched_free(s);
}

static void the_same_seed_gives_the_same_stream(void **state)
{
    lg_stage st = {.rate_per_s = 500, .max_requests = 2000};
    lg_sched_spec sp = {.seed = 42, .burstiness = 1, .stages = &st, .n_stages = 1};
    lg_sched *a = must_new(&sp), *b = must_new(&sp);
    sp.seed = 43;
    lg_sched *c = must_new(&sp);
    lg_arrival x, y, z;
    int differ = 0;
    while (lg_sched_next(a, &x)) {
        assert_int_equal(lg_sched_next(b, &y), 1);
        assert_int_equal(lg_sched_next(c, &z), 1);
        assert_int_equal(x.t_ns, y.t_ns);
        assert_int_equal(x.index, y.index);
        differ += x.t_ns != z.t_ns;
    }
    assert_int_equal(lg_sched_next(b, &y), 0);
    assert_true(differ > 1900);
    lg_sched_free(a);
    lg_sched_free(b);
    lg_sched_free(c);
}

static void round_robin_split_is_the_global_stream(void **state)
{
    lg_stage stages[2] = {{.rate_per_s = 300, .duration_ns = 2000000000},
                          {.rate_per_s = 900, .max_requests = 777}};
    lg_sched_spec sp = {
        .seed = 9, .burstiness = 0.5, .stages = stages, .n_stages = 2, .pause_ns = 100000000};
    lg_sched *g = must_new(&sp);
    lg_arrival all[3000], a;
    int n = 0;
    while (lg_sched_next(g, &a)) {
        assert_true(n < 3000);
        all[n++] = a;
    }
    lg_sched_free(g);
    assert_true(n > 777);
    for (int k = 1; k <= 5; k++) {
        int seen = 0;
        for (int w = 0; w < k; w++) {
            lg_sched *s = must_new(&sp);
            int64_t expect = w;
            while (lg_sched_next_for(s, w, k, &a)) {
                assert_true(expect < n);
                const lg_arrival *e = &all[expect];
                assert_int_equal(a.index, e->index);
                assert_int_equal(a.t_ns, e->t_ns);
                assert_int_equal(a.stage, e->stage);
                expect += k;
                seen++;
            }
            assert_true(expect >= n); /* nothing of this worker's was left out */
            lg_sched_free(s);
        }
        assert_int_equal(seen, n);
    }
    lg_sched *s = must_new(&sp);
    assert_int_equal(lg_sched_next_for(s, 2, 2, &a), 0); /* no such worker */
    assert_int_equal(lg_sched_next_for(s, 0, 0, &a), 0);
    assert_int_equal(lg_sched_next_for(s, -1, 2, &a), 0);
    /* and a refused call consumes nothing: the stream still starts at 0 */
    assert_int_equal(lg_sched_next(s, &a), 1);
    assert_int_equal(a.index, 0);
    lg_sched_free(s);
}

static void stages_follow_each_other_with_the_pause(void **state)
{
    lg_stage stages[3] = {
        {.rate_per_s = 10, .duration_ns = 1000000000}, /* 0, 0.1, ... 0.9 s */
        {.rate_per_s = 20, .max_requests = 5},         /* 5 arrivals, ends at +0.25 s */
        {.rate_per_s = 100, .duration_ns = 1000000000, .max_requests = 1000}, /* by time */
    };
    lg_sched_spec sp = {
        .seed = 5, .burstiness = INFINITY, .stages = stages, .n_stages = 3, .pause_ns = 500000000};
    lg_sched *s = must_new(&sp);
    assert_int_equal(lg_sched_stage_start_ns(s, 0), 0);
    assert_int_equal(lg_sched_stage_start_ns(s, 1), 1500000000);
    assert_int_equal(lg_sched_stage_start_ns(s, 2), 2250000000LL);
    assert_int_equal(lg_sched_stage_start_ns(s, 3), -1);
    int count[3] = {0};
    lg_arrival a;
    int64_t prev = -1;
    while (lg_sched_next(s, &a)) {
        assert_true(a.stage >= 0 && a.stage < 3);
        int64_t start = lg_sched_stage_start_ns(s, a.stage);
        assert_int_equal(a.t_ns, start + (int64_t)count[a.stage] *
                                             (int64_t)(1e9 / stages[a.stage].rate_per_s));
        assert_true(a.t_ns >= prev);
        prev = a.t_ns;
        count[a.stage]++;
    }
    assert_int_equal(count[0], 10);
    assert_int_equal(count[1], 5);
    assert_int_equal(count[2], 100);
    lg_sched_free(s);
}

static void poisson_stages_stay_inside_their_windows(void **state)
{
    lg_stage stages[2] = {{.rate_per_s = 2000, .duration_ns = 1000000000},
                          {.rate_per_s = 500, .duration_ns = 2000000000}};
    lg_sched_spec sp = {
        .seed = 11, .burstiness = 1, .stages = stages, .n_stages = 2, .pause_ns = 300000000};
    lg_sched *s = must_new(&sp);
    int64_t start1 = lg_sched_stage_start_ns(s, 1);
    assert_int_equal(start1, 1300000000);
    int count[2] = {0};
    lg_arrival a;
    while (lg_sched_next(s, &a)) {
        if (a.stage == 0)
            assert_true(a.t_ns >= 0 && a.t_ns < 1000000000);
        else
            assert_true(a.t_ns >= start1 && a.t_ns < start1 + 2000000000);
        count[a.stage]++;
    }
    /* Poisson counts of mean 2000 and 1000: within 6 sd. */
    assert_true(abs(count[0] - 2000) < 6 * 45);
    assert_true(abs(count[1] - 1000) < 6 * 32);
    lg_sched_free(s);
}

/* A subnormal rate makes the gamma draw's scale infinite: the first arrival
 * comes at the stage's start and the next is past any window, so the stage
 * holds one arrival and the next stage starts on time (the fuzzer found a
 * second arrival placed at the schedule's range end, inside stage 0). */
static void a_subnormal_rate_ends_its_stage(void **state)
{
    (void)state;
    lg_stage stages[2] = {
        {.rate_per_s = 1.1951453304571622e-310, .duration_ns = 1000000000, .max_requests = 100},
        {.rate_per_s = INFINITY, .duration_ns = 1000000, .max_requests = 2}};
    lg_sched_spec sp = {
        .seed = 181419421455147ULL, .burstiness = 0.001, .stages = stages, .n_stages = 2};
    lg_sched *s = must_new(&sp);
    assert_int_equal(lg_sched_stage_start_ns(s, 1), 1000000000);
    int count[2] = {0};
    lg_arrival a;
    while (lg_sched_next(s, &a)) {
        int64_t start = lg_sched_stage_start_ns(s, a.stage);
        assert_true(a.t_ns >= start && a.t_ns - start <= stages[a.stage].duration_ns);
        count[a.stage]++;
    }
    assert_int_equal(count[0], 1);
    assert_int_equal(count[1], 2);
    lg_sched_free(s);
}

static void global_cap_ends_the_stream(void **state)
{
    lg_stage stages[2] = {{.rate_per_s = 10, .max_requests = 7},
                          {.rate_per_s = 10, .max_requests = 7}};
    lg_sched_spec sp = {
        .seed = 1, .burstiness = INFINITY, .stages = stages, .n_stages = 2, .max_requests = 5};
    lg_sched *s = must_new(&sp);
    lg_arrival a;
    int n = 0;
    while (lg_sched_next(s, &a))
        assert_int_equal(a.stage, 0), n++;
    assert_int_equal(n, 5);
    assert_int_equal(lg_sched_stage_start_ns(s, 1), -1); /* never reached */
    lg_sched_free(s);
    /* An unbounded last stage is fine under a global cap. */
    lg_stage open = {.rate_per_s = 100};
    sp = (lg_sched_spec){
        .seed = 1, .burstiness = 1, .stages = &open, .n_stages = 1, .max_requests = 123};
    s = must_new(&sp);
    n = 0;
    while (lg_sched_next(s, &a))
        n++;
    assert_int_equal(n, 123);
    lg_sched_free(s);
}

static void trace_replay_keeps_times_and_tokens(void **state)
{
    const lg_trace_row rows[4] = {{0, 10, 5}, {1000000, 20, 6}, {1000000, 30, 7}, {5000001, 40, 8}};
    lg_sched_spec sp = {.trace = rows,
                        .n_trace = 4,
                        .trace_speedup = 2,
                        .stages = NULL,
                        .burstiness = 0 /* ignored for a trace */};
    lg_sched *s = must_new(&sp);
    lg_arrival a;
    const int64_t want[4] = {0, 500000, 500000, 2500000}; /* 5000001 / 2 is rounded */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(lg_sched_next(s, &a), 1);
        assert_int_equal(a.index, i);
        assert_true(llabs(a.t_ns - want[i]) <= 1);
        assert_int_equal(a.input_tokens, rows[i].input_tokens);
        assert_int_equal(a.output_tokens, rows[i].output_tokens);
        assert_int_equal(a.stage, 0);
    }
    assert_int_equal(lg_sched_next(s, &a), 0);
    lg_sched_free(s);
    /* Speedup 0 means 1, and the global cap applies. */
    sp.trace_speedup = 0;
    sp.max_requests = 2;
    s = must_new(&sp);
    assert_int_equal(lg_sched_next(s, &a), 1);
    assert_int_equal(lg_sched_next(s, &a), 1);
    assert_int_equal(a.t_ns, 1000000);
    assert_int_equal(lg_sched_next(s, &a), 0);
    lg_sched_free(s);
}

/* vLLM's ramp-up: the rate at arrival j of N moves from a to b, linearly or
 * geometrically in p = j / (N - 1). */
static void ramp_rates_move_from_start_to_end(void **state)
{
    lg_stage lin = {
        .rate_per_s = 10, .max_requests = 5, .ramp = LG_RAMP_LINEAR, .ramp_end_per_s = 50};
    assert_true(lg_stage_rate_at(&lin, 0, 5) == 10);
    assert_true(lg_stage_rate_at(&lin, 1, 5) == 20);
    assert_true(lg_stage_rate_at(&lin, 4, 5) == 50);
    assert_true(lg_stage_rate_at(&lin, 9, 5) == 50); /* never past the end */
    lg_stage ex = lin;
    ex.ramp = LG_RAMP_EXPONENTIAL;
    ex.ramp_end_per_s = 1000;
    assert_true(fabs(lg_stage_rate_at(&ex, 2, 5) - 100) < 1e-9); /* the geometric mean */
    assert_true(fabs(lg_stage_rate_at(&ex, 4, 5) - 1000) < 1e-9);
    lg_stage flat = {.rate_per_s = 7};
    assert_true(lg_stage_rate_at(&flat, 3, 5) == 7);
    lg_stage one = lin;
    assert_true(lg_stage_rate_at(&one, 0, 1) == 10); /* one arrival: its start rate */
}

/* At a constant rate (burstiness inf) the gap before arrival j is exactly
 * 1 / r(j), as vLLM's delay for request j; the first arrival is at 0. */
static void a_constant_ramp_has_the_gaps_of_its_rates(void **state)
{
    lg_stage st = {
        .rate_per_s = 10, .max_requests = 5, .ramp = LG_RAMP_LINEAR, .ramp_end_per_s = 50};
    lg_sched_spec sp = {.seed = 1, .burstiness = INFINITY, .stages = &st, .n_stages = 1};
    lg_sched *s = must_new(&sp);
    lg_arrival a;
    const double want[5] = {0, 1e9 / 20, 1e9 / 20 + 1e9 / 30, 1e9 / 20 + 1e9 / 30 + 1e9 / 40,
                            1e9 / 20 + 1e9 / 30 + 1e9 / 40 + 1e9 / 50};
    for (int j = 0; j < 5; j++) {
        assert_true(lg_sched_next(s, &a));
        assert_int_equal(a.in_stage, j);
        assert_true(fabs((double)a.t_ns - want[j]) <= 1);
    }
    assert_false(lg_sched_next(s, &a));
    lg_sched_free(s);
}

/* A ramp's stage ends where its next arrival would have come, at the rate
 * of that arrival (the end rate, held): the next stage starts there. */
static void the_stage_after_a_ramp_starts_where_the_ramp_ends(void **state)
{
    lg_stage st[2] = {
        {.rate_per_s = 10, .max_requests = 5, .ramp = LG_RAMP_LINEAR, .ramp_end_per_s = 50},
        {.rate_per_s = 10, .max_requests = 1}};
    lg_sched_spec sp = {.seed = 1, .burstiness = INFINITY, .stages = st, .n_stages = 2};
    lg_sched *s = must_new(&sp);
    double want = 1e9 / 20 + 1e9 / 30 + 1e9 / 40 + 1e9 / 50 + 1e9 / 50;
    assert_true(fabs((double)lg_sched_stage_start_ns(s, 1) - want) <= 1);
    lg_sched_free(s);
}

/* A Poisson ramp from 100 to 1,000 per s over 20,000 arrivals: the mean gap
 * of each tenth is 1 / (its mean rate) within 10% (2,000 exponential gaps:
 * 4.5 standard errors), and the whole spans
 * (N - 1) ln(b / a) / (b - a), the integral of 1 / r. */
static void a_poisson_ramp_speeds_up_as_planned(void **state)
{
    const int64_t n = 20000;
    lg_stage st = {
        .rate_per_s = 100, .max_requests = n, .ramp = LG_RAMP_LINEAR, .ramp_end_per_s = 1000};
    lg_sched_spec sp = {.seed = 3, .burstiness = 1, .stages = &st, .n_stages = 1};
    lg_sched *s = must_new(&sp);
    lg_arrival a;
    int64_t prev = 0, last = 0;
    double sum[10] = {0}, inv[10] = {0};
    int64_t cnt[10] = {0};
    for (int64_t j = 0; lg_sched_next(s, &a); j++) {
        if (j > 0) {
            int d = (int)(j * 10 / n);
            sum[d] += (double)(a.t_ns - prev);
            inv[d] += 1e9 / lg_stage_rate_at(&st, j, n);
            cnt[d]++;
        }
        prev = last = a.t_ns;
    }
    lg_sched_free(s);
    for (int d = 0; d < 10; d++)
        if (fabs(sum[d] / inv[d] - 1) > 0.10)
            fail_msg("tenth %d: mean gap %.0f ns, planned %.0f", d, sum[d] / (double)cnt[d],
                     inv[d] / (double)cnt[d]);
    double span = (double)(n - 1) * log(10.0) / 900 * 1e9;
    assert_true(fabs((double)last / span - 1) < 0.02);
}

static void expect_error(const lg_sched_spec *sp, const char *want)
{
    char err[256] = "";
    lg_sched *s = lg_sched_new(sp, err, sizeof err);
    if (s) {
        lg_sched_free(s);
        fail_msg("accepted a spec that should fail with '%s'", want);
    }
    if (!strstr(err, want)) fail_msg("error '%s' does not contain '%s'", err, want);
}

static void validation_names_the_field(void **state)
{
    lg_stage ok = {.rate_per_s = 10, .duration_ns = 1000000000};
    lg_stage stages[3] = {ok, ok, ok};
    lg_sched_spec sp = {.seed = 1, .burstiness = 1, .stages = stages, .n_stages = 3};
    stages[2].rate_per_s = -5;
    expect_error(&sp, "stages[2].rate: must be > 0 and <= 1e9 per s (or inf), got -5");
    stages[2].rate_per_s = 2e9;
    expect_error(&sp, "stages[2].rate");
    stages[2].rate_per_s = NAN;
    expect_error(&sp, "stages[2].rate");
    stages[2] = ok;
    stages[1].duration_ns = -1;
    expect_error(&sp, "stages[1].duration: must be >= 0");
    stages[1] = ok;
    stages[0].max_requests = -3;
    expect_error(&sp, "stages[0].max_requests: must be >= 0, got -3");
    stages[0] = (lg_stage){.rate_per_s = 10};
    expect_error(&sp, "stages[0]: never ends");
    stages[0] = (lg_stage){.rate_per_s = INFINITY, .duration_ns = 1000};
    expect_error(&sp, "stages[0].rate: inf");
    /* Planning a count-bounded stage before another is bounded too. */
    stages[0] = (lg_stage){.rate_per_s = 1e6, .max_requests = 1000000000000LL};
    expect_error(&sp, "stages[0].max_requests: more than 10000000 arrivals");
    stages[0] = (lg_stage){.rate_per_s = INFINITY, .max_requests = 1000000000000000LL};
    lg_sched *s = lg_sched_new(&sp, NULL, 0); /* all at once: nothing to draw */
    assert_non_null(s);
    assert_int_equal(lg_sched_stage_start_ns(s, 1), 0);
    lg_sched_free(s);
    stages[0] = ok;
    sp.burstiness = 0;
    expect_error(&sp, "burstiness: must be >= 0.001 (or inf), got 0");
    sp.burstiness = 1e-300;
    expect_error(&sp, "burstiness");
    sp.burstiness = 1;
    sp.pause_ns = -1;
    expect_error(&sp, "pause: must be >= 0");
    sp.pause_ns = 0;
    sp.max_requests = -1;
    expect_error(&sp, "max_requests: must be >= 0");
    sp.max_requests = 0;
    sp.n_stages = 0;
    expect_error(&sp, "stages: at least one");
    const lg_trace_row rows[2] = {{100, 1, 1}, {50, 1, 1}};
    lg_sched_spec tr = {.trace = rows, .n_trace = 2, .trace_speedup = 1};
    expect_error(&tr, "trace[1].t");
    tr.n_trace = 1;
    tr.trace_speedup = -2;
    expect_error(&tr, "trace_speedup: must be > 0, got -2");
    tr.n_trace = 0;
    tr.trace_speedup = 1;
    expect_error(&tr, "trace: has no rows");
    const lg_trace_row far[2] = {{0, 1, 1}, {INT64_MAX / 2, 1, 1}};
    tr = (lg_sched_spec){.trace = far, .n_trace = 2, .trace_speedup = 0.5};
    expect_error(&tr, "trace[1].t: 4611686018427387903 ns at speedup 0.5 is beyond");
    /* ramps: counted, finite rates at both ends, a known kind */
    lg_stage ramp = {
        .rate_per_s = 10, .duration_ns = 1000000000, .ramp = LG_RAMP_LINEAR, .ramp_end_per_s = 20};
    lg_sched_spec rs = {.seed = 1, .burstiness = 1, .stages = &ramp, .n_stages = 1};
    expect_error(&rs, "stages[0]: a ramp moves its rate over its arrivals, so the stage needs "
                      "max_requests (or a global max_requests)");
    rs.max_requests = 100; /* the global cap counts the last stage */
    lg_sched_free(must_new(&rs));
    ramp.ramp_end_per_s = 0;
    expect_error(&rs, "stages[0]: a ramp's start and end rates must be > 0 and <= 1e9 per s, got "
                      "10 and 0");
    ramp.ramp_end_per_s = 20;
    ramp.rate_per_s = INFINITY;
    expect_error(&rs, "got inf and 20");
    ramp.rate_per_s = 10;
    ramp.ramp = (lg_ramp)7;
    expect_error(&rs, "stages[0].ramp: unknown kind 7");
}

/* lg_sched_rest_for against the walk it replaces: for worker w of k, after
 * `taken` of its arrivals, the per-stage counts of what lg_sched_next_for
 * would still give. */
static void rest_matches_the_walk(const lg_sched_spec *sp, int k, int taken)
{
    enum { MAXS = 4 };
    assert_true(sp->n_stages <= MAXS);
    for (int w = 0; w < k; w++) {
        lg_sched *walk = must_new(sp), *count = must_new(sp);
        lg_arrival a;
        for (int i = 0; i < taken; i++) {
            int more = lg_sched_next_for(walk, w, k, &a);
            assert_int_equal(lg_sched_next_for(count, w, k, &a), more);
        }
        int64_t want[MAXS] = {0}, got[MAXS] = {0};
        while (lg_sched_next_for(walk, w, k, &a))
            want[a.stage]++;
        assert_int_equal(lg_sched_rest_for(count, w, k, got, sp->n_stages, INT64_MAX), 1);
        for (size_t st = 0; st < sp->n_stages; st++)
            if (got[st] != want[st])
                fail_msg("k=%d worker %d after %d: stage %zu counted %lld, the walk %lld", k, w,
                         taken, st, (long long)got[st], (long long)want[st]);
        assert_int_equal(lg_sched_next(count, &a), 0); /* the iterator is ended */
        lg_sched_free(walk);
        lg_sched_free(count);
    }
}

static void the_rest_is_counted_as_the_walk_counts(void **state)
{
    (void)state;
    /* count-bounded stages (arithmetic), a timed one (drawn), a global cap */
    lg_stage mixed[3] = {{.rate_per_s = 500, .max_requests = 37},
                         {.rate_per_s = 800, .duration_ns = 50000000},
                         {.rate_per_s = INFINITY, .max_requests = 29}};
    lg_sched_spec sp = {.seed = 3, .burstiness = 1, .stages = mixed, .n_stages = 3};
    for (int k = 1; k <= 4; k++)
        for (int taken = 0; taken <= 40; taken += 7)
            rest_matches_the_walk(&sp, k, taken);
    sp.max_requests = 61; /* cuts the last stage short */
    for (int k = 1; k <= 3; k++)
        for (int taken = 0; taken <= 30; taken += 5)
            rest_matches_the_walk(&sp, k, taken);
    /* a count-bounded stage that also has a duration is drawn: its end is
     * whichever comes first */
    lg_stage both[2] = {{.rate_per_s = 1000, .max_requests = 500, .duration_ns = 20000000},
                        {.rate_per_s = 100, .max_requests = 11}};
    sp = (lg_sched_spec){.seed = 5, .burstiness = 1, .stages = both, .n_stages = 2};
    for (int k = 1; k <= 3; k++)
        rest_matches_the_walk(&sp, k, 4);
    /* sessions: a user's arrivals go to one worker, (in_stage % users) % k */
    lg_stage two[2] = {{.rate_per_s = 300, .max_requests = 53},
                       {.rate_per_s = 300, .max_requests = 47}};
    sp = (lg_sched_spec){
        .seed = 9, .burstiness = 1, .stages = two, .n_stages = 2, .session_users = 7};
    for (int k = 1; k <= 4; k++)
        for (int taken = 0; taken <= 25; taken += 3)
            rest_matches_the_walk(&sp, k, taken);
    /* a trace is walked */
    lg_trace_row rows[9];
    for (int i = 0; i < 9; i++)
        rows[i] = (lg_trace_row){.t_ns = i * 1000, .input_tokens = 1, .output_tokens = 1};
    sp = (lg_sched_spec){.seed = 1, .trace = rows, .n_trace = 9};
    for (int k = 1; k <= 3; k++)
        rest_matches_the_walk(&sp, k, 1);
}

static void a_huge_count_is_counted_at_once(void **state)
{
    (void)state;
    /* 10^15 prompts (more than any walk could draw), split over 3 workers:
     * worker w has the indices i % 3 == w, whatever the count */
    lg_stage st = {.rate_per_s = 1e9};
    lg_sched_spec sp = {
        .seed = 1, .burstiness = 1, .stages = &st, .n_stages = 1, .max_requests = 1000000000000000};
    int64_t total = 0;
    for (int w = 0; w < 3; w++) {
        lg_sched *s = must_new(&sp);
        lg_arrival a;
        for (int i = 0; i < 5; i++)
            assert_true(lg_sched_next_for(s, w, 3, &a));
        int64_t left = 0;
        assert_int_equal(lg_sched_rest_for(s, w, 3, &left, 1, 1000), 1);
        int64_t share = 333333333333333 + (w == 0);
        assert_int_equal(left, share - 5);
        total += left + 5;
        lg_sched_free(s);
    }
    assert_int_equal(total, 1000000000000000);
    /* all at once, 2^63 - 1 of them, then another stage: the count stops
     * where no index is left (a lower bound), and nothing overflows */
    lg_stage two[2] = {{.rate_per_s = INFINITY, .max_requests = INT64_MAX},
                       {.rate_per_s = 10, .max_requests = 5}};
    sp = (lg_sched_spec){.seed = 1, .burstiness = 1, .stages = two, .n_stages = 2};
    lg_sched *s = must_new(&sp);
    int64_t left[2] = {0, 0};
    assert_int_equal(lg_sched_rest_for(s, 1, 2, left, 2, 1000), 0);
    assert_int_equal(left[0], INT64_MAX / 2);
    assert_int_equal(left[1], 0);
    lg_arrival a;
    assert_int_equal(lg_sched_next(s, &a), 0);
    lg_sched_free(s);
}

static void a_timed_walk_past_its_bound_says_so(void **state)
{
    (void)state;
    lg_stage st = {.rate_per_s = 10000, .duration_ns = 1000000000}; /* about 10,000 */
    lg_sched_spec sp = {.seed = 2, .burstiness = 1, .stages = &st, .n_stages = 1};
    lg_sched *s = must_new(&sp);
    int64_t left = 0;
    assert_int_equal(lg_sched_rest_for(s, 0, 2, &left, 1, 100), 0);
    assert_in_range(left, 40, 60); /* about half of the 100 drawn are worker 0's */
    lg_arrival a;
    assert_int_equal(lg_sched_next(s, &a), 0);
    lg_sched_free(s);
    /* within its bound the same walk is whole */
    s = must_new(&sp);
    left = 0;
    assert_int_equal(lg_sched_rest_for(s, 0, 2, &left, 1, 1000000), 1);
    assert_in_range(left, 4500, 5500);
    lg_sched_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(poisson_gaps_have_the_rate_and_cv_one),
        cmocka_unit_test(constant_gaps_are_exact),
        cmocka_unit_test(constant_rate_fills_its_duration_exactly),
        cmocka_unit_test(gamma_shape_sets_the_cv),
        cmocka_unit_test(infinite_rate_sends_all_at_once),
        cmocka_unit_test(the_same_seed_gives_the_same_stream),
        cmocka_unit_test(round_robin_split_is_the_global_stream),
        cmocka_unit_test(stages_follow_each_other_with_the_pause),
        cmocka_unit_test(poisson_stages_stay_inside_their_windows),
        cmocka_unit_test(a_subnormal_rate_ends_its_stage),
        cmocka_unit_test(global_cap_ends_the_stream),
        cmocka_unit_test(trace_replay_keeps_times_and_tokens),
        cmocka_unit_test(validation_names_the_field),
        cmocka_unit_test(ramp_rates_move_from_start_to_end),
        cmocka_unit_test(a_constant_ramp_has_the_gaps_of_its_rates),
        cmocka_unit_test(the_stage_after_a_ramp_starts_where_the_ramp_ends),
        cmocka_unit_test(a_poisson_ramp_speeds_up_as_planned),
        cmocka_unit_test(the_rest_is_counted_as_the_walk_counts),
        cmocka_unit_test(a_huge_count_is_counted_at_once),
        cmocka_unit_test(a_timed_walk_past_its_bound_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
