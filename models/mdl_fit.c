/* mdl_fit: the delay-curve fit of mdl_fit.h on gsl_multifit_nlinear, with an
 * analytic Jacobian, several starts, and intervals from the covariance. */
#include "mdl_fit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#define RHO_CAP 0.995 /* where 1/(1-rho) hands over to its tangent line */
#define N_PARAMS 3    /* c_us, a = log m1_us, s_us; with m1 pinned: c_us, s_us */

const char *mdl_fit_model_name(mdl_fit_model model)
{
    return model == MDL_FIT_KINGMAN_CA0 ? "G/G/1 (Kingman, ca2=0)" : "M/G/1 (Pollaczek-Khinchine)";
}

/* 1/(1-rho), continued linearly past RHO_CAP; and its derivative. */
static double pole(double rho, double *deriv)
{
    if (rho < RHO_CAP) {
        double inv = 1.0 / (1.0 - rho);
        if (deriv) *deriv = inv * inv;
        return inv;
    }
    double inv = 1.0 / (1.0 - RHO_CAP);
    if (deriv) *deriv = inv * inv;
    return inv + (rho - RHO_CAP) * inv * inv;
}

typedef struct fit_data {
    const double *lambda_per_us;
    const double *d_us;
    size_t n;
    mdl_fit_model model;
    double pin_m1_us; /* > 0: m1 is not a parameter */
    int p;            /* parameters in the solver's vector */
} fit_data;

static void unpack(const fit_data *fd, const gsl_vector *x, double *c, double *m1, double *s)
{
    *c = gsl_vector_get(x, 0);
    if (fd->pin_m1_us > 0) {
        *m1 = fd->pin_m1_us;
        *s = gsl_vector_get(x, 1);
    } else {
        *m1 = exp(gsl_vector_get(x, 1));
        *s = gsl_vector_get(x, 2);
    }
}

/* The numerator's variance term: E[S^2] for PK, Var[S] for Kingman ca2 = 0. */
static double numerator(mdl_fit_model model, double m1, double s)
{
    return model == MDL_FIT_KINGMAN_CA0 ? s * s : m1 * m1 + s * s;
}

static double curve_us(mdl_fit_model model, double c, double m1, double s, double lambda)
{
    return c + lambda * numerator(model, m1, s) / 2.0 * pole(lambda * m1, NULL);
}

static int fit_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    const fit_data *fd = params;
    double c, m1, s;
    unpack(fd, x, &c, &m1, &s);
    for (size_t i = 0; i < fd->n; i++)
        gsl_vector_set(f, i, curve_us(fd->model, c, m1, s, fd->lambda_per_us[i]) - fd->d_us[i]);
    return GSL_SUCCESS;
}

static int fit_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
    const fit_data *fd = params;
    double c, m1, s;
    unpack(fd, x, &c, &m1, &s);
    double v = numerator(fd->model, m1, s);
    double dv_dm1 = fd->model == MDL_FIT_KINGMAN_CA0 ? 0.0 : 2.0 * m1;
    for (size_t i = 0; i < fd->n; i++) {
        double l = fd->lambda_per_us[i], gd;
        double g = pole(l * m1, &gd);
        gsl_matrix_set(J, i, 0, 1.0);
        if (fd->pin_m1_us <= 0) gsl_matrix_set(J, i, 1, m1 * l / 2.0 * (dv_dm1 * g + v * gd * l));
        gsl_matrix_set(J, i, (size_t)fd->p - 1, l * s * g);
    }
    return GSL_SUCCESS;
}

/* Given m1, the curve is linear in (c, v): least squares for both, the start
 * of the nonlinear fit. */
static void linear_start(const fit_data *fd, const double *w, double m1, double *c, double *v)
{
    double sw = 0, sh = 0, sd = 0, shh = 0, shd = 0;
    for (size_t i = 0; i < fd->n; i++) {
        double wi = w ? w[i] : 1.0;
        double h = fd->lambda_per_us[i] / 2.0 * pole(fd->lambda_per_us[i] * m1, NULL);
        sw += wi;
        sh += wi * h;
        sd += wi * fd->d_us[i];
        shh += wi * h * h;
        shd += wi * h * fd->d_us[i];
    }
    double den = sw * shh - sh * sh;
    *v = den > 0 ? (sw * shd - sh * sd) / den : 0.0;
    *c = (sd - *v * sh) / sw;
}

static void set_symmetric(mdl_fit_param *p, double value, double se, double t)
{
    p->value = value;
    p->se = se;
    p->lo = value - t * se;
    p->hi = value + t * se;
    p->fixed = 0;
}

static void fill_quality(mdl_fit_result *out, const fit_data *fd)
{
    double mean = 0, tss = 0, rss = 0;
    for (size_t i = 0; i < fd->n; i++)
        mean += fd->d_us[i];
    mean /= (double)fd->n;
    for (size_t i = 0; i < fd->n; i++) {
        double pred = curve_us(
            fd->model, out->c_s.value * 1e6, out->m1_s.value * 1e6,
            sqrt(fmax(0.0, out->m2_s2.value * 1e12 - out->m1_s.value * out->m1_s.value * 1e12)),
            fd->lambda_per_us[i]);
        double r = pred - fd->d_us[i];
        rss += r * r;
        tss += (fd->d_us[i] - mean) * (fd->d_us[i] - mean);
    }
    out->r2 = tss > 0 ? 1.0 - rss / tss : NAN;
    out->rmse_s = sqrt(rss / (double)fd->n) * 1e-6;
}

static int fit_c_only(const fit_data *fd, const mdl_fit_opts *o, double t_conf, mdl_fit_result *out)
{
    double m1 = o->fixed_m1_s * 1e6, m2 = o->fixed_m2_s2 * 1e12;
    if (!(m1 > 0) || !isfinite(m1) || !(m2 >= 0) || !isfinite(m2)) return -EINVAL;
    double s = sqrt(fmax(0.0, m2 - m1 * m1));
    double sw = 0, swr = 0;
    for (size_t i = 0; i < fd->n; i++) {
        double wi = o->weights ? o->weights[i] : 1.0;
        sw += wi;
        swr += wi * (fd->d_us[i] - curve_us(fd->model, 0.0, m1, s, fd->lambda_per_us[i]));
    }
    double c = swr / sw, ss = 0;
    for (size_t i = 0; i < fd->n; i++) {
        double wi = o->weights ? o->weights[i] : 1.0;
        double r = fd->d_us[i] - curve_us(fd->model, c, m1, s, fd->lambda_per_us[i]);
        ss += wi * r * r;
    }
    out->dof = (int)fd->n - 1;
    out->chisq = ss;
    double t = gsl_cdf_tdist_Pinv(t_conf, out->dof);
    double se = sqrt(ss / out->dof / sw);
    set_symmetric(&out->c_s, c * 1e-6, se * 1e-6, t);
    out->m1_s = (mdl_fit_param){
        .value = o->fixed_m1_s, .lo = o->fixed_m1_s, .hi = o->fixed_m1_s, .fixed = 1};
    out->m2_s2 = (mdl_fit_param){
        .value = o->fixed_m2_s2, .lo = o->fixed_m2_s2, .hi = o->fixed_m2_s2, .fixed = 1};
    fill_quality(out, fd);
    return 0;
}

/* One trust-region run from x0; returns the weighted RSS or INFINITY. */
static double run_once(gsl_multifit_nlinear_workspace *w, gsl_multifit_nlinear_fdf *fdf,
                       gsl_vector *wts, const double x0[N_PARAMS], int *status, int *iters)
{
    gsl_vector_const_view xv = gsl_vector_const_view_array(x0, fdf->p);
    int rc = wts ? gsl_multifit_nlinear_winit(&xv.vector, wts, fdf, w)
                 : gsl_multifit_nlinear_init(&xv.vector, fdf, w);
    if (rc != GSL_SUCCESS) return INFINITY;
    int info = 0;
    *status = gsl_multifit_nlinear_driver(500, 1e-12, 1e-12, 0.0, NULL, NULL, &info, w);
    *iters = (int)gsl_multifit_nlinear_niter(w);
    gsl_vector *x = gsl_multifit_nlinear_position(w);
    for (size_t j = 0; j < fdf->p; j++)
        if (!isfinite(gsl_vector_get(x, j))) return INFINITY;
    if (*status != GSL_SUCCESS && *status != GSL_EMAXITER && *status != GSL_ENOPROG)
        return INFINITY;
    double chisq;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chisq);
    return isfinite(chisq) ? chisq : INFINITY;
}

static int fit_full(const fit_data *fd, const mdl_fit_opts *o, double t_conf, mdl_fit_result *out)
{
    int rc = -ENOMEM;
    gsl_multifit_nlinear_fdf fdf = {.f = fit_f,
                                    .df = fit_df,
                                    .fvv = NULL,
                                    .n = fd->n,
                                    .p = (size_t)fd->p,
                                    .params = (void *)fd};
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    fp.trs = gsl_multifit_nlinear_trs_lm;
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, fd->n, (size_t)fd->p);
    gsl_vector *wts = o->weights ? gsl_vector_alloc(fd->n) : NULL;
    gsl_matrix *covar = gsl_matrix_alloc((size_t)fd->p, (size_t)fd->p);
    if (!w || !covar || (o->weights && !wts)) goto done;
    for (size_t i = 0; wts && i < fd->n; i++)
        gsl_vector_set(wts, i, o->weights[i]);

    double lmax = 0;
    for (size_t i = 0; i < fd->n; i++)
        lmax = fmax(lmax, fd->lambda_per_us[i]);
    static const double pole_at[] = {1.1, 1.5, 3.0, 10.0};
    size_t n_starts = fd->pin_m1_us > 0 ? 1 : sizeof pole_at / sizeof pole_at[0];
    double best_x[N_PARAMS] = {0}, best = INFINITY;
    size_t xbytes = (size_t)fd->p * sizeof(double);
    int best_status = 0, best_iters = 0;
    for (size_t k = 0; k < n_starts; k++) {
        double m1 = fd->pin_m1_us > 0 ? fd->pin_m1_us : 1.0 / (pole_at[k] * lmax), c, v;
        linear_start(fd, o->weights, m1, &c, &v);
        double var = fd->model == MDL_FIT_KINGMAN_CA0 ? v : v - m1 * m1;
        double s0 = var > 0 ? sqrt(var) : 0.3 * m1;
        double x0[N_PARAMS] = {c, log(m1), s0};
        if (fd->pin_m1_us > 0) x0[1] = s0;
        int status, iters;
        double rss = run_once(w, &fdf, wts, x0, &status, &iters);
        if (rss < best) {
            best = rss;
            memcpy(best_x, gsl_vector_const_ptr(gsl_multifit_nlinear_position(w), 0), xbytes);
            best_status = status;
            best_iters = iters;
        }
    }
    rc = -EDOM;
    if (!isfinite(best)) goto done;
    /* Re-run from the best solution so the workspace holds its Jacobian. */
    int status, iters;
    best = run_once(w, &fdf, wts, best_x, &status, &iters);
    if (!isfinite(best)) goto done;
    memcpy(best_x, gsl_vector_const_ptr(gsl_multifit_nlinear_position(w), 0), xbytes);
    gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 1e-12, covar);

    out->dof = (int)fd->n - fd->p;
    out->chisq = best;
    out->status = best_status;
    out->iterations = best_iters;
    double sigma2 = best / out->dof;
    double t = gsl_cdf_tdist_Pinv(t_conf, out->dof);
#define COV(i, j) (sigma2 * gsl_matrix_get(covar, (i), (j)))
    double c = best_x[0], m1, s, var_m2;
    set_symmetric(&out->c_s, c * 1e-6, sqrt(COV(0, 0)) * 1e-6, t);
    if (fd->pin_m1_us > 0) {
        m1 = fd->pin_m1_us;
        s = fabs(best_x[1]);
        out->m1_s =
            (mdl_fit_param){.value = m1 * 1e-6, .lo = m1 * 1e-6, .hi = m1 * 1e-6, .fixed = 1};
        /* m2 = m1^2 + s^2 with m1 given: gradient (0, 2 s) in (c, s) */
        var_m2 = 4.0 * s * s * COV(1, 1);
    } else {
        double a = best_x[1];
        m1 = exp(a);
        s = fabs(best_x[2]);
        double se_a = sqrt(COV(1, 1));
        out->m1_s = (mdl_fit_param){.value = m1 * 1e-6,
                                    .se = m1 * se_a * 1e-6,
                                    .lo = exp(a - t * se_a) * 1e-6,
                                    .hi = exp(a + t * se_a) * 1e-6};
        /* m2 = m1^2 + s^2: gradient (0, 2 m1^2, 2 s) in (c, a, s) */
        double g1 = 2.0 * m1 * m1, g2 = 2.0 * s;
        var_m2 = g1 * g1 * COV(1, 1) + 2.0 * g1 * g2 * COV(1, 2) + g2 * g2 * COV(2, 2);
    }
#undef COV
    double m2 = m1 * m1 + s * s;
    set_symmetric(&out->m2_s2, m2 * 1e-12, sqrt(fmax(0.0, var_m2)) * 1e-12, t);
    if (out->m2_s2.lo < 0) out->m2_s2.lo = 0;
    fill_quality(out, fd);
    rc = 0;
done:
    gsl_matrix_free(covar);
    gsl_vector_free(wts);
    gsl_multifit_nlinear_free(w);
    return rc;
}

int mdl_fit_delay(const double *lambda_per_s, const double *d_s, size_t n, const mdl_fit_opts *opts,
                  mdl_fit_result *out)
{
    mdl_fit_opts o = opts ? *opts : (mdl_fit_opts)MDL_FIT_OPTS_DEFAULT;
    if (o.conf == 0) o.conf = 0.95;
    if (!lambda_per_s || !d_s || !out || !(o.conf > 0 && o.conf < 1) ||
        (o.model != MDL_FIT_PK && o.model != MDL_FIT_KINGMAN_CA0))
        return -EINVAL;
    int pinned = !o.fix_moments && o.pin_m1_s > 0;
    if (o.pin_m1_s < 0 || !isfinite(o.pin_m1_s)) return -EINVAL;
    if (n < (o.fix_moments ? 2u : pinned ? 3u : (size_t)N_PARAMS + 1)) return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(lambda_per_s[i]) || lambda_per_s[i] < 0 || !isfinite(d_s[i])) return -EINVAL;
        if (o.weights && !(o.weights[i] > 0 && isfinite(o.weights[i]))) return -EINVAL;
    }
    double *lam = malloc(n * sizeof *lam), *d = malloc(n * sizeof *d);
    if (!lam || !d) {
        free(lam);
        free(d);
        return -ENOMEM;
    }
    double lmax = 0;
    for (size_t i = 0; i < n; i++) {
        lam[i] = lambda_per_s[i] * 1e-6;
        d[i] = d_s[i] * 1e6;
        lmax = fmax(lmax, lam[i]);
    }
    memset(out, 0, sizeof *out);
    out->model = o.model;
    out->model_name = mdl_fit_model_name(o.model);
    out->n_points = (int)n;
    fit_data fd = {.lambda_per_us = lam,
                   .d_us = d,
                   .n = n,
                   .model = o.model,
                   .pin_m1_us = pinned ? o.pin_m1_s * 1e6 : 0.0,
                   .p = pinned ? 2 : 3};
    double t_conf = 1.0 - (1.0 - o.conf) / 2.0;
    int rc;
    if (!o.fix_moments && !(lmax > 0)) {
        rc = -EINVAL; /* all rates zero: nothing to fit a pole to */
    } else {
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        rc = o.fix_moments ? fit_c_only(&fd, &o, t_conf, out) : fit_full(&fd, &o, t_conf, out);
        gsl_set_error_handler(old);
    }
    if (rc == 0 && pinned) /* exactly as given, not through the unit round trip */
        out->m1_s.value = out->m1_s.lo = out->m1_s.hi = o.pin_m1_s;
    free(lam);
    free(d);
    return rc;
}

double mdl_fit_predict(const mdl_fit_result *r, double lambda_per_s)
{
    double m1 = r->m1_s.value, m2 = r->m2_s2.value;
    double v = r->model == MDL_FIT_KINGMAN_CA0 ? fmax(0.0, m2 - m1 * m1) : m2;
    double rho = lambda_per_s * m1;
    if (rho >= 1.0) return INFINITY;
    return r->c_s.value + lambda_per_s * v / (2.0 * (1.0 - rho));
}

int mdl_fit_through_origin(const double *x, const double *y, size_t n, double conf,
                           mdl_fit_param *slope)
{
    if (!x || !y || !slope || n < 2 || !(conf > 0 && conf < 1)) return -EINVAL;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) return -EINVAL;
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    if (!(sxx > 0)) return -EINVAL;
    double b = sxy / sxx, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (y[i] - b * x[i]) * (y[i] - b * x[i]);
    double se = sqrt(ss / (double)(n - 1) / sxx);
    double t = gsl_cdf_tdist_Pinv(1.0 - (1.0 - conf) / 2.0, (double)(n - 1));
    set_symmetric(slope, b, se, t);
    return 0;
}
