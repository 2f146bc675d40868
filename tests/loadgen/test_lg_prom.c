/* Tests of lg_prom (the Prometheus text format: what it reads, what it
 * refuses with the line, the sums, a histogram's difference and quantiles)
 * and lg_srvm (the server's metrics per stage: counter deltas that add up,
 * gauges' max at the knee, the knee's evidence). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_cfgfile.h"
#include "lg_prom.h"
#include "lg_promql.h"
#include "lg_srvm.h"
#include "rb_json.h"

/* assert_float_equal passes a NAN: this does not. */
#define near(a, b) assert_true(fabs((a) - (b)) <= 1e-9)

static int parse(const char *t, lg_prom *p, char *err, size_t n)
{
    return lg_prom_parse(t, strlen(t), p, err, n);
}

static void test_reads_the_format(void **state)
{
    (void)state;
    const char *t = "# HELP vllm:num_requests_waiting Number of requests waiting.\n"
                    "# TYPE vllm:num_requests_waiting gauge\n"
                    "vllm:num_requests_waiting{model_name=\"a\"} 3\n"
                    "vllm:num_requests_waiting{model_name=\"b\",} 4.5 1700000000000\n"
                    "\n"
                    "# a comment\n"
                    "# TYPE x counter\n"
                    "x_total{path=\"a\\\"b\\\\c\\n\"}\t+Inf\r\n"
                    "y NaN\n"
                    "z -1e3";
    lg_prom p;
    char err[200];
    assert_int_equal(parse(t, &p, err, sizeof err), 0);
    assert_int_equal(p.n, 5);
    assert_true(lg_prom_sum(&p, "vllm:num_requests_waiting") == 7.5);
    assert_int_equal(lg_prom_type_of(&p, "vllm:num_requests_waiting"), LG_PROM_GAUGE);
    assert_int_equal(lg_prom_type_of(&p, "x"), LG_PROM_COUNTER);
    assert_int_equal(lg_prom_type_of(&p, "y"), LG_PROM_UNTYPED);
    assert_true(isinf(lg_prom_sum(&p, "x_total")));
    assert_true(isnan(lg_prom_sum(&p, "y")));
    assert_true(lg_prom_sum(&p, "z") == -1000);
    assert_true(isnan(lg_prom_sum(&p, "absent")));
    lg_prom_free(&p);
}

static void test_refuses_with_the_line(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"ok 1\n1bad 2\n", "line 2"},
        {"a{b=\"c\" 1\n", "line 1: expected ',' or '}'"},
        {"a{b=c} 1\n", "label value"},
        {"a{b=\"c} 1\n", "unterminated"},
        {"a{b=\"\\x\"} 1\n", "bad escape"},
        {"a one\n", "bad value"},
        {"a 1 2 3\n", "after the timestamp"},
        {"a 1 1.5\n", "bad timestamp"},
        {"a\n", "bad value"},
        {"# TYPE a gauge\n# TYPE a gauge\n", "second TYPE"},
        {"a_bucket{le=\"1\"} 1\n# TYPE a histogram\n", "after its first sample"},
        {"# TYPE a metre\n", "the type must be"},
        {"# TYPE\n", "expected a metric name"},
        {"a{le=\"x\"} 1\n", "le: not a number"},
        {"<html>\n", "line 1"},
        {"a{=\"1\"} 1\n", "label name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lg_prom p;
        char err[200];
        int rc = parse(bad[i].text, &p, err, sizeof err);
        if (rc != -EINVAL || !strstr(err, bad[i].says))
            fail_msg("'%s': rc %d, err '%s', expected '%s'", bad[i].text, rc, err, bad[i].says);
        lg_prom_free(&p);
    }
    /* a NUL byte inside a line */
    lg_prom p;
    char err[200];
    assert_int_equal(lg_prom_parse("a 1\0\n", 5, &p, err, sizeof err), -EINVAL);
    lg_prom_free(&p);
}

static const char *HIST = "# TYPE h_seconds histogram\n"
                          "h_seconds_bucket{le=\"0.1\",m=\"a\"} 10\n"
                          "h_seconds_bucket{le=\"+Inf\",m=\"a\"} 20\n"
                          "h_seconds_bucket{le=\"0.2\",m=\"a\"} 15\n"
                          "h_seconds_bucket{m=\"b\",le=\"0.1\"} 10\n"
                          "h_seconds_bucket{m=\"b\",le=\"0.2\"} 15\n"
                          "h_seconds_bucket{m=\"b\",le=\"+Inf\"} 20\n"
                          "h_seconds_sum{m=\"a\"} 3\n"
                          "h_seconds_sum{m=\"b\"} 3\n"
                          "h_seconds_count{m=\"a\"} 20\n"
                          "h_seconds_count{m=\"b\"} 20\n";

static void test_histogram_and_quantiles(void **state)
{
    (void)state;
    lg_prom p;
    char err[200];
    assert_int_equal(parse(HIST, &p, err, sizeof err), 0);
    lg_prom_hist h;
    assert_int_equal(lg_prom_hist_of(&p, "h_seconds", &h), 0);
    assert_int_equal(h.n, 3);
    assert_true(h.le[0] == 0.1 && h.le[1] == 0.2 && isinf(h.le[2]));
    assert_true(h.cum[0] == 20 && h.cum[1] == 30 && h.cum[2] == 40);
    assert_true(h.sum == 6 && h.count == 40);
    /* rank 20 of 40 is the first bucket's top: 0.1; rank 10 its middle */
    near(lg_prom_quantile(&h, 0.5), 0.1);
    near(lg_prom_quantile(&h, 0.25), 0.05);
    /* rank 25: half way into (0.1, 0.2] */
    near(lg_prom_quantile(&h, 0.625), 0.15);
    /* in the +Inf bucket: the highest finite bound */
    near(lg_prom_quantile(&h, 0.99), 0.2);
    assert_int_equal(lg_prom_hist_of(&p, "absent", &h), -ENOENT);
    lg_prom_free(&p);

    lg_prom_hist a = {.n = 2, .le = {1, INFINITY}, .cum = {4, 10}, .sum = 5, .count = 10};
    lg_prom_hist b = {.n = 2, .le = {1, INFINITY}, .cum = {4, 30}, .sum = 25, .count = 30};
    lg_prom_hist d;
    assert_int_equal(lg_prom_hist_delta(&a, &b, &d), 0);
    assert_true(d.cum[0] == 0 && d.cum[1] == 20 && d.count == 20 && d.sum == 20);
    /* all 20 new observations above 1: the quantile is the highest finite bound */
    near(lg_prom_quantile(&d, 0.5), 1.0);
    /* b below a: a restart; b is all since */
    assert_int_equal(lg_prom_hist_delta(&b, &a, &d), 1);
    assert_true(d.count == 10 && d.cum[1] == 10);
    lg_prom_hist none = {.n = 1, .le = {1}, .cum = {3}};
    assert_true(isnan(lg_prom_quantile(&none, 0.5))); /* no +Inf bucket */
}

/* A simserver-like scrape at one moment. */
static void scrape(lg_srvm *m, int64_t t, double waiting, double prompt, double ttft_le1)
{
    char text[1024];
    snprintf(text, sizeof text,
             "# TYPE vllm:num_requests_waiting gauge\n"
             "vllm:num_requests_waiting{model_name=\"m\"} %g\n"
             "# TYPE vllm:prompt_tokens_total counter\n"
             "vllm:prompt_tokens_total{model_name=\"m\"} %g\n"
             "vllm:time_to_first_token_seconds_bucket{le=\"1\"} %g\n"
             "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} %g\n"
             "vllm:time_to_first_token_seconds_count %g\n"
             "vllm:time_to_first_token_seconds_sum %g\n"
             "my_metric 7\n",
             waiting, prompt, ttft_le1, ttft_le1, ttft_le1, ttft_le1 * 0.5);
    lg_prom p;
    char err[200];
    assert_int_equal(parse(text, &p, err, sizeof err), 0);
    assert_int_equal(lg_srvm_add(m, t, &p), 0);
    lg_prom_free(&p);
}

static const cJSON *metric(const cJSON *o, const char *name)
{
    const cJSON *e = cJSON_GetObjectItem(o, name);
    if (!e) fail_msg("no %s", name);
    return e;
}

static void test_stages(void **state)
{
    (void)state;
    const char *extra[] = {"my_metric", "vllm:num_requests_waiting"};
    lg_srvm *m = lg_srvm_new(extra, 2);
    assert_non_null(m);
    scrape(m, 50, 0, 0, 0); /* the baseline, before any window */
    int64_t start[2] = {100, 200}, end[2] = {200, INT64_MAX};
    assert_int_equal(lg_srvm_windows(m, start, end, 2), 0);
    assert_int_equal(lg_srvm_windows(m, start, end, 2), -EINVAL);
    scrape(m, 120, 0, 100, 10);
    scrape(m, 180, 1, 300, 20);
    scrape(m, 200, 5, 500, 30); /* at stage 1's start: stage 1's */
    scrape(m, 250, 812, 900, 40);
    scrape(m, 300, 700, 1000, 50); /* the final */
    lg_srvm_finish(m);
    assert_int_equal(lg_srvm_scrapes(m, 0), 2);
    assert_int_equal(lg_srvm_scrapes(m, 1), 3);
    assert_int_equal(lg_srvm_run_window(m), 2);
    assert_int_equal(lg_srvm_scrapes(m, 2), 5);
    double s, mx;
    assert_int_equal(lg_srvm_waiting(m, 1, &s, &mx), 0);
    assert_true(s == 5 && mx == 812); /* from the last scrape at or before its start */
    double pct[1] = {50};
    cJSON *w0 = lg_srvm_json(m, 0, pct, 1), *w1 = lg_srvm_json(m, 1, pct, 1),
          *run = lg_srvm_json(m, 2, pct, 1);
    /* counters: a boundary's value is the last scrape at or before it */
    const cJSON *c0 = metric(w0, "vllm:prompt_tokens_total");
    const cJSON *c1 = metric(w1, "vllm:prompt_tokens_total");
    assert_true(rb_json_num(c0, "delta") == 500);
    assert_true(rb_json_num(c1, "delta") == 500);
    assert_true(rb_json_num(metric(run, "vllm:prompt_tokens_total"), "delta") == 1000);
    /* gauges */
    const cJSON *g0 = metric(w0, "vllm:num_requests_waiting");
    assert_string_equal(cJSON_GetObjectItem(g0, "type")->valuestring, "gauge");
    assert_true(rb_json_num(g0, "max") == 1 && rb_json_num(g0, "mean") == 0.5 &&
                rb_json_num(g0, "samples") == 2 && rb_json_num(g0, "start") == 0);
    const cJSON *g1 = metric(w1, "vllm:num_requests_waiting");
    assert_true(rb_json_num(g1, "max") == 812 && rb_json_num(g1, "min") == 5 &&
                rb_json_num(g1, "end") == 700);
    /* histograms: the stage's own observations, in ms */
    const cJSON *h1 = metric(w1, "vllm:time_to_first_token_seconds");
    assert_true(rb_json_num(h1, "count") == 20);
    near(rb_json_num(h1, "mean_ms"), 500);
    near(rb_json_num(h1, "p50_ms"), 500);
    /* an extra metric: untyped, so a gauge */
    assert_true(rb_json_num(metric(run, "my_metric"), "max") == 7);
    assert_null(cJSON_GetObjectItem(w0, "sglang:num_queue_reqs")); /* never served */
    char ev[200];
    lg_srvm_evidence(m, 1, 2, ev, sizeof ev);
    assert_string_equal(ev, "by the server (waiting requests 5 -> 812)");
    lg_srvm_evidence(m, 0, 1, ev, sizeof ev);
    assert_string_equal(ev, "by the client (the server's waiting requests 0 -> 1)");
    lg_srvm_evidence(m, 1, 1, ev, sizeof ev);
    assert_non_null(strstr(ev, "also grew"));
    lg_srvm_evidence(m, 0, 2, ev, sizeof ev);
    assert_string_equal(
        ev, "by the server (its waiting requests 0 -> 1, within a stable queue's noise)");
    lg_srvm_evidence(NULL, 0, 1, ev, sizeof ev);
    assert_string_equal(ev, "by the client (no server metrics)");
    cJSON_Delete(w0);
    cJSON_Delete(w1);
    cJSON_Delete(run);
    lg_srvm_free(m);
}

static void test_counter_reset(void **state)
{
    (void)state;
    lg_srvm *m = lg_srvm_new(NULL, 0);
    int64_t start[1] = {0}, end[1] = {INT64_MAX};
    assert_int_equal(lg_srvm_windows(m, start, end, 1), 0);
    scrape(m, 10, 0, 500, 5);
    scrape(m, 20, 0, 40, 2); /* the server restarted */
    lg_srvm_finish(m);
    cJSON *w = lg_srvm_json(m, 0, NULL, 0);
    const cJSON *c = metric(w, "vllm:prompt_tokens_total");
    assert_true(rb_json_num(c, "delta") == 40);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "reset")));
    cJSON_Delete(w);
    lg_srvm_free(m);
}

static int cli(lg_opts *o, char *err, size_t n, int argc, char **argv)
{
    lg_opts_defaults(o, 2);
    int rc = lg_cli_parse(o, argc, argv, err, n);
    return rc ? rc : lg_cli_finish(o, err, n);
}

static void test_flags(void **state)
{
    (void)state;
    lg_opts o;
    char err[512], url[600];
    char *a0[] = {"--base-url", "http://127.0.0.1:8000/v1"};
    assert_int_equal(cli(&o, err, sizeof err, 2, a0), 0);
    lg_server_metrics_url(&o, url, sizeof url);
    assert_string_equal(url, ""); /* off by default */
    char *at[] = {"--base-url", "http://127.0.0.1:8000/v1", "--server-metrics", "target"};
    assert_int_equal(cli(&o, err, sizeof err, 4, at), 0);
    lg_server_metrics_url(&o, url, sizeof url);
    assert_string_equal(url, "http://127.0.0.1:8000/metrics"); /* the origin's */
    assert_int_equal(o.server_metrics_interval_ns, 1000000000LL);
    char *a1[] = {"--server-metrics", "off"};
    assert_int_equal(cli(&o, err, sizeof err, 2, a1), 0);
    lg_server_metrics_url(&o, url, sizeof url);
    assert_string_equal(url, "");
    char *a2[] = {"--server-metrics", "http://[::1]:9/m", "--server-metrics-interval", "250ms",
                  "--server-metric",  "sim:x_total"};
    assert_int_equal(cli(&o, err, sizeof err, 6, a2), 0);
    lg_server_metrics_url(&o, url, sizeof url);
    assert_string_equal(url, "http://[::1]:9/m");
    assert_int_equal(o.server_metrics_interval_ns, 250000000LL);
    assert_int_equal(o.n_server_metric, 1);
    static const struct {
        const char *flag, *value, *says;
    } bad[] = {{"--server-metrics", "ftp://127.0.0.1/metrics", "http:// or https://"},
               {"--server-metrics", "127.0.0.1:8000/metrics", "http:// or https://"},
               {"--server-metrics", "http://10.1.2.3/metrics", "loopback"},
               {"--server-metrics-interval", "0", "seconds > 0"},
               {"--server-metric", "9lives", "metric name"},
               {"--server-metric", "a-b", "metric name"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *a[] = {(char *)bad[i].flag, (char *)bad[i].value};
        int rc = cli(&o, err, sizeof err, 2, a);
        if (rc != -EINVAL || !strstr(err, bad[i].flag) || !strstr(err, bad[i].says) ||
            !strstr(err, bad[i].value))
            fail_msg("%s %s: rc %d, '%s'", bad[i].flag, bad[i].value, rc, err);
    }
}

static void test_promql(void **state)
{
    (void)state;
    char q[512];
    assert_int_equal(lg_promql_query(q, sizeof q, "g", 'g', "max", 12.4), 0);
    assert_string_equal(q, "max_over_time(g[12s])");
    assert_int_equal(lg_promql_query(q, sizeof q, "g", 'g', "mean", 0.2), 0);
    assert_string_equal(q, "avg_over_time(g[1s])");
    assert_int_equal(lg_promql_query(q, sizeof q, "c_total", 'c', "increase", 7.6), 0);
    assert_string_equal(q, "sum(increase(c_total[8s]))");
    assert_int_equal(lg_promql_query(q, sizeof q, "h", 'h', "p90", 5), 0);
    assert_string_equal(q, "histogram_quantile(0.90, sum(rate(h_bucket[5s])) by (le))");
    assert_int_equal(lg_promql_query(q, sizeof q, "h", 'h', "mean", 5), 0);
    assert_string_equal(q, "sum(rate(h_sum[5s])) / (sum(rate(h_count[5s])) > 0)");
    assert_int_equal(lg_promql_query(q, sizeof q, "g", 'g', "increase", 5), -EINVAL);
    assert_int_equal(lg_promql_query(q, 8, "a_long_name", 'g', "max", 5), -EINVAL);

    double v = 0;
    char err[200];
    const char *two = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                      "{\"metric\":{\"a\":\"1\"},\"value\":[1.5,\"2.5\"]},"
                      "{\"metric\":{},\"value\":[1.5,\"4\"]}]}}";
    assert_int_equal(lg_promql_value(two, strlen(two), &v, err, sizeof err), 0);
    assert_true(v == 6.5);
    const char *none =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}";
    assert_int_equal(lg_promql_value(none, strlen(none), &v, err, sizeof err), -ENOENT);
    const char *sc =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"NaN\"]}}";
    assert_int_equal(lg_promql_value(sc, strlen(sc), &v, err, sizeof err), 0);
    assert_true(isnan(v));
    const char *bad = "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}";
    assert_int_equal(lg_promql_value(bad, strlen(bad), &v, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "parse error"));
    assert_int_equal(lg_promql_value("<html>", 6, &v, err, sizeof err), -EINVAL);
    const char *shape = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
                        "\"value\":[1]}]}}";
    assert_int_equal(lg_promql_value(shape, strlen(shape), &v, err, sizeof err), -EINVAL);
}

static void test_config_metrics(void **state)
{
    (void)state;
    const char *cfg =
        "metrics:\n  type: prometheus\n  prometheus:\n    url: http://localhost:9090\n"
        "    scrape_interval: 15\n    google_managed: false\n";
    lg_args a;
    char notes[1024], err[512];
    assert_int_equal(lg_cfgfile_to_args(cfg, strlen(cfg), &a, notes, sizeof notes, err, sizeof err),
                     0);
    char got[1024] = "";
    for (int i = 0; i < a.argc; i++) {
        size_t l = strlen(got);
        snprintf(got + l, sizeof got - l, "%s%s", i ? " " : "", a.argv[i]);
    }
    lg_args_free(&a);
    assert_non_null(strstr(got, "--prometheus-url http://localhost:9090"));
    assert_non_null(strstr(got, "--prometheus-scrape-interval 15"));
    assert_non_null(strstr(notes, "metrics.prometheus.google_managed"));
    /* another type: accepted without effect */
    const char *other = "metrics:\n  type: gmp\n  prometheus:\n    url: http://x:1\n";
    assert_int_equal(
        lg_cfgfile_to_args(other, strlen(other), &a, notes, sizeof notes, err, sizeof err), 0);
    for (int i = 0; i < a.argc; i++)
        assert_null(strstr(a.argv[i], "prometheus"));
    lg_args_free(&a);
    assert_non_null(strstr(notes, "metrics"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_the_format),
        cmocka_unit_test(test_refuses_with_the_line),
        cmocka_unit_test(test_histogram_and_quantiles),
        cmocka_unit_test(test_stages),
        cmocka_unit_test(test_counter_reset),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_promql),
        cmocka_unit_test(test_config_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
