/* mdl_fit: fits the client's measured delay against its arrival rate to a
 * queueing curve, with confidence intervals, using GSL's nonlinear least
 * squares (gsl_multifit_nlinear, trust region with Levenberg-Marquardt).
 *
 * The model, per process, with lambda its arrival rate of service units:
 *   M/G/1 (PK):                d(lambda) = c + lambda m2 / (2 (1 - lambda m1))
 *   G/G/1 Kingman, ca2 = 0:    d(lambda) = c + lambda (m2 - m1^2) / (2 (1 - lambda m1))
 * c is a constant transport term (s), m1 = E[S] (s), m2 = E[S^2] (s^2).
 * Kingman's rho/(1-rho) (ca2 + cs2)/2 E[S] with ca2 = 0 reduces to the second
 * line, so both share one parametrisation:
 *   c,  m1 = exp(a)  (m1 > 0),  m2 = m1^2 + s^2  (m2 >= m1^2; s = sd of S).
 * Internally times are in microseconds so the parameters are of order 1..1e4.
 * Near and past the pole (lambda m1 >= 0.995) 1/(1 - rho) is continued by its
 * tangent line: finite, increasing, continuously differentiable, so a point at
 * or beyond saturation pulls the fit but cannot blow the solver up. Several
 * starting points are tried (the pole at 1.1, 1.5, 3 and 10 times the largest
 * rate) and the smallest residual kept.
 *
 * Confidence intervals: the covariance (J^T J)^-1 at the solution
 * (gsl_multifit_nlinear_covar), scaled by the residual variance RSS/(n - p),
 * times the t quantile with n - p degrees of freedom. For m1 the interval is
 * exp(a +- t se_a) (always positive); for m2 the delta method, clipped below
 * at 0. Not thread-safe: GSL's error handler is switched off during a fit. */
#ifndef MDL_FIT_H
#define MDL_FIT_H

#include <stddef.h>

typedef enum {
    MDL_FIT_PK = 0,          /* Poisson arrivals: M/G/1, Pollaczek-Khinchine */
    MDL_FIT_KINGMAN_CA0 = 1, /* constant-rate arrivals: Kingman's G/G/1 with ca2 = 0 */
} mdl_fit_model;

typedef struct mdl_fit_opts {
    mdl_fit_model model;
    double conf;     /* confidence level of the intervals, e.g. 0.95 (0: 0.95) */
    int fix_moments; /* 1: m1, m2 are fixed to fixed_m1_s, fixed_m2_s2 (measured
                        moments) and only c is fitted (linear; exact) */
    double fixed_m1_s;
    double fixed_m2_s2;
    const double *weights; /* per-point weights (1/variance), or NULL for equal */
    double pin_m1_s;       /* > 0: m1 is given (e.g. from the measured utilisation,
                              see mdl_fit_through_origin) and c, m2 are fitted with
                              the same solver; needs n >= 3 */
} mdl_fit_opts;

#define MDL_FIT_OPTS_DEFAULT                                                                       \
    {                                                                                              \
        .model = MDL_FIT_PK, .conf = 0.95, .fix_moments = 0, .fixed_m1_s = 0, .fixed_m2_s2 = 0,    \
        .weights = NULL, .pin_m1_s = 0                                                             \
    }

typedef struct mdl_fit_param {
    double value;
    double lo, hi; /* the confidence interval */
    double se;     /* standard error (delta method for m1, m2) */
    int fixed;     /* 1: not fitted (given) */
} mdl_fit_param;

typedef struct mdl_fit_result {
    mdl_fit_model model;
    const char *model_name; /* "M/G/1 (Pollaczek-Khinchine)" or "G/G/1 (Kingman, ca2=0)" */
    mdl_fit_param c_s;      /* transport, s */
    mdl_fit_param m1_s;     /* E[S], s */
    mdl_fit_param m2_s2;    /* E[S^2], s^2 */
    double r2;              /* 1 - RSS/TSS (unweighted) */
    double rmse_s;          /* sqrt(RSS/n) (unweighted) */
    double chisq;           /* the minimised weighted sum of squares (delays in us);
                               comparable between fits of the same points and weights,
                               e.g. for an F test of a pinned E[S] against a free one */
    int n_points;
    int dof;        /* n - fitted parameters */
    int iterations; /* of the best start */
    int status;     /* GSL status of the best start (0: converged) */
} mdl_fit_result;

/* Fits d[i] (s) against lambda_per_s[i] for i < n. Needs n >= 4 points (>= 2
 * with fix_moments), finite, lambda >= 0. Returns 0, -EINVAL on bad input or
 * parameters, -EDOM when no start converged to finite parameters. */
int mdl_fit_delay(const double *lambda_per_s, const double *d_s, size_t n, const mdl_fit_opts *opts,
                  mdl_fit_result *out);

/* Least squares through the origin, y = b x (e.g. the measured utilisation
 * against the arrival rate, whose slope is E[S]): b with its standard error
 * and confidence interval (t quantile, n - 1 degrees of freedom). Returns 0 or
 * -EINVAL (n < 2, non-finite values, all x zero). */
int mdl_fit_through_origin(const double *x, const double *y, size_t n, double conf,
                           mdl_fit_param *slope);

/* The fitted curve at lambda (s); INFINITY at or beyond the pole. */
double mdl_fit_predict(const mdl_fit_result *r, double lambda_per_s);

/* The model's name as written into results. */
const char *mdl_fit_model_name(mdl_fit_model model);

#endif
