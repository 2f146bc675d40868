/* lg_sweep: a sweep's stage rates from its bounds, as a pure function. The
 * option parser (lg_cli_finish) checks the flags and hands their values
 * here; the plan, the dry run and the knee judge read the stages it made.
 * No I/O, no state. */
#ifndef LG_SWEEP_H
#define LG_SWEEP_H

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

#endif
