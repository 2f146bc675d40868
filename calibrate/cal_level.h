/* cal_level: the load levels of a sweep. Each level of a worker count k is
 * measured in a few short batches (one loadgen run each, cal_step.level
 * naming the level), so each level has its own error bar. Pure. No I/O.
 *
 * A level's figures are the means over its batches that did not saturate
 * (a saturated batch is no measurement: one stall of the host in one batch
 * does not move its level), or over all of them when every batch saturated;
 * n counts the batches in the means. delay_err_us is the half-width of the
 * 95% t interval of the mean delay over those batches (NAN with one; cal_fit
 * replaces it by the pooled one). A level is saturated when more than half
 * of its batches were. confirmed / repeated come from the batches
 * (the sweep pools a repeat's batches into its level, marks them repeated,
 * and marks them confirmed when the pool is bad: cal_sweep_pool_repeat). */
#ifndef CAL_LEVEL_H
#define CAL_LEVEL_H

#include "cal_step.h"

#define CAL_MAX_LEVELS 64

typedef struct cal_level {
    int workers, level;
    int n, n_saturated; /* batches in the means, and how many of all saturated */
    double request_rate;
    double rho, rho_sd;
    double delay_us, delay_sd_us, delay_err_us;
    double event_rate_per_worker, callback_rate_per_worker, events_per_request;
    double host_busy;       /* the host's CPUs, busy fraction, mean over batches (NAN: unknown) */
    double host_other;      /* the share other processes took, mean over batches (NAN: unknown) */
    double run_delay_share; /* the worker's run-queue share, mean over batches (NAN: unknown) */
    int retried;            /* batches measured again, the host too busy with other work */
    int saturated, confirmed;
    int repeated;  /* measured twice at its rate, both measurements pooled in it */
    int undecided; /* confirmed, over budget only by its error bar (cal_rule_undecided) */
} cal_level;

/* The levels of worker count k in steps[0..n) (steps with level < 0 or of
 * other k are skipped), in the order they were first measured. Returns the
 * count (at most max). */
int cal_levels_build(const cal_step *steps, int n, int k, cal_level *out, int max);

/* The error bar the fit will give level j of l[0..n) (cal_fit_per_k): the
 * 95% t half-width t(dof) cv delay_j / sqrt(n_j), with the relative spread
 * cv pooled over the levels that count (not saturated, a
 * finite delay and 0 < rho < 1, two batches or more; dof = sum(n - 1)), so
 * the sweep can apply the certification rule's own test while it runs.
 * Levels offered at or above the rate of the slowest level confirmed bad
 * and over budget by its mean (or saturated; one over only by its bar caps
 * nothing, cal_rule_undecided) do not count either: they are beyond the
 * crossing, where a mean wait's
 * spread grows like 1/(1 - rho)^2, and one of them (measured: a confirmed
 * level of 742 +- 712 us) would widen every bar below it until a level at
 * rho 0.33 within budget by its mean no longer was, and a quick k=2
 * certificate fell from 0.30-0.32 to 0.108. For the same reason a level
 * over budget_us by its mean (its delay minus the lowest delay of the
 * levels that count, the transport's stand-in) does not count, confirmed
 * or not: measured, an unconfirmed level between the fastest within budget
 * and a saturated one (2462/s: 3395, 106 and 5297 us) widened the bar of
 * the level below it (rho 0.34: 86, 77 and 107 us) from 17 to 64 us and a
 * quick k=2 certificate fell from 0.34 to 0.088. budget_us INFINITY or NAN:
 * no level is over it (the self-test). NAN when no level has two batches. */
double cal_level_pooled_err_us(const cal_level *l, int n, int j, double budget_us);

/* The error bar with which a repeat confirms level j bad (over budget, and
 * then a cap on the certificate): cal_level_pooled_err_us when its pool has
 * at least CAL_CONFIRM_MIN_DOF degrees of freedom, else 0 (the repeat's mean
 * alone). A pool of one level of three batches has 2, and t(2) = 4.30:
 * measured, at the start of a quick k=1 sweep a one-batch probe at 20 req/s
 * (rho 0.03) was called saturated by one late wake-up, its repeat at the
 * same rate measured 23, 81 and 49 us (mean 51 against a 100 us budget), its
 * bar from that pool alone was 72 us, and the repeat "confirmed" the level
 * over budget: the certificate was 0.025 where its neighbours were 0.66-0.77.
 * By the end of that run the same level's bar was 17 us. Pure. */
#define CAL_CONFIRM_MIN_DOF 4
double cal_level_confirm_err_us(const cal_level *l, int n, int j, double budget_us);

/* The two-sided 95% t quantile with dof degrees of freedom (dof >= 1). */
double cal_t95(int dof);

#endif
