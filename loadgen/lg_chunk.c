/* lg_chunk: decodes OpenAI streaming events and response bodies, and
 * simserver's ground-truth comments (see lg_chunk.h). It runs once per token
 * at high rates, so the common non-JSON cases ("[DONE]", ": t=<ns>") are
 * recognised by hand before cJSON is ever called. */
#include "lg_chunk.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void trim(const char **s, size_t *len)
{
    while (*len && is_space(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_space((*s)[*len - 1]))
        (*len)--;
}

/* Parses exactly [s, s+len): trailing bytes other than blanks are an error. */
static cJSON *parse_exact(const char *s, size_t len)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(s, len, &end, 0);
    if (!root)
        return NULL;
    size_t rest = end ? (size_t)(s + len - end) : 0;
    while (rest && is_space(*end)) {
        end++;
        rest--;
    }
    if (rest) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* A JSON number that is a whole count in [0, 2^53]; -1 if absent or null,
 * -2 if of the wrong kind. */
static int64_t count_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return -1;
    if (!cJSON_IsNumber(v))
        return -2;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d))
        return -2;
    return (int64_t)d;
}

/* A string member: returns 1 and sets *s, 0 if absent or null, -1 if of the
 * wrong type. */
static int string_of(const cJSON *obj, const char *key, const char **s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return -1;
    *s = v->valuestring;
    return 1;
}

/* Adds the text of `key` in obj (if any) as content. */
static int take_content(const cJSON *obj, const char *key, lg_chunk *out)
{
    const char *s = NULL;
    int rc = string_of(obj, key, &s);
    if (rc < 0)
        return -EBADMSG;
    if (rc > 0 && s[0]) {
        out->flags |= LG_CHUNK_CONTENT;
        out->content_bytes += strlen(s);
    }
    return rc;
}

static int decode_choice(const cJSON *c, lg_chunk *out)
{
    if (!cJSON_IsObject(c))
        return -EBADMSG;
    if (take_content(c, "text", out) < 0)
        return -EBADMSG;
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(c, "delta");
    if (delta && !cJSON_IsNull(delta)) {
        if (!cJSON_IsObject(delta) || take_content(delta, "content", out) < 0)
            return -EBADMSG;
        const char *role = NULL;
        int rc = string_of(delta, "role", &role);
        if (rc < 0)
            return -EBADMSG;
        if (rc > 0 && !(out->flags & LG_CHUNK_CONTENT))
            out->flags |= LG_CHUNK_ROLE;
    }
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");
    if (msg && !cJSON_IsNull(msg)) {
        if (!cJSON_IsObject(msg) || take_content(msg, "content", out) < 0)
            return -EBADMSG;
    }
    const char *fin = NULL;
    int rc = string_of(c, "finish_reason", &fin);
    if (rc < 0)
        return -EBADMSG;
    if (rc > 0) {
        out->flags |= LG_CHUNK_FINISH;
        size_t n = strlen(fin);
        if (n >= sizeof out->finish_reason)
            n = sizeof out->finish_reason - 1;
        memcpy(out->finish_reason, fin, n);
        out->finish_reason[n] = '\0';
    }
    return 0;
}

static int decode_usage(const cJSON *u, lg_chunk *out)
{
    if (!cJSON_IsObject(u))
        return -EBADMSG;
    int64_t pt = count_of(u, "prompt_tokens"), ct = count_of(u, "completion_tokens");
    if (pt < -1 || ct < -1)
        return -EBADMSG;
    int64_t cached = -1;
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
    if (det && !cJSON_IsNull(det)) {
        if (!cJSON_IsObject(det))
            return -EBADMSG;
        cached = count_of(det, "cached_tokens");
        if (cached < -1)
            return -EBADMSG;
    }
    out->prompt_tokens = pt;
    out->completion_tokens = ct;
    out->cached_tokens = cached;
    out->flags |= LG_CHUNK_USAGE;
    return 0;
}

static int decode_object(const cJSON *root, lg_chunk *out)
{
    if (!cJSON_IsObject(root))
        return -EBADMSG;
    int known = 0;
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (err && !cJSON_IsNull(err)) {
        out->flags |= LG_CHUNK_ERROR;
        known = 1;
    }
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    if (choices) {
        if (!cJSON_IsArray(choices))
            return -EBADMSG;
        known = 1;
        /* The load generator asks for one completion (n = 1). */
        const cJSON *c0 = choices->child;
        if (c0) {
            int rc = decode_choice(c0, out);
            if (rc)
                return rc;
        }
    }
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (usage && !cJSON_IsNull(usage)) {
        int rc = decode_usage(usage, out);
        if (rc)
            return rc;
        known = 1;
    }
    return known ? 0 : -EBADMSG;
}

int lg_chunk_decode(const char *data, size_t len, lg_chunk *out)
{
    memset(out, 0, sizeof *out);
    out->prompt_tokens = out->completion_tokens = out->cached_tokens = -1;
    trim(&data, &len);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->flags = LG_CHUNK_DONE;
        return 0;
    }
    if (len < 2 || data[0] != '{')
        return -EBADMSG;
    cJSON *root = parse_exact(data, len);
    if (!root)
        return -EBADMSG;
    lg_chunk tmp = *out;
    int rc = decode_object(root, &tmp);
    cJSON_Delete(root);
    if (rc == 0)
        *out = tmp;
    return rc;
}

/* Decimal digits only, no sign, no overflow: 1 and *v, else 0. */
static int parse_u63(const char *s, size_t len, int64_t *v)
{
    if (len == 0 || len > 19)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > (uint64_t)INT64_MAX)
        return 0;
    *v = (int64_t)x;
    return 1;
}

int lg_chunk_comment(const char *text, size_t len, int64_t *stamp_ns, lg_truth *truth)
{
    trim(&text, &len);
    if (len > 2 && text[0] == 't' && text[1] == '=') {
        int64_t v;
        if (!parse_u63(text + 2, len - 2, &v))
            return 0;
        if (stamp_ns)
            *stamp_ns = v;
        return 1;
    }
    if (len < 2 || text[0] != '{')
        return 0;
    cJSON *root = parse_exact(text, len);
    if (!root)
        return 0;
    int ret = 0;
    if (cJSON_IsObject(root)) {
        int64_t q = count_of(root, "queue_ns"), pf = count_of(root, "prefill_ns"),
                d = count_of(root, "decode_ns"), c = count_of(root, "cached_tokens");
        if (q >= 0 && pf >= 0 && d >= 0 && c >= -1) {
            if (truth)
                *truth = (lg_truth){.queue_ns = q, .prefill_ns = pf, .decode_ns = d,
                                    .cached_tokens = c};
            ret = 2;
        }
    }
    cJSON_Delete(root);
    return ret;
}
