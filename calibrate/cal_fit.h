/* cal_fit: from a sweep's steps to what the certificate states for one worker
 * count k: the fitted PK parameters, the safe utilisation and the safe rates;
 * and the self-test's checks. Pure (mdl_fit underneath). Single-threaded.
 *
 * The fit: lambda = SSE events per second per worker, d = the mean client
 * overhead per token (receive time - server stamp), over the steps of this k
 * that were not saturated. d(lambda) = c + lambda E[S^2] / (2 (1 - lambda E[S]))
 * with E[S] the loop's busy time per event.
 *
 * Safe (cal_rule.h): the certified utilisation safe_rho is the lower of the
 * highest level measured within budget (below any level confirmed over it)
 * and the fit's conservative bound model_rho: the utilisation at which PK's
 * queueing delay W_q (without the constant transport c, which the client
 * does not cause), computed with the upper ends of the intervals of E[S] and
 * E[S^2], reaches the budget. A fit with R^2 below CAL_FIT_MIN_R2 (or none)
 * gives the measured range only. The rates follow from safe_rho with the
 * upper end of E[S]: safe_event_rate_per_worker = safe_rho / E[S]_hi,
 * safe_rate_per_worker = that / events_per_request (requests/s of the
 * calibration's workload), safe_total_rate = k times it;
 * conservative_safe_total_rate equals safe_total_rate (the conservative
 * figure is the one enforced). model_safe_total_rate keeps the point
 * estimate of the model alone; limited_by and cert_note say which bound
 * applied. Steps marked outlier (their repeat was fine) count nowhere.
 *
 * The fit weighs each step by 1/d^2 (the delay's noise grows with the delay,
 * roughly in proportion; the self-test judges relative errors too).
 * method says how the figures were obtained. Two nested fits are made:
 * E[S] free (c, E[S], E[S^2] from the delay curve alone; needs >= 4 steps),
 * and E[S] pinned at the slope of the measured utilisation against lambda
 * (rho = lambda E[S], from libuv's idle time, with that regression's interval;
 * c and E[S^2] fitted to the curve by the same solver; needs >= 3 steps).
 *   "fit"       the free fit: taken when E[S]'s 95% interval is within a factor
 *               CAL_FIT_MAX_CI_RATIO, E[S] is within a factor
 *               CAL_FIT_MAX_UTIL_RATIO of the utilisation's (a curve with no
 *               visible knee drives E[S] to 0, a pole at infinity, which is no
 *               measurement), and it fits significantly better than the pinned
 *               one (F test at CAL_FIT_F_TEST_ALPHA, f_test_p);
 *   "fit-util"  the pinned fit otherwise: the pole is then not something the
 *               curve can tell on this host, and the loop's own measure of its
 *               busy time is the better estimate;
 *   "moments"   no fit possible: the busiest usable step's measured moments. */
#ifndef CAL_FIT_H
#define CAL_FIT_H

#define CAL_FIT_MAX_CI_RATIO 1.5
#define CAL_FIT_MAX_UTIL_RATIO 2.0
#define CAL_FIT_F_TEST_ALPHA 0.05
#define CAL_FIT_MIN_R2 0.5 /* goodness of fit: below it, the measured range only */

#include "cal_step.h"
#include "mdl_fit.h"

typedef struct cal_per_k {
    int workers;
    int n_steps;     /* of this k */
    int n_fit;       /* used in the fit */
    char method[16]; /* "fit" or "moments" or "none" */
    mdl_fit_result fit;
    double mean_service_us, mean_service_us_ci[2];
    double second_moment_us2, second_moment_us2_ci[2];
    double transport_us, transport_us_ci[2];
    double r2;
    double util_service_us, util_service_us_ci[2]; /* E[S] as rho / lambda (slope) */
    double f_test_p; /* free E[S] against pinned: p of the F test (NAN: not made) */
    double events_per_request;
    double safe_event_rate_per_worker;
    double safe_rho;
    double safe_rate_per_worker;
    double safe_total_rate;
    double conservative_safe_total_rate;
    double model_safe_total_rate; /* the model's point estimate, before the rule */
    double model_rho;             /* the fit's conservative bound (cal_rule.h) */
    double measured_rho;          /* highest level measured within budget, below any bad one */
    int fit_ok;                   /* the fit passed its goodness-of-fit test */
    char limited_by[20];          /* cal_limit_name: which bound the certificate has */
    char cert_note[200];          /* the same in words */
    double max_measured_rate;     /* largest offered rate of a usable step */
} cal_per_k;

/* Computes the figures for worker count k from steps[0..n) (steps of other
 * k are skipped), marks used_in_fit and fit_pred_us on them. budget_us > 0.
 * Returns 0, or -ENODATA when no usable step exists (method "none"). */
int cal_fit_per_k(cal_step *steps, int n, int k, double budget_us, mdl_fit_model model,
                  cal_per_k *out);

/* The client's own busy time per event (us) of worker count k from steps
 * made without an injected cost: the slope of the measured utilisation
 * against the event rate through the origin (rho = lambda E[S]), over the
 * steps of k that were not saturated, with its 95% interval in ci (may be
 * NULL). NAN when fewer than two such steps exist. Pure. */
double cal_baseline_service_us(const cal_step *steps, int n, int k, double ci[2]);

/* The self-test's checks, one row each. */
typedef struct cal_check {
    char name[96];
    double measured, expected;
    double rel_err, tol;
    int pass;
    int counted; /* a failed row that counts against the self-test */
} cal_check;

/* Checks that each k's fitted E[S] minus baseline_us, the client's own busy
 * time per event measured in the same invocation without the injected cost
 * (cal_baseline_service_us; baseline_us[j] for pk[j]), is within es_tol
 * (0.10) of injected_us: the
 * loop's own cost (libcurl, parsing, the dispatch timer; 10-25 us per event
 * on a small host) is part of the busy time with or without injection, and
 * does not count against the injected cost. A NAN baseline fails that row.
 * Then that the fitted curve follows the measured delay at the fitted steps
 * whose mean rho lies in [rho_lo, rho_hi]: the MEDIAN of the per-step
 * relative errors must be within pred_tol (0.20), no single step may be off
 * by more than 3 x pred_tol, and at least two such steps must exist. Each
 * step's row is listed; one off by more than pred_tol but less than 3 x is
 * shown as failed but not counted. Why the median: a step's mean wait is
 * heavy-tailed, its sampling error grows like 1/(1 - rho)^2, and on a small
 * shared host one preemption during a step can move its mean by tens of
 * percent, so a single step's miss says less about the model than the run
 * as a whole. Fills out[0..*n_out) (at most max rows). Returns the number of
 * counted failures. */
int cal_selftest_eval(const cal_step *steps, int n, const cal_per_k *pk, int npk,
                      double injected_us, const double *baseline_us, double es_tol, double pred_tol,
                      double rho_lo, double rho_hi, cal_check *out, int max, int *n_out);

#endif
