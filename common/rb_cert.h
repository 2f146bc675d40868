/* rb_cert: the host certificate's keys that loadgen relies on, written and
 * read in this one place, so that calibrate (the writer) and loadgen (the
 * reader) cannot drift apart. Pure: cJSON, no I/O.
 *
 * The keys (format version 2, rhobench_certificate: 2): host.cpu_model,
 * host.cores_online, budget_us; cost_model.per_delivery_us and
 * cost_model.per_event_us; reference_workload.events_per_request and
 * reference_workload.random_output_len; per_k[].workers, per_k[].safe_rho
 * (null: nothing certified), per_k[].safe_rate_per_worker,
 * per_k[].safe_total_rate and per_k[].transport_us. Optional, and absent
 * from older certificates (then 0, none and 1: the two-term model):
 * cost_model.per_request_us and cost_model.per_plain_response_us (a
 * non-streamed response's own cost); reference_workload.callbacks_per_request,
 * plain_callbacks_per_request and plain_events_per_request (the calibration's
 * non-streamed probe); per_k[].cost_scale (the busy time of k workers,
 * each, against the one-worker model). Figures that were not
 * measured are written as null. calibrate adds its other keys around them
 * (cal_cert.h lists them); loadgen ignores those.
 *
 * Two versions are read (rhobench_certificate: 1 or absent, or 2):
 *   1: per_k[].safe_rate_per_worker (requests/s per worker of calibrate's own
 *      workload) is the certified figure and required; no cost model;
 *   2: per_k[].safe_rho is the figure, required (a number or null).
 * Any other version is refused with a message naming it.
 *
 * A forged or impossible figure is refused, naming its key and value:
 * safe_rho outside (0, 1]; budget_us not in (0, 1e9]; a cost, a moment
 * (per_k[].mean_service_us, second_moment_us2, r_us) or a rate that is
 * negative or not finite; a cost model whose two costs are both 0; a count
 * not > 0; more than RB_CERT_MAX_ENTRIES entries. The list is read in one
 * walk (linear in its length). */
#ifndef RB_CERT_H
#define RB_CERT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define RB_CERT_VERSION 2
/* The reader's bounds: at most this many per_k entries (a host has at most
 * a few hundred k worth certifying), and a budget at most calibrate's
 * --budget-us bound. */
#define RB_CERT_MAX_ENTRIES 100000
#define RB_CERT_MAX_BUDGET_US 1e9

typedef struct rb_cert_entry {
    int workers;
    double safe_rho;
    double safe_rate_per_worker; /* requests/s per worker (v2: of the reference workload; NAN) */
    double safe_total_rate;      /* absent: safe_rate_per_worker x workers */
    double transport_us;         /* the fitted constant term (NAN when absent) */
    double cost_scale;           /* this k's busy time over the model's (NAN when absent) */
} rb_cert_entry;

typedef struct rb_cert {
    int version; /* read: 1 or 2; written: always RB_CERT_VERSION */
    char cpu_model[160];
    int cores_online;
    /* host.cpu_latency_us: the CPU latency QoS (us) that every counted batch
     * held (loadgen's --cpu-latency-us); NAN: null (not held by all) or
     * absent, cpu_latency_recorded telling which */
    double cpu_latency_us;
    int cpu_latency_recorded;
    double budget_us;     /* NAN when absent */
    rb_cert_entry *per_k; /* read: malloc'd, rb_cert_free; written: the caller's */
    size_t n;
    /* v2: the cost model and the reference workload (NAN when absent) */
    double per_delivery_us, per_event_us;
    double ref_events_per_request; /* events per request of the reference workload */
    double ref_output_len;         /* its content tokens per request */
    /* optional terms and references (NAN when absent) */
    double per_request_us, per_plain_response_us;
    double ref_callbacks_per_request; /* read callbacks per request of the reference workload */
    double plain_callbacks_per_request, plain_events_per_request; /* non-streamed probe */
} rb_cert;

/* Adds the keys above to root (an object): the version first, then host,
 * budget_us, reference_workload, cost_model and per_k, creating the objects
 * (or adding to ones root already has). Returns the per_k array, whose
 * items the caller may add keys to, or NULL on no memory. */
cJSON *rb_cert_put(cJSON *root, const rb_cert *c);

/* Reads the keys of a certificate's text. Returns 0, -EINVAL with err naming
 * the missing or bad key (or the version it does not read), or -ENOMEM. On
 * failure *out holds nothing to free. */
int rb_cert_parse(const char *json, size_t len, rb_cert *out, char *err, size_t errlen);
/* The same on a parsed root. */
int rb_cert_read(const cJSON *root, rb_cert *out, char *err, size_t errlen);
void rb_cert_free(rb_cert *c);

#endif
