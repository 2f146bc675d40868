/* lg_cert: the refuse/accept rule of lg_cert.h; the certificate itself is
 * read by common/rb_cert.c, beside its writer. */
#include "lg_cert.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_file.h"

int lg_cert_parse(const char *json, size_t len, lg_cert *out, char *err, size_t errlen)
{
    return rb_cert_parse(json, len, out, err, errlen);
}

void lg_cert_free(lg_cert *c)
{
    rb_cert_free(c);
}

/* The entry for k, else the closest k (the lower of two as close); NULL when none. */
static const lg_cert_entry *closest_entry(const lg_cert *c, int k)
{
    const lg_cert_entry *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const lg_cert_entry *e = &c->per_k[i];
        if (!best || abs(e->workers - k) < abs(best->workers - k) ||
            (abs(e->workers - k) == abs(best->workers - k) && e->workers < best->workers))
            best = e;
    }
    return best;
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
    const lg_cert_entry *best = closest_entry(c, k);
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

/* Busy time per request (us) of workload w under c's terms; NAN when none. */
static double busy_per_request_us(const lg_cert *c, const lg_cert_workload *w)
{
    double a_req = isfinite(c->per_request_us) ? c->per_request_us : 0;
    if (w->plain && isfinite(c->plain_callbacks_per_request) &&
        isfinite(c->plain_events_per_request)) {
        double a_plain = isfinite(c->per_plain_response_us) ? c->per_plain_response_us : 0;
        return a_req + a_plain + c->plain_callbacks_per_request * c->per_delivery_us +
               c->plain_events_per_request * c->per_event_us;
    }
    double tokens = w->output_tokens, epd = w->events_per_delivery;
    if (!(tokens > 0) || !isfinite(tokens) || !(epd >= 1) || !isfinite(epd)) return NAN;
    int ref = isfinite(c->ref_events_per_request) && isfinite(c->ref_output_len);
    double extra = ref ? fmax(0.0, c->ref_events_per_request - c->ref_output_len) : 0.0;
    double headers = ref && isfinite(c->ref_callbacks_per_request)
                         ? c->ref_callbacks_per_request - c->ref_events_per_request
                         : 0.0;
    double events = tokens + extra;
    double deliveries = fmax(1.0, events / epd + headers);
    return a_req + deliveries * c->per_delivery_us + events * c->per_event_us;
}

double lg_cert_busy_us(const lg_cert *c, int k, const lg_cert_workload *w)
{
    if (k < 1 || !w || !isfinite(c->per_delivery_us) || !isfinite(c->per_event_us)) return NAN;
    const lg_cert_entry *e = closest_entry(c, k);
    double scale = e && isfinite(e->cost_scale) ? e->cost_scale : 1.0;
    return busy_per_request_us(c, w) * scale;
}

double lg_cert_predict_rho(const lg_cert *c, int k, double rate, const lg_cert_workload *w)
{
    if (k < 1 || !(rate >= 0) || !isfinite(rate)) return NAN;
    return rate / k * lg_cert_busy_us(c, k, w) * 1e-6;
}

void lg_cert_check_plan(const lg_cert *c, const rb_host *h, int k, double rate,
                        const lg_cert_workload *w, lg_cert_decision *d)
{
    lg_cert_check(c, h, k, rate, d);
    d->predicted_rho = NAN;
    if (c->version < 2 || !d->entry) return;
    if (k < 1) k = 1;
    double rho = lg_cert_predict_rho(c, k, rate, w);
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
    char what[48];
    if (w->plain)
        snprintf(what, sizeof what, "non-streamed");
    else
        snprintf(what, sizeof what, "%.0f tokens each", w->output_tokens);
    snprintf(d->message, sizeof d->message,
             "planned %.1f requests/s over %d workers (%s) is predicted at rho %.3f per worker "
             "(%.2f us per request + %.2f us per delivery + %.2f us per event, x%.2f for %d "
             "workers), %s the certified safe rho %.3f for %d workers",
             rate, k, what, rho, isfinite(c->per_request_us) ? c->per_request_us : 0,
             c->per_delivery_us, c->per_event_us, isfinite(e->cost_scale) ? e->cost_scale : 1.0,
             e->workers, d->ok ? "within" : "beyond", e->safe_rho, e->workers);
}

int lg_cert_load(const char *path, lg_cert *out, char *err, size_t errlen)
{
    char *txt = NULL, why[256];
    size_t len = 0;
    int rc = rb_read_file(path, 1 << 22, &txt, &len);
    if (rc) {
        snprintf(err, errlen, "--certificate: cannot read '%s': %s", path, rb_file_strerror(rc));
        return rc;
    }
    rc = lg_cert_parse(txt, len, out, why, sizeof why);
    free(txt);
    if (rc) snprintf(err, errlen, "--certificate %s: %s", path, why);
    return rc;
}

void lg_cert_note_cpu_latency(const lg_cert *c, int run_cpu_latency_us, lg_cert_decision *d)
{
    if (!c->cpu_latency_recorded || isnan(c->cpu_latency_us)) return;
    if (run_cpu_latency_us >= 0 && run_cpu_latency_us <= c->cpu_latency_us) return;
    char run[48];
    if (run_cpu_latency_us < 0)
        snprintf(run, sizeof run, "holds none (--cpu-latency-us off)");
    else
        snprintf(run, sizeof run, "asks %d us", run_cpu_latency_us);
    size_t n = strlen(d->warning);
    snprintf(d->warning + n, sizeof d->warning - n,
             "%sthe certificate was measured with idle CPUs held to wake within %.0f us; this run "
             "%s: its workers may wake later and be busier than certified",
             n ? "; " : "", c->cpu_latency_us, run);
}
