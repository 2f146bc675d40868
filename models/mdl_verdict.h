/* mdl_verdict: the judgement every report carries on the client's own bias.
 * Pure: takes what the run measured, returns a level and a one-line reason. */
#ifndef MDL_VERDICT_H
#define MDL_VERDICT_H

typedef enum { MDL_VERDICT_OK = 0, MDL_VERDICT_AT_RISK = 1, MDL_VERDICT_BIASED = 2 } mdl_verdict_level;

typedef struct mdl_verdict_input {
    double max_rho;          /* the largest per-worker measured utilisation, [0,1] */
    double predicted_wq_us;  /* PK's W_q from the run's own moments, worst worker (NAN: unknown) */
    double overhead_p99_us;  /* client overhead per token, p99 (NAN: no stamps) */
    double lag_p99_us;       /* schedule lag p99 (NAN: closed loop) */
    double achieved_ratio;   /* achieved / requested rate (NAN: closed loop or infinite rate) */
    double arrival_p_value;  /* the arrival test's p-value (NAN: not tested) */
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
