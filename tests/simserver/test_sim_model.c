/* Unit tests for sim_model: the latency formulas, the jitter's distribution
 * (sample mean and sd within five standard errors, a fixed seed), the load
 * factor, the prefix cache (hits, the last-token rule, LRU eviction), the
 * output tokens and the fault catalogue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "sim_model.h"

static const int64_t MS = 1000000;

static void ttft_is_fixed_or_prefill_from_uncached_tokens(void **state)
{
    sim_latency_cfg c = {
        .prefill_overhead_ns = 2 * MS, .prefill_per_token_ns = 100000, .time_factor_under_load = 1};
    assert_int_equal(sim_model_ttft_ns(&c, NULL, 0, 1), 2 * MS);
    assert_int_equal(sim_model_ttft_ns(&c, NULL, 30, 1), 5 * MS);
    c.ttft_ns = 20 * MS; /* a fixed TTFT overrides the prefill terms */
    assert_int_equal(sim_model_ttft_ns(&c, NULL, 30, 1), 20 * MS);
    c.itl_ns = 5 * MS;
    assert_int_equal(sim_model_itl_ns(&c, NULL, 1), 5 * MS);
    assert_false(sim_model_is_instant(&c));
    sim_latency_cfg z = {.time_factor_under_load = 1};
    assert_true(sim_model_is_instant(&z));
}

static void load_factor_is_linear_from_one_to_max_num_seqs(void **state)
{
    sim_latency_cfg c = {.max_num_seqs = 5, .time_factor_under_load = 3.0, .itl_ns = 10 * MS};
    assert_float_equal(sim_load_factor(&c, 1), 1.0, 1e-12);
    assert_float_equal(sim_load_factor(&c, 3), 2.0, 1e-12);
    assert_float_equal(sim_load_factor(&c, 5), 3.0, 1e-12);
    assert_float_equal(sim_load_factor(&c, 50), 3.0, 1e-12); /* clamped */
    assert_float_equal(sim_load_factor(&c, 0), 1.0, 1e-12);
    assert_int_equal(sim_model_itl_ns(&c, NULL, 3), 20 * MS);
    c.max_num_seqs = 0; /* unlimited: no slow-down defined */
    assert_float_equal(sim_load_factor(&c, 100), 1.0, 1e-12);
}

static void check_moments(int64_t (*draw)(const sim_latency_cfg *, gsl_rng *),
                          const sim_latency_cfg *c, double mean, double sd)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    const int n = 20000;
    double s1 = 0, s2 = 0;
    int64_t min = INT64_MAX;
    for (int i = 0; i < n; i++) {
        double v = (double)draw(c, r);
        s1 += v;
        s2 += v * v;
        if ((int64_t)v < min) min = (int64_t)v;
    }
    double m = s1 / n, var = s2 / n - m * m;
    /* standard errors: sd/sqrt(n) for the mean, about sd/sqrt(2n) for the sd */
    assert_true(fabs(m - mean) < 5 * sd / sqrt(n));
    assert_true(fabs(sqrt(var) - sd) < 5 * sd / sqrt(2.0 * n));
    assert_true(min >= 0);
    gsl_rng_free(r);
}

static int64_t draw_ttft(const sim_latency_cfg *c, gsl_rng *r)
{
    return sim_model_ttft_ns(c, r, 0, 1);
}
static int64_t draw_itl(const sim_latency_cfg *c, gsl_rng *r)
{
    return sim_model_itl_ns(c, r, 1);
}

static void jitter_has_the_configured_mean_and_sd(void **state)
{
    sim_latency_cfg c = {.ttft_ns = 20 * MS,
                         .ttft_sd_ns = 2 * MS,
                         .itl_ns = 5 * MS,
                         .itl_sd_ns = MS / 2,
                         .time_factor_under_load = 1};
    check_moments(draw_ttft, &c, 20.0 * MS, 2.0 * MS);
    check_moments(draw_itl, &c, 5.0 * MS, 0.5 * MS);
}

static void jitter_never_goes_below_zero(void **state)
{
    sim_latency_cfg c = {.itl_ns = MS, .itl_sd_ns = 10 * MS, .time_factor_under_load = 1};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    int zeros = 0;
    for (int i = 0; i < 2000; i++) {
        int64_t v = sim_model_itl_ns(&c, r, 1);
        assert_true(v >= 0);
        zeros += v == 0;
    }
    assert_true(zeros > 0); /* the negative half was clamped, not redrawn */
    gsl_rng_free(r);
}

static void tokens(uint64_t *t, int n, uint64_t base)
{
    for (int i = 0; i < n; i++)
        t[i] = base + (uint64_t)i;
}

static void cache_hits_shared_prefixes_but_not_the_last_token(void **state)
{
    sim_prefix_cache c;
    assert_int_equal(sim_cache_init(&c, 100, 4), 0);
    uint64_t a[10];
    tokens(a, 10, 1000);
    assert_int_equal(sim_cache_lookup_insert(&c, a, 10), 0); /* cold */
    assert_int_equal(sim_cache_lookup_insert(&c, a, 10), 8); /* blocks 0,1 */
    /* 8 tokens = 2 full blocks, but the block holding the last token is
     * always recomputed, so only block 0 counts. */
    assert_int_equal(sim_cache_lookup_insert(&c, a, 8), 4);
    /* a different second block: only the first block hits */
    uint64_t b[10];
    memcpy(b, a, sizeof b);
    b[5] = 1;
    assert_int_equal(sim_cache_lookup_insert(&c, b, 10), 4);
    /* a different first token changes every block's key */
    b[0] = 2;
    assert_int_equal(sim_cache_lookup_insert(&c, b, 10), 0);
    sim_cache_free(&c);
}

static void cache_evicts_the_least_recently_used_block(void **state)
{
    sim_prefix_cache c;
    assert_int_equal(sim_cache_init(&c, 2, 2), 0);
    uint64_t a[3], b[3], d[3];
    tokens(a, 3, 100);
    tokens(b, 3, 200);
    tokens(d, 3, 300);
    sim_cache_lookup_insert(&c, a, 3);                      /* cache: a */
    sim_cache_lookup_insert(&c, b, 3);                      /* cache: b a */
    assert_int_equal(sim_cache_lookup_insert(&c, a, 3), 2); /* hit; cache: a b */
    sim_cache_lookup_insert(&c, d, 3);                      /* evicts b; cache: d a */
    assert_int_equal(sim_cache_lookup_insert(&c, a, 3), 2);
    assert_int_equal(sim_cache_lookup_insert(&c, b, 3), 0); /* evicted; evicts d */
    assert_int_equal(sim_cache_lookup_insert(&c, d, 3), 0);
    sim_cache_free(&c);
    /* capacity 0 never hits */
    assert_int_equal(sim_cache_init(&c, 0, 2), 0);
    sim_cache_lookup_insert(&c, a, 3);
    assert_int_equal(sim_cache_lookup_insert(&c, a, 3), 0);
    sim_cache_free(&c);
}

static void cache_survives_heavy_churn(void **state)
{
    sim_prefix_cache c;
    assert_int_equal(sim_cache_init(&c, 64, 4), 0);
    uint64_t t[41];
    for (int round = 0; round < 500; round++) {
        tokens(t, 41, (uint64_t)(round % 37) * 1000);
        int64_t got = sim_cache_lookup_insert(&c, t, 41);
        assert_true(got >= 0 && got <= 40 && got % 4 == 0);
    }
    assert_true(c.n_used == 64);
    sim_cache_free(&c);
}

static void echo_mode_stops_when_the_prompt_runs_out(void **state)
{
    char words[] = "abc";
    uint32_t off[] = {0, 1, 2, 3};
    uint64_t h[3] = {1, 2, 3};
    sim_req_spec s = {
        .max_tokens = 5, .prompt_tokens = 3, .words = words, .word_off = off, .tok_hash = h};
    int stop;
    assert_int_equal(sim_model_output_tokens(&s, SIM_MODE_ECHO, &stop), 3);
    assert_true(stop);
    sim_token t = sim_model_token(&s, SIM_MODE_ECHO, 0, 1);
    assert_int_equal(t.len, 1);
    assert_memory_equal(t.word, "b", 1);
    /* a prompt of exactly max_tokens is cut by the limit, not run out of */
    s.max_tokens = 3;
    assert_int_equal(sim_model_output_tokens(&s, SIM_MODE_ECHO, &stop), 3);
    assert_false(stop);
    s.max_tokens = 5;
    s.ignore_eos = 1; /* cycles */
    assert_int_equal(sim_model_output_tokens(&s, SIM_MODE_ECHO, &stop), 5);
    assert_false(stop);
    t = sim_model_token(&s, SIM_MODE_ECHO, 0, 4);
    assert_memory_equal(t.word, "b", 1);
    assert_int_equal(sim_model_output_tokens(&s, SIM_MODE_RANDOM, &stop), 5);
    /* random mode is deterministic for the same request */
    sim_token r1 = sim_model_token(&s, SIM_MODE_RANDOM, 9, 2),
              r2 = sim_model_token(&s, SIM_MODE_RANDOM, 9, 2);
    assert_ptr_equal(r1.word, r2.word);
    assert_true(r1.len > 0 && strchr(r1.word, ' ') == NULL);
}

/* Choice 0 is the plain request's text; other choices draw other words in
 * random mode, the same ones in echo mode. */
static void choices_draw_their_own_words(void **state)
{
    char words[] = "abc";
    uint32_t off[] = {0, 1, 2, 3};
    uint64_t h[3] = {1, 2, 3};
    sim_req_spec s = {.max_tokens = 8,
                      .prompt_tokens = 3,
                      .words = words,
                      .word_off = off,
                      .tok_hash = h,
                      .prompt_hash = 42};
    int differ = 0;
    for (int64_t i = 0; i < 8; i++) {
        sim_token p = sim_model_token(&s, SIM_MODE_RANDOM, 9, i);
        sim_token c0 = sim_model_choice_token(&s, SIM_MODE_RANDOM, 9, 0, i);
        sim_token c1 = sim_model_choice_token(&s, SIM_MODE_RANDOM, 9, 1, i);
        sim_token c1b = sim_model_choice_token(&s, SIM_MODE_RANDOM, 9, 1, i);
        assert_ptr_equal(p.word, c0.word);
        assert_ptr_equal(c1.word, c1b.word); /* deterministic */
        differ += c1.word != c0.word;
        sim_token e0 = sim_model_choice_token(&s, SIM_MODE_ECHO, 9, 0, i);
        sim_token e3 = sim_model_choice_token(&s, SIM_MODE_ECHO, 9, 3, i);
        assert_ptr_equal(e0.word, e3.word);
    }
    assert_true(differ >= 4); /* 8 draws of 64 words: a few may coincide */
}

/* The synthetic log-probabilities: every value < 0, the chosen token the
 * most likely, alternatives non-increasing, distinct and not the chosen
 * word, probabilities summing below 1; the same for the same request, other
 * values for another "seed". */
static void logprobs_are_a_distribution_led_by_the_chosen_token(void **state)
{
    sim_req_spec s = {.max_tokens = 8, .prompt_hash = 77};
    int seen_low = 0, seen_high = 0;
    for (int64_t i = 0; i < 200; i++) {
        sim_token t = sim_model_choice_token(&s, SIM_MODE_RANDOM, 5, (int)(i % 3), i);
        sim_logprobs lp, again;
        sim_model_logprobs(&s, 5, (int)(i % 3), i, t, SIM_LOGPROBS_MAX, &lp);
        sim_model_logprobs(&s, 5, (int)(i % 3), i, t, SIM_LOGPROBS_MAX, &again);
        assert_int_equal(lp.n_alt, SIM_LOGPROBS_MAX);
        assert_true(lp.lp < 0 && lp.lp >= log(0.5) - 1e-12);
        seen_low += lp.lp < -0.5;
        seen_high += lp.lp > -0.2;
        double sum = exp(lp.lp);
        for (int a = 0; a < lp.n_alt; a++) {
            assert_true(lp.alt_lp[a] < 0);
            assert_true(lp.alt_lp[a] <= lp.lp);
            if (a) assert_true(lp.alt_lp[a] <= lp.alt_lp[a - 1]);
            assert_false(lp.alt[a].len == t.len && memcmp(lp.alt[a].word, t.word, t.len) == 0);
            for (int b = 0; b < a; b++)
                assert_ptr_not_equal(lp.alt[a].word, lp.alt[b].word);
            sum += exp(lp.alt_lp[a]);
            assert_true(lp.alt_lp[a] == again.alt_lp[a]);
            assert_ptr_equal(lp.alt[a].word, again.alt[a].word);
        }
        assert_true(sum < 1.0);
        assert_true(lp.lp == again.lp);
    }
    assert_true(seen_low > 10 && seen_high > 10); /* spread over [log 0.5, 0) */
    /* Fewer alternatives: a prefix of the same list. */
    sim_token t = sim_model_token(&s, SIM_MODE_RANDOM, 5, 3);
    sim_logprobs full, two;
    sim_model_logprobs(&s, 5, 0, 3, t, SIM_LOGPROBS_MAX, &full);
    sim_model_logprobs(&s, 5, 0, 3, t, 2, &two);
    assert_int_equal(two.n_alt, 2);
    assert_true(two.alt_lp[1] == full.alt_lp[1] && two.lp == full.lp);
    /* The request's seed, when given, decides the values (not the server's). */
    sim_req_spec r1 = s, r2 = s;
    r1.has_seed = r2.has_seed = 1;
    r1.seed = 1;
    r2.seed = 2;
    sim_logprobs a1, a1b, a2;
    sim_model_logprobs(&r1, 5, 0, 3, t, 3, &a1);
    sim_model_logprobs(&r1, 6, 0, 3, t, 3, &a1b);
    sim_model_logprobs(&r2, 5, 0, 3, t, 3, &a2);
    assert_true(a1.lp == a1b.lp);
    assert_true(a1.lp != a2.lp);
    sim_logprobs s5, s6;
    sim_model_logprobs(&s, 5, 0, 3, t, 3, &s5);
    sim_model_logprobs(&s, 6, 0, 3, t, 3, &s6);
    assert_true(s5.lp != s6.lp);
}

static void echoed_tokens_are_bounded_and_cut_on_utf8(void **state)
{
    char words[400];
    memset(words, 'a', sizeof words);
    memcpy(words + 255, "\xc3\xa9", 2); /* a 2-byte character across byte 256 */
    uint32_t off[] = {0, sizeof words};
    uint64_t h[1] = {1};
    sim_req_spec s = {
        .max_tokens = 2, .prompt_tokens = 1, .words = words, .word_off = off, .tok_hash = h};
    sim_token t = sim_model_token(&s, SIM_MODE_ECHO, 0, 0);
    assert_int_equal(t.len, 255);
    words[255] = 'a';
    words[256] = 'a';
    t = sim_model_token(&s, SIM_MODE_ECHO, 0, 0);
    assert_int_equal(t.len, SIM_TOKEN_MAX_BYTES);
}

static void fault_names_round_trip_and_lists_parse(void **state)
{
    for (int f = 1; f < SIM_FAULT_COUNT; f++)
        assert_int_equal(sim_fault_parse(sim_fault_name((sim_fault)f)), f);
    assert_int_equal(sim_fault_parse("nope"), SIM_FAULT_NONE);
    assert_int_equal(sim_fault_status(SIM_FAULT_RATE_LIMIT), 429);
    assert_int_equal(sim_fault_status(SIM_FAULT_INVALID_API_KEY), 401);
    assert_int_equal(sim_fault_status(SIM_FAULT_STALL), 0);
    unsigned m = 0;
    char bad[32];
    assert_int_equal(sim_fault_parse_list("stall,rate_limit", &m, bad, sizeof bad), 0);
    assert_int_equal(m, (1u << SIM_FAULT_STALL) | (1u << SIM_FAULT_RATE_LIMIT));
    assert_int_equal(sim_fault_parse_list("stall,oops", &m, bad, sizeof bad), -1);
    assert_string_equal(bad, "oops");
    assert_int_equal(sim_fault_parse_list("", &m, bad, sizeof bad), -1);
    assert_int_equal(sim_fault_parse_list("stall,,x", &m, bad, sizeof bad), -1);
}

static void fault_draws_follow_the_rate_and_the_mask(void **state)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    unsigned mask = (1u << SIM_FAULT_STALL) | (1u << SIM_FAULT_SERVER_ERROR);
    const int n = 20000;
    int hits = 0, stalls = 0;
    for (int i = 0; i < n; i++) {
        sim_fault f = sim_fault_draw(r, 30.0, mask);
        if (f == SIM_FAULT_NONE) continue;
        assert_true(f == SIM_FAULT_STALL || f == SIM_FAULT_SERVER_ERROR);
        hits++;
        stalls += f == SIM_FAULT_STALL;
    }
    double p = (double)hits / n;
    assert_true(fabs(p - 0.30) < 5 * sqrt(0.3 * 0.7 / n));
    assert_true(fabs((double)stalls / hits - 0.5) < 5 * sqrt(0.25 / hits));
    assert_int_equal(sim_fault_draw(r, 0.0, mask), SIM_FAULT_NONE);
    assert_int_not_equal(sim_fault_draw(r, 100.0, mask), SIM_FAULT_NONE);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ttft_is_fixed_or_prefill_from_uncached_tokens),
        cmocka_unit_test(load_factor_is_linear_from_one_to_max_num_seqs),
        cmocka_unit_test(jitter_has_the_configured_mean_and_sd),
        cmocka_unit_test(jitter_never_goes_below_zero),
        cmocka_unit_test(cache_hits_shared_prefixes_but_not_the_last_token),
        cmocka_unit_test(cache_evicts_the_least_recently_used_block),
        cmocka_unit_test(cache_survives_heavy_churn),
        cmocka_unit_test(echo_mode_stops_when_the_prompt_runs_out),
        cmocka_unit_test(echoed_tokens_are_bounded_and_cut_on_utf8),
        cmocka_unit_test(choices_draw_their_own_words),
        cmocka_unit_test(logprobs_are_a_distribution_led_by_the_chosen_token),
        cmocka_unit_test(fault_names_round_trip_and_lists_parse),
        cmocka_unit_test(fault_draws_follow_the_rate_and_the_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
