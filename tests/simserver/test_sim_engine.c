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
        cmocka_unit_test(the_prefix_cache_shortens_the_prefill),
        cmocka_unit_test(drain_stops_starts_and_the_heap_pops_in_due_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
