/* cal_step: reads one loadgen result JSON into a cal_step and derives the
 * per-event figures the fit uses. */
#include "cal_step.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rb_json.h"

void cal_step_clear(cal_step *s)
{
    memset(s, 0, sizeof *s);
    s->request_rate = s->achieved_rate = s->duration_s = s->send_window_s = NAN;
    s->dispatched = -1;
    s->lag_p50_ms = s->lag_mean_ms = s->lag_p99_ms = NAN;
    s->rho_mean = s->rho_max = NAN;
    s->event_rate_per_worker = s->callback_rate_per_worker = NAN;
    s->service_per_event_us = s->mean_service_us = s->second_moment_us2 = NAN;
    s->events_per_request = NAN;
    s->overhead_mean_us = s->overhead_median_us = s->overhead_p99_us = NAN;
    s->predicted_wq_us = s->arrival_p_value = NAN;
    s->fit_pred_us = NAN;
    s->level = -1;
    s->host_busy = s->host_other = s->run_delay_share = NAN;
    s->cpu_latency_us = NAN;
}

int cal_step_empty(const cal_step *s)
{
    double events = 0;
    for (int w = 0; w < s->n_meas; w++)
        events += s->w[w].events;
    return s->n_meas > 0 && events == 0 && s->failed == 0;
}

double cal_step_cpu_latency(const cal_step *s, int n)
{
    double most = NAN;
    for (int i = 0; i < n; i++) {
        if (isnan(s[i].cpu_latency_us)) return NAN;
        if (!(s[i].cpu_latency_us <= most)) most = s[i].cpu_latency_us;
    }
    return most;
}

/* host.cpu_latency_qos's limit when every worker held it, else NAN. */
static double held_cpu_latency(const cJSON *root)
{
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "host"), "cpu_latency_qos");
    double held = rb_json_num(q, "held_workers"), all = rb_json_num(q, "workers");
    double limit = rb_json_num(q, "limit_us");
    return all > 0 && held == all && limit >= 0 ? limit : NAN;
}

/* The arrival test's p-value under whichever name loadgen uses. */
static double arrival_p(const cJSON *t)
{
    static const char *const keys[] = {"p_value", "ks_p_value", "p"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        double p = rb_json_num(t, keys[i]);
        if (!isnan(p)) return p;
    }
    return NAN;
}

static void derive(cal_step *s)
{
    double cb = 0, ev = 0, busy = 0, m2 = 0, rho_sum = 0, ev_rate = 0, cb_rate = 0;
    s->rho_max = 0;
    for (int i = 0; i < s->n_meas; i++) {
        const cal_worker_meas *w = &s->w[i];
        cb += w->callbacks;
        ev += w->events;
        busy += w->callbacks * w->mean_service_us;
        m2 += w->callbacks * w->second_moment_us2;
        rho_sum += w->rho;
        ev_rate += w->event_rate_per_s;
        cb_rate += w->callback_rate_per_s;
        if (w->rho > s->rho_max) s->rho_max = w->rho;
    }
    int n = s->n_meas;
    s->rho_mean = n ? rho_sum / n : NAN;
    if (!n) s->rho_max = NAN;
    s->event_rate_per_worker = n ? ev_rate / n : NAN;
    s->callback_rate_per_worker = n ? cb_rate / n : NAN;
    s->mean_service_us = cb > 0 ? busy / cb : NAN;
    s->second_moment_us2 = cb > 0 ? m2 / cb : NAN;
    s->service_per_event_us = ev > 0 ? busy / ev : NAN;
    s->events_per_request = s->completed > 0 && ev > 0 ? ev / (double)s->completed : NAN;
}

int cal_step_parse(const char *json, size_t len, cal_step *s, char *err, size_t errlen)
{
    int workers = s->workers;
    cal_step_clear(s);
    s->workers = workers;
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "result: not a JSON object");
        cJSON_Delete(root);
        return -EINVAL;
    }
    int rc = -EINVAL;
    s->request_rate = rb_json_num(root, "request_rate");
    s->achieved_rate = rb_json_num(root, "achieved_rate");
    s->duration_s = rb_json_num(root, "duration");
    s->send_window_s = rb_json_num(root, "send_window");
    double completed = rb_json_num(root, "completed"), failed = rb_json_num(root, "failed");
    double dispatched = rb_json_num(root, "dispatched");
    s->dispatched = isnan(dispatched) ? -1 : (int64_t)dispatched;
    s->lag_p50_ms = rb_json_num(root, "median_schedule_lag_ms");
    s->lag_p99_ms = rb_json_num(root, "p99_schedule_lag_ms");
    s->lag_mean_ms = rb_json_num(root, "mean_schedule_lag_ms");
    if (isnan(s->achieved_rate) || isnan(completed)) {
        snprintf(err, errlen, "result: %s: missing or not a number",
                 isnan(s->achieved_rate) ? "achieved_rate" : "completed");
        goto done;
    }
    s->completed = (int64_t)completed;
    s->failed = isnan(failed) ? 0 : (int64_t)failed;

    const cJSON *cbias = cJSON_GetObjectItemCaseSensitive(root, "client_bias");
    const cJSON *workers_a = cJSON_GetObjectItemCaseSensitive(cbias, "workers");
    if (!cJSON_IsArray(workers_a) || cJSON_GetArraySize(workers_a) < 1) {
        snprintf(err, errlen, "result: client_bias.workers: missing or empty");
        goto done;
    }
    const cJSON *w;
    cJSON_ArrayForEach(w, workers_a)
    {
        if (s->n_meas >= CAL_MAX_WORKERS) break;
        cal_worker_meas *m = &s->w[s->n_meas];
        m->rho = rb_json_num(w, "rho");
        m->callbacks = rb_json_num(w, "callbacks");
        m->callback_rate_per_s = rb_json_num(w, "callback_rate_per_s");
        m->mean_service_us = rb_json_num(w, "mean_service_us");
        m->second_moment_us2 = rb_json_num(w, "second_moment_us2");
        m->events = rb_json_num(w, "events");
        m->event_rate_per_s = rb_json_num(w, "event_rate_per_s");
        /* A worker that received nothing in the batch (a low rate, a short
         * window): loadgen has no loop window, so no rho, nor a mean
         * service time. It did no work: idle, not an error. */
        if (m->events == 0 && !(m->callbacks > 0)) {
            if (isnan(m->rho)) m->rho = 0;
            if (isnan(m->callbacks)) m->callbacks = 0;
            if (isnan(m->mean_service_us)) m->mean_service_us = 0;
            if (isnan(m->second_moment_us2)) m->second_moment_us2 = 0;
            if (isnan(m->event_rate_per_s)) m->event_rate_per_s = 0;
        }
        if (isnan(m->rho) || isnan(m->callbacks) || isnan(m->mean_service_us) || isnan(m->events) ||
            isnan(m->event_rate_per_s)) {
            snprintf(err, errlen,
                     "result: client_bias.workers[%d]: rho, callbacks, mean_service_us, "
                     "events, event_rate_per_s must be numbers",
                     s->n_meas);
            goto done;
        }
        if (isnan(m->second_moment_us2))
            m->second_moment_us2 = m->mean_service_us * m->mean_service_us;
        if (isnan(m->callback_rate_per_s)) m->callback_rate_per_s = 0;
        s->n_meas++;
    }
    /* The client's own delay per token: from the kernel's receive time to
     * delivery when loadgen measures it (client_delay_us), else from the
     * simulator's send stamp to delivery (overhead_per_token_us). */
    const cJSON *cd = cJSON_GetObjectItemCaseSensitive(cbias, "client_delay_us");
    if (cJSON_IsObject(cd) && !isnan(rb_json_num(cd, "mean"))) {
        s->overhead_mean_us = rb_json_num(cd, "mean");
        s->overhead_median_us = rb_json_num(cd, "p50");
        s->overhead_p99_us = rb_json_num(cd, "p99");
        snprintf(s->delay_source, sizeof s->delay_source, "client_delay_us");
    } else {
        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(cbias, "overhead_per_token_us");
        s->overhead_mean_us = rb_json_num(ov, "mean");
        s->overhead_median_us = rb_json_num(ov, "median");
        s->overhead_p99_us = rb_json_num(ov, "p99");
        snprintf(s->delay_source, sizeof s->delay_source, "overhead_per_token_us");
    }
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(root, "receive_clock");
    if (!cJSON_IsString(clock)) clock = cJSON_GetObjectItemCaseSensitive(cbias, "receive_clock");
    if (cJSON_IsString(clock))
        snprintf(s->receive_clock, sizeof s->receive_clock, "%s", clock->valuestring);
    s->predicted_wq_us = rb_json_num(cbias, "predicted_wq_us");
    s->run_delay_share =
        rb_json_num(cJSON_GetObjectItemCaseSensitive(cbias, "host"), "run_delay_share");
    s->cpu_latency_us = held_cpu_latency(root);
    s->arrival_p_value = arrival_p(cJSON_GetObjectItemCaseSensitive(cbias, "arrival_test"));
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(cbias, "verdict");
    if (cJSON_IsString(verdict))
        snprintf(s->verdict, sizeof s->verdict, "%s", verdict->valuestring);
    derive(s);
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

void cal_step_host_shares(double busy_ns, double total_ns, double own_s, double *busy,
                          double *other)
{
    if (!(total_ns > 0)) {
        *busy = *other = NAN;
        return;
    }
    *busy = busy_ns / total_ns;
    /* in seconds both: the host's busy time less this run's own */
    double o = (busy_ns * 1e-9 - own_s) / (total_ns * 1e-9);
    *other = o > 0 ? o : 0;
}
