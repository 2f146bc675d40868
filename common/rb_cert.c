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
    rb_json_put_num(host, "cpu_latency_us", c->cpu_latency_us);
    rb_json_put_num(root, "budget_us", c->budget_us);
    cJSON *ref = object_in(root, "reference_workload");
    cJSON *cm = object_in(root, "cost_model");
    cJSON *arr = cJSON_AddArrayToObject(root, "per_k");
    if (!ref || !cm || !arr) return NULL;
    rb_json_put_num(ref, "events_per_request", c->ref_events_per_request);
    rb_json_put_num(ref, "random_output_len", c->ref_output_len);
    rb_json_put_num(cm, "per_delivery_us", c->per_delivery_us);
    rb_json_put_num(cm, "per_event_us", c->per_event_us);
    rb_json_put_num(cm, "per_request_us", c->per_request_us);
    rb_json_put_num(cm, "per_plain_response_us", c->per_plain_response_us);
    rb_json_put_num(ref, "callbacks_per_request", c->ref_callbacks_per_request);
    rb_json_put_num(ref, "plain_callbacks_per_request", c->plain_callbacks_per_request);
    rb_json_put_num(ref, "plain_events_per_request", c->plain_events_per_request);
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
        rb_json_put_num(o, "cost_scale", e->cost_scale);
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

/* A figure at o[key] that the certificate may omit (absent or null: *out
 * stays NAN); one that is there must be a finite number >= lo (> lo when
 * open), and <= hi. Returns 0, or -EINVAL with err naming the key (path is
 * its parent's, "" for the root) and the value. */
static int optional_num(const cJSON *o, const char *path, const char *key, double lo, int open,
                        double hi, double *out, char *err, size_t errlen)
{
    *out = NAN;
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (!v || cJSON_IsNull(v)) return 0;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
        (open ? v->valuedouble > lo : v->valuedouble >= lo) && v->valuedouble <= hi) {
        *out = v->valuedouble;
        return 0;
    }
    char got[48] = "not a number";
    if (cJSON_IsNumber(v)) snprintf(got, sizeof got, "%g", v->valuedouble);
    char range[64];
    if (isfinite(hi))
        snprintf(range, sizeof range, "in %s%g, %g]", open ? "(" : "[", lo, hi);
    else
        snprintf(range, sizeof range, "finite and %s %g", open ? ">" : ">=", lo);
    snprintf(err, errlen, "certificate: %s%s%s: must be %s, got %s", path, path[0] ? "." : "", key,
             range, got);
    return -EINVAL;
}

/* The format version: absent is the first format, which had no version key. */
static int read_version(const cJSON *j, rb_cert *out, char *err, size_t errlen)
{
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "rhobench_certificate");
    out->version = 1;
    if (!ver) return 0;
    if (!cJSON_IsNumber(ver) || (ver->valuedouble != 1 && ver->valuedouble != 2)) {
        char v[32] = "?";
        if (cJSON_IsNumber(ver)) snprintf(v, sizeof v, "%g", ver->valuedouble);
        snprintf(err, errlen,
                 "certificate: rhobench_certificate: format version %s is not one this "
                 "loadgen reads (1 or 2); run this build's calibrate again",
                 v);
        return -EINVAL;
    }
    out->version = (int)ver->valuedouble;
    return 0;
}

/* host.cpu_model and host.cores_online, both required. */
static int read_host(const cJSON *j, rb_cert *out, char *err, size_t errlen)
{
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(j, "host");
    const cJSON *cpu = host ? cJSON_GetObjectItemCaseSensitive(host, "cpu_model") : NULL;
    double cores;
    if (!cJSON_IsString(cpu)) {
        snprintf(err, errlen, "certificate: host.cpu_model: missing or not a string");
        return -EINVAL;
    }
    if (rb_json_get_num(host, "cores_online", &cores) || !(cores >= 0 && cores <= INT_MAX)) {
        snprintf(err, errlen, "certificate: host.cores_online: missing or not a number in [0, %d]",
                 INT_MAX);
        return -EINVAL;
    }
    snprintf(out->cpu_model, sizeof out->cpu_model, "%s", cpu->valuestring);
    out->cores_online = (int)cores;
    /* absent in certificates made before loadgen held a CPU latency QoS */
    out->cpu_latency_recorded = cJSON_GetObjectItemCaseSensitive(host, "cpu_latency_us") != NULL;
    return optional_num(host, "host", "cpu_latency_us", 0, 0, 1e6, &out->cpu_latency_us, err,
                        errlen);
}

/* Format 2's cost model and the reference workload it was measured with. */
static int read_cost_model(const cJSON *j, rb_cert *out, char *err, size_t errlen)
{
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(j, "cost_model");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(j, "reference_workload");
    if (optional_num(cm, "cost_model", "per_delivery_us", 0, 0, INFINITY, &out->per_delivery_us,
                     err, errlen) ||
        optional_num(cm, "cost_model", "per_event_us", 0, 0, INFINITY, &out->per_event_us, err,
                     errlen) ||
        optional_num(ref, "reference_workload", "events_per_request", 0, 1, INFINITY,
                     &out->ref_events_per_request, err, errlen) ||
        optional_num(ref, "reference_workload", "random_output_len", 0, 1, INFINITY,
                     &out->ref_output_len, err, errlen) ||
        optional_num(cm, "cost_model", "per_request_us", 0, 0, INFINITY, &out->per_request_us, err,
                     errlen) ||
        optional_num(cm, "cost_model", "per_plain_response_us", 0, 0, INFINITY,
                     &out->per_plain_response_us, err, errlen) ||
        optional_num(ref, "reference_workload", "callbacks_per_request", 0, 1, INFINITY,
                     &out->ref_callbacks_per_request, err, errlen) ||
        optional_num(ref, "reference_workload", "plain_callbacks_per_request", 0, 1, INFINITY,
                     &out->plain_callbacks_per_request, err, errlen) ||
        optional_num(ref, "reference_workload", "plain_events_per_request", 0, 1, INFINITY,
                     &out->plain_events_per_request, err, errlen))
        return -EINVAL;
    /* A client that costs nothing predicts rho 0 for any plan. */
    if (out->per_delivery_us == 0 && out->per_event_us == 0) {
        snprintf(err, errlen,
                 "certificate: cost_model: per_delivery_us and per_event_us are both 0: a "
                 "client that costs nothing");
        return -EINVAL;
    }
    return 0;
}

/* out->per_k for the list pk of 1 to RB_CERT_MAX_ENTRIES entries: 0, -EINVAL or -ENOMEM. */
static int alloc_per_k(const cJSON *pk, rb_cert *out, char *err, size_t errlen)
{
    size_t n = 0;
    const cJSON *e;
    if (cJSON_IsArray(pk)) {
        cJSON_ArrayForEach(e, pk)
        {
            if (++n > RB_CERT_MAX_ENTRIES) break;
        }
    }
    if (n == 0) {
        snprintf(err, errlen, "certificate: per_k: missing or empty");
        return -EINVAL;
    }
    if (n > RB_CERT_MAX_ENTRIES) {
        snprintf(err, errlen, "certificate: per_k: more than %d entries", RB_CERT_MAX_ENTRIES);
        return -EINVAL;
    }
    out->per_k = calloc(n, sizeof *out->per_k);
    if (!out->per_k) {
        snprintf(err, errlen, "certificate: out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* Entry i of per_k (e) into c: 0, or -EINVAL with err naming the key. */
static int read_entry(const cJSON *e, size_t i, int version, rb_cert_entry *c, char *err,
                      size_t errlen)
{
    int rc = -EINVAL;
    char path[48];
    snprintf(path, sizeof path, "per_k[%zu]", i);
    double k, ignored;
    if (rb_json_get_num(e, "workers", &k) || !(k >= 1 && k <= INT_MAX)) {
        snprintf(err, errlen, "certificate: %s.workers: missing or not in [1, %d]", path, INT_MAX);
        goto out;
    }
    c->workers = (int)k;
    if (version == 2) {
        /* safe_rho is the figure; null means nothing was certified */
        const cJSON *sr = cJSON_GetObjectItemCaseSensitive(e, "safe_rho");
        if (!cJSON_IsNumber(sr) && !cJSON_IsNull(sr)) {
            snprintf(err, errlen, "certificate: %s.safe_rho: missing", path);
            goto out;
        }
    }
    /* a utilisation: (0, 1] */
    if (optional_num(e, path, "safe_rho", 0, 1, 1, &c->safe_rho, err, errlen) ||
        optional_num(e, path, "safe_rate_per_worker", 0, 0, INFINITY, &c->safe_rate_per_worker, err,
                     errlen))
        goto out;
    if (version == 1 && isnan(c->safe_rate_per_worker)) {
        snprintf(err, errlen, "certificate: %s.safe_rate_per_worker: missing or < 0", path);
        goto out;
    }
    /* the fit's constant (an intercept: any finite value; loadgen uses
     * at least 0) and calibrate's moments, which loadgen does not use
     * but which no real client can have negative */
    if (optional_num(e, path, "transport_us", -INFINITY, 0, INFINITY, &c->transport_us, err,
                     errlen) ||
        optional_num(e, path, "safe_total_rate", 0, 0, INFINITY, &c->safe_total_rate, err,
                     errlen) ||
        optional_num(e, path, "cost_scale", 0, 1, INFINITY, &c->cost_scale, err, errlen))
        goto out;
    static const char *const moments[] = {"mean_service_us", "second_moment_us2", "r_us"};
    for (size_t m = 0; m < sizeof moments / sizeof moments[0]; m++)
        if (optional_num(e, path, moments[m], 0, 0, INFINITY, &ignored, err, errlen)) goto out;
    if (isnan(c->safe_total_rate)) c->safe_total_rate = c->safe_rate_per_worker * c->workers;
    rc = 0;
out:
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
    out->ref_output_len = out->per_request_us = out->per_plain_response_us = NAN;
    out->ref_callbacks_per_request = out->plain_callbacks_per_request = NAN;
    out->plain_events_per_request = NAN;
    if (read_version(j, out, err, errlen) || read_host(j, out, err, errlen)) goto out;
    /* The budget as calibrate's --budget-us takes it: a budget of 1e300 us
     * would judge any client OK. */
    if (optional_num(j, "", "budget_us", 0, 1, RB_CERT_MAX_BUDGET_US, &out->budget_us, err, errlen))
        goto out;
    if (out->version == 2 && read_cost_model(j, out, err, errlen)) goto out;
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(j, "per_k");
    if ((rc = alloc_per_k(pk, out, err, errlen)) != 0) goto out;
    /* One walk of the list (an index per entry would walk it again each
     * time: a 125,000-entry file took 90 s). */
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, pk)
    {
        if ((rc = read_entry(e, i, out->version, &out->per_k[i], err, errlen)) != 0) goto out;
        out->n = ++i;
    }
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
