/* cal_rule: the certification rule of cal_rule.h. */
#include "cal_rule.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int cal_rule_within(double delay_us, double err_us, double transport_us, int saturated,
                    double budget_us)
{
    double err = isfinite(err_us) && err_us > 0 ? err_us : 0;
    double c = isfinite(transport_us) ? transport_us : 0;
    return !saturated && isfinite(delay_us) && delay_us - c + err <= budget_us;
}

/* A point's delay is already net of the transport (cal_point). */
static int within(const cal_point *p, double budget_us)
{
    return isfinite(p->rho) &&
           cal_rule_within(p->delay_us, p->err_us, NAN, p->saturated, budget_us);
}

/* A point over budget by its measurement: it did not keep up, or its mean
 * delay is over the budget. A confirmed point that is neither within nor
 * over (within by its mean, over only by its error bar) is undecided. */
static int over(const cal_point *p, double budget_us)
{
    return p->saturated || !cal_rule_within(p->delay_us, 0, NAN, 0, budget_us);
}

int cal_rule_undecided(const cal_point *p, double budget_us)
{
    return p->confirmed && !within(p, budget_us) && !over(p, budget_us);
}

/* offered below a saturated level's rate (a level of unknown rate is not) */
static int below_rate(const cal_point *p, double bad_rate)
{
    if (!isfinite(bad_rate)) return 1;
    return isfinite(p->rate) && p->rate > 0 && p->rate < bad_rate;
}

const char *cal_limit_name(cal_limit l)
{
    switch (l) {
    case CAL_LIMIT_MODEL:
        return "model";
    case CAL_LIMIT_MEASURED:
        return "measured range";
    case CAL_LIMIT_OVER:
        return "over budget";
    case CAL_LIMIT_FIT:
        return "goodness of fit";
    default:
        return "none";
    }
}

static double x_of(double rho)
{
    return rho / (1.0 - rho);
}

double cal_rule_cross(double rho_a, double ya, double rho_b, double yb, double budget)
{
    if (!(yb > budget) || !(yb > ya)) return rho_b;
    if (ya >= budget) return rho_a;
    double xa = x_of(rho_a), xb = x_of(rho_b);
    double x = xa + (budget - ya) / (yb - ya) * (xb - xa);
    return x / (1.0 + x);
}

/* The level over budget that bounds the crossing: the lowest above
 * measured_rho (p[i_best]) that kept up, confirmed or not. An unconfirmed
 * one has not been refuted (a refuted level never reaches the rule: its
 * repeat overruled it), so it caps too; one below measured_rho is refuted
 * by the level within budget above it. Measured: two quiet quick runs' k=2
 * levels at rho 0.32 and 0.38, within budget by the sweep's bars and over by
 * the final ones, were never repeated; with only a saturated level above
 * them the certificates fell to the grid point below, 0.099 and 0.082, where
 * the other three certified 0.29-0.34. Returns the certified crossing (of
 * the upper bounds), or measured_rho when there is no such level; fills
 * out's crossing fields. */
static double crossing(const cal_point *p, int n, double budget_us, int i_best, double bad,
                       double bad_rate, cal_rule_result *out)
{
    double best = p[i_best].rho;
    int i_over = -1;
    for (int i = 0; i < n; i++) {
        if (within(&p[i], budget_us) || p[i].saturated || !isfinite(p[i].delay_us) ||
            !(p[i].rho > best) || !(p[i].rho <= bad) || !(p[i].rho < 1) ||
            !below_rate(&p[i], bad_rate))
            continue;
        if (i_over < 0 || p[i].rho < p[i_over].rho) i_over = i;
    }
    if (i_over < 0) return best;
    /* The crossing between the last level within and the first over: no
     * grid point, and one level 13 us over no longer halves the figure. */
    const cal_point *a = &p[i_best], *b = &p[i_over];
    double ea = isfinite(a->err_us) && a->err_us > 0 ? a->err_us : 0;
    double eb = isfinite(b->err_us) && b->err_us > 0 ? b->err_us : 0;
    double cross = cal_rule_cross(a->rho, a->delay_us + ea, b->rho, b->delay_us + eb, budget_us);
    out->crossing_rho = cal_rule_cross(a->rho, a->delay_us, b->rho, b->delay_us, budget_us);
    out->crossing_rho_ci[0] = cross;
    out->crossing_rho_ci[1] =
        cal_rule_cross(a->rho, a->delay_us - ea, b->rho, b->delay_us - eb, budget_us);
    out->interpolated = cross > best;
    out->over_rho = b->rho;
    out->over_confirmed = b->confirmed;
    out->over_by_bar = !over(b, budget_us);
    return cross;
}

int cal_rule_certify(const cal_point *p, int n, double budget_us, double model_rho, int fit_ok,
                     cal_rule_result *out)
{
    memset(out, 0, sizeof *out);
    out->safe_rho = out->measured_rho = out->bad_rho = NAN;
    out->crossing_rho = out->crossing_rho_ci[0] = out->crossing_rho_ci[1] = NAN;
    /* the lowest confirmed bad level caps everything above it */
    double bad = INFINITY; /* rho cap: bad levels that kept up, saturated ones of unknown rate */
    double bad_rate = INFINITY;  /* offered-rate cap: saturated levels */
    double bad_shown = INFINITY; /* the lowest rho of a bad level, for bad_rho */
    for (int i = 0; i < n; i++) {
        if (within(&p[i], budget_us)) continue;
        if (!p[i].confirmed) {
            out->n_ignored++;
            continue;
        }
        /* Within budget by its mean, over only by its bar: one stalled
         * batch among quiet ones widens a level's bar (measured: a placed
         * k=1 level at rho 0.05, batches of 278, 35, 26, 49, 15 and 22 us,
         * mean 71 +- 108, capped levels within budget up to rho 0.43, and
         * the certificate fell to 0.037). It caps nothing; above the
         * highest level within it still bounds the crossing. */
        if (cal_rule_undecided(&p[i], budget_us)) {
            out->n_undecided++;
            continue;
        }
        out->n_bad++;
        double r = isfinite(p[i].rho) ? p[i].rho : 0;
        if (p[i].saturated && isfinite(p[i].rate) && p[i].rate > 0) {
            if (p[i].rate < bad_rate) bad_rate = p[i].rate;
        } else if (r < bad) {
            bad = r;
        }
        if (r < bad_shown) bad_shown = r;
    }
    double best = -1;
    int i_best = -1;
    for (int i = 0; i < n; i++) {
        if (!within(&p[i], budget_us)) continue;
        if (!(p[i].rho < bad && below_rate(&p[i], bad_rate))) {
            out->n_capped++;
            continue;
        }
        out->n_within++;
        if (p[i].rho > best) {
            best = p[i].rho;
            i_best = i;
        }
    }
    if (isfinite(bad_shown)) out->bad_rho = bad_shown;
    if (best < 0) {
        out->limit = CAL_LIMIT_NONE;
        snprintf(out->note, sizeof out->note, "no level was measured within the budget of %g us%s",
                 budget_us,
                 isfinite(bad) || isfinite(bad_rate) ? " below the first level over it" : "");
        return -ENODATA;
    }
    out->measured_rho = best;
    double cross = crossing(p, n, budget_us, i_best, bad, bad_rate, out);
    int have_model = fit_ok && isfinite(model_rho) && model_rho > 0;
    /* The fit's bound caps only above the levels measured within budget:
     * a level whose own upper bound is within budget is direct evidence,
     * where a fit of a few levels may have a wide bound on R (k=2's 0.052
     * with levels within budget up to 0.086, R's interval [115, 1809] us). */
    if (have_model && model_rho < cross && model_rho > best) {
        out->safe_rho = model_rho;
        out->limit = CAL_LIMIT_MODEL;
        snprintf(out->note, sizeof out->note,
                 "the fit's upper 95%% bound reaches the budget at rho %.3f (measured within "
                 "budget up to %.3f)",
                 model_rho, best);
        return 0;
    }
    out->safe_rho = cross;
    if (!fit_ok) {
        out->limit = CAL_LIMIT_FIT;
        snprintf(out->note, sizeof out->note,
                 "no fit passed its goodness-of-fit test: certified over the measured range only, "
                 "up to rho %.3f",
                 cross);
    } else if (out->interpolated) {
        out->limit = CAL_LIMIT_OVER;
        snprintf(out->note, sizeof out->note,
                 "the delay crosses the budget between rho %.3f (within) and %.3f (over%s, %s): "
                 "at rho %.3f [%.3f, %.3f]; certified %.3f",
                 best, out->over_rho, out->over_by_bar ? " by its error bar" : "",
                 out->over_confirmed ? "confirmed by a repeat" : "not measured again",
                 out->crossing_rho, out->crossing_rho_ci[0], out->crossing_rho_ci[1], cross);
    } else if (isfinite(bad) || isfinite(bad_rate)) {
        out->limit = CAL_LIMIT_OVER;
        if (!isfinite(bad))
            snprintf(out->note, sizeof out->note,
                     "the level offered at %.0f/s did not keep up (confirmed by a repeat): "
                     "certified up to the highest level below it measured within budget, rho %.3f",
                     bad_rate, best);
        else
            snprintf(out->note, sizeof out->note,
                     "the level at rho %.3f was over budget (confirmed by a repeat): certified up "
                     "to the highest level below it measured within budget, rho %.3f",
                     bad, best);
    } else {
        out->limit = CAL_LIMIT_MEASURED;
        snprintf(out->note, sizeof out->note,
                 "not measured beyond rho = %.3f (the fit would allow %.3f)", best, model_rho);
    }
    return 0;
}
