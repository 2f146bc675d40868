/* lg_plan: building the plan (see lg_plan.h); the workers' region is laid
 * out by lg_slots.c. */

#include "lg_plan.h"

#include "lg_custom.h"
#include "rb_tok.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int64_t lg_closed_stages_bound_ns(const lg_opts *o, int k)
{
    int64_t t = o->drain_timeout_ns;
    for (int s = 0; s < o->n_stages && s < o->n_closed_stages; s++) {
        int64_t n = (o->stages[s].max_requests + k - 1) / k; /* the largest share */
        int64_t c = o->stage_conc[s] / k > 0 ? o->stage_conc[s] / k : 1;
        t += (n + c - 1) / c * o->request_timeout_ns + (s ? o->stage_pause_ns : 0);
    }
    return t;
}

lg_shared *lg_plan_shared(const lg_plan *p)
{
    return lg_slots_shared(p->shm);
}

lg_slot *lg_plan_slot(const lg_plan *p, int w)
{
    return lg_slots_slot(p->shm, p->n_stages, w - p->slot_base);
}

lg_stage_stats *lg_plan_stats(const lg_plan *p, int w, int stage)
{
    return lg_slots_stats(p->shm, p->n_stages, w - p->slot_base, stage);
}

lg_dispatch_sample *lg_plan_sample(const lg_plan *p, int w)
{
    return lg_slots_sample(p->shm, p->n_stages, w - p->slot_base);
}

int lg_plan_detailed_fd(const lg_plan *p, int w)
{
    return p->detailed_fd ? p->detailed_fd[w - p->slot_base] : -1;
}

int lg_plan_worker_cap(const lg_plan *p, int w)
{
    int c = p->o->max_concurrency;
    if (!c) return 0;
    return c / p->k + (w < c % p->k ? 1 : 0);
}

int lg_plan_map(lg_plan *p, int slot_base, int n_slots)
{
    p->slot_base = slot_base;
    p->n_slots = n_slots;
    p->shm_bytes = lg_slots_region_bytes(n_slots, p->n_stages);
    p->shm = mmap(NULL, p->shm_bytes, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p->shm == MAP_FAILED) {
        int e = errno;
        p->shm = NULL;
        return -e;
    }
    lg_plan_shared(p)->saturated_stage = -1;
    for (int w = 0; w < n_slots; w++)
        for (int s = 0; s < p->n_stages; s++)
            lg_stats_init(lg_slots_stats(p->shm, p->n_stages, w, s), 1);
    return 0;
}

/* ---- the loop's mode -------------------------------------------------- */

int lg_closed_loop(const lg_opts *o)
{
    if (o->n_closed_stages) return 1; /* --closed-stage: closed stages in turn */
    return o->max_concurrency && !o->rate_given && o->n_stages <= 1 && o->dataset != LG_DS_TRACE;
}

int64_t lg_plan_session_users(const lg_opts *o)
{
    if (!o->prefix_multi_turn || o->dataset != LG_DS_PREFIX) return 0;
    return (int64_t)o->prefix_groups * o->prefix_prompts_per_group;
}

const char *lg_load_mode(const lg_opts *o)
{
    if (!o->max_concurrency) return "open";
    return lg_closed_loop(o) ? "closed" : "open-capped";
}

void lg_plan_cert_inputs(const lg_opts *o, double *rate, lg_cert_workload *w)
{
    double r = 0;
    for (int i = 0; i < o->n_stages; i++)
        if (lg_stage_peak_rate(&o->stages[i]) > r) r = lg_stage_peak_rate(&o->stages[i]);
    if (o->dataset == LG_DS_TRACE || lg_closed_loop(o)) r = NAN;
    *rate = r;
    *w = (lg_cert_workload){.output_tokens =
                                o->dataset == LG_DS_RANDOM ? (double)o->random_output_len : NAN,
                            .events_per_delivery = 1.0,
                            .plain = !o->stream};
}

/* ---- building the plan ------------------------------------------------ */

static int build_pool(lg_plan *p, char *err, size_t errlen)
{
    const lg_opts *o = p->o;
    int rc = -EINVAL;
    size_t pool = o->prompt_pool_size > 0 ? (size_t)o->prompt_pool_size : 1; /* lg_cli_finish */
    if (o->tokenizer[0]) {
        char why[1200];
        int trc = rb_tok_open(o->tokenizer, &p->tok, why, sizeof why);
        if (trc) {
            snprintf(err, errlen, "--tokenizer: %s", why);
            return trc == -ENOMEM ? trc : -EINVAL;
        }
    }
    lg_dataset_set_tokenizer(p->tok);
    int32_t vocab = o->token_ids ? (p->tok ? 1 : o->vocab_size) : 0; /* 1: the tokenizer's ids */
    switch (o->dataset) {
    case LG_DS_RANDOM: {
        lg_random_spec rs = {.seed = o->seed,
                             .n = pool,
                             .input_len = o->random_input_len,
                             .output_len = o->random_output_len,
                             .range_ratio = o->random_range_ratio,
                             .dist = o->random_len_dist,
                             .vocab = vocab,
                             .in_ip = o->input_dist,
                             .out_ip = o->output_dist,
                             .prefix_len = o->random_prefix_len};
        if (o->random_range_ratio == 0.0) rs.dist = LG_LEN_FIXED;
        if (o->prompt_per_request)
            rs.n = 1; /* the pool's one prompt keeps ds's users whole; requests use rgen */
        rc = lg_dataset_random(&rs, &p->ds, err, errlen);
        if (rc == 0 && o->prompt_per_request && !(p->rgen = lg_random_gen_new(&rs, err, errlen)))
            rc = -ENOMEM;
        break;
    }
    case LG_DS_PREFIX: {
        lg_prefix_spec ps = {.seed = o->seed,
                             .groups = o->prefix_groups,
                             .prompts_per_group = o->prefix_prompts_per_group,
                             .system_prompt_len = o->prefix_system_len,
                             .question_len = o->prefix_question_len,
                             .output_len = o->random_output_len,
                             .vocab = vocab};
        rc = lg_dataset_shared_prefix(&ps, &p->ds, err, errlen);
        break;
    }
    case LG_DS_SHAREGPT: {
        lg_sharegpt_spec ss = {.seed = o->seed,
                               .max_n = pool,
                               .output_len = o->sharegpt_output_len,
                               .shuffle = !o->sharegpt_in_order && !o->disable_shuffle,
                               .filter = !o->sharegpt_no_filter};
        /* shuffled or filtered: every entry read, as vLLM reads them */
        size_t read = ss.shuffle || ss.filter ? 0 : pool;
        rc = lg_dataset_load_sharegpt(o->dataset_path, read, &p->ds, err, errlen);
        if (rc == 0) rc = lg_dataset_sharegpt_sample(&p->ds, &ss, err, errlen);
        break;
    }
    case LG_DS_CUSTOM: {
        lg_custom_spec cs = {.seed = o->seed,
                             .max_n = pool,
                             .output_len = o->custom_output_len,
                             .shuffle = !o->disable_shuffle};
        rc = lg_custom_load(o->dataset_path, &cs, &p->ds, err, errlen);
        break;
    }
    case LG_DS_TRACE:
        rc = lg_trace_load(o->dataset_path, &p->trace, &p->n_trace, err, errlen);
        if (rc == 0 && p->n_trace == 0) {
            snprintf(err, errlen, "--dataset-path: the trace has no rows");
            rc = -EINVAL;
        }
        return rc;
    }
    if (rc) return rc;
    if (p->ds.n == 0) {
        snprintf(err, errlen, "--dataset-path: the dataset has no usable prompts");
        return -EINVAL;
    }
    p->bodies = calloc(p->ds.n, sizeof *p->bodies);
    p->body_len = calloc(p->ds.n, sizeof *p->body_len);
    if (!p->bodies || !p->body_len) return -ENOMEM;
    for (size_t i = 0; i < p->ds.n; i++) {
        rc = lg_body_render(o, p->ds.items[i].text, p->ds.items[i].output_tokens, &p->bodies[i],
                            &p->body_len[i]);
        if (rc) return rc;
    }
    return 0;
}

int lg_plan_build(lg_plan *p, const lg_opts *o, int k, int forked, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->o = o;
    p->k = k;
    p->forked = forked;
    p->closed = lg_closed_loop(o);
    p->capped = o->max_concurrency && !p->closed;
    p->lag_bound_ns = (int64_t)(o->saturation_lag_ms * 1e6);
    p->stamps = o->sim_stamps != LG_STAMPS_OFF;
    {
        size_t bl = strlen(o->base_url);
        while (bl > 0 && o->base_url[bl - 1] == '/')
            bl--;
        snprintf(p->url, sizeof p->url, "%.*s%s", (int)bl, o->base_url, o->endpoint);
    }
    int rc = build_pool(p, err, errlen);
    if (rc) return rc;
    p->spec =
        (lg_sched_spec){.seed = o->seed,
                        .burstiness = o->burstiness,
                        .stages = o->stages,
                        .n_stages = (size_t)o->n_stages,
                        .pause_ns = o->stage_pause_ns,
                        .trace = p->trace,
                        .n_trace = p->n_trace,
                        .trace_speedup = o->trace_speedup,
                        .max_requests = p->n_trace && o->num_prompts_given ? o->num_prompts : 0,
                        .session_users = lg_plan_session_users(o)};
    p->n_stages = p->n_trace ? 1 : (o->n_stages > 0 ? o->n_stages : 1);
    /* Total scheduled length, for the hard deadline and the send window. */
    p->bounded_by_time = !p->n_trace;
    for (int i = 0; i < o->n_stages && !p->n_trace; i++) {
        if (o->stages[i].duration_ns == 0) p->bounded_by_time = 0;
        /* Saturated: a sum past int64 is a plan lg_sched_new refuses. */
        int64_t add = o->stages[i].duration_ns, pause = i ? o->stage_pause_ns : 0;
        if (__builtin_add_overflow(add, pause, &add) ||
            __builtin_add_overflow(p->total_dur_ns, add, &p->total_dur_ns))
            p->total_dur_ns = INT64_MAX;
    }
    if (p->n_trace) {
        p->total_dur_ns = (int64_t)((double)p->trace[p->n_trace - 1].t_ns / o->trace_speedup);
        p->bounded_by_time = 1;
    }
    return 0;
}

void lg_plan_free(lg_plan *p)
{
    if (p->bodies)
        for (size_t i = 0; i < p->ds.n; i++)
            free(p->bodies[i]);
    free(p->bodies);
    free(p->body_len);
    lg_dataset_free(&p->ds);
    lg_random_gen_free(p->rgen);
    p->rgen = NULL;
    if (p->tok && lg_dataset_tokenizer() == p->tok) lg_dataset_set_tokenizer(NULL);
    rb_tok_free(p->tok);
    p->tok = NULL;
    free(p->trace);
    if (p->shm) munmap(p->shm, p->shm_bytes);
    p->bodies = NULL;
    p->body_len = NULL;
    p->trace = NULL;
    p->shm = NULL;
}

int64_t lg_plan_end_offset(const lg_plan *p, const volatile sig_atomic_t *cancel)
{
    const lg_opts *o = p->o;
    if (p->bounded_by_time) return p->total_dur_ns + o->drain_timeout_ns + o->request_timeout_ns;
    /* Bounded by count: every request ends within --request-timeout, and at
     * most C run at once, so N requests end within the last intended start
     * plus ceil(N / C) timeouts; past that (a worker stuck in the kernel,
     * say) the same deadline and watchdog as a timed run apply. */
    int64_t n = p->spec.max_requests, last_ns = 0, c = 0;
    for (size_t i = 0; i < p->spec.n_stages && n <= 0; i++)
        n += p->spec.stages[i].max_requests;
    for (int w = 0; w < p->k; w++) {
        int cw = lg_plan_worker_cap(p, w);
        c += cw > 0 && cw <= o->max_conn_per_worker ? cw : o->max_conn_per_worker;
    }
    /* Sessions: a user's rounds go one after another, so at most one
     * request per user is in flight. */
    if (p->spec.session_users > 0 && c > p->spec.session_users) c = p->spec.session_users;
    if (!p->closed) {
        char err[256];
        lg_sched *it = lg_sched_new(&p->spec, err, sizeof err);
        lg_arrival a;
        for (uint64_t i = 0; it && lg_sched_next(it, &a); i++) {
            last_ns = a.t_ns;
            if ((i & 0xffff) == 0 && cancel && *cancel) break; /* the run stops */
        }
        lg_sched_free(it);
    }
    /* In turn: each worker's share, its slots of each stage (lg_dryrun). */
    if (o->n_closed_stages) return lg_closed_stages_bound_ns(o, p->k);
    if (n > 0 && c > 0)
        return last_ns + ((n + c - 1) / c) * o->request_timeout_ns + o->drain_timeout_ns;
    return 0;
}
