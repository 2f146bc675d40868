/* mdl_verdict: the rules of mdl_verdict.h, checked in order of severity; the
 * first rule that fires decides and its figure goes into the reason. */
#include "mdl_verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *mdl_verdict_name(mdl_verdict_level level)
{
    switch (level) {
    case MDL_VERDICT_OK:
        return "OK";
    case MDL_VERDICT_AT_RISK:
        return "AT-RISK";
    case MDL_VERDICT_BIASED:
        return "BIASED";
    }
    return "?";
}

mdl_verdict_input mdl_verdict_input_none(void)
{
    return (mdl_verdict_input){
        .max_rho = NAN,
        .predicted_wq_us = NAN,
        .delay_mean_us = NAN,
        .delay_p99_us = NAN,
        .pickup_mean_us = NAN,
        .wire_share = NAN,
        .rxq_max_bytes = NAN,
        .run_delay_share = NAN,
        .steal_share = NAN,
        .lag_p99_us = NAN,
        .lag_p99_lo_us = NAN,
        .achieved_ratio = NAN,
        .arrival_p_value = NAN,
        .arrival_d = NAN,
        .safe_rho = NAN,
        .budget_mean_us = MDL_VERDICT_DEFAULT_BUDGET_MEAN_US,
        .budget_p99_us = MDL_VERDICT_DEFAULT_BUDGET_P99_US,
    };
}

static void say(mdl_verdict *out, mdl_verdict_level level, const char *cause, const char *fmt, ...)
{
    out->level = level;
    out->cause = cause;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
}

static void append(mdl_verdict *out, const char *fmt, ...)
{
    size_t used = strlen(out->reason);
    if (used + 1 >= sizeof out->reason) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason + used, sizeof out->reason - used, fmt, ap);
    va_end(ap);
}

/* The cause of a delay (figure_us, a mean or a p99), from the evidence the
 * run carries: the client's own queue when its loop is busy, or when PK's W_q
 * explains the figure, else the host. A mean is explained by W_q >= half of
 * it. A p99 is explained when it is within twice the p99 that a queue with
 * this W_q and rho would have if it were M/M/1: P(wait > x) = rho e^(-x rho
 * / W_q), so p99 = W_q ln(100 rho) / rho (no p99 wait at all below rho 0.01). */
static const char *delay_cause(const mdl_verdict_input *in, double figure_us, int p99)
{
    if (in->max_rho >= MDL_VERDICT_QUEUE_RHO) return "client queue";
    double wq = in->predicted_wq_us, rho = in->max_rho;
    if (!(wq > 0) || !(figure_us > 0)) return "host";
    if (!p99) return 2.0 * wq >= figure_us ? "client queue" : "host";
    if (!(rho > 0.01)) return "host";
    return figure_us <= 2.0 * wq * log(100.0 * rho) / rho ? "client queue" : "host";
}

/* The cause of the delay over a budget (which: 1 mean, 2 p99). */
static const char *budget_cause(const mdl_verdict_input *in, int which)
{
    if (which == 1)
        return delay_cause(
            in, isfinite(in->pickup_mean_us) ? in->pickup_mean_us : in->delay_mean_us, 0);
    return delay_cause(in, in->delay_p99_us, 1);
}

/* ": the host (run-queue wait 3.1% of the window, steal 0.0%, max rho 0.06)" */
static void append_cause(mdl_verdict *out, const mdl_verdict_input *in, const char *cause)
{
    if (strcmp(cause, "client queue") == 0) {
        append(out, ": the client's own queue (max worker rho %.2f", in->max_rho);
        if (isfinite(in->predicted_wq_us)) append(out, ", PK W_q %.0f us", in->predicted_wq_us);
        append(out, ")");
        return;
    }
    append(out, ": the host, not the client's queue (max worker rho %.2f", in->max_rho);
    if (isfinite(in->run_delay_share))
        append(out, ", run-queue wait %.1f%% of the window", 100.0 * in->run_delay_share);
    if (isfinite(in->steal_share)) append(out, ", steal %.1f%%", 100.0 * in->steal_share);
    append(out, ")");
}

/* Which budget the delay is over, if any: 1 mean, 2 p99, 0 none. */
static int over_budget(const mdl_verdict_input *in, double factor, double bm, double bp)
{
    if (in->delay_mean_us > factor * bm) return 1;
    if (in->delay_p99_us > factor * bp) return 2;
    return 0;
}

static void say_delay(mdl_verdict *out, mdl_verdict_level level, const mdl_verdict_input *in,
                      int which, double factor, double bm, double bp)
{
    const char *cause = budget_cause(in, which);
    const char *times = factor > 1 ? "10x " : "";
    if (which == 1)
        say(out, level, cause, "client delay per token mean %.0f us > %sbudget %.0f us",
            in->delay_mean_us, times, bm);
    else
        say(out, level, cause, "client delay per token p99 %.0f us > %sbudget %.0f us",
            in->delay_p99_us, times, bp);
    append_cause(out, in, cause);
}

/* The schedule lag the rules judge: the p99's lower confidence bound when
 * given, else the p99. */
static double lag_judged(const mdl_verdict_input *in)
{
    return isnan(in->lag_p99_lo_us) ? in->lag_p99_us : in->lag_p99_lo_us;
}

/* "schedule lag p99 1561 us > 1000 us", with the bound when it was judged. */
static void say_lag(mdl_verdict *out, mdl_verdict_level level, const mdl_verdict_input *in,
                    double line_us)
{
    if (isnan(in->lag_p99_lo_us))
        say(out, level, "schedule", "schedule lag p99 %.0f us > %.0f us", in->lag_p99_us, line_us);
    else
        say(out, level, "schedule",
            "schedule lag p99 %.0f us > %.0f us (its lower 95%% bound %.0f us)", in->lag_p99_us,
            line_us, in->lag_p99_lo_us);
    append_cause(out, in, delay_cause(in, in->lag_p99_us, 1));
}

void mdl_verdict_judge(const mdl_verdict_input *in, mdl_verdict *out)
{
    double bm = isfinite(in->budget_mean_us) && in->budget_mean_us > 0
                    ? in->budget_mean_us
                    : MDL_VERDICT_DEFAULT_BUDGET_MEAN_US;
    double bp = isfinite(in->budget_p99_us) && in->budget_p99_us > 0
                    ? in->budget_p99_us
                    : MDL_VERDICT_DEFAULT_BUDGET_P99_US;
    int wire = in->wire_share >= MDL_VERDICT_WIRE_SHARE;
    memset(out, 0, sizeof *out);
    out->wire_timed = wire;
    out->user_timed_biased = over_budget(in, 1.0, bm, bp) != 0;
    const double F = MDL_VERDICT_BIASED_FACTOR;

    /* NAN compares false, so an unmeasured figure never fires a rule. */
    if (in->achieved_ratio < MDL_VERDICT_BIASED_ACHIEVED_RATIO) {
        say(out, MDL_VERDICT_BIASED, "rate", "achieved rate %.1f%% of requested < %.0f%%",
            100.0 * in->achieved_ratio, 100.0 * MDL_VERDICT_BIASED_ACHIEVED_RATIO);
        return;
    }
    double lag = lag_judged(in);
    if (lag > MDL_VERDICT_BIASED_LAG_US) {
        say_lag(out, MDL_VERDICT_BIASED, in, MDL_VERDICT_BIASED_LAG_US);
        return;
    }
    if (in->max_rho >= MDL_VERDICT_BIASED_RHO) {
        say(out, MDL_VERDICT_BIASED, "client queue", "max worker rho %.2f >= %.2f", in->max_rho,
            MDL_VERDICT_BIASED_RHO);
        return;
    }
    if (in->rxq_max_bytes >= MDL_VERDICT_RXQ_BYTES && in->delay_p99_us > bp) {
        say(out, MDL_VERDICT_BIASED, "flow control",
            "receive queue reached %.0f KiB at a pickup while the client delay p99 was %.0f us "
            "(> %.0f us): TCP flow control may have held the server back",
            in->rxq_max_bytes / 1024.0, in->delay_p99_us, bp);
        return;
    }
    if (!wire) {
        int which = over_budget(in, F, bm, bp);
        if (which) {
            say_delay(out, MDL_VERDICT_BIASED, in, which, F, bm, bp);
            return;
        }
    }

    if (isfinite(in->safe_rho)) {
        if (in->max_rho > in->safe_rho) {
            say(out, MDL_VERDICT_AT_RISK, "client queue",
                "max worker rho %.2f > certified safe rho %.2f", in->max_rho, in->safe_rho);
            return;
        }
    } else if (in->max_rho > MDL_VERDICT_UNCERTIFIED_RHO) {
        say(out, MDL_VERDICT_AT_RISK, "client queue", "max worker rho %.2f > %.2f (no certificate)",
            in->max_rho, MDL_VERDICT_UNCERTIFIED_RHO);
        return;
    }
    if (!wire && in->predicted_wq_us > bm) {
        say(out, MDL_VERDICT_AT_RISK, "client queue",
            "predicted client W_q %.0f us > budget %.0f us", in->predicted_wq_us, bm);
        return;
    }
    if (lag > MDL_VERDICT_AT_RISK_LAG_US) {
        say_lag(out, MDL_VERDICT_AT_RISK, in, MDL_VERDICT_AT_RISK_LAG_US);
        return;
    }
    if (in->arrival_p_value < MDL_VERDICT_AT_RISK_ARRIVAL_P &&
        !(in->arrival_d <= MDL_VERDICT_AT_RISK_ARRIVAL_D)) {
        say(out, MDL_VERDICT_AT_RISK, "schedule",
            "arrival test p-value %.2g < %.3g (KS D %.3f): the offered gaps differ from the "
            "intended ones",
            in->arrival_p_value, MDL_VERDICT_AT_RISK_ARRIVAL_P, in->arrival_d);
        return;
    }
    if (!wire) {
        int which = over_budget(in, 1.0, bm, bp);
        if (which) {
            say_delay(out, MDL_VERDICT_AT_RISK, in, which, 1.0, bm, bp);
            return;
        }
    }

    out->level = MDL_VERDICT_OK;
    out->cause = "none";
    char rho[48] = "rho not measured";
    if (isfinite(in->max_rho)) snprintf(rho, sizeof rho, "max worker rho %.2f", in->max_rho);
    snprintf(out->reason, sizeof out->reason, "%s%s", rho, wire ? ", wire-timed" : "");
    if (out->user_timed_biased) {
        /* Wire-timed: the delay is reported, not counted. */
        int which = over_budget(in, 1.0, bm, bp);
        const char *cause = budget_cause(in, which);
        out->cause = cause;
        append(out, "; its receive times leave the client's own delay out of the figures: "
                    "user-timed ones would have been biased, ");
        if (which == 1)
            append(out, "its delay per token (mean %.0f us) being over their budget of %.0f us",
                   in->delay_mean_us, bm);
        else
            append(out, "its delay per token (p99 %.0f us) being over their budget of %.0f us",
                   in->delay_p99_us, bp);
        append_cause(out, in, cause);
    } else if (isfinite(in->delay_mean_us)) {
        append(out,
               "; client delay per token mean %.0f us, p99 %.0f us within budgets %.0f/%.0f us",
               in->delay_mean_us, in->delay_p99_us, bm, bp);
    } else {
        append(out, " within budget");
    }
    /* A p99 over the line that the sample cannot tell from 1% by chance. */
    if (in->lag_p99_us > MDL_VERDICT_AT_RISK_LAG_US)
        append(out,
               "; schedule lag p99 %.0f us, but its lower 95%% bound %.0f us is within %.0f us: "
               "too few late dispatches to call it over",
               in->lag_p99_us, in->lag_p99_lo_us, MDL_VERDICT_AT_RISK_LAG_US);
}
