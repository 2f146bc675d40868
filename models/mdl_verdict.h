/* mdl_verdict: the judgement every report carries on the client's own bias.
 * Pure: takes what the run measured, returns a level and a one-line reason.
 *
 * The rules, checked in this order; the first that fires decides, and the
 * reason names its figure ("max worker rho 0.93 >= 0.90"). A figure that was
 * not measured (NAN) never fires a rule. b is budget_us (100 when not > 0).
 *   BIASED   achieved/requested rate < 0.95   (the client could not keep up:
 *                                              the offered load was not offered)
 *            max worker rho >= 0.90           (PK's 1/(1-rho) has left its knee)
 *            predicted W_q > 10 b
 *            schedule lag p99 > 10 ms
 *            client overhead per token p99 > 10 b (when max rho < 0.5 the
 *                                              reason says the host, not the
 *                                              client's own queue, is to blame)
 *   AT-RISK  max worker rho > the certificate's safe_rho, or, without a
 *            certificate, > 0.5 (W_q is then already E[S^2]/E[S], about one
 *            to two service times, and grows fast)
 *            predicted W_q > b
 *            schedule lag p99 > 1 ms
 *            client delay per token, mean, over transport > b (the mean
 *            overhead less the certificate's transport term; the budget,
 *            like PK's W_q, is a mean: a p99 over b is the host's wake-up
 *            noise at any load and would make every run AT-RISK)
 *            arrival test p-value < 0.001 and KS statistic D > 0.05 (the
 *            offered process is measurably not the one asked for, so PK's
 *            Poisson premise fails too; with tens of thousands of gaps a
 *            few microseconds of dispatch jitter alone reach p < 0.001,
 *            hence the effect size)
 *   OK       otherwise; the reason gives max rho and W_q against the budget.
 * Boundaries: a figure exactly at an AT-RISK threshold is OK (strict >), rho
 * exactly 0.90 is BIASED (>=), a ratio of exactly 0.95 is not BIASED. */
#ifndef MDL_VERDICT_H
#define MDL_VERDICT_H

typedef enum {
    MDL_VERDICT_OK = 0,
    MDL_VERDICT_AT_RISK = 1,
    MDL_VERDICT_BIASED = 2
} mdl_verdict_level;

#define MDL_VERDICT_DEFAULT_BUDGET_US 100.0
#define MDL_VERDICT_BIASED_ACHIEVED_RATIO 0.95
#define MDL_VERDICT_BIASED_RHO 0.90
#define MDL_VERDICT_BIASED_FACTOR 10.0
#define MDL_VERDICT_BIASED_LAG_US 10000.0
#define MDL_VERDICT_UNCERTIFIED_RHO 0.5
#define MDL_VERDICT_AT_RISK_LAG_US 1000.0
#define MDL_VERDICT_AT_RISK_ARRIVAL_P 0.001
#define MDL_VERDICT_AT_RISK_ARRIVAL_D 0.05

typedef struct mdl_verdict_input {
    double max_rho;          /* the largest per-worker measured utilisation, [0,1] */
    double predicted_wq_us;  /* PK's W_q from the run's own moments, worst worker (NAN: unknown) */
    double overhead_p99_us;  /* client overhead per token, p99 (NAN: no stamps) */
    double overhead_mean_us; /* client overhead per token, mean (NAN: no stamps) */
    double transport_us;     /* the certificate's transport term (NAN or 0: none) */
    double lag_p99_us;       /* schedule lag p99 (NAN: closed loop) */
    double achieved_ratio;   /* achieved / requested rate (NAN: closed loop or infinite rate) */
    double arrival_p_value;  /* the arrival test's p-value (NAN: not tested) */
    double arrival_d;        /* its KS statistic D (NAN: unknown, p alone decides) */
    double safe_rho;         /* from the certificate (NAN: none) */
    double budget_us;        /* the client-delay budget (default 100) */
} mdl_verdict_input;

typedef struct mdl_verdict {
    mdl_verdict_level level;
    char reason[256];
} mdl_verdict;

void mdl_verdict_judge(const mdl_verdict_input *in, mdl_verdict *out);
/* "OK", "AT-RISK", "BIASED". */
const char *mdl_verdict_name(mdl_verdict_level level);

#endif
