/* Unit tests for the vLLM metrics the engine moves and sim_metrics renders:
 * prefix-cache queries and hits (tokens), the KV blocks running requests
 * hold (grown per block of output, freed on removal and on a stall), the
 * per-request prompt and output length histograms, the older
 * time_per_output_token name beside inter_token_latency, and KV usage
 * summed over the workers' slots. On a virtual clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"

static const int64_t MS = 1000000;
static const int64_t T0 = 1000 * 1000000LL;
static const char *const served[] = {"sim-model"};

typedef struct fixture {
    sim_engine e;
    sim_metrics m;
    sim_prefix_cache cache;
} fixture;

static void setup(fixture *f, int64_t capacity)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(sim_cache_init(&f->cache, capacity, 16), 0);
    sim_engine_cfg cfg = {.lat = {.itl_ns = MS, .time_factor_under_load = 1},
                          .mode = SIM_MODE_RANDOM,
                          .seed = 7,
                          .enable_prefix_caching = 1};
    sim_engine_init(&f->e, &cfg, NULL, &f->cache, &f->m);
}

/* A request of `words` prompt words and max_tokens out, admitted at T0. */
static void start(fixture *f, sim_stream *s, int words, int out)
{
    char body[1024] = "{\"prompt\":\"";
    for (int i = 0; i < words; i++)
        snprintf(body + strlen(body), sizeof body - strlen(body), "w%d ", i);
    snprintf(body + strlen(body), sizeof body - strlen(body), "\",\"max_tokens\":%d}", out);
    sim_stream_init(s);
    sim_api_limits lim = {.served_models = served, .n_served = 1, .max_model_len = 32768};
    sim_api_error err;
    assert_int_equal(sim_api_parse(body, strlen(body), 0, &lim, &s->spec, &err), 0);
    sim_engine_prepare(&f->e, s, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f->e, s, T0), SIM_ADMIT_RUNNING);
}

static void step_n(fixture *f, sim_stream *s, int n)
{
    for (int i = 0; i < n; i++) {
        sim_event ev[SIM_STEP_EVENTS_MAX];
        int n_ev;
        assert_true(sim_engine_step(&f->e, s, s->hn.deadline_ns, ev, &n_ev) != SIM_STEP_NOT_DUE);
    }
}

static char *render(const sim_metrics *m)
{
    rb_buf b = {0};
    sim_metrics_render(m, "sim-model", &b);
    rb_buf_add(&b, "", 1);
    return b.data;
}

/* The sample value of the line that starts with `line` (name{labels}). */
static double value_of(const char *text, const char *line)
{
    const char *p = strstr(text, line);
    if (!p) fail_msg("no line '%s' in the metrics", line);
    return strtod(p + strlen(line), NULL);
}

static void prefix_cache_queries_and_hits_count_tokens(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 1024);
    sim_stream s;
    start(&f, &s, 40, 1);
    assert_int_equal(f.m.prefix_queries, 40);
    assert_int_equal(f.m.prefix_hits, 0);
    sim_engine_remove(&f.e, &s, T0);
    start(&f, &s, 40, 1);
    assert_int_equal(f.m.prefix_queries, 80);
    assert_int_equal(f.m.prefix_hits, 32); /* two full blocks; the last token is computed */
    sim_engine_remove(&f.e, &s, T0);
    char *t = render(&f.m);
    assert_true(value_of(t, "vllm:prefix_cache_queries_total{model_name=\"sim-model\"} ") == 80);
    assert_true(value_of(t, "vllm:prefix_cache_hits_total{model_name=\"sim-model\"} ") == 32);
    assert_non_null(strstr(t, "# TYPE vllm:prefix_cache_hits_total counter\n"));
    free(t);
    /* without prefix caching nothing is queried */
    f.e.cfg.enable_prefix_caching = 0;
    start(&f, &s, 40, 1);
    assert_int_equal(f.m.prefix_queries, 80);
    sim_engine_remove(&f.e, &s, T0);
    sim_engine_free(&f.e);
    sim_cache_free(&f.cache);
}

static void kv_blocks_follow_prompt_and_output_and_are_freed(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 100);
    assert_int_equal(f.m.kv_blocks_total, 100);
    sim_stream a, b;
    start(&f, &a, 40, 20);
    assert_int_equal(f.m.kv_blocks_used, 3); /* ceil(40 / 16) */
    step_n(&f, &a, 8);                       /* 48 tokens: still 3 blocks */
    assert_int_equal(f.m.kv_blocks_used, 3);
    step_n(&f, &a, 1); /* the 49th starts a 4th */
    assert_int_equal(f.m.kv_blocks_used, 4);
    start(&f, &b, 10, 4);
    assert_int_equal(f.m.kv_blocks_used, 5);
    char *t = render(&f.m);
    assert_true(value_of(t, "vllm:kv_cache_usage_perc{model_name=\"sim-model\"} ") == 0.05);
    assert_true(value_of(t, "vllm:gpu_cache_usage_perc{model_name=\"sim-model\"} ") == 0.05);
    free(t);
    /* a stall releases the slot and its blocks */
    sim_engine_stall(&f.e, &b, T0);
    assert_int_equal(f.m.kv_blocks_used, 4);
    sim_engine_remove(&f.e, &b, T0); /* no second release */
    assert_int_equal(f.m.kv_blocks_used, 4);
    step_n(&f, &a, 11);
    sim_engine_complete(&f.e, &a, a.last_ns);
    sim_engine_remove(&f.e, &a, a.last_ns);
    assert_int_equal(f.m.kv_blocks_used, 0);
    sim_engine_free(&f.e);
    sim_cache_free(&f.cache);
}

static void finished_requests_fill_the_length_histograms(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 1024);
    sim_stream s;
    start(&f, &s, 40, 3);
    step_n(&f, &s, 3);
    sim_engine_complete(&f.e, &s, s.last_ns);
    sim_engine_remove(&f.e, &s, s.last_ns);
    start(&f, &s, 2, 7);
    step_n(&f, &s, 7);
    sim_engine_complete(&f.e, &s, s.last_ns);
    sim_engine_remove(&f.e, &s, s.last_ns);
    /* a request removed before it finished is not a finished request */
    start(&f, &s, 5, 7);
    sim_engine_remove(&f.e, &s, T0);
    char *t = render(&f.m);
    assert_non_null(strstr(t, "# TYPE vllm:request_prompt_tokens histogram\n"));
    assert_true(
        value_of(t, "vllm:request_prompt_tokens_bucket{le=\"2\",model_name=\"sim-model\"} ") == 1);
    assert_true(
        value_of(t, "vllm:request_prompt_tokens_bucket{le=\"20\",model_name=\"sim-model\"} ") == 1);
    assert_true(
        value_of(t, "vllm:request_prompt_tokens_bucket{le=\"50\",model_name=\"sim-model\"} ") == 2);
    assert_true(value_of(t, "vllm:request_prompt_tokens_sum{model_name=\"sim-model\"} ") == 42);
    assert_true(value_of(t, "vllm:request_prompt_tokens_count{model_name=\"sim-model\"} ") == 2);
    assert_true(value_of(t, "vllm:request_generation_tokens_bucket{le=\"5\",model_name=\"sim-"
                            "model\"} ") == 1);
    assert_true(value_of(t, "vllm:request_generation_tokens_bucket{le=\"10\",model_name=\"sim-"
                            "model\"} ") == 2);
    assert_true(value_of(t, "vllm:request_generation_tokens_bucket{le=\"+Inf\",model_name=\"sim-"
                            "model\"} ") == 2);
    assert_true(value_of(t, "vllm:request_generation_tokens_sum{model_name=\"sim-model\"} ") == 10);
    free(t);
    sim_engine_free(&f.e);
    sim_cache_free(&f.cache);
}

static void tpot_is_itl_under_its_older_name_and_preemptions_are_zero(void **state)
{
    (void)state;
    sim_metrics m;
    memset(&m, 0, sizeof m);
    sim_hist_add(&m.itl, 3 * MS);
    sim_hist_add(&m.itl, 30 * MS);
    char *t = render(&m);
    static const char *const sfx[] = {"_bucket{le=\"0.005\",model_name=\"sim-model\"} ",
                                      "_bucket{le=\"0.04\",model_name=\"sim-model\"} ",
                                      "_sum{model_name=\"sim-model\"} ",
                                      "_count{model_name=\"sim-model\"} "};
    static const double want[] = {1, 2, 0.033, 2};
    for (int i = 0; i < 4; i++) {
        char a[160], b[160];
        snprintf(a, sizeof a, "vllm:inter_token_latency_seconds%s", sfx[i]);
        snprintf(b, sizeof b, "vllm:time_per_output_token_seconds%s", sfx[i]);
        assert_true(value_of(t, a) == want[i]);
        assert_true(value_of(t, b) == want[i]);
    }
    assert_non_null(strstr(t, "# TYPE vllm:time_per_output_token_seconds histogram\n"));
    assert_true(value_of(t, "vllm:num_preemptions_total{model_name=\"sim-model\"} ") == 0);
    assert_non_null(strstr(t, "# TYPE vllm:num_preemptions_total counter\n"));
    /* no cache capacity: usage 0, not a division by zero */
    assert_true(value_of(t, "vllm:kv_cache_usage_perc{model_name=\"sim-model\"} ") == 0);
    free(t);
}

static void kv_usage_sums_the_slots_and_is_at_most_one(void **state)
{
    (void)state;
    sim_metrics slots[2], m;
    memset(slots, 0, sizeof slots);
    slots[0].kv_blocks_total = slots[1].kv_blocks_total = 100;
    slots[0].kv_blocks_used = 30;
    slots[1].kv_blocks_used = 20;
    slots[1].prefix_hits = 5;
    slots[0].prefix_hits = 7;
    sim_thist_add(&slots[0].prompt_len, 100000); /* beyond the last bucket */
    sim_thist_add(&slots[1].prompt_len, 1);
    sim_metrics_sum(slots, 2, &m);
    char *t = render(&m);
    assert_true(value_of(t, "vllm:kv_cache_usage_perc{model_name=\"sim-model\"} ") == 0.25);
    assert_true(value_of(t, "vllm:prefix_cache_hits_total{model_name=\"sim-model\"} ") == 12);
    assert_true(
        value_of(t, "vllm:request_prompt_tokens_bucket{le=\"20000\",model_name=\"sim-model\"} ") ==
        1);
    assert_true(
        value_of(t, "vllm:request_prompt_tokens_bucket{le=\"+Inf\",model_name=\"sim-model\"} ") ==
        2);
    free(t);
    slots[0].kv_blocks_used = 300; /* prompts longer than the cache */
    sim_metrics_sum(slots, 2, &m);
    t = render(&m);
    assert_true(value_of(t, "vllm:kv_cache_usage_perc{model_name=\"sim-model\"} ") == 1);
    free(t);
}

/* The shortest silence before an idle cut is the minimum over the workers
 * that cut one (a worker with none, 0, does not count), and is rendered in
 * seconds beside the count of cuts. */
static void idle_cuts_sum_and_the_shortest_is_the_minimum_of_those_cut(void **state)
{
    (void)state;
    sim_metrics slots[3], m;
    memset(slots, 0, sizeof slots);
    slots[0].idle_cuts = 2;
    slots[0].idle_cut_min_ns = 750 * MS;
    slots[1].idle_cuts = 1;
    slots[1].idle_cut_min_ns = 520 * MS; /* slots[2] cut none: its 0 is not a minimum */
    sim_metrics_sum(slots, 3, &m);
    char *t = render(&m);
    assert_true(value_of(t, "\nsim_idle_cuts_total ") == 3);
    assert_true(value_of(t, "\nsim_idle_cut_min_seconds ") == 0.52);
    free(t);
    memset(slots, 0, sizeof slots);
    sim_metrics_sum(slots, 3, &m);
    t = render(&m);
    assert_true(value_of(t, "\nsim_idle_cut_min_seconds ") == 0);
    free(t);
}

/* The ignored parameters sum over the workers, one sample per parameter by
 * its request name, zeros included. */
static void ignored_parameters_sum_per_parameter(void **state)
{
    (void)state;
    sim_metrics slots[2], m;
    memset(slots, 0, sizeof slots);
    slots[0].ignored[SIM_IGN_BEST_OF] = 2;
    slots[1].ignored[SIM_IGN_BEST_OF] = 3;
    slots[1].ignored[SIM_IGN_USE_BEAM_SEARCH] = 7;
    sim_metrics_sum(slots, 2, &m);
    char *t = render(&m);
    assert_true(value_of(t, "\nsim_ignored_params_total{param=\"best_of\"} ") == 5);
    assert_true(value_of(t, "\nsim_ignored_params_total{param=\"use_beam_search\"} ") == 7);
    assert_true(value_of(t, "\nsim_ignored_params_total{param=\"min_tokens\"} ") == 0);
    assert_null(strstr(t, "param=\"n\""));
    assert_non_null(strstr(t, "\n# TYPE sim_ignored_params_total counter\n"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prefix_cache_queries_and_hits_count_tokens),
        cmocka_unit_test(kv_blocks_follow_prompt_and_output_and_are_freed),
        cmocka_unit_test(finished_requests_fill_the_length_histograms),
        cmocka_unit_test(tpot_is_itl_under_its_older_name_and_preemptions_are_zero),
        cmocka_unit_test(kv_usage_sums_the_slots_and_is_at_most_one),
        cmocka_unit_test(idle_cuts_sum_and_the_shortest_is_the_minimum_of_those_cut),
        cmocka_unit_test(ignored_parameters_sum_per_parameter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
