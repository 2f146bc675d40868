/* mdl_queue: queueing formulas for the client seen as a server of its own
 * events. Pure. Rates in events per second, times in seconds unless a name
 * says otherwise. Every function returns NAN for parameters outside its
 * domain (negative or non-finite rates, moments or budgets, E[S] <= 0) and
 * INFINITY for an unstable queue (rho >= 1).
 *
 * Why these: a benchmark client's event loop is a single server whose
 * customers are its own callbacks (socket readiness, timers). Tokens that
 * arrive while it is busy wait in the kernel, and that wait is recorded as
 * server latency. With Poisson arrivals PK gives the mean wait exactly for any
 * service law; Kingman's heavy-traffic approximation covers other arrival
 * processes (constant-rate, gamma). Splitting the load over k processes
 * divides lambda, hence rho, by k. Thread-safe (no state). */
#ifndef MDL_QUEUE_H
#define MDL_QUEUE_H

/* Utilisation rho = lambda * E[S]. */
double mdl_rho(double lambda, double es);
/* M/G/1, Pollaczek-Khinchine: W_q = lambda E[S^2] / (2 (1 - rho)). */
double mdl_mg1_wq(double lambda, double es, double es2);
/* Mean time in system W = W_q + E[S]; mean queue length L_q = lambda W_q (Little). */
double mdl_mg1_w(double lambda, double es, double es2);
double mdl_mg1_lq(double lambda, double es, double es2);
/* M/M/1 (E[S^2] = 2 E[S]^2) and M/D/1 (E[S^2] = E[S]^2). */
double mdl_mm1_wq(double lambda, double es);
double mdl_md1_wq(double lambda, double es);
/* Kingman's G/G/1 approximation: W_q ~ rho/(1-rho) (ca2 + cs2)/2 E[S], with
 * ca2, cs2 the squared coefficients of variation of inter-arrival and service
 * times (ca2 = 0 for constant-rate arrivals, 1 for Poisson). */
double mdl_kingman_wq(double lambda, double es, double ca2, double cs2);
/* The k-process split: rho_k = lambda / (k mu) = lambda E[S] / k. */
double mdl_rho_k(double lambda, int k, double es);
/* The largest lambda for which M/G/1's W_q <= budget (seconds):
 * lambda* = 2 b / (E[S^2] + 2 b E[S]). */
double mdl_mg1_max_lambda(double es, double es2, double budget_s);
/* The same under Kingman's approximation; with ca2 = cs2 = 0 (no queue at
 * all) it is the stability limit 1/E[S]. A zero budget gives 0. */
double mdl_kingman_max_lambda(double es, double ca2, double cs2, double budget_s);

#endif
