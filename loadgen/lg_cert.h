/* lg_cert: the host certificate written by calibrate, and the rule that
 * refuses a plan beyond it. Pure but for lg_cert_load, which reads the file:
 * parses JSON text (with common/rb_cert, the format's one reader and writer)
 * and compares numbers.
 *
 * Two format versions are read (rhobench_certificate: 1 or absent, or 2):
 *   1: the certified figure is a request rate per worker of calibrate's own
 *      workload, and a plan is compared by its request rate per worker;
 *   2: the certified figure is safe_rho, a per-worker utilisation, with the
 *      client's cost model (rho = deliveries/s x per_delivery_us + events/s
 *      x per_event_us) and the reference workload the request rates hold
 *      for. A plan is compared by its PREDICTED rho (lg_cert_predict_rho)
 *      when its token count is known, else by its request rate against the
 *      reference workload's.
 * Any other version is refused with a message naming it. */
#ifndef LG_CERT_H
#define LG_CERT_H

#include <stddef.h>

#include "rb_cert.h"
#include "rb_host.h"

/* The certificate as common/rb_cert reads it (and calibrate writes it). */
typedef rb_cert_entry lg_cert_entry;
typedef rb_cert lg_cert;

/* Returns 0, or -EINVAL with err naming the missing or bad key (or the
 * version it does not read). */
int lg_cert_parse(const char *json, size_t len, lg_cert *out, char *err, size_t errlen);
void lg_cert_free(lg_cert *c);
/* Reads the file at path (at most 4 MiB) and parses it. Returns 0, or a
 * negative errno with err worded for the user: "--certificate: cannot read
 * 'PATH': WHY" or "--certificate PATH: WHAT". */
int lg_cert_load(const char *path, lg_cert *out, char *err, size_t errlen);

/* A plan's workload as the cost model sees it. */
typedef struct lg_cert_workload {
    double output_tokens;       /* content tokens per request (NAN: not known) */
    double events_per_delivery; /* events a read carries: 1 (paced tokens) is the costliest */
    int plain;                  /* non-streamed responses */
} lg_cert_workload;

/* The utilisation per worker a plan is predicted to reach: rate requests/s
 * in all over k workers, each request costing (per_request_us, 0 when the
 * certificate has none)
 *   streamed: per_request_us + deliveries x per_delivery_us + events x
 *             per_event_us, with events = output_tokens + the events the
 *             reference workload carried beyond its tokens (the usage
 *             chunk, [DONE]) and deliveries = events / events_per_delivery
 *             + the reference's read callbacks beyond its events (the
 *             headers; negative when its last events shared a read), at
 *             least 1;
 *   plain, with the certificate's non-streamed references:
 *             per_request_us + per_plain_response_us + its callbacks x
 *             per_delivery_us + its events x per_event_us, whatever the
 *             tokens (a plain response is one body); without them, as
 *             streamed;
 * times the cost_scale of the certificate's entry for k (the closest k's,
 * as lg_cert_check picks; 1 when it has none):
 *     rho = rate / k x busy x scale x 1e-6.
 * NAN when the certificate has no cost model, or an input is not finite or
 * not positive (a streamed plan's tokens included). */
double lg_cert_predict_rho(const lg_cert *c, int k, double rate, const lg_cert_workload *w);

/* The busy time per request (us) of one of k workers under that model,
 * scale included: lg_cert_predict_rho = rate / k x this x 1e-6. NAN as it. */
double lg_cert_busy_us(const lg_cert *c, int k, const lg_cert_workload *w);

/* loadgen's exit code when a certificate refuses the plan (without --force):
 * the usage was valid, the host is not certified for it (2 stays for bad
 * usage, an unreadable or impossible certificate included). */
#define LG_EXIT_CERT_REFUSED 3

typedef struct lg_cert_decision {
    int ok;                     /* the plan is within the certificate */
    const lg_cert_entry *entry; /* the entry used */
    int exact_k;                /* the entry is for this k */
    int other_host;             /* CPU model or core count differ */
    double predicted_rho;       /* the plan's predicted rho (NAN: compared by rate) */
    char message[512];          /* why it refuses, or what it used */
    char warning[512];          /* other host, closest k (may be "") */
} lg_cert_decision;

/* k = worker processes (>= 1); rate = planned total requests/s (the highest
 * stage's; INFINITY is beyond any certificate; NAN: closed loop, nothing to
 * compare). Compares request rates per worker (version 1's rule). */
void lg_cert_check(const lg_cert *c, const rb_host *h, int k, double rate, lg_cert_decision *d);

/* The same, with the plan's workload: with a version 2 certificate and a
 * workload it can predict, the plan's predicted rho (lg_cert_predict_rho)
 * against safe_rho; otherwise lg_cert_check. */
void lg_cert_check_plan(const lg_cert *c, const rb_host *h, int k, double rate,
                        const lg_cert_workload *w, lg_cert_decision *d);

/* Adds to d->warning when the run holds idle CPUs' wake-up latency to less
 * than the certificate measured with (run_cpu_latency_us: --cpu-latency-us,
 * -1 off): a client whose CPUs halt when idle wakes later and is busier
 * than certified. Nothing when the certificate did not record it, or held
 * nothing, or the run asks as much or more. */
void lg_cert_note_cpu_latency(const lg_cert *c, int run_cpu_latency_us, lg_cert_decision *d);

#endif
