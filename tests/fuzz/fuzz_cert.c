/* fuzz_cert: calibrate's certificate reader (lg_cert_parse) on any bytes,
 * held to its return contract only (the format itself may grow): it returns
 * 0 or a negative errno, never reads outside the len bytes it is given (the
 * input is not NUL-terminated), never leaks; a refusal comes with a
 * non-empty, NUL-terminated message that fits errlen however small; an
 * acceptance leaves a NUL-terminated CPU model and an entry array that
 * lg_cert_free releases. The answer does not depend on the message buffer's
 * size, and a second parse of the same bytes gives the same certificate.
 * What it accepts is possible (rb_cert.h): every safe_rho in (0, 1] or not
 * measured, a budget in (0, 1e9], costs and rates finite and >= 0 and the
 * two costs not both 0, at most RB_CERT_MAX_ENTRIES entries. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cert.h"

/* NAN (not measured), or finite and >= 0 */
static int absent_or_nonneg(double v)
{
    return isnan(v) || (isfinite(v) && v >= 0);
}

static void check_accepted(const lg_cert *c)
{
    if (!memchr(c->cpu_model, '\0', sizeof c->cpu_model)) abort();
    if (c->n == 0 || !c->per_k || c->n > RB_CERT_MAX_ENTRIES) abort();
    if (!isnan(c->budget_us) && !(c->budget_us > 0 && c->budget_us <= RB_CERT_MAX_BUDGET_US))
        abort();
    if (!absent_or_nonneg(c->per_delivery_us) || !absent_or_nonneg(c->per_event_us)) abort();
    if (c->per_delivery_us == 0 && c->per_event_us == 0) abort();
    if (!isnan(c->ref_events_per_request) && !(c->ref_events_per_request > 0)) abort();
    if (!absent_or_nonneg(c->per_request_us) || !absent_or_nonneg(c->per_plain_response_us))
        abort();
    const double counts[] = {c->ref_callbacks_per_request, c->plain_callbacks_per_request,
                             c->plain_events_per_request};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (!isnan(counts[i]) && !(counts[i] > 0 && isfinite(counts[i]))) abort();
    for (size_t i = 0; i < c->n; i++) {
        const lg_cert_entry *e = &c->per_k[i];
        if (e->workers < 1) abort();
        if (!isnan(e->safe_rho) && !(e->safe_rho > 0 && e->safe_rho <= 1)) abort();
        if (!absent_or_nonneg(e->safe_rate_per_worker)) abort();
        if (!isnan(e->transport_us) && !isfinite(e->transport_us)) abort();
        if (!isnan(e->cost_scale) && !(e->cost_scale > 0 && isfinite(e->cost_scale))) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    /* an exact-size copy, so ASan sees any read past len */
    char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, in, size);

    lg_cert c, again;
    char err[256];
    memset(err, 0, sizeof err);
    int rc = lg_cert_parse(buf, size, &c, err, sizeof err);
    if (rc > 0 || (rc < 0 && rc != -EINVAL && rc != -ENOMEM)) abort();
    if (rc != 0 && (err[0] == '\0' || !memchr(err, '\0', sizeof err))) abort();
    if (rc == 0) check_accepted(&c);

    /* a tiny message buffer: truncated, still terminated, same answer */
    char small[8];
    memset(small, 'x', sizeof small);
    size_t errlen = 1 + size % (sizeof small - 1);
    int rc2 = lg_cert_parse(buf, size, &again, small, errlen);
    if (rc2 != rc) abort();
    if (rc2 != 0 && (!memchr(small, '\0', errlen) || small[errlen] != 'x')) abort();
    if (rc == 0) {
        check_accepted(&again);
        if (again.n != c.n || strcmp(again.cpu_model, c.cpu_model) != 0 ||
            (c.n && memcmp(again.per_k, c.per_k, c.n * sizeof *c.per_k) != 0))
            abort();
        lg_cert_free(&again);
        lg_cert_free(&c);
    }
    free(buf);
    return 0;
}
