/* mdl_verdict: the judgement every report (and every stage of it) carries on
 * the client's own bias. Pure: takes what the run measured, returns a level,
 * the cause named from evidence, and a one-line reason naming the deciding
 * figure ("max worker rho 0.93 >= 0.90").
 *
 * Two kinds of figures are judged apart:
 *  - What biases every latency the report gives, wire-timed or not: the load
 *    that was offered (achieved rate, schedule lag, arrival process), a loop
 *    so busy that it falls behind (rho), and a receive queue so deep that TCP
 *    flow control may have held the server back.
 *  - The client's own delay per token (kernel arrival to delivery). When the
 *    receive times come exactly from the kernel (wire-timed: wire_share, the
 *    share of tokens the kernel timed exactly, >= 0.99) it
 *    no longer enters the headline figures, so it cannot lower the verdict:
 *    the verdict sets user_timed_biased and says that figures timed on
 *    delivery (the report's user_timed block) would have been biased. When
 *    the times are the loop's own, it is judged like for like: the mean
 *    against the mean budget, the p99 against the p99 budget.
 *
 * The rules, checked in this order; the first that fires decides. A figure
 * that was not measured (NAN) never fires a rule. Thresholds are strict (>)
 * except rho >= 0.90 and ratio < 0.95.
 *   BIASED   achieved/requested rate < 0.95                   cause "rate"
 *            schedule lag p99 > 10 ms, judged on its lower
 *            95% confidence bound (below)                     cause "schedule"
 *            max worker rho >= 0.90                           cause "client queue"
 *            receive queue max >= 64 KiB while the client delay p99 is over
 *            its budget (the default initial receive window: the server may
 *            have been stopped by flow control)                cause "flow control"
 *            not wire-timed: delay mean > 10 x mean budget, or
 *            delay p99 > 10 x p99 budget                      cause from evidence
 *   AT-RISK  max worker rho > the certificate's safe_rho, or, without a
 *            certificate, > 0.5                               cause "client queue"
 *            not wire-timed: predicted W_q > mean budget      cause "client queue"
 *            schedule lag p99 > 1 ms, judged on its lower
 *            95% confidence bound (below)                     cause "schedule"
 *            arrival test p < 0.001 with KS D > 0.05          cause "schedule"
 *            not wire-timed: delay mean > mean budget, or p99 > p99 budget
 *                                                             cause from evidence
 *   OK       otherwise. When wire-timed and the delay is over a budget, the
 *            reason says so, with its cause, and user_timed_biased is set.
 * The cause of a client delay, from evidence:
 *   "client queue"  max rho >= 0.5, or PK's W_q explains the figure: at
 *                   least half a mean (the pickup delay's); a p99 within
 *                   twice an M/M/1 queue's with that W_q and rho,
 *                   W_q ln(100 rho) / rho (none below rho 0.01)
 *   "host"          otherwise: the reason gives the run-queue wait share and
 *                   the steal share when measured (wake-ups of an idle vCPU
 *                   show in neither, and are the host's too).
 * A schedule-lag rule keeps the cause "schedule" and its reason names, by
 * the same evidence, whether the loop's queue or the host delayed dispatch.
 * The schedule lag's p99 is judged by the sample, not by its point estimate:
 * a stage of 279 dispatches has its 3rd-latest lag for p99, so a host whose
 * wake-ups are late by over 1 ms for 0.5% of dispatches would be called
 * AT-RISK in about one stage in six. The rules compare lag_p99_lo_us, the
 * p99's lower 95% bound (one-sided; the order statistic that the binomial
 * law puts below the p99 with 95% confidence), and fire only when the late
 * dispatches are too many to be 1% by chance; without it (NAN) the p99
 * itself. A p99 over a line whose bound is not is named in the OK reason. */
#ifndef MDL_VERDICT_H
#define MDL_VERDICT_H

typedef enum {
    MDL_VERDICT_OK = 0,
    MDL_VERDICT_AT_RISK = 1,
    MDL_VERDICT_BIASED = 2
} mdl_verdict_level;

#define MDL_VERDICT_DEFAULT_BUDGET_MEAN_US 100.0
#define MDL_VERDICT_DEFAULT_BUDGET_P99_US 2000.0
#define MDL_VERDICT_BIASED_ACHIEVED_RATIO 0.95
#define MDL_VERDICT_BIASED_RHO 0.90
#define MDL_VERDICT_BIASED_FACTOR 10.0
#define MDL_VERDICT_BIASED_LAG_US 10000.0
#define MDL_VERDICT_UNCERTIFIED_RHO 0.5
#define MDL_VERDICT_AT_RISK_LAG_US 1000.0
#define MDL_VERDICT_AT_RISK_ARRIVAL_P 0.001
#define MDL_VERDICT_AT_RISK_ARRIVAL_D 0.05
#define MDL_VERDICT_WIRE_SHARE 0.99
#define MDL_VERDICT_RXQ_BYTES 65536.0
#define MDL_VERDICT_QUEUE_RHO 0.5

typedef struct mdl_verdict_input {
    double max_rho;         /* the largest per-worker measured utilisation, [0,1] */
    double predicted_wq_us; /* PK's W_q from the run's own moments, worst worker */
    double delay_mean_us;   /* the client's own delay per token, mean */
    double delay_p99_us;    /* ... and p99 */
    double pickup_mean_us;  /* kernel arrival to the loop's pickup, mean */
    double wire_share;      /* share of tokens the kernel timed exactly, [0,1] */
    double rxq_max_bytes;   /* the deepest receive queue seen at a pickup */
    double run_delay_share; /* worst worker: runnable-but-waiting time over its window */
    double steal_share;     /* the host's steal time over its CPU time */
    double lag_p99_us;      /* schedule lag p99 (NAN: closed loop) */
    double lag_p99_lo_us;   /* its lower 95% confidence bound (NAN: the p99 is judged) */
    double achieved_ratio;  /* achieved / requested rate (NAN: closed loop, infinite rate) */
    double arrival_p_value; /* the arrival test's p-value */
    double arrival_d;       /* its KS statistic D (NAN: p alone decides) */
    double safe_rho;        /* from the certificate (NAN: none) */
    double budget_mean_us;  /* the client-delay budgets (defaults above when not > 0) */
    double budget_p99_us;
} mdl_verdict_input;

/* An input with every figure unmeasured (NAN) and the default budgets. */
mdl_verdict_input mdl_verdict_input_none(void);

typedef struct mdl_verdict {
    mdl_verdict_level level;
    const char *cause;     /* "none", "rate", "schedule", "client queue", "flow control", "host" */
    int wire_timed;        /* the headline figures are wire-timed */
    int user_timed_biased; /* the client's delay was over a budget */
    char reason[640];      /* room for the rule's sentence and the wire clock's clause (lg_bias) */
} mdl_verdict;

void mdl_verdict_judge(const mdl_verdict_input *in, mdl_verdict *out);
/* "OK", "AT-RISK", "BIASED". */
const char *mdl_verdict_name(mdl_verdict_level level);

#endif
