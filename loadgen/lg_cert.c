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

static int get_num(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) return -1;
    *out = v->valuedouble;
    return 0;
}

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
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(j, "host");
    const cJSON *cpu = host ? cJSON_GetObjectItemCaseSensitive(host, "cpu_model") : NULL;
    double cores;
    if (!cJSON_IsString(cpu)) {
        snprintf(err, errlen, "certificate: host.cpu_model: missing or not a string");
        goto out;
    }
    if (get_num(host, "cores_online", &cores) || !(cores >= 0 && cores <= INT_MAX)) {
        snprintf(err, errlen, "certificate: host.cores_online: missing or not a number in [0, %d]",
                 INT_MAX);
        goto out;
    }
    snprintf(out->cpu_model, sizeof out->cpu_model, "%s", cpu->valuestring);
    out->cores_online = (int)cores;
    get_num(j, "budget_us", &out->budget_us);
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
        if (get_num(e, "workers", &k) || !(k >= 1 && k <= INT_MAX)) {
            snprintf(err, errlen, "certificate: per_k[%d].workers: missing or not in [1, %d]", i,
                     INT_MAX);
            goto out;
        }
        c->workers = (int)k;
        if (get_num(e, "safe_rate_per_worker", &c->safe_rate_per_worker) ||
            !(c->safe_rate_per_worker >= 0)) {
            snprintf(err, errlen, "certificate: per_k[%d].safe_rate_per_worker: missing or < 0", i);
            goto out;
        }
        if (get_num(e, "safe_rho", &c->safe_rho)) c->safe_rho = NAN;
        if (get_num(e, "transport_us", &c->transport_us)) c->transport_us = NAN;
        if (get_num(e, "safe_total_rate", &c->safe_total_rate))
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
        snprintf(
            d->message, sizeof d->message,
            "closed loop: no planned rate to compare with the certified %.1f requests/s per worker",
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
