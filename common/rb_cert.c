/* rb_cert: see rb_cert.h. The writer and the reader sit side by side: a key
 * renamed in one is renamed in the other, and test_rb_cert round-trips them. */
#include "rb_cert.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_json.h"

/* root[key], an object, added when root has none. */
static cJSON *object_in(cJSON *root, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsObject(o) ? o : cJSON_AddObjectToObject(root, key);
}

cJSON *rb_cert_put(cJSON *root, const rb_cert *c)
{
    cJSON_AddNumberToObject(root, "rhobench_certificate", RB_CERT_VERSION);
    cJSON *host = object_in(root, "host");
    if (!host) return NULL;
    cJSON_AddStringToObject(host, "cpu_model", c->cpu_model);
    cJSON_AddNumberToObject(host, "cores_online", c->cores_online);
    rb_json_put_num(root, "budget_us", c->budget_us);
    cJSON *ref = object_in(root, "reference_workload");
    cJSON *cm = object_in(root, "cost_model");
    cJSON *arr = cJSON_AddArrayToObject(root, "per_k");
    if (!ref || !cm || !arr) return NULL;
    rb_json_put_num(ref, "events_per_request", c->ref_events_per_request);
    rb_json_put_num(ref, "random_output_len", c->ref_output_len);
    rb_json_put_num(cm, "per_delivery_us", c->per_delivery_us);
    rb_json_put_num(cm, "per_event_us", c->per_event_us);
    for (size_t i = 0; i < c->n; i++) {
        const rb_cert_entry *e = &c->per_k[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddNumberToObject(o, "workers", e->workers);
        rb_json_put_num(o, "safe_rho", e->safe_rho);
        rb_json_put_num(o, "safe_rate_per_worker", e->safe_rate_per_worker);
        rb_json_put_num(o, "safe_total_rate", e->safe_total_rate);
        rb_json_put_num(o, "transport_us", e->transport_us);
    }
    return arr;
}

int rb_cert_parse(const char *json, size_t len, rb_cert *out, char *err, size_t errlen)
{
    cJSON *j = cJSON_ParseWithLength(json, len);
    int rc = rb_cert_read(j, out, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int rb_cert_read(const cJSON *j, rb_cert *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->budget_us = NAN;
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "certificate: not a JSON object");
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
        rb_cert_entry *c = &out->per_k[i];
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
    if (rc) rb_cert_free(out);
    return rc;
}

void rb_cert_free(rb_cert *c)
{
    free(c->per_k);
    c->per_k = NULL;
    c->n = 0;
}
