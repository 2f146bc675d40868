/* cal_cert: the certificate's JSON, written with cJSON and read back. */
#include "cal_cert.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rb_cert.h"
#include "rb_json.h"

static void put_step(cJSON *rows, const cal_step *s)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToArray(rows, r);
    cJSON_AddNumberToObject(r, "workers", s->workers);
    rb_json_put_num(r, "request_rate", s->request_rate);
    rb_json_put_num(r, "achieved_rate", s->achieved_rate);
    cJSON_AddNumberToObject(r, "completed", (double)s->completed);
    cJSON_AddNumberToObject(r, "failed", (double)s->failed);
    rb_json_put_num(r, "rho_mean", s->rho_mean);
    rb_json_put_num(r, "rho_max", s->rho_max);
    rb_json_put_num(r, "event_rate_per_worker", s->event_rate_per_worker);
    rb_json_put_num(r, "callback_rate_per_worker", s->callback_rate_per_worker);
    rb_json_put_num(r, "events_per_request", s->events_per_request);
    rb_json_put_num(r, "service_per_event_us", s->service_per_event_us);
    rb_json_put_num(r, "mean_service_us", s->mean_service_us);
    rb_json_put_num(r, "second_moment_us2", s->second_moment_us2);
    rb_json_put_num(r, "overhead_mean_us", s->overhead_mean_us);
    rb_json_put_num(r, "overhead_p99_us", s->overhead_p99_us);
    rb_json_put_num(r, "median_schedule_lag_ms", s->lag_p50_ms);
    rb_json_put_num(r, "mean_schedule_lag_ms", s->lag_mean_ms);
    rb_json_put_num(r, "p99_schedule_lag_ms", s->lag_p99_ms);
    rb_json_put_num(r, "arrival_p_value", s->arrival_p_value);
    rb_json_put_num(r, "predicted_wq_us", s->predicted_wq_us);
    rb_json_put_num(r, "fit_pred_us", s->fit_pred_us);
    cJSON_AddNumberToObject(r, "level", s->level);
    if (s->probe) cJSON_AddBoolToObject(r, "probe", 1);
    if (s->plain) cJSON_AddBoolToObject(r, "plain", 1);
    rb_json_put_num(r, "host_busy", s->host_busy);
    rb_json_put_num(r, "host_other", s->host_other);
    rb_json_put_num(r, "run_delay_share", s->run_delay_share);
    cJSON_AddStringToObject(r, "delay_source", s->delay_source);
    cJSON_AddBoolToObject(r, "saturated", s->saturated);
    if (s->saturated) cJSON_AddStringToObject(r, "saturated_by", s->why);
    cJSON_AddBoolToObject(r, "used_in_fit", s->used_in_fit);
    if (s->confirmed) cJSON_AddBoolToObject(r, "confirmed", 1);
    cJSON_AddBoolToObject(r, "simulator_apart", s->apart);
    if (s->superseded) cJSON_AddBoolToObject(r, "superseded", 1);
    if (s->verdict[0]) cJSON_AddStringToObject(r, "verdict", s->verdict);
}

/* x, or NAN (written as null) when it is not a positive figure: a count or
 * a scale that was not measured (0) is one the reader refuses. */
static double positive(double x)
{
    return x > 0 && isfinite(x) ? x : NAN;
}

/* The keys loadgen reads, by rb_cert (their one writer); the per_k array, or NULL. */
static cJSON *put_core(cJSON *root, const cal_cert_info *info, const cal_per_k *pk, int npk)
{
    rb_cert core = {.version = RB_CERT_VERSION,
                    .cores_online = info->host.cores_online,
                    .cpu_latency_us = info->cpu_latency_us,
                    .cpu_latency_recorded = 1,
                    .budget_us = info->budget_us,
                    .per_delivery_us = info->cost.per_delivery_us,
                    .per_event_us = info->cost.per_event_us,
                    .ref_events_per_request = info->ref_events_per_request,
                    .ref_output_len = info->output_len,
                    .per_request_us = info->cost.per_request_us,
                    .per_plain_response_us = info->cost.per_plain_response_us,
                    .ref_callbacks_per_request = positive(info->cost.ref_callbacks_per_request),
                    .plain_callbacks_per_request = positive(info->cost.plain_callbacks_per_request),
                    .plain_events_per_request = positive(info->cost.plain_events_per_request),
                    .n = npk > 0 ? (size_t)npk : 0};
    snprintf(core.cpu_model, sizeof core.cpu_model, "%s", info->host.cpu_model);
    core.per_k = core.n ? calloc(core.n, sizeof *core.per_k) : NULL;
    if (core.n && !core.per_k) return NULL;
    for (size_t i = 0; i < core.n; i++)
        core.per_k[i] =
            (rb_cert_entry){pk[i].workers,         pk[i].safe_rho,     pk[i].safe_rate_per_worker,
                            pk[i].safe_total_rate, pk[i].transport_us, positive(pk[i].cost_scale)};
    cJSON *arr = rb_cert_put(root, &core);
    free(core.per_k);
    return arr;
}

/* When and where it was measured: the host, the versions, the model. */
static void put_provenance(cJSON *root, const cal_cert_info *info)
{
    cJSON_AddStringToObject(root, "created", info->created);
    cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
    cJSON_AddStringToObject(host, "kernel", info->host.kernel);
    cJSON_AddStringToObject(host, "hostname", info->host.hostname);
    cJSON_AddStringToObject(host, "cpuidle", info->host.cpuidle);
    /* other processes on the CPUs are measured too: say how busy the host was */
    rb_json_put_num(host, "loadavg_1min_start", info->loadavg_start);
    rb_json_put_num(host, "loadavg_1min_end", info->loadavg_end);
    cJSON_AddNumberToObject(host, "batches_retried", info->batches_retried);
    cJSON_AddNumberToObject(host, "batches_disturbed", info->batches_disturbed);
    rb_json_put_num(host, "other_max_share", info->other_max);
    cJSON *ver = cJSON_AddObjectToObject(root, "versions");
    cJSON_AddStringToObject(ver, "rhobench", info->version_rhobench);
    cJSON_AddStringToObject(ver, "libcurl", info->version_libcurl);
    cJSON_AddStringToObject(ver, "libuv", info->version_libuv);
    cJSON_AddStringToObject(root, "model", info->model);
    cJSON_AddStringToObject(root, "mode", info->mode);
    cJSON_AddBoolToObject(root, "self_test", info->self_test);
    if (info->client_cost[0]) cJSON_AddStringToObject(root, "client_cost", info->client_cost);
}

/* The load it was measured under, and the cost model's form and intervals. */
static void put_workload(cJSON *root, const cal_cert_info *info)
{
    cJSON *srv = cJSON_AddObjectToObject(root, "calibration_load");
    rb_json_put_num(srv, "server_inter_token_latency_us", info->server_itl_us);
    cJSON_AddNumberToObject(srv, "random_input_len", info->input_len);
    cJSON_AddNumberToObject(srv, "random_output_len", info->output_len);
    rb_json_put_num(srv, "step_duration_s", info->step_duration_s);
    cJSON *pl = cJSON_AddObjectToObject(srv, "placement");
    if (info->place_sim_cpu >= 0) {
        cJSON_AddNumberToObject(pl, "simulator_cpu", info->place_sim_cpu);
        rb_json_put_num(pl, "simulator_cpu_idle_at_start", info->place_sim_cpu_idle);
        cJSON_AddNumberToObject(pl, "simulator_nice", info->place_sim_nice);
        cJSON_AddStringToObject(pl, "worker_cpus", info->place_worker_cpus);
        cJSON_AddNumberToObject(pl, "shared_from_k", info->place_shared_from_k);
    } else {
        cJSON_AddNullToObject(pl, "simulator_cpu");
        cJSON_AddStringToObject(pl, "note", "every k shared the CPUs with the simulator");
    }
    /* the workload the requests/s figures hold for */
    cJSON *ref = cJSON_GetObjectItemCaseSensitive(root, "reference_workload");
    cJSON_AddStringToObject(ref, "name", "calibration");
    cJSON_AddNumberToObject(ref, "random_input_len", info->input_len);
    rb_json_put_num(ref, "server_inter_token_latency_us", info->server_itl_us);
    cJSON_AddNumberToObject(ref, "events_per_delivery", 1);
    cJSON_AddStringToObject(ref, "rate_unit", "requests/s");
    cJSON *cm = cJSON_GetObjectItemCaseSensitive(root, "cost_model");
    cJSON_AddStringToObject(cm, "form",
                            "rho per worker = cost_scale of k x (requests/s * per_request_us + "
                            "deliveries/s * per_delivery_us + events/s * per_event_us + "
                            "non-streamed responses/s * per_plain_response_us)");
    rb_json_put_pair(cm, "per_request_us_ci", info->cost.per_request_us_ci);
    rb_json_put_pair(cm, "per_delivery_us_ci", info->cost.per_delivery_us_ci);
    rb_json_put_pair(cm, "per_event_us_ci", info->cost.per_event_us_ci);
    rb_json_put_pair(cm, "per_plain_response_us_ci", info->cost.per_plain_response_us_ci);
    cJSON_AddNumberToObject(cm, "n_batches", info->cost.n);
    cJSON_AddBoolToObject(cm, "identified", info->cost.identified);
    cJSON_AddBoolToObject(cm, "request_identified", info->cost.request_identified);
    cJSON_AddBoolToObject(cm, "plain_identified", info->cost.plain_identified);
}

/* calibrate's own keys of per_k entry o: the rule, the fit, the moments, the levels. */
static void put_per_k(cJSON *o, const cal_per_k *p)
{
    cJSON_AddStringToObject(o, "limited_by", p->limited_by);
    if (p->placement[0]) cJSON_AddStringToObject(o, "placement", p->placement);
    cJSON_AddBoolToObject(o, "measured_again_shared", p->measured_both);
    cJSON_AddStringToObject(o, "certified_note", p->cert_note);
    cJSON_AddBoolToObject(o, "host_limited", p->host_limited);
    if (p->host_limited) cJSON_AddStringToObject(o, "host_note", p->host_note);
    rb_json_put_num(o, "measured_rho", p->measured_rho);
    if (p->crossing_over_rho > 0) {
        cJSON *c = cJSON_AddObjectToObject(o, "crossing");
        rb_json_put_num(c, "within_rho", p->measured_rho);
        rb_json_put_num(c, "over_rho", p->crossing_over_rho);
        cJSON_AddBoolToObject(c, "over_confirmed", p->crossing_over_confirmed);
        rb_json_put_num(c, "rho", p->crossing_rho);
        rb_json_put_pair(c, "rho_ci", p->crossing_rho_ci);
    }
    rb_json_put_num(o, "model_rho", p->model_rho);
    rb_json_put_pair(o, "cost_scale_ci", p->cost_scale_ci);
    rb_json_put_num(o, "conservative_safe_total_rate", p->conservative_safe_total_rate);
    rb_json_put_num(o, "model_safe_total_rate", p->model_safe_total_rate);
    cJSON_AddStringToObject(o, "method", p->method);
    cJSON_AddNumberToObject(o, "n_steps", p->n_steps);
    cJSON_AddNumberToObject(o, "n_levels", p->n_levels);
    cJSON_AddNumberToObject(o, "n_fit", p->n_fit);
    rb_json_put_pair(o, "transport_us_ci", p->transport_us_ci);
    rb_json_put_num(o, "r_us", p->r_us);
    rb_json_put_pair(o, "r_us_ci", p->r_us_ci);
    rb_json_put_num(o, "gof_f", p->f_gof);
    rb_json_put_num(o, "gof_p", p->gof_p);
    cJSON_AddBoolToObject(o, "fit_ok", p->fit_ok);
    rb_json_put_num(o, "r2", p->r2);
    rb_json_put_num(o, "mean_service_us", p->mean_service_us);
    rb_json_put_pair(o, "mean_service_us_ci", p->mean_service_us_ci);
    rb_json_put_num(o, "second_moment_us2", p->second_moment_us2);
    rb_json_put_pair(o, "second_moment_us2_ci", p->second_moment_us2_ci);
    rb_json_put_num(o, "busy_per_request_us", p->busy_per_request_us);
    rb_json_put_pair(o, "busy_per_request_us_ci", p->busy_per_request_us_ci);
    rb_json_put_num(o, "events_per_request", p->events_per_request);
    rb_json_put_num(o, "safe_event_rate_per_worker", p->safe_event_rate_per_worker);
    rb_json_put_num(o, "max_measured_rate", p->max_measured_rate);
    cJSON *lv = cJSON_AddArrayToObject(o, "levels");
    for (int j = 0; j < p->n_levels; j++) {
        const cal_level *l = &p->levels[j];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(lv, e);
        cJSON_AddNumberToObject(e, "level", l->level);
        rb_json_put_num(e, "request_rate", l->request_rate);
        cJSON_AddNumberToObject(e, "batches", l->n);
        rb_json_put_num(e, "rho", l->rho);
        rb_json_put_num(e, "rho_sd", l->rho_sd);
        rb_json_put_num(e, "delay_us", l->delay_us);
        rb_json_put_num(e, "delay_err_us", l->delay_err_us);
        rb_json_put_num(e, "fit_us", p->level_pred_us[j]);
        rb_json_put_num(e, "host_busy", l->host_busy);
        rb_json_put_num(e, "host_other", l->host_other);
        rb_json_put_num(e, "run_delay_share", l->run_delay_share);
        cJSON_AddNumberToObject(e, "batches_retried", l->retried);
        cJSON_AddBoolToObject(e, "saturated", l->saturated);
        cJSON_AddBoolToObject(e, "confirmed", l->confirmed);
        cJSON_AddBoolToObject(e, "repeated", l->repeated);
        cJSON_AddBoolToObject(e, "undecided", l->undecided);
    }
}

char *cal_cert_to_json(const cal_cert_info *info, const cal_per_k *pk, int npk,
                       const cal_step *steps, int nsteps)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    /* The keys loadgen reads come first. */
    cJSON *arr = put_core(root, info, pk, npk);
    if (!arr) {
        cJSON_Delete(root);
        return NULL;
    }
    put_provenance(root, info);
    put_workload(root, info);
    for (int i = 0; i < npk; i++)
        put_per_k(cJSON_GetArrayItem(arr, i), &pk[i]);
    cJSON *rows = cJSON_AddArrayToObject(root, "table");
    for (int i = 0; steps && i < nsteps; i++)
        put_step(rows, &steps[i]);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

int cal_cert_parse(const char *json, size_t len, cal_cert_info *info, cal_per_k *pk, int max,
                   int *npk, char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    *npk = 0;
    cJSON *root = cJSON_ParseWithLength(json, len);
    /* The keys loadgen relies on are read (and required) as loadgen reads them. */
    rb_cert core;
    int rc = rb_cert_read(root, &core, err, errlen);
    if (rc) goto done;
    info->version = core.version;
    snprintf(info->host.cpu_model, sizeof info->host.cpu_model, "%s", core.cpu_model);
    info->host.cores_online = core.cores_online;
    info->cpu_latency_us = core.cpu_latency_us;
    info->budget_us = core.budget_us;
    info->cost.per_delivery_us = core.per_delivery_us;
    info->cost.per_event_us = core.per_event_us;
    info->cost.per_request_us = core.per_request_us;
    info->cost.per_plain_response_us = core.per_plain_response_us;
    info->cost.ref_callbacks_per_request = core.ref_callbacks_per_request;
    info->cost.plain_callbacks_per_request = core.plain_callbacks_per_request;
    info->cost.plain_events_per_request = core.plain_events_per_request;
    info->ref_events_per_request = core.ref_events_per_request;
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(root, "cost_model");
    rb_json_pair(cm, "per_delivery_us_ci", info->cost.per_delivery_us_ci);
    rb_json_pair(cm, "per_event_us_ci", info->cost.per_event_us_ci);
    rb_json_pair(cm, "per_request_us_ci", info->cost.per_request_us_ci);
    rb_json_pair(cm, "per_plain_response_us_ci", info->cost.per_plain_response_us_ci);
    info->cost.identified = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cm, "identified"));
    info->cost.request_identified =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cm, "request_identified"));
    info->cost.plain_identified =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cm, "plain_identified"));
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
    rb_json_str(root, "created", info->created, sizeof info->created);
    rb_json_str(host, "kernel", info->host.kernel, sizeof info->host.kernel);
    rb_json_str(host, "hostname", info->host.hostname, sizeof info->host.hostname);
    info->loadavg_start = rb_json_num(host, "loadavg_1min_start");
    info->loadavg_end = rb_json_num(host, "loadavg_1min_end");
    double br = rb_json_num(host, "batches_retried"), bd = rb_json_num(host, "batches_disturbed");
    info->batches_retried = isfinite(br) ? (int)br : 0;
    info->batches_disturbed = isfinite(bd) ? (int)bd : 0;
    info->other_max = rb_json_num(host, "other_max_share");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "versions");
    rb_json_str(ver, "rhobench", info->version_rhobench, sizeof info->version_rhobench);
    rb_json_str(ver, "libcurl", info->version_libcurl, sizeof info->version_libcurl);
    rb_json_str(ver, "libuv", info->version_libuv, sizeof info->version_libuv);
    rb_json_str(root, "model", info->model, sizeof info->model);
    rb_json_str(root, "mode", info->mode, sizeof info->mode);
    info->self_test = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "self_test"));
    rb_json_str(root, "client_cost", info->client_cost, sizeof info->client_cost);
    const cJSON *srv = cJSON_GetObjectItemCaseSensitive(root, "calibration_load");
    info->server_itl_us = rb_json_num(srv, "server_inter_token_latency_us");
    info->input_len = (int)fmax(0, rb_json_num(srv, "random_input_len"));
    info->output_len = (int)fmax(0, rb_json_num(srv, "random_output_len"));
    info->step_duration_s = rb_json_num(srv, "step_duration_s");

    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "per_k");
    for (int i = 0; i < (int)core.n && i < max; i++) {
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        const rb_cert_entry *e = &core.per_k[i];
        cal_per_k *p = &pk[i];
        memset(p, 0, sizeof *p);
        p->workers = e->workers;
        p->safe_rho = e->safe_rho;
        p->safe_rate_per_worker = e->safe_rate_per_worker;
        p->safe_total_rate = e->safe_total_rate;
        p->transport_us = e->transport_us;
        p->cost_scale = e->cost_scale;
        rb_json_pair(o, "cost_scale_ci", p->cost_scale_ci);
        rb_json_str(o, "method", p->method, sizeof p->method);
        p->n_steps = (int)fmax(0, rb_json_num(o, "n_steps"));
        p->n_fit = (int)fmax(0, rb_json_num(o, "n_fit"));
        p->mean_service_us = rb_json_num(o, "mean_service_us");
        rb_json_pair(o, "mean_service_us_ci", p->mean_service_us_ci);
        p->second_moment_us2 = rb_json_num(o, "second_moment_us2");
        rb_json_pair(o, "second_moment_us2_ci", p->second_moment_us2_ci);
        rb_json_pair(o, "transport_us_ci", p->transport_us_ci);
        p->r_us = rb_json_num(o, "r_us");
        rb_json_pair(o, "r_us_ci", p->r_us_ci);
        p->gof_p = rb_json_num(o, "gof_p");
        p->fit_ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "fit_ok"));
        p->r2 = rb_json_num(o, "r2");
        p->events_per_request = rb_json_num(o, "events_per_request");
        p->safe_event_rate_per_worker = rb_json_num(o, "safe_event_rate_per_worker");
        p->conservative_safe_total_rate = rb_json_num(o, "conservative_safe_total_rate");
        p->max_measured_rate = rb_json_num(o, "max_measured_rate");
        p->model_safe_total_rate = rb_json_num(o, "model_safe_total_rate");
        rb_json_str(o, "limited_by", p->limited_by, sizeof p->limited_by);
        rb_json_str(o, "placement", p->placement, sizeof p->placement);
        p->measured_both =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "measured_again_shared"));
        rb_json_str(o, "certified_note", p->cert_note, sizeof p->cert_note);
        p->model_rho = rb_json_num(o, "model_rho");
        p->measured_rho = rb_json_num(o, "measured_rho");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "crossing");
        p->crossing_over_rho = rb_json_num(c, "over_rho");
        p->crossing_rho = rb_json_num(c, "rho");
        rb_json_pair(c, "rho_ci", p->crossing_rho_ci);
        p->crossing_over_confirmed =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "over_confirmed"));
        p->host_limited = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "host_limited"));
        rb_json_str(o, "host_note", p->host_note, sizeof p->host_note);
        *npk = i + 1;
    }
    rb_cert_free(&core);
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}
