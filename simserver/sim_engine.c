/* sim_engine: see sim_engine.h. */
#include "sim_engine.h"

#include <stddef.h>
#include <stdlib.h>
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

/* With choices: each one still generating holds the prompt's blocks and its
 * own tokens' (a prefix block shared by several counts once for each, as
 * between requests). */
static void kv_set_choices(sim_engine *e, sim_stream *s, int holders)
{
    int64_t bs = e->cache && e->cache->block_size > 0 ? e->cache->block_size : 16;
    int64_t need = holders * ((s->spec.prompt_tokens + s->emitted + bs - 1) / bs);
    SIM_METRIC_ADD(e->m->kv_blocks_used, need - s->kv_blocks);
    s->kv_blocks = need;
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

/* Bytes a choice's buffer needs: the context kept (at most the longest stop
 * string less one, and a character cut short), and one token. */
#define CHOICE_BUF_BYTES (SIM_STOP_BYTES_MAX + 4 + 1 + SIM_TOKEN_MAX_BYTES)

static int n_choices(const sim_req_spec *spec)
{
    return spec->n > 1 ? spec->n : 1;
}

static void choices_alloc(sim_stream *s)
{
    int n = n_choices(&s->spec);
    size_t buf = s->spec.n_stop ? CHOICE_BUF_BYTES : 0;
    size_t head = sizeof(sim_choices) + (size_t)n * sizeof(sim_choice);
    sim_choices *cs = calloc(1, head + (size_t)n * buf);
    if (!cs) abort(); /* no memory: simserver's policy */
    cs->n = cs->live = n;
    uint32_t longest = 0;
    for (int k = 0; k < s->spec.n_stop; k++)
        if (s->spec.stop_len[k] > longest) longest = s->spec.stop_len[k];
    cs->context = longest ? longest - 1 : 0;
    cs->hold = s->spec.include_stop_str ? 0 : cs->context;
    for (int c = 0; c < n; c++) {
        cs->ch[c].stop_idx = -1;
        if (buf) cs->ch[c].buf = (char *)cs + head + (size_t)c * buf;
    }
    s->ch = cs;
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
    s->slots = 0;
    s->ch = NULL;
    if (sim_req_spec_has_choices(&s->spec)) choices_alloc(s);
}

/* A request takes a slot: prefix cache, then its first token's due time. */
static void stream_start(sim_engine *e, sim_stream *s, int64_t now)
{
    /* n choices are n sequences: n slots, and n requests in the metrics
     * (vLLM runs them as n child requests); the prompt is looked up in the
     * prefix cache once (the children share its blocks). */
    int n = n_choices(&s->spec);
    s->state = SIM_ST_RUNNING;
    s->slots = n;
    e->n_running += n;
    set_gauges(e);
    s->start_ns = now;
    if (n == 1)
        sim_hist_add(&e->m->queue, now - s->arrival_ns);
    else
        sim_hist_add_n(&e->m->queue, now - s->arrival_ns, (uint64_t)n);
    SIM_METRIC_ADD(e->m->prompt_tokens, (uint64_t)(s->spec.prompt_tokens * n));
    s->cached = e->cfg.enable_prefix_caching
                    ? sim_cache_lookup_insert(e->cache, s->spec.tok_hash, s->spec.prompt_tokens)
                    : 0;
    if (e->cfg.enable_prefix_caching) {
        SIM_METRIC_ADD(e->m->prefix_queries, (uint64_t)s->spec.prompt_tokens);
        SIM_METRIC_ADD(e->m->prefix_hits, (uint64_t)s->cached);
    }
    if (s->ch)
        kv_set_choices(e, s, n);
    else
        kv_grow(e, s);
    int64_t ttft =
        sim_model_ttft_ns(&e->cfg.lat, e->rng, s->spec.prompt_tokens - s->cached, e->n_running);
    s->hn.deadline_ns = now + ttft;
}

/* A request of n sequences starts when n slots are free, or alone when it
 * needs more than there are. */
static int fits(const sim_engine *e, const sim_stream *s)
{
    int64_t slots = e->cfg.lat.max_num_seqs;
    return slots <= 0 || e->n_running == 0 || e->n_running + n_choices(&s->spec) <= slots;
}

sim_admit sim_engine_admit(sim_engine *e, sim_stream *s, int64_t now)
{
    /* FIFO: nothing overtakes a request that waits for its slots. */
    if (e->cfg.lat.max_num_seqs > 0 && (e->wait_head || !fits(e, s))) {
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

/* Slots are free: the waiting requests that now fit start, in order. Their
 * first tokens go through the heap, so no stream is stepped from inside
 * another's step. */
static void release_slots(sim_engine *e, int64_t k, int64_t now)
{
    e->n_running -= k;
    while (e->wait_head && !e->draining && fits(e, e->wait_head)) {
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

/* Characters (UTF-8 lead bytes) in p[0..n). */
static int64_t utf8_chars(const char *p, size_t n)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)p[i] & 0xC0) != 0x80;
    return k;
}

/* Appends the token to choice c's tail and decides what is delivered with
 * it, as vLLM's detokenizer does: each stop string is looked for, in list
 * order, where it could end in the new text; the first found ends the
 * choice, its text cut where the stop string starts (with
 * include_stop_str_in_output, where it ends). Otherwise all but the last
 * `hold` bytes are delivered (all of them on the choice's last token), cut
 * back to a character boundary. Returns 1 when a stop string matched. */
static int choice_feed_stops(const sim_req_spec *spec, const sim_choices *cs, sim_choice *ch,
                             sim_token t, int last)
{
    /* Drop delivered bytes that can no longer be part of a match. */
    uint32_t drop = ch->held > cs->context ? ch->held - cs->context : 0;
    if (drop > ch->sent) drop = ch->sent;
    memmove(ch->buf, ch->buf + drop, ch->held - drop);
    ch->held -= drop;
    ch->sent -= drop;
    uint32_t before = ch->held;
    ch->buf[ch->held++] = ' ';
    memcpy(ch->buf + ch->held, t.word, t.len);
    ch->held += (uint32_t)t.len;
    uint32_t end = ch->held;
    int hit = 0;
    for (int k = 0; k < spec->n_stop && !hit; k++) {
        uint32_t len = spec->stop_len[k];
        uint32_t from = before + 1 > len ? before + 1 - len : 0;
        const char *at = memmem(ch->buf + from, ch->held - from, spec->stop[k], len);
        if (!at) continue;
        hit = 1;
        ch->stop_idx = k;
        end = (uint32_t)(at - ch->buf) + (spec->include_stop_str ? len : 0);
    }
    if (!hit && !last) {
        end = ch->held > cs->hold ? ch->held - cs->hold : 0;
        /* Not inside a character (at most 3 bytes back: invalid UTF-8, which
         * an echoed prompt may hold, must not grow the tail). */
        for (int k = 0; k < 3 && end > ch->sent && ((unsigned char)ch->buf[end] & 0xC0) == 0x80;
             k++)
            end--;
    }
    if (end < ch->sent) end = ch->sent;
    ch->emit = ch->buf + ch->sent;
    ch->emit_len = end - ch->sent;
    ch->emit_space = 0;
    ch->sent = end;
    return hit;
}

/* One lockstep step of a request with choices, after the common part of
 * sim_engine_step (lateness, first token). */
static sim_step step_choices(sim_engine *e, sim_stream *s, int64_t now, sim_event *ev, int *n_ev)
{
    sim_choices *cs = s->ch;
    if (s->emitted == 0) {
        sim_hist_add_n(&e->m->ttft, now - s->arrival_ns, (uint64_t)cs->n);
        if (s->spec.chat)
            for (int c = 0; c < cs->n; c++)
                ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_ROLE, .choice = c};
    } else {
        sim_hist_add_n(&e->m->itl, now - s->last_ns, (uint64_t)cs->live);
    }
    s->last_ns = now;
    if (s->n_out == 0) {
        for (int c = 0; c < cs->n; c++) {
            sim_choice *ch = &cs->ch[c];
            ch->emit = "";
            ch->emit_len = 0;
            ch->emit_space = 0;
            ch->finish = s->finish_stop ? SIM_FINISH_EOS : SIM_FINISH_LENGTH;
            ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_TOKEN, .last = 1, .choice = c};
        }
        cs->live = 0;
        return SIM_STEP_ENDED;
    }
    int last_pos = s->emitted + 1 >= s->n_out;
    int live_before = cs->live, ended = 0;
    for (int c = 0; c < cs->n; c++) {
        sim_choice *ch = &cs->ch[c];
        if (ch->finish) continue;
        sim_token t = sim_model_choice_token(&s->spec, e->cfg.mode, e->cfg.seed, c, s->emitted);
        ch->tok = t;
        ch->pos = s->emitted;
        ch->tokens++;
        ch->text_offset = ch->out_chars;
        int stopped = 0;
        if (s->spec.n_stop) {
            stopped = choice_feed_stops(&s->spec, cs, ch, t, last_pos);
        } else {
            ch->emit = t.word;
            ch->emit_len = t.len;
            ch->emit_space = 1;
        }
        ch->out_bytes += (int64_t)ch->emit_len + ch->emit_space;
        ch->out_chars += utf8_chars(ch->emit, ch->emit_len) + ch->emit_space;
        if (stopped)
            ch->finish = SIM_FINISH_STOP_STR;
        else if (last_pos)
            ch->finish = s->finish_stop ? SIM_FINISH_EOS : SIM_FINISH_LENGTH;
        if (ch->finish) ended++;
        ev[(*n_ev)++] =
            (sim_event){.kind = SIM_EV_TOKEN, .tok = t, .last = ch->finish != 0, .choice = c};
    }
    s->emitted++;
    cs->tokens += live_before;
    cs->live -= ended;
    SIM_METRIC_ADD(e->m->generation_tokens, (uint64_t)live_before);
    if (s->fault == SIM_FAULT_MALFORMED_CHUNK && s->emitted == 1)
        ev[(*n_ev)++] = (sim_event){.kind = SIM_EV_MALFORMED};
    if (cs->live == 0) {
        kv_set_choices(e, s, live_before); /* the rest goes with the request */
        return s->fault == SIM_FAULT_MIDSTREAM_DROP && s->emitted == s->fault_at ? SIM_STEP_DROP
                                                                                 : SIM_STEP_ENDED;
    }
    /* Choices that ended give back their slot and blocks now. */
    kv_set_choices(e, s, cs->live);
    if (ended) {
        s->slots -= ended;
        release_slots(e, ended, now);
    }
    if (s->fault == SIM_FAULT_MIDSTREAM_DROP && s->emitted == s->fault_at) return SIM_STEP_DROP;
    int64_t base = s->hn.deadline_ns > now ? s->hn.deadline_ns : now;
    s->hn.deadline_ns = base + sim_model_itl_ns(&e->cfg.lat, e->rng, e->n_running);
    return SIM_STEP_MORE;
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
    if (s->emitted == 0) s->first_ns = now;
    if (s->ch) return step_choices(e, s, now, ev, n_ev);
    if (s->emitted == 0) {
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

static void count_success(sim_engine *e, const sim_stream *s, int finish_stop, int64_t tokens,
                          int64_t now)
{
    if (finish_stop)
        SIM_METRIC_ADD(e->m->success_stop, 1);
    else
        SIM_METRIC_ADD(e->m->success_length, 1);
    sim_hist_add(&e->m->e2e, now - s->arrival_ns);
    sim_thist_add(&e->m->prompt_len, s->spec.prompt_tokens);
    sim_thist_add(&e->m->output_len, tokens);
}

void sim_engine_complete(sim_engine *e, const sim_stream *s, int64_t now)
{
    if (!s->ch) {
        count_success(e, s, s->finish_stop, s->emitted, now);
        return;
    }
    for (int c = 0; c < s->ch->n; c++) {
        const sim_choice *ch = &s->ch->ch[c];
        count_success(e, s, ch->finish != SIM_FINISH_LENGTH, ch->tokens, now);
    }
}

void sim_engine_stall(sim_engine *e, sim_stream *s, int64_t now)
{
    s->state = SIM_ST_STALLED;
    kv_free(e, s);
    release_slots(e, s->slots, now);
    s->slots = 0;
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
    free(s->ch);
    s->ch = NULL;
    if (was_running) release_slots(e, s->slots, now);
    s->slots = 0;
}

void sim_engine_drain(sim_engine *e)
{
    e->draining = 1;
}

sim_stream *sim_engine_first_waiting(const sim_engine *e)
{
    return e->wait_head;
}

void sim_engine_choice_text(const sim_engine *e, const sim_stream *s, int c, rb_buf *out)
{
    const sim_choice *ch = &s->ch->ch[c];
    int64_t left = ch->out_bytes;
    for (int64_t i = 0; i < ch->tokens && left > 0; i++) {
        sim_token t = sim_model_choice_token(&s->spec, e->cfg.mode, e->cfg.seed, c, i);
        rb_buf_add(out, " ", 1);
        size_t n = (size_t)left - 1 < t.len ? (size_t)left - 1 : t.len;
        rb_buf_add(out, t.word, n);
        left -= (int64_t)n + 1;
    }
}

int sim_engine_lp_alternatives(const sim_req_spec *spec)
{
    if (spec->chat) return spec->top_logprobs > 0 ? spec->top_logprobs - 1 : 0;
    return spec->top_logprobs > 1 ? spec->top_logprobs - 1 : 0;
}

void sim_engine_choice_logprobs(const sim_engine *e, const sim_stream *s, int c, int64_t pos,
                                sim_token *tok, sim_logprobs *lp)
{
    *tok = sim_model_choice_token(&s->spec, e->cfg.mode, e->cfg.seed, c, pos);
    sim_model_logprobs(&s->spec, e->cfg.seed, c, pos, *tok, sim_engine_lp_alternatives(&s->spec),
                       lp);
}
