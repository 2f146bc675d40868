/* Unit tests for sim_engine on a virtual clock: exact due times (TTFT,
 * gaps counted from the actual write, the load factor of the moment), send
 * lateness, admission (slots, the FIFO waiting queue, the queue-full
 * refusal, a start when a slot frees), the drop, stall and malformed faults
 * at their token, chat's role event, a response of no tokens, the drain and
 * the heap's order. No clock is read: every time is given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sim_engine.h"

static const int64_t MS = 1000000;
static const int64_t T0 = 1000 * 1000000LL; /* the virtual clock's start */

typedef struct fixture {
    sim_engine e;
    sim_metrics m;
    sim_prefix_cache cache;
} fixture;

static const char *const served[] = {"sim-model"};

static void setup(fixture *f, sim_latency_cfg lat, int64_t max_waiting, int mode)
{
    memset(f, 0, sizeof *f);
    if (lat.time_factor_under_load == 0) lat.time_factor_under_load = 1;
    assert_int_equal(sim_cache_init(&f->cache, 1024, 16), 0);
    sim_engine_cfg cfg = {
        .lat = lat, .mode = mode, .seed = 7, .max_waiting_queue_length = max_waiting};
    sim_engine_init(&f->e, &cfg, NULL, &f->cache, &f->m);
}

static void teardown(fixture *f)
{
    sim_engine_free(&f->e);
    sim_cache_free(&f->cache);
}

/* request: a stream for body (chat or not) with fault ft, arrived at now. */
static void request(fixture *f, sim_stream *s, const char *body, int chat, sim_fault ft,
                    int64_t now)
{
    sim_stream_init(s);
    sim_api_limits lim = {.served_models = served, .n_served = 1, .max_model_len = 32768};
    sim_api_error err;
    assert_int_equal(sim_api_parse(body, strlen(body), chat, &lim, &s->spec, &err), 0);
    sim_engine_prepare(&f->e, s, ft, now);
}

static sim_step step(fixture *f, sim_stream *s, int64_t now, int *n_ev, sim_event *ev)
{
    sim_event tmp[SIM_STEP_EVENTS_MAX];
    int n = 0;
    sim_step r = sim_engine_step(&f->e, s, now, ev ? ev : tmp, n_ev ? n_ev : &n);
    return r;
}

static void tokens_are_due_at_ttft_then_itl_from_the_actual_write(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.ttft_ns = 20 * MS, .itl_ns = 5 * MS}, 0, SIM_MODE_RANDOM);
    sim_stream s;
    request(&f, &s, "{\"prompt\":\"a b c\",\"max_tokens\":4}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(s.n_out, 4);
    assert_int_equal(sim_engine_admit(&f.e, &s, T0 + 1000), SIM_ADMIT_RUNNING);
    assert_int_equal(s.start_ns, T0 + 1000);
    assert_int_equal(s.hn.deadline_ns, T0 + 1000 + 20 * MS);
    assert_int_equal(f.m.running, 1);
    /* Never early: one nanosecond before, nothing. */
    int n_ev = -1;
    assert_int_equal(step(&f, &s, s.hn.deadline_ns - 1, &n_ev, NULL), SIM_STEP_NOT_DUE);
    assert_int_equal(n_ev, 0);
    assert_int_equal(f.m.ttft.count, 0);
    /* On time: the first token; the next is due 5 ms after this write. */
    int64_t t1 = T0 + 1000 + 20 * MS;
    sim_event ev[SIM_STEP_EVENTS_MAX];
    assert_int_equal(step(&f, &s, t1, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(n_ev, 1);
    assert_int_equal(ev[0].kind, SIM_EV_TOKEN);
    assert_false(ev[0].last);
    assert_true(ev[0].tok.len > 0);
    assert_int_equal(s.first_ns, t1);
    assert_int_equal(s.hn.deadline_ns, t1 + 5 * MS);
    assert_int_equal(f.m.ttft.count, 1);
    assert_int_equal(f.m.ttft.sum_ns, (uint64_t)(t1 - T0));
    /* 2 ms late: the lateness is recorded, and the next gap counts from the
     * late write (no catching up). */
    int64_t t2 = t1 + 7 * MS;
    assert_int_equal(step(&f, &s, t2, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(s.max_late_ns, 2 * MS);
    assert_int_equal(s.hn.deadline_ns, t2 + 5 * MS);
    assert_int_equal(f.m.itl.count, 1);
    assert_int_equal(f.m.itl.sum_ns, (uint64_t)(7 * MS));
    assert_int_equal(f.m.late.count, 2);
    assert_int_equal(f.m.late.sum_ns, (uint64_t)(2 * MS));
    /* A step that is not due yet moves nothing. */
    assert_int_equal(step(&f, &s, t2 + 1, NULL, NULL), SIM_STEP_NOT_DUE);
    assert_int_equal(s.emitted, 2);
    int64_t t3 = t2 + 5 * MS;
    assert_int_equal(step(&f, &s, t3, NULL, NULL), SIM_STEP_MORE);
    int64_t t4 = t3 + 5 * MS;
    assert_int_equal(step(&f, &s, t4, &n_ev, ev), SIM_STEP_ENDED);
    assert_true(ev[0].last);
    assert_int_equal(s.emitted, 4);
    assert_int_equal(s.last_ns, t4);
    assert_int_equal(s.max_late_ns, 2 * MS);
    assert_int_equal(f.m.generation_tokens, 4);
    sim_engine_complete(&f.e, &s, t4);
    assert_int_equal(f.m.success_length, 1);
    assert_int_equal(f.m.e2e.sum_ns, (uint64_t)(t4 - T0));
    sim_engine_remove(&f.e, &s, t4);
    assert_int_equal(s.state, SIM_ST_IDLE);
    assert_int_equal(f.m.running, 0);
    teardown(&f);
}

static void the_load_factor_is_the_one_when_the_gap_is_drawn(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.itl_ns = 10 * MS, .max_num_seqs = 2, .time_factor_under_load = 3},
          0, SIM_MODE_RANDOM);
    sim_stream a, b;
    request(&f, &a, "{\"prompt\":\"a\",\"max_tokens\":5}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &a, T0), SIM_ADMIT_RUNNING);
    assert_int_equal(a.hn.deadline_ns, T0); /* no TTFT */
    assert_int_equal(step(&f, &a, T0, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(a.hn.deadline_ns, T0 + 10 * MS); /* alone: x1 */
    request(&f, &b, "{\"prompt\":\"b\",\"max_tokens\":5}", 0, SIM_FAULT_NONE, T0 + MS);
    assert_int_equal(sim_engine_admit(&f.e, &b, T0 + MS), SIM_ADMIT_RUNNING);
    assert_int_equal(step(&f, &b, T0 + MS, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(b.hn.deadline_ns, T0 + 31 * MS); /* 2 of 2 running: x3 */
    assert_int_equal(step(&f, &a, T0 + 10 * MS, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(a.hn.deadline_ns, T0 + 40 * MS);
    sim_engine_remove(&f.e, &b, T0 + 20 * MS);
    assert_int_equal(step(&f, &a, T0 + 40 * MS, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(a.hn.deadline_ns, T0 + 50 * MS); /* alone again */
    sim_engine_remove(&f.e, &a, T0 + 50 * MS);
    teardown(&f);
}

static void slots_queue_in_fifo_order_and_refuse_past_the_queue(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.ttft_ns = 3 * MS, .max_num_seqs = 1}, 2, SIM_MODE_RANDOM);
    sim_stream a, b, c, d;
    const char *body = "{\"prompt\":\"a b\",\"max_tokens\":2}";
    request(&f, &a, body, 0, SIM_FAULT_NONE, T0);
    assert_false(sim_engine_full(&f.e));
    assert_int_equal(sim_engine_admit(&f.e, &a, T0), SIM_ADMIT_RUNNING);
    request(&f, &b, body, 0, SIM_FAULT_NONE, T0 + 1);
    assert_int_equal(sim_engine_admit(&f.e, &b, T0 + 1), SIM_ADMIT_WAITING);
    request(&f, &c, body, 0, SIM_FAULT_NONE, T0 + 2);
    assert_int_equal(sim_engine_admit(&f.e, &c, T0 + 2), SIM_ADMIT_WAITING);
    assert_int_equal(f.m.running, 1);
    assert_int_equal(f.m.waiting, 2);
    /* 1 running and 2 waiting: the next is refused (429 queue_full). */
    assert_true(sim_engine_full(&f.e));
    assert_ptr_equal(sim_engine_first_waiting(&f.e), &b);
    /* a leaves at T0 + 10 ms: b (the oldest) starts then, due 3 ms later,
     * through the heap; c still waits. */
    sim_engine_remove(&f.e, &a, T0 + 10 * MS);
    assert_false(sim_engine_full(&f.e));
    assert_int_equal(b.state, SIM_ST_RUNNING);
    assert_int_equal(b.start_ns, T0 + 10 * MS);
    assert_int_equal(b.hn.deadline_ns, T0 + 13 * MS);
    assert_int_equal(sim_engine_next_deadline(&f.e), T0 + 13 * MS);
    assert_int_equal(f.m.queue.count, 2);
    assert_int_equal(f.m.queue.sum_ns, (uint64_t)(10 * MS - 1));
    assert_int_equal(c.state, SIM_ST_WAITING);
    assert_int_equal(f.m.running, 1);
    assert_int_equal(f.m.waiting, 1);
    /* d queues behind c; c gives up (its client left): d is next. */
    request(&f, &d, body, 0, SIM_FAULT_NONE, T0 + 11 * MS);
    assert_int_equal(sim_engine_admit(&f.e, &d, T0 + 11 * MS), SIM_ADMIT_WAITING);
    sim_engine_remove(&f.e, &c, T0 + 12 * MS);
    assert_int_equal(f.m.waiting, 1);
    assert_ptr_equal(sim_engine_first_waiting(&f.e), &d);
    assert_null(sim_engine_pop_due(&f.e, T0 + 13 * MS - 1));
    assert_ptr_equal(sim_engine_pop_due(&f.e, T0 + 13 * MS), &b);
    assert_int_equal(sim_engine_next_deadline(&f.e), -1);
    sim_engine_remove(&f.e, &b, T0 + 20 * MS);
    assert_int_equal(d.state, SIM_ST_RUNNING);
    assert_int_equal(d.start_ns, T0 + 20 * MS);
    assert_null(sim_engine_first_waiting(&f.e));
    sim_engine_remove(&f.e, &d, T0 + 30 * MS);
    assert_int_equal(f.m.running, 0);
    assert_int_equal(f.m.waiting, 0);
    teardown(&f);
}

static void drop_stall_and_malformed_act_at_their_token(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.itl_ns = MS, .max_num_seqs = 1}, 0, SIM_MODE_RANDOM);
    sim_stream s, w;
    int n_ev;
    sim_event ev[SIM_STEP_EVENTS_MAX];
    /* midstream_drop of 7 tokens: cut after ceil(7/2) = 4. */
    request(&f, &s, "{\"prompt\":\"a\",\"max_tokens\":7}", 0, SIM_FAULT_MIDSTREAM_DROP, T0);
    assert_int_equal(s.fault_at, 4);
    sim_engine_admit(&f.e, &s, T0);
    int64_t t = T0;
    for (int i = 1; i < 4; i++, t += MS)
        assert_int_equal(step(&f, &s, t, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(step(&f, &s, t, &n_ev, ev), SIM_STEP_DROP);
    assert_int_equal(n_ev, 1); /* the 4th token is written, then the cut */
    assert_int_equal(s.emitted, 4);
    sim_engine_remove(&f.e, &s, t);
    /* stall of 6 tokens: floor(6/2) = 3 sent, then nothing; the slot is
     * released and the waiting request starts. */
    request(&f, &s, "{\"prompt\":\"a\",\"max_tokens\":6}", 0, SIM_FAULT_STALL, T0);
    assert_int_equal(s.fault_at, 3);
    sim_engine_admit(&f.e, &s, T0);
    request(&f, &w, "{\"prompt\":\"b\",\"max_tokens\":1}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &w, T0), SIM_ADMIT_WAITING);
    t = T0;
    for (int i = 0; i < 3; i++, t += MS)
        assert_int_equal(step(&f, &s, t, NULL, NULL), SIM_STEP_MORE);
    assert_int_equal(step(&f, &s, t, &n_ev, ev), SIM_STEP_STALL);
    assert_int_equal(n_ev, 0);
    assert_int_equal(s.emitted, 3);
    sim_engine_stall(&f.e, &s, t);
    assert_int_equal(s.state, SIM_ST_STALLED);
    assert_int_equal(w.state, SIM_ST_RUNNING);
    assert_int_equal(w.start_ns, t);
    sim_engine_remove(&f.e, &s, t); /* a stalled stream holds no slot */
    assert_int_equal(w.state, SIM_ST_RUNNING);
    assert_int_equal(f.m.running, 1);
    sim_engine_remove(&f.e, &w, t);
    /* malformed_chunk: a bad event right after the first token, then on. */
    request(&f, &s, "{\"prompt\":\"a\",\"max_tokens\":2}", 0, SIM_FAULT_MALFORMED_CHUNK, T0);
    sim_engine_admit(&f.e, &s, T0);
    assert_int_equal(step(&f, &s, T0, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(n_ev, 2);
    assert_int_equal(ev[0].kind, SIM_EV_TOKEN);
    assert_int_equal(ev[1].kind, SIM_EV_MALFORMED);
    assert_int_equal(step(&f, &s, T0 + MS, &n_ev, ev), SIM_STEP_ENDED);
    assert_int_equal(n_ev, 1);
    sim_engine_remove(&f.e, &s, T0 + MS);
    teardown(&f);
}

static void chat_roles_first_and_an_empty_response_ends_at_once(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.ttft_ns = 2 * MS}, 0, SIM_MODE_ECHO);
    sim_stream s;
    int n_ev;
    sim_event ev[SIM_STEP_EVENTS_MAX];
    request(&f, &s, "{\"messages\":[{\"role\":\"user\",\"content\":\"x y\"}],\"max_tokens\":5}", 1,
            SIM_FAULT_NONE, T0);
    assert_int_equal(s.n_out, 2); /* echo: the prompt runs out, "stop" */
    assert_true(s.finish_stop);
    sim_engine_admit(&f.e, &s, T0);
    assert_int_equal(step(&f, &s, T0 + 2 * MS, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(n_ev, 2);
    assert_int_equal(ev[0].kind, SIM_EV_ROLE);
    assert_int_equal(ev[1].kind, SIM_EV_TOKEN);
    assert_memory_equal(ev[1].tok.word, "x", 1);
    assert_int_equal(step(&f, &s, T0 + 2 * MS, &n_ev, ev), SIM_STEP_ENDED);
    assert_memory_equal(ev[0].tok.word, "y", 1);
    sim_engine_complete(&f.e, &s, T0 + 2 * MS);
    assert_int_equal(f.m.success_stop, 1);
    sim_engine_remove(&f.e, &s, T0 + 2 * MS);
    /* An empty echo prompt: no tokens; one empty, last token event. */
    request(&f, &s, "{\"prompt\":\"\",\"max_tokens\":3}", 0, SIM_FAULT_MIDSTREAM_DROP, T0);
    assert_int_equal(s.n_out, 0);
    assert_int_equal(s.fault, SIM_FAULT_NONE);
    sim_engine_admit(&f.e, &s, T0);
    assert_int_equal(step(&f, &s, T0 + 2 * MS, &n_ev, ev), SIM_STEP_ENDED);
    assert_int_equal(n_ev, 1);
    assert_int_equal(ev[0].kind, SIM_EV_TOKEN);
    assert_int_equal(ev[0].tok.len, 0);
    assert_true(ev[0].last);
    assert_int_equal(f.m.generation_tokens, 2);
    sim_engine_remove(&f.e, &s, T0 + 2 * MS);
    teardown(&f);
}

/* Appends what a step delivered for each choice to text[choice]. */
static void collect(const sim_stream *s, const sim_event *ev, int n_ev, char text[][256])
{
    for (int k = 0; k < n_ev; k++) {
        if (ev[k].kind != SIM_EV_TOKEN) continue;
        const sim_choice *ch = &s->ch->ch[ev[k].choice];
        size_t at = strlen(text[ev[k].choice]);
        assert_true(at + ch->emit_len + 2 < 256);
        if (ch->emit_space) text[ev[k].choice][at++] = ' ';
        memcpy(text[ev[k].choice] + at, ch->emit, ch->emit_len);
        text[ev[k].choice][at + ch->emit_len] = 0;
    }
}

/* n = 3: the choices step in lockstep, one token each per step, choice 0
 * the plain request's text; as 3 sequences they hold 3 slots, 3 times the
 * KV blocks, and count 3 times in the metrics; the body's text is rebuilt
 * from the tokens. */
static void n_choices_step_in_lockstep_as_n_sequences(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.ttft_ns = 2 * MS, .itl_ns = 5 * MS, .max_num_seqs = 4}, 0,
          SIM_MODE_RANDOM);
    sim_stream s, plain, b, c;
    request(&f, &plain, "{\"messages\":[{\"role\":\"user\",\"content\":\"a b\"}],\"max_tokens\":4}",
            1, SIM_FAULT_NONE, T0);
    assert_null(plain.ch);
    request(&f, &s,
            "{\"messages\":[{\"role\":\"user\",\"content\":\"a b\"}],\"max_tokens\":4,\"n\":3}", 1,
            SIM_FAULT_NONE, T0);
    assert_non_null(s.ch);
    assert_int_equal(sim_engine_admit(&f.e, &s, T0), SIM_ADMIT_RUNNING);
    assert_int_equal(f.m.running, 3);
    assert_int_equal(f.m.kv_blocks_used, 3); /* 2 prompt tokens: 1 block each */
    assert_int_equal(f.m.prompt_tokens, 6);
    /* 2 more sequences do not fit in 4 slots: b waits, and c (1) waits
     * behind it although it would fit. */
    request(&f, &b, "{\"prompt\":\"x\",\"max_tokens\":1,\"n\":2}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &b, T0), SIM_ADMIT_WAITING);
    request(&f, &c, "{\"prompt\":\"y\",\"max_tokens\":1}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &c, T0), SIM_ADMIT_WAITING);
    assert_int_equal(f.m.waiting, 2);

    char text[3][256] = {{0}};
    sim_event ev[SIM_STEP_EVENTS_MAX];
    int n_ev;
    int64_t t = T0 + 2 * MS;
    assert_int_equal(step(&f, &s, t, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(n_ev, 6); /* 3 roles first, then a token per choice */
    for (int k = 0; k < 3; k++) {
        assert_int_equal(ev[k].kind, SIM_EV_ROLE);
        assert_int_equal(ev[k].choice, k);
        assert_int_equal(ev[3 + k].kind, SIM_EV_TOKEN);
        assert_int_equal(ev[3 + k].choice, k);
        assert_false(ev[3 + k].last);
    }
    collect(&s, ev, n_ev, text);
    assert_int_equal(s.hn.deadline_ns, t + 5 * MS);
    assert_int_equal(f.m.ttft.count, 3);
    for (int i = 1; i < 4; i++) {
        t += 5 * MS;
        sim_step r = step(&f, &s, t, &n_ev, ev);
        assert_int_equal(r, i < 3 ? SIM_STEP_MORE : SIM_STEP_ENDED);
        assert_int_equal(n_ev, 3);
        for (int k = 0; k < 3; k++)
            assert_int_equal(ev[k].last, i == 3);
        collect(&s, ev, n_ev, text);
    }
    assert_int_equal(s.ch->tokens, 12);
    assert_int_equal(sim_stream_completion_tokens(&s), 12);
    assert_int_equal(f.m.generation_tokens, 12);
    assert_int_equal(f.m.itl.count, 9);
    /* Choice 0 is what the same request with n = 1 says; another differs. */
    char want[256] = "";
    for (int64_t i = 0; i < 4; i++) {
        sim_token tk = sim_model_token(&plain.spec, SIM_MODE_RANDOM, 7, i);
        strcat(want, " ");
        strncat(want, tk.word, tk.len);
    }
    assert_string_equal(text[0], want);
    assert_string_not_equal(text[1], text[0]);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(s.ch->ch[k].finish, SIM_FINISH_LENGTH);
        rb_buf body = {0};
        sim_engine_choice_text(&f.e, &s, k, &body);
        assert_string_equal(body.data, text[k]);
        rb_buf_free(&body);
    }
    sim_engine_complete(&f.e, &s, t);
    assert_int_equal(f.m.success_length, 3);
    assert_int_equal(f.m.e2e.count, 3);
    assert_int_equal(f.m.output_len.sum, 12);
    /* Its 3 slots free: b (2) and then c (1) start, in order. */
    sim_engine_remove(&f.e, &s, t);
    assert_null(s.ch);
    assert_int_equal(b.state, SIM_ST_RUNNING);
    assert_int_equal(c.state, SIM_ST_RUNNING);
    assert_int_equal(f.m.running, 3);
    sim_engine_remove(&f.e, &b, t);
    sim_engine_remove(&f.e, &c, t);
    sim_engine_remove(&f.e, &plain, t);
    assert_int_equal(f.m.running, 0);
    assert_int_equal(f.m.kv_blocks_used, 0);
    /* More choices than slots: alone, when nothing else runs. */
    request(&f, &s, "{\"prompt\":\"x\",\"max_tokens\":1,\"n\":6}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &s, T0), SIM_ADMIT_RUNNING);
    assert_int_equal(f.m.running, 6);
    sim_engine_remove(&f.e, &s, T0);
    teardown(&f);
}

/* Runs an echo-mode request to its end; text[c] gets what was delivered,
 * and nothing delivered is ever part of a stop string. Returns the steps. */
static int run_stops(fixture *f, sim_stream *s, const char *body, char text[][256])
{
    request(f, s, body, 0, SIM_FAULT_NONE, T0);
    sim_engine_admit(&f->e, s, T0);
    sim_event ev[SIM_STEP_EVENTS_MAX];
    int n_ev, steps = 0;
    sim_step r;
    do {
        r = step(f, s, T0 + steps * MS, &n_ev, ev);
        collect(s, ev, n_ev, text);
        steps++;
    } while (r == SIM_STEP_MORE && steps < 100);
    assert_int_equal(r, SIM_STEP_ENDED);
    return steps;
}

/* Stop strings, as vLLM's detokenizer applies them: the choice ends at the
 * token that completes one, with finish stop and the string named; the text
 * ends where it starts (include_stop_str_in_output: where it ends); the
 * first string of the list found wins; a string may span tokens; while one
 * may be starting, its bytes are held back, so none is ever sent. */
static void a_stop_string_ends_the_choice_and_is_never_sent(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.itl_ns = MS}, 0, SIM_MODE_ECHO);
    sim_stream s;
    const char *p = "\"prompt\":\"alpha beta STOP gamma delta\",\"max_tokens\":5";
    char body[512];
    char text[2][256] = {{0}};

    snprintf(body, sizeof body, "{%s,\"stop\":\"STOP\"}", p);
    assert_int_equal(run_stops(&f, &s, body, text), 3);
    assert_string_equal(text[0], " alpha beta ");
    assert_int_equal(s.ch->ch[0].finish, SIM_FINISH_STOP_STR);
    assert_int_equal(s.ch->ch[0].stop_idx, 0);
    assert_int_equal(s.ch->ch[0].tokens, 3); /* the token that completed it counts */
    assert_int_equal(sim_stream_completion_tokens(&s), 3);
    assert_int_equal(f.m.generation_tokens, 3);
    rb_buf b = {0};
    sim_engine_choice_text(&f.e, &s, 0, &b);
    assert_string_equal(b.data, " alpha beta ");
    sim_engine_complete(&f.e, &s, T0);
    assert_int_equal(f.m.success_stop, 1);
    sim_engine_remove(&f.e, &s, T0);

    /* Held back: the first token delivers all but 3 bytes ("STOP" - 1). */
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    sim_engine_admit(&f.e, &s, T0);
    sim_event ev[SIM_STEP_EVENTS_MAX];
    int n_ev;
    assert_int_equal(step(&f, &s, T0, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(s.ch->ch[0].emit_len, 3);
    assert_memory_equal(s.ch->ch[0].emit, " al", 3);
    assert_int_equal(s.ch->ch[0].text_offset, 0);
    assert_int_equal(step(&f, &s, T0 + MS, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(s.ch->ch[0].text_offset, 3);
    assert_int_equal(s.ch->ch[0].pos, 1);
    sim_engine_remove(&f.e, &s, T0);

    /* Across tokens, and list order: "a S" (in "beta STOP") before "delta". */
    memset(text, 0, sizeof text);
    snprintf(body, sizeof body, "{%s,\"stop\":[\"delta\",\"a S\"]}", p);
    assert_int_equal(run_stops(&f, &s, body, text), 3);
    assert_string_equal(text[0], " alpha bet");
    assert_int_equal(s.ch->ch[0].stop_idx, 1);
    sim_engine_remove(&f.e, &s, T0);

    /* include_stop_str_in_output: nothing held back, the string kept. */
    memset(text, 0, sizeof text);
    snprintf(body, sizeof body, "{%s,\"stop\":\"TO\",\"include_stop_str_in_output\":true}", p);
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    sim_engine_admit(&f.e, &s, T0);
    assert_int_equal(step(&f, &s, T0, &n_ev, ev), SIM_STEP_MORE);
    assert_int_equal(s.ch->ch[0].emit_len, 6); /* " alpha", whole */
    sim_engine_remove(&f.e, &s, T0);
    assert_int_equal(run_stops(&f, &s, body, text), 3);
    assert_string_equal(text[0], " alpha beta STO");
    rb_buf_reset(&b);
    sim_engine_choice_text(&f.e, &s, 0, &b);
    assert_string_equal(b.data, " alpha beta STO");
    sim_engine_remove(&f.e, &s, T0);

    /* No match: everything, the held-back tail on the last token; echo's
     * end of prompt is "stop" without a stop string. n = 2: both alike. */
    memset(text, 0, sizeof text);
    snprintf(body, sizeof body,
             "{\"prompt\":\"alpha beta STOP gamma delta\",\"max_tokens\":9,\"stop\":[\"zeta\"],"
             "\"n\":2}");
    assert_int_equal(run_stops(&f, &s, body, text), 5);
    assert_string_equal(text[0], " alpha beta STOP gamma delta");
    assert_string_equal(text[1], text[0]);
    assert_int_equal(s.ch->ch[1].finish, SIM_FINISH_EOS);
    assert_int_equal(s.ch->ch[1].stop_idx, -1);
    sim_engine_remove(&f.e, &s, T0);

    /* An echoed prompt of invalid UTF-8 (long runs of continuation bytes):
     * the held-back tail stays bounded, and all of it is delivered. */
    char word[201];
    memset(word, 0x80, 200);
    word[200] = 0;
    snprintf(body, sizeof body,
             "{\"prompt\":\"%s\",\"max_tokens\":40,\"ignore_eos\":true,"
             "\"stop\":\"zzzz\"}",
             word);
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    sim_engine_admit(&f.e, &s, T0);
    int64_t delivered = 0;
    for (int i = 0; i < 40; i++) {
        assert_int_equal(step(&f, &s, T0 + i * MS, &n_ev, ev),
                         i < 39 ? SIM_STEP_MORE : SIM_STEP_ENDED);
        delivered += (int64_t)s.ch->ch[0].emit_len;
        assert_true(s.ch->ch[0].held - s.ch->ch[0].sent <= 3 + 3);
    }
    assert_int_equal(delivered, 40 * 201);
    sim_engine_remove(&f.e, &s, T0);
    rb_buf_free(&b);
    teardown(&f);
}

/* In random mode a choice that meets its stop string ends alone: it gives
 * back its slot (a waiting request starts) and its blocks; the others go
 * on to max_tokens. */
static void a_choice_that_stops_early_frees_its_slot(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.itl_ns = MS, .max_num_seqs = 2}, 0, SIM_MODE_RANDOM);
    sim_stream s, w;
    const char *p = "\"prompt\":\"one two\",\"max_tokens\":6,\"n\":2";
    char body[256];
    snprintf(body, sizeof body, "{%s}", p);
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    /* The texts, and a token k of choice 0 whose text (" word") appears
     * neither in choice 1's text nor in choice 0's before token k. */
    char t0[256] = "", t1[256] = "", stop[64] = "";
    size_t start[6];
    for (int64_t i = 0; i < 6; i++) {
        sim_token a = sim_model_choice_token(&s.spec, SIM_MODE_RANDOM, 7, 0, i);
        sim_token c = sim_model_choice_token(&s.spec, SIM_MODE_RANDOM, 7, 1, i);
        start[i] = strlen(t0);
        strcat(t0, " ");
        strncat(t0, a.word, a.len);
        strcat(t1, " ");
        strncat(t1, c.word, c.len);
    }
    int k = -1;
    for (int i = 1; i < 5 && k < 0; i++) {
        sim_token a = sim_model_choice_token(&s.spec, SIM_MODE_RANDOM, 7, 0, i);
        snprintf(stop, sizeof stop, " %.*s", (int)a.len, a.word);
        if (!strstr(t1, stop) && (size_t)(strstr(t0, stop) - t0) == start[i]) k = i;
    }
    sim_engine_remove(&f.e, &s, T0);
    assert_true(k > 0); /* a property of seed 7 and this prompt */
    const char *at = t0 + start[k];
    snprintf(body, sizeof body, "{%s,\"stop\":\"%s\"}", p, stop);
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &s, T0), SIM_ADMIT_RUNNING);
    request(&f, &w, "{\"prompt\":\"z\",\"max_tokens\":1}", 0, SIM_FAULT_NONE, T0);
    assert_int_equal(sim_engine_admit(&f.e, &w, T0), SIM_ADMIT_WAITING);
    char text[2][256] = {{0}};
    sim_event ev[SIM_STEP_EVENTS_MAX];
    int n_ev, steps = 0;
    sim_step r;
    do {
        r = step(&f, &s, T0 + steps * MS, &n_ev, ev);
        collect(&s, ev, n_ev, text);
        steps++;
        if (s.ch->ch[0].finish && r == SIM_STEP_MORE) {
            if (w.state != SIM_ST_RUNNING) fail_msg("the slot was kept");
            assert_int_equal(s.kv_blocks, 1); /* choice 1's only */
        }
    } while (r == SIM_STEP_MORE && steps < 20);
    assert_int_equal(r, SIM_STEP_ENDED);
    assert_int_equal(s.ch->ch[0].finish, SIM_FINISH_STOP_STR);
    assert_int_equal(s.ch->ch[0].tokens, k + 1);
    assert_int_equal(s.ch->ch[1].finish, SIM_FINISH_LENGTH);
    assert_int_equal(s.ch->ch[1].tokens, 6);
    assert_int_equal(sim_stream_completion_tokens(&s), k + 1 + 6);
    assert_int_equal((int64_t)strlen(text[0]), at - t0);
    assert_memory_equal(text[0], t0, (size_t)(at - t0));
    assert_string_equal(text[1], t1);
    assert_int_equal(w.state, SIM_ST_RUNNING);
    assert_int_equal(f.m.running, 2); /* choice 1, and w */
    assert_int_equal(s.slots, 1);
    sim_engine_complete(&f.e, &s, T0);
    assert_int_equal(f.m.success_stop, 1);
    assert_int_equal(f.m.success_length, 1);
    sim_engine_remove(&f.e, &s, T0);
    sim_engine_remove(&f.e, &w, T0);
    assert_int_equal(f.m.running, 0);
    assert_int_equal(f.m.kv_blocks_used, 0);
    teardown(&f);
}

static void the_prefix_cache_shortens_the_prefill(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.prefill_per_token_ns = MS}, 0, SIM_MODE_RANDOM);
    f.e.cfg.enable_prefix_caching = 1;
    char body[512] = "{\"prompt\":\"";
    for (int i = 0; i < 40; i++)
        snprintf(body + strlen(body), sizeof body - strlen(body), "w%d ", i);
    strcat(body, "\",\"max_tokens\":1}");
    sim_stream s;
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    sim_engine_admit(&f.e, &s, T0);
    assert_int_equal(s.cached, 0);
    assert_int_equal(s.hn.deadline_ns, T0 + 40 * MS);
    assert_int_equal(f.m.prompt_tokens, 40);
    sim_engine_remove(&f.e, &s, T0);
    request(&f, &s, body, 0, SIM_FAULT_NONE, T0);
    sim_engine_admit(&f.e, &s, T0);
    assert_int_equal(s.cached, 32); /* two full blocks of 16 */
    assert_int_equal(s.hn.deadline_ns, T0 + 8 * MS);
    sim_engine_remove(&f.e, &s, T0);
    teardown(&f);
}

static void drain_stops_starts_and_the_heap_pops_in_due_order(void **state)
{
    fixture f;
    setup(&f, (sim_latency_cfg){.itl_ns = MS, .max_num_seqs = 3}, 0, SIM_MODE_RANDOM);
    sim_stream s[4];
    int64_t due[3] = {T0 + 30, T0 + 10, T0 + 20};
    for (int i = 0; i < 4; i++) {
        request(&f, &s[i], "{\"prompt\":\"a\",\"max_tokens\":3}", 0, SIM_FAULT_NONE, T0);
        assert_int_equal(sim_engine_admit(&f.e, &s[i], T0),
                         i < 3 ? SIM_ADMIT_RUNNING : SIM_ADMIT_WAITING);
        if (i < 3) {
            s[i].hn.deadline_ns = due[i];
            assert_int_equal(sim_engine_schedule(&f.e, &s[i]), 0);
        }
    }
    assert_int_equal(sim_engine_next_deadline(&f.e), T0 + 10);
    assert_null(sim_engine_pop_due(&f.e, T0 + 9));
    assert_ptr_equal(sim_engine_pop_due(&f.e, T0 + 25), &s[1]);
    assert_ptr_equal(sim_engine_pop_due(&f.e, T0 + 25), &s[2]);
    assert_null(sim_engine_pop_due(&f.e, T0 + 25));
    /* Draining: a freed slot starts nobody; the waiting one is the shell's
     * to answer (503). */
    sim_engine_drain(&f.e);
    sim_engine_remove(&f.e, &s[0], T0 + 40); /* s[0] still in the heap */
    assert_int_equal(sim_engine_next_deadline(&f.e), -1);
    assert_int_equal(s[3].state, SIM_ST_WAITING);
    assert_ptr_equal(sim_engine_first_waiting(&f.e), &s[3]);
    sim_engine_remove(&f.e, &s[3], T0 + 40);
    assert_null(sim_engine_first_waiting(&f.e));
    sim_engine_remove(&f.e, &s[1], T0 + 40);
    sim_engine_remove(&f.e, &s[2], T0 + 40);
    assert_int_equal(f.m.running, 0);
    assert_int_equal(f.m.waiting, 0);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tokens_are_due_at_ttft_then_itl_from_the_actual_write),
        cmocka_unit_test(the_load_factor_is_the_one_when_the_gap_is_drawn),
        cmocka_unit_test(slots_queue_in_fifo_order_and_refuse_past_the_queue),
        cmocka_unit_test(drop_stall_and_malformed_act_at_their_token),
        cmocka_unit_test(chat_roles_first_and_an_empty_response_ends_at_once),
        cmocka_unit_test(n_choices_step_in_lockstep_as_n_sequences),
        cmocka_unit_test(a_stop_string_ends_the_choice_and_is_never_sent),
        cmocka_unit_test(a_choice_that_stops_early_frees_its_slot),
        cmocka_unit_test(the_prefix_cache_shortens_the_prefill),
        cmocka_unit_test(drain_stops_starts_and_the_heap_pops_in_due_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
