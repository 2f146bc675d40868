/* lg_session: multi-turn chat sessions on the shared-prefix dataset, as
 * Inference Perf defines them (data.shared_prefix.enable_multi_turn_chat;
 * its datagen/synthetic/shared_prefix_datagen.py and apis/user_session.py):
 *
 * - one session per user; the users are the pool's entries (groups x
 *   prompts per group), user u asking entry u's question in every round;
 * - arrival j of a stage (lg_arrival.in_stage) is round j / users of user
 *   j % users; every stage starts its conversations afresh (Inference Perf
 *   clears its sessions between stages);
 * - a user's context starts as its group's system prompt; a round's prompt
 *   is context + " " + question (round 0's is then the pool entry itself,
 *   sent with its pre-rendered body), and once the round has succeeded the
 *   context becomes prompt + " " + the response's text; a failed round
 *   leaves the context as it was;
 * - a round is not sent before the user's previous round has ended: an
 *   arrival whose user has a round in flight waits here (in order) and goes
 *   out when that round ends, with its intended time unchanged, so the wait
 *   shows as schedule lag and in every latency from the intended time;
 * - all of a user's rounds go to one worker (lg_sched_owner), so its
 *   context lives in one process.
 *
 * Bounds: a context is kept as the inside of a JSON string (the response's
 * text as the server escaped it, lg_chunk_decode_text) of at most ctx_max
 * bytes (lg_session_ctx_max: 1 MiB, or less so that all the users' contexts
 * together stay within 512 MiB). A round whose new context would pass it
 * leaves the context as it was (counted in capped): the conversation stops
 * growing there, and every later round sends the same context again.
 *
 * Pure: no I/O, no clocks; one table per worker, not thread-safe. */
#ifndef LG_SESSION_H
#define LG_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "lg_dataset.h"
#include "lg_plan.h"
#include "lg_sched.h"
#include "rb_buf.h"

#define LG_SESSION_CTX_MAX ((size_t)1 << 20)
#define LG_SESSION_BUDGET ((size_t)512 << 20)

typedef struct lg_sess_wait {
    lg_arrival a;
    int64_t intended_ns;
    struct lg_sess_wait *next;
} lg_sess_wait;

typedef struct lg_sess_user {
    char *ctx; /* the context, JSON-escaped; NULL: the first one (the system prompt) */
    size_t ctx_len;
    int32_t ctx_tokens; /* its tokens (the server's count of the prompt, plus the response's) */
    int stage;          /* the stage whose conversation ctx belongs to */
    int busy;           /* a round is in flight */
    lg_sess_wait *head, *tail; /* arrivals waiting for that round to end */
} lg_sess_user;

typedef struct lg_sessions {
    const lg_dataset *ds;
    size_t n_users; /* = ds->n */
    size_t ctx_max;
    lg_sess_user *u;
    lg_sess_wait *spare; /* wait nodes for reuse */
    int64_t waited;      /* arrivals that waited for their user's previous round */
    int64_t waiting;     /* arrivals waiting now */
    int64_t capped;      /* successful rounds whose response was not added (ctx_max) */
} lg_sessions;

/* The per-context cap for `users` users: min(LG_SESSION_CTX_MAX,
 * LG_SESSION_BUDGET / users). */
size_t lg_session_ctx_max(size_t users);

/* A table for the pool ds (ds->n users, at least 1). Returns 0 or -ENOMEM. */
int lg_session_init(lg_sessions *s, const lg_dataset *ds, size_t ctx_max);
void lg_session_free(lg_sessions *s);

/* The user an arrival belongs to (in_stage % users), and its round. */
int64_t lg_session_user(const lg_sessions *s, const lg_arrival *a);
int64_t lg_session_round(const lg_sessions *s, const lg_arrival *a);

/* An arrival is due. Returns 1 when it may go now (its user has no round in
 * flight and, unless from_queue, nobody waiting before it; a new stage's
 * first round starts a fresh context), 0 when it was queued behind its
 * user's round in flight, -ENOMEM. from_queue: it is the one
 * lg_session_next just handed out. */
int lg_session_admit(lg_sessions *s, const lg_arrival *a, int64_t intended_ns, int from_queue);
/* The admitted round is in flight (it is dispatched). */
void lg_session_start(lg_sessions *s, int64_t user);
/* The body of user's next round: 0 with *body NULL when its context is the
 * first one (the pool's pre-rendered body applies), 0 with a malloc'd *body
 * and *len, or -ENOMEM. *input_tokens: the prompt's tokens by the pool's
 * counting rule. */
int lg_session_render(const lg_sessions *s, int64_t user, const lg_opts *o, char **body,
                      size_t *len, int32_t *input_tokens);
/* user's round in flight ended: ok (a success) with its response text resp
 * (as lg_chunk_decode_text kept it; resp->err set: it was cut, and so not
 * added), the prompt's and the response's tokens. */
void lg_session_end(lg_sessions *s, int64_t user, int ok, const rb_buf *resp, int32_t prompt_tokens,
                    int32_t output_tokens);
/* The first arrival waiting for user, removed from the queue: 1, or 0 when
 * none waits. */
int lg_session_next(lg_sessions *s, int64_t user, lg_arrival *a, int64_t *intended_ns);

#endif
