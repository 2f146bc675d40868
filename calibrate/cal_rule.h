/* cal_rule: the certification rule, as a pure function of the measured
 * points and the fitted curve's bound. No I/O. Single-threaded.
 *
 * A point is one measured load level of one worker count: its mean
 * utilisation rho, the client's queueing delay there (the measured mean
 * delay minus the fitted transport term, which the client does not cause),
 * the half-width of that delay's 95% error bar, and whether the level kept
 * up at all (saturated). A point is "within budget" when it kept up and
 * delay + error <= budget; otherwise it is "bad".
 *
 * One host hiccup never decides: a bad point caps the levels above it only
 * when `confirmed`, i.e. the level was measured again and was bad again. A
 * level that its repeat refuted (the repeat was within budget) is not passed
 * to the rule; an unconfirmed bad point that is passed (never measured
 * again: within budget by the bars the sweep had, over by the final ones)
 * is refuted by a level within budget above it, and otherwise bounds the
 * crossing below (it is not certified past). A confirmed bad point caps only
 * when it is over budget by its measurement (it saturated, or delay >
 * budget): one within budget by its mean and over only by its error bar is
 * undecided (one stalled batch among quiet ones widens a bar), is not
 * certified, caps nothing, and bounds the crossing as an unconfirmed one.
 *
 * The rule:
 *   - measured_rho: the highest rho of a point within budget that lies below
 *     every confirmed bad point (nothing is certified beyond a level that
 *     was measured over budget, nor beyond the highest level measured within
 *     it). "Below" a bad point that kept up means at a lower rho; below one
 *     that saturated, at a lower offered rate (when the rates are known): a
 *     level that did not keep up has no utilisation of its own to compare
 *     (what it measured is what the host let it do; on a host that ran out of
 *     CPU it can read lower than a faster level below it that kept up and was
 *     within budget, which would then be wrongly excluded);
 *   - with a fit that passed its goodness-of-fit test, model_rho (the
 *     largest rho at which the upper 95% bound of the predicted queueing
 *     delay is within budget) caps the certificate between measured_rho
 *     and the crossing below, never below measured_rho: a level measured
 *     with its own error bar within budget is direct evidence there, where
 *     a fit of few levels can have a wide bound (model_rho under the
 *     levels it was fitted to);
 *   - without one (no fit, or one that failed the test), safe_rho is
 *     measured_rho, and the certificate says it is limited to the measured
 *     range.
 *   - the crossing: when a level over budget lies above measured_rho and
 *     kept up (the lowest such, confirmed or not, below any confirmed cap),
 *     the certified rho is not measured_rho's grid point but where the
 *     delay crosses the budget between the two,
 *     interpolated linearly in x = rho/(1-rho) (in which PK's delay
 *     c + R x is a straight line): the conservative crossing, of the two
 *     levels' upper bounds (delay + error), is certified, and the
 *     crossings of their means and of their lower bounds (delay - error;
 *     at most the bad level's rho) give its interval. A level that did not
 *     keep up has no delay to interpolate: the certificate stays at the
 *     level below it.
 * note says which bound applied, in words, e.g. "not measured beyond rho =
 * 0.62 (the knee was not reached)". */
#ifndef CAL_RULE_H
#define CAL_RULE_H

#include <stddef.h>

typedef struct cal_point {
    double rho;      /* measured mean utilisation of the level */
    double rate;     /* its offered rate (requests/s; 0 or NAN: not known) */
    double delay_us; /* the client's queueing delay: mean delay - transport */
    double err_us;   /* half-width of its 95% error bar (0: not known) */
    int saturated;   /* the level did not keep up (achieved rate, lag, failures) */
    int confirmed;   /* measured again with the same outcome */
} cal_point;

typedef enum {
    CAL_LIMIT_NONE = 0, /* nothing certified: no point within budget */
    CAL_LIMIT_MODEL,    /* the fit's upper bound reaches the budget first */
    CAL_LIMIT_MEASURED, /* the highest level measured: the knee was not reached */
    CAL_LIMIT_OVER,     /* a confirmed bad level above the certified one */
    CAL_LIMIT_FIT,      /* no fit passed its goodness-of-fit test: measured range only */
} cal_limit;

typedef struct cal_rule_result {
    double safe_rho;                /* certified; NAN when nothing is */
    double measured_rho;            /* highest level within budget below any confirmed bad one */
    double bad_rho;                 /* lowest confirmed bad level (NAN: none) */
    int n_within, n_bad, n_ignored; /* points within budget, confirmed bad, unconfirmed bad */
    int n_undecided;                /* confirmed, within by the mean, over only by the bar */
    int n_capped;                   /* within budget above a confirmed bad one: not a queue's */
    int interpolated;               /* safe_rho is the crossing between two levels */
    double over_rho;                /* the level over budget it crosses toward (0: none) */
    int over_confirmed;             /* that level was confirmed by a repeat */
    int over_by_bar;                /* that level is over only by its error bar */
    double crossing_rho;            /* the crossing of the two levels' means (NAN: none) */
    double crossing_rho_ci[2];      /* of their upper and lower bounds (NAN: none) */
    cal_limit limit;
    char note[200];
} cal_rule_result;

/* Applies the rule to p[0..n). model_rho: see above (NAN or <= 0: no model
 * bound); fit_ok: the fit passed its goodness-of-fit test. Returns 0, or
 * -ENODATA when no point is within budget (safe_rho NAN, limit NONE). */
int cal_rule_certify(const cal_point *p, int n, double budget_us, double model_rho, int fit_ok,
                     cal_rule_result *out);

/* 1 if p is undecided: confirmed, not within budget, yet not over it by
 * its measurement (it kept up and its delay is at most the budget; only its
 * error bar passes it). Such a point caps nothing (see above). Pure. */
int cal_rule_undecided(const cal_point *p, double budget_us);

/* The one "within budget" test, the rule's, the sweep's and calibrate's
 * (which repeats a level that fails it): a level that did not saturate and
 * whose delay, less the transport estimate (non-finite: 0), plus its error
 * bar (non-finite or negative: 0) is at most the budget. A non-finite delay
 * is never within. Pure. */
int cal_rule_within(double delay_us, double err_us, double transport_us, int saturated,
                    double budget_us);

/* Where the straight line in x = rho/(1-rho) through (rho_a, ya) and
 * (rho_b, yb) reaches budget, as a rho in [rho_a, rho_b]: rho_b when yb is
 * not above the budget or not above ya, rho_a when ya already reaches it.
 * Pure. */
double cal_rule_cross(double rho_a, double ya, double rho_b, double yb, double budget);

/* "model", "measured range", "over budget", "goodness of fit", "none" */
const char *cal_limit_name(cal_limit l);

#endif
