/* Tests of multi-turn sessions (lg_session), the pieces they are made of
 * (a response's text kept by lg_chunk_decode_text, bodies from pieces) and
 * the split of a stage's arrivals by user over the workers (lg_sched_owner):
 * the state machine (wait, order, failure, stage reset, the cap), a body
 * that stays valid JSON with a response holding quotes, newlines and \u
 * escapes, and every user's rounds on one worker. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_chunk.h"
#include "lg_run.h"
#include "lg_session.h"
#include "rb_buf.h"

/* A pool of 2 groups x 2 prompts: system prompt "s<g>a s<g>b", question
 * "q<u>"; group 1 has no system prompt when bare is set. */
static void pool(lg_dataset *ds, int bare)
{
    ds->n = 4;
    ds->items = calloc(4, sizeof *ds->items);
    assert_non_null(ds->items);
    for (int u = 0; u < 4; u++) {
        char t[64];
        int g = u / 2;
        if (bare && g == 1) {
            snprintf(t, sizeof t, "q%d", u);
            ds->items[u].prefix_len = 0;
            ds->items[u].input_tokens = 1;
        } else {
            snprintf(t, sizeof t, "s%da s%db q%d", g, g, u);
            ds->items[u].prefix_len = 7;
            ds->items[u].input_tokens = 3;
        }
        ds->items[u].text = strdup(t);
        ds->items[u].output_tokens = 5;
    }
}

static lg_arrival arr(int64_t in_stage, int stage)
{
    return (lg_arrival){.index = in_stage, .stage = stage, .in_stage = in_stage};
}

/* The prompt of user's next round (NULL: the pool's body applies). */
static char *prompt_of(lg_sessions *s, int64_t user, const lg_opts *o, int32_t *tokens)
{
    char *body;
    size_t len;
    assert_int_equal(lg_session_render(s, user, o, &body, &len, tokens), 0);
    if (!body) return NULL;
    assert_int_equal(strlen(body), len);
    cJSON *j = cJSON_ParseWithLength(body, len);
    if (!j) fail_msg("not JSON: %s", body);
    free(body);
    cJSON *p = cJSON_GetObjectItem(j, "prompt");
    if (!p)
        p = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "messages"), 0),
                                "content");
    assert_true(cJSON_IsString(p));
    char *r = strdup(p->valuestring);
    cJSON_Delete(j);
    return r;
}

/* A response's text as the worker keeps it: decoded from its events. */
static void respond(rb_buf *t, const char *const *events, int n)
{
    rb_buf_reset(t);
    for (int i = 0; i < n; i++) {
        lg_chunk c;
        assert_int_equal(lg_chunk_decode_text(events[i], strlen(events[i]), &c, t), 0);
    }
}

/* Each test's table: options, a pool, its sessions and a response buffer. */
typedef struct fx {
    lg_opts o;
    lg_dataset ds;
    lg_sessions s;
    rb_buf t;
    int32_t tok;
} fx;

static fx *fx_new(int bare, size_t cap)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    lg_opts_defaults(&f->o, 1);
    pool(&f->ds, bare);
    assert_int_equal(lg_session_init(&f->s, &f->ds, cap), 0);
    f->t = (rb_buf)RB_BUF_INIT(cap);
    return f;
}

static void fx_free(fx *f)
{
    rb_buf_free(&f->t);
    lg_session_free(&f->s);
    lg_dataset_free(&f->ds);
    free(f);
}

/* The arrival in_stage of stage 0 is admitted at once and sent. */
static int64_t send_now(fx *f, int64_t in_stage)
{
    lg_arrival a = arr(in_stage, 0);
    assert_int_equal(lg_session_admit(&f->s, &a, 0, 0), 1);
    int64_t u = lg_session_user(&f->s, &a);
    lg_session_start(&f->s, u);
    return u;
}

/* user's round in flight ends with one event's text (NULL: it failed). */
static void end_with(fx *f, int64_t user, const char *event, int32_t in, int32_t out)
{
    if (event) respond(&f->t, &event, 1);
    lg_session_end(&f->s, user, event != NULL, &f->t, in, out);
}

/* user's next prompt is want (NULL: the pool's own body). */
static void next_prompt_is(fx *f, int64_t user, const char *want)
{
    char *p = prompt_of(&f->s, user, &f->o, &f->tok);
    if (!want) {
        assert_null(p);
        return;
    }
    assert_non_null(p);
    assert_string_equal(p, want);
    free(p);
}

#define CTX1 "s0a s0b q1  say \"hi\"\n a\\b \xc3\xa9 q1"

static void user_and_round_from_the_stage_index(void **state)
{
    (void)state;
    fx *f = fx_new(0, 4096);
    lg_arrival a = arr(9, 1);
    assert_int_equal(lg_session_user(&f->s, &a), 1);
    assert_int_equal(lg_session_round(&f->s, &a), 2);
    fx_free(f);
}

static void context_grows_by_prompt_and_response(void **state)
{
    (void)state;
    fx *f = fx_new(0, 4096);
    /* round 0 of user 1: the pool's own body */
    next_prompt_is(f, 1, NULL);
    assert_int_equal(f->tok, 3);
    send_now(f, 1);
    /* a response holding quotes, a newline, a backslash and a \u escape
     * (the last one goes through cJSON) */
    const char *ev[] = {"{\"choices\":[{\"text\":\" say \\\"hi\\\"\\n\"}]}",
                        "{\"choices\":[{\"text\":\" a\\\\b \\u00e9\"}]}",
                        "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}"};
    respond(&f->t, ev, 3);
    lg_session_end(&f->s, 1, 1, &f->t, 3, 4);
    next_prompt_is(f, 1, CTX1);
    assert_int_equal(f->tok, 3 + 4 + 1); /* prompt + response + the question */
    /* round 1 fails: the context stays; round 2 asks the same again */
    send_now(f, 5);
    end_with(f, 1, NULL, 8, 0);
    next_prompt_is(f, 1, CTX1);
    send_now(f, 9);
    end_with(f, 1, "{\"choices\":[{\"text\":\" ok\"}]}", 8, 1);
    next_prompt_is(f, 1, CTX1 "  ok q1");
    assert_int_equal(f->tok, 8 + 1 + 1);
    /* the chat shape carries the same text */
    f->o.chat = 1;
    next_prompt_is(f, 1, CTX1 "  ok q1");
    /* the other users never moved */
    next_prompt_is(f, 0, NULL);
    fx_free(f);
}

static void no_system_prompt_starts_from_the_question(void **state)
{
    (void)state;
    fx *f = fx_new(1, 4096);
    int64_t u = send_now(f, 3);
    end_with(f, u, "{\"choices\":[{\"text\":\" r\"}]}", 1, 1);
    next_prompt_is(f, 3, "q3  r q3");
    fx_free(f);
}

static void a_round_waits_for_the_one_in_flight_in_order(void **state)
{
    (void)state;
    fx *f = fx_new(0, 4096);
    lg_sessions *s = &f->s;
    lg_arrival b = arr(6, 0), c = arr(10, 0), other = arr(3, 0), got;
    int64_t when;
    send_now(f, 2);
    /* rounds 1 and 2 of user 2 come while round 0 is in flight: they wait */
    assert_int_equal(lg_session_admit(s, &b, 20, 0), 0);
    assert_int_equal(lg_session_admit(s, &c, 30, 0), 0);
    assert_int_equal(s->waiting, 2);
    /* another user is not held up */
    assert_int_equal(lg_session_admit(s, &other, 25, 0), 1);
    assert_int_equal(lg_session_next(s, 3, &got, &when), 0);
    /* round 0 ends: round 1 comes out first, with its intended time */
    end_with(f, 2, "{\"choices\":[{\"text\":\" r\"}]}", 3, 1);
    assert_int_equal(lg_session_next(s, 2, &got, &when), 1);
    assert_int_equal(got.in_stage, 6);
    assert_int_equal(when, 20);
    /* a new arrival may not overtake round 2, still waiting; the one handed
     * out goes */
    lg_arrival d = arr(14, 0);
    assert_int_equal(lg_session_admit(s, &d, 40, 0), 0);
    assert_int_equal(lg_session_admit(s, &got, when, 1), 1);
    lg_session_start(s, 2);
    end_with(f, 2, NULL, 3, 0);
    assert_int_equal(lg_session_next(s, 2, &got, &when), 1);
    assert_int_equal(got.in_stage, 10);
    assert_int_equal(lg_session_next(s, 2, &got, &when), 1);
    assert_int_equal(got.in_stage, 14);
    assert_int_equal(lg_session_next(s, 2, &got, &when), 0);
    assert_int_equal(s->waited, 3);
    assert_int_equal(s->waiting, 0);
    fx_free(f);
}

static void a_new_stage_starts_afresh(void **state)
{
    (void)state;
    fx *f = fx_new(0, 4096);
    send_now(f, 0);
    end_with(f, 0, "{\"choices\":[{\"text\":\" r\"}]}", 3, 1);
    next_prompt_is(f, 0, "s0a s0b q0  r q0");
    lg_arrival a = arr(0, 1); /* stage 1's first arrival: user 0, round 0 again */
    assert_int_equal(lg_session_admit(&f->s, &a, 0, 0), 1);
    next_prompt_is(f, 0, NULL);
    fx_free(f);
}

static void the_context_stops_growing_at_its_cap(void **state)
{
    (void)state;
    /* "s0a s0b q0" (10) + " " + " abcd" (5) = 16 bytes fit in 20 */
    fx *f = fx_new(0, 20);
    const char *ev = "{\"choices\":[{\"text\":\" abcd\"}]}";
    send_now(f, 0);
    end_with(f, 0, ev, 3, 1);
    next_prompt_is(f, 0, "s0a s0b q0  abcd q0");
    /* the next context would be 16 + 3 + 1 + 5 = 25 > 20: kept as it was */
    send_now(f, 4);
    end_with(f, 0, ev, 5, 1);
    assert_int_equal(f->s.capped, 1);
    next_prompt_is(f, 0, "s0a s0b q0  abcd q0");
    /* a response longer than the cap is cut by its buffer: not added */
    const char *big[] = {"{\"choices\":[{\"text\":\" 0123456789\"}]}",
                         "{\"choices\":[{\"text\":\" 0123456789\"}]}"};
    send_now(f, 8);
    respond(&f->t, big, 2);
    assert_int_equal(f->t.err, -EMSGSIZE);
    lg_session_end(&f->s, 0, 1, &f->t, 5, 2);
    assert_int_equal(f->s.capped, 2);
    /* the cap for many users keeps them all within the budget */
    assert_int_equal(lg_session_ctx_max(20), LG_SESSION_CTX_MAX);
    assert_int_equal(lg_session_ctx_max(10000), LG_SESSION_BUDGET / 10000);
    fx_free(f);
}

static void text_is_kept_only_when_asked_and_only_for_decoded_chunks(void **state)
{
    (void)state;
    rb_buf t = RB_BUF_INIT(0);
    lg_chunk c;
    const char *chat = "{\"choices\":[{\"delta\":{\"content\":\"x\\ty\"}}]}";
    assert_int_equal(lg_chunk_decode_text(chat, strlen(chat), &c, &t), 0);
    assert_string_equal(t.data, "x\\ty");
    assert_int_equal(c.content_bytes, 3);
    /* a malformed chunk adds nothing, whichever path gave up on it */
    const char *bad = "{\"choices\":[{\"text\":\"zz\"}],";
    assert_int_equal(lg_chunk_decode_text(bad, strlen(bad), &c, &t), -EBADMSG);
    const char *bad2 = "{\"choices\":[{\"text\":\"\\u0041\"}],\"usage\":7}";
    assert_int_equal(lg_chunk_decode_text(bad2, strlen(bad2), &c, &t), -EBADMSG);
    assert_string_equal(t.data, "x\\ty");
    /* a non-streamed body's message */
    const char *whole = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\" m\"}}]}";
    assert_int_equal(lg_chunk_decode_text(whole, strlen(whole), &c, &t), 0);
    assert_string_equal(t.data, "x\\ty m");
    /* without a buffer the decode is lg_chunk_decode's */
    lg_chunk d;
    assert_int_equal(lg_chunk_decode_text(chat, strlen(chat), &c, NULL), 0);
    assert_int_equal(lg_chunk_decode(chat, strlen(chat), &d), 0);
    assert_memory_equal(&c, &d, sizeof c);
    rb_buf_free(&t);
}

static void bodies_from_pieces_escape_raw_pieces_only(void **state)
{
    (void)state;
    lg_opts o;
    lg_opts_defaults(&o, 1);
    lg_body_piece pc[3] = {{"a\\\"b", 4, 1}, {" ", 1, 1}, {"c\"d\n", 4, 0}};
    char *body;
    size_t len;
    assert_int_equal(lg_body_render_pieces(&o, pc, 3, 9, &body, &len), 0);
    cJSON *j = cJSON_ParseWithLength(body, len);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "prompt")->valuestring, "a\"b c\"d\n");
    assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 9);
    cJSON_Delete(j);
    /* one raw piece is lg_body_render's body, byte for byte */
    char *one;
    size_t one_len;
    assert_int_equal(lg_body_render(&o, "c\"d\n", 9, &one, &one_len), 0);
    lg_body_piece raw = {"c\"d\n", 4, 0};
    free(body);
    assert_int_equal(lg_body_render_pieces(&o, &raw, 1, 9, &body, &len), 0);
    assert_int_equal(len, one_len);
    assert_memory_equal(body, one, len);
    free(body);
    free(one);
}

/* Every user's arrivals on one worker, users spread over the workers, and
 * without sessions the split by index as before. */
static void arrivals_split_by_user(void **state)
{
    (void)state;
    lg_stage st[2] = {{.rate_per_s = 1000, .max_requests = 23},
                      {.rate_per_s = 1000, .max_requests = 17}};
    lg_sched_spec spec = {
        .seed = 3, .burstiness = 1, .stages = st, .n_stages = 2, .session_users = 6};
    char err[128];
    for (int k = 1; k <= 4; k++) {
        int owner[6] = {-1, -1, -1, -1, -1, -1};
        int64_t total = 0, per[4] = {0};
        for (int w = 0; w < k; w++) {
            lg_sched *it = lg_sched_new(&spec, err, sizeof err);
            assert_non_null(it);
            lg_arrival a;
            int64_t last = -1;
            while (lg_sched_next_for(it, w, k, &a)) {
                int64_t u = a.in_stage % 6;
                if (owner[u] < 0) owner[u] = w;
                assert_int_equal(owner[u], w);
                assert_true(a.index > last);
                last = a.index;
                assert_int_equal(a.in_stage, a.stage ? a.index - 23 : a.index);
                total++;
                per[w]++;
            }
            lg_sched_free(it);
        }
        assert_int_equal(total, 40);
        for (int u = 0; u < 6; u++)
            assert_int_equal(owner[u], u % k);
        if (k == 2) assert_int_equal(per[0], 12 + 9); /* users 0, 2, 4 */
    }
    spec.session_users = 0;
    lg_arrival a = {.index = 7, .in_stage = 2};
    assert_int_equal(lg_sched_owner(&spec, &a, 3), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(user_and_round_from_the_stage_index),
        cmocka_unit_test(context_grows_by_prompt_and_response),
        cmocka_unit_test(no_system_prompt_starts_from_the_question),
        cmocka_unit_test(a_round_waits_for_the_one_in_flight_in_order),
        cmocka_unit_test(a_new_stage_starts_afresh),
        cmocka_unit_test(the_context_stops_growing_at_its_cap),
        cmocka_unit_test(text_is_kept_only_when_asked_and_only_for_decoded_chunks),
        cmocka_unit_test(bodies_from_pieces_escape_raw_pieces_only),
        cmocka_unit_test(arrivals_split_by_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
