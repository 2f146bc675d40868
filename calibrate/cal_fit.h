/* cal_fit: from a sweep's batches to what the certificate states for one
 * worker count k: the fitted delay curve, the safe utilisation and the safe
 * rates; the client's cost model; and the self-test's checks. Pure (GSL
 * underneath). Single-threaded.
 *
 * The delay curve, per level (cal_level.h): the measured mean client delay
 * d against the measured mean utilisation rho,
 *     d = c + R rho / (1 - rho),
 * which is M/G/1 (Pollaczek-Khinchine) with R = E[S^2] / (2 E[S]) and c the
 * constant transport term that the client does not cause. It is linear in
 * (c, R), so it is fitted by weighted least squares, each level weighted by
 * 1 / se^2 with se = cv d / sqrt(n): the noise of a mean delay grows with
 * the delay, and its relative size cv is pooled over the levels' batches
 * (a level's own 2-3 batches say little about it alone). Intervals: a
 * bootstrap over batches, stratified by level (each level's batches
 * resampled, their deviations scaled by sqrt(n / (n - 1)) so the resampled
 * spread is not biased low at n = 3), CAL_FIT_BOOT resamples, percentile
 * 95% intervals of c, R and of the predicted delay (the band). Goodness of
 * fit: the lack-of-fit F test, the levels' weighted residuals against the
 * batches' pure error (F with L - 2 and sum(n - 1) degrees of freedom); the
 * fit passes when p >= CAL_FIT_GOF_ALPHA and R > 0.
 *
 * Safe (cal_rule.h): the certified utilisation safe_rho is the lower of the
 * highest level measured within budget (its mean delay minus c, plus its
 * error bar; below any level confirmed bad; the error bar is the 95% t
 * interval of its mean with the pooled relative spread cv and its degrees of
 * freedom, t cv d / sqrt(n), so a level of one batch has one too) and the fit's bound model_rho =
 * b / (b + R_hi), where the upper 95% bound of the predicted queueing delay
 * R rho / (1 - rho) reaches the budget b. A fit that fails its test gives
 * the measured range only, and says so. The rates, for the calibration's
 * own workload (the reference workload): the busy time per request is the
 * slope of rho against the achieved request rate per worker (through the
 * origin, with its t interval), safe_rate_per_worker = safe_rho / its upper
 * end, safe_total_rate = k times it (conservative_safe_total_rate equals it:
 * the conservative figure is the one enforced); model_safe_total_rate is the
 * point estimate of the model alone. E[S], the busy time per event, is the
 * slope of rho against the event rate; second_moment_us2 = 2 R E[S], the
 * effective E[S^2] that makes PK follow the measured curve. */
#ifndef CAL_FIT_H
#define CAL_FIT_H

#include "cal_level.h"
#include "cal_step.h"

#define CAL_FIT_BOOT 2000
#define CAL_FIT_GOF_ALPHA 0.01
#define CAL_BAND_N 40
#define CAL_HOST_BUSY_LIMIT                                                                        \
    0.9 /* the host's CPUs this busy: the host, not the client, gives out                          \
         */

/* A batch during which other processes took more than this share of all the
 * host's CPU time is measured again (calibrate's run_level). On this
 * project's 2-core VM, quiet batches read 0-2% and batches during another
 * build 60-97%. */
#define CAL_HOST_OTHER_MAX 0.15
/* A worker that waited for a CPU this share of its time (runnable, not
 * running: /proc/self/schedstat) is short of CPUs, not of its own loop. On
 * the 2-core VM quiet: k=1 0-2% at every level; k=2 (two workers and the
 * simulator on two CPUs) 19-23% at rho 0.33 and 9-24% at 0.39. */
#define CAL_RUN_DELAY_LIMIT 0.10

typedef struct cal_per_k {
    int workers;
    int n_steps;     /* batches of this k */
    int n_fit;       /* levels in the fit */
    char method[24]; /* "wls-bootstrap", "measured" (too few levels to fit) or "none" */
    double transport_us, transport_us_ci[2];
    double r_us, r_us_ci[2]; /* R = E[S^2] / (2 E[S]) */
    double f_gof, gof_p;     /* lack-of-fit F and its p (NAN: not made) */
    int gof_dof1, gof_dof2;
    int fit_ok;
    double r2;
    double mean_service_us, mean_service_us_ci[2]; /* E[S] per event, from the utilisation */
    double second_moment_us2, second_moment_us2_ci[2];
    double busy_per_request_us, busy_per_request_us_ci[2];
    double events_per_request;
    double safe_event_rate_per_worker;
    double safe_rho;
    double safe_rate_per_worker;
    double safe_total_rate;
    double conservative_safe_total_rate;
    double model_safe_total_rate;
    double model_rho;                    /* the fit's conservative bound */
    double cost_scale, cost_scale_ci[2]; /* cal_cost_scale for this k (NAN: none) */
    double measured_rho; /* highest level measured within budget, below any bad one */
    int n_capped;        /* levels within budget above a confirmed bad one (cal_rule) */
    /* where the delay crosses the budget between measured_rho and the level
     * over it (cal_rule): of the means, [of the upper bounds, of the lower
     * bounds], that level's rho and whether a repeat confirmed it (NAN, 0:
     * no crossing) */
    double crossing_rho, crossing_rho_ci[2], crossing_over_rho;
    int crossing_over_confirmed;
    char limited_by[20]; /* cal_limit_name */
    /* where its figures were measured: "apart" (the simulator on a CPU of
     * its own, the workers on the others) or "shared" (every CPU shared);
     * "" when not said. measured_both: placed first, then measured again
     * shared, the placement kept the one that certified more (calibrate's
     * sweep_k_placed; the certificate's measured_again_shared). Set by
     * calibrate, not by the fit. */
    char placement[8];
    int measured_both;
    char cert_note[200];
    int host_limited; /* the host's CPUs gave out before the client reached its limit */
    char host_note[200];
    double max_measured_rate;
    int n_levels;
    cal_level levels[CAL_MAX_LEVELS];
    double level_pred_us[CAL_MAX_LEVELS]; /* the fitted curve at each level's rho */
    double band_rho[CAL_BAND_N], band_lo_us[CAL_BAND_N], band_hi_us[CAL_BAND_N];
} cal_per_k;

/* Computes the figures for worker count k from steps[0..n) (steps of other
 * k are skipped; the fit uses the steps with a level), marks used_in_fit and
 * fit_pred_us on them. budget_us > 0. Returns 0, or -ENODATA when no usable
 * level exists (method "none"). */
int cal_fit_per_k(cal_step *steps, int n, int k, double budget_us, cal_per_k *out);

/* The fitted curve c + R rho / (1 - rho) (us); INFINITY at rho >= 1. */
double cal_fit_predict_us(const cal_per_k *p, double rho);

/* The client's cost model: the loop's utilisation per worker is
 *     rho = lambda_request r + lambda_delivery a + lambda_event b
 *           + lambda_plain p
 * (r per request: its dispatch, send, headers and completion; a per
 * delivery, i.e. per read callback; b per SSE event in it; p per
 * non-streamed response on top), fitted by least squares through the
 * origin (GSL) over the unsaturated batches of one worker: the sweep's (one
 * event per delivery, the reference workload's events per request), the
 * probe's (many events per delivery), the one-token probe's (few events
 * per request) and the non-streamed probe's (cal_step.plain), with t
 * intervals. A term enters only where the batches tell it apart from the
 * others: a from b when events per delivery differ by 2x (identified); r
 * when events per request do (request_identified; the request rate is
 * achieved_rate / workers); p when plain batches and streamed ones are both
 * there (plain_identified). No cost is negative (no client gains time from
 * work) and b is above 0: of the fits on b and any of the terms told apart,
 * the one with the smallest sum of squares that meets both (the
 * constrained least-squares fit; a noisy probe that pushes b below 0 beside
 * a positive delivery cost drops a term, not the model). A term left out
 * is 0. The references a
 * prediction needs: the sweep's read callbacks per request
 * (ref_callbacks_per_request) and the plain batches' callbacks and events
 * per request (NAN: none). Returns 0, -ENODATA (fewer than two batches) or
 * -ERANGE (no such fit: a utilisation that falls with the load; no cost
 * model, left NAN). */
typedef struct cal_cost {
    double per_request_us, per_request_us_ci[2];
    double per_delivery_us, per_delivery_us_ci[2];
    double per_event_us, per_event_us_ci[2];
    double per_plain_response_us, per_plain_response_us_ci[2];
    int n, identified, request_identified, plain_identified;
    double ref_callbacks_per_request;
    double plain_callbacks_per_request, plain_events_per_request;
} cal_cost;

int cal_cost_fit(const cal_step *steps, int n, cal_cost *out);

/* The model's utilisation per worker for the measured rates of step s
 * (requests from achieved_rate / workers, NAN terms as 0). NAN when s has
 * no event rate. Pure. */
double cal_cost_rho(const cal_cost *c, const cal_step *s);

/* How much busier each of k workers is than the one-worker model says:
 * the slope through the origin of the measured rho against cal_cost_rho
 * over the unsaturated sweep batches of k (not probes), with
 * its 95% t interval in ci (may be NULL). Contention between k workers and
 * the server on a small host raises it above 1. NAN when fewer than two
 * such batches. Pure. */
double cal_cost_scale(const cal_step *steps, int n, int k, const cal_cost *c, double ci[2]);

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
    int counted;    /* a failed row that counts against the self-test */
    int superseded; /* a failed row of a sweep measured again: shown, not counted */
    int attempt;    /* the self-test's sweep of its cost: 1, or 2 for a repeat (0: unset) */
} cal_check;

/* Checks that each k's E[S] minus baseline_us[j] (for pk[j]), the client's
 * own busy time per event measured in the same invocation without the
 * injected cost (cal_baseline_service_us), is within es_tol (0.10) of
 * injected_us: the loop's own cost (libcurl, parsing, the dispatch timer;
 * 10-25 us per event on a small host) is part of the busy time with or
 * without injection, and does not count against the injected cost. A NAN
 * baseline fails that row. Then that the fitted curve follows the measured
 * mean delay of the fitted levels whose rho lies in [rho_lo, rho_hi]: the
 * MEDIAN of the per-level relative errors must be within pred_tol (0.20),
 * and at least two such levels must exist. Each level's row is listed; one
 * off by more than pred_tol is shown as failed but not counted. Why the
 * median: a level's mean wait is heavy-tailed, its sampling error grows like
 * 1/(1 - rho)^2, and on a small shared host one preemption can move a mean
 * by tens of percent, so one level's miss says less about the model than the
 * run as a whole: one host hiccup never decides, a model that is wrong
 * misses at most levels. Fills out[0..*n_out) (at most max rows). Returns the
 * number of counted failures. */
int cal_selftest_eval(const cal_per_k *pk, int npk, double injected_us, const double *baseline_us,
                      double es_tol, double pred_tol, double rho_lo, double rho_hi, cal_check *out,
                      int max, int *n_out);

/* The self-test's injected client as the loop sees it. The unit that
 * queues is a read callback (a job of the loop). Without injection the
 * client's own callbacks have the moments base_m1_us, base_m2_us2 (E[S],
 * E[S^2] per callback, measured by loadgen in the baseline steps; their
 * R_b = m2 / (2 m1)). With injection each request brings n events
 * (events_per_request), c read callbacks (callbacks_per_request), and its
 * events arrive in groups of g (events_per_delivery, 1 <= g <= n; n / g
 * groups a request, each in one callback): a callback that reads a group
 * pays g independent draws of the injected D (mean mean_us, fixed or
 * exponential) on top of its own work. The self-test's one-token response
 * is one group (its token, usage chunk and [DONE] written at once: g = n,
 * the other callbacks, such as the headers' read, carry none); paced
 * tokens, each its own read, are g = 1. */
typedef struct cal_injected {
    double mean_us;  /* the injected cost's mean per event */
    int exponential; /* 0: fixed */
    double base_m1_us, base_m2_us2;
    double events_per_request, callbacks_per_request, events_per_delivery;
} cal_injected;

/* PK's R = E[S^2] / (2 E[S]) over the callbacks of that client, with
 * q = n / (g c) the share of callbacks that read a group:
 *     E[X] = g m,  E[X^2] = g^2 m^2 (fixed) or g (g + 1) m^2 (exponential),
 *     E[S] = m1 + q E[X],  E[S^2] = m2 + q (E[X^2] + 2 E[X] m1),
 * so with n = c = g = 1 and a fixed baseline b (m2 = b^2) a fixed d gives
 * (b + d) / 2 and an exponential mean m on b = 0 gives m. NAN when g < 1,
 * g > n, q > 1, m1 < 0, m2 < m1^2 or nothing costs. Pure. */
double cal_selftest_r_true(const cal_injected *inj);

/* The callback moments of the baseline steps of k in steps[0..n) (not
 * saturated, with callbacks): E[S] and E[S^2] per callback, weighted by
 * each step's callbacks per second. Returns the steps used (0: m1, m2
 * NAN). Pure. */
int cal_baseline_moments(const cal_step *steps, int n, int k, double *m1_us, double *m2_us2);

/* Events and read callbacks per request over the levels of p that count
 * (not saturated) whose rho lies in [rho_lo, rho_hi], or over
 * all that count when none lies there: the means of their
 * events_per_request and of events_per_request x callback rate / event
 * rate. 0, or -ENODATA (both NAN). Pure. */
int cal_selftest_delivery(const cal_per_k *p, double rho_lo, double rho_hi, double *events,
                          double *callbacks);

/* The checks of the model itself, for one k (p) and one injected client,
 * appended to out[*n_out..), each counted (the self-test's arrivals at the
 * client are Poisson: one delivery per response, open-loop Poisson
 * requests, a jittered time to first token):
 *   - R: PK's R for the injected client inj (cal_selftest_r_true) lies within
 *     the fit's 95% interval, or within r_tol of the fitted R when the
 *     interval is narrower than that (tol = the larger of r_tol and the
 *     interval's relative half-width on the side of PK's R), but never
 *     beyond CAL_SELFTEST_R_TOL_MAX: a bootstrap interval wider than that
 *     (one level's outlying batch can stretch it tenfold) has not measured
 *     R, and a check it passes would say nothing;
 *   - the fit passed its goodness-of-fit test (fit_ok);
 *   - the certification rule's safe_rho is within rule_tol of the rho at
 *     which PK with that R reaches budget_us: budget / (budget + R).
 * Returns the number of counted failures. Pure. */
#define CAL_SELFTEST_R_TOL_MAX 0.5
int cal_selftest_model(const cal_per_k *p, const cal_injected *inj, double budget_us, double r_tol,
                       double rule_tol, cal_check *out, int max, int *n_out);

/* The out-of-sample check, for worker count k over steps[0..n) (one
 * injected client's batches) whose fit with every level is p: the level of
 * p that counts (not saturated) with rho in [rho_lo,
 * rho_hi] nearest their middle, among those below another counted level (so
 * the fit without it interpolates, never extrapolates), is held out with
 * every other level measured at its rate (a repeat at the same rate is the
 * same point); the curve is fitted again without them (cal_fit_per_k on a
 * copy), and the held-out level must fall within that fit's band: its mean
 * delay, give or take its error bar (p's pooled 95% one), overlaps the 95%
 * band of the refitted curve at its rho. One row, counted: measured = the
 * level's delay, expected = the refitted curve there, tol = (the band's
 * half-width on the level's side + the error bar) / expected. No such
 * level, or no fit without it, fails the row. Returns the counted
 * failures (0 or 1). Pure but for the heap copy. */
int cal_selftest_holdout(const cal_step *steps, int n, const cal_per_k *p, double budget_us,
                         double rho_lo, double rho_hi, cal_check *out, int max, int *n_out);

/* A placed k that certifies less than this is measured again shared
 * (calibrate's sweep_k_placed). Placed k=1 certified 0.52-0.80 on a quiet
 * host and 0.51-0.71 beside the half-core neighbour (results/calibrate/
 * bench-77e41ea, neighbour-77e41ea), but 0.03-0.04 beside a compile, where
 * shared it certified 0.25-0.40 (busy-placement), and 0.040 on a quiet host
 * whose low-rate levels were over budget (results/main/same_vm-77e41ea.md):
 * any figure between 0.05 and 0.5 parts the two; 0.25 is the shared figure
 * beside a compile, below which placing has given nothing to keep. */
#define CAL_PLACED_LOW_RHO 0.25

/* Whether a placed k's certificate (p; NULL: no fit) is doubtful, so that
 * the k is measured again sharing the CPUs: it certified nothing, less
 * than CAL_PLACED_LOW_RHO, or a confirmed bad level caps levels within
 * budget above it (p->n_capped). 1 and why in words (e.g. "certified only
 * rho 0.036 (below 0.25)"), else 0 and why empty. Pure. */
int cal_fit_placed_doubtful(const cal_per_k *p, char *why, size_t n);

/* Whether the placed sweep is kept over the shared one, given what each
 * certified (NAN: nothing): when the placed certified something and the
 * shared not more. Pure. */
int cal_fit_keep_placed(double placed_rho, double shared_rho);

#endif
