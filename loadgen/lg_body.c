/* lg_body: renders an OpenAI request body for one prompt, once per dataset
 * entry before the run (so the hot path only points curl at bytes). Pure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_plan.h"

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(sbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* A JSON string literal, escaped. */
static void put_json_str(sbuf *b, const char *s)
{
    put(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        put(b, run, (size_t)(s - run));
        char esc[8];
        switch (c) {
        case '"':
            put(b, "\\\"", 2);
            break;
        case '\\':
            put(b, "\\\\", 2);
            break;
        case '\n':
            put(b, "\\n", 2);
            break;
        case '\r':
            put(b, "\\r", 2);
            break;
        case '\t':
            put(b, "\\t", 2);
            break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(b, esc, 6);
        }
        run = s + 1;
    }
    put(b, run, (size_t)(s - run));
    put(b, "\"", 1);
}

int lg_body_render(const lg_opts *o, const char *prompt, int32_t max_tokens, char **out,
                   size_t *len)
{
    sbuf b = {0};
    char num[64];
    puts_(&b, "{\"model\":");
    put_json_str(&b, o->model);
    if (o->chat) {
        puts_(&b, ",\"messages\":[{\"role\":\"user\",\"content\":");
        put_json_str(&b, prompt);
        puts_(&b, "}]");
    } else {
        puts_(&b, ",\"prompt\":");
        put_json_str(&b, prompt);
    }
    snprintf(num, sizeof num, ",\"max_tokens\":%d", (int)max_tokens);
    puts_(&b, num);
    if (o->stream)
        puts_(&b, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    else
        puts_(&b, ",\"stream\":false");
    if (o->ignore_eos) puts_(&b, ",\"ignore_eos\":true");
    puts_(&b, "}");
    if (b.oom) {
        free(b.p);
        return -ENOMEM;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}
