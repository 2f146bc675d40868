/* lg_judge: the verdict's inputs (see lg_judge.h). */

#include "lg_judge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mdl_queue.h"

static const lg_stage_stats *block_of(const lg_judge_in *in, int w, int s)
{
    return in->blocks[(size_t)w * (size_t)in->n_stages + (size_t)s];
}

static void worker_bias(const lg_slot *s, int w, lg_worker_bias *b)
{
    b->worker = w;
    double el_ns = (double)(s->window_end_ns - s->window_start_ns);
    if (el_ns <= 0) el_ns = NAN;
    double rho = 1.0 - (double)s->idle_ns / el_ns;
    if (rho < 0) rho = 0;
    if (rho > 1) rho = 1;
    b->rho = rho;
    b->callbacks = (double)s->callbacks;
    double el_s = el_ns / 1e9;
    b->callback_rate_per_s = (double)s->callbacks / el_s;
    double es = s->callbacks ? s->svc_sum_ns / (double)s->callbacks / 1e9 : NAN;
    double es2 = s->callbacks ? s->svc_sumsq_ns2 / (double)s->callbacks / 1e18 : NAN;
    b->mean_service_us = es * 1e6;
    b->second_moment_us2 = es2 * 1e12;
    b->events = (double)s->events;
    b->event_rate_per_s = (double)s->events / el_s;
    b->predicted_wq_us = mdl_mg1_wq(b->callback_rate_per_s, es, es2) * 1e6;
    b->preemptions = (double)s->nivcsw;
    b->receive_clock = s->rx_clock;
    b->capture_interface = s->capture_iface;
    b->receive_clock_fallback = s->rx_fallback;
    b->cpus = s->cpus;
    b->cpu_latency_held = s->cpu_latency_held;
    b->cpu_latency_us = s->cpu_latency_us;
    b->cpu_latency = s->cpu_latency;
}

void lg_judge_workers(const lg_judge_in *in, lg_worker_bias *b, double *max_rho,
                      double *worst_wq_us, int *stamps)
{
    *max_rho = 0;
    *worst_wq_us = NAN;
    *stamps = 0;
    for (int w = 0; w < in->k; w++) {
        worker_bias(in->slots[w], w, &b[w]);
        uint64_t wire = 0, all = 0;
        for (int s = 0; s < in->n_stages; s++) {
            const lg_stage_stats *x = block_of(in, w, s);
            wire += x->rx_wire_tokens;
            all += x->rx_kernel_tokens + x->rx_user_tokens;
        }
        b[w].wire_share = all ? (double)wire / (double)all : NAN;
        if (in->lost[w]) {
            b[w].lost = 1;
            continue;
        }
        if (in->slots[w]->saw_stamps) *stamps = 1;
        if (b[w].rho > *max_rho) *max_rho = b[w].rho;
        if (!isnan(b[w].predicted_wq_us) &&
            (isnan(*worst_wq_us) || b[w].predicted_wq_us > *worst_wq_us))
            *worst_wq_us = b[w].predicted_wq_us;
    }
}

void lg_judge_arrivals(const lg_judge_in *in, int stage, lg_arrival_test *t)
{
    if (in->arrival_skip || !in->samples) {
        memset(t, 0, sizeof *t);
        t->statistic = t->p_value = t->below_share = NAN;
        snprintf(t->model, sizeof t->model, "%s", in->arrival_model);
        snprintf(t->note, sizeof t->note, "%s",
                 in->arrival_skip ? in->arrival_skip : "out of memory");
        return;
    }
    lg_bias_arrival_test(in->samples, in->n_samples, stage, in->arrival_model, t);
}

int lg_judge_cut(int n_used, int stopped_stage)
{
    if (stopped_stage < 0 || n_used <= stopped_stage + 1) return 0;
    return n_used - (stopped_stage + 1);
}

int lg_judge_run(const lg_judge_in *in, double max_rho, double worst_wq_us, lg_bias_stage *sb,
                 lg_bias_stage *run, lg_report *rep)
{
    const lg_stage_stats *blocks[in->k > 0 ? in->k : 1];
    int worst = -1, n_views = in->n_views;
    int n_judged = n_views - (in->n_cut > 0 && in->n_cut <= n_views ? in->n_cut : 0);
    for (int s = 0; s < n_views; s++) {
        for (int w = 0; w < in->k; w++)
            blocks[w] = in->lost[w] ? NULL : block_of(in, w, s);
        lg_bias_stage_figures(blocks, in->k, in->stages[s], in->closed, &sb[s]);
        lg_judge_arrivals(in, s, &sb[s].arrival);
        if (s >= n_judged) {
            /* Cut short by the sweep's stop: no verdict, and none for the run. */
            sb[s].verdict = (mdl_verdict){.level = MDL_VERDICT_OK, .cause = "cut short"};
            snprintf(sb[s].verdict.reason, sizeof sb[s].verdict.reason,
                     "not judged: the sweep's stop cut this stage short");
            continue;
        }
        lg_bias_judge(&sb[s], &in->budget);
        /* The worst stage decides; among equals, the busiest loop (an all-OK
         * sweep names its hardest stage, not its first). */
        if (worst < 0 || sb[s].verdict.level > sb[worst].verdict.level ||
            (sb[s].verdict.level == sb[worst].verdict.level && sb[s].max_rho > sb[worst].max_rho))
            worst = s;
    }
    /* The whole run: the loop over the whole send window. */
    lg_bias_stage_figures(NULL, 0, in->total, in->closed, run);
    run->max_rho = max_rho;
    run->predicted_wq_us = worst_wq_us;
    for (int w = 0; w < in->k; w++) {
        if (in->lost[w]) continue;
        const lg_slot *sl = in->slots[w];
        int64_t rd = 0, win = sl->window_end_ns - sl->window_start_ns;
        for (int s = 0; s < in->n_stages; s++)
            rd += block_of(in, w, s)->run_delay_ns;
        double share = win > 0 ? (double)rd / (double)win : NAN;
        if (isfinite(share) && !(share <= run->run_delay_share)) run->run_delay_share = share;
        if (sl->clock_spread_ns > rep->clock_spread_ns) rep->clock_spread_ns = sl->clock_spread_ns;
        if (sl->clock_width_ns > rep->clock_width_ns) rep->clock_width_ns = sl->clock_width_ns;
        rep->clock_steps += sl->clock_steps;
        rep->ticks += sl->ticks;
        rep->ticks_overrun += sl->ticks_overrun;
        rep->rx_enable_failed += sl->rx_enable_failed;
        rep->sess_waited += sl->sess_waited;
        rep->sess_capped += sl->sess_capped;
    }
    lg_judge_arrivals(in, -1, &run->arrival);
    lg_bias_judge(run, &in->budget);
    if (worst >= 0) {
        run->verdict = sb[worst].verdict;
        if (n_views > 1) {
            char *dst = run->verdict.reason;
            size_t cap = sizeof run->verdict.reason;
            int n =
                sb[worst].verdict.level == MDL_VERDICT_OK && n_judged > 1
                    ? snprintf(dst, cap, "all %d stages; the busiest, stage %d: ", n_judged, worst)
                    : snprintf(dst, cap, "stage %d: ", worst);
            if (n > 0 && (size_t)n < cap)
                snprintf(dst + n, cap - (size_t)n, "%.*s", (int)(cap - (size_t)n - 1),
                         sb[worst].verdict.reason);
        }
    }
    /* Requests that loadgen's own descriptor limit failed: the client's
     * doing, whatever the figures say of the rest. */
    uint64_t fd_limit = in->total ? in->total->fail_class[LG_FAIL_FD_LIMIT] : 0;
    if (fd_limit) {
        char was[sizeof run->verdict.reason];
        snprintf(was, sizeof was, "%s", run->verdict.reason);
        run->verdict.level = MDL_VERDICT_BIASED;
        run->verdict.cause = "client_fd_limit";
        snprintf(run->verdict.reason, sizeof run->verdict.reason,
                 "the client: %llu requests failed on loadgen's own descriptor limit "
                 "(client_fd_limit; raise ulimit -n or lower --max-connections-per-worker); %.150s",
                 (unsigned long long)fd_limit, was);
    }
    return n_views > 1 ? worst : -1;
}
