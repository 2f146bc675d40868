/* lg_chunk: decodes OpenAI streaming events and response bodies, and
 * simserver's ground-truth comments (see lg_chunk.h). It runs once per token
 * at high rates, so "[DONE]" and ": t=<ns>" are recognised by hand, plain
 * JSON chunks go through a scanner that builds no tree, and cJSON (the
 * reference) decodes whatever the scanner leaves to it. The file is long
 * on purpose: the hand scanner and the cJSON reference
 * decode the same events and must agree field for field (the fuzz harness
 * checks it), so they stay side by side, where a change to one is seen
 * beside the other. */
#include "lg_chunk.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "rb_buf.h"

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
    if (!root) return NULL;
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
    if (!v || cJSON_IsNull(v)) return -1;
    if (!cJSON_IsNumber(v)) return -2;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d)) return -2;
    return (int64_t)d;
}

/* A string member: returns 1 and sets *s, 0 if absent or null, -1 if of the
 * wrong type. */
static int string_of(const cJSON *obj, const char *key, const char **s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsString(v)) return -1;
    *s = v->valuestring;
    return 1;
}

/* Adds the text of `key` in obj (if any) as content, and to text (when
 * given) JSON-escaped again. */
static int take_content(const cJSON *obj, const char *key, lg_chunk *out, rb_buf *text)
{
    const char *s = NULL;
    int rc = string_of(obj, key, &s);
    if (rc < 0) return -EBADMSG;
    if (rc > 0 && s[0]) {
        out->flags |= LG_CHUNK_CONTENT;
        out->content_bytes += strlen(s);
        if (text) rb_buf_json_bytes(text, s, strlen(s));
    }
    return rc;
}

static int decode_choice(const cJSON *c, lg_chunk *out, rb_buf *text)
{
    if (!cJSON_IsObject(c)) return -EBADMSG;
    if (take_content(c, "text", out, text) < 0) return -EBADMSG;
    int has_role = 0;
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(c, "delta");
    if (delta && !cJSON_IsNull(delta)) {
        if (!cJSON_IsObject(delta) || take_content(delta, "content", out, text) < 0)
            return -EBADMSG;
        const char *role = NULL;
        int rc = string_of(delta, "role", &role);
        if (rc < 0) return -EBADMSG;
        has_role = rc > 0;
    }
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");
    if (msg && !cJSON_IsNull(msg)) {
        if (!cJSON_IsObject(msg) || take_content(msg, "content", out, text) < 0) return -EBADMSG;
    }
    if (has_role && !(out->flags & LG_CHUNK_CONTENT)) out->flags |= LG_CHUNK_ROLE;
    const char *fin = NULL;
    int rc = string_of(c, "finish_reason", &fin);
    if (rc < 0) return -EBADMSG;
    if (rc > 0) {
        out->flags |= LG_CHUNK_FINISH;
        size_t n = strlen(fin);
        if (n >= sizeof out->finish_reason) n = sizeof out->finish_reason - 1;
        memcpy(out->finish_reason, fin, n);
        out->finish_reason[n] = '\0';
    }
    return 0;
}

static int decode_usage(const cJSON *u, lg_chunk *out)
{
    if (!cJSON_IsObject(u)) return -EBADMSG;
    int64_t pt = count_of(u, "prompt_tokens"), ct = count_of(u, "completion_tokens");
    if (pt < -1 || ct < -1) return -EBADMSG;
    int64_t cached = -1;
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
    if (det && !cJSON_IsNull(det)) {
        if (!cJSON_IsObject(det)) return -EBADMSG;
        cached = count_of(det, "cached_tokens");
        if (cached < -1) return -EBADMSG;
    }
    out->prompt_tokens = pt;
    out->completion_tokens = ct;
    out->cached_tokens = cached;
    out->flags |= LG_CHUNK_USAGE;
    return 0;
}

static int decode_object(const cJSON *root, lg_chunk *out, rb_buf *text)
{
    if (!cJSON_IsObject(root)) return -EBADMSG;
    int known = 0;
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (err && !cJSON_IsNull(err)) {
        out->flags |= LG_CHUNK_ERROR;
        known = 1;
    }
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    if (choices) {
        if (!cJSON_IsArray(choices)) return -EBADMSG;
        known = 1;
        /* The load generator asks for one completion (n = 1). */
        const cJSON *c0 = choices->child;
        if (c0) {
            int rc = decode_choice(c0, out, text);
            if (rc) return rc;
        }
    }
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (usage && !cJSON_IsNull(usage)) {
        int rc = decode_usage(usage, out);
        if (rc) return rc;
        known = 1;
    }
    return known ? 0 : -EBADMSG;
}

/* ---- the fast path ----------------------------------------------------
 * A scanner for the plain JSON that servers send, which fills the chunk
 * without building a tree. It handles a subset (no \u escapes, no control
 * bytes, integer counts, shallow nesting) and answers only when the input is
 * inside that subset and of the expected shape; anything else goes to the
 * cJSON path, which is the reference (fuzz_sse checks that both agree). */

typedef struct scan {
    const char *p, *end;
    int depth;
} scan;

enum { SCAN_DEPTH_MAX = 32 };

/* Called between every two tokens, where there is seldom a blank: the
 * first byte above ' ' answers at once. */
static inline void ws(scan *s)
{
    while (s->p < s->end && (unsigned char)*s->p <= ' ' && is_space(*s->p))
        s->p++;
}

static inline int eat(scan *s, char c)
{
    ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

/* The rest of a string from q (n bytes of it decoded so far): the byte
 * loop, for escapes, control bytes and the last few bytes of a buffer. */
static __attribute__((noinline)) int scan_string_rest(scan *s, const char *q, size_t n,
                                                      const char **a, const char **b,
                                                      size_t *decoded, int *escaped)
{
    int esc = 0;
    while (q < s->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20) return 0;
        if (c == '\\') {
            if (q + 1 >= s->end || !strchr("\"\\/bfnrt", q[1]) || q[1] == '\0')
                return 0; /* \u and bad escapes: leave them to cJSON */
            q++;
            esc = 1;
        }
        q++;
        n++;
    }
    if (q >= s->end) return 0;
    *a = s->p;
    *b = q;
    if (decoded) *decoded = n;
    if (escaped) *escaped = esc;
    s->p = q + 1;
    return 1;
}

/* A string with simple escapes only; [*a, *b) is its raw text, *decoded its
 * length once unescaped, *escaped whether it held a backslash. */
static inline int scan_string(scan *s, const char **a, const char **b, size_t *decoded,
                              int *escaped)
{
    ws(s);
    if (s->p >= s->end || *s->p != '"') return 0;
    const char *q = ++s->p;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The common case: eight bytes at a time up to the first quote,
     * backslash or control byte. The lowest flagged byte of the word test
     * is exact (a borrow only flags bytes above a true one), so its place
     * is where the run ends; a plain string ends there. */
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    while (s->end - q >= 8) {
        uint64_t v;
        memcpy(&v, q, 8);
        uint64_t x = v ^ (ones * '"'), y = v ^ (ones * '\\');
        uint64_t m = (((x - ones) & ~x) | ((y - ones) & ~y) | ((v - ones * 0x20) & ~v)) & high;
        if (m) {
            q += __builtin_ctzll(m) >> 3;
            if (*q != '"') break;
            *a = s->p;
            *b = q;
            if (decoded) *decoded = (size_t)(q - s->p);
            if (escaped) *escaped = 0;
            s->p = q + 1;
            return 1;
        }
        q += 8;
    }
#endif
    return scan_string_rest(s, q, (size_t)(q - s->p), a, b, decoded, escaped);
}

static int lit(scan *s, const char *w, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0) return 0;
    s->p += n;
    return 1;
}

/* A JSON number in strict grammar; *whole says it was a plain [0-9]+ of at
 * most 15 digits, with its value in *v. */
static int scan_number(scan *s, int *whole, int64_t *v)
{
    const char *q = s->p, *e = s->end;
    int neg = q < e && *q == '-';
    q += neg;
    const char *d0 = q;
    if (q < e && *q == '0')
        q++;
    else
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    if (q == d0) return 0;
    size_t digits = (size_t)(q - d0);
    int plain = !neg && digits <= 15;
    if (q < e && *q == '.') {
        const char *f = ++q;
        while (q < e && *q >= '0' && *q <= '9')
            q++;
        if (q == f) return 0;
        plain = 0;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < e && (*q == '+' || *q == '-')) q++;
        const char *x = q;
        while (q < e && *q >= '0' && *q <= '9')
            q++;
        if (q == x) return 0;
        plain = 0;
    }
    if (q - s->p > 63) return 0; /* cJSON releases differ past 63 characters: leave it to cJSON */
    if (whole) {
        *whole = plain;
        int64_t x = 0;
        for (const char *c = d0; plain && c < d0 + digits; c++)
            x = x * 10 + (*c - '0');
        *v = x;
    }
    s->p = q;
    return 1;
}

static int skip_value(scan *s);

/* Walks an object's members, calling on_member for each key; returns 1 when
 * the whole object was read. */
typedef int (*member_fn)(scan *s, const char *k, size_t kn, void *ctx);

static int scan_object(scan *s, member_fn on_member, void *ctx)
{
    if (!eat(s, '{') || ++s->depth > SCAN_DEPTH_MAX) return 0;
    if (eat(s, '}')) {
        s->depth--;
        return 1;
    }
    do {
        const char *ka, *kb;
        int kesc;
        if (!scan_string(s, &ka, &kb, NULL, &kesc) || kesc || !eat(s, ':')) return 0;
        ws(s);
        if (!(on_member ? on_member(s, ka, (size_t)(kb - ka), ctx) : skip_value(s))) return 0;
    } while (eat(s, ','));
    if (!eat(s, '}')) return 0;
    s->depth--;
    return 1;
}

static int skip_value(scan *s)
{
    ws(s);
    if (s->p >= s->end) return 0;
    switch (*s->p) {
    case '{':
        return scan_object(s, NULL, NULL);
    case '[':
        if (++s->depth > SCAN_DEPTH_MAX) return 0;
        s->p++;
        if (!eat(s, ']')) {
            do {
                if (!skip_value(s)) return 0;
            } while (eat(s, ','));
            if (!eat(s, ']')) return 0;
        }
        s->depth--;
        return 1;
    case '"': {
        const char *a, *b;
        return scan_string(s, &a, &b, NULL, NULL);
    }
    case 't':
        return lit(s, "true", 4);
    case 'f':
        return lit(s, "false", 5);
    case 'n':
        return lit(s, "null", 4);
    default:
        return scan_number(s, NULL, NULL);
    }
}

static int key_is(const char *k, size_t kn, const char *name)
{
    return kn == strlen(name) && memcmp(k, name, kn) == 0;
}

/* Each key that matters may come once (cJSON would take the first of two;
 * rather than mimic that, such input goes to cJSON). */
static int first_time(unsigned *seen, unsigned bit)
{
    if (*seen & bit) return 0;
    *seen |= bit;
    return 1;
}

static int null_next(scan *s)
{
    return s->p < s->end && *s->p == 'n' && lit(s, "null", 4);
}

/* A string member that counts as content: adds its decoded length, and its
 * raw bytes to text when given (the scanner's subset of escapes is valid
 * JSON string content as it stands). */
static int content_member(scan *s, lg_chunk *out, rb_buf *text)
{
    if (null_next(s)) return 1;
    const char *a, *b;
    size_t n;
    if (!scan_string(s, &a, &b, &n, NULL)) return 0;
    if (n) {
        out->flags |= LG_CHUNK_CONTENT;
        out->content_bytes += n;
        if (text) rb_buf_add(text, a, (size_t)(b - a));
    }
    return 1;
}

typedef struct choice_ctx {
    lg_chunk *out;
    rb_buf *text;
    unsigned seen;
    int role;
} choice_ctx;

static int delta_member(scan *s, const char *k, size_t kn, void *ctx)
{
    choice_ctx *c = ctx;
    if (key_is(k, kn, "content"))
        return first_time(&c->seen, 1u << 8) && content_member(s, c->out, c->text);
    if (key_is(k, kn, "role")) {
        if (!first_time(&c->seen, 1u << 9)) return 0;
        if (null_next(s)) return 1;
        const char *a, *b;
        c->role = 1;
        return scan_string(s, &a, &b, NULL, NULL);
    }
    return skip_value(s);
}

static int message_member(scan *s, const char *k, size_t kn, void *ctx)
{
    choice_ctx *c = ctx;
    if (key_is(k, kn, "content"))
        return first_time(&c->seen, 1u << 10) && content_member(s, c->out, c->text);
    return skip_value(s);
}

static int choice_member(scan *s, const char *k, size_t kn, void *ctx)
{
    choice_ctx *c = ctx;
    if (key_is(k, kn, "text"))
        return first_time(&c->seen, 1u << 0) && content_member(s, c->out, c->text);
    if (key_is(k, kn, "delta")) {
        if (!first_time(&c->seen, 1u << 1)) return 0;
        return null_next(s) || scan_object(s, delta_member, c);
    }
    if (key_is(k, kn, "message")) {
        if (!first_time(&c->seen, 1u << 2)) return 0;
        return null_next(s) || scan_object(s, message_member, c);
    }
    if (key_is(k, kn, "finish_reason")) {
        if (!first_time(&c->seen, 1u << 3)) return 0;
        if (null_next(s)) return 1;
        const char *a, *b;
        int esc;
        if (!scan_string(s, &a, &b, NULL, &esc) || esc) return 0;
        size_t n = (size_t)(b - a);
        if (n >= sizeof c->out->finish_reason) n = sizeof c->out->finish_reason - 1;
        memcpy(c->out->finish_reason, a, n);
        c->out->finish_reason[n] = '\0';
        c->out->flags |= LG_CHUNK_FINISH;
        return 1;
    }
    return skip_value(s);
}

typedef struct usage_ctx {
    lg_chunk *out;
    unsigned seen;
} usage_ctx;

/* A count: null (-1) or plain digits. */
static int count_value(scan *s, int64_t *v)
{
    if (null_next(s)) {
        *v = -1;
        return 1;
    }
    int whole;
    return scan_number(s, &whole, v) && whole;
}

static int details_member(scan *s, const char *k, size_t kn, void *ctx)
{
    usage_ctx *u = ctx;
    if (key_is(k, kn, "cached_tokens"))
        return first_time(&u->seen, 1u << 3) && count_value(s, &u->out->cached_tokens);
    return skip_value(s);
}

static int usage_member(scan *s, const char *k, size_t kn, void *ctx)
{
    usage_ctx *u = ctx;
    if (key_is(k, kn, "prompt_tokens"))
        return first_time(&u->seen, 1u << 0) && count_value(s, &u->out->prompt_tokens);
    if (key_is(k, kn, "completion_tokens"))
        return first_time(&u->seen, 1u << 1) && count_value(s, &u->out->completion_tokens);
    if (key_is(k, kn, "prompt_tokens_details")) {
        if (!first_time(&u->seen, 1u << 2)) return 0;
        return null_next(s) || scan_object(s, details_member, u);
    }
    return skip_value(s);
}

typedef struct root_ctx {
    lg_chunk *out;
    rb_buf *text;
    unsigned seen;
    int known;
} root_ctx;

static int root_member(scan *s, const char *k, size_t kn, void *ctx)
{
    root_ctx *r = ctx;
    if (key_is(k, kn, "choices")) {
        if (!first_time(&r->seen, 1u << 0) || !eat(s, '[')) return 0;
        r->known = 1;
        if (eat(s, ']')) return 1;
        choice_ctx c = {.out = r->out, .text = r->text};
        if (!scan_object(s, choice_member, &c)) return 0;
        if (c.role && !(r->out->flags & LG_CHUNK_CONTENT)) r->out->flags |= LG_CHUNK_ROLE;
        while (eat(s, ','))
            if (!skip_value(s)) return 0;
        return eat(s, ']');
    }
    if (key_is(k, kn, "usage")) {
        if (!first_time(&r->seen, 1u << 1)) return 0;
        if (null_next(s)) return 1;
        usage_ctx u = {.out = r->out};
        if (!scan_object(s, usage_member, &u)) return 0;
        r->out->flags |= LG_CHUNK_USAGE;
        r->known = 1;
        return 1;
    }
    if (key_is(k, kn, "error")) {
        if (!first_time(&r->seen, 1u << 2)) return 0;
        if (null_next(s)) return 1;
        r->out->flags |= LG_CHUNK_ERROR;
        r->known = 1;
        return skip_value(s);
    }
    return skip_value(s);
}

/* 1 when the fast path decoded the chunk into *out, 0 to use cJSON. */
static int decode_fast(const char *data, size_t len, lg_chunk *out, rb_buf *text)
{
    scan s = {.p = data, .end = data + len};
    root_ctx r = {.out = out, .text = text};
    if (!scan_object(&s, root_member, &r) || !r.known) return 0;
    ws(&s);
    return s.p == s.end;
}

static void chunk_clear(lg_chunk *out)
{
    memset(out, 0, sizeof *out);
    out->prompt_tokens = out->completion_tokens = out->cached_tokens = -1;
}

static int decode_json(const char *data, size_t len, lg_chunk *out, rb_buf *text)
{
    chunk_clear(out);
    trim(&data, &len);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->flags = LG_CHUNK_DONE;
        return 0;
    }
    if (len < 2 || data[0] != '{') return -EBADMSG;
    cJSON *root = parse_exact(data, len);
    if (!root) return -EBADMSG;
    lg_chunk tmp = *out;
    int rc = decode_object(root, &tmp, text);
    cJSON_Delete(root);
    if (rc == 0) *out = tmp;
    return rc;
}

int lg_chunk_decode_json(const char *data, size_t len, lg_chunk *out)
{
    return decode_json(data, len, out, NULL);
}

/* Takes text back to `mark` bytes: what a decode that failed had added. */
static void text_back(rb_buf *text, size_t mark)
{
    if (!text || text->err || text->len <= mark) return;
    text->len = mark;
    text->data[mark] = '\0';
}

int lg_chunk_decode_text(const char *data, size_t len, lg_chunk *out, rb_buf *text)
{
    const char *d = data;
    size_t n = len;
    size_t mark = text ? text->len : 0;
    trim(&d, &n);
    if (n > 6 && d[0] == '{') {
        chunk_clear(out);
        if (decode_fast(d, n, out, text)) return 0;
        text_back(text, mark); /* the scanner gave up part way: cJSON decides */
    }
    int rc = decode_json(data, len, out, text);
    if (rc) text_back(text, mark);
    return rc;
}

int lg_chunk_decode(const char *data, size_t len, lg_chunk *out)
{
    return lg_chunk_decode_text(data, len, out, NULL);
}

/* Decimal digits only, no sign, no overflow: 1 and *v, else 0. */
static int parse_u63(const char *s, size_t len, int64_t *v)
{
    if (len == 0 || len > 19) return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > (uint64_t)INT64_MAX) return 0;
    *v = (int64_t)x;
    return 1;
}

typedef struct truth_ctx {
    int64_t v[4]; /* queue, prefill, decode, cached (-1: absent or null) */
    unsigned seen;
} truth_ctx;

static int truth_member(scan *s, const char *k, size_t kn, void *ctx)
{
    static const char *const names[4] = {"queue_ns", "prefill_ns", "decode_ns", "cached_tokens"};
    truth_ctx *t = ctx;
    for (unsigned i = 0; i < 4; i++)
        if (key_is(k, kn, names[i]))
            return first_time(&t->seen, 1u << i) && count_value(s, &t->v[i]);
    return skip_value(s);
}

/* simserver's truth comment by the scanner (once a request; cJSON costs
 * more than the rest of the comment's handling): 2 or 0 as
 * lg_chunk_comment, -1 to leave it to cJSON. */
static int truth_fast(const char *text, size_t len, lg_truth *truth)
{
    scan s = {.p = text, .end = text + len};
    truth_ctx t = {.v = {-1, -1, -1, -1}};
    if (!scan_object(&s, truth_member, &t)) return -1;
    ws(&s);
    if (s.p != s.end) return -1;
    if (t.v[0] < 0 || t.v[1] < 0 || t.v[2] < 0) return 0;
    if (truth)
        *truth = (lg_truth){
            .queue_ns = t.v[0], .prefill_ns = t.v[1], .decode_ns = t.v[2], .cached_tokens = t.v[3]};
    return 2;
}

int lg_chunk_comment(const char *text, size_t len, int64_t *stamp_ns, lg_truth *truth)
{
    trim(&text, &len);
    if (len > 2 && text[0] == 't' && text[1] == '=') {
        int64_t v;
        if (!parse_u63(text + 2, len - 2, &v)) return 0;
        if (stamp_ns) *stamp_ns = v;
        return 1;
    }
    if (len < 2 || text[0] != '{') return 0;
    int fast = truth_fast(text, len, truth);
    if (fast >= 0) return fast;
    cJSON *root = parse_exact(text, len);
    if (!root) return 0;
    int ret = 0;
    if (cJSON_IsObject(root)) {
        int64_t q = count_of(root, "queue_ns"), pf = count_of(root, "prefill_ns"),
                d = count_of(root, "decode_ns"), c = count_of(root, "cached_tokens");
        if (q >= 0 && pf >= 0 && d >= 0 && c >= -1) {
            if (truth)
                *truth =
                    (lg_truth){.queue_ns = q, .prefill_ns = pf, .decode_ns = d, .cached_tokens = c};
            ret = 2;
        }
    }
    cJSON_Delete(root);
    return ret;
}

int lg_chunk_truth_header(const char *line, size_t len, lg_truth *truth)
{
    static const char *const names[] = {"x-sim-queue-ns", "x-sim-prefill-ns", "x-sim-decode-ns",
                                        "x-sim-cached-tokens"};
    const char *colon = memchr(line, ':', len);
    if (!colon) return 0;
    size_t nlen = (size_t)(colon - line);
    const char *v = colon + 1;
    size_t vlen = len - nlen - 1;
    trim(&v, &vlen);
    for (int i = 0; i < 4; i++) {
        int64_t x;
        if (strlen(names[i]) != nlen || strncasecmp(line, names[i], nlen) != 0) continue;
        if (!parse_u63(v, vlen, &x)) return 0;
        int64_t *f[] = {&truth->queue_ns, &truth->prefill_ns, &truth->decode_ns,
                        &truth->cached_tokens};
        *f[i] = x;
        return 1;
    }
    return 0;
}
