/* lg_sweep: a sweep's stage rates from its bounds, as a pure function. The
 * option parser (lg_cli_finish) checks the flags and hands their values
 * here; the plan, the dry run and the knee judge read the stages it made.
 * No I/O, no state. */
#ifndef LG_SWEEP_H
#define LG_SWEEP_H

#include <stdint.h>

typedef enum { LG_SWEEP_NONE, LG_SWEEP_LINEAR, LG_SWEEP_GEOMETRIC } lg_sweep_kind;

/* The first rate of a geometric sweep of n stages up to max_rate: min_rate
 * when it is given (> 0), else max_rate / 2^(n-1) (each stage doubles). */
double lg_sweep_min_rate(int n, double min_rate, double max_rate);

/* The n stage rates (requests/s) of a sweep up to max_rate, into rates[0..n):
 *   linear: max_rate (i + 1) / n, evenly up from max_rate / n;
 *   geometric: lo (max_rate / lo)^(i / (n - 1)), from lo to max_rate with a
 *   constant ratio (n == 1: max_rate alone).
 * Both end at max_rate (to the last bit's rounding). 0, or -1 when n < 1, kind is neither, or a
 * bound is not a finite rate > 0 with lo <= max_rate (rates untouched). */
int lg_sweep_rates(lg_sweep_kind kind, int n, double lo, double max_rate, double *rates);

/* Inference Perf's sweep (its loadgen/load_generator.py, `preprocess`,
 * read at 7de5ef2): a saturation probe sends num_requests in
 * LG_PROBE_SEND_S seconds, samples the requests in flight every
 * LG_PROBE_SAMPLE_NS, and takes a percentile of the burn-down rates (the
 * samples' fall per second, where the count fell) before its timeout as the
 * saturation rate; the stages are then placed from 1 request/s up to it. */
#define LG_PROBE_SEND_S 5
#define LG_PROBE_SAMPLE_NS 500000000LL

/* The burn-down rates of n samples (t_ns[i], in_flight[i]), in time order:
 * for each consecutive pair both taken before t_end_ns whose count fell,
 * the fall over the pair's interval, in requests/s, into rates[0..n-1).
 * Returns how many. */
int lg_sweep_burn_rates(const int64_t *t_ns, const int64_t *in_flight, int n, int64_t t_end_ns,
                        double *rates);

/* The p-th percentile (p in [0, 100]) of x[0..n), interpolated linearly
 * between the order statistics (numpy's default: rank (n - 1) p / 100);
 * sorts x. NAN when n < 1 or p is outside [0, 100]. */
double lg_sweep_percentile(double *x, int n, double p);

/* Inference Perf's n stage rates up to the saturation rate s, each rounded
 * to 0.01 requests/s as it rounds them:
 *   linear: evenly from 1 to s (n == 1: 1 alone);
 *   geometric: 1 + s - g_i, g the n rates from s down to 1 with a constant
 *   ratio, so the stages crowd towards s (n == 1: 1 alone).
 * 0, or -1 when n < 1, kind is neither, s is not a finite rate > 0, or a
 * rate rounds to 0 (rates untouched then). */
int lg_sweep_probe_rates(lg_sweep_kind kind, int n, double s, double *rates);

#endif
