/* sim_render: see sim_render.h. The per-token functions only copy bytes: the
 * shared part of a chunk is rendered once per response. */
#include "sim_render.h"

#include <string.h>

/* Always inlined, so that a literal's strlen is folded at compile time. */
static inline __attribute__((always_inline)) void put(rb_buf *o, const char *lit)
{
    rb_buf_add(o, lit, strlen(lit));
}

void sim_render_ctx_init(sim_render_ctx *r, int chat, const char *id, int64_t created,
                         const char *model)
{
    memset(r, 0, sizeof *r);
    r->chat = chat;
    for (int k = 0; k < 2; k++) {
        rb_buf *b = k == 0 ? &r->pre : &r->body;
        if (k == 0) put(b, "data: ");
        put(b, "{\"id\":\"");
        rb_buf_json_str(b, id, strlen(id));
        put(b, "\",\"object\":\"");
        if (k == 0)
            put(b, chat ? "chat.completion.chunk" : "text_completion");
        else
            put(b, chat ? "chat.completion" : "text_completion");
        put(b, "\",\"created\":");
        rb_buf_i64(b, created);
        put(b, ",\"model\":\"");
        rb_buf_json_str(b, model, strlen(model));
        put(b, "\",");
    }
}

void sim_render_ctx_free(sim_render_ctx *r)
{
    rb_buf_free(&r->pre);
    rb_buf_free(&r->body);
}

const char *sim_render_reason(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

void sim_render_head(rb_buf *o, int status, const char *content_type, int64_t content_length,
                     int keep_alive, const char *extra)
{
    put(o, "HTTP/1.1 ");
    rb_buf_i64(o, status);
    put(o, " ");
    put(o, sim_render_reason(status));
    put(o, "\r\ncontent-type: ");
    put(o, content_type);
    if (content_length == -1) {
        put(o, "\r\ncache-control: no-cache\r\ntransfer-encoding: chunked");
    } else if (content_length < -1) {
        put(o, "\r\ncache-control: no-cache");
    } else {
        put(o, "\r\ncontent-length: ");
        rb_buf_i64(o, content_length);
    }
    if (!keep_alive)
        put(o, "\r\nconnection: close");
    else if (keep_alive == SIM_KEEP_ALIVE_SAY)
        put(o, "\r\nconnection: keep-alive");
    put(o, "\r\n");
    if (extra) put(o, extra);
    put(o, "\r\n");
}

void sim_render_stamp(rb_buf *o, int64_t t_ns)
{
    put(o, ": t=");
    rb_buf_i64(o, t_ns);
    put(o, "\n");
}

static void tail(rb_buf *o, const char *finish)
{
    if (finish) {
        put(o, "\"logprobs\":null,\"finish_reason\":\"");
        put(o, finish);
        put(o, "\"}]}\n\n");
    } else {
        put(o, "\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    }
}

void sim_render_role(rb_buf *o, const sim_render_ctx *r)
{
    rb_buf_add(o, r->pre.data, r->pre.len);
    put(o, "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},");
    tail(o, NULL);
}

void sim_render_token(rb_buf *o, const sim_render_ctx *r, const char *word, size_t len,
                      const char *finish)
{
    rb_buf_reserve(o, r->pre.len + len + 120);
    rb_buf_add(o, r->pre.data, r->pre.len);
    if (r->chat)
        put(o, "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"");
    else
        put(o, "\"choices\":[{\"index\":0,\"text\":\"");
    if (len) {
        put(o, " ");
        rb_buf_json_str(o, word, len);
    }
    put(o, r->chat ? "\"}," : "\",");
    tail(o, finish);
}

void sim_render_malformed(rb_buf *o)
{
    put(o, "data: {\"choices\":[{\"index\":0,\"text\":\" trunc\n\n");
}

static void usage_obj(rb_buf *o, int64_t prompt, int64_t completion, int64_t cached)
{
    put(o, "\"usage\":{\"prompt_tokens\":");
    rb_buf_i64(o, prompt);
    put(o, ",\"completion_tokens\":");
    rb_buf_i64(o, completion);
    put(o, ",\"total_tokens\":");
    rb_buf_i64(o, prompt + completion);
    put(o, ",\"prompt_tokens_details\":{\"cached_tokens\":");
    rb_buf_i64(o, cached);
    put(o, "}}");
}

void sim_render_usage(rb_buf *o, const sim_render_ctx *r, int64_t prompt, int64_t completion,
                      int64_t cached)
{
    rb_buf_add(o, r->pre.data, r->pre.len);
    put(o, "\"choices\":[],");
    usage_obj(o, prompt, completion, cached);
    put(o, "}\n\n");
}

void sim_render_done(rb_buf *o)
{
    put(o, "data: [DONE]\n\n");
}

void sim_render_truth(rb_buf *o, int64_t queue_ns, int64_t prefill_ns, int64_t decode_ns,
                      int64_t cached, int64_t max_late_ns)
{
    put(o, ": {\"queue_ns\":");
    rb_buf_i64(o, queue_ns);
    put(o, ",\"prefill_ns\":");
    rb_buf_i64(o, prefill_ns);
    put(o, ",\"decode_ns\":");
    rb_buf_i64(o, decode_ns);
    put(o, ",\"cached_tokens\":");
    rb_buf_i64(o, cached);
    put(o, ",\"max_late_ns\":");
    rb_buf_i64(o, max_late_ns);
    put(o, "}\n\n");
}

void sim_render_full(rb_buf *o, const sim_render_ctx *r, const char *text, size_t len,
                     const char *finish, int64_t prompt, int64_t completion, int64_t cached)
{
    rb_buf_add(o, r->body.data, r->body.len);
    if (r->chat)
        put(o, "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
    else
        put(o, "\"choices\":[{\"index\":0,\"text\":\"");
    rb_buf_json_str(o, text, len);
    put(o, r->chat ? "\"}," : "\",");
    put(o, "\"logprobs\":null,\"finish_reason\":\"");
    put(o, finish);
    put(o, "\"}],");
    usage_obj(o, prompt, completion, cached);
    put(o, "}");
}

/* ---- requests with choices ---- */

static void dbl(rb_buf *o, double v)
{
    rb_buf_printf(o, "%.9g", v);
}

static void quoted_token(rb_buf *o, const sim_token *t)
{
    put(o, "\" ");
    rb_buf_json_str(o, t->word, t->len);
    put(o, "\"");
}

static int64_t token_chars(const sim_token *t)
{
    int64_t k = 1; /* the leading space */
    for (size_t i = 0; i < t->len; i++)
        k += ((unsigned char)t->word[i] & 0xC0) != 0x80;
    return k;
}

static void token_bytes(rb_buf *o, const sim_token *t)
{
    put(o, "[32");
    for (size_t i = 0; i < t->len; i++) {
        put(o, ",");
        rb_buf_i64(o, (unsigned char)t->word[i]);
    }
    put(o, "]");
}

/* Chat: {"content":[{"token","logprob","bytes","top_logprobs":[..]}, ..]}. */
static void chat_logprobs(rb_buf *o, const sim_render_lp *l)
{
    sim_token t;
    sim_logprobs lp;
    put(o, "{\"content\":[");
    for (int64_t i = 0; i < l->count; i++) {
        l->get(l->ud, l->first + i, &t, &lp);
        put(o, i ? ",{\"token\":" : "{\"token\":");
        quoted_token(o, &t);
        put(o, ",\"logprob\":");
        dbl(o, lp.lp);
        put(o, ",\"bytes\":");
        token_bytes(o, &t);
        put(o, ",\"top_logprobs\":[");
        if (l->top > 0) {
            for (int a = -1; a < lp.n_alt; a++) {
                const sim_token *at = a < 0 ? &t : &lp.alt[a];
                put(o, a < 0 ? "{\"token\":" : ",{\"token\":");
                quoted_token(o, at);
                put(o, ",\"logprob\":");
                dbl(o, a < 0 ? lp.lp : lp.alt_lp[a]);
                put(o, ",\"bytes\":");
                token_bytes(o, at);
                put(o, "}");
            }
        }
        put(o, "]}");
    }
    put(o, "]}");
}

/* Completions: four parallel arrays, the chosen token first in each
 * top_logprobs entry (vLLM lists it with the requested alternatives). */
static void completion_logprobs(rb_buf *o, const sim_render_lp *l)
{
    sim_token t;
    sim_logprobs lp;
    put(o, "{\"text_offset\":[");
    int64_t off = l->text_offset;
    for (int64_t i = 0; i < l->count; i++) {
        l->get(l->ud, l->first + i, &t, &lp);
        if (i) put(o, ",");
        rb_buf_i64(o, off);
        off += token_chars(&t);
    }
    put(o, "],\"token_logprobs\":[");
    for (int64_t i = 0; i < l->count; i++) {
        l->get(l->ud, l->first + i, &t, &lp);
        if (i) put(o, ",");
        dbl(o, lp.lp);
    }
    put(o, "],\"tokens\":[");
    for (int64_t i = 0; i < l->count; i++) {
        l->get(l->ud, l->first + i, &t, &lp);
        if (i) put(o, ",");
        quoted_token(o, &t);
    }
    put(o, "],\"top_logprobs\":[");
    for (int64_t i = 0; i < l->count; i++) {
        l->get(l->ud, l->first + i, &t, &lp);
        put(o, i ? ",{" : "{");
        for (int a = -1; a < lp.n_alt; a++) {
            if (a >= 0) put(o, ",");
            quoted_token(o, a < 0 ? &t : &lp.alt[a]);
            put(o, ":");
            dbl(o, a < 0 ? lp.lp : lp.alt_lp[a]);
        }
        put(o, "}");
    }
    put(o, "]}");
}

static void usage_now(rb_buf *o, int64_t prompt, int64_t completion)
{
    put(o, ",\"usage\":{\"prompt_tokens\":");
    rb_buf_i64(o, prompt);
    put(o, ",\"completion_tokens\":");
    rb_buf_i64(o, completion);
    put(o, ",\"total_tokens\":");
    rb_buf_i64(o, prompt + completion);
    put(o, "}");
}

void sim_render_choice_role(rb_buf *o, const sim_render_ctx *r, int index, int usage,
                            int64_t prompt)
{
    rb_buf_add(o, r->pre.data, r->pre.len);
    put(o, "\"choices\":[{\"index\":");
    rb_buf_i64(o, index);
    put(o, ",\"delta\":{\"role\":\"assistant\"},\"logprobs\":null,\"finish_reason\":null}]");
    if (usage) usage_now(o, prompt, 0);
    put(o, "}\n\n");
}

/* From "index" to the end of the choice object (its closing brace). */
static void choice_body(rb_buf *o, const sim_render_ctx *r, const sim_render_choice *c, int full)
{
    put(o, "{\"index\":");
    rb_buf_i64(o, c->index);
    if (!r->chat)
        put(o, ",\"text\":\"");
    else if (full)
        put(o, ",\"message\":{\"role\":\"assistant\",\"content\":\"");
    else
        put(o, ",\"delta\":{\"content\":\"");
    if (c->space) put(o, " ");
    rb_buf_json_str(o, c->text, c->len);
    put(o, r->chat ? "\"},\"logprobs\":" : "\",\"logprobs\":");
    if (!c->lp)
        put(o, "null");
    else if (r->chat)
        chat_logprobs(o, c->lp);
    else
        completion_logprobs(o, c->lp);
    put(o, ",\"finish_reason\":");
    if (c->finish) {
        put(o, "\"");
        put(o, c->finish);
        put(o, "\"");
    } else {
        put(o, "null");
    }
    /* vLLM's chat chunks leave stop_reason out until the choice finishes. */
    if (full || !r->chat || c->finish) {
        put(o, ",\"stop_reason\":");
        if (c->stop_reason) {
            put(o, "\"");
            rb_buf_json_str(o, c->stop_reason, c->stop_len);
            put(o, "\"");
        } else {
            put(o, "null");
        }
    }
    put(o, "}");
}

void sim_render_choice_chunk(rb_buf *o, const sim_render_ctx *r, const sim_render_choice *c)
{
    rb_buf_add(o, r->pre.data, r->pre.len);
    put(o, "\"choices\":[");
    choice_body(o, r, c, 0);
    put(o, "]");
    if (c->usage) usage_now(o, c->prompt, c->completion);
    put(o, "}\n\n");
}

void sim_render_full_begin(rb_buf *o, const sim_render_ctx *r)
{
    rb_buf_add(o, r->body.data, r->body.len);
    put(o, "\"choices\":[");
}

void sim_render_full_choice(rb_buf *o, const sim_render_ctx *r, const sim_render_choice *c)
{
    if (c->index) put(o, ",");
    choice_body(o, r, c, 1);
}

void sim_render_full_end(rb_buf *o, int64_t prompt, int64_t completion, int64_t cached)
{
    put(o, "],");
    usage_obj(o, prompt, completion, cached);
    put(o, "}");
}

static void str_or_null(rb_buf *o, const char *s)
{
    if (!s || !*s) {
        put(o, "null");
        return;
    }
    put(o, "\"");
    rb_buf_json_str(o, s, strlen(s));
    put(o, "\"");
}

void sim_render_error(rb_buf *o, const char *message, const char *type, const char *param,
                      const char *code)
{
    put(o, "{\"error\":{\"message\":");
    str_or_null(o, message);
    put(o, ",\"type\":");
    str_or_null(o, type);
    put(o, ",\"param\":");
    str_or_null(o, param);
    put(o, ",\"code\":");
    str_or_null(o, code);
    put(o, "}}");
}

void sim_render_models(rb_buf *o, const char *const *names, int n, int64_t created)
{
    put(o, "{\"object\":\"list\",\"data\":[");
    for (int i = 0; i < n; i++) {
        if (i) put(o, ",");
        put(o, "{\"id\":");
        str_or_null(o, names[i]);
        put(o, ",\"object\":\"model\",\"created\":");
        rb_buf_i64(o, created);
        put(o, ",\"owned_by\":\"rhobench\",\"root\":");
        str_or_null(o, names[i]);
        put(o, ",\"parent\":null,\"max_model_len\":null}");
    }
    put(o, "]}");
}
