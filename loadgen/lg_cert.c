/* lg_cert: parsing of calibrate's certificate and the refuse/accept rule of
 * lg_cert.h. */
#include "lg_cert.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_json.h"

int lg_cert_parse(const char *json, size_t len, lg_cert *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->budget_us = NAN;
    cJSON *j = cJSON_ParseWithLength(json, len);
    if (!j || !cJSON_IsObject(j)) {
        snprintf(err, errlen, "certificate: not a JSON object");
        cJSON_Delete(j);
        return -EINVAL;
    }
    int rc = -EINVAL;
    out->per_delivery_us = out->per_event_us = out->ref_events_per_request = NAN;
    out->ref_output_len = NAN;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "rhobench_certificate");
    out->version = 1; /* absent: the first format, which had no version key */
    if (ver) {
        if (!cJSON_IsNumber(ver) || (ver->valuedouble != 1 && ver->valuedouble != 2)) {
            char v[32] = "?";
            if (cJSON_IsNumber(ver)) snprintf(v, sizeof v, "%g", ver->valuedouble);
            snprintf(err, errlen,
                     "certificate: rhobench_certificate: format version %s is not one this "
                     "loadgen reads (1 or 2); run this build's calibrate again",
                     v);
            goto out;
        }
        out->version = (int)ver->valuedouble;
    }
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(j, "host");
    const cJSON *cpu = host ? cJSON_GetObjectItemCaseSensitive(host, "cpu_model") : NULL;
    double cores;
    if (!cJSON_IsString(cpu)) {
        snprintf(err, errlen, "certificate: host.cpu_model: missing or not a string");
        goto out;
    }
    if (rb_json_get_num(host, "cores_online", &cores) || !(cores >= 0 && cores <= INT_MAX)) {
        snprintf(err, errlen, "certificate: host.cores_online: missing or not a number in [0, %d]",
                 INT_MAX);
        goto out;
    }
    snprintf(out->cpu_model, sizeof out->cpu_model, "%s", cpu->valuestring);
    out->cores_online = (int)cores;
    rb_json_get_num(j, "budget_us", &out->budget_us);
    if (out->version == 2) {
        const cJSON *cm = cJSON_GetObjectItemCaseSensitive(j, "cost_model");
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(j, "reference_workload");
        if (rb_json_get_num(cm, "per_delivery_us", &out->per_delivery_us))
            out->per_delivery_us = NAN;
        if (rb_json_get_num(cm, "per_event_us", &out->per_event_us)) out->per_event_us = NAN;
        if (rb_json_get_num(ref, "events_per_request", &out->ref_events_per_request))
            out->ref_events_per_request = NAN;
        if (rb_json_get_num(ref, "random_output_len", &out->ref_output_len))
            out->ref_output_len = NAN;
    }
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(j, "per_k");
    int n = cJSON_GetArraySize(pk);
    if (!cJSON_IsArray(pk) || n == 0) {
        snprintf(err, errlen, "certificate: per_k: missing or empty");
        goto out;
    }
    out->per_k = calloc((size_t)n, sizeof *out->per_k);
    if (!out->per_k) {
        rc = -ENOMEM;
        snprintf(err, errlen, "certificate: out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(pk, i);
        lg_cert_entry *c = &out->per_k[i];
        double k;
        if (rb_json_get_num(e, "workers", &k) || !(k >= 1 && k <= INT_MAX)) {
            snprintf(err, errlen, "certificate: per_k[%d].workers: missing or not in [1, %d]", i,
                     INT_MAX);
            goto out;
        }
        c->workers = (int)k;
        if (out->version == 2) {
            /* safe_rho is the figure; null means nothing was certified */
            const cJSON *sr = cJSON_GetObjectItemCaseSensitive(e, "safe_rho");
            if (!cJSON_IsNumber(sr) && !cJSON_IsNull(sr)) {
                snprintf(err, errlen, "certificate: per_k[%d].safe_rho: missing", i);
                goto out;
            }
            c->safe_rho = cJSON_IsNumber(sr) ? sr->valuedouble : NAN;
            if (rb_json_get_num(e, "safe_rate_per_worker", &c->safe_rate_per_worker))
                c->safe_rate_per_worker = NAN;
        } else {
            if (rb_json_get_num(e, "safe_rate_per_worker", &c->safe_rate_per_worker) ||
                !(c->safe_rate_per_worker >= 0)) {
                snprintf(err, errlen, "certificate: per_k[%d].safe_rate_per_worker: missing or < 0",
                         i);
                goto out;
            }
            if (rb_json_get_num(e, "safe_rho", &c->safe_rho)) c->safe_rho = NAN;
        }
        if (rb_json_get_num(e, "transport_us", &c->transport_us)) c->transport_us = NAN;
        if (rb_json_get_num(e, "safe_total_rate", &c->safe_total_rate))
            c->safe_total_rate = c->safe_rate_per_worker * c->workers;
        out->n++;
    }
    rc = 0;
out:
    if (rc) lg_cert_free(out);
    cJSON_Delete(j);
    return rc;
}

void lg_cert_free(lg_cert *c)
{
    free(c->per_k);
    c->per_k = NULL;
    c->n = 0;
}

void lg_cert_check(const lg_cert *c, const rb_host *h, int k, double rate, lg_cert_decision *d)
{
    memset(d, 0, sizeof *d);
    if (k < 1) k = 1;
    if (h && (strcmp(h->cpu_model, c->cpu_model) != 0 || h->cores_online != c->cores_online)) {
        d->other_host = 1;
        snprintf(d->warning, sizeof d->warning,
                 "certificate is for another host (%s, %d cores); this is %s, %d cores",
                 c->cpu_model, c->cores_online, h->cpu_model, h->cores_online);
    }
    const lg_cert_entry *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const lg_cert_entry *e = &c->per_k[i];
        if (!best || abs(e->workers - k) < abs(best->workers - k) ||
            (abs(e->workers - k) == abs(best->workers - k) && e->workers < best->workers))
            best = e;
    }
    d->entry = best;
    d->exact_k = best && best->workers == k;
    if (best && !d->exact_k) {
        size_t n = strlen(d->warning);
        snprintf(d->warning + n, sizeof d->warning - n,
                 "%scertificate has no entry for %d workers; using the closest, %d workers",
                 n ? "; " : "", k, best->workers);
    }
    if (!best) {
        d->ok = 0;
        snprintf(d->message, sizeof d->message, "certificate has no per_k entries");
        return;
    }
    if (isnan(rate)) {
        d->ok = 1;
        if (isnan(best->safe_rate_per_worker))
            snprintf(d->message, sizeof d->message,
                     "closed loop: no planned rate to compare with the certified safe rho %.3f",
                     best->safe_rho);
        else
            snprintf(d->message, sizeof d->message,
                     "closed loop: no planned rate to compare with the certified %.1f requests/s "
                     "per worker",
                     best->safe_rate_per_worker);
        return;
    }
    double per = rate / k;
    d->ok = per <= best->safe_rate_per_worker;
    snprintf(d->message, sizeof d->message,
             "planned %.1f requests/s per worker (%.1f over %d workers) %s the certified %.1f "
             "requests/s per worker for %d workers (safe rho %.3g)",
             per, rate, k, d->ok ? "is within" : "exceeds", best->safe_rate_per_worker,
             best->workers, best->safe_rho);
}

double lg_cert_predict_rho(const lg_cert *c, int k, double rate, double output_tokens,
                           double events_per_delivery)
{
    if (k < 1 || !(rate >= 0) || !isfinite(rate) || !(output_tokens > 0) ||
        !isfinite(output_tokens) || !(events_per_delivery >= 1) || !isfinite(events_per_delivery))
        return NAN;
    if (!isfinite(c->per_delivery_us) || !isfinite(c->per_event_us)) return NAN;
    double extra = isfinite(c->ref_events_per_request) && isfinite(c->ref_output_len)
                       ? fmax(0.0, c->ref_events_per_request - c->ref_output_len)
                       : 0.0;
    double events = output_tokens + extra;
    double busy_us = events / events_per_delivery * c->per_delivery_us + events * c->per_event_us;
    return rate / k * busy_us * 1e-6;
}

void lg_cert_check_plan(const lg_cert *c, const rb_host *h, int k, double rate,
                        double output_tokens, lg_cert_decision *d)
{
    lg_cert_check(c, h, k, rate, d);
    d->predicted_rho = NAN;
    if (c->version < 2 || !d->entry) return;
    if (k < 1) k = 1;
    double rho = lg_cert_predict_rho(c, k, rate, output_tokens, 1.0);
    const lg_cert_entry *e = d->entry;
    if (isnan(rate)) return; /* closed loop: lg_cert_check said so */
    if (isnan(rho)) {
        if (!isnan(e->safe_rate_per_worker)) return; /* the reference workload's rate decided */
        d->ok = 0;
        snprintf(d->message, sizeof d->message,
                 "the certificate has no cost model to predict this plan's utilisation with, and "
                 "no request rate for %d workers",
                 e->workers);
        return;
    }
    d->predicted_rho = rho;
    d->ok = rho <= e->safe_rho; /* a NAN safe_rho (nothing certified) refuses */
    snprintf(d->message, sizeof d->message,
             "planned %.1f requests/s over %d workers (%.0f tokens each) is predicted at rho %.3f "
             "per worker (%.2f us per delivery + %.2f us per event), %s the certified safe rho "
             "%.3f for %d workers",
             rate, k, output_tokens, rho, c->per_delivery_us, c->per_event_us,
             d->ok ? "within" : "beyond", e->safe_rho, e->workers);
}
