/* sim_api: see sim_api.h. JSON is read with cJSON; every field is checked for
 * its type before use, so any body earns either a spec or a 400. */
#include "sim_api.h"
#include "rb_buf.h"
#include "rb_text.h"
#include "rb_tok.h"

#include <cjson/cJSON.h>
#include <http_parser.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sim_route sim_api_route(int method, const char *path)
{
    static const struct {
        const char *path;
        int method;
        sim_route route;
    } routes[] = {
        {"/v1/completions", HTTP_POST, SIM_ROUTE_COMPLETIONS},
        {"/v1/chat/completions", HTTP_POST, SIM_ROUTE_CHAT},
        {"/v1/models", HTTP_GET, SIM_ROUTE_MODELS},
        {"/health", HTTP_GET, SIM_ROUTE_HEALTH},
        {"/metrics", HTTP_GET, SIM_ROUTE_METRICS},
        {"/tokenize", HTTP_POST, SIM_ROUTE_TOKENIZE},
        {"/detokenize", HTTP_POST, SIM_ROUTE_DETOKENIZE},
    };
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(path, routes[i].path) != 0) continue;
        return method == routes[i].method ? routes[i].route : SIM_ROUTE_BAD_METHOD;
    }
    return SIM_ROUTE_NOT_FOUND;
}

int64_t sim_count_words(const char *s, size_t n)
{
    return rb_count_words(s, n);
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Token arrays grow as words are found. */
typedef struct toks {
    sim_req_spec *s;
    int64_t cap;
    rb_buf words; /* its data is s->words (which owns it once parsed) */
    rb_tok *tok;  /* the tokenizer (NULL: words) */
    int special;  /* its special tokens are still to add (once a request) */
} toks;

static void toks_push(toks *t, const char *w, size_t n, uint64_t h)
{
    sim_req_spec *s = t->s;
    if (s->prompt_tokens + 2 > t->cap) {
        int64_t cap = t->cap ? t->cap * 2 : 64;
        uint64_t *th = realloc(s->tok_hash, (size_t)cap * sizeof *th);
        uint32_t *wo = realloc(s->word_off, (size_t)(cap + 1) * sizeof *wo);
        if (!th || !wo) abort();
        s->tok_hash = th;
        s->word_off = wo;
        t->cap = cap;
    }
    size_t off = t->words.len;
    if (rb_buf_add(&t->words, w, n)) abort(); /* no memory: simserver's policy */
    s->words = t->words.data;
    s->word_off[s->prompt_tokens] = (uint32_t)off;
    s->tok_hash[s->prompt_tokens] = h;
    s->prompt_tokens++;
    s->word_off[s->prompt_tokens] = (uint32_t)t->words.len;
    s->prompt_hash = mix64(s->prompt_hash ^ h);
}

static void toks_id(toks *t, int64_t id);

/* With a tokenizer: each token's text (for echo) and the hash of its id,
 * which a prompt sent as those ids also gets (the prefix cache agrees). */
static void toks_tokenized(toks *t, const char *s, size_t n)
{
    rb_tok_ids ids = {0};
    rb_buf piece = {0};
    if (rb_tok_encode(t->tok, s, n, t->special, &ids)) abort(); /* no memory */
    t->special = 0;
    for (size_t i = 0; i < ids.n; i++) {
        rb_buf_reset(&piece);
        if (rb_tok_decode(t->tok, &ids.v[i], 1, &piece)) abort();
        toks_push(t, piece.data ? piece.data : "", piece.len,
                  mix64((uint64_t)ids.v[i] ^ 0x746f6b656e2d6964ULL));
    }
    rb_buf_free(&piece);
    rb_tok_ids_free(&ids);
}

static void toks_text(toks *t, const char *s, size_t n)
{
    if (t->tok) {
        toks_tokenized(t, s, n);
        return;
    }
    size_t i = 0;
    while (i < n) {
        while (i < n && rb_is_space((unsigned char)s[i]))
            i++;
        size_t b = i;
        while (i < n && !rb_is_space((unsigned char)s[i]))
            i++;
        if (i > b) toks_push(t, s + b, i - b, fnv1a(s + b, i - b));
    }
}

static void toks_id(toks *t, int64_t id)
{
    char w[24];
    int n = snprintf(w, sizeof w, "%lld", (long long)id);
    toks_push(t, w, (size_t)n, mix64((uint64_t)id ^ 0x746f6b656e2d6964ULL));
}

__attribute__((format(printf, 4, 5))) static int fail(sim_api_error *err, int status,
                                                      const char *param, const char *fmt, ...)
{
    err->status = status;
    err->type = "invalid_request_error";
    err->code = NULL;
    snprintf(err->param, sizeof err->param, "%s", param ? param : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_absent(const cJSON *j)
{
    return j == NULL || cJSON_IsNull(j);
}

/* Reads an optional boolean field. */
static int get_bool(const cJSON *root, const char *name, int *out, sim_api_error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, name);
    if (is_absent(j)) return 0;
    if (!cJSON_IsBool(j)) return fail(err, 400, name, "'%s' must be a boolean", name);
    *out = cJSON_IsTrue(j);
    return 0;
}

static int is_integer(const cJSON *j)
{
    return cJSON_IsNumber(j) && isfinite(j->valuedouble) && floor(j->valuedouble) == j->valuedouble;
}

static int parse_prompt(const cJSON *p, toks *t, sim_api_error *err)
{
    if (cJSON_IsString(p)) {
        toks_text(t, p->valuestring, strlen(p->valuestring));
        return 0;
    }
    if (!cJSON_IsArray(p))
        return fail(err, 400, "prompt", "'prompt' must be a string or an array of token ids");
    int n = cJSON_GetArraySize(p);
    if (n == 0) return fail(err, 400, "prompt", "'prompt' must not be an empty array");
    const cJSON *first = cJSON_GetArrayItem(p, 0);
    if (cJSON_IsString(first)) {
        if (n != 1)
            return fail(err, 400, "prompt",
                        "batched prompts are not supported; send one prompt per request");
        toks_text(t, first->valuestring, strlen(first->valuestring));
        return 0;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, p)
    {
        if (!is_integer(e) || e->valuedouble < 0 || e->valuedouble > 4294967295.0)
            return fail(err, 400, "prompt",
                        "'prompt' array items must be token ids (integers >= 0)");
        toks_id(t, (int64_t)e->valuedouble);
    }
    return 0;
}

static int parse_messages(const cJSON *m, toks *t, sim_api_error *err)
{
    if (!cJSON_IsArray(m)) return fail(err, 400, "messages", "'messages' must be an array");
    if (cJSON_GetArraySize(m) == 0)
        return fail(err, 400, "messages", "'messages' must not be empty");
    int i = 0;
    const cJSON *msg;
    cJSON_ArrayForEach(msg, m)
    {
        char param[48];
        snprintf(param, sizeof param, "messages[%d]", i);
        if (!cJSON_IsObject(msg)) return fail(err, 400, param, "'%s' must be an object", param);
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(msg, "role");
        if (!cJSON_IsString(role))
            return fail(err, 400, param, "'%s.role' must be a string", param);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content");
        if (cJSON_IsString(c)) {
            toks_text(t, c->valuestring, strlen(c->valuestring));
        } else if (cJSON_IsArray(c)) {
            const cJSON *part;
            cJSON_ArrayForEach(part, c)
            {
                const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
                if (!cJSON_IsObject(part) || !cJSON_IsString(type))
                    return fail(err, 400, param, "'%s.content' parts must be objects with a 'type'",
                                param);
                if (strcmp(type->valuestring, "text") != 0) continue;
                const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
                if (!cJSON_IsString(text))
                    return fail(err, 400, param, "'%s.content' text parts need a string 'text'",
                                param);
                toks_text(t, text->valuestring, strlen(text->valuestring));
            }
        } else if (!is_absent(c)) {
            return fail(err, 400, param, "'%s.content' must be a string or an array of parts",
                        param);
        }
        i++;
    }
    return 0;
}

static const char *const IGNORED_NAMES[SIM_IGN_COUNT] = {
    "best_of",       "stop_token_ids",  "min_tokens",      "prompt_logprobs",
    "logit_bias",    "response_format", "guided_json",     "guided_regex",
    "guided_choice", "tools",           "use_beam_search",
};

const char *sim_ignored_param_name(int p)
{
    return p >= 0 && p < SIM_IGN_COUNT ? IGNORED_NAMES[p] : "?";
}

/* A value that asks for nothing: null, false, 0, "", [] or {}; and 1 for
 * best_of (one sequence, the default). */
static int is_noop(const cJSON *j, int p)
{
    if (is_absent(j) || cJSON_IsFalse(j)) return 1;
    if (cJSON_IsNumber(j))
        return j->valuedouble == 0 || (p == SIM_IGN_BEST_OF && j->valuedouble == 1);
    if (cJSON_IsString(j)) return j->valuestring[0] == 0;
    if (cJSON_IsArray(j) || cJSON_IsObject(j)) return j->child == NULL;
    return 0;
}

static uint32_t ignored_params(const cJSON *root)
{
    uint32_t mask = 0;
    for (int p = 0; p < SIM_IGN_COUNT; p++)
        if (!is_noop(cJSON_GetObjectItemCaseSensitive(root, IGNORED_NAMES[p]), p)) mask |= 1u << p;
    return mask;
}

/* n: an integer in [1, SIM_N_MAX]; more than one needs sampling (vLLM
 * refuses n > 1 with temperature 0, greedy decoding). */
static int parse_n(const cJSON *root, sim_req_spec *out, sim_api_error *err)
{
    out->n = 1;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "n");
    if (is_absent(j)) return 0;
    if (!is_integer(j)) return fail(err, 400, "n", "'n' must be an integer");
    if (j->valuedouble < 1)
        return fail(err, 400, "n", "'n' must be at least 1, got %.0f", j->valuedouble);
    if (j->valuedouble > SIM_N_MAX)
        return fail(err, 400, "n", "'n' must be at most %d, got %.0f", SIM_N_MAX, j->valuedouble);
    out->n = (int)j->valuedouble;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "temperature");
    if (out->n > 1 && cJSON_IsNumber(t) && t->valuedouble < 1e-5)
        return fail(err, 400, "n",
                    "'n' must be 1 when using greedy sampling (temperature 0), got %d", out->n);
    return 0;
}

/* stop: a string or a list of at most SIM_STOP_MAX strings, none empty (an
 * empty one would match everywhere: vLLM refuses it too). They are copied
 * into one buffer the spec owns. */
static int parse_stop(const cJSON *root, sim_req_spec *out, sim_api_error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "stop");
    if (is_absent(j)) return 0;
    const cJSON *items[SIM_STOP_MAX];
    int n = 0;
    if (cJSON_IsString(j)) {
        items[n++] = j;
    } else if (cJSON_IsArray(j)) {
        int size = cJSON_GetArraySize(j);
        if (size > SIM_STOP_MAX)
            return fail(err, 400, "stop", "'stop' takes at most %d strings, got %d", SIM_STOP_MAX,
                        size);
        const cJSON *e;
        cJSON_ArrayForEach(e, j)
        {
            if (!cJSON_IsString(e))
                return fail(err, 400, "stop", "'stop' must be a string or a list of strings");
            items[n++] = e;
        }
    } else {
        return fail(err, 400, "stop", "'stop' must be a string or a list of strings");
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(items[i]->valuestring);
        if (len == 0) return fail(err, 400, "stop", "'stop' cannot contain an empty string");
        if (len > SIM_STOP_BYTES_MAX)
            return fail(err, 400, "stop", "'stop' strings must be at most %d bytes, got %zu",
                        SIM_STOP_BYTES_MAX, len);
        total += len + 1;
    }
    if (n == 0) return 0;
    out->stop_buf = malloc(total);
    if (!out->stop_buf) abort(); /* no memory: simserver's policy */
    char *p = out->stop_buf;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(items[i]->valuestring);
        memcpy(p, items[i]->valuestring, len + 1);
        out->stop[i] = p;
        out->stop_len[i] = (uint32_t)len;
        p += len + 1;
    }
    out->n_stop = n;
    return get_bool(root, "include_stop_str_in_output", &out->include_stop_str, err);
}

/* An optional count of alternatives in [0, SIM_LOGPROBS_MAX]. */
static int get_top(const cJSON *j, const char *name, int *out, sim_api_error *err)
{
    if (!is_integer(j)) return fail(err, 400, name, "'%s' must be an integer", name);
    if (j->valuedouble < 0)
        return fail(err, 400, name, "'%s' must be a non-negative integer, got %.0f", name,
                    j->valuedouble);
    if (j->valuedouble > SIM_LOGPROBS_MAX)
        return fail(err, 400, name,
                    "'%s' is %.0f: requested sample logprobs above the maximum allowed, %d", name,
                    j->valuedouble, SIM_LOGPROBS_MAX);
    *out = (int)j->valuedouble;
    return 0;
}

/* Completions: "logprobs" is the number of alternatives (0 still returns
 * the chosen token's; true and false count as 1 and 0, as in vLLM). Chat: "logprobs" is a boolean
 * and "top_logprobs" the number of alternatives, which needs logprobs true. */
static int parse_logprobs(const cJSON *root, int chat, sim_req_spec *out, sim_api_error *err)
{
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(root, "logprobs");
    if (!chat) {
        if (is_absent(lp)) return 0;
        out->logprobs = 1;
        if (cJSON_IsBool(lp)) { /* vLLM reads a boolean as 0 or 1 (pydantic's int) */
            out->top_logprobs = cJSON_IsTrue(lp);
            return 0;
        }
        return get_top(lp, "logprobs", &out->top_logprobs, err);
    }
    if (get_bool(root, "logprobs", &out->logprobs, err)) return -1;
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(root, "top_logprobs");
    if (is_absent(top)) return 0;
    if (get_top(top, "top_logprobs", &out->top_logprobs, err)) return -1;
    if (out->top_logprobs > 0 && !out->logprobs)
        return fail(err, 400, "top_logprobs",
                    "when using 'top_logprobs', 'logprobs' must be set to true");
    return 0;
}

static int parse_body(const cJSON *root, int chat, const sim_api_limits *lim, sim_req_spec *out,
                      sim_api_error *err)
{
    if (!cJSON_IsObject(root))
        return fail(err, 400, NULL, "the request body must be a JSON object");

    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (is_absent(model)) {
        snprintf(out->model, sizeof out->model, "%s",
                 lim->n_served > 0 ? lim->served_models[0] : "");
    } else if (!cJSON_IsString(model)) {
        return fail(err, 400, "model", "'model' must be a string");
    } else {
        int found = 0;
        for (int i = 0; i < lim->n_served && !found; i++)
            found = strcmp(lim->served_models[i], model->valuestring) == 0;
        if (!found) {
            fail(err, 404, "model", "The model `%.200s` does not exist.", model->valuestring);
            err->code = "model_not_found";
            return -1;
        }
        snprintf(out->model, sizeof out->model, "%s", model->valuestring);
    }

    out->ignored = ignored_params(root);
    if (get_bool(root, "stream", &out->stream, err)) return -1;
    if (get_bool(root, "ignore_eos", &out->ignore_eos, err)) return -1;
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
    if (!is_absent(so)) {
        if (!cJSON_IsObject(so))
            return fail(err, 400, "stream_options", "'stream_options' must be an object");
        if (get_bool(so, "include_usage", &out->include_usage, err)) return -1;
        int continuous = 0;
        if (get_bool(so, "continuous_usage_stats", &continuous, err)) return -1;
        out->continuous_usage = out->include_usage && continuous; /* as vLLM: only with usage */
        /* vLLM refuses options that are set (a non-empty object) on a
         * request that does not stream. */
        if (so->child && !out->stream)
            return fail(err, 400, "stream_options",
                        "Stream options can only be defined when `stream=True`.");
    }
    if (parse_n(root, out, err) || parse_stop(root, out, err) ||
        parse_logprobs(root, chat, out, err))
        return -1;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(root, "seed");
    if (is_integer(seed) && fabs(seed->valuedouble) < 9.2e18) {
        out->has_seed = 1;
        out->seed = (uint64_t)(int64_t)seed->valuedouble;
    }

    const char *mt_name = "max_tokens";
    const cJSON *mt = NULL;
    if (chat) {
        mt = cJSON_GetObjectItemCaseSensitive(root, "max_completion_tokens");
        if (!is_absent(mt)) mt_name = "max_completion_tokens";
    }
    if (is_absent(mt)) mt = cJSON_GetObjectItemCaseSensitive(root, "max_tokens");
    out->max_tokens = SIM_DEFAULT_MAX_TOKENS;
    if (!is_absent(mt)) {
        if (!is_integer(mt)) return fail(err, 400, mt_name, "'%s' must be an integer", mt_name);
        if (mt->valuedouble <= 0)
            return fail(err, 400, mt_name, "'%s' must be at least 1, got %.0f", mt_name,
                        mt->valuedouble);
        if (mt->valuedouble > (double)lim->max_model_len)
            return fail(err, 400, mt_name,
                        "'%s' is %.0f, above the maximum context length of %lld tokens", mt_name,
                        mt->valuedouble, (long long)lim->max_model_len);
        out->max_tokens = (int64_t)mt->valuedouble;
    }

    toks t = {.s = out, .tok = lim->tok, .special = 1};
    if (chat) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "messages");
        if (is_absent(m)) return fail(err, 400, "messages", "'messages' is required");
        if (parse_messages(m, &t, err)) return -1;
    } else {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "prompt");
        if (is_absent(p)) return fail(err, 400, "prompt", "'prompt' is required");
        if (parse_prompt(p, &t, err)) return -1;
    }
    if (out->prompt_tokens + out->max_tokens > lim->max_model_len)
        return fail(err, 400, chat ? "messages" : "prompt",
                    "This model's maximum context length is %lld tokens. However, you requested "
                    "%lld tokens "
                    "(%lld in the %s, %lld in the completion). Please reduce the length of the %s "
                    "or completion.",
                    (long long)lim->max_model_len,
                    (long long)(out->prompt_tokens + out->max_tokens),
                    (long long)out->prompt_tokens, chat ? "messages" : "prompt",
                    (long long)out->max_tokens, chat ? "messages" : "prompt");
    if (!out->word_off) {
        out->word_off = calloc(1, sizeof *out->word_off);
        if (!out->word_off) abort();
    }
    return 0;
}

int sim_api_parse(const char *body, size_t len, int chat, const sim_api_limits *lim,
                  sim_req_spec *out, sim_api_error *err)
{
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    out->chat = chat;
    cJSON *root = cJSON_ParseWithLength(body ? body : "", body ? len : 0);
    if (!root) return fail(err, 400, NULL, "the request body is not valid JSON");
    int rc = parse_body(root, chat, lim, out, err);
    cJSON_Delete(root);
    if (rc) {
        sim_req_spec_free(out);
        out->chat = chat;
    }
    return rc;
}

void sim_req_spec_free(sim_req_spec *s)
{
    free(s->tok_hash);
    free(s->words);
    free(s->word_off);
    free(s->stop_buf);
    memset(s, 0, sizeof *s);
}

/* ---- /tokenize, /detokenize ------------------------------------------ */

static void ids_add(rb_tok_ids *ids, int32_t id)
{
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? ids->cap * 2 : 64;
        int32_t *v = realloc(ids->v, cap * sizeof *v);
        if (!v) abort(); /* no memory: simserver's policy */
        ids->v = v;
        ids->cap = cap;
    }
    ids->v[ids->n++] = id;
}

static int tokenize_ids(const cJSON *root, const sim_api_limits *lim, rb_tok_ids *ids,
                        sim_api_error *err)
{
    int special = 1;
    if (get_bool(root, "add_special_tokens", &special, err)) return -1;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "prompt");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "messages");
    rb_buf text = {0};
    int rc = 0;
    if (cJSON_IsArray(p)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, p)
        {
            if (!is_integer(e) || e->valuedouble < 0 || e->valuedouble > 2147483647.0) {
                rc = fail(err, 400, "prompt", "'prompt' array items must be token ids");
                break;
            }
            ids_add(ids, (int32_t)e->valuedouble);
        }
        return rc;
    }
    if (cJSON_IsString(p)) {
        rb_buf_puts(&text, p->valuestring);
    } else if (cJSON_IsArray(m)) {
        const cJSON *msg;
        cJSON_ArrayForEach(msg, m)
        {
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content");
            if (!cJSON_IsString(c)) continue;
            if (text.len) rb_buf_add(&text, "\n", 1);
            rb_buf_puts(&text, c->valuestring);
        }
    } else {
        return fail(err, 400, "prompt",
                    "'prompt' (a string or token ids) or 'messages' is required");
    }
    if (text.err) abort();
    const char *s = text.data ? text.data : "";
    if (lim->tok) {
        if (rb_tok_encode(lim->tok, s, text.len, special, ids)) abort();
    } else {
        for (size_t i = 0; i < text.len;) {
            while (i < text.len && rb_is_space((unsigned char)s[i]))
                i++;
            size_t b = i;
            while (i < text.len && !rb_is_space((unsigned char)s[i]))
                i++;
            if (i == b) continue;
            ids_add(ids, (int32_t)(fnv1a(s + b, i - b) >> 33));
        }
    }
    rb_buf_free(&text);
    return 0;
}

int sim_api_tokenize(const char *body, size_t len, int detok, const sim_api_limits *lim,
                     rb_buf *out, sim_api_error *err)
{
    memset(err, 0, sizeof *err);
    cJSON *root = cJSON_ParseWithLength(body ? body : "", body ? len : 0);
    if (!root) return fail(err, 400, NULL, "the request body is not valid JSON");
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return fail(err, 400, NULL, "the request body must be a JSON object");
    }
    rb_tok_ids ids = {0};
    int rc = 0;
    char num[64];
    if (!detok) {
        rc = tokenize_ids(root, lim, &ids, err);
        if (!rc) {
            snprintf(num, sizeof num, "{\"count\":%zu,\"max_model_len\":%lld,\"tokens\":[", ids.n,
                     (long long)lim->max_model_len);
            rb_buf_puts(out, num);
            for (size_t i = 0; i < ids.n; i++) {
                snprintf(num, sizeof num, i ? ",%d" : "%d", (int)ids.v[i]);
                rb_buf_puts(out, num);
            }
            rb_buf_puts(out, "],\"token_strs\":null}");
        }
    } else {
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(root, "tokens");
        if (!cJSON_IsArray(tk)) {
            rc = fail(err, 400, "tokens", "'tokens' must be an array of token ids");
        } else {
            rb_buf text = {0};
            const cJSON *e;
            cJSON_ArrayForEach(e, tk)
            {
                if (!is_integer(e) || e->valuedouble < 0 || e->valuedouble > 2147483647.0) {
                    rc = fail(err, 400, "tokens",
                              "'tokens' items must be token ids (integers >= 0)");
                    break;
                }
                int32_t id = (int32_t)e->valuedouble;
                if (lim->tok) {
                    ids_add(&ids, id);
                } else {
                    snprintf(num, sizeof num, text.len ? " %d" : "%d", (int)id);
                    rb_buf_puts(&text, num);
                }
            }
            if (!rc && lim->tok && rb_tok_decode(lim->tok, ids.v, ids.n, &text)) abort();
            if (!rc) {
                rb_buf_puts(out, "{\"prompt\":\"");
                rb_buf_json_bytes(out, text.data ? text.data : "", text.len);
                rb_buf_puts(out, "\"}");
            }
            rb_buf_free(&text);
        }
    }
    rb_tok_ids_free(&ids);
    cJSON_Delete(root);
    if (out->err) abort();
    return rc;
}
