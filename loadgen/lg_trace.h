/* lg_trace: the Azure-style trace CSV (arrival times and token counts to
 * replay through the schedule, lg_sched.h's lg_trace_row). Parsed from
 * memory; only lg_trace_load reads a file. */
#ifndef LG_TRACE_H
#define LG_TRACE_H

#include <stddef.h>

#include "lg_sched.h"

/* A trace in the form of the public Azure LLM inference traces: a CSV with a
 * header naming TIMESTAMP, ContextTokens, GeneratedTokens (case-insensitive;
 * TIMESTAMP either seconds as a number or "YYYY-MM-DD HH:MM:SS[.ffffff]").
 * Rows come out sorted by time (ties in file order), times relative to the
 * first; token counts of 0 become 1 (a request sends and asks for at least
 * one token). *out is malloc'd (caller frees). */
int lg_trace_parse(const char *csv, size_t len, lg_trace_row **out, size_t *n, char *err,
                   size_t errlen);
int lg_trace_load(const char *path, lg_trace_row **out, size_t *n, char *err, size_t errlen);

#endif
