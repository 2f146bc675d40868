/* cal_sweep: the offered-rate sweep of one worker count, as pure rules: when a
 * step counts as saturated, and which rate comes next. No I/O.
 *
 * The sweep is geometric, with the ratio chosen from what the last step
 * measured: the busy time per request b = rho_k k / achieved_rate gives the rate
 * that would reach the next utilisation target (rate = target k / b), or, when
 * the secant through the last two steps reaches the target at a higher rate,
 * that rate (at most 25% higher), and that ratio is clamped to
 * [min_growth, max_growth]. At low utilisation (the client's
 * own cost tiny, rho barely moving) the sweep is thus a plain geometric one at
 * max_growth; near the knee it slows down to place points where PK's curve
 * bends. The targets are in 1 - rho roughly geometric, so the points are about
 * evenly spread on the 1/(1 - rho) scale that the delay follows. */
#ifndef CAL_SWEEP_H
#define CAL_SWEEP_H

#include <stddef.h>

#include "cal_step.h"

#define CAL_MAX_TARGETS 16

typedef struct cal_sweep_cfg {
    double min_achieved_ratio; /* saturated below this achieved/offered (0.95) */
    double lag_bound_ms;       /* saturated when schedule lag p99 passes it */
    double max_failed_ratio;   /* saturated when failed/(completed+failed) passes it */
    double stop_rho;           /* no step after one at or above this mean rho */
    double retry_below_rho;    /* below this rho, lag alone is not a backlog of the client */
    int max_steps;
    double max_rate;                     /* requests/s, all workers */
    double min_growth;                   /* rate ratio between steps, at least */
    double max_growth;                   /* and at most */
    double rho_targets[CAL_MAX_TARGETS]; /* ascending */
    int n_targets;
} cal_sweep_cfg;

/* The defaults for a run mode: 0 quick, 1 default, 2 thorough. */
void cal_sweep_defaults(cal_sweep_cfg *c, int mode);

/* 1 if the step is saturated (why says by which rule, e.g. "achieved 812.0/s
 * < 95% of 1000.0/s"), else 0. The achieved-rate rule allows for the Poisson
 * noise of the offered count N = request_rate * send_window: it fires below
 * (min_achieved_ratio - 3 sqrt(N)/N) of the offered rate (no allowance when
 * the window is unknown). The lag rule fires when the lag p99 passes
 * lag_bound_ms, the mean lag is above a tenth of it (or unknown), and either
 * the client is busy (rho_mean >= retry_below_rho) or the median lag is above
 * a tenth of the bound too: a backlog lifts the whole distribution, while a
 * preemption of the client by another process lifts only the top (in a short
 * step p99 is the maximum, and one late request moves the mean). */
int cal_sweep_saturated(const cal_sweep_cfg *c, const cal_step *s, char *why, size_t whylen);

/* 1 if the step looks bad and must be measured again before it counts (a
 * single bad step is more likely another process stealing the CPUs for a
 * moment than the client's own limit): it is saturated, or its mean delay
 * minus transport_us (the constant the client does not cause; the lowest
 * delay measured so far serves during the sweep) is over budget_us. */
int cal_sweep_looks_bad(const cal_step *s, double transport_us, double budget_us);

/* The offered rates (requests/s) of the self-test's baseline steps, which
 * repeat steps of worker count k without the injected cost: the rates of the
 * unsaturated steps of k whose mean rho lies in [rho_lo, rho_hi] (the ones
 * the self-test judges), or, when fewer than two qualify, of the fastest
 * unsaturated ones. The same rates give the same per-request work (dispatch,
 * connection, parsing) in both runs, so the difference of their busy times
 * per event is the injected cost alone. At most max, ascending. Returns the
 * count. */
int cal_sweep_baseline_rates(const cal_step *steps, int n, int k, double rho_lo, double rho_hi,
                             double *out, int max);

/* After the sweep found its limit (a saturated step, or one over budget):
 * the rate halfway (geometric mean) between the fastest step within budget
 * and the slowest bad one above it, where the certified value is decided.
 * A step is bad when its delay with its error bar err[i] (err NULL: none)
 * is over budget_us net of transport_us, or it saturated; with budget_us
 * infinite (the self-test), only saturation counts. A bad step below a step
 * within budget steers nothing unless it caps in the certification rule
 * (saturated, or confirmed over budget by its mean): the rule refutes it.
 * Measured (neighbour-6f08df4): a stalled first batch at 20 requests/s, over
 * budget below levels within it, sent a quick k=1 sweep to 5 requests/s where
 * the crossing lay between rho 0.18 and 0.55.
 * Bisecting there, rather than certifying the level below a bad one, keeps
 * the certificate off the level grid: with levels 4x apart, one bad level
 * would otherwise cost a quarter of the rate. 0 when there is no bad step
 * or the two are within 8% of each other; a quarter of the slowest bad
 * rate when no step was within budget. */
double cal_sweep_fill_rate(const cal_step *steps, const double *err, int n, double transport_us,
                           double budget_us);

/* Retries of disturbed batches over a whole run. A batch during which other
 * processes took more than CAL_HOST_OTHER_MAX of the host's CPU time is
 * measured again, at most twice a batch and nb times a level. When
 * CAL_RETRY_FUTILE retries in a row were disturbed as well, the other work is
 * steady (a neighbour that does not leave): retrying spends the time budget
 * that the levels near the budget's crossing need (measured: beside a
 * half-core neighbour, 20 of 26 batches were retried and k=2 ran out of time
 * after 3 levels, at rho 0.09), so the run stops retrying, and its batches
 * are kept and counted as disturbed. A batch that is not disturbed ends the
 * streak, and retries resume. */
#define CAL_RETRY_FUTILE 3

typedef struct cal_retry {
    int futile;  /* retries in a row that were disturbed again */
    int stopped; /* 1 while retrying is given up */
    int stops;   /* how many times it was given up in the run */
} cal_retry;

/* The decision for a batch just measured: disturbed (other processes took
 * more than the threshold), tries (0 for a batch's first measurement, then
 * its retries so far), level_retries (the level's retries so far) and nb (the
 * level's batches). Updates the run's streak. 1: measure it again. */
int cal_retry_again(cal_retry *r, int disturbed, int tries, int level_retries, int nb);

/* 1 when a sweep that has made `made` levels must stop for time: at least
 * min_levels made, and the next level (per_level_ns, as the sweep's levels
 * took) would end after deadline_ns. Except for the first fill level: once a
 * limit is found (limit), the first level bisecting between it and the
 * fastest level within budget (fills == 0 so far) decides where the budget
 * is crossed, and it may end after the deadline. Measured: a quiet quick
 * run's k=2 found its limit at rho 0.33-0.38, with the level below at rho
 * 0.10, and stopped for time; the certificate, interpolated across that
 * bracket, was 0.165 where the other four runs certified 0.28-0.31. */
int cal_sweep_out_of_time(int made, int min_levels, long long now_ns, long long per_level_ns,
                          long long deadline_ns, int limit, int fills);

/* 1 when level `level` of view[0..n) (each level's means, err[i] its error
 * bar: cal_level_pooled_err_us, 0 when not known), just measured and bad by
 * the rule's own test, must be measured again before it counts; 0 when it
 * need not be. A level over budget is always measured again (one host
 * hiccup never decides a cap). A saturated level is not when it lies where
 * the sweep expected its limit: its own mean delay over budget, offered
 * above a level that kept up within budget (cal_rule_within with that
 * level's bar against transport_us and budget_us), and at or below none. Its repeat would be
 * another saturated level, and the time goes instead to the levels between it and the one within,
 * where the crossing is (cal_sweep_fill_rate): an unconfirmed saturated level caps nothing in the
 * certificate (cal_rule_certify), it only steers the bisection. Measured (bench-afd8bbb): three of
 * five quick k=2 sweeps spent one of their seven levels on a saturated repeat (3,642 to 6,285 us
 * against a 100 us budget), and certified by interpolating across one fill level; the other two ran
 * out of k=2's time before any level above rho 0.29. A saturated level with no level within below
 * it (the one-batch probe, called saturated by one late wake-up at rho 0.03: bench-6b48c60) or with
 * one at or above its rate is measured again, and so is one whose delay is within budget: measured
 * (a quick k=1 sweep on a host other work had just disturbed), a level at rho 0.42 "saturated" with
 * a delay of 40 us, not measured again, steered the bisection below it and
 * the certificate to 0.52 where the others read 0.60-0.64. */
int cal_sweep_repeat_bad(const cal_step *view, int n, const double *err, int level,
                         double transport_us, double budget_us);

/* After level `level` of worker count k looked bad and was measured again
 * at its rate as level `repeat` (steps[0..n) holding both): the repeat's
 * batches join the level's (their level set to `level`, all marked
 * repeated), so both measurements count, pooled, and neither overrules the
 * other. The pooled level is then judged by the rule's own test, its mean
 * delay with the bar a repeat confirms with (cal_level_confirm_err_us)
 * against transport_us and budget_us: bad (over budget, or saturated with
 * more than half its batches), every batch is marked confirmed and 1 is
 * returned; else 0, and it counts as any level does. The repeats are
 * symmetric: a first measurement over budget and a repeat within (or the
 * reverse) give the same pool. Until this commit a repeat within budget
 * marked the first measurement an outlier and dropped it, so a level near
 * the budget had two chances to pass and one to fail: measured
 * (bench-afd8bbb), two of ten quick sweeps dropped a level at 130 and 231
 * us whose repeat read 80 and 71. */
int cal_sweep_pool_repeat(cal_step *steps, int n, int k, int level, int repeat, double transport_us,
                          double budget_us);

/* The next offered rate (requests/s, all workers) after steps[0..n) of this
 * sweep, or 0 when the sweep is over (a saturated step, stop_rho reached,
 * max_steps or max_rate used up, no target left). n = 0 gives start_rate. */
double cal_sweep_next_rate(const cal_sweep_cfg *c, const cal_step *steps, int n, double start_rate);

#endif
