/* rb_units: see rb_units.h. */
#include "rb_units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* strtod and strtoll skip leading blanks, and strtoull takes " -1" as
 * 2^64 - 1: a value that does not start with its first character is
 * refused (" 5s", " -1"). */
static int blank_start(const char *s)
{
    return isspace((unsigned char)*s);
}

int rb_parse_double(const char *s, double min, double max, double *out)
{
    if (!s || !*s || blank_start(s)) return -EINVAL;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE) return -EINVAL;
    if (isnan(v)) return -EINVAL;
    if (isinf(v) && !(isinf(max) && v > 0)) return -ERANGE;
    if (v < min || v > max) return -ERANGE;
    *out = v;
    return 0;
}

int rb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s || !*s || blank_start(s)) return -EINVAL;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0') return -EINVAL;
    if (errno == ERANGE || v < min || v > max) return -ERANGE;
    *out = (int64_t)v;
    return 0;
}

/* plain_scale: the ns of one unit of a plain number. */
static int parse_duration(const char *s, double plain_scale, int64_t *out_ns)
{
    if (!s || !*s || blank_start(s)) return -EINVAL;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v)) return -EINVAL;
    if (v < 0) return -ERANGE;
    double scale;
    if (*end == '\0')
        scale = plain_scale;
    else if (strcmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcmp(end, "ns") == 0)
        scale = 1.0;
    else if (strcmp(end, "us") == 0)
        scale = 1e3;
    else if (strcmp(end, "s") == 0)
        scale = 1e9;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        scale = 60e9;
    else if (strcmp(end, "h") == 0)
        scale = 3600e9;
    else
        return -EINVAL;
    double ns = v * scale;
    if (ns > 9.2e18) return -ERANGE;
    *out_ns = (int64_t)llround(ns);
    return 0;
}

int rb_parse_duration_ns(const char *s, int64_t *out_ns)
{
    return parse_duration(s, 1e6, out_ns);
}

int rb_parse_seconds_ns(const char *s, int64_t *out_ns)
{
    return parse_duration(s, 1e9, out_ns);
}

int rb_parse_size(const char *s, uint64_t *out_bytes)
{
    if (!s || !*s || *s == '-' || blank_start(s)) return -EINVAL;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE) return -EINVAL;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end == 'i' || *end == 'B' || *end == 'b') { /* "KiB", "KB" */
        if (*end == 'i') end++;
        if (*end == 'B' || *end == 'b') end++;
    }
    if (*end != '\0') return -EINVAL;
    if (shift && v > (UINT64_MAX >> shift)) return -ERANGE;
    *out_bytes = (uint64_t)v << shift;
    return 0;
}
