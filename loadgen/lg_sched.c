/* lg_sched: the global arrival schedule (see lg_sched.h). Each stage draws
 * its gaps from its own generator, seeded from (seed, stage), so the start of
 * every stage is known before the run and a stage's arrivals do not depend
 * on how many the stages before it had. */
#include "lg_sched.h"
#include "rb_text.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Arrival offsets are kept below this, so start + offset never overflows. */
#define LG_SCHED_MAX_T_NS 4e18

struct lg_sched {
    lg_sched_spec spec;
    gsl_rng *rng;
    int64_t *stage_start_ns; /* per stage; -1 for a stage never reached */
    int64_t index;           /* the next arrival's global index */
    size_t stage;            /* the current stage */
    int64_t in_stage;        /* arrivals made in the current stage */
    double offset_ns;        /* the next arrival's offset in the current stage */
    int done;
};

/* SplitMix64's finaliser over (seed, stream), folded to 32 bits. */
unsigned long lg_seed32(uint64_t seed, uint64_t stream)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (unsigned long)((z ^ (z >> 32)) & 0xffffffffu);
}

/* The gap to the next arrival of a stage, in ns. */
static double gap_ns(gsl_rng *r, double rate_per_s, double burstiness)
{
    if (isinf(rate_per_s)) return 0;
    if (isinf(burstiness)) return 1e9 / rate_per_s;
    /* A subnormal rate makes the scale infinite and the draw NaN: such a gap
     * is longer than any stage, never a time that compares false. */
    double g = 1e9 * gsl_ran_gamma(r, burstiness, 1.0 / (rate_per_s * burstiness));
    return isnan(g) ? INFINITY : g;
}

double lg_stage_rate_at(const lg_stage *st, int64_t j, int64_t n)
{
    if (st->ramp == LG_RAMP_NONE) return st->rate_per_s;
    double p = (double)j / (double)(n > 1 ? n - 1 : 1);
    if (p > 1) p = 1;
    double a = st->rate_per_s, b = st->ramp_end_per_s;
    return st->ramp == LG_RAMP_LINEAR ? a + (b - a) * p : a * pow(b / a, p);
}

double lg_stage_peak_rate(const lg_stage *st)
{
    return st->ramp != LG_RAMP_NONE && st->ramp_end_per_s > st->rate_per_s ? st->ramp_end_per_s
                                                                           : st->rate_per_s;
}

/* The number of arrivals a ramped stage spreads its rates over. */
static int64_t ramp_count(const lg_sched_spec *sp, const lg_stage *st)
{
    return st->max_requests > 0 ? st->max_requests : sp->max_requests;
}

/* Whether a stage takes the arrival at offset_ns as its in_stage-th. No
 * arrival is dropped for its time: a timed stage ends inside the range
 * (validate), and an arrival of a count-bounded stage that a long draw puts
 * past it is kept, at the range's end (lg_sched_next). */
static int stage_takes(const lg_stage *st, int64_t in_stage, double offset_ns)
{
    if (st->max_requests > 0 && in_stage >= st->max_requests) return 0;
    if (st->duration_ns > 0 && !(offset_ns < (double)st->duration_ns)) return 0;
    return 1;
}

/* The plan's expected span in ns: each stage's duration (or, bounded by
 * count alone, its count over its rate) and the pauses between stages. */
static double plan_span_ns(const lg_sched_spec *sp)
{
    double span = 0;
    for (size_t i = 0; i < sp->n_stages; i++) {
        const lg_stage *st = &sp->stages[i];
        int64_t n = st->max_requests > 0 ? st->max_requests : sp->max_requests;
        double slowest = st->ramp == LG_RAMP_NONE              ? st->rate_per_s
                         : st->ramp_end_per_s < st->rate_per_s ? st->ramp_end_per_s
                                                               : st->rate_per_s;
        double by_count = isinf(slowest) ? 0 : (double)n / slowest * 1e9; /* at most */
        double len = (double)st->duration_ns;
        if (n > 0 && (len == 0 || by_count < len)) len = by_count;
        span += len + (i ? (double)sp->pause_ns : 0);
    }
    return span;
}

static int validate(const lg_sched_spec *sp, char *err, size_t errlen)
{
    if (sp->max_requests < 0) {
        rb_set_err(err, errlen, "max_requests: must be >= 0, got %lld",
                   (long long)sp->max_requests);
        return -1;
    }
    if (sp->trace) {
        if (sp->n_trace == 0) {
            rb_set_err(err, errlen, "trace: has no rows");
            return -1;
        }
        if (!(sp->trace_speedup >= 0) || isinf(sp->trace_speedup)) {
            rb_set_err(err, errlen, "trace_speedup: must be > 0, got %g", sp->trace_speedup);
            return -1;
        }
        for (size_t i = 0; i < sp->n_trace; i++) {
            const lg_trace_row *r = &sp->trace[i];
            if (r->t_ns < 0 || (i > 0 && r->t_ns < sp->trace[i - 1].t_ns)) {
                rb_set_err(err, errlen,
                           "trace[%zu].t: must be >= 0 and not before the row above, got %lld ns",
                           i, (long long)r->t_ns);
                return -1;
            }
            double speedup = sp->trace_speedup > 0 ? sp->trace_speedup : 1;
            if (!((double)r->t_ns / speedup < LG_SCHED_MAX_T_NS)) {
                rb_set_err(err, errlen,
                           "trace[%zu].t: %lld ns at speedup %g is beyond the schedule's range", i,
                           (long long)r->t_ns, speedup);
                return -1;
            }
            if (r->input_tokens < 0 || r->output_tokens < 0) {
                rb_set_err(err, errlen, "trace[%zu]: token counts must be >= 0, got %d and %d", i,
                           (int)r->input_tokens, (int)r->output_tokens);
                return -1;
            }
        }
        return 0;
    }
    /* Below 0.001 most gamma draws underflow to 0 and the gaps lose their
     * mean; above 1e9/s two arrivals share a nanosecond. */
    if (!(sp->burstiness >= 0.001)) {
        rb_set_err(err, errlen, "burstiness: must be >= 0.001 (or inf), got %g", sp->burstiness);
        return -1;
    }
    if (sp->pause_ns < 0) {
        rb_set_err(err, errlen, "pause: must be >= 0, got %lld ns", (long long)sp->pause_ns);
        return -1;
    }
    if (!sp->stages || sp->n_stages == 0) {
        rb_set_err(err, errlen, "stages: at least one stage is needed");
        return -1;
    }
    for (size_t i = 0; i < sp->n_stages; i++) {
        const lg_stage *st = &sp->stages[i];
        int last = i + 1 == sp->n_stages;
        if (!(st->rate_per_s > 0) || (!isinf(st->rate_per_s) && st->rate_per_s > 1e9)) {
            rb_set_err(err, errlen,
                       "stages[%zu].rate: must be > 0 and <= 1e9 per s (or inf), got %g", i,
                       st->rate_per_s);
            return -1;
        }
        if (st->duration_ns < 0) {
            rb_set_err(err, errlen, "stages[%zu].duration: must be >= 0, got %lld ns", i,
                       (long long)st->duration_ns);
            return -1;
        }
        if (st->max_requests < 0) {
            rb_set_err(err, errlen, "stages[%zu].max_requests: must be >= 0, got %lld", i,
                       (long long)st->max_requests);
            return -1;
        }
        /* Bounded by count: the stage itself, or the global cap if last. */
        int counted = st->max_requests > 0 || (last && sp->max_requests > 0);
        if (isinf(st->rate_per_s) && !counted) {
            rb_set_err(err, errlen,
                       "stages[%zu].rate: inf sends everything at once, so the stage needs "
                       "max_requests%s",
                       i, last ? " (or a global max_requests)" : "");
            return -1;
        }
        if (st->ramp != LG_RAMP_NONE) {
            if (st->ramp != LG_RAMP_LINEAR && st->ramp != LG_RAMP_EXPONENTIAL) {
                rb_set_err(err, errlen, "stages[%zu].ramp: unknown kind %d", i, (int)st->ramp);
                return -1;
            }
            if (isinf(st->rate_per_s) || !(st->ramp_end_per_s > 0) || st->ramp_end_per_s > 1e9) {
                rb_set_err(err, errlen,
                           "stages[%zu]: a ramp's start and end rates must be > 0 and <= 1e9 per "
                           "s, got %g and %g",
                           i, st->rate_per_s, st->ramp_end_per_s);
                return -1;
            }
            if (!counted) {
                rb_set_err(err, errlen,
                           "stages[%zu]: a ramp moves its rate over its arrivals, so the stage "
                           "needs max_requests%s",
                           i, last ? " (or a global max_requests)" : "");
                return -1;
            }
        }
        if (st->duration_ns == 0 && !counted) {
            rb_set_err(err, errlen, "stages[%zu]: never ends: give it a duration or max_requests%s",
                       i, last ? " (or a global max_requests)" : "");
            return -1;
        }
    }
    /* Every time of the plan is an int64 of ns from the start (2^63 ns is
     * 292 years): a plan that would pass the range is refused, not cut. */
    double span = plan_span_ns(sp);
    if (!(span < LG_SCHED_MAX_T_NS)) {
        rb_set_err(err, errlen,
                   "stages: the plan spans %.4g s (durations, pauses, counts over rates), past "
                   "the schedule's range of %.4g s (about 126 years)",
                   span / 1e9, LG_SCHED_MAX_T_NS / 1e9);
        return -1;
    }
    return 0;
}

/* Finds when each stage starts: a stage ends at its duration or at the time
 * its next arrival would have come after max_requests, whichever is first. */
/* Planning draws each count-bounded stage's gaps once; past this many draws
 * a stage must say how long it lasts instead (a few tenths of a second). */
#define LG_SCHED_PLAN_MAX 10000000

static int plan_stages(lg_sched *s, char *err, size_t errlen)
{
    const lg_sched_spec *sp = &s->spec;
    int64_t start = 0;
    int64_t budget = sp->max_requests > 0 ? sp->max_requests : INT64_MAX;
    for (size_t i = 0; i < sp->n_stages; i++) {
        const lg_stage *st = &sp->stages[i];
        s->stage_start_ns[i] = start;
        if (start < 0 || i + 1 == sp->n_stages)
            continue; /* the last stage's end moves nothing: no draws needed */
        double end_ns;
        if (st->max_requests > 0) {
            int64_t made = 0, want = st->max_requests < budget ? st->max_requests : budget;
            double off = 0;
            if (isinf(st->rate_per_s)) {
                made = want; /* all at the stage's start */
            } else {
                gsl_rng_set(s->rng, lg_seed32(sp->seed, i));
                while (made < budget && stage_takes(st, made, off)) {
                    if (made == LG_SCHED_PLAN_MAX) {
                        rb_set_err(err, errlen,
                                   "stages[%zu].max_requests: more than %d arrivals before the "
                                   "next stage; give the stage a shorter duration",
                                   i, LG_SCHED_PLAN_MAX);
                        return -1;
                    }
                    made++;
                    off += gap_ns(s->rng, lg_stage_rate_at(st, made, ramp_count(sp, st)),
                                  sp->burstiness);
                }
            }
            /* Cut by the global cap: the stages after it are never reached. */
            int cut = made == budget && stage_takes(st, made, off);
            budget = cut ? 0 : budget - made;
            end_ns = st->duration_ns > 0 && off > (double)st->duration_ns ? (double)st->duration_ns
                                                                          : off;
        } else {
            end_ns = (double)st->duration_ns;
        }
        /* In integers, so that no rounding of a large start can put the next
         * stage before this one's last arrival (start + llround(offset)). */
        if (budget <= 0)
            start = -1;
        else if (!((double)start + end_ns + (double)sp->pause_ns < LG_SCHED_MAX_T_NS))
            start = (int64_t)LG_SCHED_MAX_T_NS; /* long draws: kept, at the range's end */
        else
            start += llround(end_ns) + sp->pause_ns;
    }
    return 0;
}

lg_sched *lg_sched_new(const lg_sched_spec *spec, char *err, size_t errlen)
{
    if (!spec) {
        rb_set_err(err, errlen, "schedule: no spec");
        return NULL;
    }
    if (validate(spec, err, errlen)) return NULL;
    lg_sched *s = calloc(1, sizeof *s);
    if (!s) goto nomem;
    s->spec = *spec;
    if (s->spec.trace) {
        s->spec.stages = NULL;
        s->spec.n_stages = 0;
        if (s->spec.trace_speedup == 0) s->spec.trace_speedup = 1;
    }
    s->rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t n = s->spec.n_stages ? s->spec.n_stages : 1;
    s->stage_start_ns = calloc(n, sizeof *s->stage_start_ns);
    if (!s->rng || !s->stage_start_ns) goto nomem;
    if (!s->spec.trace) {
        if (plan_stages(s, err, errlen)) {
            lg_sched_free(s);
            return NULL;
        }
        gsl_rng_set(s->rng, lg_seed32(s->spec.seed, 0));
    }
    return s;
nomem:
    rb_set_err(err, errlen, "schedule: out of memory");
    lg_sched_free(s);
    return NULL;
}

void lg_sched_free(lg_sched *s)
{
    if (!s) return;
    if (s->rng) gsl_rng_free(s->rng);
    free(s->stage_start_ns);
    free(s);
}

static int next_trace(lg_sched *s, lg_arrival *a)
{
    const lg_sched_spec *sp = &s->spec;
    if ((size_t)s->index >= sp->n_trace) return 0;
    const lg_trace_row *r = &sp->trace[s->index];
    double t = (double)r->t_ns / sp->trace_speedup;
    if (!(t < LG_SCHED_MAX_T_NS)) return 0;
    *a = (lg_arrival){.index = s->index,
                      .t_ns = (int64_t)llround(t),
                      .stage = 0,
                      .input_tokens = r->input_tokens,
                      .output_tokens = r->output_tokens,
                      .in_stage = s->index};
    s->index++;
    return 1;
}

int lg_sched_next(lg_sched *s, lg_arrival *a)
{
    const lg_sched_spec *sp = &s->spec;
    if (s->done || (sp->max_requests > 0 && s->index >= sp->max_requests)) {
        s->done = 1;
        return 0;
    }
    if (sp->trace) {
        if (next_trace(s, a)) return 1;
        s->done = 1;
        return 0;
    }
    for (;;) {
        const lg_stage *st = &sp->stages[s->stage];
        if (s->stage_start_ns[s->stage] >= 0 && stage_takes(st, s->in_stage, s->offset_ns)) break;
        if (++s->stage >= sp->n_stages) {
            s->done = 1;
            return 0;
        }
        gsl_rng_set(s->rng, lg_seed32(sp->seed, s->stage));
        s->in_stage = 0;
        s->offset_ns = 0;
    }
    const lg_stage *st = &sp->stages[s->stage];
    int64_t start = s->stage_start_ns[s->stage];
    int64_t t = (double)start + s->offset_ns < LG_SCHED_MAX_T_NS
                    ? start + (int64_t)llround(s->offset_ns)
                    : (int64_t)LG_SCHED_MAX_T_NS;
    *a = (lg_arrival){.index = s->index,
                      .t_ns = t,
                      .stage = (int)s->stage,
                      .input_tokens = -1,
                      .output_tokens = -1,
                      .in_stage = s->in_stage};
    s->index++;
    s->in_stage++;
    if (isinf(sp->burstiness) && st->ramp == LG_RAMP_NONE)
        /* Constant gaps: the j-th at j / rate, not a sum of j rounded gaps,
         * which falls short of the duration (1e9 / 60 summed 300 times is
         * under 5 s) and let a 301st request into a stage of 300. */
        s->offset_ns = (double)s->in_stage * 1e9 / st->rate_per_s;
    else
        s->offset_ns +=
            gap_ns(s->rng, lg_stage_rate_at(st, s->in_stage, ramp_count(sp, st)), sp->burstiness);
    return 1;
}

int lg_sched_owner(const lg_sched_spec *spec, const lg_arrival *a, int k)
{
    if (k < 2) return 0;
    if (spec->session_users > 0) return (int)((a->in_stage % spec->session_users) % k);
    return (int)(a->index % k);
}

int lg_sched_next_for(lg_sched *s, int worker, int k, lg_arrival *a)
{
    if (k < 1 || worker < 0 || worker >= k) return 0;
    lg_arrival x;
    while (lg_sched_next(s, &x)) {
        if (lg_sched_owner(&s->spec, &x, k) == worker) {
            *a = x;
            return 1;
        }
    }
    return 0;
}

/* How many of the n indices first, first + 1, ... belong to worker w of k:
 * those with i % k == w, or with sessions those with (i % users) % k == w. */
static int64_t owned_in(int64_t first, int64_t n, int w, int k, int64_t users)
{
    if (k < 2) return n;
    if (users <= 0) /* those below first + n, less those below first */
        return (first + n) / k + ((first + n) % k > w) - first / k - (first % k > w);
    /* Whole rounds of users hold the same count each; then the part-round. */
    int64_t per_round = owned_in(0, users, w, k, 0), got = 0;
    int64_t lead = first % users;
    if (lead) {
        int64_t take = users - lead < n ? users - lead : n;
        got += owned_in(lead, take, w, k, 0);
        n -= take;
    }
    got += n / users * per_round;
    return got + owned_in(0, n % users, w, k, 0);
}

int lg_sched_rest_for(lg_sched *s, int worker, int k, int64_t *per_stage, size_t n_stages,
                      int64_t max_walk)
{
    const lg_sched_spec *sp = &s->spec;
    if (k < 1 || worker < 0 || worker >= k) {
        s->done = 1;
        return 1;
    }
    int64_t walked = 0;
    for (;;) {
        if (!sp->trace && !s->done && s->stage < sp->n_stages && s->stage_start_ns[s->stage] >= 0) {
            const lg_stage *st = &sp->stages[s->stage];
            int last = s->stage + 1 == sp->n_stages;
            /* Bounded by count alone: its arrivals are all made, whatever
             * their times, up to its own count and the global cap. */
            if (st->duration_ns == 0 && (st->max_requests > 0 || (last && sp->max_requests > 0))) {
                int64_t m = INT64_MAX;
                if (st->max_requests > 0) m = st->max_requests - s->in_stage;
                if (sp->max_requests > 0 && sp->max_requests - s->index < m)
                    m = sp->max_requests - s->index;
                if (m < 0) m = 0;
                /* past 2^63 arrivals no index is left to count by */
                int beyond = m >= INT64_MAX - s->index;
                if (beyond) m = INT64_MAX - s->index;
                int64_t mine = sp->session_users > 0
                                   ? owned_in(s->in_stage, m, worker, k, sp->session_users)
                                   : owned_in(s->index, m, worker, k, 0);
                if (s->stage < n_stages) per_stage[s->stage] += mine;
                s->index += m;
                s->in_stage += m;
                if (beyond) {
                    s->done = 1;
                    return 0;
                }
            }
        }
        lg_arrival a;
        if (!lg_sched_next(s, &a)) return 1;
        if (walked++ >= max_walk) { /* one more than the walk may count */
            s->done = 1;
            return 0;
        }
        if (lg_sched_owner(sp, &a, k) == worker && (size_t)a.stage < n_stages) per_stage[a.stage]++;
    }
}

int64_t lg_sched_stage_start_ns(const lg_sched *s, int stage)
{
    if (stage < 0) return -1;
    if (s->spec.trace) return stage == 0 ? 0 : -1;
    if ((size_t)stage >= s->spec.n_stages) return -1;
    return s->stage_start_ns[stage];
}
