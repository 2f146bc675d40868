/* lg_warmup: vLLM's --num-warmups. Before the run's start instant is fixed,
 * the coordinator sends N copies of the run's first request body (vLLM's
 * bench serve warms up with its first sample), at most --max-concurrency at
 * a time (all at once without a cap, as vLLM), waits for every one (each
 * bounded by --request-timeout), and throws the answers away: nothing of
 * the warm-up enters any figure, and the schedule starts after it. */
#ifndef LG_WARMUP_H
#define LG_WARMUP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"

typedef struct lg_warmup_result {
    int requested;
    int completed; /* an HTTP 2xx answer read to its end */
    int failed;    /* any other end (status, reset, timeout) */
    int stopped;   /* a signal ended the warm-up early */
    double seconds;
    char first_error[160]; /* the first failure, as curl or the status said it */
} lg_warmup_result;

/* Sends o->num_warmups copies of body to url. signals: the coordinator's
 * signal count; a change stops the warm-up (the requests in flight are
 * abandoned). Returns 0, or -ENOMEM / -EIO (curl could not be set up). */
int lg_warmup_run(const lg_opts *o, const char *url, const char *body, size_t len, int stamps,
                  const volatile sig_atomic_t *signals, lg_warmup_result *res);

#endif
