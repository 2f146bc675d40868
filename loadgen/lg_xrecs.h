/* lg_xrecs: the per-request records of a run's JSONL, read back (with
 * lg_record_parse and lg_record_parse_times) for the exports (lg_export.h)
 * and for the result's per-request arrays (lg_run_report.c), and the values
 * the layouts take from a record. */
#ifndef LG_XRECS_H
#define LG_XRECS_H

#include <stddef.h>
#include <stdint.h>

#include "lg_record.h"

/* The per-request records of a JSONL, as lg_record_parse_times reads them.
 * Their token times live in blocks that never move (a record's
 * token_times_us points into one), 8 bytes a time; the records may be
 * sorted. */
typedef struct lg_xtimes lg_xtimes;
typedef struct lg_xrecs {
    lg_record *r;
    size_t n, cap;
    lg_xtimes *times; /* the blocks, newest first */
} lg_xrecs;

/* Which value of a record (seconds; tokens for IN and OUT) the layouts take. */
enum { LG_X_LAT, LG_X_TTFT, LG_X_TPOT, LG_X_NTPOT, LG_X_LAG, LG_X_IN, LG_X_OUT };
/* A record's value: LAT, TTFT and TPOT from the intended send time, NTPOT
 * the latency per output token, LAG the dispatch's lateness; NAN when the
 * record has none (no first token, one token, no dispatch). */
double lg_xrec_value(const lg_record *r, int what);
/* 1 if the request succeeded (class "ok"). */
int lg_xrec_ok(const lg_record *r);

/* Adds one JSONL line (lineno for the message). Returns 0 or -EINVAL with
 * err naming the line and the field, -ENOMEM. */
int lg_xrecs_add_line(lg_xrecs *x, const char *line, size_t len, long lineno, char *err,
                      size_t errlen);
/* Orders the records by their index (the order vLLM's arrays keep). */
void lg_xrecs_sort(lg_xrecs *x);
/* Reads a whole JSONL file, line by line, then sorts if sort (else the
 * records stay in the file's order). Returns 0 or < 0. */
int lg_xrecs_read(lg_xrecs *x, const char *path, int sort, char *err, size_t errlen);
void lg_xrecs_free(lg_xrecs *x);

#endif
