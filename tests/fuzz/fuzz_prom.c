/* fuzz_prom: the Prometheus text parser (lg_prom) on any bytes. It must
 * never crash or leak; an error must name a line; and whatever it accepts
 * must hold: the same text with one more newline parses to the same
 * samples, each histogram's quantiles rise with q and stay within its
 * bounds, and a histogram's difference from itself is empty. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_prom.h"

static void check_hist(const lg_prom *p, const char *bucket_name)
{
    size_t l = strlen(bucket_name);
    if (l < 8 || strcmp(bucket_name + l - 7, "_bucket")) return;
    char fam[512];
    if (l - 7 >= sizeof fam) return;
    memcpy(fam, bucket_name, l - 7);
    fam[l - 7] = '\0';
    lg_prom_hist h, d;
    if (lg_prom_hist_of(p, fam, &h)) return;
    for (int i = 1; i < h.n; i++)
        if (!(h.le[i - 1] < h.le[i])) abort(); /* ascending, distinct */
    double prev = -INFINITY;
    for (int k = 0; k <= 10; k++) {
        double q = lg_prom_quantile(&h, k / 10.0);
        if (isnan(q)) return;
        if (q < prev - 1e-9 * fabs(prev)) abort();
        prev = q;
    }
    lg_prom_hist_delta(&h, &h, &d);
    for (int i = 0; i < d.n; i++)
        if (isfinite(h.cum[i]) && d.cum[i] != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lg_prom a, b;
    char err[200];
    int rc = lg_prom_parse((const char *)data, size, &a, err, sizeof err);
    if (rc == -EINVAL && strncmp(err, "line ", 5)) abort();
    if (rc == 0) {
        char *more = malloc(size + 1);
        if (!more) abort();
        memcpy(more, data, size);
        more[size] = '\n';
        if (lg_prom_parse(more, size + 1, &b, err, sizeof err) || b.n != a.n) abort();
        for (size_t i = 0; i < a.n; i++) {
            if (strcmp(a.s[i].name, b.s[i].name)) abort();
            if (memcmp(&a.s[i].value, &b.s[i].value, sizeof(double))) abort();
        }
        lg_prom_free(&b);
        free(more);
        for (size_t i = 0; i < a.n && i < 64; i++) {
            lg_prom_sum(&a, a.s[i].name);
            check_hist(&a, a.s[i].name);
        }
    }
    lg_prom_free(&a);
    return 0;
}
