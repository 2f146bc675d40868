/* lg_record: the per-request JSONL record, one line per finished request,
 * written by the workers (lg_worker.c) and read by the exporters
 * (lg_export.c). One formatter, one parser, tested round-trip, so the writer
 * and the readers cannot drift apart. Pure: no I/O, no clocks, no allocation
 * (the formatter runs once per request on the worker's hot path). */
#ifndef LG_RECORD_H
#define LG_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* One record. Times are ns from the run's start; -1: did not happen. */
typedef struct lg_record {
    int64_t index; /* the arrival's index; -1: a dispatch failed before it had one */
    int32_t worker, stage;
    int64_t intended_ns, dispatch_ns, first_byte_ns, first_token_ns, end_ns;
    int64_t input_tokens, output_tokens;
    int32_t status; /* HTTP status; 0: none */
    char cls[24];   /* "ok", "timeout", "http_429", ... (NUL-terminated) */
    int has_truth;  /* the server reported its own timing (the next three) */
    int64_t queue_ns, prefill_ns, decode_ns;
    /* the wire clock: the capture times of the request's first and last
     * bytes as they left, written when has_sent (not captured, or no wire
     * clock: absent) */
    int has_sent;
    int64_t sent_wire_ns, sent_wire_last_ns;
} lg_record;

/* The longest line lg_record_format can write, newline included. */
#define LG_RECORD_MAX 1024

/* Writes r as one JSON object and a newline into buf (cap bytes), NUL-
 * terminated. Returns the line's length (without the NUL), or -1 if it does
 * not fit (buf is then undefined). */
int lg_record_format(const lg_record *r, char *buf, size_t cap);

/* Parses one line (len bytes, a trailing newline allowed) into out. Every key
 * the formatter always writes is required; the server's three timings are
 * optional, all or none; other keys with a string, integer, true, false or
 * null value are skipped. Returns 0, or -1 with err naming the problem and
 * the key ("'end_ns' missing or not a number"). */
int lg_record_parse(const char *line, size_t len, lg_record *out, char *err, size_t errlen);

#endif
