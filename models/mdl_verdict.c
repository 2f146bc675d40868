/* mdl_verdict: the rules of mdl_verdict.h, checked in order of severity; the
 * first rule that fires decides and its figure goes into the reason. */
#include "mdl_verdict.h"

#include <math.h>
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

static void decide(mdl_verdict *out, mdl_verdict_level level, const char *fmt, double a, double b)
{
    out->level = level;
    snprintf(out->reason, sizeof out->reason, fmt, a, b);
}

void mdl_verdict_judge(const mdl_verdict_input *in, mdl_verdict *out)
{
    double budget = isfinite(in->budget_us) && in->budget_us > 0.0 ? in->budget_us
                                                                   : MDL_VERDICT_DEFAULT_BUDGET_US;
    /* NAN compares false, so an unmeasured figure never fires a rule. */
    if (in->achieved_ratio < MDL_VERDICT_BIASED_ACHIEVED_RATIO) {
        decide(out, MDL_VERDICT_BIASED, "achieved rate %.1f%% of requested < %.0f%%",
               100.0 * in->achieved_ratio, 100.0 * MDL_VERDICT_BIASED_ACHIEVED_RATIO);
        return;
    }
    if (in->max_rho >= MDL_VERDICT_BIASED_RHO) {
        decide(out, MDL_VERDICT_BIASED, "max worker rho %.2f >= %.2f", in->max_rho,
               MDL_VERDICT_BIASED_RHO);
        return;
    }
    if (in->predicted_wq_us > MDL_VERDICT_BIASED_FACTOR * budget) {
        decide(out, MDL_VERDICT_BIASED, "predicted client W_q %.0f us > 10x budget %.0f us",
               in->predicted_wq_us, budget);
        return;
    }
    if (in->lag_p99_us > MDL_VERDICT_BIASED_LAG_US) {
        decide(out, MDL_VERDICT_BIASED, "schedule lag p99 %.0f us > %.0f us", in->lag_p99_us,
               MDL_VERDICT_BIASED_LAG_US);
        return;
    }
    if (in->overhead_p99_us > MDL_VERDICT_BIASED_FACTOR * budget) {
        decide(out, MDL_VERDICT_BIASED, "client overhead p99 %.0f us > 10x budget %.0f us",
               in->overhead_p99_us, budget);
        if (in->max_rho < MDL_VERDICT_UNCERTIFIED_RHO) {
            size_t used = strlen(out->reason);
            snprintf(out->reason + used, sizeof out->reason - used,
                     " with max worker rho %.2f: the host (CPUs shared or busy), not the "
                     "client's own queue",
                     in->max_rho);
        }
        return;
    }

    if (isfinite(in->safe_rho)) {
        if (in->max_rho > in->safe_rho) {
            decide(out, MDL_VERDICT_AT_RISK, "max worker rho %.2f > certified safe rho %.2f",
                   in->max_rho, in->safe_rho);
            return;
        }
    } else if (in->max_rho > MDL_VERDICT_UNCERTIFIED_RHO) {
        {
            decide(out, MDL_VERDICT_AT_RISK, "max worker rho %.2f > %.2f (no certificate)",
                   in->max_rho, MDL_VERDICT_UNCERTIFIED_RHO);
            return;
        }
    }
    if (in->predicted_wq_us > budget) {
        decide(out, MDL_VERDICT_AT_RISK, "predicted client W_q %.0f us > budget %.0f us",
               in->predicted_wq_us, budget);
        return;
    }
    if (in->lag_p99_us > MDL_VERDICT_AT_RISK_LAG_US) {
        decide(out, MDL_VERDICT_AT_RISK, "schedule lag p99 %.0f us > %.0f us", in->lag_p99_us,
               MDL_VERDICT_AT_RISK_LAG_US);
        return;
    }
    double transport = isfinite(in->transport_us) && in->transport_us > 0 ? in->transport_us : 0.0;
    if (in->overhead_mean_us - transport > budget) {
        decide(out, MDL_VERDICT_AT_RISK,
               "client delay per token %.0f us over transport > budget %.0f us",
               in->overhead_mean_us - transport, budget);
        return;
    }
    if (in->arrival_p_value < MDL_VERDICT_AT_RISK_ARRIVAL_P &&
        !(in->arrival_d <= MDL_VERDICT_AT_RISK_ARRIVAL_D)) {
        decide(out, MDL_VERDICT_AT_RISK, "arrival test p-value %.2g < %.3g", in->arrival_p_value,
               MDL_VERDICT_AT_RISK_ARRIVAL_P);
        return;
    }

    char rho[48] = "rho not measured";
    if (isfinite(in->max_rho)) snprintf(rho, sizeof rho, "max worker rho %.2f", in->max_rho);
    char wq[64] = "";
    if (isfinite(in->predicted_wq_us))
        snprintf(wq, sizeof wq, ", predicted W_q %.1f us", in->predicted_wq_us);
    out->level = MDL_VERDICT_OK;
    snprintf(out->reason, sizeof out->reason, "%s%s within budget %.0f us", rho, wq, budget);
}
