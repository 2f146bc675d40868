/* lg_bias: the per-stage client-bias figures and verdict of lg_bias.h. */
#include "lg_bias.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdl_queue.h"
#include "mdl_stats.h"

void lg_dist_of(const mdl_hist *h, double scale, lg_dist *d)
{
    d->n = h->total;
    if (!h->total) {
        d->mean = d->p50 = d->p99 = d->max = NAN;
        return;
    }
    d->mean = mdl_hist_mean(h) / scale;
    d->p50 = (double)mdl_hist_percentile(h, 50.0) / scale;
    d->p99 = (double)mdl_hist_percentile(h, 99.0) / scale;
    d->max = (double)h->max / scale;
}

void lg_bias_worker_loop(const lg_stage_stats *s, double *rho, double *wq_us,
                         double *run_delay_share)
{
    *rho = *wq_us = *run_delay_share = NAN;
    if (s->loop_window_ns <= 0) return;
    double win = (double)s->loop_window_ns;
    double r = 1.0 - (double)s->loop_idle_ns / win;
    *rho = r < 0 ? 0 : (r > 1 ? 1 : r);
    *run_delay_share = (double)s->run_delay_ns / win;
    if (s->svc_n) {
        double lambda = (double)s->svc_n / (win / 1e9);
        double es = s->svc_sum_ns / (double)s->svc_n / 1e9;
        double es2 = s->svc_sumsq_ns2 / (double)s->svc_n / 1e18;
        *wq_us = mdl_mg1_wq(lambda, es, es2) * 1e6;
    }
}

void lg_bias_stage_figures(const lg_stage_stats *const *blocks, int k, const lg_stage_stats *merged,
                           int closed, lg_bias_stage *b)
{
    memset(b, 0, sizeof *b);
    b->max_rho = b->predicted_wq_us = b->run_delay_share = NAN;
    b->worst_worker = -1;
    for (int w = 0; w < k; w++) {
        if (!blocks[w]) continue;
        double rho, wq, rd;
        lg_bias_worker_loop(blocks[w], &rho, &wq, &rd);
        if (isfinite(rho) && (isnan(b->max_rho) || rho > b->max_rho)) {
            b->max_rho = rho;
            b->worst_worker = w;
        }
        if (isfinite(wq) && (isnan(b->predicted_wq_us) || wq > b->predicted_wq_us))
            b->predicted_wq_us = wq;
        if (isfinite(rd) && (isnan(b->run_delay_share) || rd > b->run_delay_share))
            b->run_delay_share = rd;
    }
    const lg_stage_stats *s = merged;
    lg_dist_of(lg_stats_hist_c(s, LG_H_CLIENT_DELAY), 1e3, &b->client_delay_us);
    lg_dist_of(lg_stats_hist_c(s, LG_H_PICKUP), 1e3, &b->pickup_delay_us);
    lg_dist_of(lg_stats_hist_c(s, LG_H_PROCESSING), 1e3, &b->processing_us);
    lg_dist_of(lg_stats_hist_c(s, LG_H_SERVER_SEND), 1e3, &b->server_send_us);
    lg_dist_of(lg_stats_hist_c(s, LG_H_OVERHEAD), 1e3, &b->overhead_us);
    lg_dist_of(lg_stats_hist_c(s, LG_H_RXQ), 1.0, &b->rx_queue_bytes);
    lg_dist_of(lg_stats_hist_c(s, LG_H_RX_WINDOW), 1e3, &b->rx_window_us);
    b->kernel_tokens = s->rx_kernel_tokens;
    b->exact_tokens = s->rx_exact_tokens;
    b->user_tokens = s->rx_user_tokens;
    b->wire_tokens = s->rx_wire_tokens;
    b->pickups = s->pickups;
    uint64_t all = s->rx_kernel_tokens + s->rx_user_tokens;
    b->wire_share = all ? (double)s->rx_kernel_tokens / (double)all : NAN;
    b->exact_share = all ? (double)s->rx_exact_tokens / (double)all : NAN;
    b->capture_share = all ? (double)s->rx_wire_tokens / (double)all : NAN;
    b->run_delay_ms = (double)s->run_delay_ns / 1e6;
    b->nivcsw = (double)s->nivcsw;
    b->steal_share = s->host_cpu_ns > 0 ? (double)s->host_steal_ns / (double)s->host_cpu_ns : NAN;
    b->lag_p99_us = b->lag_p99_lo_us = NAN;
    b->achieved_ratio = NAN;
    if (!closed && s->dispatched) {
        b->lag_p99_us = (double)mdl_hist_percentile(lg_stats_hist_c(s, LG_H_LAG), 99.0) / 1e3;
        /* The p99's lower bound at 95%, one-sided: the low end of the
         * two-sided 90% interval (the verdict judges it, mdl_verdict.h). */
        uint64_t lo;
        if (mdl_hist_percentile_ci(lg_stats_hist_c(s, LG_H_LAG), 99.0, 0.90, &lo, NULL) == 0)
            b->lag_p99_lo_us = (double)lo / 1e3;
        if (s->dispatched > 1) {
            /* Stretch of the dispatch span over the intended span: noise-free,
             * unlike dispatched / (rate x window). */
            double span_i = (double)(s->last_intended_ns - s->first_intended_ns);
            double span_d = (double)(s->last_dispatch_ns - s->first_intended_ns);
            if (span_i > 0 && span_d > 0) b->achieved_ratio = fmin(1.0, span_i / span_d);
        }
    }
    b->arrival.statistic = b->arrival.p_value = NAN;
}

void lg_bias_arrival_test(const lg_dispatch_sample *all, size_t m, int stage, const char *model,
                          lg_arrival_test *t)
{
    memset(t, 0, sizeof *t);
    t->statistic = t->p_value = t->below_share = NAN;
    t->resolution_ms = (double)LG_ARRIVAL_RESOLUTION_NS / 1e6;
    t->tolerance_ms = (double)LG_ARRIVAL_TOLERANCE_NS / 1e6;
    snprintf(t->model, sizeof t->model, "%s", model);
    double *off = malloc((m ? m : 1) * sizeof *off);
    double *want = malloc((m ? m : 1) * sizeof *want);
    if (!off || !want) {
        snprintf(t->note, sizeof t->note, "out of memory");
        goto out;
    }
    size_t n = 0, gaps = 0;
    for (size_t i = 0; i + 1 < m; i++) {
        const lg_dispatch_sample *a = &all[i], *b = &all[i + 1];
        if (stage >= 0 && (a->stage != stage || b->stage != stage)) continue;
        if (a->stage != b->stage) continue; /* a pause between stages is no gap */
        gaps++;
        int64_t gi = b->intended_ns - a->intended_ns;
        if (gi < LG_ARRIVAL_RESOLUTION_NS) continue;
        off[n] = (double)(b->dispatch_ns - a->dispatch_ns) / 1e9;
        want[n] = (double)gi / 1e9;
        n++;
    }
    t->below_share = gaps ? (double)(gaps - n) / (double)gaps : NAN;
    t->n = n;
    if (n < 20) {
        snprintf(t->note, sizeof t->note,
                 "%zu of %zu gaps at or above the %.1f ms resolution: too few to test", n, gaps,
                 t->resolution_ms);
        goto out;
    }
    if (mdl_ks_two_sample(off, n, want, n, (double)LG_ARRIVAL_TOLERANCE_NS / 1e9, &t->statistic,
                          &t->p_value) == 0) {
        t->tested = 1;
        t->test = "ks2";
    } else {
        snprintf(t->note, sizeof t->note, "KS test failed");
    }
out:
    free(off);
    free(want);
}

void lg_bias_judge(lg_bias_stage *b, const lg_bias_budget *budget)
{
    mdl_verdict_input vi = mdl_verdict_input_none();
    vi.max_rho = b->max_rho;
    vi.predicted_wq_us = b->predicted_wq_us;
    /* Wire-timed means timed exactly: a batched token's kernel time is only
     * an upper bound on its arrival. */
    vi.wire_share = b->exact_share;
    vi.pickup_mean_us = b->pickup_delay_us.mean;
    vi.rxq_max_bytes = b->rx_queue_bytes.n ? b->rx_queue_bytes.max : NAN;
    vi.run_delay_share = b->run_delay_share;
    vi.steal_share = b->steal_share;
    vi.lag_p99_us = b->lag_p99_us;
    vi.lag_p99_lo_us = b->lag_p99_lo_us;
    vi.achieved_ratio = b->achieved_ratio;
    if (b->arrival.tested) {
        vi.arrival_p_value = b->arrival.p_value;
        vi.arrival_d = b->arrival.statistic;
    }
    vi.safe_rho = budget->safe_rho;
    vi.budget_mean_us = budget->mean_us;
    vi.budget_p99_us = budget->p99_us;
    if (b->client_delay_us.n && b->wire_share >= MDL_VERDICT_WIRE_SHARE) {
        /* Kernel-timed (exactly or with a bound): kernel arrival to delivery.
         * For batched tokens this is a lower bound, so it can only err
         * towards too little delay; the exact share guards the verdict. */
        vi.delay_mean_us = b->client_delay_us.mean;
        vi.delay_p99_us = b->client_delay_us.p99;
    } else if (b->overhead_us.n) {
        /* A user clock against the simulator: its stamp to delivery, less the
         * transport the certificate measured on this host. */
        double tr =
            isfinite(budget->transport_us) && budget->transport_us > 0 ? budget->transport_us : 0.0;
        vi.delay_mean_us = fmax(0.0, b->overhead_us.mean - tr);
        vi.delay_p99_us = fmax(0.0, b->overhead_us.p99 - tr);
    } else if (b->processing_us.n) {
        vi.delay_mean_us = b->processing_us.mean;
        vi.delay_p99_us = b->processing_us.p99;
    }
    mdl_verdict_judge(&vi, &b->verdict);
    if (b->capture_share >= MDL_VERDICT_WIRE_SHARE) {
        /* The rules above still judge what the capture cannot take away. */
        size_t used = strlen(b->verdict.reason);
        snprintf(b->verdict.reason + used, sizeof b->verdict.reason - used,
                 "; on the wire clock the client's receive delay enters no latency figure: "
                 "dispatch lag, an unreached rate and TCP back-pressure still can");
    }
}
