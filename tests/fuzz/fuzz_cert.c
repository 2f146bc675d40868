/* fuzz_cert: calibrate's certificate reader (lg_cert_parse) on any bytes,
 * held to its return contract only (the format itself may grow): it returns
 * 0 or a negative errno, never reads outside the len bytes it is given (the
 * input is not NUL-terminated), never leaks; a refusal comes with a
 * non-empty, NUL-terminated message that fits errlen however small; an
 * acceptance leaves a NUL-terminated CPU model and an entry array that
 * lg_cert_free releases. The answer does not depend on the message buffer's
 * size, and a second parse of the same bytes gives the same certificate. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cert.h"

static void check_accepted(const lg_cert *c)
{
    if (!memchr(c->cpu_model, '\0', sizeof c->cpu_model)) abort();
    if (c->n > 0 && !c->per_k) abort();
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
