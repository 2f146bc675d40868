/* lg_report: the result JSON and the summary table of lg_report.h. Keys
 * follow vLLM's `bench serve` where it has one; ours sit beside them. About
 * 610 lines, one file on purpose: the JSON and the table are two views of
 * the same figures, written side by side so that they cannot drift. */
#include "lg_report.h"
#include "lg_probe.h"
#include "lg_session.h"
#include "lg_warmup.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lg_vllm.h"
#include "rb_json.h"

static const char *const metric_title[LG_N_METRICS] = {
    "Time to First Token", "Time per Output Token (excl. 1st token)", "Inter-token Latency",
    "End-to-end Latency", "Normalized Time per Output Token"};
static const char *const metric_abbr[LG_N_METRICS] = {"TTFT", "TPOT", "ITL", "E2EL", "NTPOT"};
/* Histogram of each metric from the intended start (ITL has one only). */
static const int hist_i[LG_N_METRICS] = {LG_H_TTFT_I, LG_H_TPOT_I, LG_H_ITL, LG_H_E2EL_I,
                                         LG_H_NTPOT_I};
static const int hist_d[LG_N_METRICS] = {LG_H_TTFT_D, LG_H_TPOT_D, -1, LG_H_E2EL_D, LG_H_NTPOT_D};

/* Without streaming there are no token times: TPOT and ITL are not measured
 * (null, n/a), rather than the 0 that a whole response would give. */
static int token_timed(const lg_opts *o, int m)
{
    return o->stream || (m != LG_M_TPOT && m != LG_M_ITL);
}

void lg_report_pword(double p, char *buf, size_t cap)
{
    if (p == floor(p))
        snprintf(buf, cap, "%d", (int)p);
    else
        snprintf(buf, cap, "%g", p);
}

static double ms(double ns)
{
    return ns / 1e6;
}

/* h == NULL: not measured (every key null). */
static void hist_keys(cJSON *obj, const mdl_hist *h, const char *name, const char *suffix,
                      const lg_opts *o, int with_pct)
{
    char key[96], pw[32];
    snprintf(key, sizeof key, "mean_%s%s_ms", name, suffix);
    rb_json_put_num_inf(obj, key, h ? ms(mdl_hist_mean(h)) : NAN);
    snprintf(key, sizeof key, "median_%s%s_ms", name, suffix);
    rb_json_put_num_inf(obj, key, h ? ms((double)mdl_hist_percentile(h, 50.0)) : NAN);
    snprintf(key, sizeof key, "std_%s%s_ms", name, suffix);
    rb_json_put_num_inf(obj, key, h ? ms(mdl_hist_stddev(h)) : NAN);
    if (!with_pct) return;
    for (int i = 0; i < o->n_percentiles; i++) {
        lg_report_pword(o->percentiles[i], pw, sizeof pw);
        snprintf(key, sizeof key, "p%s_%s%s_ms", pw, name, suffix);
        rb_json_put_num_inf(obj, key,
                            h ? ms((double)mdl_hist_percentile(h, o->percentiles[i])) : NAN);
    }
}

/* A percentile in ms, NaN when not measured. */
static double pct_ms(const mdl_hist *h, double p)
{
    return h ? ms((double)mdl_hist_percentile(h, p)) : NAN;
}

/* Requested against served lengths in tokens (mean, p1, p99 of each, over
 * the completed requests that carried usage), and whether a mean differs
 * from the other by more than 5%: then the run did not send the workload
 * it was asked for (a tokenizer other than the server's, an EOS). */
static void put_lengths(cJSON *obj, const lg_stage_stats *s, const lg_opts *o)
{
    cJSON *l = cJSON_AddObjectToObject(obj, "lengths");
    if (!l) return;
    static const struct {
        const char *key;
        int h;
    } k[] = {{"input_tokens_requested", LG_H_IN_REQUESTED},
             {"input_tokens_served", LG_H_IN_SERVED},
             {"output_tokens_requested", LG_H_OUT_REQUESTED},
             {"output_tokens_served", LG_H_OUT_SERVED}};
    double mean[4];
    for (int i = 0; i < 4; i++) {
        const mdl_hist *h = lg_stats_hist_c(s, k[i].h);
        cJSON *d = cJSON_AddObjectToObject(l, k[i].key);
        mean[i] = h->total ? mdl_hist_mean(h) : NAN;
        if (!d) continue;
        rb_json_put_num_inf(d, "n", (double)h->total);
        rb_json_put_num_inf(d, "mean", mean[i]);
        rb_json_put_num_inf(d, "p1", h->total ? (double)mdl_hist_percentile(h, 1) : NAN);
        rb_json_put_num_inf(d, "p99", h->total ? (double)mdl_hist_percentile(h, 99) : NAN);
    }
    for (int i = 0; i < 2; i++) {
        double a = mean[2 * i], b = mean[2 * i + 1];
        const char *key = i ? "output_differs" : "input_differs";
        if (isnan(a) || isnan(b))
            cJSON_AddNullToObject(l, key);
        else
            cJSON_AddBoolToObject(l, key, fabs(b - a) > 0.05 * a);
    }
    /* a chat prompt's served length includes the chat template, which the
     * requested length does not */
    cJSON_AddBoolToObject(l, "chat_template_excluded", o->chat);
}

void lg_report_metrics(cJSON *obj, const lg_stage_stats *s, const lg_opts *o, int64_t start_ns,
                       int64_t window_min_ns, double request_rate)
{
    int64_t end = s->last_end_ns > s->last_dispatch_ns ? s->last_end_ns : s->last_dispatch_ns;
    double duration_s = end > start_ns ? (double)(end - start_ns) / 1e9 : 0.0;
    int64_t win = s->last_dispatch_ns - start_ns;
    if (win < window_min_ns) win = window_min_ns;
    double window_s = win > 0 ? (double)win / 1e9 : 0.0;
    double dur = duration_s > 0 ? duration_s : NAN;
    rb_json_put_num_inf(obj, "duration", duration_s);
    rb_json_put_num_inf(obj, "completed", (double)s->completed);
    rb_json_put_num_inf(obj, "failed", (double)s->failed);
    rb_json_put_num_inf(obj, "dispatched", (double)s->dispatched);
    rb_json_put_num_inf(obj, "total_input_tokens", (double)s->input_tokens);
    rb_json_put_num_inf(obj, "total_output_tokens", (double)s->output_tokens);
    rb_json_put_num_inf(obj, "request_rate", request_rate);
    rb_json_put_num_inf(obj, "request_throughput", (double)s->completed / dur);
    if (o->goodput.enabled) rb_json_put_num_inf(obj, "request_goodput", (double)s->good / dur);
    rb_json_put_num_inf(obj, "output_throughput", (double)s->output_tokens / dur);
    rb_json_put_num_inf(obj, "total_token_throughput",
                        (double)(s->input_tokens + s->output_tokens) / dur);
    rb_json_put_num_inf(obj, "achieved_rate",
                        window_s > 0 ? (double)s->dispatched / window_s : NAN);
    rb_json_put_num_inf(obj, "send_window", window_s);
    rb_json_put_num_inf(obj, "duration_s",
                        duration_s); /* the two above, with their unit in the key */
    rb_json_put_num_inf(obj, "send_window_s", window_s);
    /* What the server's prefix cache answered (null: it reported nothing). */
    rb_json_put_num_inf(obj, "cached_prompt_tokens_share",
                        s->cached_of_tokens ? (double)s->cached_tokens / (double)s->cached_of_tokens
                                            : NAN);
    put_lengths(obj, s, o);
    /* The schedule's own span, first to last intended send: host-independent. */
    rb_json_put_num_inf(obj, "intended_span_s",
                        s->dispatched ? (double)(s->last_intended_ns - s->first_intended_ns) / 1e9
                                      : NAN);
    for (int m = 0; m < LG_N_METRICS; m++) {
        int pct = (o->percentile_metrics >> m) & 1u;
        hist_keys(obj, token_timed(o, m) ? lg_stats_hist_c(s, hist_i[m]) : NULL, lg_metric_names[m],
                  "", o, pct);
    }
    for (int m = 0; m < LG_N_METRICS; m++) {
        if (hist_d[m] < 0) continue;
        int pct = (o->percentile_metrics >> m) & 1u;
        hist_keys(obj, token_timed(o, m) ? lg_stats_hist_c(s, hist_d[m]) : NULL, lg_metric_names[m],
                  "_dispatch", o, pct);
    }
    const mdl_hist *lag = lg_stats_hist_c(s, LG_H_LAG);
    rb_json_put_num_inf(obj, "mean_schedule_lag_ms", ms(mdl_hist_mean(lag)));
    rb_json_put_num_inf(obj, "median_schedule_lag_ms", ms((double)mdl_hist_percentile(lag, 50.0)));
    rb_json_put_num_inf(obj, "p99_schedule_lag_ms", ms((double)mdl_hist_percentile(lag, 99.0)));
    rb_json_put_num_inf(obj, "max_schedule_lag_ms", ms((double)lag->max));
    cJSON *f = cJSON_AddObjectToObject(obj, "failures_by_class");
    for (int c = 1; c < LG_N_CLASSES; c++) {
        if (c == LG_FAIL_HTTP || !s->fail_class[c]) continue;
        rb_json_put_num_inf(f, lg_class_names[c], (double)s->fail_class[c]);
    }
    for (int code = 0; code < LG_HTTP_CODES; code++) {
        if (!s->fail_http[code]) continue;
        char key[32];
        snprintf(key, sizeof key, "http_%d", code);
        rb_json_put_num_inf(f, key, (double)s->fail_http[code]);
    }
    if (s->truth_n) {
        double n = (double)s->truth_n;
        cJSON *b = cJSON_AddObjectToObject(obj, "ntpot_breakdown_ms");
        rb_json_put_num_inf(b, "queue", ms(s->truth_queue_ns / n));
        rb_json_put_num_inf(b, "prefill", ms(s->truth_prefill_ns / n));
        rb_json_put_num_inf(b, "decode", ms(s->truth_decode_ns / n));
        rb_json_put_num_inf(b, "client", ms(s->truth_client_ns / n));
        rb_json_put_num_inf(b, "requests", n);
        /* TTFT inflation in the study's sense: what was measured from the
         * intended start minus the server's true time to first token.
         * Without streaming the first token comes with the last. */
        cJSON *t = o->stream ? cJSON_AddObjectToObject(obj, "ttft_truth_ms") : NULL;
        if (t) {
            rb_json_put_num_inf(t, "server_mean", ms(s->truth_ttft_ns / n));
            rb_json_put_num_inf(t, "measured_mean", ms(s->truth_measured_ttft_ns / n));
            rb_json_put_num_inf(t, "inflation_mean",
                                ms((s->truth_measured_ttft_ns - s->truth_ttft_ns) / n));
            rb_json_put_num_inf(t, "user_timed_mean", ms(s->truth_measured_ttft_u_ns / n));
            rb_json_put_num_inf(t, "user_timed_inflation_mean",
                                ms((s->truth_measured_ttft_u_ns - s->truth_ttft_ns) / n));
        }
    }
}

static void dist_json(cJSON *parent, const char *key, const lg_dist *d)
{
    if (!d->n) {
        cJSON_AddNullToObject(parent, key);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    rb_json_put_num_inf(o, "mean", d->mean);
    rb_json_put_num_inf(o, "p50", d->p50);
    rb_json_put_num_inf(o, "p99", d->p99);
    rb_json_put_num_inf(o, "max", d->max);
    rb_json_put_num_inf(o, "n", (double)d->n);
}

static void arrival_json(cJSON *parent, const lg_arrival_test *t)
{
    cJSON *a = cJSON_AddObjectToObject(parent, "arrival_test");
    /* Same keys either way, so a reader need not branch. */
    cJSON_AddStringToObject(a, "test", t->tested ? t->test : "none");
    cJSON_AddStringToObject(a, "model", t->model);
    cJSON_AddStringToObject(a, "against", "intended gaps");
    rb_json_put_num_inf(a, "resolution_ms", t->resolution_ms);
    rb_json_put_num_inf(a, "tolerance_ms", t->tolerance_ms);
    rb_json_put_num_inf(a, "below_resolution_share", t->below_share);
    rb_json_put_num_inf(a, "n", (double)t->n);
    rb_json_put_num_inf(a, "statistic", t->tested ? t->statistic : NAN);
    rb_json_put_num_inf(a, "p_value", t->tested ? t->p_value : NAN);
    if (!t->tested) cJSON_AddStringToObject(a, "note", t->note);
}

static void verdict_json(cJSON *b, const mdl_verdict *v)
{
    cJSON_AddStringToObject(b, "verdict", mdl_verdict_name(v->level));
    cJSON_AddStringToObject(b, "cause", v->cause ? v->cause : "none");
    cJSON_AddStringToObject(b, "reason", v->reason);
    cJSON_AddBoolToObject(b, "wire_timed", v->wire_timed);
    cJSON_AddBoolToObject(b, "user_timed_biased", v->user_timed_biased);
}

/* The figures every client_bias block carries, a stage's or the run's. */
static void bias_figures_json(cJSON *b, const lg_bias_stage *x)
{
    rb_json_put_num_inf(b, "max_rho", x->max_rho);
    rb_json_put_num_inf(b, "predicted_wq_us", x->predicted_wq_us);
    dist_json(b, "client_delay_us", &x->client_delay_us);
    dist_json(b, "pickup_delay_us", &x->pickup_delay_us);
    dist_json(b, "processing_us", &x->processing_us);
    dist_json(b, "server_send_us", &x->server_send_us);
    dist_json(b, "rx_queue_bytes", &x->rx_queue_bytes);
    dist_json(b, "rx_window_us", &x->rx_window_us);
    cJSON *rc = cJSON_AddObjectToObject(b, "receive");
    rb_json_put_num_inf(rc, "kernel_tokens", (double)x->kernel_tokens);
    rb_json_put_num_inf(rc, "exact_tokens", (double)x->exact_tokens);
    rb_json_put_num_inf(rc, "user_tokens", (double)x->user_tokens);
    rb_json_put_num_inf(rc, "wire_tokens", (double)x->wire_tokens);
    rb_json_put_num_inf(rc, "kernel_share", x->wire_share);
    rb_json_put_num_inf(rc, "exact_share", x->exact_share);
    rb_json_put_num_inf(rc, "pickups", (double)x->pickups);
    cJSON *h = cJSON_AddObjectToObject(b, "host");
    rb_json_put_num_inf(h, "run_delay_ms", x->run_delay_ms);
    rb_json_put_num_inf(h, "run_delay_share", x->run_delay_share);
    rb_json_put_num_inf(h, "involuntary_switches", x->nivcsw);
    rb_json_put_num_inf(h, "steal_share", x->steal_share);
    rb_json_put_num_inf(b, "schedule_lag_p99_us", x->lag_p99_us);
    rb_json_put_num_inf(b, "schedule_lag_p99_lower_us", x->lag_p99_lo_us);
    rb_json_put_num_inf(b, "achieved_ratio", x->achieved_ratio);
    arrival_json(b, &x->arrival);
    verdict_json(b, &x->verdict);
}

/* What --cpu-latency-us's requests came to over the workers that were not
 * lost: how many held one, the host's limit they read (the largest), and
 * the first refusal. */
typedef struct cpu_latency_sum {
    int workers, held;
    double limit_us; /* NAN: none read */
    const char *refused;
} cpu_latency_sum;

static cpu_latency_sum cpu_latency_of(const lg_report *r)
{
    cpu_latency_sum c = {.limit_us = NAN};
    for (int i = 0; i < r->n_workers; i++) {
        const lg_worker_bias *w = &r->workers[i];
        if (w->lost) continue;
        c.workers++;
        if (w->cpu_latency_held == 1) {
            c.held++;
            if (w->cpu_latency_us >= 0 && !(w->cpu_latency_us <= c.limit_us))
                c.limit_us = w->cpu_latency_us;
        } else if (w->cpu_latency_held == 0 && !c.refused) {
            c.refused = w->cpu_latency;
        }
    }
    return c;
}

/* host.cpu_latency_qos */
static void cpu_latency_json(cJSON *h, const lg_report *r, const lg_opts *o)
{
    cJSON *q = cJSON_AddObjectToObject(h, "cpu_latency_qos");
    cpu_latency_sum c = cpu_latency_of(r);
    if (o->cpu_latency_us >= 0)
        rb_json_put_num_inf(q, "asked_us", o->cpu_latency_us);
    else
        cJSON_AddNullToObject(q, "asked_us");
    rb_json_put_num_inf(q, "held_workers", c.held);
    rb_json_put_num_inf(q, "workers", c.workers);
    rb_json_put_num_inf(q, "limit_us", c.limit_us);
    rb_json_put_str(q, "refused", c.refused);
}

static cJSON *bias_json(const lg_report *r)
{
    cJSON *b = cJSON_CreateObject();
    cJSON *ws = cJSON_AddArrayToObject(b, "workers");
    for (int i = 0; i < r->n_workers; i++) {
        const lg_worker_bias *w = &r->workers[i];
        cJSON *o = cJSON_CreateObject();
        rb_json_put_num_inf(o, "worker", w->worker);
        if (w->lost) {
            cJSON_AddBoolToObject(o, "lost", 1);
            rb_json_put_num_inf(o, "signal", w->signal);
        }
        rb_json_put_num_inf(o, "rho", w->rho);
        rb_json_put_num_inf(o, "callbacks", w->callbacks);
        rb_json_put_num_inf(o, "callback_rate_per_s", w->callback_rate_per_s);
        rb_json_put_num_inf(o, "mean_service_us", w->mean_service_us);
        rb_json_put_num_inf(o, "second_moment_us2", w->second_moment_us2);
        rb_json_put_num_inf(o, "events", w->events);
        rb_json_put_num_inf(o, "event_rate_per_s", w->event_rate_per_s);
        rb_json_put_num_inf(o, "predicted_wq_us", w->predicted_wq_us);
        rb_json_put_num_inf(o, "preemptions", w->preemptions);
        /* each worker's own clock: under --mpi, its rank's capture on its host */
        rb_json_put_str(o, "receive_clock", w->receive_clock);
        rb_json_put_str(o, "capture_interface", w->capture_interface);
        rb_json_put_num_inf(o, "receive_clock_wire_share", w->wire_share);
        rb_json_put_str(o, "receive_clock_fallback_reason", w->receive_clock_fallback);
        rb_json_put_str(o, "cpus", w->cpus);
        rb_json_put_str(o, "cpu_latency", w->cpu_latency);
        cJSON_AddItemToArray(ws, o);
    }
    const mdl_hist *ov = lg_stats_hist_c(r->total, LG_H_OVERHEAD);
    if (ov->total) {
        cJSON *o = cJSON_AddObjectToObject(b, "overhead_per_token_us");
        rb_json_put_num_inf(o, "mean", mdl_hist_mean(ov) / 1e3);
        rb_json_put_num_inf(o, "median", (double)mdl_hist_percentile(ov, 50.0) / 1e3);
        rb_json_put_num_inf(o, "p99", (double)mdl_hist_percentile(ov, 99.0) / 1e3);
        rb_json_put_num_inf(o, "n", (double)ov->total);
    } else {
        cJSON_AddNullToObject(b, "overhead_per_token_us");
    }
    if (r->run_bias) {
        bias_figures_json(b, r->run_bias);
        /* The run's figures above; its verdict is the worst stage's. */
        verdict_json(b, &r->verdict);
    } else {
        rb_json_put_num_inf(b, "max_rho", r->max_rho);
        rb_json_put_num_inf(b, "predicted_wq_us", r->predicted_wq_us);
        verdict_json(b, &r->verdict);
    }
    if (r->verdict_stage >= 0)
        rb_json_put_num_inf(b, "verdict_stage", r->verdict_stage);
    else
        cJSON_AddNullToObject(b, "verdict_stage");
    cJSON *c = cJSON_AddObjectToObject(b, "clock");
    rb_json_put_num_inf(c, "offset_spread_us", (double)r->clock_spread_ns / 1e3);
    rb_json_put_num_inf(c, "offset_reading_width_us", (double)r->clock_width_ns / 1e3);
    rb_json_put_num_inf(c, "steps", (double)r->clock_steps);
    rb_json_put_num_inf(c, "sockets_without_stamps", (double)r->rx_enable_failed);
    if (r->o->batch_tick_ns > 0) {
        /* overrun: a tick's work ran past the next tick, which then came
         * late (a share near 1: the tick is too short for the load) */
        cJSON *t = cJSON_AddObjectToObject(b, "batch_tick");
        rb_json_put_num_inf(t, "tick_us", (double)r->o->batch_tick_ns / 1e3);
        rb_json_put_num_inf(t, "ticks", (double)r->ticks);
        rb_json_put_num_inf(t, "ticks_overrun", (double)r->ticks_overrun);
    } else {
        cJSON_AddNullToObject(b, "batch_tick");
    }
    return b;
}

/* "wire" under the wire clock (receive_clock_wire_share says how many
 * tokens it timed; the rest took the kernel's stamps); otherwise "kernel"
 * when every token's receive time came from the kernel, "user" when none
 * did, "mixed" otherwise. */
static const char *receive_clock_name(const lg_report *r)
{
    if (r->o->receive_clock == LG_RXC_USER) return "user";
    if (r->o->receive_clock == LG_RXC_WIRE) return "wire";
    const lg_stage_stats *s = r->total;
    if (!s->rx_kernel_tokens) return s->rx_user_tokens ? "user" : "kernel";
    return s->rx_user_tokens ? "mixed" : "kernel";
}

/* The simulator's own send stamps (null without them): the ITL and the
 * TTFT from dispatch the server sent, to set the measured ones against. */
static void server_stamped_json(cJSON *parent, const lg_stage_stats *s)
{
    const mdl_hist *itl = lg_stats_hist_c(s, LG_H_ITL_S), *ttft = lg_stats_hist_c(s, LG_H_TTFT_S);
    if (!itl->total && !ttft->total) {
        cJSON_AddNullToObject(parent, "server_stamped");
        return;
    }
    cJSON *c = cJSON_AddObjectToObject(parent, "server_stamped");
    rb_json_put_num_inf(c, "median_itl_ms", (double)mdl_hist_percentile(itl, 50.0) / 1e6);
    rb_json_put_num_inf(c, "p99_itl_ms", (double)mdl_hist_percentile(itl, 99.0) / 1e6);
    rb_json_put_num_inf(c, "median_ttft_dispatch_ms",
                        (double)mdl_hist_percentile(ttft, 50.0) / 1e6);
    rb_json_put_num_inf(c, "n_itl", (double)itl->total);
}

/* The requests' departures on the wire: how many were captured, the
 * client's send delay (dispatch to the request's first byte captured, us)
 * and the TTFT from that departure (ms); NaN without departures. */
static void departure_json(cJSON *c, const lg_stage_stats *s)
{
    const mdl_hist *d = lg_stats_hist_c(s, LG_H_SEND_WIRE), *t = lg_stats_hist_c(s, LG_H_TTFT_W);
    rb_json_put_num_inf(c, "departures", (double)s->departures);
    rb_json_put_num_inf(c, "departure_fallbacks", (double)s->departure_fallbacks);
    int have = d->total > 0, have_t = t->total > 0;
    rb_json_put_num_inf(c, "send_delay_mean_us", have ? mdl_hist_mean(d) / 1e3 : NAN);
    rb_json_put_num_inf(c, "send_delay_p50_us",
                        have ? (double)mdl_hist_percentile(d, 50.0) / 1e3 : NAN);
    rb_json_put_num_inf(c, "send_delay_p99_us",
                        have ? (double)mdl_hist_percentile(d, 99.0) / 1e3 : NAN);
    rb_json_put_num_inf(c, "send_delay_max_us", have ? (double)d->max / 1e3 : NAN);
    rb_json_put_num_inf(c, "mean_ttft_from_wire_ms", have_t ? ms(mdl_hist_mean(t)) : NAN);
    rb_json_put_num_inf(c, "median_ttft_from_wire_ms", have_t ? pct_ms(t, 50.0) : NAN);
    rb_json_put_num_inf(c, "p99_ttft_from_wire_ms", have_t ? pct_ms(t, 99.0) : NAN);
}

/* The wire clock's capture over the stage (or run) of s; null without it. */
static void capture_json(cJSON *parent, const lg_stage_stats *s, const lg_opts *o)
{
    if (o->receive_clock != LG_RXC_WIRE) {
        cJSON_AddNullToObject(parent, "capture");
        return;
    }
    cJSON *c = cJSON_AddObjectToObject(parent, "capture");
    cJSON_AddStringToObject(c, "interface", o->capture_iface);
    cJSON_AddStringToObject(c, "filter", o->capture_filter);
    rb_json_put_num_inf(c, "packets", (double)s->cap_packets);
    rb_json_put_num_inf(c, "drops", (double)s->cap_drops);
    rb_json_put_num_inf(c, "fallbacks", (double)s->wire_fallbacks);
    rb_json_put_num_inf(c, "cost_us_per_request",
                        s->done ? (double)s->cap_cost_ns / 1e3 / (double)s->done : NAN);
    departure_json(c, s);
}

/* How the target's certificate was checked: null over plain HTTP; "system"
 * (curl's store), "ca_cert" (--ca-cert, named) or "off" (--insecure); and
 * the client certificate presented (--cert), or null. */
static void tls_json(cJSON *j, const lg_opts *o)
{
    if (strncmp(o->base_url, "https://", 8) != 0) {
        cJSON_AddNullToObject(j, "tls");
        return;
    }
    cJSON *t = cJSON_AddObjectToObject(j, "tls");
    if (!t) return;
    cJSON_AddStringToObject(t, "verify",
                            o->insecure     ? "off"
                            : o->ca_cert[0] ? "ca_cert"
                                            : "system");
    if (o->ca_cert[0])
        cJSON_AddStringToObject(t, "ca_cert", o->ca_cert);
    else
        cJSON_AddNullToObject(t, "ca_cert");
    if (o->client_cert[0])
        cJSON_AddStringToObject(t, "client_cert", o->client_cert);
    else
        cJSON_AddNullToObject(t, "client_cert");
}

static void user_timed_json(cJSON *parent, const lg_stage_stats *s, const lg_opts *o)
{
    static const int hist_u[LG_N_METRICS] = {LG_H_TTFT_U, LG_H_TPOT_U, LG_H_ITL_U, LG_H_E2EL_U,
                                             LG_H_NTPOT_U};
    cJSON *u = cJSON_AddObjectToObject(parent, "user_timed");
    for (int m = 0; m < LG_N_METRICS; m++) {
        int pct = (o->percentile_metrics >> m) & 1u;
        hist_keys(u, token_timed(o, m) ? lg_stats_hist_c(s, hist_u[m]) : NULL, lg_metric_names[m],
                  "", o, pct);
    }
}

static void failed_json(cJSON *parent, const lg_stage_stats *s)
{
    const mdl_hist *h = lg_stats_hist_c(s, LG_H_FAILED);
    cJSON *f = cJSON_AddObjectToObject(parent, "failed_latency");
    rb_json_put_num_inf(f, "n", (double)h->total);
    rb_json_put_num_inf(f, "mean_ms", h->total ? ms(mdl_hist_mean(h)) : NAN);
    rb_json_put_num_inf(f, "median_ms", h->total ? ms((double)mdl_hist_percentile(h, 50.0)) : NAN);
    rb_json_put_num_inf(f, "p99_ms", h->total ? ms((double)mdl_hist_percentile(h, 99.0)) : NAN);
    rb_json_put_num_inf(f, "max_ms", h->total ? ms((double)h->max) : NAN);
}

uint64_t lg_report_repeats(const lg_report *r)
{
    /* Request i uses prompt i mod n: every request past the n-th repeats one. */
    uint64_t d = r->total->dispatched;
    return r->prompt_pool_size && d > r->prompt_pool_size ? d - r->prompt_pool_size : 0;
}

/* The shortest send window of the run: the planned duration, so that a plan
 * that ran out of arrivals early is not reported as faster than asked; a
 * sweep that stopped at a saturated stage planned no further than that
 * stage's end (the stages it cut were never offered). */
static int64_t planned_window_ns(const lg_report *r)
{
    if (r->saturated_stage >= 0 && r->saturated_stage < r->n_stages) {
        const lg_stage_view *sv = &r->stages[r->saturated_stage];
        if (sv->duration_ns > 0) return sv->start_ns + sv->duration_ns - r->t0_ns;
    }
    return r->total_duration_ns;
}

/* How the load was offered: the mode, the workers, the arrivals, the ramp. */
static void load_json(cJSON *j, const lg_report *r)
{
    const lg_opts *o = r->o;
    cJSON_AddStringToObject(j, "backend", "openai");
    cJSON_AddStringToObject(j, "model_id", o->model);
    lg_vllm_report_keys(j, o, r->total->dispatched, time(NULL));
    cJSON_AddStringToObject(j, "endpoint", o->endpoint);
    cJSON_AddStringToObject(j, "load_mode", r->load_mode);
    rb_json_put_num_inf(j, "num_workers", r->num_workers);
    /* A closed loop has no arrival process, so no burstiness. */
    rb_json_put_num_inf(j, "burstiness", strcmp(r->load_mode, "closed") == 0 ? NAN : o->burstiness);
    /* vLLM's ramp-up keys (null without a ramp) */
    if (o->ramp_up) {
        cJSON_AddStringToObject(j, "ramp_up_strategy",
                                o->ramp_up == LG_RAMP_LINEAR ? "linear" : "exponential");
        rb_json_put_num(j, "ramp_up_start_rps", o->ramp_up_start_rps);
        rb_json_put_num(j, "ramp_up_end_rps", o->ramp_up_end_rps);
    } else {
        cJSON_AddNullToObject(j, "ramp_up_strategy");
        cJSON_AddNullToObject(j, "ramp_up_start_rps");
        cJSON_AddNullToObject(j, "ramp_up_end_rps");
    }
    if (o->max_concurrency)
        rb_json_put_num_inf(j, "max_concurrency", o->max_concurrency);
    else
        cJSON_AddNullToObject(j, "max_concurrency");
    rb_json_put_num_inf(j, "seed", (double)o->seed);
    rb_json_put_num_inf(j, "nice", o->nice);
    rb_json_put_num_inf(j, "realtime_priority", o->rt_priority);
    rb_json_put_str(j, "worker_cpus", o->worker_cpus);
    if (o->batch_tick_ns > 0)
        rb_json_put_num_inf(j, "batch_tick_us", (double)o->batch_tick_ns / 1e3);
    else
        cJSON_AddNullToObject(j, "batch_tick_us");
    cJSON_AddBoolToObject(j, "interrupted", r->interrupted);
}

/* The warm-up requests before the run (null without). */
static void warmup_json(cJSON *j, const lg_report *r)
{
    rb_json_put_num(j, "num_warmups", r->o->num_warmups);
    if (!r->warmup) {
        cJSON_AddNullToObject(j, "warmup");
        return;
    }
    cJSON *w = cJSON_AddObjectToObject(j, "warmup");
    rb_json_put_num(w, "completed", r->warmup->completed);
    rb_json_put_num(w, "failed", r->warmup->failed);
    cJSON_AddBoolToObject(w, "stopped", r->warmup->stopped);
    rb_json_put_num(w, "seconds", r->warmup->seconds);
    if (r->warmup->first_error[0])
        cJSON_AddStringToObject(w, "first_error", r->warmup->first_error);
    else
        cJSON_AddNullToObject(w, "first_error");
}

/* Where the prompts came from, and the multi-turn sessions' figures. */
static void prompts_json(cJSON *j, const lg_report *r)
{
    const lg_opts *o = r->o;
    if (r->prompt_pool_size) {
        rb_json_put_num_inf(j, "prompt_pool_size", (double)r->prompt_pool_size);
        rb_json_put_num_inf(j, "prompts_repeated", (double)lg_report_repeats(r));
    } else if (r->prompt_per_request) { /* lg_random_gen: no pool, no repeat */
        cJSON_AddNullToObject(j, "prompt_pool_size");
        rb_json_put_num(j, "prompts_repeated", 0);
    } else {
        cJSON_AddNullToObject(j, "prompt_pool_size");
        cJSON_AddNullToObject(j, "prompts_repeated");
    }
    cJSON_AddStringToObject(j, "prompt_source",
                            r->prompt_per_request ? "per_request"
                            : r->prompt_pool_size ? "pool"
                                                  : "trace");
    if (lg_plan_session_users(o)) { /* --prefix-multi-turn (lg_session.h) */
        cJSON *mt = cJSON_AddObjectToObject(j, "multi_turn");
        rb_json_put_num(mt, "users", (double)lg_plan_session_users(o));
        rb_json_put_num(mt, "context_max_bytes",
                        (double)lg_session_ctx_max((size_t)lg_plan_session_users(o)));
        rb_json_put_num(mt, "rounds_waited", (double)r->sess_waited);
        rb_json_put_num(mt, "contexts_capped", (double)r->sess_capped);
        cJSON_AddStringToObject(mt, "schedule_lag",
                                "includes each round's wait for its user's previous round");
    }
}

/* Which clock timed the tokens received, its shares, the capture and the server stamps. */
static void receive_clock_json(cJSON *j, const lg_report *r)
{
    const lg_opts *o = r->o;
    const lg_stage_stats *t = r->total;
    cJSON_AddStringToObject(j, "receive_clock", receive_clock_name(r));
    uint64_t all = t->rx_kernel_tokens + t->rx_user_tokens;
    rb_json_put_num_inf(j, "receive_clock_kernel_share",
                        all ? (double)t->rx_kernel_tokens / (double)all : NAN);
    rb_json_put_num_inf(j, "receive_clock_exact_share",
                        all ? (double)t->rx_exact_tokens / (double)all : NAN);
    rb_json_put_num_inf(j, "receive_clock_wire_share",
                        all ? (double)t->rx_wire_tokens / (double)all : NAN);
    if (o->receive_clock_fallback[0])
        cJSON_AddStringToObject(j, "receive_clock_fallback_reason", o->receive_clock_fallback);
    else
        cJSON_AddNullToObject(j, "receive_clock_fallback_reason");
    capture_json(j, t, o);
    server_stamped_json(j, t);
}

/* Stage i's object of the "stages" array. */
static cJSON *stage_json(const lg_report *r, int i)
{
    const lg_opts *o = r->o;
    const lg_stage_view *v = &r->stages[i];
    cJSON *so = cJSON_CreateObject();
    rb_json_put_num_inf(so, "stage", i);
    if (o->n_closed_stages)
        rb_json_put_num_inf(so, "concurrency", o->stage_conc[i]); /* --closed-stage */
    lg_report_metrics(so, v->stats, o, v->start_ns, v->duration_ns, v->rate_per_s);
    if (r->sat)
        lg_knee_stage_json(so, &r->sat[i]);
    else
        cJSON_AddBoolToObject(so, "saturated", r->saturated_stage == i);
    user_timed_json(so, v->stats, o);
    capture_json(so, v->stats, o);
    failed_json(so, v->stats);
    rb_json_put_num_inf(so, "not_dispatched", (double)v->stats->not_dispatched);
    cJSON_AddBoolToObject(so, "not_dispatched_is_lower_bound",
                          v->stats->not_dispatched_partial > 0);
    int cut = i >= r->n_stages - r->n_cut;
    cJSON_AddBoolToObject(so, "cut_short", cut);
    if (r->stage_bias) {
        cJSON *b = cJSON_AddObjectToObject(so, "client_bias");
        bias_figures_json(b, &r->stage_bias[i]);
        if (cut) cJSON_ReplaceItemInObject(b, "verdict", cJSON_CreateNull());
    }
    return so;
}

/* The plan against the certificate, and each stage's predicted rho beside its measured one. */
static void cert_check_json(cJSON *j, const lg_report *r)
{
    cJSON *c = cJSON_AddObjectToObject(j, "certificate_check");
    cJSON_AddBoolToObject(c, "ok", r->cert.ok);
    cJSON_AddBoolToObject(c, "forced", r->cert.forced);
    rb_json_put_num_inf(c, "workers", r->cert.workers);
    rb_json_put_num_inf(c, "certified_workers", r->cert.certified_workers);
    rb_json_put_num_inf(c, "planned_rate", r->cert.planned_rate);
    rb_json_put_num_inf(c, "output_tokens", r->cert.output_tokens);
    rb_json_put_num_inf(c, "predicted_rho", r->cert.predicted_rho);
    rb_json_put_num_inf(c, "safe_rho", r->cert.safe_rho);
    rb_json_put_num_inf(c, "certified_max_rate", r->cert.certified_max_rate);
    rb_json_put_num_inf(c, "busy_per_request_us", r->cert.busy_per_request_us);
    /* Each stage's predicted rho (linear in the rate) beside the busiest
     * worker's measured one: how well the cost model carried over. A
     * closed loop's stage has no planned rate: its rate per worker is the
     * one it completed over its loop window (summed over the workers). */
    cJSON *sa = cJSON_AddArrayToObject(c, "stages");
    for (int i = 0; sa && i < r->n_stages; i++) {
        cJSON *so = cJSON_CreateObject();
        if (!so || !cJSON_AddItemToArray(sa, so)) {
            cJSON_Delete(so);
            break;
        }
        const char *from = "planned rate";
        double pr = r->cert.planned_rate > 0 && isfinite(r->cert.planned_rate)
                        ? r->cert.predicted_rho * r->stages[i].rate_per_s / r->cert.planned_rate
                        : NAN;
        const lg_stage_stats *st = r->stages[i].stats;
        if (isnan(r->cert.planned_rate) && st && st->loop_window_ns > 0) {
            from = "completed rate";
            pr = r->cert.busy_per_request_us * 1e-6 * (double)st->completed /
                 ((double)st->loop_window_ns * 1e-9);
        }
        double mr = r->stage_bias ? r->stage_bias[i].max_rho : NAN;
        rb_json_put_num_inf(so, "stage", i);
        cJSON_AddStringToObject(so, "predicted_from", from);
        rb_json_put_num_inf(so, "predicted_rho", pr);
        rb_json_put_num_inf(so, "measured_rho", mr);
        rb_json_put_num_inf(so, "measured_over_predicted", pr > 0 ? mr / pr : NAN);
    }
}

/* --lora-modules: "lora": {"split": {name: share}, "requests": {name: n}},
 * the requests dispatched with each name (as many as the JSONL's records
 * that carry it). */
static void lora_json(cJSON *j, const lg_report *r)
{
    const lg_opts *o = r->o;
    if (!o->n_lora) return;
    cJSON *l = cJSON_AddObjectToObject(j, "lora");
    cJSON *sp = cJSON_AddObjectToObject(l, "split");
    cJSON *rq = cJSON_AddObjectToObject(l, "requests");
    for (int i = 0; i < o->n_lora; i++) {
        rb_json_put_num_inf(sp, o->lora_names[i], o->lora_split[i]);
        rb_json_put_num_inf(rq, o->lora_names[i], (double)r->total->lora_requests[i]);
    }
}

cJSON *lg_report_json(const lg_report *r)
{
    const lg_opts *o = r->o;
    cJSON *j = cJSON_CreateObject();
    load_json(j, r);
    warmup_json(j, r);
    lg_probe_json(j, r->o->probe_found);
    prompts_json(j, r);
    lg_report_metrics(j, r->total, o, r->t0_ns, planned_window_ns(r), r->request_rate);
    receive_clock_json(j, r);
    tls_json(j, o);
    user_timed_json(j, r->total, o);
    failed_json(j, r->total);
    lora_json(j, r);
    rb_json_put_num_inf(j, "not_dispatched", (double)r->total->not_dispatched);
    cJSON_AddBoolToObject(j, "not_dispatched_is_lower_bound", r->total->not_dispatched_partial > 0);
    cJSON *st = cJSON_AddArrayToObject(j, "stages");
    for (int i = 0; i < r->n_stages; i++)
        cJSON_AddItemToArray(st, stage_json(r, i));
    if (r->saturated_stage >= 0)
        rb_json_put_num_inf(j, "saturated_stage", r->saturated_stage);
    else
        cJSON_AddNullToObject(j, "saturated_stage");
    lg_knee_json(j, &r->knee);
    cJSON_AddBoolToObject(j, "sim_stamps", r->stamps_seen);
    rb_json_put_num_inf(j, "achieved_ratio", r->achieved_ratio);
    cJSON_AddItemToObject(j, "client_bias", bias_json(r));
    cJSON *h = cJSON_AddObjectToObject(j, "host");
    cJSON_AddStringToObject(h, "cpu_model", r->host.cpu_model);
    rb_json_put_num_inf(h, "cores_online", r->host.cores_online);
    cJSON_AddStringToObject(h, "kernel", r->host.kernel);
    cJSON_AddStringToObject(h, "hostname", r->host.hostname);
    cJSON_AddStringToObject(h, "cpuidle", r->host.cpuidle);
    cpu_latency_json(h, r, o);
    if (r->certificate_note[0]) cJSON_AddStringToObject(j, "certificate", r->certificate_note);
    if (r->cert.checked) cert_check_json(j, r);
    if (r->lost_note) cJSON_AddStringToObject(j, "lost_workers", r->lost_note);
    cJSON_AddStringToObject(j, "loadgen_version", RHOBENCH_VERSION);
    lg_vllm_report_metadata(j, o);
    return j;
}

static void line_s(FILE *f, const char *k, const char *v)
{
    fprintf(f, "%-40s %-10s\n", k, v);
}

static void line_f(FILE *f, const char *k, double v, int prec)
{
    char b[64];
    if (isnan(v))
        snprintf(b, sizeof b, "n/a");
    else
        snprintf(b, sizeof b, "%.*f", prec, v);
    line_s(f, k, b);
}

static void rule(FILE *f, const char *title)
{
    int n = (int)strlen(title), w = 50, left = (w - n) / 2;
    if (left < 0) left = 0;
    fprintf(f, "%.*s%s%.*s\n", left, "--------------------------------------------------", title,
            w - n - left > 0 ? w - n - left : 0,
            "--------------------------------------------------");
}

/* The run's counts, the offered and achieved rates and the throughputs. */
static void summary_totals(const lg_report *r, FILE *f)
{
    const lg_opts *o = r->o;
    const lg_stage_stats *s = r->total;
    int64_t end = s->last_end_ns > s->last_dispatch_ns ? s->last_end_ns : s->last_dispatch_ns;
    double dur = end > r->t0_ns ? (double)(end - r->t0_ns) / 1e9 : NAN;
    int64_t win = s->last_dispatch_ns - r->t0_ns;
    if (win < planned_window_ns(r)) win = planned_window_ns(r);
    char k[96];
    line_s(f, "Load mode:", r->load_mode);
    line_f(f, "Workers:", r->num_workers, 0);
    line_f(f, "Successful requests:", (double)s->completed, 0);
    line_f(f, "Failed requests:", (double)s->failed, 0);
    if (r->interrupted) line_s(f, "Interrupted:", "yes (partial results)");
    line_f(f, "Benchmark duration (s):", dur, 2);
    line_f(f, "Total input tokens:", (double)s->input_tokens, 0);
    line_f(f, "Total generated tokens:", (double)s->output_tokens, 0);
    if (s->cached_of_tokens)
        line_f(f, "Cached prompt tokens (%):",
               100.0 * (double)s->cached_tokens / (double)s->cached_of_tokens, 1);
    if (lg_report_repeats(r)) {
        snprintf(k, sizeof k, "%llu (pool of %zu)", (unsigned long long)lg_report_repeats(r),
                 r->prompt_pool_size);
        line_s(f, "Requests that repeated a prompt:", k);
    }
    /* vLLM's keys stay in the JSON (request_rate, achieved_rate,
     * request_throughput); the printed labels say which rate is which. */
    if (isinf(r->request_rate))
        line_s(f, "Offered (intended) rate (req/s):", "inf (all at once)");
    else if (isnan(r->request_rate) && r->n_stages > 1)
        line_s(f, "Offered (intended) rate (req/s):", "per stage, below");
    else if (isnan(r->request_rate))
        line_s(f, "Offered (intended) rate (req/s):", "closed loop (none)");
    else
        line_f(f, "Offered (intended) rate (req/s):", r->request_rate, 2);
    line_f(f,
           "Dispatched rate (req/s):", win > 0 ? (double)s->dispatched / ((double)win / 1e9) : NAN,
           2);
    line_f(f, "Completed per second of the run (req/s):", (double)s->completed / dur, 2);
    if (o->goodput.enabled) line_f(f, "Request goodput (req/s):", (double)s->good / dur, 2);
    line_f(f, "Output token throughput (tok/s):", (double)s->output_tokens / dur, 2);
    line_f(f, "Total Token throughput (tok/s):", (double)(s->input_tokens + s->output_tokens) / dur,
           2);
}

/* One section per latency metric asked for: mean, median, percentiles. */
static void summary_metrics(const lg_report *r, FILE *f)
{
    const lg_opts *o = r->o;
    const lg_stage_stats *s = r->total;
    char k[96];
    for (int m = 0; m < LG_N_METRICS; m++) {
        if (!((o->percentile_metrics >> m) & 1u)) continue;
        const mdl_hist *h = token_timed(o, m) ? lg_stats_hist_c(s, hist_i[m]) : NULL;
        rule(f, metric_title[m]);
        snprintf(k, sizeof k, "Mean %s (ms):", metric_abbr[m]);
        line_f(f, k, h ? ms(mdl_hist_mean(h)) : NAN, 2);
        snprintf(k, sizeof k, "Median %s (ms):", metric_abbr[m]);
        line_f(f, k, pct_ms(h, 50), 2);
        for (int i = 0; i < o->n_percentiles; i++) {
            char pw[32];
            if (o->percentiles[i] == 50.0) continue; /* the Median row above */
            lg_report_pword(o->percentiles[i], pw, sizeof pw);
            snprintf(k, sizeof k, "P%s %s (ms):", pw, metric_abbr[m]);
            line_f(f, k, pct_ms(h, o->percentiles[i]), 2);
        }
        if (hist_d[m] >= 0) {
            const mdl_hist *d = token_timed(o, m) ? lg_stats_hist_c(s, hist_d[m]) : NULL;
            snprintf(k, sizeof k, "Mean %s from dispatch (ms):", metric_abbr[m]);
            line_f(f, k, d ? ms(mdl_hist_mean(d)) : NAN, 2);
        }
    }
}

/* The stages whose requests ran into --request-timeout, each by name: a
 * count among the failures is easy to miss, and a long generation cut at
 * the timeout is a client setting, not the server's failure. */
static void summary_timeouts(const lg_report *r, FILE *f)
{
    if (!r->total->fail_class[LG_FAIL_TIMEOUT]) return;
    fprintf(f, "Timed out after --request-timeout %g s:", (double)r->o->request_timeout_ns / 1e9);
    const char *sep = " ";
    for (int i = 0; i < r->n_stages; i++) {
        uint64_t n = r->stages[i].stats->fail_class[LG_FAIL_TIMEOUT];
        if (!n) continue;
        fprintf(f, "%sstage %d: %llu of %llu", sep, i, (unsigned long long)n,
                (unsigned long long)r->stages[i].stats->dispatched);
        sep = ", ";
    }
    if (r->n_stages < 1)
        fprintf(f, "%s%llu of %llu", sep, (unsigned long long)r->total->fail_class[LG_FAIL_TIMEOUT],
                (unsigned long long)r->total->dispatched);
    fprintf(f, " (vLLM bench waits up to 6 h: raise it for long generations)\n");
}

/* The failures by class and by HTTP status (no section without one). */
static void summary_failures(const lg_report *r, FILE *f)
{
    const lg_stage_stats *s = r->total;
    char k[96];
    if (!s->failed) return;
    rule(f, "Failures");
    for (int c = 1; c < LG_N_CLASSES; c++) {
        if (c == LG_FAIL_HTTP || !s->fail_class[c]) continue;
        snprintf(k, sizeof k, "%s:", lg_class_names[c]);
        line_f(f, k, (double)s->fail_class[c], 0);
        if (c == LG_FAIL_TLS && !r->o->insecure)
            fprintf(f, "  (the handshake or the server's certificate: --ca-cert FILE trusts a "
                       "self-signed one, --insecure skips the check)\n");
    }
    for (int code = 0; code < LG_HTTP_CODES; code++) {
        if (!s->fail_http[code]) continue;
        snprintf(k, sizeof k, "http_%d:", code);
        line_f(f, k, (double)s->fail_http[code], 0);
    }
    summary_timeouts(r, f);
}

/* Each stage's offered rate against its dispatched one (with two or more). */
static void summary_stages(const lg_report *r, FILE *f)
{
    char k[96];
    if (r->n_stages <= 1) return;
    rule(f, "Stages");
    for (int i = 0; i < r->n_stages; i++) {
        const lg_stage_view *v = &r->stages[i];
        const lg_stage_stats *ss = v->stats;
        int64_t w = ss->last_dispatch_ns - v->start_ns;
        if (w < v->duration_ns) w = v->duration_ns;
        snprintf(k, sizeof k, "Stage %d rate -> achieved (req/s):", i);
        char val[96];
        if (r->saturated_stage >= 0 && i > r->saturated_stage) {
            snprintf(val, sizeof val, "%.1f -> (cut short: the sweep stopped)", v->rate_per_s);
            line_s(f, k, val);
            continue;
        }
        snprintf(val, sizeof val, "%.1f -> %.1f%s%s%s", v->rate_per_s,
                 w > 0 ? (double)ss->dispatched / ((double)w / 1e9) : 0.0,
                 r->sat && r->sat[i].saturated ? " (saturated by the " : "",
                 r->sat && r->sat[i].saturated ? lg_sat_name(r->sat[i].by) : "",
                 r->sat && r->sat[i].saturated ? ")" : "");
        line_s(f, k, val);
    }
}

/* Where each token's time went, by the simulator's own account (its stamps). */
static void summary_truth(const lg_report *r, FILE *f)
{
    const lg_stage_stats *s = r->total;
    if (!s->truth_n) return;
    double n = (double)s->truth_n;
    rule(f, "NTPOT breakdown (simulator truth)");
    line_f(f, "Server queue (ms/token):", ms(s->truth_queue_ns / n), 3);
    line_f(f, "Server prefill (ms/token):", ms(s->truth_prefill_ns / n), 3);
    line_f(f, "Server decode (ms/token):", ms(s->truth_decode_ns / n), 3);
    line_f(f, "Client and network (ms/token):", ms(s->truth_client_ns / n), 3);
    if (r->o->stream) {
        line_f(f, "Server's true TTFT, mean (ms):", ms(s->truth_ttft_ns / n), 3);
        line_f(f,
               "TTFT inflation, mean (ms):", ms((s->truth_measured_ttft_ns - s->truth_ttft_ns) / n),
               3);
        line_f(f, "TTFT inflation user-timed, mean (ms):",
               ms((s->truth_measured_ttft_u_ns - s->truth_ttft_ns) / n), 3);
    }
}

/* The client's own bias: workers' rho, receive clock, delay per token, arrival test. */
static void summary_bias(const lg_report *r, FILE *f)
{
    const lg_stage_stats *s = r->total;
    char k[96];
    rule(f, "Client bias");
    for (int i = 0; i < r->n_workers; i++) {
        snprintf(k, sizeof k, "Worker %d rho:", r->workers[i].worker);
        if (r->workers[i].lost)
            line_s(f, k, "lost");
        else
            line_f(f, k, r->workers[i].rho, 3);
    }
    line_f(f, "Predicted client wait W_q (us):", r->predicted_wq_us, 2);
    cpu_latency_sum c = cpu_latency_of(r);
    char q[192];
    if (c.held && c.held == c.workers && !isnan(c.limit_us))
        snprintf(q, sizeof q, "held by all %d (host's limit %.0f us)", c.workers, c.limit_us);
    else if (c.held || c.refused)
        snprintf(q, sizeof q, "held by %d of %d%s%s", c.held, c.workers, c.refused ? "; " : "",
                 c.refused ? c.refused : "");
    else
        snprintf(q, sizeof q, "not asked");
    line_s(f, "CPU latency QoS of the workers:", q);
    line_s(f, "Receive clock:", receive_clock_name(r));
    const lg_bias_stage *rb = r->run_bias;
    if (rb && rb->client_delay_us.n) {
        line_f(f, "Client delay per token, mean (us):", rb->client_delay_us.mean, 1);
        line_f(f, "Client delay per token, p99 (us):", rb->client_delay_us.p99, 1);
        line_f(f, "  of which pickup (wake-up), p99 (us):", rb->pickup_delay_us.p99, 1);
        line_f(f, "Tokens timed exactly (share):", rb->exact_share, 3);
        const mdl_hist *iw = lg_stats_hist_c(s, LG_H_ITL), *iu = lg_stats_hist_c(s, LG_H_ITL_U);
        if (iw->total) {
            line_f(f, "P99 ITL wire-timed (ms):", ms((double)mdl_hist_percentile(iw, 99)), 3);
            line_f(f, "P99 ITL user-timed (ms):", ms((double)mdl_hist_percentile(iu, 99)), 3);
        }
    }
    const mdl_hist *ov = lg_stats_hist_c(s, LG_H_OVERHEAD);
    if (ov->total) {
        line_f(f, "Stamp to delivery per token, median (us):",
               (double)mdl_hist_percentile(ov, 50) / 1e3, 1);
        line_f(f,
               "Stamp to delivery per token, p99 (us):", (double)mdl_hist_percentile(ov, 99) / 1e3,
               1);
    }
    if (rb && rb->arrival.tested) {
        char val[128];
        snprintf(val, sizeof val, "KS vs intended gaps >= %.1f ms: D=%.4f p=%.3g",
                 rb->arrival.resolution_ms, rb->arrival.statistic, rb->arrival.p_value);
        line_s(f, "Arrival test:", val);
    }
}

void lg_report_summary(const lg_report *r, FILE *f)
{
    fprintf(f, "============ Serving Benchmark Result ============\n");
    summary_totals(r, f);
    summary_metrics(r, f);
    const mdl_hist *lag = lg_stats_hist_c(r->total, LG_H_LAG);
    rule(f, "Schedule lag");
    line_f(f, "Median lag (ms):", ms((double)mdl_hist_percentile(lag, 50)), 3);
    line_f(f, "P99 lag (ms):", ms((double)mdl_hist_percentile(lag, 99)), 3);
    summary_failures(r, f);
    summary_stages(r, f);
    summary_truth(r, f);
    summary_bias(r, f);
    if (lg_report_repeats(r))
        fprintf(f,
                "warning: %llu requests repeated a prompt (pool of %zu): a server's prefix "
                "cache answers a repeat faster than a fresh prompt (see --prompt-pool-size)\n",
                (unsigned long long)lg_report_repeats(r), r->prompt_pool_size);
    lg_knee_summary(&r->knee, f);
    line_s(f, "Verdict:", mdl_verdict_name(r->verdict.level));
    fprintf(f, "  %s\n", r->verdict.reason);
    if (r->lost_note) fprintf(f, "  lost: %s\n", r->lost_note);
    fprintf(f, "==================================================\n");
}
