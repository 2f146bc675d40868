/* lg_progress: see lg_progress.h. */
#include "lg_progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lg_plan.h"

_Static_assert(LG_PROGRESS_MAX_STAGES == LG_MAX_STAGES, "the progress counters cover every stage");

static void eta_text(const lg_progress_in *in, char *buf, size_t cap)
{
    double left = NAN;
    if (in->total_s > 0) {
        left = in->total_s - in->elapsed_s;
    } else if (in->planned > 0 && in->dispatched > 0 && in->elapsed_s > 0) {
        double rate = (double)in->dispatched / in->elapsed_s;
        left =
            (double)((uint64_t)in->planned > in->dispatched ? (uint64_t)in->planned - in->dispatched
                                                            : 0) /
            rate;
    }
    if (isnan(left)) {
        snprintf(buf, cap, "?");
        return;
    }
    if (left < 0) left = 0; /* draining */
    if (left >= 3600)
        snprintf(buf, cap, "%dh%02dm", (int)(left / 3600), (int)fmod(left / 60, 60));
    else if (left >= 60)
        snprintf(buf, cap, "%dm%02ds", (int)(left / 60), (int)fmod(left, 60));
    else
        snprintf(buf, cap, "%.0fs", ceil(left));
}

void lg_progress_format(const lg_progress_in *in, char *buf, size_t cap)
{
    char rate[64], eta[32];
    if (isnan(in->stage_rate))
        snprintf(rate, sizeof rate, "closed loop");
    else if (isinf(in->stage_rate))
        snprintf(rate, sizeof rate, "inf/s");
    else if (in->stage_elapsed_s >= 0.5) /* before that the rate is mostly noise */
        snprintf(rate, sizeof rate, "%.1f/s (achieved %.1f/s)", in->stage_rate,
                 (double)in->stage_dispatched / in->stage_elapsed_s);
    else
        snprintf(rate, sizeof rate, "%.1f/s", in->stage_rate);
    eta_text(in, eta, sizeof eta);
    snprintf(buf, cap,
             "[loadgen] stage %d/%d %s %.1fs sent %llu completed %llu failed %llu in flight %llu "
             "lag p99 %.3f ms ETA %s",
             in->stage + 1, in->n_stages, rate, in->elapsed_s, (unsigned long long)in->dispatched,
             (unsigned long long)in->completed, (unsigned long long)in->failed,
             (unsigned long long)in->in_flight, in->lag_p99_ms, eta);
}

void lg_progress_counts(const lg_plan *p, uint64_t *c)
{
    int n = LG_PROGRESS_NCOUNTS(p->n_stages);
    memset(c, 0, (size_t)n * sizeof *c);
    for (int w = p->slot_base; w < p->slot_base + p->n_slots; w++) {
        lg_slot *sl = lg_plan_slot(p, w);
        c[LG_PC_IN_FLIGHT] += __atomic_load_n(&sl->in_flight, __ATOMIC_RELAXED);
        uint64_t l = __atomic_load_n(&sl->lag_p99_ns, __ATOMIC_RELAXED);
        if (l > c[LG_PC_LAG_P99_NS]) c[LG_PC_LAG_P99_NS] = l;
        int cs = __atomic_load_n(&sl->cur_stage, __ATOMIC_RELAXED);
        if (cs > 0 && (uint64_t)cs > c[LG_PC_STAGE] && cs < p->n_stages)
            c[LG_PC_STAGE] = (uint64_t)cs;
        for (int s = 0; s < p->n_stages; s++) {
            lg_stage_stats *ss = lg_plan_stats(p, w, s);
            uint64_t d = lg_stats_live_load(&ss->dispatched);
            c[LG_PC_DISPATCHED] += d;
            c[LG_PC_STAGE_DISPATCHED + s] += d;
            c[LG_PC_FAILED] += lg_stats_live_load(&ss->failed);
            c[LG_PC_DONE] += lg_stats_live_load(&ss->done);
        }
    }
}

void lg_progress_counts_max(int n_stages, unsigned char *is_max)
{
    memset(is_max, 0, (size_t)LG_PROGRESS_NCOUNTS(n_stages));
    is_max[LG_PC_LAG_P99_NS] = is_max[LG_PC_STAGE] = 1;
}

void lg_progress_print_counts(const lg_plan *p, const lg_sched *clock, int64_t now,
                              const uint64_t *c)
{
    lg_progress_in in = {.n_stages = p->n_stages, .planned = p->o->planned_arrivals};
    in.in_flight = c[LG_PC_IN_FLIGHT];
    in.stage = (int)c[LG_PC_STAGE];
    in.dispatched = c[LG_PC_DISPATCHED];
    in.failed = c[LG_PC_FAILED];
    in.stage_dispatched = c[LG_PC_STAGE_DISPATCHED + in.stage];
    uint64_t done = c[LG_PC_DONE];
    in.completed = done > in.failed ? done - in.failed : 0;
    int64_t t0 = lg_plan_shared(p)->t0_ns;
    int64_t st = clock ? lg_sched_stage_start_ns(clock, in.stage) : 0;
    in.elapsed_s = (double)(now - t0) / 1e9;
    in.stage_elapsed_s = (double)(now - t0 - (st > 0 ? st : 0)) / 1e9;
    in.stage_rate = p->closed || p->n_trace ? NAN : p->spec.stages[in.stage].rate_per_s;
    in.lag_p99_ms = (double)c[LG_PC_LAG_P99_NS] / 1e6;
    for (int s = 0; s < p->n_stages && !p->n_trace; s++) {
        if (p->spec.stages[s].duration_ns <= 0) {
            in.total_s = 0;
            break;
        }
        in.total_s += (double)(p->spec.stages[s].duration_ns + (s ? p->spec.pause_ns : 0)) / 1e9;
    }
    char line[320];
    lg_progress_format(&in, line, sizeof line);
    fprintf(stderr, "\r%s   ", line);
}

void lg_progress_print(const lg_plan *p, const lg_sched *clock, int64_t now)
{
    uint64_t c[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)];
    lg_progress_counts(p, c);
    lg_progress_print_counts(p, clock, now, c);
}
