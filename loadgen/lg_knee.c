/* lg_knee: saturation by the client or the server, and the knee (see
 * lg_knee.h). */
#include "lg_knee.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_plan.h"
#include "rb_json.h"

const char *lg_sat_name(lg_sat_by by)
{
    return by == LG_SAT_CLIENT ? "client" : by == LG_SAT_SERVER ? "server" : NULL;
}

static void mark(lg_knee_verdict *out, lg_sat_by by)
{
    out->saturated = 1;
    out->by = by;
}

/* The server kept up with what was sent in the window? */
static int server_fell_behind(const lg_knee_rules *r, const lg_knee_obs *o, lg_knee_verdict *out)
{
    if (!o->have_window || o->sent_in == 0 || !(o->window_s > 0)) return 0;
    /* Against the stage's offered rate, not what the window happened to
     * receive: a Poisson burst above capacity is not a saturated stage. */
    double offered = isfinite(o->rate_per_s) ? o->rate_per_s * o->window_s : (double)o->sent_in;
    double sent = (double)o->sent_in, done = (double)o->completed_in;
    if (done >= r->min_ratio * offered || done >= r->min_ratio * sent) return 0;
    int64_t growth = o->in_flight_end - o->in_flight_start;
    /* The in-flight count of a stable queue wanders about its mean by some
     * sqrt(mean), independently at the two ends of the window. */
    double n0 = o->in_flight_start > 0 ? (double)o->in_flight_start : 0.0;
    double n1 = o->in_flight_end > 0 ? (double)o->in_flight_end : 0.0;
    double noise = 3.0 * sqrt(n0 + n1) + 2.0;
    int growing = (double)growth > noise;
    int shedding = (double)o->failed_in >= (1.0 - r->min_ratio) * sent;
    if (!growing && !shedding) return 0;
    snprintf(out->criterion, sizeof out->criterion,
             "completed %.1f/s of %.1f/s offered (%.0f%% < %.0f%%); in flight %lld -> %lld%s",
             done / o->window_s, offered / o->window_s, 100.0 * done / offered,
             100.0 * r->min_ratio, (long long)o->in_flight_start, (long long)o->in_flight_end,
             shedding ? "; the server failed requests" : "");
    return 1;
}

/* TTFT's median past the knee of the earlier, unsaturated stages? */
static int ttft_knee(const lg_knee_rules *r, const lg_knee_obs *obs, const lg_knee_verdict *v,
                     int s, lg_knee_verdict *out)
{
    double p50 = obs[s].ttft_p50_ms;
    if (!(r->ttft_factor > 0) || isnan(p50)) return 0;
    double base = NAN;
    int at = -1;
    for (int j = 0; j < s; j++) {
        if (v[j].saturated || isnan(obs[j].ttft_p50_ms)) continue;
        if (isnan(base) || obs[j].ttft_p50_ms < base) base = obs[j].ttft_p50_ms, at = j;
    }
    if (isnan(base)) return 0;
    /* A queue that holds requests for half a request's whole time, or 10 ms
     * when requests are quick: a rise that is not the noise of a stable one. */
    double e2e = obs[at].e2el_p50_ms, rise = fmax(r->ttft_floor_ms, isnan(e2e) ? 0 : 0.5 * e2e);
    double bound = fmax(r->ttft_factor * base, base + rise);
    if (p50 <= bound) return 0;
    snprintf(out->criterion, sizeof out->criterion,
             "TTFT p50 %.2f ms > %.2f ms (%g x stage %d's %.2f ms, and %.2f ms above it: the "
             "larger of %g ms and half its E2E p50)",
             p50, bound, r->ttft_factor, at, base, rise, r->ttft_floor_ms);
    return 1;
}

void lg_knee_judge(const lg_knee_rules *r, const lg_knee_obs *obs, const lg_knee_verdict *v, int s,
                   lg_knee_verdict *out)
{
    const lg_knee_obs *o = &obs[s];
    *out = (lg_knee_verdict){.completed_rate = o->have_window && o->window_s > 0
                                                   ? (double)o->completed_in / o->window_s
                                                   : NAN};
    if (o->scheduled > 0 && (double)o->dispatched < r->min_ratio * (double)o->scheduled) {
        snprintf(out->criterion, sizeof out->criterion,
                 "dispatched %llu of %llu scheduled (< %.0f%%)", (unsigned long long)o->dispatched,
                 (unsigned long long)o->scheduled, 100.0 * r->min_ratio);
        mark(out, LG_SAT_CLIENT);
    } else if (server_fell_behind(r, o, out) || ttft_knee(r, obs, v, s, out)) {
        /* The load was offered (a few late dispatches do not make a server
         * fall behind), and the server did not keep up with it. */
        mark(out, LG_SAT_SERVER);
    } else if (o->dispatched > 0 &&
               (double)o->lag_over > r->lag_over_share * (double)o->dispatched) {
        snprintf(out->criterion, sizeof out->criterion,
                 "%llu of %llu dispatches past the lag bound (> %g%%)",
                 (unsigned long long)o->lag_over, (unsigned long long)o->dispatched,
                 100.0 * r->lag_over_share);
        mark(out, LG_SAT_CLIENT);
    }
}

void lg_knee_find(const lg_knee_obs *obs, const lg_knee_verdict *v, int n, lg_knee *k)
{
    *k = (lg_knee){.stage = -1, .rate_per_s = NAN};
    for (int s = 0; s < n; s++) {
        if (!v[s].saturated) continue;
        k->found = 1;
        k->stage = s;
        k->rate_per_s = obs[s].rate_per_s;
        k->cause = v[s].by;
        snprintf(k->criterion, sizeof k->criterion, "%s", v[s].criterion);
        return;
    }
}

void lg_knee_stage_json(cJSON *stage, const lg_knee_verdict *v)
{
    cJSON_AddBoolToObject(stage, "saturated", v->saturated);
    if (v->saturated) {
        cJSON_AddStringToObject(stage, "saturated_by", lg_sat_name(v->by));
        cJSON_AddStringToObject(stage, "saturation_criterion", v->criterion);
    } else {
        cJSON_AddNullToObject(stage, "saturated_by");
        cJSON_AddNullToObject(stage, "saturation_criterion");
    }
    rb_json_put_num(stage, "completed_rate", v->completed_rate);
}

void lg_knee_json(cJSON *top, const lg_knee *k)
{
    if (!k->found) {
        cJSON_AddNullToObject(top, "knee");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(top, "knee");
    rb_json_put_num(o, "rate", k->rate_per_s);
    cJSON_AddStringToObject(o, "cause", lg_sat_name(k->cause));
    cJSON_AddStringToObject(o, "criterion", k->criterion);
    cJSON_AddNumberToObject(o, "stage", k->stage);
}

void lg_knee_summary(const lg_knee *k, FILE *f)
{
    if (!k->found) return;
    char v[96];
    snprintf(v, sizeof v, "%.1f req/s (stage %d), by the %s", k->rate_per_s, k->stage,
             lg_sat_name(k->cause));
    fprintf(f, "%-40s %-10s\n  %s\n", "Knee:", v, k->criterion);
}

/* ---- the watch ---------------------------------------------------------- */

/* The run's live totals at one moment. */
typedef struct snap {
    int64_t t_ns;
    uint64_t sent, completed, failed;
    int64_t in_flight;
    uint64_t stage_dispatched, stage_lag_over;
} snap;

struct lg_knee_watch {
    const lg_plan *p;
    lg_knee_rules rules;
    int progress_line;
    int n;
    int64_t *mid_ns, *end_ns; /* each stage's middle and end, from t0 (-1: count-bounded) */
    uint64_t *scheduled;
    snap *mids, *snaps; /* at each stage's middle and end */
    int n_mid, n_snapped;
    lg_knee_obs *obs;
    lg_knee_verdict *live;
    int stopped_stage; /* the stage after which this watch stopped the run (-1) */
};

lg_knee_watch *lg_knee_watch_new(const lg_plan *p, int progress_line)
{
    if (p->closed || p->n_trace || p->n_stages < 1) return NULL;
    lg_knee_watch *w = calloc(1, sizeof *w);
    char err[128];
    lg_sched *it = lg_sched_new(&p->spec, err, sizeof err);
    if (!w || !it) goto fail;
    w->p = p;
    w->rules = LG_KNEE_RULES_DEFAULT;
    w->progress_line = progress_line;
    w->n = p->n_stages;
    w->stopped_stage = -1;
    w->end_ns = calloc((size_t)w->n, sizeof *w->end_ns);
    w->mid_ns = calloc((size_t)w->n, sizeof *w->mid_ns);
    w->mids = calloc((size_t)w->n, sizeof *w->mids);
    w->scheduled = calloc((size_t)w->n, sizeof *w->scheduled);
    w->snaps = calloc((size_t)w->n, sizeof *w->snaps);
    w->obs = calloc((size_t)w->n, sizeof *w->obs);
    w->live = calloc((size_t)w->n, sizeof *w->live);
    if (!w->end_ns || !w->mid_ns || !w->mids || !w->scheduled || !w->snaps || !w->obs || !w->live)
        goto fail;
    for (int s = 0; s < w->n; s++) {
        int64_t st = lg_sched_stage_start_ns(it, s), d = p->spec.stages[s].duration_ns;
        w->end_ns[s] = st >= 0 && d > 0 ? st + d : -1;
        w->mid_ns[s] = st >= 0 && d > 0 ? st + d / 2 : -1;
    }
    /* The scheduled count of each stage, exactly (no Poisson noise), for up
     * to 50 M arrivals (about 1.5 s at 28 ns each); past that the stages
     * left are "unknown" (0) and skip the count rule. */
    lg_arrival a;
    uint64_t counted = 0;
    while (lg_sched_next(it, &a)) {
        if (a.stage < 0 || a.stage >= w->n) continue;
        if (++counted > 50000000ULL) {
            for (int s = a.stage; s < w->n; s++)
                w->scheduled[s] = 0;
            break;
        }
        w->scheduled[a.stage]++;
    }
    lg_sched_free(it);
    return w;
fail:
    lg_sched_free(it);
    lg_knee_watch_free(w);
    return NULL;
}

void lg_knee_watch_free(lg_knee_watch *w)
{
    if (!w) return;
    free(w->end_ns);
    free(w->mid_ns);
    free(w->mids);
    free(w->scheduled);
    free(w->snaps);
    free(w->obs);
    free(w->live);
    free(w);
}

static void take_snap(const lg_plan *p, int stage, int64_t now, snap *sn)
{
    *sn = (snap){.t_ns = now};
    uint64_t done = 0;
    for (int w = 0; w < p->k; w++) {
        sn->in_flight += (int64_t)__atomic_load_n(&lg_plan_slot(p, w)->in_flight, __ATOMIC_RELAXED);
        for (int s = 0; s < p->n_stages; s++) {
            lg_stage_stats *ss = lg_plan_stats(p, w, s);
            uint64_t d = lg_stats_live_load(&ss->dispatched);
            sn->sent += d;
            done += lg_stats_live_load(&ss->done);
            sn->failed += lg_stats_live_load(&ss->failed);
            if (s == stage) {
                sn->stage_dispatched += d;
                sn->stage_lag_over += lg_stats_live_load(&ss->lag_over);
            }
        }
    }
    sn->completed = done > sn->failed ? done - sn->failed : 0;
}

/* The window of stage s: its second half, once the first has absorbed the
 * change of rate (the in-flight count of a stable queue rises with the rate
 * within one latency, and then stays). */
static void window_obs(const lg_knee_watch *w, int s, lg_knee_obs *o)
{
    const snap *a = &w->mids[s], *b = &w->snaps[s];
    o->have_window = 1;
    o->window_s = (double)(b->t_ns - a->t_ns) / 1e9;
    o->sent_in = b->sent - a->sent;
    o->completed_in = b->completed - a->completed;
    o->failed_in = b->failed - a->failed;
    o->in_flight_start = a->in_flight;
    o->in_flight_end = b->in_flight;
}

static double p50_ms(const mdl_hist *h)
{
    return h->total ? (double)mdl_hist_percentile(h, 50.0) / 1e6 : NAN;
}

/* A p50 (ms) of a stage's merged histogram, read while workers write:
 * approximate, and only used to stop a sweep. */
static double live_p50_ms(const lg_plan *p, int s, int id)
{
    size_t bytes = lg_stats_hist_bytes();
    mdl_hist *h = malloc(bytes);
    if (!h) return NAN;
    memcpy(h, lg_stats_hist(lg_plan_stats(p, 0, s), id), bytes);
    for (int w = 1; w < p->k; w++)
        mdl_hist_merge(h, lg_stats_hist(lg_plan_stats(p, w, s), id));
    double v = p50_ms(h);
    free(h);
    return v;
}

void lg_knee_watch_tick(lg_knee_watch *w, int64_t now)
{
    if (!w) return;
    const lg_plan *p = w->p;
    lg_shared *sh = lg_plan_shared(p);
    while (w->n_snapped < w->n) {
        int s = w->n_snapped;
        if (w->end_ns[s] < 0) return;
        if (w->n_mid == s && now >= sh->t0_ns + w->mid_ns[s])
            take_snap(p, s, now, &w->mids[w->n_mid++]);
        if (w->n_mid == s) return;
        /* A little after the stage's end, as the client watch judges. */
        if (now < sh->t0_ns + w->end_ns[s] + 20000000LL) return;
        take_snap(p, s, now, &w->snaps[s]);
        w->n_snapped++;
        /* Judging live (two histogram merges, a millisecond of the
         * coordinator's CPU beside the workers) only serves a stop. */
        if (!p->o->sweep_until_saturation) continue;
        lg_knee_obs *o = &w->obs[s];
        *o = (lg_knee_obs){.rate_per_s = p->spec.stages[s].rate_per_s,
                           .scheduled = w->scheduled[s],
                           .dispatched = w->snaps[s].stage_dispatched,
                           .lag_over = w->snaps[s].stage_lag_over,
                           .ttft_p50_ms = live_p50_ms(p, s, LG_H_TTFT_I),
                           .e2el_p50_ms = live_p50_ms(p, s, LG_H_E2EL_I)};
        window_obs(w, s, o);
        lg_knee_judge(&w->rules, w->obs, w->live, s, &w->live[s]);
        if (w->live[s].by != LG_SAT_SERVER || __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
            continue;
        w->stopped_stage = s;
        __atomic_store_n(&sh->saturated_stage, s, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
        if (w->progress_line) fputc('\n', stderr);
        fprintf(stderr,
                "loadgen: stage %d (%.1f requests/s) saturated by the server: %s; stopping\n", s,
                o->rate_per_s, w->live[s].criterion);
        return;
    }
}

void lg_knee_watch_finish(lg_knee_watch *w, const lg_stage_stats *const *stages, int n,
                          int stopped_stage, lg_knee_verdict *v, lg_knee *k)
{
    for (int s = 0; s < n; s++)
        v[s] = (lg_knee_verdict){.completed_rate = NAN};
    if (!w || n > w->n) {
        lg_knee_find(NULL, v, 0, k);
        return;
    }
    const lg_plan *p = w->p;
    for (int s = 0; s < n; s++) {
        const lg_stage_stats *st = stages[s];
        if (!st) continue;
        lg_knee_obs *o = &w->obs[s];
        *o = (lg_knee_obs){.rate_per_s = p->spec.stages[s].rate_per_s,
                           .scheduled = w->scheduled[s],
                           .dispatched = st->dispatched,
                           .lag_over = st->lag_over,
                           .ttft_p50_ms = p50_ms(lg_stats_hist_c(st, LG_H_TTFT_I)),
                           .e2el_p50_ms = p50_ms(lg_stats_hist_c(st, LG_H_E2EL_I))};
        if (s < w->n_snapped) window_obs(w, s, o);
        /* A stage cut short (by a stop or a signal) never reached its end:
         * its count says nothing, so it is not judged. */
        if (s < w->n_snapped || w->end_ns[s] < 0) lg_knee_judge(&w->rules, w->obs, v, s, &v[s]);
        if (s == stopped_stage && !v[s].saturated) {
            /* A live judgement stopped the sweep here: keep its word. */
            if (w->stopped_stage == s) {
                v[s] = w->live[s];
            } else {
                mark(&v[s], LG_SAT_CLIENT);
                snprintf(v[s].criterion, sizeof v[s].criterion,
                         "the client fell behind the schedule by the stage's end");
            }
        }
    }
    lg_knee_find(w->obs, v, n, k);
}
