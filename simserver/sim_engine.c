/* sim_engine: see sim_engine.h. */
#include "sim_engine.h"

#include <stddef.h>
#include <string.h>

void sim_engine_init(sim_engine *e, const sim_engine_cfg *cfg, gsl_rng *rng,
                     sim_prefix_cache *cache, sim_metrics *m)
{
    memset(e, 0, sizeof *e);
    e->cfg = *cfg;
    e->rng = rng;
    e->cache = cache;
    e->m = m;
    __atomic_store_n(&m->kv_blocks_total, cache ? cache->capacity : 0, __ATOMIC_RELAXED);
}

/* The KV blocks a running request holds: its prompt and the tokens sent so
 * far, in blocks of the prefix cache's size. */
static void kv_grow(sim_engine *e, sim_stream *s)
{
    int64_t bs = e->cache && e->cache->block_size > 0 ? e->cache->block_size : 16;
    int64_t need = (s->spec.prompt_tokens + s->emitted + bs - 1) / bs;
    if (need > s->kv_blocks) {
        SIM_METRIC_ADD(e->m->kv_blocks_used, need - s->kv_blocks);
        s->kv_blocks = need;
    }
}

static void kv_free(sim_engine *e, sim_stream *s)
{
    SIM_METRIC_ADD(e->m->kv_blocks_used, -s->kv_blocks);
    s->kv_blocks = 0;
}

void sim_engine_free(sim_engine *e)
{
    sim_heap_free(&e->heap);
}

void sim_stream_init(sim_stream *s)
{
    memset(s, 0, sizeof *s);
    sim_heap_node_init(&s->hn);
}

static void set_gauges(sim_engine *e)
{
    __atomic_store_n(&e->m->running, e->n_running, __ATOMIC_RELAXED);
    __atomic_store_n(&e->m->waiting, e->n_waiting, __ATOMIC_RELAXED);
}

int sim_engine_full(const sim_engine *e)
{
    int64_t slots = e->cfg.lat.max_num_seqs;
    return slots > 0 && e->n_running >= slots && e->cfg.max_waiting_queue_length > 0 &&
           e->n_waiting >= e->cfg.max_waiting_queue_length;
}

void sim_engine_prepare(const sim_engine *e, sim_stream *s, sim_fault f, int64_t now)
{
    s->n_out = sim_model_output_tokens(&s->spec, e->cfg.mode, &s->finish_stop);
    s->fault = f;
    if (f == SIM_FAULT_MIDSTREAM_DROP)
        s->fault_at = (s->n_out + 1) / 2;
    else if (f == SIM_FAULT_STALL)
        s->fault_at = s->n_out / 2;
    else
        s->fault_at = 0;
    if (f == SIM_FAULT_MIDSTREAM_DROP && s->n_out == 0) s->fault = SIM_FAULT_NONE;
    s->emitted = 0;
    s->arrival_ns = now;
    s->start_ns = 0;
    s->first_ns = s->last_ns = 0;
    s->max_late_ns = 0;
    s->cached = 0;
    s->kv_blocks = 0;
}

/* A request takes a slot: prefix cache, then its first token's due time. */
static void stream_start(sim_engine *e, sim_stream *s, int64_t now)
{
    s->state = SIM_ST_RUNNING;
    e->n_running++;
    set_gauges(e);
    s->start_ns = now;
    sim_hist_add(&e->m->queue, now - s->arrival_ns);
    SIM_METRIC_ADD(e->m->prompt_tokens, (uint64_t)s->spec.prompt_tokens);
    s->cached = e->cfg.enable_prefix_caching
                    ? sim_cache_lookup_insert(e->cache, s->spec.tok_hash, s->spec.prompt_tokens)
                    : 0;
    if (e->cfg.enable_prefix_caching) {
        SIM_METRIC_ADD(e->m->prefix_queries, (uint64_t)s->spec.prompt_tokens);
        SIM_METRIC_ADD(e->m->prefix_hits, (uint64_t)s->cached);
    }
    kv_grow(e, s);
    int64_t ttft =
        sim_model_ttft_ns(&e->cfg.lat, e->rng, s->spec.prompt_tokens - s->cached, e->n_running);
    s->hn.deadline_ns = now + ttft;
}

sim_admit sim_engine_admit(sim_engine *e, sim_stream *s, int64_t now)
{
    if (e->cfg.lat.max_num_seqs > 0 && e->n_running >= e->cfg.lat.max_num_seqs) {
        s->state = SIM_ST_WAITING;
        s->wprev = e->wait_tail;
        s->wnext = NULL;
        if (e->wait_tail)
            e->wait_tail->wnext = s;
        else
            e->wait_head = s;
        e->wait_tail = s;
        e->n_waiting++;
        set_gauges(e);
        return SIM_ADMIT_WAITING;
    }
    stream_start(e, s, now);
    return SIM_ADMIT_RUNNING;
}

int sim_engine_schedule(sim_engine *e, sim_stream *s)
{
    return sim_heap_push(&e->heap, &s->hn);
}

#define STREAM_OF_NODE(n) ((sim_stream *)((char *)(n)-offsetof(sim_stream, hn)))

sim_stream *sim_engine_pop_due(sim_engine *e, int64_t now)
{
    sim_heap_node *n = sim_heap_top(&e->heap);
    if (!n || n->deadline_ns > now) return NULL;
    sim_heap_pop(&e->heap);
    return STREAM_OF_NODE(n);
}

int64_t sim_engine_next_deadline(const sim_engine *e)
{
    sim_heap_node *n = sim_heap_top(&e->heap);
    return n ? n->deadline_ns : -1;
}

/* A slot is free: the next waiting request starts now. Its first token goes
 * through the heap, so no stream is stepped from inside another's step. */
static void release_slot(sim_engine *e, int64_t now)
{
    e->n_running--;
    if (e->wait_head && !e->draining) {
        sim_stream *s = e->wait_head;
        e->wait_head = s->wnext;
        if (e->wait_head)
            e->wait_head->wprev = NULL;
        else
            e->wait_tail = NULL;
        s->wnext = s->wprev = NULL;
        e->n_waiting--;
        stream_start(e, s, now);
        sim_heap_push(&e->heap, &s->hn);
    }
    set_gauges(e);
}

sim_step sim_engine_step(sim_engine *e, sim_stream *s, int64_t now,
                         sim_event ev[SIM_STEP_EVENTS_MAX], int *n_ev)
{
    *n_ev = 0;
    if (s->hn.deadline_ns > now) return SIM_STEP_NOT_DUE;
    if (s->fault == SIM_FAULT_STALL && s->emitted == s->fault_at) return SIM_STEP_STALL;
    int64_t late = now - s->hn.deadline_ns;
    sim_hist_add(&e->m->late, late);
    if (late > s->max_late_ns) s->max_late_ns = late;
    if (s->emitted == 0) {
        s->first_ns = now;
        sim_hist_add(&e->m->ttft, now - s->arrival_ns);
        if (s->spec.chat) ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_ROLE};
    } else {
        sim_hist_add(&e->m->itl, now - s->last_ns);
    }
    if (s->n_out == 0) {
        ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_TOKEN, .tok = {"", 0}, .last = 1};
        s->last_ns = now;
        return SIM_STEP_ENDED;
    }
    sim_token t = sim_model_token(&s->spec, e->cfg.mode, e->cfg.seed, s->emitted);
    s->emitted++;
    s->last_ns = now;
    SIM_METRIC_ADD(e->m->generation_tokens, 1);
    kv_grow(e, s);
    int last = s->emitted >= s->n_out;
    ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_TOKEN, .tok = t, .last = last};
    if (s->fault == SIM_FAULT_MALFORMED_CHUNK && s->emitted == 1)
        ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_MALFORMED};
    if (s->fault == SIM_FAULT_MIDSTREAM_DROP && s->emitted == s->fault_at) return SIM_STEP_DROP;
    if (last) return SIM_STEP_ENDED;
    /* Gaps count from the actual write, so a token is never early. */
    int64_t base = s->hn.deadline_ns > now ? s->hn.deadline_ns : now;
    s->hn.deadline_ns = base + sim_model_itl_ns(&e->cfg.lat, e->rng, e->n_running);
    return SIM_STEP_MORE;
}

void sim_engine_complete(sim_engine *e, const sim_stream *s, int64_t now)
{
    if (s->finish_stop)
        SIM_METRIC_ADD(e->m->success_stop, 1);
    else
        SIM_METRIC_ADD(e->m->success_length, 1);
    sim_hist_add(&e->m->e2e, now - s->arrival_ns);
    sim_thist_add(&e->m->prompt_len, s->spec.prompt_tokens);
    sim_thist_add(&e->m->output_len, s->emitted);
}

void sim_engine_stall(sim_engine *e, sim_stream *s, int64_t now)
{
    s->state = SIM_ST_STALLED;
    kv_free(e, s);
    release_slot(e, now);
}

void sim_engine_remove(sim_engine *e, sim_stream *s, int64_t now)
{
    sim_heap_remove(&e->heap, &s->hn);
    if (s->state == SIM_ST_WAITING) {
        if (s->wprev)
            s->wprev->wnext = s->wnext;
        else
            e->wait_head = s->wnext;
        if (s->wnext)
            s->wnext->wprev = s->wprev;
        else
            e->wait_tail = s->wprev;
        s->wprev = s->wnext = NULL;
        e->n_waiting--;
        __atomic_store_n(&e->m->waiting, e->n_waiting, __ATOMIC_RELAXED);
    }
    int was_running = s->state == SIM_ST_RUNNING;
    if (was_running) kv_free(e, s);
    s->state = SIM_ST_IDLE;
    sim_req_spec_free(&s->spec);
    if (was_running) release_slot(e, now);
}

void sim_engine_drain(sim_engine *e)
{
    e->draining = 1;
}

sim_stream *sim_engine_first_waiting(const sim_engine *e)
{
    return e->wait_head;
}
