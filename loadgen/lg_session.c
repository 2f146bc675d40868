/* lg_session: multi-turn sessions (see lg_session.h). */
#include "lg_session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t lg_session_ctx_max(size_t users)
{
    if (users < 1) users = 1;
    size_t per = LG_SESSION_BUDGET / users;
    return per < LG_SESSION_CTX_MAX ? per : LG_SESSION_CTX_MAX;
}

int lg_session_init(lg_sessions *s, const lg_dataset *ds, size_t ctx_max)
{
    memset(s, 0, sizeof *s);
    if (!ds || ds->n < 1) return -EINVAL;
    s->u = calloc(ds->n, sizeof *s->u);
    if (!s->u) return -ENOMEM;
    for (size_t i = 0; i < ds->n; i++)
        s->u[i].stage = -1;
    s->ds = ds;
    s->n_users = ds->n;
    s->ctx_max = ctx_max;
    return 0;
}

static void free_waits(lg_sess_wait *w)
{
    while (w) {
        lg_sess_wait *n = w->next;
        free(w);
        w = n;
    }
}

void lg_session_free(lg_sessions *s)
{
    for (size_t i = 0; s->u && i < s->n_users; i++) {
        free(s->u[i].ctx);
        free_waits(s->u[i].head);
    }
    free(s->u);
    free_waits(s->spare);
    memset(s, 0, sizeof *s);
}

int64_t lg_session_user(const lg_sessions *s, const lg_arrival *a)
{
    return a->in_stage % (int64_t)s->n_users;
}

int64_t lg_session_round(const lg_sessions *s, const lg_arrival *a)
{
    return a->in_stage / (int64_t)s->n_users;
}

static void reset_ctx(lg_sess_user *u, int stage)
{
    free(u->ctx);
    u->ctx = NULL;
    u->ctx_len = 0;
    u->ctx_tokens = 0;
    u->stage = stage;
}

int lg_session_admit(lg_sessions *s, const lg_arrival *a, int64_t intended_ns, int from_queue)
{
    lg_sess_user *u = &s->u[lg_session_user(s, a)];
    if (!u->busy && (from_queue || !u->head)) {
        if (u->stage != a->stage) reset_ctx(u, a->stage);
        return 1;
    }
    lg_sess_wait *w = s->spare;
    if (w)
        s->spare = w->next;
    else if (!(w = malloc(sizeof *w)))
        return -ENOMEM;
    *w = (lg_sess_wait){.a = *a, .intended_ns = intended_ns};
    if (u->tail)
        u->tail->next = w;
    else
        u->head = w;
    u->tail = w;
    s->waited++;
    s->waiting++;
    return 0;
}

void lg_session_start(lg_sessions *s, int64_t user)
{
    s->u[user].busy = 1;
}

/* The question of user's pool entry: what follows the system prompt and
 * its one space. */
static const char *question_of(const lg_prompt *p, size_t *len)
{
    const char *q = p->text + p->prefix_len + (p->prefix_len ? 1 : 0);
    *len = strlen(q);
    return q;
}

int lg_session_render(const lg_sessions *s, int64_t user, const lg_opts *o, char **body,
                      size_t *len, int32_t *input_tokens)
{
    const lg_sess_user *u = &s->u[user];
    const lg_prompt *p = &s->ds->items[user];
    *body = NULL;
    *len = 0;
    if (!u->ctx) {
        *input_tokens = p->input_tokens;
        return 0;
    }
    size_t qn;
    const char *q = question_of(p, &qn);
    lg_body_piece pc[3] = {{u->ctx, u->ctx_len, 1}, {" ", 1, 1}, {q, qn, 0}};
    *input_tokens = u->ctx_tokens + lg_count_tokens(q, qn);
    return lg_body_render_pieces(o, pc, 3, p->output_tokens, body, len);
}

void lg_session_end(lg_sessions *s, int64_t user, int ok, const rb_buf *resp, int32_t prompt_tokens,
                    int32_t output_tokens)
{
    lg_sess_user *u = &s->u[user];
    u->busy = 0;
    if (!ok) return; /* Inference Perf's process_failure: the context stays */
    if (resp->err) {
        s->capped++; /* the response passed the cap on its own */
        return;
    }
    /* the round's prompt, then " " and the response */
    rb_buf b = RB_BUF_INIT(s->ctx_max);
    const lg_prompt *p = &s->ds->items[user];
    if (u->ctx) {
        size_t qn;
        const char *q = question_of(p, &qn);
        rb_buf_add(&b, u->ctx, u->ctx_len);
        rb_buf_add(&b, " ", 1);
        rb_buf_json_bytes(&b, q, qn);
    } else {
        rb_buf_json_bytes(&b, p->text, strlen(p->text));
    }
    rb_buf_add(&b, " ", 1);
    rb_buf_add(&b, resp->data ? resp->data : "", resp->len);
    char *ctx;
    size_t n;
    if (rb_buf_take(&b, &ctx, &n) != 0) {
        s->capped++; /* past ctx_max (or no memory): the context stays */
        return;
    }
    free(u->ctx);
    u->ctx = ctx;
    u->ctx_len = n;
    u->ctx_tokens =
        (prompt_tokens > 0 ? prompt_tokens : 0) + (output_tokens > 0 ? output_tokens : 0);
}

int lg_session_next(lg_sessions *s, int64_t user, lg_arrival *a, int64_t *intended_ns)
{
    lg_sess_user *u = &s->u[user];
    lg_sess_wait *w = u->head;
    if (!w) return 0;
    u->head = w->next;
    if (!u->head) u->tail = NULL;
    *a = w->a;
    *intended_ns = w->intended_ns;
    w->next = s->spare;
    s->spare = w;
    s->waiting--;
    return 1;
}
