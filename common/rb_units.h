/* rb_units: parsing of the units people type on command lines and in config
 * files ("500us", "20ms", "2s", "1M", "64k"). Pure: no I/O, no globals.
 * Every function returns 0 on success or -EINVAL/-ERANGE and leaves *out
 * untouched on failure, so callers can name the flag in their own message. */
#ifndef RB_UNITS_H
#define RB_UNITS_H

#include <stdint.h>

/* A duration: "<number>[ns|us|ms|s|m|min|h]". A plain number is milliseconds
 * (simserver's latency flags, after llm-d-inference-sim). Fractions are
 * accepted ("1.5ms"). Negative values are rejected. */
int rb_parse_duration_ns(const char *s, int64_t *out_ns);

/* The same, but a plain number is seconds: the rule of every run length
 * (a run's duration, stage lengths, pauses, timeouts), as in wrk and
 * Inference Perf. "10" is 10 s; "500ms" is still 500 ms. */
int rb_parse_seconds_ns(const char *s, int64_t *out_ns);

/* A byte size: "<integer>[k|K|m|M|g|G]" (powers of 1024). Plain = bytes. */
int rb_parse_size(const char *s, uint64_t *out_bytes);

/* A whole number in [min, max], the whole string. */
int rb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* A finite double in [min, max], the whole string. "inf" is accepted only
 * when max is INFINITY. */
int rb_parse_double(const char *s, double min, double max, double *out);

#endif
