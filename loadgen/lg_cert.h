/* lg_cert: the host certificate written by calibrate, and the rule that
 * refuses a plan beyond it. Pure: parses JSON text and compares numbers. */
#ifndef LG_CERT_H
#define LG_CERT_H

#include <stddef.h>

#include "rb_host.h"

typedef struct lg_cert_entry {
    int workers;
    double safe_rho;
    double safe_rate_per_worker; /* requests/s per worker */
    double safe_total_rate;
    double transport_us; /* the fitted constant term (NAN when absent) */
} lg_cert_entry;

typedef struct lg_cert {
    char cpu_model[160];
    int cores_online;
    double budget_us;     /* NAN when absent */
    lg_cert_entry *per_k; /* malloc'd; lg_cert_free */
    size_t n;
} lg_cert;

/* Returns 0, or -EINVAL with err naming the missing or bad key. */
int lg_cert_parse(const char *json, size_t len, lg_cert *out, char *err, size_t errlen);
void lg_cert_free(lg_cert *c);

typedef struct lg_cert_decision {
    int ok;                     /* the plan is within the certificate */
    const lg_cert_entry *entry; /* the entry used */
    int exact_k;                /* the entry is for this k */
    int other_host;             /* CPU model or core count differ */
    char message[512];          /* why it refuses, or what it used */
    char warning[512];          /* other host, closest k (may be "") */
} lg_cert_decision;

/* k = worker processes (>= 1); rate = planned total requests/s (the highest
 * stage's; INFINITY is beyond any certificate; NAN: closed loop, nothing to
 * compare). */
void lg_cert_check(const lg_cert *c, const rb_host *h, int k, double rate, lg_cert_decision *d);

#endif
