/* lg_vllm: vLLM bench's flags turned into loadgen's (see lg_vllm.h). */
#include "lg_vllm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vx {
    lg_args *out;
    char *notes;
    size_t notes_cap, notes_len;
    char *err;
    size_t errlen;
} vx;

static int put(vx *c, const char *s)
{
    return lg_args_add(c->out, s);
}

static void note(vx *c, const char *fmt, ...)
{
    if (!c->notes || c->notes_len + 2 >= c->notes_cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->notes + c->notes_len, c->notes_cap - c->notes_len - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    c->notes_len +=
        (size_t)n < c->notes_cap - c->notes_len - 1 ? (size_t)n : c->notes_cap - c->notes_len - 2;
    c->notes[c->notes_len++] = '\n';
    c->notes[c->notes_len] = '\0';
}

static int bad(vx *c, const char *flag, const char *val, const char *what)
{
    snprintf(c->err, c->errlen, "%s: %s, got '%.100s'", flag, what, val ? val : "(none)");
    return -EINVAL;
}

/* argv[i] names `flag` ("--flag" or "--flag=..."). */
static int names(const char *arg, const char *flag)
{
    size_t n = strlen(flag);
    return strncmp(arg, flag, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* The value of the flag at argv[*i] (after '=' or the next argument), or
 * NULL when there is none. */
static const char *value(int argc, char *const *argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq) return eq + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

static int given(int argc, char *const *argv, const char *flag)
{
    for (int i = 0; i < argc; i++)
        if (names(argv[i], flag)) return 1;
    return 0;
}

static int whole(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if (x) goto nomem;                                                                         \
    } while (0)
#define REFUSE(flag, v, what)                                                                      \
    do {                                                                                           \
        rc = bad(&c, flag, v, what);                                                               \
        goto refused;                                                                              \
    } while (0)

int lg_vllm_args(int argc, char *const *argv, lg_args *out, char *notes, size_t notes_cap,
                 char *err, size_t errlen)
{
    *out = (lg_args){0};
    char dummy[8];
    vx c = {.out = out,
            .notes = notes && notes_cap ? notes : NULL,
            .notes_cap = notes_cap,
            .err = err && errlen ? err : dummy,
            .errlen = err && errlen ? errlen : sizeof dummy};
    if (c.notes) c.notes[0] = '\0';
    const char *host = NULL, *port = NULL;
    int has_url = given(argc, argv, "--base-url"), has_ep = given(argc, argv, "--endpoint");
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        long n;
        if (names(a, "--host")) {
            if (!(v = value(argc, argv, &i)) || !*v)
                REFUSE("--host", v, "needs a host name or address");
            host = v;
        } else if (names(a, "--port")) {
            if (!whole(v = value(argc, argv, &i), 1, 65535, &n))
                REFUSE("--port", v, "must be a port in [1, 65535]");
            port = v;
        } else if (names(a, "--backend")) {
            v = value(argc, argv, &i);
            static const char *const comp[] = {"openai",   "vllm",      "sglang",
                                               "lmdeploy", "llama.cpp", NULL};
            int chat = v && strcmp(v, "openai-chat") == 0, ok = chat;
            for (int k = 0; comp[k] && v && !ok; k++)
                ok = strcmp(v, comp[k]) == 0;
            if (!ok)
                REFUSE("--backend", v,
                       "loadgen speaks the OpenAI API: openai, vllm, sglang, lmdeploy, "
                       "llama.cpp (/v1/completions) or openai-chat (/v1/chat/completions)");
            if (!has_ep) {
                TRY(put(&c, "--endpoint"));
                TRY(put(&c, chat ? "/v1/chat/completions" : "/v1/completions"));
            }
        } else if (strcmp(a, "--disable-tqdm") == 0) {
            TRY(put(&c, "--no-progress"));
        } else if (strcmp(a, "--trust-remote-code") == 0) {
            note(&c, "--trust-remote-code: no effect (no tokenizer is loaded; token counts come "
                     "from the server's usage)");
        } else if (names(a, "--tokenizer-mode")) {
            value(argc, argv, &i);
            note(&c, "--tokenizer-mode: no effect (no tokenizer is loaded; token counts come "
                     "from the server's usage)");
        } else if (names(a, "--metadata")) {
            /* nargs='*': KEY=VALUE items up to the next flag, one flag each */
            if (strchr(a, '=')) {
                TRY(put(&c, "--metadata"));
                TRY(put(&c, strchr(a, '=') + 1));
            }
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                TRY(put(&c, "--metadata"));
                TRY(put(&c, argv[++i]));
            }
        } else if (names(a, "--random-prefix-len")) {
            if (!whole(v = value(argc, argv, &i), 0, 1000000, &n))
                REFUSE("--random-prefix-len", v, "must be a whole number >= 0");
            TRY(put(&c, "--random-prefix-len"));
            TRY(put(&c, v));
        } else if (names(a, "--sharegpt-output-len")) {
            if (!whole(v = value(argc, argv, &i), 1, 1000000, &n))
                REFUSE("--sharegpt-output-len", v, "must be a whole number >= 1");
            TRY(put(&c, "--sharegpt-output-len"));
            TRY(put(&c, v));
        } else if (names(a, "--logprobs")) {
            if (!whole(v = value(argc, argv, &i), 0, 1000000, &n))
                REFUSE("--logprobs", v, "must be a whole number >= 0");
            note(&c, "--logprobs %ld: not requested (the timing does not depend on it here)", n);
        } else {
            TRY(put(&c, a));
        }
    }
    if ((host || port) && !has_url) {
        char url[600];
        const char *h = host ? host : "127.0.0.1";
        int v6 = strchr(h, ':') != NULL && h[0] != '[';
        snprintf(url, sizeof url, "http://%s%.256s%s:%s", v6 ? "[" : "", h, v6 ? "]" : "",
                 port ? port : "8000");
        TRY(put(&c, "--base-url"));
        TRY(put(&c, url));
    } else if (host || port) {
        note(&c, "--host/--port: --base-url is given, so they are not used (as in vLLM)");
    }
    return 0;
nomem:
    snprintf(c.err, c.errlen, "out of memory");
    rc = -ENOMEM;
refused:
    lg_args_free(out);
    if (c.notes) c.notes[0] = '\0';
    return rc;
}

void lg_vllm_report_keys(cJSON *j, const lg_opts *o, uint64_t dispatched, time_t now)
{
    char date[32];
    struct tm tm;
    if (localtime_r(&now, &tm) && strftime(date, sizeof date, "%Y%m%d-%H%M%S", &tm))
        cJSON_AddStringToObject(j, "date", date);
    else
        cJSON_AddNullToObject(j, "date");
    cJSON_AddNumberToObject(j, "num_prompts", (double)dispatched);
    cJSON_AddStringToObject(j, "tokenizer_id", o->tokenizer[0] ? o->tokenizer : o->model);
}

/* s[0..n) without leading and trailing spaces, into buf. */
static void trimmed(const char *s, size_t n, char *buf, size_t cap)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    snprintf(buf, cap, "%.*s", (int)n, s);
}

void lg_vllm_report_metadata(cJSON *j, const lg_opts *o)
{
    for (const char *l = o->metadata, *nl; *l && (nl = strchr(l, '\n')); l = nl + 1) {
        const char *eq = memchr(l, '=', (size_t)(nl - l));
        if (!eq) continue;
        char k[256], v[1024];
        trimmed(l, (size_t)(eq - l), k, sizeof k);
        trimmed(eq + 1, (size_t)(nl - eq - 1), v, sizeof v);
        if (k[0] && !cJSON_HasObjectItem(j, k)) cJSON_AddStringToObject(j, k, v);
    }
}
