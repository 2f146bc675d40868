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
