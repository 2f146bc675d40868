/* lg_record: the per-request JSONL record, one line per finished request,
 * written by the workers (lg_worker.c) and read by the exporters
 * (lg_export.c). One formatter, one parser, tested round-trip, so the writer
 * and the readers cannot drift apart. Pure: no I/O, no clocks, no allocation
 * (the formatter runs once per request on the worker's hot path).
 *
 * A record is at most LG_RECORD_MAX bytes, or with --save-token-times
 * lg_record_line_max(cap): the token times are the one part of variable
 * length, bounded by the run's --token-times-cap. */
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
    /* --lora-modules: the model the request carried (at most 127 bytes;
     * NULL: no list, no key). Not owned; written only (a reader skips it). */
    const char *model;
    int has_truth; /* the server reported its own timing (the next three) */
    int64_t queue_ns, prefill_ns, decode_ns;
    /* the wire clock: the capture times of the request's first and last
     * bytes as they left, written when has_sent (not captured, or no wire
     * clock: absent) */
    int has_sent;
    int64_t sent_wire_ns, sent_wire_last_ns;
    /* --save-token-times, written when has_token_times: the arrival times
     * of the request's first content tokens, microseconds from its dispatch
     * (floor of the ns difference), at most the run's cap of them, and the
     * tokens that came after the cap (token_times_dropped: lost to no one,
     * only not listed). Not owned: the formatter reads n_token_times of
     * token_times_us; lg_record_parse_times points it at the caller's
     * buffer, lg_record_parse only counts them (NULL). */
    int has_token_times;
    const int64_t *token_times_us;
    int64_t n_token_times, token_times_dropped;
} lg_record;

/* The longest line lg_record_format can write without token times, newline
 * included. */
#define LG_RECORD_MAX 2048 /* the fields and a model name of 127 bytes escaped */
/* What each token time may add ("-9223372036854775808" and its comma), and
 * the longest line with at most cap of them. */
#define LG_RECORD_TT_ENTRY_MAX 21
static inline size_t lg_record_line_max(int64_t cap)
{
    return LG_RECORD_MAX + (cap > 0 ? (size_t)cap * LG_RECORD_TT_ENTRY_MAX : 0);
}

/* Writes r as one JSON object and a newline into buf (cap bytes), NUL-
 * terminated. Returns the line's length (without the NUL), or -1 if it does
 * not fit (buf is then undefined). */
int lg_record_format(const lg_record *r, char *buf, size_t cap);

/* Parses one line (len bytes, a trailing newline allowed) into out. Every key
 * the formatter always writes is required; the server's three timings are
 * optional, all or none, the departure times both or none, and so are
 * token_times_us (a list of integers) and token_times_dropped (>= 0); other
 * keys with a string, integer, true, false or null value are skipped.
 * Returns 0, or -1 with err naming the problem and the key ("'end_ns'
 * missing or not a number"). The token times are counted
 * (n_token_times), checked, and not kept (token_times_us NULL). */
int lg_record_parse(const char *line, size_t len, lg_record *out, char *err, size_t errlen);

/* The same, keeping the token times in tt[0..tt_cap) (out->token_times_us =
 * tt); more than tt_cap of them is an error. Each takes at least two of the
 * line's bytes, so len / 2 + 1 entries always suffice. */
int lg_record_parse_times(const char *line, size_t len, lg_record *out, int64_t *tt, size_t tt_cap,
                          char *err, size_t errlen);

#endif
