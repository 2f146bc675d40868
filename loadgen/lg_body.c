/* lg_body: renders an OpenAI request body for one prompt, once per dataset
 * entry before the run (so the hot path only points curl at bytes); and a
 * multi-turn session's body at its dispatch, from pieces some of which are
 * JSON-escaped already (lg_session.h). Pure. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_body.h"
#include "rb_buf.h"

/* A JSON string literal, escaped; the prompt's bytes go out as they are. */
static void put_json_str(rb_buf *b, const char *s)
{
    rb_buf_add(b, "\"", 1);
    rb_buf_json_bytes(b, s, strlen(s));
    rb_buf_add(b, "\"", 1);
}

/* The prompt's pieces one after the other, in one JSON string literal. */
static void put_pieces(rb_buf *b, const lg_body_piece *p, int n)
{
    rb_buf_add(b, "\"", 1);
    for (int i = 0; i < n; i++) {
        if (p[i].escaped)
            rb_buf_add(b, p[i].s, p[i].len);
        else
            rb_buf_json_bytes(b, p[i].s, p[i].len);
    }
    rb_buf_add(b, "\"", 1);
}

/* Token ids: the prompt's words (decimal ids, lg_dataset.h's vocab) as a
 * JSON array of numbers. */
static void put_ids(rb_buf *b, const lg_body_piece *p, int n)
{
    int any = 0, in_word = 0;
    rb_buf_add(b, "[", 1);
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < p[i].len; j++) {
            char c = p[i].s[j];
            if (c >= '0' && c <= '9') {
                if (!in_word && any) rb_buf_add(b, ",", 1);
                rb_buf_add(b, &c, 1);
                in_word = any = 1;
            } else {
                in_word = 0;
            }
        }
    }
    rb_buf_add(b, "]", 1);
}

int lg_body_render(const lg_opts *o, const char *prompt, int32_t max_tokens, char **out,
                   size_t *len)
{
    lg_body_piece one = {.s = prompt, .len = strlen(prompt), .escaped = 0};
    return lg_body_render_pieces(o, &one, 1, max_tokens, out, len);
}

int lg_body_render_pieces(const lg_opts *o, const lg_body_piece *pieces, int n_pieces,
                          int32_t max_tokens, char **out, size_t *len)
{
    rb_buf b = {0};
    char num[64];
    rb_buf_puts(&b, "{\"model\":");
    put_json_str(&b, o->served_model_name[0] ? o->served_model_name : o->model);
    if (o->chat) {
        rb_buf_puts(&b, ",\"messages\":[{\"role\":\"user\",\"content\":");
        put_pieces(&b, pieces, n_pieces);
        rb_buf_puts(&b, "}]");
    } else {
        rb_buf_puts(&b, ",\"prompt\":");
        if (o->token_ids)
            put_ids(&b, pieces, n_pieces);
        else
            put_pieces(&b, pieces, n_pieces);
    }
    snprintf(num, sizeof num, ",\"max_tokens\":%d", (int)max_tokens);
    rb_buf_puts(&b, num);
    if (o->stream)
        rb_buf_puts(&b, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    else
        rb_buf_puts(&b, ",\"stream\":false");
    if (o->ignore_eos > 0) rb_buf_puts(&b, ",\"ignore_eos\":true");
    if (o->extra_members[0]) { /* --extra-body and the sampling flags (lg_extra.c) */
        rb_buf_puts(&b, ",");
        rb_buf_puts(&b, o->extra_members);
    }
    rb_buf_puts(&b, "}");
    /* no cap: the prompt was bounded when the dataset was read (a session's
     * context by its own cap) */
    return rb_buf_take(&b, out, len) ? -ENOMEM : 0;
}

int lg_body_with_model(const char *body, size_t len, const char *model, char **out, size_t *out_len)
{
    static const char head[] = "{\"model\":\"";
    size_t h = sizeof head - 1, end = h;
    if (len < h || memcmp(body, head, h)) return -EINVAL;
    while (end < len && body[end] != '"')
        end += body[end] == '\\' ? 2 : 1;
    if (end >= len) return -EINVAL;
    rb_buf b = {0};
    rb_buf_puts(&b, "{\"model\":");
    put_json_str(&b, model);
    rb_buf_add(&b, body + end + 1, len - end - 1);
    return rb_buf_take(&b, out, out_len) ? -ENOMEM : 0;
}

/* "NAME: VALUE" appended; ok cleared when there is no memory. */
static struct curl_slist *add_header(struct curl_slist *h, const char *name, size_t name_len,
                                     const char *value, int *ok)
{
    size_t n = name_len + 2 + strlen(value) + 1;
    char *line = malloc(n);
    struct curl_slist *r = NULL;
    if (line) {
        snprintf(line, n, "%.*s: %s", (int)name_len, name, value);
        r = curl_slist_append(h, line);
        free(line);
    }
    if (!r) *ok = 0;
    return r ? r : h;
}

struct curl_slist *lg_body_headers(const lg_opts *o, int stamps)
{
    struct curl_slist *h = NULL;
    int ok = 1;
    const char *fixed[3] = {"Content-Type: application/json",
                            "Expect:", /* no 100-continue round trip before large bodies */
                            stamps ? "X-Sim-Stamp: 1" : NULL};
    for (int i = 0; i < 3 && ok; i++) {
        struct curl_slist *n = fixed[i] ? curl_slist_append(h, fixed[i]) : h;
        if (n)
            h = n;
        else
            ok = 0;
    }
    const char *key = getenv("OPENAI_API_KEY");
    if (key && *key) {
        size_t n = 7 + strlen(key) + 1;
        char *bearer = malloc(n);
        if (bearer) {
            snprintf(bearer, n, "Bearer %s", key);
            h = add_header(h, "Authorization", 13, bearer, &ok);
            free(bearer);
        } else {
            ok = 0;
        }
    }
    for (int i = 0; i < o->n_headers; i++) {
        /* "K:V" or "K=V" -> "K: V" (lg_cli checked the separator) */
        const char *c = strpbrk(o->headers[i], ":=");
        const char *v = c + 1;
        while (*v == ' ')
            v++;
        h = add_header(h, o->headers[i], (size_t)(c - o->headers[i]), v, &ok);
    }
    if (!ok) {
        curl_slist_free_all(h);
        return NULL;
    }
    return h;
}
