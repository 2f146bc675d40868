/* fuzz_sched: schedules built from arbitrary numbers (rates, durations,
 * counts, burstiness, pauses, caps, ramps, including NaN and extremes; the
 * ramps' bytes come last, so that a seed written before ramps existed means
 * what it meant then, without a ramp). A spec is
 * either refused with a message or yields a stream that keeps its promises:
 * indices in order, times never going back, every arrival inside its stage's
 * window and counts, worker 1 of 3 seeing exactly its share, and the count
 * of what is left of a worker's share (lg_sched_rest_for) equal to the walk
 * of it. The first 4000 arrivals are checked; lg_sched_new must not hang (libFuzzer's
 * -timeout catches that). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_sched.h"

typedef struct bytes {
    const uint8_t *p;
    size_t n;
} bytes;

static uint64_t take(bytes *b, size_t k)
{
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++) {
        v = v << 8 | (b->n ? *b->p : 0);
        if (b->n) {
            b->p++;
            b->n--;
        }
    }
    return v;
}

/* Mostly values that make sense, sometimes any double at all. */
static double a_double(bytes *b, const double *table, size_t n)
{
    uint8_t sel = (uint8_t)take(b, 1);
    if (sel < 200) return table[sel % n];
    uint64_t bits = take(b, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static int64_t an_int(bytes *b, const int64_t *table, size_t n)
{
    uint8_t sel = (uint8_t)take(b, 1);
    return sel < 200 ? table[sel % n] : (int64_t)take(b, 8);
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* What is left of worker 0 of 2 after its first `skip` arrivals, counted
 * (lg_sched_rest_for, at most 4000 drawn) against the walk itself (at most
 * 12000): a whole count is the walk's where the walk ends, and never below
 * what the walk saw where it does not. */
static void rest_is_the_walk(const lg_sched_spec *sp, int skip)
{
    char err[256];
    lg_sched *c = lg_sched_new(sp, err, sizeof err), *v = lg_sched_new(sp, err, sizeof err);
    if (!c || !v) abort();
    lg_arrival a;
    for (int i = 0; i < skip; i++)
        if (lg_sched_next_for(c, 0, 2, &a) != lg_sched_next_for(v, 0, 2, &a)) abort();
    int64_t got[8] = {0}, want[8] = {0};
    int ended = 1;
    for (int i = 0; ended && lg_sched_next_for(v, 0, 2, &a); i++) {
        want[a.stage]++;
        if (i == 12000) ended = 0;
    }
    int whole = lg_sched_rest_for(c, 0, 2, got, sp->n_stages, 4000);
    for (size_t st = 0; st < sp->n_stages; st++) {
        if (got[st] < 0) abort();
        if (whole && ended && got[st] != want[st]) abort();
        if (whole && got[st] < want[st]) abort();
    }
    if (lg_sched_next(c, &a)) abort(); /* the count ends the iterator */
    lg_sched_free(c);
    lg_sched_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    static const double rates[] = {INFINITY, 1e-3, 0.5, 10, 1000, 1e6, 1e9, 2e9, -1, 0, NAN};
    static const double shapes[] = {INFINITY, 1, 0.001, 0.25, 4, 1e3, 0, 1e-4, NAN};
    static const int64_t durs[] = {
        0, 1, 1000, 1000000, 1000000000, 60000000000LL, -1, INT64_MAX, 4000000000000000000LL};
    static const int64_t counts[] = {0, 1, 2, 7, 100, 10000, 1000000000000LL, -3, INT64_MAX};
    bytes b = {in, size};
    lg_stage stages[4];
    lg_sched_spec sp = {.seed = take(&b, 8)};
    sp.burstiness = a_double(&b, shapes, N_OF(shapes));
    sp.n_stages = 1 + take(&b, 1) % 4;
    memset(stages, 0, sizeof stages);
    for (size_t i = 0; i < sp.n_stages; i++) {
        stages[i].rate_per_s = a_double(&b, rates, N_OF(rates));
        stages[i].duration_ns = an_int(&b, durs, N_OF(durs));
        stages[i].max_requests = an_int(&b, counts, N_OF(counts));
    }
    sp.stages = stages;
    sp.pause_ns = an_int(&b, durs, N_OF(durs));
    sp.max_requests = an_int(&b, counts, N_OF(counts));
    for (size_t i = 0; i < sp.n_stages; i++) {
        /* 0 none (and what an exhausted input reads), 1 linear, 2
         * exponential, 3 a kind that does not exist */
        static const lg_ramp kinds[] = {LG_RAMP_NONE, LG_RAMP_LINEAR, LG_RAMP_EXPONENTIAL,
                                        (lg_ramp)7};
        stages[i].ramp = kinds[take(&b, 1) % N_OF(kinds)];
        stages[i].ramp_end_per_s = a_double(&b, rates, N_OF(rates));
    }

    char err[256];
    lg_sched *s = lg_sched_new(&sp, err, sizeof err);
    if (!s) {
        if (!memchr(err, '\0', sizeof err) || !err[0]) abort();
        return 0;
    }
    lg_sched *w = lg_sched_new(&sp, err, sizeof err);
    if (!w) abort(); /* the same spec twice */
    lg_arrival a, mine;
    int64_t prev_t = 0, per_stage[4] = {0};
    int prev_stage = 0, n = 0;
    while (n < 4000 && lg_sched_next(s, &a)) {
        if (a.index != n || a.t_ns < prev_t || a.stage < prev_stage || a.stage >= (int)sp.n_stages)
            abort();
        const lg_stage *st = &stages[a.stage];
        int64_t start = lg_sched_stage_start_ns(s, a.stage);
        if (start < 0 || a.t_ns < start ||
            (st->duration_ns > 0 && a.t_ns - start > st->duration_ns))
            abort();
        if (++per_stage[a.stage] > st->max_requests && st->max_requests > 0) abort();
        if (sp.max_requests > 0 && a.index >= sp.max_requests) abort();
        if (a.input_tokens != -1 || a.output_tokens != -1) abort();
        if (a.index % 3 == 1) {
            if (!lg_sched_next_for(w, 1, 3, &mine) || mine.index != a.index || mine.t_ns != a.t_ns)
                abort();
        }
        prev_t = a.t_ns;
        prev_stage = a.stage;
        n++;
    }
    lg_sched_free(s);
    lg_sched_free(w);
    rest_is_the_walk(&sp, (int)(n / 2));
    return 0;
}
